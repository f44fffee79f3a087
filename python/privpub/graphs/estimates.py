"""A released graph answer as the core contract's estimate of the query's
true answer q(I) (:class:`~privpub.core.estimate.Estimate`).

- ``value``: the released answer A (clamped, if the answer was);
- ``stderr``: the noise's standard deviation √E[Z²], from its public law
  (:class:`~privpub.graphs.intervals.NoiseLaw`). For discrete Laplace of scale
  b with r = e^{−1/b}, Pr[|Z| ≥ k] = 2r^k/(1 + r), so E[Z²] = Σ_k (2k − 1)
  Pr[|Z| ≥ k] = 2r/(1 − r)²; for round(b·L), Pr[|Z| ≥ k] = r^{k − 1/2}, so
  E[Z²] = √r(1 + r)/(1 − r)². Where the scale is only bounded (the smooth
  mechanism) it is the stderr at the largest scale; with Algorithm 2.1's
  uniform branch it is the Laplace branch's (a note says both); a clamped
  answer is no farther from q(I) than the answer it was clamped from;
- ``interval(level)``: the answer's own interval
  (:func:`~privpub.graphs.intervals.interval`), ``interval_method``
  ``"exact"`` (or ``"conservative: scale bound"`` for the smooth mechanism);
- ``value_range``: the query's range [0, max]; ``is_clamped`` whether the
  answer was clamped into it (:meth:`GraphAnswer.clamped
  <privpub.graphs.GraphAnswer.clamped>`);
- ``details``: the answer as an exact integer (text: it may exceed 2^53), the
  noise kind and scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from privpub.core.estimate import Estimate
from privpub.graphs.intervals import DISCRETE_LAPLACE, GraphInterval, NoiseLaw

#: What a graph answer estimates.
COUNTS = "query answer q(I)"


def noise_stderr(law: NoiseLaw) -> float:
    """√E[Z²] of the Laplace part of ``law`` (module docstring)."""
    r = math.exp(-1 / law.scale)
    if law.kind == DISCRETE_LAPLACE:
        return math.sqrt(2 * r) / (1 - r)
    return math.sqrt(math.sqrt(r) * (1 + r)) / (1 - r)


@dataclass(frozen=True)
class AnswerLaw:
    """The interval of one answer, as the answer computes it."""

    interval_of: Callable[[float], GraphInterval]

    def interval(self, level: float) -> tuple[int, int]:
        found = self.interval_of(level)
        return found.low, found.high


def answer_estimate(value: int, law: NoiseLaw, interval_of: Callable[[float], GraphInterval],
                    query: str, clamped: bool, high: int) -> Estimate:
    """The estimate of q(I) a released answer gives (module docstring)."""
    notes = []
    if law.uniform:
        notes.append(f"with probability p/γ = {float(law.uniform):.4g} the answer is uniform "
                     f"over {{0, …, {law.uniform_high:,}}} whatever the graph; the stderr is "
                     "the Laplace branch's, and the interval counts the uniform branch as a "
                     "miss")
    if law.scale_is_bound:
        notes.append("the noise scale depends on the graph and is not published; the stderr "
                     "is at the largest scale the mechanism can use (an upper bound)")
    method = "released answer" + (", clamped to the query's range" if clamped else "")
    return Estimate(float(value), noise_stderr(law), COUNTS, method,
                    "conservative: scale bound" if law.scale_is_bound else "exact",
                    AnswerLaw(interval_of), query=query, notes=tuple(notes),
                    details={"answer": str(value), "noise": law.kind, "scale": law.scale},
                    value_range=(0, high), is_clamped=clamped)
