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
interval and a bisection finds its ends). When the tests reject every count
(n_V in the far tail of the law at every c in [0, top], which happens to some
views of a small count: about 1% of αβ views of a count of 13 whose noise
dominates), the accepted set is empty: the interval is then all of [0, top],
which claims nothing and keeps the coverage (any superset of the accepted set
does), and :meth:`CountLaw.inconsistent` says so, so that the estimate carries
a note ("inconsistent at this level"). It is never reported as a point no test
accepted (before, [0, 0]).

A law is a :class:`CountLaw`: it says when each test rejects
(:meth:`CountLaw.rejects`), where the mean lies (:meth:`CountLaw.line`: it is
affine in c) and the tested law's spread (:meth:`CountLaw.moments`, only
where the searches start). :class:`KeepLaw` is the law of a count to which
each of the c things the query counts adds 1 with probability ``keep`` and
each of ``total`` − c others with probability ``background``, independently:
n_V ~ Bin(c, keep) + Bin(total − c, background), **exact**. Each family
builds its laws from these in its own estimator module (its parameters, its
conservative laws and their proofs) and hands them over through
``interval_law`` (:class:`~privpub.core.capabilities.CountEstimator`); what
the floor reads of a law is :class:`~privpub.core.capabilities.CountIntervalLaw`.

Numerics: a tail of a sum of binomials is a sum over the smaller ones'
values (within 6 standard deviations and a margin of their means) of their
pmf times the largest one's tail; the probability left out is added to each
p-value, so truncation only widens the interval. Log-pmfs use betaln, which
stays accurate for the huge trial counts (n_D up to 2^128) of noise terms.
The special functions (SciPy's) give each problem's window, anchors and one
tail; the windows' pmfs, their convolution and the sum against the largest
summand's tail run in Rust (``_core.tails``, rust/src/tails.rs: the pmfs by
ratio products from their anchors, the convolution direct, each problem on
its own), and the results are raised by a relative margin over rounding, so
both tails are upper bounds. Batches (every cell of a marginal) are
vectorised: problems with the same parameters are solved once, and all
bisections run in lockstep from a normal-approximation start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

import privpub._core as _core
from privpub.core.estimate import LEVEL, check_level

#: The method name of an exact law, as Estimate.interval_method reports it.
EXACT = "exact"
#: A summand's values farther than this many standard deviations (plus _MARGIN)
#: from its mean are left out of a tail sum (their probability is added back).
_WINDOW_SD = 6.0
_MARGIN = 3
#: Largest count handled (int64 arithmetic with headroom).
MAX_COUNT = 2**62
#: The smallest normal float: a pmf below it is taken from its log terms.
_NORMAL = np.finfo(float).tiny
#: A relative bound on the rounding error of a computed tail: SciPy's (Boost's)
#: pmf and incomplete beta and the window's ratio recurrence were measured
#: within 1e-12 relative of 40-digit sums at n = 10^8; ten times that is kept.
_ROUNDING = 1e-11


