"""Confidence intervals for counts estimated from a randomised view.

For every table mechanism here the view's count n_V = Q(V) is, given the
true count c = Q(I), a sum of independent binomials (each tuple or record
is kept or inserted independently), and the family is stochastically
increasing in c. Inverting the two one-sided tests of "the count is c" at
level (1 − L)/2 each (L the confidence level) gives the interval

    lo = min {c : P_c(N ≥ n_V) > (1 − L)/2},  hi = max {c : P_c(N ≤ n_V) > (1 − L)/2}

over c in [0, top] (``top``: the largest count the release allows). Its
coverage is at least L for every true count: for the true c the first test
rejects on an upper set of n_V of probability ≤ (1 − L)/2, the second on a
lower set, so c is left out with probability ≤ 1 − L (Clopper–Pearson's
argument; the tests are monotone in c, so the accepted counts are an
interval and a bisection finds its ends). When no count is accepted on one
side the interval is the end of [0, top] on that side (a superset of the
accepted set, so coverage still holds).

The laws (c the true count, n_D = Q(D), n the records published):

- :class:`KeepLaw` with ``extra = 0``, **exact**: n_V ~ Bin(c, keep) +
  Bin(total − c, background). αβ under ``duplicates="set"`` (or data
  without repeats): keep = α+β, background = β, total = n_D, top =
  min(n, n_D). FRAPP (any semantics: records are perturbed independently):
  keep = p_in = γ_f + o(n_D − 1), background = p_out = o·n_D, total = n,
  top = n (records) or min(n, n_D) (distinct tuples).
- :class:`KeepLaw` with ``extra > 0``, **conservative**: αβ under
  ``duplicates="records"``. The first copy of a tuple is kept with keep =
  α+β and every further copy with α = keep − background (tables/records.py,
  ``_core.keep_records``), so with q the number of distinct tuples among the
  query's c records n_V ~ Bin(q, keep) + Bin(c − q, keep − background) +
  Bin(total − q, background): two unknowns. The mean, (keep − background)·c
  + background·total, does not depend on q; q only moves the spread. The
  release knows E = n − (distinct tuples), the records beyond their first
  copies, so q ≥ q_lo(c) = max(min(c, 1), c − E) (and top = min(n, total +
  E)). The tests use the largest tail over every q ≥ q_lo(c), which is at
  q_lo(c) wherever they can reject (proof below), so they are valid for the
  true q whatever it is: the interval covers at least L for every (c, q).

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
- :class:`HoeffdingLaw`, **conservative**: αβ with a source distribution
  (β(t) differs by tuple). n_V is a Poisson binomial over the query's n_D
  tuples (and further copies) whose mean, α·c + Σ_{t ∈ Q(D)} β(t), is known
  for each c, but whose spread depends on which tuples are in I. Hoeffding
  (1956, Theorem 4): a Poisson binomial of N trials and mean μ has P(S ≥ k) ≤
  P(Bin(N, μ/N) ≥ k) for k ≥ μ + 1, and P(S ≤ k) ≤ P(Bin(N, μ/N) ≤ k) for
  k ≤ μ − 1; the tests reject only there, with N an upper bound on the
  trials (a binomial of fewer trials with the same mean is a Poisson
  binomial of N trials with some p = 0).
- :class:`SplitLaw`, **conservative**: several αβ views (Algorithm 7). The
  estimate sums two independent parts (inside and outside the union of the
  earlier views), each a :class:`KeepLaw`; each part's interval is taken at
  level 1 − (1 − L)/2 and the ends are added (Bonferroni: both cover with
  probability ≥ L).

Numerics: a tail of a sum of binomials is a sum over the smaller ones'
values (within 6 standard deviations and a margin of their means) of their
pmf times the largest one's tail; the probability left out is added to each
p-value, so truncation only widens the interval. Log-pmfs use betaln, which
stays accurate for the huge trial counts (n_D up to 2^128) of noise terms.
Batches (every cell of a marginal) are vectorised: problems with the same
parameters are solved once, and all bisections run in lockstep from a
normal-approximation start.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from privpub.core.estimate import LEVEL, check_level

#: Method names, as Estimate.interval_method reports them.
EXACT = "exact"
CONSERVATIVE_RECORDS = "conservative: records"
CONSERVATIVE_SOURCE = "conservative: source"
CONSERVATIVE_VIEWS = "conservative: views"
#: A summand's values farther than this many standard deviations (plus _MARGIN)
#: from its mean are left out of a tail sum (their probability is added back).
_WINDOW_SD = 6.0
_MARGIN = 3
#: Segments this short are convolved directly, longer ones by FFT.
_DIRECT_CONVOLUTION = 16
#: Largest count handled (int64 arithmetic with headroom).
_MAX_COUNT = 2**62


# ---- tails of sums of independent binomials -------------------------------------------
def log_binom_pmf(x: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """log P(Bin(n, p) = x), accurate for huge n (betaln, not differences of
    gammaln); −inf outside 0 ≤ x ≤ n."""
    x, n, p = np.broadcast_arrays(np.asarray(x, float), np.asarray(n, float),
                                  np.asarray(p, float))
    from scipy import special  # on use: scipy costs `import privpub` ~0.3 s

    inside = (x >= 0) & (x <= n)
    xs, ns = np.where(inside, x, 0.0), np.where(inside, n, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (-np.log1p(ns) - special.betaln(ns - xs + 1, xs + 1)
               + special.xlogy(xs, p) + special.xlog1py(ns - xs, -p))
    return np.where(inside, out, -np.inf)


def binom_ge(x: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) ≥ x) = I_p(x, n − x + 1), the regularised incomplete beta
    (accurate for huge n)."""
    x, n, p = np.broadcast_arrays(np.asarray(x, float), np.asarray(n, float),
                                  np.asarray(p, float))
    from scipy import special

    inside = (x >= 1) & (x <= n)
    with np.errstate(invalid="ignore"):
        out = special.betainc(np.where(inside, x, 1.0), np.where(inside, n - x + 1, 1.0), p)
    return np.where(inside, out, np.where(x < 1, 1.0, 0.0))


