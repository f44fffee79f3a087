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

This package holds the table's facts (:mod:`~privpub.planning.facts`), the
grid and the search (:mod:`~privpub.planning.search`) and the explanations
(:mod:`~privpub.planning.explain`) only. What each
family knows about itself — how its mechanism is built for a request, its
view's rows and bytes, SPLU-Gen's eligibility and rows — is in the family's
``planning`` module (``alphabeta/``, ``frapp/``, ``splu/``), registered by
mechanism name (:mod:`privpub.core.planners`) and looked up, never switched on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.figures import figures
from privpub.core.inputs import TableLike
from privpub.core.planners import planner, planners
from privpub.core.renamed import renamed_keywords
from privpub.domain.schema import Schema
from privpub.planning.explain import explain_table
from privpub.planning.facts import table_facts
from privpub.planning.search import Request, Search

#: Default grid: k ≥ 1, a prior at or above the base rate n/m: below it is a different
#: request (docs/design.md, "d = kn/m with k ≥ 1").
DEFAULT_KS = (1, 2, 5, 10, 20, 50)
DEFAULT_GAMMAS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8)
DEFAULT_GROUP_SIZES = (2, 3, 5, 10)


def expected_view_size(mech: Any, n_distinct: int | None = None
                       ) -> tuple[float, int]:
    """Expected rows and estimated Parquet bytes of the view ``mech.publish``
    would write, before publishing (for a size warning or a ``--yes`` prompt).

    ``mech`` is an :class:`AlphaBeta` or :class:`FRAPP` built for n records
    (``for_privacy``). ``n_distinct`` is the number of distinct tuples among
    them when publishing with ``duplicates="set"`` (the view then starts from
    those); leave it None when every record is published. Rows: αβ's
    α·n + β·m in expectation, FRAPP's n exactly. Bytes: from a model of the
    file at the view's density, calibrated against written files (see
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
    n = mech.n if n_distinct is None else validate.integer("n_distinct", n_distinct, minimum=1)
    if n > mech.n:
        raise ParameterError(f"n_distinct = {n:,} exceeds the mechanism's n = {mech.n:,}")
    rows, _ = family.expected_rows(mech, n, n)
    return rows, family.view_bytes(mech, rows)


# ---- the plan ---------------------------------------------------------------------------------

#: The columns of :meth:`Plan.to_frame`, in order.
COLUMNS = ("mechanism", "calibration", "sensitive", "k", "gamma", "d", "group_size", "feasible",
           "reason", "library_error", "alpha", "beta", "gamma_frapp", "error_bound",
           "typical_count", "weak_usefulness", "splu_utility_threshold", "splu_small_sum_privacy",
           "epsilon", "rows", "rows_stderr", "bytes", "largest_k", "least_gamma",
           "largest_group_size", "claims_not_met")


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found: one row per grid point (``rows``, dicts with the
    keys of :data:`COLUMNS`) and the feasible region (``regions``: for αβ and
    FRAPP, per calibration and γ, the largest accepted k ≥ 1 — or > 0 when
    priors below the base rate were allowed — as ``largest_k``, and the largest
    accepted k of any size as ``largest_k_any``; for SPLU-Gen, per sensitive
    set, the largest eligible γ). A (k, γ) region also holds, per γ, the largest
    accepted k whose bound tells the typical count from zero (``largest_useful_k``,
    None: none does) and that request's ε (``useful_epsilon``); each row's
    ``epsilon`` is its parameters' pure-DP ε under replacement of one tuple (None:
    none finite), whether or not the claim holds for the data (its
    ``claims_not_met`` say)."""

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
        (in terms of n, m, n/m) and what to try instead (figures written one way:
        :func:`privpub.core.figures.figures`)."""
        parts = [explain_table(self)]
        for mechanism in dict.fromkeys(r["mechanism"] for r in self.rows):
            parts.append(planner(mechanism).explain(self, Search))
        return figures("\n\n".join(parts))

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

    Returns
    -------
    Plan
        Each grid point's verdict, parameters, error bound and view size, the
        feasible region and the explanations.

    Notes
    -----
    Every verdict is the mechanisms' own (their ``ParameterError`` text is kept
    in ``library_error``); see the module docstring.

    Examples
    --------
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
    facts = table_facts(table_or_schema, n, schema, duplicates)
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
