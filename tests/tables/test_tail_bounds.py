"""The binomial tail sums behind every exact interval are upper bounds at
census scale: at n_D = 10^8 (the default calibration's β, a count's own
Bin(c, α + β)) each computed P(N ≥ k) and P(N ≤ k) is at least the tail
summed to 40 digits, and within a stated slack above it. Before the pmf
anchor came from SciPy's binomial pmf, the betaln form lost ~1e-7 relative
to cancellation and fell below the exact tail, which moves an interval's end
by one."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest

from privpub.tables.confidence import sum_tails

mpmath.mp.dps = 40
ALPHA, BETA = 0.49722, 0.0018523
N_D = 10**8
#: How far a computed tail may sit above the exact one: the window's left-out
#: mass (≈ 2e-9, added to the upper tail) and the raise over rounding.
SLACK_ABSOLUTE, SLACK_RELATIVE = 1e-8, 1e-9


def pmf_run(n: int, p: float, lo: int, hi: int) -> tuple[int, list]:
    """(lo, [P(Bin(n, p) = y) for y = lo … hi]) to 40 digits, within [0, n]."""
    p, lo, hi = mpmath.mpf(p), max(lo, 0), min(hi, n)
    current = mpmath.exp(mpmath.loggamma(n + 1) - mpmath.loggamma(lo + 1)
                         - mpmath.loggamma(n - lo + 1) + lo * mpmath.log(p)
                         + (n - lo) * mpmath.log1p(-p))
    run = [current]
    for y in range(lo + 1, hi + 1):
        current = current * (n - y + 1) / y * p / (1 - p)
        run.append(current)
    return lo, run


@functools.cache
def convolved(summands: tuple[tuple[int, float], ...], sds: float = 12) -> tuple[int, list]:
    """The pmf of a sum of binomials over each one's mean ± ``sds`` sd (what is
    left out is below 1e-30, far under the slack tested)."""
    lo, pmf = 0, [mpmath.mpf(1)]
    for n, p in summands:
        mean, sd = n * p, (n * p * (1 - p)) ** 0.5
        first, run = pmf_run(n, p, int(mean - sds * sd) - 2, int(mean + sds * sd) + 2)
        out = [mpmath.mpf(0)] * (len(pmf) + len(run) - 1)
        for i, a in enumerate(pmf):
            for j, b in enumerate(run):
                out[i + j] += a * b
        lo, pmf = lo + first, out
    return lo, pmf


def exact_tails(k: int, windowed: list[tuple[int, float]], last: tuple[int, float]):
    """(P(N ≥ k), P(N ≤ k)) to 40 digits: the small summands convolved, the
    largest by its tail summed over its mean ± 12 sd."""
    lo1, first = convolved(tuple(windowed)) if windowed else (0, [mpmath.mpf(1)])
    lo2, run = convolved((last,))
    suffix = [mpmath.mpf(0)] * (len(run) + 1)
    for i in range(len(run) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + run[i]

    def at_least(y: int):
        i = y - lo2
        return mpmath.mpf(1) if i <= 0 else suffix[i] if i < len(run) else mpmath.mpf(0)

    ge = mpmath.fsum(a * at_least(k - lo1 - j) for j, a in enumerate(first))
    gt = mpmath.fsum(a * at_least(k + 1 - lo1 - j) for j, a in enumerate(first))
    return ge, 1 - gt


def computed(k: int, summands: list[tuple[int, float]]) -> tuple[float, float]:
    trials = np.array([[n] for n, _ in summands], float)
    probs = np.array([[p] for _, p in summands], float)
    up, low = sum_tails(np.array([k], float), trials, probs)
    return float(up[0]), float(low[0])


def check(k: int, summands: list[tuple[int, float]]) -> None:
    *windowed, last = sorted(summands, key=lambda s: s[0] * s[1] * (1 - s[1]))
    exact = exact_tails(k, windowed, last)
    for got, want in zip(computed(k, summands), exact, strict=True):
        want = float(want)
        assert got >= want, (k, summands, got, want, got / want - 1)
        assert got <= want * (1 + SLACK_RELATIVE) + SLACK_ABSOLUTE, (k, got, want)


MEAN = N_D * BETA


@pytest.mark.parametrize("offset", [-2000, -700, 0, 400, 1200, 2500])
def test_one_binomial_tail_is_an_upper_bound_at_census_scale(offset):
    """Q(V) of a query no tuple of D satisfies: Bin(n_D, β)."""
    check(int(MEAN) + offset, [(N_D, BETA)])


@pytest.mark.parametrize("offset", [-1200, -300, 0, 300, 900, 2400])
def test_a_count_and_the_background_is_an_upper_bound_at_census_scale(offset):
    """αβ (set) at count c = 3,000: Bin(c, α + β) + Bin(n_D − c, β)."""
    c = 3_000
    check(int(MEAN + c * ALPHA) + offset, [(c, ALPHA + BETA), (N_D - c, BETA)])


@pytest.mark.parametrize("offset", [-600, 0, 700])
def test_three_summands_are_an_upper_bound_at_census_scale(offset):
    """The records law's three summands (q, c − q, n_D − q)."""
    q, c = 400, 1_000
    summands = [(q, ALPHA + BETA), (c - q, 0.3), (N_D - q, BETA)]
    check(int(MEAN + q * ALPHA + (c - q) * 0.3) + offset, summands)
