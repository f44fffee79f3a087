"""Parameter planning: which (k, γ) each mechanism accepts for a table, and at what cost.

:func:`plan` walks a grid of requests for αβ (each calibration), FRAPP and
SPLU-Gen and reports, for each point, whether the library accepts it, its
parameters, its error bound, and the expected size of the published view
in rows and Parquet bytes; then the feasible region (for each γ the largest
k) and an explanation of every refusal in terms of the table: n, m, n/m.

Nothing here decides a parameter or restates a privacy formula. A point is
feasible exactly when the mechanism's own constructor accepts it
(``AlphaBeta.for_privacy``, ``FRAPP.for_privacy``, ``SPLUGen`` and its
eligibility check), its refusal text is kept, the region's edges are found
by bisection over those same calls, and the error bounds are the
mechanisms' own ``error_bound()`` (SPLU-Gen has none; its guarantee's
thresholds come from :mod:`privpub.splu.calculators`).

:func:`expected_view_size` gives a mechanism's expected view rows and bytes
before publishing (for a size warning).

This module holds the grid, the search and the explanations only. What each
family knows about itself — how its mechanism is built for a request, its
view's rows and bytes, SPLU-Gen's eligibility and rows — is in the family's
``planning`` module (``alphabeta/``, ``frapp/``, ``splu/``), registered by
mechanism name (:mod:`privpub.core.planners`) and looked up, never switched on.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.inputs import TableLike, tabular
from privpub.core.planners import planner, planners, view_size_text
from privpub.core.renamed import renamed_keywords
from privpub.domain.schema import Schema
from privpub.tables.records import (
    as_schema_codes,
    distinct_sorted,
    records_as_codes,
    repeated_rows,
    sorted_rows,
)

#: Default grid: k ≥ 1 (DESIGN.md: a prior below the base rate is a different request).
DEFAULT_KS = (1, 2, 5, 10, 20, 50)
DEFAULT_GAMMAS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8)
DEFAULT_GROUP_SIZES = (2, 3, 5, 10)
#: Bisection steps for the region's edges (k over ~40 binary orders of magnitude,
#: γ over (0, 1): 80 halvings leave a relative gap far below the digits shown).
STEPS = 80
#: Smallest k searched when priors below the base rate are allowed.
TINY_K = 1e-9


# ---- the table's facts --------------------------------------------------------------------


@dataclass(frozen=True)
class _Facts:
    schema: Schema
    n: int                      # records (for_privacy's n; d = k·n/m)
    distinct: int | None        # distinct tuples (None: schema only)
    repeated: int               # tuples with several records
    codes: np.ndarray | None    # the records' codes (None: schema only)
    duplicates: str

    @property
    def m(self) -> int:
        return self.schema.size

    @property
    def records_facts(self) -> dict[str, Any]:
        """The ``records`` facts a release of this table states (as ``publish`` sets them;
        no tuple is counted as shown twice, which is known only after publishing)."""
        mode = "none" if not self.repeated else self.duplicates
        return {"duplicates": mode, "records_given": self.n,
                "repeated_tuples": self.repeated if mode == "records" else 0,
                "distinct_tuples": self.distinct or self.n, "revealed_in_view": 0}

    @property
    def published(self) -> int:
        """Records the view starts from: the distinct tuples under duplicates='set'."""
        if self.duplicates == "set" and self.distinct is not None:
            return self.distinct
        return self.n


def _facts(data: Any, n: int | None, schema: Schema | None, duplicates: str) -> _Facts:
    if duplicates not in ("set", "records"):
        raise ParameterError(f"duplicates must be 'set' or 'records', got {duplicates!r}")
    if isinstance(data, Schema):
        if n is None:
            raise ParameterError("plan(schema) needs n, the number of records to publish")
        n = validate.count("n", n, minimum=1)
        # Without the table its repeats are unknown: planned as n distinct tuples.
        return _Facts(data, n, None, 0, None, duplicates)
    if n is not None:
        raise ParameterError("n is read from the table; give n only with a Schema")
    table = tabular(data, column_types=None if schema is None else schema.csv_types())
    if schema is None:
        with warnings.catch_warnings():  # the plan says the domains were derived
            warnings.simplefilter("ignore")
            schema = Schema.from_frame(table)
    rows = sorted_rows(records_as_codes(schema, table))
    if len(rows) == 0:
        raise ParameterError("the table holds no records; there is nothing to plan for")
    return _Facts(schema, len(rows), len(distinct_sorted(rows)), repeated_rows(rows),
                  as_schema_codes(schema, rows), duplicates)


# ---- expected size ------------------------------------------------------------------------


def expected_view_size(mech: Any, n_distinct: int | None = None
                       ) -> tuple[float, int]:
    """Expected rows and estimated Parquet bytes of the view ``mech.publish``
    would write, before publishing (for a size warning or a ``--yes`` prompt).

    ``mech`` is an :class:`AlphaBeta` or :class:`FRAPP` built for n records
    (``for_privacy``). ``n_distinct`` is the number of distinct tuples among
    them when publishing with ``duplicates="set"`` (the view then starts from
    those); leave it None when every record is published. Rows: αβ's
    α·n + β·m in expectation, FRAPP's n exactly. Bytes: measured from writes
    of a uniform slice at the view's density (see
    :func:`privpub.tables.viewsize.view_bytes`).
    A SPLU-Gen view is never larger than its input (N − (N mod γ) rows); its
    size needs the table (:func:`plan`).

    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> rows, size = expected_view_size(mech)
    >>> round(rows), 1_500_000 < size < 4_000_000
    (1215348, True)
    """
    family = planner(getattr(mech, "name", None))
    if family is None:
        raise ParameterError(f"expected_view_size takes a mechanism (AlphaBeta or FRAPP), got "
                             f"{type(mech).__name__}")
    if family.needs_table is not None:
        raise ParameterError(family.needs_table)
    if mech.n is None:
        raise ParameterError("the mechanism has no n; build it with for_privacy(n=...)")
    n = mech.n if n_distinct is None else validate.count("n_distinct", n_distinct, minimum=1)
    if n > mech.n:
        raise ParameterError(f"n_distinct = {n:,} exceeds the mechanism's n = {mech.n:,}")
    rows, _ = family.expected_rows(mech, n, n)
    return rows, family.view_bytes(mech, rows)


# ---- feasibility, from the mechanisms' own checks ----------------------------------------------


def _accepts(build: Callable[[], Any]) -> bool:
    try:
        build()
    except ParameterError:
        return False
    return True


def _edge(ok: Callable[[Any], bool], good: float, bad: float, scale: str) -> Any:
    """The last accepted value between ``good`` (accepted) and ``bad`` (refused),
    by bisection (``scale``: "linear", "log" or "integer"): the region's edge as
    the library draws it, not a formula."""
    for _ in range(STEPS):
        if scale == "integer":
            mid = (good + bad) // 2
        else:
            mid = math.sqrt(good * bad) if scale == "log" else (good + bad) / 2
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if ok(mid) else (good, mid)
    return good


def _largest_k(family: Any, variant: str | None, facts: _Facts, gamma: float,
               failure_probability: float) -> float | None:
    """The largest k the library accepts at γ, priors below the base rate allowed
    (None: not even k = TINY_K is). Feasibility falls with k (a larger prior is
    harder to hide), so k ≥ 1 is feasible exactly when this is ≥ 1; d = 1 is
    always refused, so k = m/n bounds the search."""
    def ok(k: float) -> bool:
        return _accepts(lambda: family.build(facts, variant, k, gamma, failure_probability,
                                             True))
    top = facts.m / facts.n
    if top <= TINY_K or not ok(TINY_K):
        return None
    return _edge(ok, TINY_K, top, "log")


def _least_gamma(family: Any, variant: str | None, facts: _Facts, k: float,
                 failure_probability: float, allow: bool) -> float | None:
    """The least γ in (0, 1) the library accepts at k (None: none is).
    Feasibility grows with γ (a looser posterior bound)."""
    def ok(gamma: float) -> bool:
        return _accepts(lambda: family.build(facts, variant, k, gamma, failure_probability,
                                             allow))
    top, bottom = 1 - 1e-12, 1e-12
    if not ok(top):
        return None
    return bottom if ok(bottom) else _edge(ok, top, bottom, "linear")


# ---- the grid ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What :func:`plan` was asked, as the families read it."""

    ks: list[float]
    gammas: list[float]
    failure_probability: float
    allow: bool
    calibrations: Sequence[str] | None   # αβ's; None: every one
    sensitive: str | Sequence[str] | None
    group_sizes: Sequence[int]
    cache: dict = field(default_factory=dict)  # Parquet size measurements, shared


