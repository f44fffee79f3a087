"""Confidence intervals for sums and averages estimated from a randomised view.

A sum's view statistic S_V = Σ_{t ∈ V} f(t)·[t ∈ Q] is, for the table
mechanisms here, a sum of independent terms f(t)·X (X a Bernoulli indicator:
a tuple or record kept, or a noise tuple inserted), with mean affine in the
true sum s = Σ_{Q(I)} f: E S_V = intercept + slope·s. Unlike a count, its law
given s is not fixed: it depends on *which* tuples hold the sum (their values
enter the spread), so no test of "the sum is s" is exact. The interval here is
**conservative**, by Bernstein's inequality: for independent terms within b of
their means and total variance at most V,

    P(S_V − E S_V ≥ x) ≤ exp(−x² / (2(V + b·x/3))),

and likewise below. The test of s rejects when |S_V − intercept − slope·s|
≥ x(s) = b·u/3 + √((b·u/3)² + 2·u·V(s)), u = ln(2/(1 − L)), each side with
probability ≤ (1 − L)/2 whatever the tuples are, so the accepted sums cover
the true one with probability ≥ L (the argument of
:mod:`privpub.tables.confidence`, with Bernstein's tail in place of the exact
one). ``V(s)`` is an upper bound on the variance over every instance whose
sum is s, which the family states as ``base + unit·W(s)``: ``base`` the
spread of the noise (known: it depends on the domain only), ``unit`` the
largest variance a unit of Σ f² over the query's records adds, and W(s) a
bound on that Σ f²: M·|s| when f has one sign over the query's values (M =
max |f|: Σ f² ≤ M·Σ |f| = M·|s|), and ``cap`` (a bound from the counts the
release allows) otherwise. On the sums' range, |S_V − mean| is convex and x(s)
concave (V affine in |s|, which is linear there), so the accepted sums form an
interval, found by bisection from the estimate.

An average is the ratio of a sum and a count (:class:`RatioLaw`): each is
covered at level 1 − (1 − L)/2 and the ratio's interval is the range of
sum/count over the rectangle (Bonferroni: both cover with probability ≥ L),
intersected with the values' range; where the count's interval reaches 0 the
average is bounded only by the values' range. Conservative.

When every sum is rejected (the view in the far tail for all of them), the
interval is the whole range and :meth:`BernsteinLaw.inconsistent` says so, as
for counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privpub.core.estimate import IntervalLaw, check_level
from privpub.core.ranges import inconsistent

#: Interval methods, as Estimate.interval_method reports them.
BERNSTEIN = "conservative: Bernstein"
RATIO = "conservative: ratio (Bonferroni)"
#: Bisection steps for each end (the range halves each step; 2^-100 of any range).
_STEPS = 100


@dataclass
class BernsteinLaw:
    """The conservative law of a sum's view statistic (module docstring):
    ``observed`` = S_V, E S_V = ``intercept`` + ``slope``·s, variance at most
    ``base`` + ``linear``·s + ``unit``·W(s) with W(s) = min(``bound``·|s|,
    ``cap``) when ``one_signed`` else ``cap``; every term within ``spread`` of
    its mean (``bound``, max |f|, when not given); s in [``low``, ``high``]."""

    observed: float
    intercept: float
    slope: float
    base: float
    unit: float
    bound: float
    cap: float
    one_signed: bool
    low: float
    high: float
    linear: float = 0.0
    spread: float | None = None
    method: str = BERNSTEIN

    def radius(self, s: float, level: float) -> float:
        """x(s): the deviation each one-sided test rejects from, at ``level``."""
        u = math.log(2 / (1 - level))
        squares = min(self.bound * abs(s), self.cap) if self.one_signed else self.cap
        variance = max(self.base + self.linear * s + max(self.unit, 0.0) * squares, 0.0)
        third = (self.bound if self.spread is None else self.spread) * u / 3
        return third + math.sqrt(third * third + 2 * u * variance)

    def accepts(self, s: float, level: float) -> bool:
        return abs(self.observed - self.intercept - self.slope * s) <= self.radius(s, level)

    def _solve(self, level: float) -> tuple[float, float, bool]:
        centre = min(max((self.observed - self.intercept) / self.slope, self.low), self.high)
        if not self.accepts(centre, level):  # the nearest sum rejected: all are (convexity)
            return self.low, self.high, True
        return self._end(centre, self.low, level), self._end(centre, self.high, level), False

    def _end(self, inside: float, outside: float, level: float) -> float:
        """The end of the accepted interval between ``inside`` (accepted) and
        ``outside``: ``outside`` when it is accepted, else the bisection's
        rejected point (a superset of the accepted sums: conservative)."""
        if self.accepts(outside, level):
            return outside
        for _ in range(_STEPS):
            middle = (inside + outside) / 2
            if middle in (inside, outside):
                break
            if self.accepts(middle, level):
                inside = middle
            else:
                outside = middle
        return outside

    def interval(self, level: float) -> tuple[float, float]:
        lo, hi, _ = self._solve(check_level(level))
        return lo, hi

    def inconsistent(self, level: float) -> bool:
        return self._solve(check_level(level))[2]


@dataclass
class PartsLaw:
    """A sum of independent parts' sums: each part's interval at level
    1 − (1 − L)/2, the ends added (Bonferroni: all cover with probability ≥ L
    for two parts), within [``low``, ``high``]."""

    parts: tuple[BernsteinLaw, BernsteinLaw]
    low: float
    high: float
    method: str = BERNSTEIN + ", parts (Bonferroni)"

    def interval(self, level: float) -> tuple[float, float]:
        half = 1 - (1 - check_level(level)) / 2
        ends = [part.interval(half) for part in self.parts]
        lo, hi = sum(e[0] for e in ends), sum(e[1] for e in ends)
        return min(max(lo, self.low), self.high), max(min(hi, self.high), self.low)

    def inconsistent(self, level: float) -> bool:
        half = 1 - (1 - check_level(level)) / 2
        return any(part.inconsistent(half) for part in self.parts)


@dataclass
class RatioLaw:
    """An average's law: a sum's law and a count's law, each at 1 − (1 − L)/2,
    their ratio's range over the rectangle, within [``low``, ``high``] (the
    values' range; module docstring)."""

    total: IntervalLaw
    count: IntervalLaw
    low: float
    high: float
    method: str = RATIO

    def interval(self, level: float) -> tuple[float, float]:
        half = 1 - (1 - check_level(level)) / 2
        s_lo, s_hi = (float(np.asarray(e).reshape(-1)[0]) for e in self.total.interval(half))
        c_lo, c_hi = (float(np.asarray(e).reshape(-1)[0]) for e in self.count.interval(half))
        if c_lo <= 0:  # no rows is consistent: the average is any value
            return self.low, self.high
        ratios = [s_lo / c_lo, s_lo / c_hi, s_hi / c_lo, s_hi / c_hi]
        return (min(max(min(ratios), self.low), self.high),
                max(min(max(ratios), self.high), self.low))

    def inconsistent(self, level: float) -> bool:
        half = 1 - (1 - check_level(level)) / 2
        return bool(inconsistent(self.total, half) or inconsistent(self.count, half))