def binom_le(x: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) ≤ x) = 1 − I_p(x + 1, n − x), the complement computed as such."""
    x, n, p = np.broadcast_arrays(np.asarray(x, float), np.asarray(n, float),
                                  np.asarray(p, float))
    from scipy import special

    inside = (x >= 0) & (x < n)
    with np.errstate(invalid="ignore"):
        out = special.betaincc(np.where(inside, x + 1, 1.0), np.where(inside, n - x, 1.0), p)
    return np.where(inside, out, np.where(x < 0, 0.0, 1.0))


def _ragged_arange(lengths: np.ndarray) -> np.ndarray:
    """0..len−1 for each length, concatenated."""
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)


def _ragged_cumsum(values: np.ndarray, length: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at each problem's first element."""
    running = np.cumsum(values)
    start = np.cumsum(length) - length
    base = running[start] - values[start]
    return running - base[owner]


def _ragged_convolve(pmf1: np.ndarray, len1: np.ndarray, pmf2: np.ndarray, len2: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Each problem's two pmf segments convolved (lengths len1 + len2 − 1):
    directly when one is short, by FFT (problems grouped by padded length)
    when both are long."""
    length = len1 + len2 - 1
    out = np.zeros(int(length.sum()))
    start, start1, start2 = (np.cumsum(x) - x for x in (length, len1, len2))
    direct = np.minimum(len1, len2) <= _DIRECT_CONVOLUTION
    # Direct: every (value of segment 1, value of segment 2) pair of a problem.
    idx = np.flatnonzero(direct)
    if len(idx):
        short = len1[idx] <= len2[idx]
        reps = np.where(short, len2[idx], len1[idx])
        steps = np.where(short, len1[idx], len2[idx])
        which = np.repeat(np.arange(len(idx)), steps)  # the problem of each short value
        s_local = _ragged_arange(steps)
        s_pmf = np.where(short[which], pmf1[start1[idx][which] + s_local],
                         pmf2[start2[idx][which] + s_local])
        pair = np.repeat(np.arange(len(which)), reps[which])  # the short value of each pair
        l_local = _ragged_arange(reps[which])
        owner = which[pair]
        l_start = np.where(short, start2[idx], start1[idx])[owner]
        l_pmf = np.where(short[owner], pmf2[np.minimum(l_start + l_local, len(pmf2) - 1)],
                         pmf1[np.minimum(l_start + l_local, len(pmf1) - 1)])
        target = start[idx][owner] + s_local[pair] + l_local
        out += np.bincount(target, weights=s_pmf[pair] * l_pmf, minlength=len(out))
    # FFT: problems whose padded size is the same power of two together.
    idx = np.flatnonzero(~direct)
    size = 1 << np.ceil(np.log2(np.maximum(length[idx], 1))).astype(np.int64)
    for n_fft in np.unique(size):
        group = idx[size == n_fft]
        a, b = np.zeros((len(group), n_fft)), np.zeros((len(group), n_fft))
        for dest, src, starts, lens in ((a, pmf1, start1, len1), (b, pmf2, start2, len2)):
            rows = np.repeat(np.arange(len(group)), lens[group])
            local = _ragged_arange(lens[group])
            dest[rows, local] = src[starts[group][rows] + local]
        conv = np.fft.irfft(np.fft.rfft(a, axis=1) * np.fft.rfft(b, axis=1), n=int(n_fft), axis=1)
        rows = np.repeat(np.arange(len(group)), length[group])
        local = _ragged_arange(length[group])
        out[start[group][rows] + local] = np.maximum(conv[rows, local], 0.0)
    return out, length


def _window(n: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, last, left-out probability) of the values of Bin(n, p) summed
    over: its mean ± _WINDOW_SD standard deviations ± _MARGIN, within [0, n];
    a single value when p is 0 or 1."""
    mean, sd = n * p, np.sqrt(n * p * (1 - p))
    first = np.clip(np.floor(mean - _WINDOW_SD * sd) - _MARGIN, 0, n)
    last = np.clip(np.ceil(mean + _WINDOW_SD * sd) + _MARGIN, first, n)
    point = (p <= 0) | (p >= 1)
    first, last = np.where(point, mean, first), np.where(point, mean, last)
    out = binom_le(first - 1, n, p) + binom_ge(last + 1, n, p)
    return first, last, np.where(point | ~np.isfinite(out), 0.0, out)


def _window_pmf(first: np.ndarray, length: np.ndarray, owner: np.ndarray, n: np.ndarray,
                p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) = j) for j = first, …, first + length − 1 of each problem
    (a window within [0, n]; length 1 when p is 0 or 1): the first by betaln,
    the others by the ratio P(j)/P(j − 1) = (n − j + 1)/j · p/(1 − p)."""
    local = _ragged_arange(length)
    j = first[owner] + local
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.log(p) - np.log1p(-p)
        step = np.log((n[owner] - j + 1) / j) + odds[owner]
    step = np.where(local > 0, step, 0.0)
    return np.exp(log_binom_pmf(first, n, p)[owner] + _ragged_cumsum(step, length, owner))


def _tail_pmf(top: np.ndarray, length: np.ndarray, owner: np.ndarray, n: np.ndarray,
              p: np.ndarray) -> np.ndarray:
    """P(B = x) for x = top, top − 1, …, top − length + 1 of each problem
    (B ~ Bin(n, p); 0 outside [0, n]): anchored at the largest x within [0, n]
    by betaln, the others by P(x)/P(x + 1) = (x + 1)/(n − x) · (1 − p)/p."""
    local = _ragged_arange(length)
    x = top[owner] - local
    anchor = np.clip(top, 0, n)
    point = (p <= 0) | (p >= 1)
    inside = (x >= 0) & (x <= n[owner])
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(point, 0.0, np.log1p(-p) - np.log(p))
        step = np.log((x + 1) / (n[owner] - x)) + odds[owner]
    step = np.where(inside & (x < anchor[owner]) & ~point[owner], step, 0.0)
    log_anchor = np.where(point, 0.0, log_binom_pmf(anchor, n, p))
    pmf = np.exp(log_anchor[owner] + _ragged_cumsum(step, length, owner))
    pmf = np.where(point[owner], (x == (n * p)[owner]).astype(float), pmf)
    return np.where(inside, pmf, 0.0)


def sum_tails(k: np.ndarray, trials: np.ndarray, probs: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on P(N ≥ k) and P(N ≤ k) for N = Σ_i Bin(trials[i], probs[i]).

    ``trials`` and ``probs`` are (K, P) arrays (K summands, P problems), ``k``
    is (P,). The summand of largest variance enters by its tail, the others
    by their pmfs over a window; what the windows leave out is added to the
    upper tail (so both results are upper bounds, tight to rounding)."""
    k = np.asarray(k, float)
    trials, probs = np.asarray(trials, float), np.asarray(probs, float)
    n_problems = k.shape[0]
    if trials.shape[0] == 1:
        return binom_ge(k, trials[0], probs[0]), binom_le(k, trials[0], probs[0])
    variance = trials * probs * (1 - probs)
    order = np.argsort(variance, axis=0, kind="stable")
    trials = np.take_along_axis(trials, order, axis=0)
    probs = np.take_along_axis(probs, order, axis=0)
    problems = np.arange(n_problems)
    # The pmf of the windowed summands' sum, problem after problem (ragged).
    first, last, left_out = _window(trials[0], probs[0])
    length = (last - first + 1).astype(np.int64)
    owner = np.repeat(problems, length)
    pmf = _window_pmf(first, length, owner, trials[0], probs[0])
    for i in range(1, trials.shape[0] - 1):
        f2, l2, out2 = _window(trials[i], probs[i])
        len2 = (l2 - f2 + 1).astype(np.int64)
        pmf2 = _window_pmf(f2, len2, np.repeat(problems, len2), trials[i], probs[i])
        pmf, new_length = _ragged_convolve(pmf, length, pmf2, len2)
        first, length, left_out = first + f2, new_length, left_out + out2
        owner = np.repeat(problems, length)
    # The last summand, B, by its tail: S(x) = P(B ≥ x) at x = k − j for the
    # window's values j, from S at the largest x (one special-function call
    # per problem) plus B's pmf: S(k − j) = S(k − first) + Σ_{j' = first+1..j}
    # P(B = k − j').
    n_b, p_b = trials[-1], probs[-1]
    pmf_b = _tail_pmf(k - first, length, owner, n_b, p_b)
    start = np.cumsum(length) - length
    s_at = binom_ge(k - first, n_b, p_b)[owner] + _ragged_cumsum(pmf_b, length, owner) \
        - pmf_b[start][owner]
    s_at = np.clip(s_at, 0.0, 1.0)
    upper = np.bincount(owner, weights=pmf * s_at, minlength=n_problems)
    # P(N ≥ k + 1) ≥ Σ_j pmf(j)·S(k + 1 − j), S(k + 1 − j) = S(k − j) − P(B = k − j).
    above = np.bincount(owner, weights=pmf * np.clip(s_at - pmf_b, 0.0, 1.0),
                        minlength=n_problems)
    return np.clip(upper + left_out, 0.0, 1.0), np.clip(1.0 - above, 0.0, 1.0)


