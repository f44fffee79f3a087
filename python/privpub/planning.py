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
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privpub.alphabeta.accounting import CALIBRATIONS
from privpub.alphabeta.mechanism import AlphaBeta
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.inputs import TableLike, tabular
from privpub.core.seeding import SEEDED
from privpub.frapp.mechanism import FRAPP
from privpub.splu import mechanism as splu_mechanism
from privpub.splu.calculators import privacy_guarantee, utility_threshold_chebyshev
from privpub.splu.mechanism import SPLUGen
from privpub.tables.published import PublishedView
from privpub.tables.records import (
    as_schema_codes,
    distinct_sorted,
    records_as_codes,
    repeated_rows,
    sorted_rows,
)
from privpub.tables.schema import Schema
from privpub.tables.view import MemoryView

MECHANISMS = ("alphabeta", "frapp", "splu")
#: Default grid: k ≥ 1 (DESIGN.md: a prior below the base rate is a different request).
DEFAULT_KS = (1, 2, 5, 10, 20, 50)
DEFAULT_GAMMAS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8)
DEFAULT_SPLU_GAMMAS = (2, 3, 5, 10)
#: Bisection steps for the region's edges (k over ~40 binary orders of magnitude,
#: γ over (0, 1): 80 halvings leave a relative gap far below the digits shown).
STEPS = 80
#: Smallest k searched when priors below the base rate are allowed.
TINY_K = 1e-9
#: Rows of the synthetic slice written to measure Parquet bytes per row.
SAMPLE_ROWS = 1 << 15


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


def _expected_rows(mech: AlphaBeta | FRAPP, n: int, distinct: int) -> tuple[float, float]:
    """Expected view rows and their standard deviation for ``n`` records holding
    ``distinct`` tuples (n = distinct under duplicates='set').

    αβ: a tuple's first record is kept with α+β, each further record with α,
    every other tuple of D is inserted with β, all independently, so
    E|V| = (α+β)u + α(n−u) + β(m−u) = αn + βm. (The brief's α·n + β·(m − u)
    misses the β·u by which a first copy's α+β exceeds α; the test on the dense
    table tells the two apart.) FRAPP: one row per record, exactly.
    """
    if isinstance(mech, FRAPP):
        return float(n), 0.0
    a, b, m, u = mech.alpha, mech.beta, mech.schema.size, distinct
    mean = a * n + b * m
    var = u * (a + b) * (1 - a - b) + (n - u) * a * (1 - a) + (m - u) * b * (1 - b)
    return mean, math.sqrt(var)


def _slice_digits(schema: Schema, rows: float, size: int, rng: np.random.Generator
                  ) -> list[np.ndarray]:
    """Digits of about ``size`` distinct tuples drawn uniformly, at the density
    rows/m of a view of ``rows`` rows, from one contiguous slice of the code
    order (leading digits 0, the next one below q, the rest free: q·T tuples,
    T a product of trailing radices). A sorted view's row group is such a
    slice, so its Parquet pages see the same run lengths as the full view's."""
    radices = [int(r) for r in schema.radices]
    density = min(1.0, rows / schema.size)
    want = size / density                     # the slice length that holds `size` rows
    j = 0
    while math.prod(radices[j:]) > want:      # stops: the empty product 1 ≤ want
        j += 1
    sizes = [1] * (j - 1) + radices[max(j - 1, 0):]
    if j:
        sizes[j - 1] = min(radices[j - 1], max(1, round(want / math.prod(radices[j:]))))
    length = math.prod(sizes)
    if length <= 64 * size:                   # enumerate the slice, keep each w.p. density
        idx = np.flatnonzero(rng.random(length) < density)
        digits = []
        for radix in reversed(sizes):
            idx, digit = np.divmod(idx, radix)
            digits.append(digit)
        return digits[::-1]
    # Sparse: independent uniform digits (repeats, < 1/128 of them, are dropped by the caller).
    count = max(1, round(density * length))
    return [rng.integers(0, radix, count) for radix in sizes]