# ---- tails of sums of independent binomials -------------------------------------------
def log_binom_pmf(x: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """log P(Bin(n, p) = x), accurate for huge n; −inf outside 0 ≤ x ≤ n.

    SciPy's ``binom.pmf`` (Boost's, by the incomplete beta's derivative) is
    within ~1e-13 relative of a 40-digit reference at n = 10^8, where
    betaln and the x·log p terms cancel (magnitudes ~10^9, so an error of
    ~1e-7 relative). Below the normal floats it underflows, and the log is
    taken from those terms instead (tails that small add nothing a count's
    interval can see)."""
    x, n, p = np.broadcast_arrays(np.asarray(x, float), np.asarray(n, float),
                                  np.asarray(p, float))
    from scipy import special, stats  # on use: scipy costs `import privpub` ~0.3 s

    inside = (x >= 0) & (x <= n)
    xs, ns = np.where(inside, x, 0.0), np.where(inside, n, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmf = stats.binom.pmf(xs, ns, p)
        terms = (-np.log1p(ns) - special.betaln(ns - xs + 1, xs + 1)
                 + special.xlogy(xs, p) + special.xlog1py(ns - xs, -p))
        out = np.where(pmf >= _NORMAL, np.log(pmf), terms)
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


def _window(n: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, last, left-out probability) of the values of Bin(n, p) summed
    over: its mean ± _WINDOW_SD standard deviations ± _MARGIN, within [0, n];
    a single value when p is 0 or 1."""
    mean, sd = n * p, np.sqrt(n * p * (1 - p))
    first = np.clip(np.floor(mean - _WINDOW_SD * sd) - _MARGIN, 0, n)
    last = np.clip(np.ceil(mean + _WINDOW_SD * sd) + _MARGIN, first, n)
    point = (p <= 0) | (p >= 1)
    first, last = np.where(point, mean, first), np.where(point, mean, last)
    # Only windows short of an end leave anything out there (the special
    # functions are most of a probe's cost; a window over all of [0, n] is
    # common). Below the window: P(Bin(n, p) ≤ first − 1) as the failures'
    # upper tail P(Bin(n, 1 − p) ≥ n − first + 1), one incomplete beta as
    # above it (SciPy's complemented one takes ~8x as long; this mass, ~1e-9,
    # only widens, so 1 − p's rounding is of no account).
    out = np.zeros(np.shape(first))
    for short, tail in ((~point & (first > 0),
                         lambda i: binom_ge(n[i] - first[i] + 1, n[i], 1 - p[i])),
                        (~point & (last < n), lambda i: binom_ge(last[i] + 1, n[i], p[i]))):
        out[short] += tail(short)
    return first, last, np.where(np.isfinite(out), out, 0.0)


def sum_tails(k: np.ndarray, trials: np.ndarray, probs: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on P(N ≥ k) and P(N ≤ k) for N = Σ_i Bin(trials[i], probs[i]).

    ``trials`` and ``probs`` are (K, P) arrays (K summands, P problems), ``k``
    is (P,). The summand of largest variance enters by its tail, the others
    by their pmfs over a window; what the windows leave out is added to the
    upper tail, and both results are raised by the relative _ROUNDING over
    what rounding can take off them, so both are upper bounds (checked
    against 40-digit sums at n = 10^8 in tests/tables/test_tail_bounds.py)."""
    k = np.asarray(k, float)
    trials, probs = np.asarray(trials, float), np.asarray(probs, float)
    if trials.shape[0] == 1:
        return _raised(binom_ge(k, trials[0], probs[0])), _raised(binom_le(k, trials[0], probs[0]))
    variance = trials * probs * (1 - probs)
    order = np.argsort(variance, axis=0, kind="stable")
    trials = np.take_along_axis(trials, order, axis=0)
    probs = np.take_along_axis(probs, order, axis=0)
    # Every summand but the last by its window (first value, length, log-pmf
    # there); the windows' pmfs, their convolution and the last summand's tail
    # at k − j over the convolution's values j are summed in Rust (tails.rs).
    first, last, left_out = _window(trials[:-1], probs[:-1])
    log_first = log_binom_pmf(first, trials[:-1], probs[:-1])
    length = (last - first + 1).astype(np.int64)
    # The last summand, B, by its tail: S(x) = P(B ≥ x) at x = k − j for the
    # convolution's values j, from S at the largest x (one special-function
    # call per problem) and B's pmf anchored there.
    top = k - first.sum(axis=0)
    n_b, p_b = trials[-1], probs[-1]
    point = (p_b <= 0) | (p_b >= 1)
    log_anchor = np.where(point, 0.0, log_binom_pmf(np.clip(top, 0, n_b), n_b, p_b))
    upper, above = _core.tails.window_tails(
        first, length, log_first, trials[:-1].copy(), probs[:-1].copy(), top, n_b, p_b,
        log_anchor, binom_ge(top, n_b, p_b))
    # P(N ≥ k + 1) ≥ Σ_j pmf(j)·S(k + 1 − j): ``above``, so 1 − above bounds P(N ≤ k).
    return _raised(upper + left_out.sum(axis=0)), _raised(1.0 - above * (1 - _ROUNDING))


def _raised(tail: np.ndarray) -> np.ndarray:
    """A computed tail raised over its rounding error, within [0, 1]."""
    return np.clip(tail * (1 + _ROUNDING), 0.0, 1.0)


# ---- test inversion ---------------------------------------------------------------------
class CountLaw:
    """The law of n_V given the true count, for a batch of P problems (one per
    query or marginal cell), with the observed n_V: :meth:`interval` inverts
    the tests. Subclasses give :meth:`rejects`, :meth:`line` and :meth:`moments`
    (a family's law, in its own package)."""

    method: str = EXACT

    def __init__(self, n_view: Any, top: Any, **arrays: Any):
        shapes = [np.shape(a) for a in (n_view, top, *arrays.values())]
        shape = np.broadcast_shapes(*shapes)
        self.shape = shape
        self.k = np.broadcast_to(np.asarray(n_view, dtype=float), shape).reshape(-1)
        top = np.minimum(np.floor(np.asarray(top, dtype=float)), MAX_COUNT)
        self.top = np.broadcast_to(np.maximum(top, 0).astype(np.int64), shape).reshape(-1)
        self.arrays = {name: np.broadcast_to(np.asarray(a, dtype=float), shape).reshape(-1)
                       for name, a in arrays.items()}

    def rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                ) -> tuple[np.ndarray, np.ndarray]:
        """(the upper test rejects c, the lower test rejects c) for problems ``idx``."""
        raise NotImplementedError

    def line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(E n_V at count 0, its slope in the count): the mean is affine in c."""
        raise NotImplementedError

    def moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(variance, third cumulant) of the law tested at count c."""
        raise NotImplementedError

    def _guesses(self, idx: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
        """Where the searches start: the counts whose Cornish–Fisher quantiles
        (continuity-corrected) meet n_V, by a few fixed-point steps. Only the
        search's speed depends on them."""
        offset, slope = self.line(idx)
        k, top = self.k[idx], self.top[idx].astype(float)
        out = []
        for sign in (1.0, -1.0):  # lo: n_V − ½ = upper quantile; hi: n_V + ½ = lower
            c = np.clip((k - offset) / slope, 0, top)
            for _ in range(3):
                var, third = self.moments(c, idx)
                sd = np.sqrt(np.maximum(var, 1e-12))
                w = z + sign * (z * z - 1) * third / (6 * sd ** 3)
                c = np.clip((k - sign * 0.5 - offset - sign * sd * w) / slope, 0, top)
            out.append(c)
        return out[0], out[1]

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): int64 arrays of the problems' shape, lo ≤ c ≤ hi with
        probability ≥ ``level`` for every true count c (module docstring)."""
        lo, hi, _ = self._ends(check_level(level))
        return lo, hi

    def inconsistent(self, level: float = LEVEL) -> np.ndarray:
        """Where the tests reject every count in [0, top] at ``level`` (bool, the
        problems' shape): n_V lies in the far tail of the law at every count.
        The accepted set is empty, and the interval is then all of [0, top]: it
        claims nothing (any superset of the accepted set keeps the coverage),
        rather than a point no test accepted (module docstring)."""
        return self._ends(check_level(level))[2]

    def _ends(self, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, inconsistent) at ``level``, computed once per level."""
        if level not in self._solved:
            self._solved[level] = self._invert(level)
        return self._solved[level]

    @functools.cached_property
    def _solved(self) -> dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_ends` by level (a subset from :meth:`_take` starts empty)."""
        return {}

    def _invert(self, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tail = (1 - level) / 2
        # Problems with the same parameters are solved once.
        first, inverse = _distinct([self.k, self.top, *self.arrays.values()])
        lo, hi, empty = self._take(first)._solve(tail)
        return tuple(x[inverse].reshape(self.shape) for x in (lo, hi, empty))

    @classmethod
    def stacked(cls, laws: Sequence[Any]) -> CountLaw | None:
        """One law of many one-problem laws of one type and the same fixed state
        (the estimates of a batch, made one by one), so their intervals are
        solved together (:class:`~privpub.core.estimate.StackableLaw`); None
        when they differ in type or fixed state, or one holds several problems."""
        first = laws[0]
        fixed = _fixed_state(first)
        for law in laws:
            if type(law) is not type(first) or law.k.shape != (1,):
                return None
            try:
                if _fixed_state(law) != fixed:
                    return None
            except ValueError:  # array-valued state: not compared here
                return None
        out = object.__new__(type(first))
        out.__dict__.update(fixed)
        out.shape = (len(laws),)
        out.k = np.concatenate([law.k for law in laws])
        out.top = np.concatenate([law.top for law in laws])
        out.arrays = {name: np.concatenate([law.arrays[name] for law in laws])
                      for name in first.arrays}
        return out

    def _take(self, rows: np.ndarray) -> CountLaw:
        """The problems at indices ``rows``, unsolved."""
        out = object.__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_solved"})
        out.shape = (len(rows),)
        out.k, out.top = self.k[rows], self.top[rows]
        out.arrays = {name: a[rows] for name, a in self.arrays.items()}
        return out

    def _solve(self, tail: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        every = np.arange(len(self.k))
        guess_lo, guess_hi = self._guesses(every, -NormalDist().inv_cdf(tail))
        step = np.maximum(np.ceil(1 / self.line(every)[1]), 1)

        def accepts_up(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
            return ~self.rejects(c, idx, tail)[0]

        def rejects_low(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
            return self.rejects(c, idx, tail)[1]

        lo = _first_true(accepts_up, np.ceil(guess_lo), step, self.top)
        hi = _first_true(rejects_low, np.floor(guess_hi) + 1, step, self.top) - 1
        # The accepted counts are [lo, hi]; empty when lo > hi (no count passes
        # both tests): then the whole range, never a point no test accepted.
        empty = lo > hi
        lo = np.where(empty, 0, np.minimum(lo, self.top))
        hi = np.where(empty, self.top, np.clip(hi, lo, self.top))
        return lo, hi, empty


def _distinct(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(each distinct row's first index, each row's distinct row) of the rows
    across ``columns`` (1-d, one length): every column factorised by hash,
    the codes combined into one integer key (compressed when the product of
    the columns' distinct counts nears 2^62), the key factorised. NaN is a
    value like any other."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    size = 1
    for column in columns:
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        if size * len(uniques) >= 2**62:
            key, seen = pd.factorize(key)
            size = len(seen)
        key, size = key * len(uniques) + codes, size * len(uniques)
    inverse, seen = pd.factorize(key)
    first = np.empty(len(seen), dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]
    return first, inverse


def _fixed_state(law: CountLaw) -> dict[str, Any]:
    """What a law holds besides its problems (k, top, arrays) and its solutions."""
    return {k: v for k, v in law.__dict__.items()
            if k not in ("shape", "k", "top", "arrays", "_solved")}


def _first_true(pred: Callable[[np.ndarray, np.ndarray], np.ndarray], guess: np.ndarray,
                step: np.ndarray, top: np.ndarray) -> np.ndarray:
    """For each problem, the least c in [0, top] with pred(c) true (pred monotone:
    false, …, false, true, …), or top + 1 when there is none: gallop from the
    guess, first by 1 (the guesses are mostly the answer, which two probes then
    settle), then in steps doubling from ``step``; then bisect."""
    start = np.clip(np.round(guess), 0, top).astype(np.int64)
    every = np.arange(len(top))
    ok = pred(start, every)
    left = np.where(ok, -1, start)       # pred false here (−1: nothing below)
    right = np.where(ok, start, top + 1)  # pred true here (top + 1: nothing above)
    down = ok.copy()
    base = np.broadcast_to(np.asarray(step).astype(np.int64), top.shape)
    step = np.ones(len(top), dtype=np.int64)
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
        step[idx] = np.maximum(step[idx] * 2, base[idx])
    while True:
        idx = np.flatnonzero(right - left > 1)
        if not len(idx):
            return right
        mid = (left[idx] + right[idx]) // 2
        got = pred(mid, idx)
        right[idx] = np.where(got, mid, right[idx])
        left[idx] = np.where(got, left[idx], mid)


class KeepLaw(CountLaw):
    """n_V ~ Bin(c, keep) + Bin(total − c, background), exact (module docstring)."""

    method = EXACT

    def __init__(self, n_view: Any, keep: Any, background: Any, total: Any, top: Any):
        super().__init__(n_view, top, keep=keep, background=background, total=total)

    def rejects(self, c: np.ndarray, idx: np.ndarray, tail: float
                ) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        total, k = self.arrays["total"][idx], self.k[idx]
        c = c.astype(float)
        up, low = sum_tails(k, np.stack([c, total - c]), np.stack([keep, bg]))
        return up <= tail, low <= tail

    def line(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bg = self.arrays["background"][idx]
        return bg * self.arrays["total"][idx], self.arrays["keep"][idx] - bg

    def moments(self, c: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep, bg = self.arrays["keep"][idx], self.arrays["background"][idx]
        return binomial_moments(((c, keep), (self.arrays["total"][idx] - c, bg)))


def binomial_moments(summands: Iterable[tuple[Any, Any]]) -> tuple[Any, Any]:
    """(variance, third cumulant) of a sum of independent Bin(n, p), one per
    (n, p) of ``summands`` (a negative n counts as 0)."""
    var = third = 0.0
    for n, p in summands:
        n = np.maximum(n, 0.0)
        var, third = var + n * p * (1 - p), third + n * p * (1 - p) * (1 - 2 * p)
    return var, third
