"""What a released graph answer says about the true count: the noise law it was
drawn from, the query's range, and intervals that are exact for that law.

Every graph mechanism releases q(I) + Z for an integer noise Z whose law is
public (it depends on ε, m and the query, never on the graph), except the
smooth-sensitivity mechanism, whose scale depends on the graph:

- discrete Laplace of scale b (:class:`~privpub.graphs.LaplaceMechanism`,
  Algorithm 2.1's Laplace branch): Pr[|Z| ≥ k] = 2e^{−k/b}/(1 + e^{−1/b}), k ≥ 1;
- round(b·L), L ~ Laplace(1) (:class:`~privpub.graphs.SmoothTriangleMechanism`):
  Pr[|Z| ≥ k] = e^{−(k − 1/2)/b}, k ≥ 1. There b = 12 S*_β(G)/ε depends on the
  graph and publishing it is not covered by the (ε, δ) guarantee, so the answer
  carries the largest scale the mechanism can use, 12(m − 2)/ε (S* ≤ m − 2 on
  every graph). |round(bL)| grows with b, so an interval computed at that scale
  covers with at least its probability on every graph: it is conservative, and on
  sparse graphs far wider than the noise actually added;
- Algorithm 2.1 mixes the Laplace branch with a uniform draw over {0, …, m^v}
  (probability p/γ) that ignores the data. The interval counts every uniform
  answer as a miss: the Laplace branch gets the interval at level/(1 − p/γ), so
  q(I) is covered with probability at least (1 − p/γ)·Pr[|Z| ≤ s] ≥ level for
  every graph. Above level 1 − p/γ no such interval exists and the interval is
  the query's whole range.

In every case the interval is [A − s, A + s] with s the least integer whose
coverage, computed from the law above (float64), is at least the level. The
coverage holds over the mechanism's randomness for every graph; it says
nothing about one answer (an answer from the uniform branch is far from q(I)
and nothing in it says so).

Clamping (:meth:`GraphAnswer.clamped`) maps the answer into the query's range
[0, max] (q(I) always lies there). It reads only the released answer and
public facts (m, the query), so it is post-processing and costs no privacy;
the clamped answer's interval is [A − s, A + s] clamped to the range, which
contains the unclamped interval's part inside the range, so it covers at
least as often.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from privpub.core.estimate import check_level
from privpub.core.ranges import clamp
from privpub.graphs.noise import (
    laplace_bound,
    laplace_tail,
    rounded_laplace_bound,
    rounded_laplace_tail,
)

DISCRETE_LAPLACE = "discrete Laplace"
ROUNDED_LAPLACE = "rounded Laplace"


@dataclass(frozen=True)
class NoiseLaw:
    """The law of A − q(I) for one released answer.

    ``scale`` is the b the sampler used (already rounded up to the next
    double), or, when ``scale_is_bound``, the largest b it can use on any
    graph (the b used depends on the data and is not published).
    ``uniform`` is the probability of Algorithm 2.1's data-independent uniform
    branch over {0, …, ``uniform_high``} (0 when there is none).
    """

    kind: str
    scale: float
    scale_is_bound: bool = False
    uniform: Fraction = Fraction(0)
    uniform_high: int = 0

    def tail(self, k: int) -> float:
        """Pr[|Z| ≥ k] of the Laplace part, for an integer k ≥ 0."""
        if k <= 0:
            return 1.0
        if self.kind == DISCRETE_LAPLACE:
            return laplace_tail(self.scale, k)
        return rounded_laplace_tail(self.scale, k)

    def halfwidth(self, level: float) -> int | None:
        """The least s ≥ 0 with coverage(s) ≥ level, or None when no s reaches it
        (level above 1 − p/γ for Algorithm 2.1)."""
        keep = 1 - self.uniform
        if Fraction(level) >= keep:
            return None
        inner = float(Fraction(level) / keep)
        bound = laplace_bound if self.kind == DISCRETE_LAPLACE else rounded_laplace_bound
        s = bound(self.scale, 1 - inner) - 1
        while s > 0 and self.coverage(s - 1) >= level:  # float rounding of level/(1 − p/γ)
            s -= 1
        while self.coverage(s) < level:
            s += 1
        return s

    def coverage(self, s: int) -> float:
        """The least probability, over all graphs, that [A − s, A + s] holds q(I):
        (1 − p/γ)·Pr[|Z| ≤ s] (the uniform branch counted as a miss)."""
        return float(1 - self.uniform) * (1 - self.tail(s + 1))

    def describe(self) -> str:
        law = (f"discrete Laplace of scale b = {self.scale:.6g} (Pr[Z = z] ∝ e^(−|z|/b))"
               if self.kind == DISCRETE_LAPLACE else
               f"round(b·L), L ~ Laplace(1), b {'≤' if self.scale_is_bound else '='} "
               f"{self.scale:.6g}")
        if self.scale_is_bound:
            law += (" (b = 12 S*/ε depends on the graph and is not published; this is its "
                    "largest value, from S* ≤ m − 2)")
        if self.uniform:
            law = (f"with probability p/γ = {float(self.uniform):.4g} uniform over "
                   f"{{0, …, {self.uniform_high:,}}} (ignoring the graph), otherwise q(I) + "
                   + law)
        else:
            law = "q(I) + " + law
        return law


@dataclass(frozen=True)
class QueryRange:
    """q(I) ∈ [0, high] for every instance over m nodes; ``exact`` when some
    instance reaches ``high``."""

    high: int
    exact: bool
    reason: str


@dataclass(frozen=True)
class GraphInterval:
    """[low, high] covering q(I) with probability at least ``coverage`` ≥ ``level``
    over the mechanism's randomness, for every graph; ``statement`` says why."""

    low: int
    high: int
    level: float
    coverage: float
    statement: str

    def __contains__(self, value: Any) -> bool:
        return self.low <= value <= self.high

    def __iter__(self):
        return iter((self.low, self.high))

    def __str__(self) -> str:
        return f"[{self.low:,}, {self.high:,}] ({self.level:.0%} interval)"


