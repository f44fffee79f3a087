"""A released answer to one graph query (:class:`GraphAnswer`): the value, the
mechanism and parameters that made it, what it says about the true answer
(its noise law, an interval exact for that law, :mod:`privpub.graphs.intervals`)
and its clamped form (post-processing, no privacy cost). The mechanisms that
answer are in :mod:`privpub.graphs.mechanism` and :mod:`privpub.graphs.smooth`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from privpub.core import validate
from privpub.core.errors import ArtifactError, QueryError
from privpub.core.estimate import LEVEL, Estimate, Estimates
from privpub.core.ranges import clamp
from privpub.core.release import DocumentRelease, Release, register_release_document
from privpub.graphs.estimates import answer_estimate
from privpub.graphs.exact import true_answers
from privpub.graphs.intervals import GraphInterval, NoiseLaw, QueryRange, interval


@register_release_document
class GraphAnswer(DocumentRelease):
    """A released query answer with its mechanism, parameters and seed policy.

    ``value`` is the answer, an integer that may be negative or above the
    query's range (the noise is symmetric and unbounded, and Algorithm 2.1's
    uniform branch reaches m^v). What it says about q(I):

    - :attr:`noise`: the law A − q(I) was drawn from (:class:`NoiseLaw`), and
      :attr:`scale` its scale (for the smooth-sensitivity mechanism the
      largest scale it can use: the scale it used depends on the graph and is
      not published);
    - :meth:`interval`: [A − s, A + s] covering q(I) with probability at least
      ``level`` for every graph, computed from that law (exact, not a normal
      approximation; Algorithm 2.1's uniform branch counted as a miss);
    - :meth:`clamped`: the answer clamped to the query's range [0, max]. It
      reads only the released answer and public facts (m, the query), so it is
      post-processing: it costs no privacy and the guarantee is unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from privpub.graphs import Graph, LaplaceMechanism, triangle
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), m=10)
    >>> a = LaplaceMechanism.for_graph(1.0, triangle(), g).answer(g, seed=6)
    >>> a.value, f"{a.scale:.6g}"     # q(I) = 6 (one triangle); b = GS/ε = 3(m − 2) = 24
    (-17, '24')
    >>> tuple(a.interval(0.95))       # s = 72: Pr[|Z| ≤ 72] = 0.9513 for b = 24
    (-89, 55)
    >>> c = a.clamped()               # into [0, 10·9·8]: post-processing, no privacy cost
    >>> c.value, tuple(c.interval(0.95))
    (0, (0, 72))
    """

    kind = "graph-answer"
    answers_own_query = True

    def __init__(self, value: int, mechanism: str, parameters: Mapping[str, Any],
                 seed_policy: str, *, clamped: bool = False, **kwargs: Any):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArtifactError(f"field 'value' must be an integer, got {value!r}")
        if not isinstance(clamped, bool):
            raise ArtifactError(f"field 'clamped' must be true or false, got {clamped!r}")
        super().__init__(mechanism, parameters, seed_policy, **kwargs)
        self.value = value
        self.is_clamped = clamped
        if clamped and not 0 <= value <= self.range.high:
            raise ArtifactError(f"field 'value' = {value} is marked clamped but lies outside "
                                f"the query's range [0, {self.range.high:,}]")

    @property
    def noise(self) -> NoiseLaw:
        """The law of A − q(I) (from the mechanism's public parameters)."""
        return self.mechanism_object().noise_law()

    @property
    def scale(self) -> float:
        """The noise scale b (see :attr:`noise`; for the smooth-sensitivity
        mechanism the largest it can be, ``noise.scale_is_bound``)."""
        return self.noise.scale

    @property
    def range(self) -> QueryRange:
        """[0, high] holding q(I) on every graph over the mechanism's m nodes."""
        return self.mechanism_object().value_range()

    def interval(self, level: float = LEVEL) -> GraphInterval:
        """An interval holding q(I) with probability at least ``level`` over the
        mechanism's randomness, for every graph (:mod:`privpub.graphs.intervals`);
        its ``statement`` says what it covers and why."""
        return interval(self.value, self.noise, self.range, level, clamped=self.is_clamped)

    def estimate(self, where: None = None) -> Estimate:
        """The estimate of the query's true answer q(I) this answer gives: value,
        the noise's stderr, :meth:`interval`, method (:mod:`privpub.graphs.estimates`).
        An answer answers its one query: ``where`` must be None."""
        if where is not None:
            raise QueryError(f"a graph answer answers its one query ({self.parameters['query']}"
                             f"); estimate() takes no condition, got {where!r}")
        return answer_estimate(self.value, self.noise, self.interval,
                               str(self.parameters["query"]), self.is_clamped, self.range.high)

    def estimate_many(self, wheres: Sequence[None] = (None,)) -> Estimates:
        """:meth:`estimate` as a batch of one per ``None`` in ``wheres``."""
        return Estimates.of([self.estimate(w) for w in wheres])

    def clamped(self) -> GraphAnswer:
        """This answer clamped to the query's range [0, max]: post-processing of the
        released answer (public m and query only), so no privacy cost; its interval
        is clamped too and covers at least as often."""
        return GraphAnswer(clamp(self.value, 0, self.range.high), self.mechanism, self.parameters,
                           self.seed_policy, clamped=True,
                           library_version=self.library_version)

    def true_answers(self, data: Any) -> list[int]:
        """The exact answer(s) q(I) on ``data``, the :class:`~privpub.graphs.Graph` the
        answer was made on (the card shows them beside the released ones)."""
        return true_answers(data, [str(self.parameters["query"])])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the value as a string (it may exceed 2^53)."""
        return self.envelope() | {"value": str(self.value), "clamped": self.is_clamped}

    @classmethod
    def from_dict(cls, meta: Mapping[str, Any]) -> GraphAnswer:
        """Rebuild and re-validate (the parameters are checked as by the constructor)."""
        env = Release.read_envelope(meta, cls.kind)
        raw = validate.field(meta, "value", "metadata")
        if not isinstance(raw, str) or not raw.lstrip("-").isdigit():
            raise ArtifactError(f"field 'value' must be a decimal integer string, got {raw!r}")
        return cls(int(raw), clamped=meta.get("clamped", False), **env)

    def __str__(self) -> str:
        span, ci = self.range, self.interval(LEVEL)
        clamp_text = (f"clamped to the query's range [0, {span.high:,}] (post-processing of "
                      "the released answer: no privacy cost)" if self.is_clamped else
                      f"not clamped; .clamped() maps it into [0, {span.high:,}] "
                      "(post-processing: no privacy cost)")
        return (f"{self.value:,} ({self.mechanism}; {clamp_text})\n"
                f"  noise: {self.noise.describe()}\n"
                f"  95% interval: [{ci.low:,}, {ci.high:,}]: {ci.statement}")

    def __repr__(self) -> str:
        extra = ", clamped=True" if self.is_clamped else ""
        return f"GraphAnswer({self.value}, mechanism={self.mechanism!r}{extra})"
