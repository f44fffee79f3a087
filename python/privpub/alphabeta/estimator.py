"""αβ's estimator and the laws its confidence intervals invert.

Algorithm 3 estimates a counting query from a view by Q̃(V) = (n_V − β n_D)/α,
with n_V = Q(V) and n_D = Q(D); with a source distribution (Algorithm 8)
Q̃(V) = (n_V − Σ_{t ∈ Q(D)} β(t))/α (docs/design.md, "Notes on the papers": the
text's sum over Q(I) is a slip). :func:`estimate` gives Q̃ with a plug-in
variance; :func:`interval_law` the law of n_V given the true count c, whose
tests :class:`~privpub.tables.confidence.CountLaw` inverts into an interval
covering c with probability ≥ L for every c (that module has the argument).
The laws (c the true count, n_D = Q(D), n the records published):

- **exact** (:class:`~privpub.tables.confidence.KeepLaw`): under
  ``duplicates="set"`` (or data without repeats), n_V ~ Bin(c, α+β) +
  Bin(n_D − c, β), over c in [0, min(n, n_D)].
- **conservative: records** (:class:`RecordsLaw`): under
  ``duplicates="records"``. The first copy of a tuple is kept with keep =
  α+β and every further copy with α = keep − background (background = β;
  tables/records.py, ``_core.sampling.keep_records``), so with q the number of distinct
  tuples among the query's c records n_V ~ Bin(q, keep) + Bin(c − q, keep −
  background) + Bin(total − q, background) (total = n_D): two unknowns. The
  mean, (keep − background)·c + background·total, does not depend on q; q
  only moves the spread. The release knows E = n − (distinct tuples), the
  records beyond their first copies, so q ≥ q_lo(c) = max(min(c, 1), c − E)
  (and top = min(n, total + E)). The tests use the largest tail over every
  q ≥ q_lo(c), which is at q_lo(c) wherever they can reject (proof below), so
  they are valid for the true q whatever it is: the interval covers at least
  L for every (c, q).

  Proof. Going from q to q + 1 replaces a further copy and a noise
  indicator, Bern(r) + Bern(b) with r = keep − b, by one first copy,
  Bern(r + b). With X the other indicators (X_q, a Poisson binomial of mean
  μ − keep, μ the mean above), P(N_q ≥ k) − P(N_{q+1} ≥ k) = r·b·(P(X_q =
  k − 2) − P(X_q = k − 1)). A Poisson binomial is log-concave and its modes
  lie strictly within 1 of its mean (Darroch 1964), so its pmf falls from
  ⌈μ_X⌉ on and rises up to ⌊μ_X⌋. Hence for k ≥ ⌈μ − keep⌉ + 2 the upper tail
  P(N_q ≥ k) is largest at the least q, q_lo(c); and for k ≤ ⌊μ − keep⌋
  the lower tail P(N_q ≤ k) = 1 − P(N_q ≥ k + 1) is too. Outside these
  ranges (within about 2 of the mean, where a tail is rarely small) the test
  does not reject. Both rejection regions stay monotone in c (q_lo(c + 1)
  adds a further copy, or turns a noise indicator into a first copy), so the
  accepted set is an interval. With E = 0 this is the exact law above.
- **conservative: source** (:class:`HoeffdingLaw`): with a source
  distribution (β(t) differs by tuple). n_V is a Poisson binomial over the
  query's n_D tuples (and further copies) whose mean, α·c + Σ_{t ∈ Q(D)} β(t),
  is known for each c, but whose spread depends on which tuples are in I.
  Hoeffding (1956, Theorem 4): a Poisson binomial of N trials and mean μ has
  P(S ≥ k) ≤ P(Bin(N, μ/N) ≥ k) for k ≥ μ + 1, and P(S ≤ k) ≤ P(Bin(N, μ/N)
  ≤ k) for k ≤ μ − 1; the tests reject only there, with N an upper bound on
  the trials (a binomial of fewer trials with the same mean is a Poisson
  binomial of N trials with some p = 0).
- **conservative: views** (:class:`SplitLaw`): several views (Algorithm 7,
  :mod:`privpub.alphabeta.multiview`). The estimate sums two independent
  parts (inside and outside the union of the earlier views), each one of the
  laws above; each part's interval is taken at level 1 − (1 − L)/2 and the
  ends are added (Bonferroni: both cover with probability ≥ L).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from privpub.core.estimate import LEVEL, check_level
from privpub.tables.confidence import (
    MAX_COUNT,
    CountLaw,
    KeepLaw,
    binomial_moments,
    sum_tails,
)

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta
    from privpub.tables.viewcounts import Counts

#: Method names, as Estimate.interval_method reports them (beside the floor's "exact").
CONSERVATIVE_RECORDS = "conservative: records"
CONSERVATIVE_SOURCE = "conservative: source"
CONSERVATIVE_VIEWS = "conservative: views"


def estimate(mech: AlphaBeta, c: Counts) -> tuple[Any, Any]:
    """Algorithm 3: Q̃ = (n_V − β n_D)/α; with a source (Algorithm 8)
    Q̃ = (n_V − Σ_{t ∈ Q(D)} β(t))/α. Returns (Q̃, plug-in variance).

    Variance: Q(V) sums independent indicators, so α²·Var Q̃ =
    q_r·α(1−α) − 2αβ·q_d + Σ_{t ∈ Q(D)} β(t)(1−β(t)), where q_r counts the
    query's records and q_d its distinct tuples in I (a tuple's first record
    has variance (α+β)(1−α−β) and replaces its noise indicator; each further
    record has α(1−α)). It depends on the unknown counts, so it is a
    *plug-in*: q_r is Q̃ clipped to the counts the release allows, [0, n_D]
    under set semantics (or data without repeats) and [0, min(n, n_D + E)]
    under ``duplicates="records"`` (E = n − distinct tuples: a query's
    records may outnumber its domain tuples); q_d is q_r under set
    semantics, and q_r times the published table's share of distinct tuples
    (at most n_D) under ``duplicates="records"`` (exact when the query's
    records repeat like the table's; the term is 2αβ·q_d, small against
    the others when β is). With a source, β(t) in the −2αβ term is its mean
    over Q(D). The plug-in is far off at small counts: the confidence
    interval (:func:`interval_law`) is what holds for every count.
    """
    a, b = mech.alpha, mech.beta
    if mech.source is None:
        w_sum = w2_sum = c.n_domain
    else:
        w_sum = c.domain_sum(mech.source.weights)
        w2_sum = c.domain_sum([w * w for w in mech.source.weights])
    noise, noise_sq = b * np.asarray(w_sum, dtype=float), b * b * np.asarray(w2_sum,
                                                                             dtype=float)
    value = (c.n_view - noise) / a
    q_records = np.clip(value, 0.0, count_top(mech.n, c.n_domain, mech.extra_records))
    q_distinct = np.minimum(q_records * mech.distinct_share, c.n_domain)
    b_mean = np.divide(noise, c.n_domain, out=np.full_like(noise, b),
                       where=np.asarray(c.n_domain) > 0)
    variance = (q_records * a * (1 - a) - 2 * a * b_mean * q_distinct
                + (noise - noise_sq)) / (a * a)
    return value, variance


def interval_law(mech: AlphaBeta, c: Counts) -> CountLaw:
    """The law of Q(V) given the true count, with Q(V) observed (module
    docstring): exact under set semantics or data without repeats (Q(V) ~
    Bin(c, α+β) + Bin(n_D − c, β) over c in [0, min(n, n_D)]); conservative
    under ``duplicates="records"`` with repeated tuples (the query's distinct
    tuples q unknown, q ≥ max(min(c, 1), c − E)); conservative with a source
    distribution (Hoeffding's bound on the Poisson binomial Q(V), whose mean
    α·c + Σ_{t ∈ Q(D)} β(t) is known)."""
    extra = mech.extra_records
    top = count_top(mech.n, c.n_domain, extra)
    if mech.source is None:
        return records_law(c.n_view, mech.alpha + mech.beta, mech.beta, c.n_domain, top, extra)
    noise = mech.beta * np.asarray(c.domain_sum(mech.source.weights), dtype=float)
    return HoeffdingLaw(c.n_view, mech.alpha, noise, np.asarray(c.n_domain, float) + extra, top)


def count_top(n: int | None, total: Any, extra: int = 0) -> Any:
    """The largest count a query whose Q(D) holds ``total`` tuples can have:
    total + extra (records beyond the first copies, which need a first copy:
    0 when total is 0), and at most n (when known)."""
    total = np.asarray(total, dtype=float)
    bound = np.where(total > 0, total + extra, 0.0)
    return bound if n is None else np.minimum(bound, float(n))


def records_law(n_view: Any, keep: Any, background: Any, total: Any, top: Any,
                extra: int) -> KeepLaw:
    """The law of a view whose records beyond their tuples' first copies number
    ``extra``: exact (:class:`~privpub.tables.confidence.KeepLaw`) when there are
    none, else :class:`RecordsLaw`."""
    if not int(extra):
        return KeepLaw(n_view, keep, background, total, top)
    return RecordsLaw(n_view, keep, background, total, top, extra)


class RecordsLaw(KeepLaw):
    """n_V ~ Bin(q, keep) + Bin(c − q, keep − background) + Bin(total − q,
    background), q the distinct tuples among the c records: any q ≥ max(min(c,
    1), c − extra). Conservative (module docstring, with the proof)."""

    method = CONSERVATIVE_RECORDS

    def __init__(self, n_view: Any, keep: Any, background: Any, total: Any, top: Any,
                 extra: int):
        super().__init__(n_view, keep, background, total, top)
        self.extra = int(extra)

    def _least_distinct(self, c: np.ndarray) -> np.ndarray:
        return np.maximum(np.minimum(c, 1.0), c - self.extra)

    def rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                ) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        total, k = self.arrays["total"][idx], self.k[idx]
        c = c.astype(float)
        q = self._least_distinct(c)
        up, low = sum_tails(k, np.stack([q, c - q, total - q]),
                            np.stack([keep, keep - bg, bg]))
        # The largest tail over the splits is at q (the least) only this far
        # from the mean; nearer, the test does not reject (module docstring).
        mean_x = (keep - bg) * c + bg * total - keep
        slack = 1e-9 * np.maximum(np.abs(mean_x), 1.0)
        return ((up <= tail) & (k >= np.ceil(mean_x + slack) + 2),
                (low <= tail) & (k <= np.floor(mean_x - slack)))

    def moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        q, total = self._least_distinct(c), self.arrays["total"][idx]
        return binomial_moments(((q, keep), (c - q, keep - bg), (total - q, bg)))


class HoeffdingLaw(CountLaw):
    """n_V a Poisson binomial over at most ``trials`` trials with mean
    slope·c + noise: tested against Bin(trials, mean/trials), rejecting only
    beyond mean ± 1 (Hoeffding 1956; module docstring). Conservative."""

    method = CONSERVATIVE_SOURCE

    def __init__(self, n_view: Any, slope: float, noise: Any, trials: Any, top: Any):
        super().__init__(n_view, top, noise=noise, trials=trials)
        self.slope = float(slope)

    def rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                ) -> tuple[np.ndarray, np.ndarray]:
        k, trials = self.k[idx], self.arrays["trials"][idx]
        mean = self.slope * c + self.arrays["noise"][idx]
        p = np.clip(mean / np.maximum(trials, 1.0), 0.0, 1.0)
        up, low = sum_tails(k, trials[None, :], p[None, :])
        slack = 1e-9 * np.maximum(mean, 1.0)
        return (up <= tail) & (k >= mean + 1 + slack), (low <= tail) & (k <= mean - 1 - slack)

    def line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays["noise"][idx], np.full(len(idx), self.slope)

    def moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        trials = np.maximum(self.arrays["trials"][idx], 1.0)
        p = np.clip((self.slope * c + self.arrays["noise"][idx]) / trials, 0.0, 1.0)
        return trials * p * (1 - p), trials * p * (1 - p) * (1 - 2 * p)


class SplitLaw:
    """Two independent parts, the count their sum: each part's interval at
    level 1 − (1 − L)/2, the ends added (Bonferroni, conservative); a part
    whose count is known to be 0 (top 0) leaves the whole level to the other.
    The sum is capped at ``top``."""

    method = CONSERVATIVE_VIEWS

    def __init__(self, first: CountLaw, second: CountLaw, top: Any):
        self.parts = (first, second)
        self.top = np.asarray(top)

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        (lo_a, hi_a, _), (lo_b, hi_b, _) = self._parts(check_level(level))
        top = np.minimum(self.top, MAX_COUNT).astype(np.int64)
        return np.minimum(lo_a + lo_b, top), np.minimum(hi_a + hi_b, top)

    def inconsistent(self, level: float = LEVEL) -> np.ndarray:
        """Where a part's tests reject every count at its level: that part's
        interval is its whole range (:meth:`CountLaw.inconsistent`)."""
        (_, _, empty_a), (_, _, empty_b) = self._parts(check_level(level))
        return empty_a | empty_b

    def _parts(self, level: float) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """Each part's (lo, hi, inconsistent) at the level it is given."""
        a, b = self.parts
        half = 1 - (1 - level) / 2
        ends_a = (*a.interval(half), a.inconsistent(half))
        ends_b = (*b.interval(half), b.inconsistent(half))
        # A part that cannot hold records (top 0) takes none of the error.
        if np.any(a.top == 0) or np.any(b.top == 0):
            full_a = (*a.interval(level), a.inconsistent(level))
            full_b = (*b.interval(level), b.inconsistent(level))
            alone_b, alone_a = (a.top == 0).reshape(a.shape), (b.top == 0).reshape(b.shape)
            ends_b = tuple(np.where(alone_b, f, h) for f, h in zip(full_b, ends_b, strict=True))
            ends_a = tuple(np.where(alone_a, f, h) for f, h in zip(full_a, ends_a, strict=True))
        return ends_a, ends_b
