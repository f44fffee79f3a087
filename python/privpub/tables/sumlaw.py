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

An average a* = s/N (s the sum, N the count of rows with a value) is the
one a with Σ_{Q(I)} h_a = 0 for h_a = f − a·g (g = 1 where the value is not
missing), so it is tested as a sum (:class:`AverageLaw`, Fieller's idea with
Bernstein's tail): D(a) = S_V(h_a) − intercept(h_a) = A − a·B (linear in a,
as every family's view statistic and intercept are linear in the weights) has
mean 0 at a*, terms within spread(a) and variance at most base(a) +
unit·W(a*), W(a) = Σ_{records in Q(I)} h_a². W is not known; for the
values' midpoint c (fixed by the domain, not the data), (f − a)² ≤
2(f − c)² + 2(a − c)², so W(a) ≤ 2·W(c) + 2(a − c)²·N, and W(c) (a sum of
the non-negative weights (f − c·g)²) and N have upper bounds from their own
laws. With W(c) and N below their bounds (each failing with probability
≤ (1 − L)/4) and the test at level 1 − (1 − L)/2, a* is rejected with
probability ≤ 1 − L. On a range R of a, spread, base and the bound on W are
convex in a, so their values at R's ends bound them on R, and the radius r_R
they give bounds a*'s: a* ∈ R implies a* ∈ [(A − r_R)/B, (A + r_R)/B]. The
interval is that step repeated from the values' range until it stops
shrinking (each range contains a* whenever the first did). Conservative. It
uses that the sum and the count share their noise (the ratio's errors cancel),
which the older rectangle below does not: on Adult's avg(age) the interval
is several times narrower. A family whose laws are not Bernstein laws (a
later view's parts, an exact release) keeps the rectangle (:class:`RatioLaw`):
a sum and a count each covered at level 1 − (1 − L)/2, the range of sum/count
over them, within the values' range; where the count's interval reaches 0 the
average is bounded only by the values' range.

When every sum is rejected (the view in the far tail for all of them), the
interval is the whole range and :meth:`BernsteinLaw.inconsistent` says so, as
for counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from privpub.core.estimate import IntervalLaw, check_level
from privpub.core.ranges import inconsistent

#: Interval methods, as Estimate.interval_method reports them.
BERNSTEIN = "conservative: Bernstein"
RATIO = "conservative: ratio (Bonferroni)"
AVERAGE = "conservative: Bernstein on sum − a·count (Fieller)"
#: Steps of the average's shrinking range (each a few sum laws; it stops when a
#: step shrinks the range by less than a millionth).
_AVERAGE_STEPS = 60
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


@dataclass
class AverageLaw:
    """An average's law by the test of Σ h_a = 0 (module docstring): ``law_of(w)``
    the family's Bernstein law of the sum with weights w over the query's
    cells, ``f`` and ``g`` the summed values and the present-value indicator per
    cell, ``count`` the count's law, the average within [``low``, ``high``]."""

    law_of: Callable[[np.ndarray], BernsteinLaw]
    f: np.ndarray
    g: np.ndarray
    count: IntervalLaw
    low: float
    high: float
    method: str = AVERAGE
    #: _solve's result by level (interval and inconsistent ask the same question).
    _solved: dict[float, tuple[float, float, bool]] = field(default_factory=dict, repr=False,
                                                            compare=False)

    def _solve(self, level: float) -> tuple[float, float, bool]:
        if level not in self._solved:
            self._solved[level] = self._shrink(level)
        return self._solved[level]

    def _shrink(self, level: float) -> tuple[float, float, bool]:
        share = (1 - check_level(level)) / 4
        test = 1 - 2 * share
        middle = (self.low + self.high) / 2
        squares = self.law_of((self.f - middle * self.g) ** 2).interval(1 - 2 * share)[1]
        count = float(np.asarray(self.count.interval(1 - 2 * share)[1]).reshape(-1)[0])
        law_f, law_g = self.law_of(self.f), self.law_of(self.g)
        a_f, b = law_f.observed - law_f.intercept, law_g.observed - law_g.intercept
        lo, hi = self.low, self.high
        if b <= 0:  # the view says nothing of the average: the values' range
            return lo, hi, False
        for _ in range(_AVERAGE_STEPS):
            ends = [self.law_of(self.f - a * self.g) for a in (lo, hi)]
            far = max(abs(lo - middle), abs(hi - middle))
            bound = replace(ends[0], base=max(e.base for e in ends), linear=0.0,
                            spread=max(e.bound if e.spread is None else e.spread for e in ends),
                            cap=2 * squares + 2 * far * far * count, one_signed=False)
            radius = bound.radius(0.0, test)
            new_lo, new_hi = max(lo, (a_f - radius) / b), min(hi, (a_f + radius) / b)
            if new_lo > new_hi:  # every average rejected: the view in the far tail
                return self.low, self.high, True
            done = (hi - lo) - (new_hi - new_lo) <= 1e-6 * (self.high - self.low)
            lo, hi = new_lo, new_hi
            if done:
                break
        return lo, hi, False

    def interval(self, level: float) -> tuple[float, float]:
        lo, hi, _ = self._solve(level)
        return lo, hi

    def inconsistent(self, level: float) -> bool:
        return self._solve(level)[2]