def _measure(mech: AlphaBeta | FRAPP, rows: float) -> tuple[float, float]:
    """(bytes per row, fixed bytes) of the library's writer at this view's density."""
    rng = np.random.default_rng(0)            # a size measurement, not a release
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "slice.parquet")
        for size in (min(rows, SAMPLE_ROWS), min(rows, SAMPLE_ROWS) / 2):
            digits = _slice_digits(mech.schema, rows, max(1, round(size)), rng)
            codes = as_schema_codes(mech.schema, distinct_sorted(sorted_rows(
                MemoryView(mech.schema, digits=digits).codes())))
            PublishedView(codes, mech.schema, mech.name, mech.parameters(),
                          SEEDED).to_parquet(path, overwrite=True)
            sizes.append((len(codes), os.path.getsize(path)))
    (r1, b1), (r2, b2) = sizes
    slope = (b1 - b2) / (r1 - r2) if r1 != r2 else 0.0
    return slope, b1 - slope * r1


def _parquet_bytes(mech: AlphaBeta | FRAPP, rows: float,
                   cache: dict[tuple, tuple[float, float]] | None = None) -> int:
    """Estimated bytes of ``PublishedView.to_parquet`` for a view of ``rows`` rows.

    Measured, not derived from code widths: the library's own writer writes
    two sorted slices of uniform tuples at the view's density (SAMPLE_ROWS
    rows and half as many, :func:`_slice_digits`) and the size is extrapolated
    linearly (the intercept is the footer: schema and metadata). Uniform tuples
    are what αβ's noise and FRAPP's replacements are; kept records cluster and
    compress a little better, so the estimate errs high where they are a large
    share of the view (tested within 25% of real writes). ``cache`` reuses a
    measurement for views within 2^(1/16) in density.
    """
    rows = max(float(rows), 1.0)
    cache = {} if cache is None else cache
    key = (mech.name, round(16 * math.log2(rows / mech.schema.size)),
           round(16 * math.log2(min(rows, SAMPLE_ROWS))))
    if key not in cache:
        cache[key] = _measure(mech, rows)
    slope, fixed = cache[key]
    return round(fixed + slope * rows)


def expected_view_size(mech: AlphaBeta | FRAPP, n_distinct: int | None = None
                       ) -> tuple[float, int]:
    """Expected rows and estimated Parquet bytes of the view ``mech.publish``
    would write, before publishing (for a size warning or a ``--yes`` prompt).

    ``mech`` is an :class:`AlphaBeta` or :class:`FRAPP` built for n records
    (``for_privacy``). ``n_distinct`` is the number of distinct tuples among
    them when publishing with ``duplicates="set"`` (the view then starts from
    those); leave it None when every record is published. Rows: αβ's
    α·n + β·m in expectation, FRAPP's n exactly. Bytes: measured from writes
    of a uniform slice at the view's density (see :func:`_parquet_bytes`).
    A SPLU-Gen view is never larger than its input (N − (N mod γ) rows); its
    size needs the table (:func:`plan`).

    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> rows, size = expected_view_size(mech)
    >>> round(rows), 1_500_000 < size < 4_000_000
    (1215348, True)
    """
    if not isinstance(mech, (AlphaBeta, FRAPP)):
        raise ParameterError(f"expected_view_size takes an AlphaBeta or FRAPP mechanism, got "
                             f"{type(mech).__name__} (a SPLU-Gen view's size needs the table: "
                             "use privpub.plan)")
    if mech.n is None:
        raise ParameterError("the mechanism has no n; build it with for_privacy(n=...)")
    n = mech.n if n_distinct is None else validate.count("n_distinct", n_distinct, minimum=1)
    if n > mech.n:
        raise ParameterError(f"n_distinct = {n:,} exceeds the mechanism's n = {mech.n:,}")
    rows, _ = _expected_rows(mech, n, n)
    return rows, _parquet_bytes(mech, rows)