def interval(value: int, law: NoiseLaw, span: QueryRange, level: float, *,
             clamped: bool) -> GraphInterval:
    """The interval for an answer ``value`` drawn with ``law`` (see the module notes)."""
    level = check_level(level)
    s = law.halfwidth(level)
    if s is None:
        return GraphInterval(0, span.high, level, 1.0, (
            f"level {level} is above 1 − p/γ = {float(1 - law.uniform):.6g}: the uniform "
            "branch alone misses that often, so the interval is the query's whole range "
            f"[0, {span.high:,}] ({span.reason}), which always holds q(I)."))
    low, high = value - s, value + s
    if clamped:
        low, high = clamp(low, 0, span.high), clamp(high, 0, span.high)
    cover = law.coverage(s)
    why = [f"[A − s, A + s] with s = {s:,} covers q(I) with probability at least "
           f"{cover:.6f} ≥ {level} for every graph: the answer is {law.describe()}, and s is "
           "the least half-width whose probability, computed from that law, reaches the "
           "level"]
    if law.uniform:
        why.append(f"; the uniform branch (probability {float(law.uniform):.4g}) is counted "
                   "as a miss, so the Laplace branch carries the level "
                   f"{level}/(1 − p/γ) = {float(Fraction(level) / (1 - law.uniform)):.6f}. "
                   "This is a statement about the mechanism, not about this answer: an answer "
                   "from the uniform branch is far from q(I), and nothing in it says so")
    if law.scale_is_bound:
        why.append("; the scale is the largest the mechanism can use, and |round(bL)| grows "
                   "with b, so on graphs with a smaller S* the coverage is higher (the "
                   "interval is conservative)")
    if clamped:
        why.append(f". Clamped to the query's range [0, {span.high:,}] ({span.reason}): it "
                   "contains every point of the unclamped interval that q(I) can take, so it "
                   "covers at least as often")
    return GraphInterval(low, high, level, cover, "".join(why) + ".")