class Search:
    """The plan's grid and search, handed to each family's ``plan_rows``."""

    accepts = staticmethod(_accepts)
    edge = staticmethod(_edge)

    @staticmethod
    def explain_grid(p: Plan, mechanism: str) -> str:
        """The explanation of a (k, γ)-grid family's rows (its ``explain``)."""
        return _explain_mechanism(p, mechanism)

    @staticmethod
    def privacy_grid(family: Any, facts: _Facts, request: Request
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The (k, γ) grid of a family that ``build``s a mechanism per request, for each
        of its variants, and its region: by γ the largest accepted k."""
        rows: list[dict[str, Any]] = []
        regions: list[dict[str, Any]] = []
        for variant in family.variants(request):
            edges = {g: _largest_k(family, variant, facts, g, request.failure_probability)
                     for g in request.gammas}
            largest = {g: k if k is not None and (k >= 1 or request.allow) else None
                       for g, k in edges.items()}
            rows.extend(_grid_rows(family, variant, facts, request, largest))
            regions.extend({"mechanism": family.name, "calibration": variant, "gamma": g,
                            "largest_k": largest[g], "largest_k_any": edges[g]}
                           for g in request.gammas)
        return rows, regions


def _refusal(family: Any, variant: str | None, facts: _Facts, k: float, gamma: float,
             allow: bool) -> str:
    """Which of the library's conditions a refused request misses, in the table's terms
    (the verdict itself is the library's; this only names the cause)."""
    ratio = facts.n / facts.m
    d = k * ratio
    if k < 1 and not allow:
        return (f"k = {k:g} < 1: the prior d = k·n/m = {d:.4g} is below the base rate "
                f"n/m = {ratio:.4g}, an adversary the paper does not protect against "
                "(allow_prior_below_base_rate=True asks for it knowingly)")
    if d >= 1:
        return (f"d = k·n/m = {k:g} × {ratio:.4g} = {d:.4g} ≥ 1: with n/m = {ratio:.4g}, k "
                f"must stay below m/n = {1 / ratio:.4g}")
    if d >= gamma:
        return (f"d = k·n/m = {d:.4g} ≥ γ = {gamma:g}: with n/m = {ratio:.4g} a prior at "
                f"k = {k:g} is already above the posterior bound, which no parameters can meet")
    return (f"{family.refused_by(variant)} cannot meet d = k·n/m = {d:.4g} (n/m = {ratio:.4g}) "
            f"at γ = {gamma:g}")


def _grid_rows(family: Any, variant: str | None, facts: _Facts, request: Request,
               largest: dict[float, float | None]) -> list[dict[str, Any]]:
    """The rows of one family (and variant: αβ's calibration); ``largest`` is the
    region's largest accepted k by γ (k ≥ 1 unless allowed)."""
    fp, allow = request.failure_probability, request.allow
    least = {k: _least_gamma(family, variant, facts, k, fp, allow) for k in request.ks}
    rows = []
    for gamma in request.gammas:
        for k in request.ks:
            row = {"mechanism": family.name, "calibration": variant, "sensitive": None,
                   "k": k, "gamma": gamma, "d": k * facts.n / facts.m, "group_size": None,
                   "largest_k": largest[gamma], "least_gamma": least[k]}
            try:
                mech = family.build(facts, variant, k, gamma, fp, allow)
            except ParameterError as exc:
                bounds = (f"; largest feasible k at γ = {gamma:g}: "
                          + (f"{largest[gamma]:.4g}" if largest[gamma] is not None else
                             "none" + ("" if allow else " ≥ 1"))
                          + f"; least γ at k = {k:g}: "
                          + (f"{least[k]:.4g}" if least[k] is not None else "none below 1"))
                rows.append(row | {"feasible": False, "library_error": str(exc),
                                   "reason": _refusal(family, variant, facts, k, gamma,
                                                      allow) + bounds})
                continue
            expected, stderr = family.expected_rows(mech, facts.published,
                                                    facts.distinct or facts.published)
            # The release states n, and the bound, for the records published.
            released = family.released(mech, facts, gamma, fp, allow)
            resolution = released.resolution()
            rows.append(row | {
                "feasible": True, "alpha": getattr(mech, "alpha", None),
                "beta": getattr(mech, "beta", None),
                "gamma_frapp": getattr(mech, "gamma_frapp", None),
                "error_bound": released.error_bound(), "typical_count": resolution.typical,
                "weak_usefulness": resolution.weak, "rows": expected, "rows_stderr": stderr,
                "bytes": family.view_bytes(mech, expected, request.cache),
                "claims_not_met": [c.name for c in released.guarantee().claims
                                   if not c.holds]})
    return rows


# ---- the plan ---------------------------------------------------------------------------------

#: The columns of :meth:`Plan.to_frame`, in order.
COLUMNS = ("mechanism", "calibration", "sensitive", "k", "gamma", "d", "group_size", "feasible",
           "reason", "library_error", "alpha", "beta", "gamma_frapp", "error_bound",
           "typical_count", "weak_usefulness", "splu_utility_threshold", "splu_small_sum_privacy",
           "rows", "rows_stderr", "bytes", "largest_k", "least_gamma", "largest_group_size",
           "claims_not_met")


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found: one row per grid point (``rows``, dicts with the
    keys of :data:`COLUMNS`) and the feasible region (``regions``: for αβ and
    FRAPP, per calibration and γ, the largest accepted k ≥ 1 — or > 0 when
    priors below the base rate were allowed — as ``largest_k``, and the largest
    accepted k of any size as ``largest_k_any``; for SPLU-Gen, per sensitive
    set, the largest eligible γ)."""

    n: int
    m: int
    distinct: int | None
    duplicates: str
    failure_probability: float
    derived: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    regions: tuple[dict[str, Any], ...]

    @property
    def density(self) -> float:
        """n/m, the share of the domain the table fills."""
        return self.n / self.m

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([[row.get(c) for c in COLUMNS] for row in self.rows],
                            columns=list(COLUMNS))

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready Python values (no NaN: missing is None)."""
        return {"n": self.n, "m": self.m, "n_over_m": self.density, "distinct": self.distinct,
                "duplicates": self.duplicates, "failure_probability": self.failure_probability,
                "derived_domains": list(self.derived),
                "rows": [{c: row.get(c) for c in COLUMNS} for row in self.rows],
                "regions": [dict(r) for r in self.regions], "explanation": self.explain()}

    def explain(self) -> str:
        """One paragraph per mechanism: its feasible region, why the rest is refused
        (in terms of n, m, n/m) and what to try instead."""
        parts = [_explain_table(self)]
        for mechanism in dict.fromkeys(r["mechanism"] for r in self.rows):
            parts.append(planner(mechanism).explain(self, Search))
        return "\n\n".join(parts)

    def alternatives(self, mechanism: str, calibration: str | None, k: float,
                     gamma: float) -> list[str]:
        """The requests of the grid near (k, γ) whose error bound tells the typical
        count from zero (``weak_usefulness`` False), one line each, for a weak
        release's warning: for ``mechanism`` (and ``calibration``) the largest k
        at γ and the least γ at k; then the other mechanisms and calibrations at
        (k, γ) itself. Empty when the grid holds none."""
        useful = [r for r in self.rows if r["feasible"] and r.get("weak_usefulness") is False]

        def line(r: dict[str, Any]) -> str:
            name = planner(r["mechanism"]).label + ("" if r["calibration"] is None
                                             else f" calibration {r['calibration']!r}")
            return f"{name} at k = {r['k']:g}, γ = {r['gamma']:g}: ±{r['error_bound']:,.1f}"

        same = [r for r in useful if (r["mechanism"], r["calibration"]) == (mechanism,
                                                                            calibration)]
        at_gamma = [r for r in same if r["gamma"] == gamma]
        at_k = [r for r in same if r["k"] == k]
        lines = [line(max(at_gamma, key=lambda r: r["k"]))] if at_gamma else []
        lines += [line(min(at_k, key=lambda r: r["gamma"]))] if at_k else []
        return lines + [line(r) for r in useful if r["k"] == k and r["gamma"] == gamma
                        and (r["mechanism"], r["calibration"]) != (mechanism, calibration)]

    def __str__(self) -> str:
        feasible = sum(1 for r in self.rows if r["feasible"])
        return (f"Plan: {len(self.rows)} requests, {feasible} feasible "
                f"(n = {self.n:,}, m = {self.m:,}, n/m = {self.density:.4g})\n\n"
                + self.explain())


@renamed_keywords(epsilon="failure_probability", splu_gammas="group_sizes")
def plan(table_or_schema: TableLike | Schema, *, n: int | None = None,
         mechanisms: Sequence[str] | None = None, ks: Sequence[float] = DEFAULT_KS,
         gammas: Sequence[float] = DEFAULT_GAMMAS, failure_probability: float = 0.05,
         sensitive: str | Sequence[str] | None = None,
         group_sizes: Sequence[int] = DEFAULT_GROUP_SIZES,
         calibrations: Sequence[str] | None = None, schema: Schema | None = None,
         duplicates: str = "set", allow_prior_below_base_rate: bool = False) -> Plan:
    """The feasible (k, γ) region of each mechanism for a table, with each point's
    parameters, error bound and expected view size, and every refusal explained.

    Parameters
    ----------
    table_or_schema : table or Schema
        A table (pandas, Arrow, polars, or a Parquet/CSV path), encoded with
        ``schema`` (default: ``Schema.from_frame``, domains derived from the
        data, which the explanation flags); or a Schema with ``n`` records, in
        which case SPLU-Gen (which needs the value frequencies) is reported as
        "needs the table" and the records are planned as n distinct tuples.
    mechanisms : names of registered planners (default: every one, in registration
        order: "alphabeta", "frapp", "splu")
    ks, gammas : the (k, γ) grid for αβ (every calibration in ``calibrations``,
        default all) and FRAPP; d = k·n/m.
    failure_probability : the error bounds' failure probability (the paper's ε of
        (ρ, ε)-usefulness).
    sensitive : SPLU-Gen's sensitive attribute(s); None plans each attribute alone.
    group_sizes : SPLU-Gen's decoy group sizes (the paper's γ, records per group).
    duplicates : "set" (default: the full guarantee; a view starts from the
        distinct tuples) or "records", as ``publish(duplicates=...)``.
    allow_prior_below_base_rate : passed to ``AlphaBeta.for_privacy``; with
        False, αβ refuses k < 1 and the region is drawn for k ≥ 1.

    Every verdict is the mechanisms' own (their ``ParameterError`` text is kept
    in ``library_error``); see the module docstring.

    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> p = privpub.plan(df, schema=schema, mechanisms=["alphabeta"], ks=[10], gammas=[0.2],
    ...                  calibrations=["exclusive"])
    >>> row = p.rows[0]
    >>> row["feasible"], round(row["rows"], -3)
    (True, 1210000.0)
    """
    known = [family.name for family in planners()]
    if mechanisms is None:
        mechanisms = known
    unknown = [m for m in mechanisms if m not in known]
    if unknown or isinstance(mechanisms, str):
        raise ParameterError(f"mechanisms must be a list drawn from {known}, "
                             f"got {mechanisms!r}")
    request = Request([], [], 0.0, allow_prior_below_base_rate, calibrations, sensitive,
                      group_sizes)
    for family in planners():  # every family's options, whichever are planned
        family.check_request(request)
    ks = [validate.real("k", k) for k in ks]
    gammas = [validate.probability("gamma", g, open_low=True, open_high=True) for g in gammas]
    if not ks or not gammas:
        raise ParameterError(f"ks and gammas must each hold a value, got {ks} and {gammas}")
    failure_probability = validate.probability("failure_probability", failure_probability,
                                               open_low=True, open_high=True)
    facts = _facts(table_or_schema, n, schema, duplicates)
    rows: list[dict[str, Any]] = []
    regions: list[dict[str, Any]] = []
    request = Request(ks, gammas, failure_probability, allow_prior_below_base_rate,
                      calibrations, sensitive, group_sizes)
    for mechanism in mechanisms:
        found, region = planner(mechanism).plan_rows(facts, request, Search)
        rows.extend(found)
        regions.extend(region)
    return Plan(facts.n, facts.m, facts.distinct, duplicates, failure_probability,
                tuple(facts.schema.derived), tuple(rows), tuple(regions))


# ---- explanations -----------------------------------------------------------------------------


def _explain_table(p: Plan) -> str:
    text = (f"The table: n = {p.n:,} records over a domain of m = {p.m:,} tuples, "
            f"n/m = {p.density:.4g}.")
    if p.distinct is None:
        text += " Planned from the schema alone: the records are taken as n distinct tuples."
    elif p.distinct < p.n:
        text += (f" It repeats tuples ({p.distinct:,} distinct); views are planned for "
                 f"duplicates={p.duplicates!r}.")
    if p.derived:
        text += (f" The domains of {', '.join(p.derived)} were derived from the data (only "
                 "the values that occur): declared domains make m larger and n/m smaller, "
                 "and keep the domain from revealing the data.")
    return text


def _explain_mechanism(p: Plan, mechanism: str) -> str:
    label = planner(mechanism).label
    regions = [r for r in p.regions if r["mechanism"] == mechanism]
    calibrations = list(dict.fromkeys(r["calibration"] for r in regions))
    lead = planner(mechanism).main_variant
    main = lead if lead in calibrations else calibrations[0]
    region = [r for r in regions if r["calibration"] == main]
    name = label if main is None else f"{label} (calibration {main!r})"
    floor = "k ≥ 1" if all(r["largest_k"] is None or r["largest_k"] >= 1 for r in region) \
        else "k"
    lines = [f"{name}: the largest feasible {floor} by γ: " + "; ".join(
        f"γ = {r['gamma']:g}: " + ("none" if r["largest_k"] is None else f"{r['largest_k']:.4g}")
        for r in region) + "."]
    # Dense: no k ≥ 1 at some γ (whether or not smaller k were allowed).
    refused = [r for r in region if r["largest_k_any"] is None or r["largest_k_any"] < 1]
    if refused:
        lines.append(_dense(p, label, mechanism, max(refused, key=lambda r: r["gamma"]),
                            [r["gamma"] for r in refused]))
    feasible = [r for r in p.rows if r["mechanism"] == mechanism
                and r["calibration"] == main and r["feasible"]]
    if feasible:
        big = max(feasible, key=lambda r: r["rows"])
        tight = min(feasible, key=lambda r: r["error_bound"])
        lines.append(f"Largest view in the grid: {view_size_text(big['rows'], big['bytes'])} at "
                     f"k = {big['k']:g}, γ = {big['gamma']:g}; smallest error bound "
                     f"{tight['error_bound']:,.1f} (each query, w.p. ≥ "
                     f"{1 - p.failure_probability:g}) at "
                     f"k = {tight['k']:g}, γ = {tight['gamma']:g}.")
        weak = [r for r in feasible if r["weak_usefulness"]]
        if weak:
            lines.append(f"At {len(weak)} of these {len(feasible)} points the bound is at least "
                         f"the typical count {weak[0]['typical_count']:,.1f} (n/|D| for the "
                         "attribute with the fewest values), so the release could not tell "
                         "typical counts from zero: usefulness only weak (weak_usefulness).")
    for other in calibrations:
        if other != main:
            lines.append(f"Calibration {other!r}: largest feasible k by γ: " + "; ".join(
                f"γ = {r['gamma']:g}: "
                + ("none" if r["largest_k"] is None else f"{r['largest_k']:.4g}")
                for r in regions if r["calibration"] == other) + ".")
    return " ".join(lines)


def _dense(p: Plan, label: str, mechanism: str, worst: dict[str, Any],
           refused: list[float]) -> str:
    """Why no k ≥ 1 is accepted at some γ, in the table's numbers, and what to try."""
    g, k_any = worst["gamma"], worst["largest_k_any"]
    if k_any is None:
        return (f"n/m = {p.density:.4g}: at γ = {g:g} the library accepts no prior at all for "
                f"{label}.")
    d_max = k_any * p.density
    others = [x for x in refused if x != g]
    text = (f"n/m = {p.density:.4g}: this table is too dense for {label} to hide a tuple from "
            f"an adversary with prior above {d_max:.4g} at γ = {g:g}"
            + (f" (and less at γ = {', '.join(f'{x:g}' for x in others)})" if others else "")
            + f", yet every adversary the paper protects against (k ≥ 1) may have prior "
              f"n/m = {p.density:.4g}: no k ≥ 1 is accepted (k < {k_any:.4g} would be). "
              "Consider: ")
    splu = [r for r in p.regions if "largest_group_size" in r]  # group-size families
    eligible = [r for r in splu if r["largest_group_size"] is not None]
    if eligible:
        best = max(eligible, key=lambda r: r["largest_group_size"])
        text += (f"SPLU-Gen, which bounds no prior (sensitive {best['sensitive']!r}: decoy "
                 f"groups up to γ = {best['largest_group_size']}); ")
    elif not splu:
        text += "SPLU-Gen (plan it with mechanisms=[..., 'splu']); "
    elif p.distinct is None:
        text += "SPLU-Gen (its eligibility needs the table); "
    else:
        text += "SPLU-Gen (not eligible for the sensitive attributes planned; try others); "
    top_k = max((r["k"] for r in p.rows if r["k"] is not None), default=1.0)
    needs = ", ".join(f"k = {k:g} needs m ≥ {math.ceil(k * p.n / d_max):,} "
                      f"(×{k * p.density / d_max:.3g} the current m)"
                      for k in sorted({1.0, float(top_k)}))
    text += (f"more attributes or larger domains (at γ = {g:g}, {needs}); or a smaller k, "
             f"below {k_any:.4g}, which protects no adversary whose prior is at the base rate")
    return text + planner(mechanism).below_base_rate + "."