# ---- feasibility, from the mechanisms' own checks ----------------------------------------------


def _build(mechanism: str, calibration: str | None, facts: _Facts, k: float, gamma: float,
           epsilon: float, allow: bool) -> AlphaBeta | FRAPP:
    """The mechanism for_privacy builds for this request (or its ParameterError)."""
    if mechanism == "alphabeta":
        return AlphaBeta.for_privacy(facts.schema, n=facts.n, gamma=gamma, k=k, epsilon=epsilon,
                                     calibration=calibration, allow_prior_below_base_rate=allow)
    return FRAPP.for_privacy(facts.schema, n=facts.n, gamma=gamma, k=k, epsilon=epsilon,
                             allow_prior_below_base_rate=allow)


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


def _largest_k(mechanism: str, calibration: str | None, facts: _Facts, gamma: float,
               epsilon: float) -> float | None:
    """The largest k the library accepts at γ, priors below the base rate allowed
    (None: not even k = TINY_K is). Feasibility falls with k (a larger prior is
    harder to hide), so k ≥ 1 is feasible exactly when this is ≥ 1; d = 1 is
    always refused, so k = m/n bounds the search."""
    def ok(k: float) -> bool:
        return _accepts(lambda: _build(mechanism, calibration, facts, k, gamma, epsilon, True))
    top = facts.m / facts.n
    if top <= TINY_K or not ok(TINY_K):
        return None
    return _edge(ok, TINY_K, top, "log")


def _least_gamma(mechanism: str, calibration: str | None, facts: _Facts, k: float,
                 epsilon: float, allow: bool) -> float | None:
    """The least γ in (0, 1) the library accepts at k (None: none is).
    Feasibility grows with γ (a looser posterior bound)."""
    def ok(gamma: float) -> bool:
        return _accepts(lambda: _build(mechanism, calibration, facts, k, gamma, epsilon, allow))
    top, bottom = 1 - 1e-12, 1e-12
    if not ok(top):
        return None
    return bottom if ok(bottom) else _edge(ok, top, bottom, "linear")


# ---- the grid ---------------------------------------------------------------------------------