# ---- test inversion ---------------------------------------------------------------------
class CountLaw:
    """The law of n_V given the true count, for a batch of P problems (one per
    query or marginal cell), with the observed n_V: :meth:`interval` inverts
    the tests. Subclasses give :meth:`_rejects`, :meth:`_line` and :meth:`_moments`."""

    method: str = EXACT

    def __init__(self, n_view: Any, top: Any, **arrays: Any):
        shapes = [np.shape(a) for a in (n_view, top, *arrays.values())]
        shape = np.broadcast_shapes(*shapes)
        self.shape = shape
        self.k = np.broadcast_to(np.asarray(n_view, dtype=float), shape).reshape(-1)
        top = np.minimum(np.floor(np.asarray(top, dtype=float)), _MAX_COUNT)
        self.top = np.broadcast_to(np.maximum(top, 0).astype(np.int64), shape).reshape(-1)
        self.arrays = {name: np.broadcast_to(np.asarray(a, dtype=float), shape).reshape(-1)
                       for name, a in arrays.items()}

    def _rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(the upper test rejects c, the lower test rejects c) for problems ``idx``."""
        raise NotImplementedError

    def _line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(E n_V at count 0, its slope in the count): the mean is affine in c."""
        raise NotImplementedError

    def _moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(variance, third cumulant) of the law tested at count c."""
        raise NotImplementedError

    def _guesses(self, idx: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
        """Where the searches start: the counts whose Cornish–Fisher quantiles
        (continuity-corrected) meet n_V, by a few fixed-point steps. Only the
        search's speed depends on them."""
        offset, slope = self._line(idx)
        k, top = self.k[idx], self.top[idx].astype(float)
        out = []
        for sign in (1.0, -1.0):  # lo: n_V − ½ = upper quantile; hi: n_V + ½ = lower
            c = np.clip((k - offset) / slope, 0, top)
            for _ in range(3):
                var, third = self._moments(c, idx)
                sd = np.sqrt(np.maximum(var, 1e-12))
                w = z + sign * (z * z - 1) * third / (6 * sd ** 3)
                c = np.clip((k - sign * 0.5 - offset - sign * sd * w) / slope, 0, top)
            out.append(c)
        return out[0], out[1]

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): int64 arrays of the problems' shape, lo ≤ c ≤ hi with
        probability ≥ ``level`` for every true count c (module docstring)."""
        tail = (1 - check_level(level)) / 2
        columns = np.column_stack([self.k, self.top.astype(float), *self.arrays.values()])
        # Problems with the same parameters are solved once (a hash groupby).
        inverse = np.arange(len(columns)) if len(columns) < 2 else pd.DataFrame(
            columns).groupby(list(range(columns.shape[1])), sort=False,
                             dropna=False).ngroup().to_numpy()
        first = np.empty(int(inverse.max()) + 1 if len(inverse) else 0, dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse))[::-1]
        lo, hi = self._take(columns[first])._solve(tail)
        return lo[inverse].reshape(self.shape), hi[inverse].reshape(self.shape)

    def _take(self, rows: np.ndarray) -> CountLaw:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.shape = (len(rows),)
        out.k, out.top = rows[:, 0], rows[:, 1].astype(np.int64)
        out.arrays = {name: rows[:, 2 + i] for i, name in enumerate(self.arrays)}
        return out

    def _solve(self, tail: float) -> tuple[np.ndarray, np.ndarray]:
        every = np.arange(len(self.k))
        guess_lo, guess_hi = self._guesses(every, -NormalDist().inv_cdf(tail))
        step = np.maximum(np.ceil(1 / self._line(every)[1]), 1)

        def accepts_up(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
            return ~self._rejects(c, idx, tail)[0]

        def rejects_low(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
            return self._rejects(c, idx, tail)[1]

        lo = _first_true(accepts_up, np.ceil(guess_lo), step, self.top)
        hi = _first_true(rejects_low, np.floor(guess_hi) + 1, step, self.top) - 1
        lo = np.minimum(lo, self.top)
        hi = np.clip(hi, lo, self.top)
        return lo, hi


def _first_true(pred: Callable[[np.ndarray, np.ndarray], np.ndarray], guess: np.ndarray,
                step: np.ndarray, top: np.ndarray) -> np.ndarray:
    """For each problem, the least c in [0, top] with pred(c) true (pred monotone:
    false, …, false, true, …), or top + 1 when there is none: gallop from the
    guess in steps doubling from ``step``, then bisect."""
    start = np.clip(np.round(guess), 0, top).astype(np.int64)
    every = np.arange(len(top))
    ok = pred(start, every)
    left = np.where(ok, -1, start)       # pred false here (−1: nothing below)
    right = np.where(ok, start, top + 1)  # pred true here (top + 1: nothing above)
    down = ok.copy()
    step = np.asarray(step).astype(np.int64).copy()
    active = np.ones(len(top), dtype=bool)
    while True:
        probe = np.where(down, right - step, left + step)
        active &= (probe >= 0) & (probe <= top) & (right - left > 1)
        idx = np.flatnonzero(active)
        if not len(idx):
            break
        got = pred(probe[idx], idx)
        right[idx] = np.where(got, probe[idx], right[idx])
        left[idx] = np.where(got, left[idx], probe[idx])
        active[idx[np.where(down[idx], ~got, got)]] = False
        step[idx] *= 2
    while True:
        idx = np.flatnonzero(right - left > 1)
        if not len(idx):
            return right
        mid = (left[idx] + right[idx]) // 2
        got = pred(mid, idx)
        right[idx] = np.where(got, mid, right[idx])
        left[idx] = np.where(got, left[idx], mid)


class KeepLaw(CountLaw):
    """n_V ~ Bin(q, keep) + Bin(c − q, keep − background) + Bin(total − q,
    background), q the distinct tuples among the c records: q = c when
    ``extra`` = 0 (exact), else any q ≥ max(min(c, 1), c − extra)
    (conservative). See the module docstring for the laws and the proof."""

    def __init__(self, n_view: Any, keep: Any, background: Any, total: Any, top: Any,
                 extra: int = 0):
        super().__init__(n_view, top, keep=keep, background=background, total=total)
        self.extra = int(extra)
        self.method = EXACT if self.extra == 0 else CONSERVATIVE_RECORDS

    def _rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                 ) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        total, k = self.arrays["total"][idx], self.k[idx]
        c = c.astype(float)
        if not self.extra:
            up, low = sum_tails(k, np.stack([c, total - c]), np.stack([keep, bg]))
            return up <= tail, low <= tail
        q = np.maximum(np.minimum(c, 1.0), c - self.extra)
        up, low = sum_tails(k, np.stack([q, c - q, total - q]),
                            np.stack([keep, keep - bg, bg]))
        # The largest tail over the splits is at q (the least) only this far
        # from the mean; nearer, the test does not reject (module docstring).
        mean_x = (keep - bg) * c + bg * total - keep
        slack = 1e-9 * np.maximum(np.abs(mean_x), 1.0)
        return ((up <= tail) & (k >= np.ceil(mean_x + slack) + 2),
                (low <= tail) & (k <= np.floor(mean_x - slack)))

    def _line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bg = self.arrays["background"][idx]
        return bg * self.arrays["total"][idx], self.arrays["keep"][idx] - bg

    def _moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        q = np.maximum(np.minimum(c, 1.0), c - self.extra) if self.extra else c
        var = third = 0.0
        for n, p in ((q, keep), (c - q, keep - bg), (self.arrays["total"][idx] - q, bg)):
            n = np.maximum(n, 0.0)
            var, third = var + n * p * (1 - p), third + n * p * (1 - p) * (1 - 2 * p)
        return var, third


class HoeffdingLaw(CountLaw):
    """n_V a Poisson binomial over at most ``trials`` trials with mean
    slope·c + noise: tested against Bin(trials, mean/trials), rejecting only
    beyond mean ± 1 (Hoeffding 1956; module docstring). Conservative."""

    method = CONSERVATIVE_SOURCE

    def __init__(self, n_view: Any, slope: float, noise: Any, trials: Any, top: Any):
        super().__init__(n_view, top, noise=noise, trials=trials)
        self.slope = float(slope)

    def _rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                 ) -> tuple[np.ndarray, np.ndarray]:
        k, trials = self.k[idx], self.arrays["trials"][idx]
        mean = self.slope * c + self.arrays["noise"][idx]
        p = np.clip(mean / np.maximum(trials, 1.0), 0.0, 1.0)
        up, low = sum_tails(k, trials[None, :], p[None, :])
        slack = 1e-9 * np.maximum(mean, 1.0)
        return (up <= tail) & (k >= mean + 1 + slack), (low <= tail) & (k <= mean - 1 - slack)

    def _line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays["noise"][idx], np.full(len(idx), self.slope)

    def _moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        level = check_level(level)
        a, b = self.parts
        half = 1 - (1 - level) / 2
        lo_a, hi_a = a.interval(half)
        lo_b, hi_b = b.interval(half)
        # A part that cannot hold records (top 0) takes none of the error.
        if np.any(a.top == 0) or np.any(b.top == 0):
            full_a, full_b = a.interval(level), b.interval(level)
            alone_b, alone_a = (a.top == 0).reshape(a.shape), (b.top == 0).reshape(b.shape)
            lo_b, hi_b = np.where(alone_b, full_b[0], lo_b), np.where(alone_b, full_b[1], hi_b)
            lo_a, hi_a = np.where(alone_a, full_a[0], lo_a), np.where(alone_a, full_a[1], hi_a)
        top = np.minimum(self.top, _MAX_COUNT).astype(np.int64)
        return np.minimum(lo_a + lo_b, top), np.minimum(hi_a + hi_b, top)


def count_top(n: int | None, total: Any, extra: int = 0) -> Any:
    """The largest count a query whose Q(D) holds ``total`` tuples can have:
    total + extra (records beyond the first copies, which need a first copy:
    0 when total is 0), and at most n (when known)."""
    total = np.asarray(total, dtype=float)
    bound = np.where(total > 0, total + extra, 0.0)
    return bound if n is None else np.minimum(bound, float(n))