def _refusal(mechanism: str, calibration: str | None, facts: _Facts, k: float, gamma: float,
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
    name = "FRAPP" if mechanism == "frapp" else f"the {calibration!r} calibration"
    return f"{name} cannot meet d = k·n/m = {d:.4g} (n/m = {ratio:.4g}) at γ = {gamma:g}"


def _grid_rows(mechanism: str, calibration: str | None, facts: _Facts, ks: Sequence[float],
               gammas: Sequence[float], epsilon: float, allow: bool,
               largest: dict[float, float | None], cache: dict) -> list[dict[str, Any]]:
    """The rows of one mechanism (and calibration); ``largest`` is the region's
    largest accepted k by γ (k ≥ 1 unless ``allow``)."""
    least = {k: _least_gamma(mechanism, calibration, facts, k, epsilon, allow) for k in ks}
    rows = []
    for gamma in gammas:
        for k in ks:
            row = {"mechanism": mechanism, "calibration": calibration, "sensitive": None,
                   "k": k, "gamma": gamma, "d": k * facts.n / facts.m, "splu_gamma": None,
                   "largest_k": largest[gamma], "least_gamma": least[k]}
            try:
                mech = _build(mechanism, calibration, facts, k, gamma, epsilon, allow)
            except ParameterError as exc:
                bounds = (f"; largest feasible k at γ = {gamma:g}: "
                          + (f"{largest[gamma]:.4g}" if largest[gamma] is not None else
                             "none" + ("" if allow else " ≥ 1"))
                          + f"; least γ at k = {k:g}: "
                          + (f"{least[k]:.4g}" if least[k] is not None else "none below 1"))
                rows.append(row | {"feasible": False, "library_error": str(exc),
                                   "reason": _refusal(mechanism, calibration, facts, k, gamma,
                                                      allow) + bounds})
                continue
            expected, stderr = _expected_rows(mech, facts.published,
                                              facts.distinct or facts.published)
            # The release states n, and the bound, for the records published.
            released = (mech.with_records(facts.published, facts.records_facts)
                        if isinstance(mech, AlphaBeta) else
                        FRAPP(facts.schema, mech.gamma_frapp, n=facts.published, d=mech.d,
                              gamma=gamma, epsilon=epsilon, records=facts.records_facts))
            resolution = released.resolution()
            rows.append(row | {
                "feasible": True, "alpha": getattr(mech, "alpha", None),
                "beta": getattr(mech, "beta", None),
                "gamma_frapp": getattr(mech, "gamma_frapp", None),
                "error_bound": released.error_bound(), "typical_count": resolution.typical,
                "weak_usefulness": resolution.weak, "rows": expected, "rows_stderr": stderr,
                "bytes": _parquet_bytes(mech, expected, cache),
                "claims_not_met": [c.name for c in released.guarantee().claims
                                   if not c.holds]})
    return rows


def _splu_rows(facts: _Facts, sensitive: str | Sequence[str] | None,
               gammas: Sequence[int]) -> list[dict[str, Any]]:
    """SPLU-Gen's rows: one per sensitive set (each attribute alone when none is
    given) and γ; eligibility and N are the library's partition of the table."""
    sets = ([[s] for s in facts.schema.names] if sensitive is None else
            [[sensitive] if isinstance(sensitive, str) else list(sensitive)])
    rows = []
    measured = None  # bytes per row of one real release, for every set (see _splu_bytes)
    for names in sets:
        base = {"mechanism": "splu", "calibration": None, "sensitive": ",".join(names),
                "k": None, "gamma": None, "d": None}
        if facts.codes is None:
            rows.extend(base | {"splu_gamma": g, "feasible": None,
                                "reason": "needs the table: eligibility depends on the "
                                          "sensitive values' frequencies"} for g in gammas)
            continue

        def partition(g: int, names: list[str] = names) -> Any:
            return SPLUGen(g, names, schema=facts.schema).partition(facts.codes)

        top = min(facts.schema[s].size for s in names)
        largest = (None if top < 2 or not _accepts(lambda: partition(2)) else
                   _edge(lambda g: _accepts(lambda: partition(g)), 2, top + 1, "integer"))
        for g in gammas:
            row = base | {"splu_gamma": g, "largest_k": None, "least_gamma": None,
                          "largest_splu_gamma": largest}
            try:
                part = partition(g)
            except ParameterError as exc:
                rows.append(row | {"feasible": False, "library_error": str(exc),
                                   "reason": f"{exc}; largest eligible γ for "
                                             f"{', '.join(names)}: {largest}"})
                continue
            published = facts.n - len(part.residue)
            if measured is None:
                measured = _splu_bytes(facts, g, names) / published
            rows.append(row | {
                "feasible": True, "rows": float(published), "rows_stderr": 0.0,
                "bytes": round(measured * published), "error_bound": None,
                "splu_utility_threshold": utility_threshold_chebyshev(
                    g, splu_mechanism.GUARANTEE_EPS, splu_mechanism.GUARANTEE_T_E),
                "splu_small_sum_privacy": privacy_guarantee(
                    g, splu_mechanism.GUARANTEE_EPS, splu_mechanism.GUARANTEE_ALPHA)})
    return rows


def _splu_bytes(facts: _Facts, gamma: int, names: list[str]) -> int:
    """Bytes of a real SPLU-Gen release of the table at γ, written by the library.
    Measured once per plan and scaled by rows for the other sensitive sets and
    γ: every view is the table itself with a sensitive column drawn within
    groups, and which column, or more decoys, change its compressed size by a
    few per cent (3% across the dense test table's six columns)."""
    with warnings.catch_warnings():  # the residue warning; the plan reports N
        warnings.simplefilter("ignore")
        view = SPLUGen(gamma, names, schema=facts.schema).publish(facts.codes, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "splu.parquet")
        view.to_parquet(path)
        return os.path.getsize(path)


# ---- the plan ---------------------------------------------------------------------------------

#: The columns of :meth:`Plan.to_frame`, in order.
COLUMNS = ("mechanism", "calibration", "sensitive", "k", "gamma", "d", "splu_gamma", "feasible",
           "reason", "library_error", "alpha", "beta", "gamma_frapp", "error_bound",
           "typical_count", "weak_usefulness", "splu_utility_threshold", "splu_small_sum_privacy",
           "rows", "rows_stderr", "bytes", "largest_k", "least_gamma", "largest_splu_gamma",
           "claims_not_met")
LABELS = {"alphabeta": "αβ", "frapp": "FRAPP", "splu": "SPLU-Gen"}


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
    epsilon: float
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
                "duplicates": self.duplicates, "epsilon": self.epsilon,
                "derived_domains": list(self.derived),
                "rows": [{c: row.get(c) for c in COLUMNS} for row in self.rows],
                "regions": [dict(r) for r in self.regions], "explanation": self.explain()}

    def explain(self) -> str:
        """One paragraph per mechanism: its feasible region, why the rest is refused
        (in terms of n, m, n/m) and what to try instead."""
        parts = [_explain_table(self)]
        for mechanism in dict.fromkeys(r["mechanism"] for r in self.rows):
            parts.append(_explain_splu(self) if mechanism == "splu"
                         else _explain_mechanism(self, mechanism))
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
            name = LABELS[r["mechanism"]] + ("" if r["calibration"] is None
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


def plan(table_or_schema: TableLike | Schema, *, n: int | None = None,
         mechanisms: Sequence[str] = MECHANISMS, ks: Sequence[float] = DEFAULT_KS,
         gammas: Sequence[float] = DEFAULT_GAMMAS, epsilon: float = 0.05,
         sensitive: str | Sequence[str] | None = None,
         splu_gammas: Sequence[int] = DEFAULT_SPLU_GAMMAS,
         calibrations: Sequence[str] = CALIBRATIONS, schema: Schema | None = None,
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
    mechanisms : "alphabeta", "frapp", "splu"
    ks, gammas : the (k, γ) grid for αβ (every calibration in ``calibrations``)
        and FRAPP; d = k·n/m.
    epsilon : the error bounds' failure probability.
    sensitive : SPLU-Gen's sensitive attribute(s); None plans each attribute alone.
    splu_gammas : SPLU-Gen's decoy group sizes.
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
    unknown = [m for m in mechanisms if m not in MECHANISMS]
    if unknown or isinstance(mechanisms, str):
        raise ParameterError(f"mechanisms must be a list drawn from {list(MECHANISMS)}, "
                             f"got {mechanisms!r}")
    bad = [c for c in calibrations if c not in CALIBRATIONS]
    if bad or isinstance(calibrations, str) or not calibrations:
        raise ParameterError(f"calibrations must be a non-empty list drawn from "
                             f"{list(CALIBRATIONS)}, got {calibrations!r}")
    ks = [validate.real("k", k) for k in ks]
    gammas = [validate.probability("gamma", g, open_low=True, open_high=True) for g in gammas]
    if not ks or not gammas:
        raise ParameterError(f"ks and gammas must each hold a value, got {ks} and {gammas}")
    epsilon = validate.probability("epsilon", epsilon, open_low=True, open_high=True)
    facts = _facts(table_or_schema, n, schema, duplicates)
    rows: list[dict[str, Any]] = []
    regions: list[dict[str, Any]] = []
    cache: dict = {}
    for mechanism in mechanisms:
        if mechanism == "splu":
            splu = _splu_rows(facts, sensitive, [validate.count("splu_gamma", g, minimum=2)
                                                 for g in splu_gammas])
            rows.extend(splu)
            regions.extend({"mechanism": "splu", "sensitive": s, "largest_splu_gamma": g}
                           for s, g in dict.fromkeys((r["sensitive"],
                                                      r.get("largest_splu_gamma"))
                                                     for r in splu))
            continue
        for calibration in calibrations if mechanism == "alphabeta" else [None]:
            edges = {g: _largest_k(mechanism, calibration, facts, g, epsilon) for g in gammas}
            largest = {g: k if k is not None and (k >= 1 or allow_prior_below_base_rate)
                       else None for g, k in edges.items()}
            rows.extend(_grid_rows(mechanism, calibration, facts, ks, gammas, epsilon,
                                   allow_prior_below_base_rate, largest, cache))
            regions.extend({"mechanism": mechanism, "calibration": calibration, "gamma": g,
                            "largest_k": largest[g], "largest_k_any": edges[g]} for g in gammas)
    return Plan(facts.n, facts.m, facts.distinct, duplicates, epsilon,
                tuple(facts.schema.derived), tuple(rows), tuple(regions))


# ---- explanations -----------------------------------------------------------------------------


def _size(rows: float, size: int) -> str:
    return f"≈ {rows:,.0f} rows, ≈ {size / 1e6:,.3g} MB"


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
    label = LABELS[mechanism]
    regions = [r for r in p.regions if r["mechanism"] == mechanism]
    calibrations = list(dict.fromkeys(r["calibration"] for r in regions))
    main = "exclusive" if "exclusive" in calibrations else calibrations[0]
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
        lines.append(f"Largest view in the grid: {_size(big['rows'], big['bytes'])} at "
                     f"k = {big['k']:g}, γ = {big['gamma']:g}; smallest error bound "
                     f"{tight['error_bound']:,.1f} (each query, w.p. ≥ {1 - p.epsilon:g}) at "
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
    splu = [r for r in p.regions if r["mechanism"] == "splu"]
    eligible = [r for r in splu if r["largest_splu_gamma"] is not None]
    if eligible:
        best = max(eligible, key=lambda r: r["largest_splu_gamma"])
        text += (f"SPLU-Gen, which bounds no prior (sensitive {best['sensitive']!r}: decoy "
                 f"groups up to γ = {best['largest_splu_gamma']}); ")
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
    if mechanism == "alphabeta":
        text += " and must be asked for with allow_prior_below_base_rate=True"
    return text + "."


def _explain_splu(p: Plan) -> str:
    rows = [r for r in p.rows if r["mechanism"] == "splu"]
    if p.distinct is None:
        return ("SPLU-Gen: needs the table: which decoy group sizes γ are eligible depends on "
                "the sensitive values' frequencies (every value at most N/γ records).")
    lines = ["SPLU-Gen (no prior bound; small counts hidden, large counts kept):"]
    for region in (r for r in p.regions if r["mechanism"] == "splu"):
        s, top = region["sensitive"], region["largest_splu_gamma"]
        mine = [r for r in rows if r["sensitive"] == s and r["feasible"]]
        if top is None:
            refusal = next(r["library_error"] for r in rows if r["sensitive"] == s)
            lines.append(f"sensitive {s!r}: not eligible for any γ ≥ 2 ({refusal}).")
            continue
        text = f"sensitive {s!r}: eligible up to γ = {top}"
        if mine:
            r = mine[-1]
            text += (f"; at γ = {r['splu_gamma']}: {_size(r['rows'], r['bytes'])}, counts ≥ "
                     f"{r['splu_utility_threshold']:,.0f} estimated within "
                     f"{splu_mechanism.GUARANTEE_EPS:g} of themselves w.p. ≥ "
                     f"{1 - splu_mechanism.GUARANTEE_T_E:g}, counts 1.."
                     f"{splu_mechanism.GUARANTEE_ALPHA} missed by more than that w.p. ≥ "
                     f"{r['splu_small_sum_privacy']:.3f}")
        lines.append(text + ".")
    return " ".join(lines)
