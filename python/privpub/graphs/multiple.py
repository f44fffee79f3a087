"""Algorithm 2.1 for a sequence of queries (Rastogi et al., PODS 2009, Sec. 4.3).

What the paper prescribes for q_1, …, q_l: p "is computed as before" (p =
g/m); each query gets its own λ_i = (8 g_i² (v+1) log m)^(g_i − 1), where g_i
is the number of subgoals of q_i and v the total number of variables in all
queries. With probability p/γ the database is ignored and every query gets a
uniformly random answer; otherwise (probability 1 − p/γ) every query gets
A_i(I) = q_i(I) + Lap(λ_i/ε). Same privacy guarantee as Theorem 2.6, and
(Σ_i, Γ_i)-usefulness with Σ_i = O(l log^{g_i} m / ε).

Where the text leaves a choice, what we implement and why:

- "p computed as before" does not say which g. We take g = Σ_i g_i, the
  total number of subgoals, as v is the total number of variables: the
  sequence is treated as one query with all the subgoals, and the larger p
  (more uniform answers) is the conservative side for privacy.
- "a completely random answer to each query": each q_i's answer is uniform
  over its own range {0, …, m^{v_i}} (v_i its variables), drawn
  independently; one coin decides the branch for all queries.
- "log" is the natural log and Lap(b) the discrete Laplace of scale b, as
  for Algorithm 2.1 (:mod:`privpub.graphs.mechanism`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

from privpub.core import validate
from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.estimate import LEVEL, Estimate, Estimates
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY, Claim, Guarantee
from privpub.core.ranges import clamp
from privpub.core.release import (
    DocumentRelease,
    Release,
    register_mechanism,
    register_release_document,
)
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.graphs.analysis import stability
from privpub.graphs.claims import (
    GRAPH_PARAMETERS,
    PTLM,
    check_clamp,
    check_epsilon,
    check_graph_domain,
    facts_of,
    graph_claims,
    undirected_edge_claim,
)
from privpub.graphs.estimates import answer_estimate
from privpub.graphs.exact import checked_inputs, count, true_answers
from privpub.graphs.graph import Graph
from privpub.graphs.intervals import (
    DISCRETE_LAPLACE,
    GraphInterval,
    NoiseLaw,
    QueryRange,
    interval,
)
from privpub.graphs.noise import Bits, laplace_bound, scale_up
from privpub.graphs.query import CQ, as_query
from privpub.graphs.sensitivity import query_range


@register_mechanism
class MultipleQueryMechanism:
    """Sec. 4.3's Algorithm 2.1 for queries q_1, …, q_l over m nodes.

    Parameters
    ----------
    epsilon : float > 0
    gamma : float in (0, 1]
        Uniform answers with probability p/γ, p = (Σ g_i)/m, so γ ≥ p.
    queries : sequence of CQ or str
        At least one; each must be stable (the first that is not is named).
    m : int ≥ 2

    Examples
    --------
    >>> from privpub.graphs import triangle, two_path
    >>> mech = MultipleQueryMechanism(1.0, 0.1, [triangle(), two_path()], m=4039)
    >>> mech.v, mech.p, [f"{lam:.4g}" for lam in mech.lams]
    (6, Fraction(5, 4039), ['1.751e+07', '1860'])
    """

    name: ClassVar[str] = "relationship-alg2.1-multiple"
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings = GRAPH_PARAMETERS

    def __init__(self, epsilon: float, gamma: float, queries: Sequence[CQ | str], m: int, *,
                 graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.gamma = validate.probability("gamma", gamma, open_low=True)
        if isinstance(queries, (str, CQ)) or not isinstance(queries, Sequence):
            raise ParameterError("queries must be a sequence of CQ queries or their texts, "
                                 f"got {type(queries).__name__}")
        if not queries:
            raise ParameterError("queries must hold at least one query")
        self.queries = [as_query(q) for q in queries]
        self.m = validate.integer("m", m, minimum=2)
        self.stabilities = [stability(q) for q in self.queries]
        for i, (q, s) in enumerate(zip(self.queries, self.stabilities, strict=True)):
            if s.stable is not True:
                raise QueryError(f"Algorithm 2.1 protects only stable queries; query {i} "
                                 f"({q.name}) is refused: {s.reason}")
        if self.p > Fraction(self.gamma):
            raise ParameterError(f"gamma = {self.gamma} is below p = Σ g_i/m = {self.g}/"
                                 f"{self.m}; the uniform branch needs p/γ ≤ 1")
        self.graph_facts = dict(graph_facts or {})

    @property
    def g(self) -> int:
        """Σ g_i: the subgoals of all queries (sets p)."""
        return sum(q.g for q in self.queries)

    @property
    def v(self) -> int:
        """Σ v_i: the total number of variables in all queries (sets every λ_i)."""
        return sum(q.v for q in self.queries)

    @property
    def p(self) -> Fraction:
        return Fraction(self.g, self.m)

    @property
    def lams(self) -> list[float]:
        """λ_i = (8 g_i² (v+1) ln m)^(g_i − 1)."""
        return [(8 * q.g**2 * (self.v + 1) * math.log(self.m)) ** (q.g - 1)
                for q in self.queries]

    @property
    def scales(self) -> list[float]:
        return [lam / self.epsilon for lam in self.lams]

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "gamma": self.gamma,
                "queries": [str(q) for q in self.queries], "m": self.m,
                "lambdas": self.lams, "p": float(self.p), "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: object,
                        parameters: Mapping[str, Any]) -> MultipleQueryMechanism:
        p = parameters
        graph = validate.field(p, "graph")
        if not isinstance(graph, dict):
            raise ArtifactError("field 'graph' must be a JSON object")
        queries = validate.field(p, "queries")
        if not isinstance(queries, list):
            raise ArtifactError("field 'queries' must be a list of query texts")
        mech = cls(validate.field(p, "epsilon"), validate.field(p, "gamma"),
                   [as_query(q) for q in queries], validate.field(p, "m"), graph_facts=graph)
        lams = validate.field(p, "lambdas")
        if not isinstance(lams, list) or len(lams) != len(mech.lams):
            raise ArtifactError(f"field 'lambdas' must list {len(mech.lams)} numbers")
        for i, (stored, derived) in enumerate(zip(lams, mech.lams, strict=True)):
            validate.same(f"lambdas[{i}]", stored, derived)
        validate.same("p", validate.field(p, "p"), float(mech.p))
        return mech

    def error_bounds(self) -> tuple[list[int], float]:
        """([Σ_i], Γ): Pr[|A_i(I) − q_i(I)| ≥ Σ_i] ≤ Γ/m for every I and i, with
        Γ = 2 Σg/γ (the uniform branch p/γ plus a Laplace tail ≤ p/γ)."""
        tail = float(self.p / Fraction(self.gamma))
        return [laplace_bound(b, tail) for b in self.scales], 2 * self.g / self.gamma

    def guarantee(self) -> Guarantee:
        m, eps, gamma = self.m, self.epsilon, self.gamma
        delta, k = math.log(m) / m, math.log(m)
        sigmas, big_gamma = self.error_bounds()
        names = ", ".join(q.name for q in self.queries)
        claims = graph_claims(self.graph_facts)
        claims.append(Claim(
            "(ε, γ)-adversarial privacy", True,
            f"all {len(self.queries)} queries ({names}) are stable. For each tuple t of R, "
            f"after seeing all the answers: every (δ, k)-bounded {PTLM} with "
            f"δ = ln m/m = {delta:.4g} and k = ln m = {k:.3g} has Pr[t | A] ≤ e^ε·Pr[t] + γ "
            f"with ε = {eps}, γ = {gamma}. Adversaries with stronger priors are not covered.",
            "Sec. 4.3 (multiple queries), Theorem 2.6"))
        if not self.graph_facts.get("directed", True):
            claims.append(undirected_edge_claim())
        why = "the Laplace scales λ_i/ε follow the adversary class, not the global sensitivities."
        claims.append(Claim(INDISTINGUISHABILITY, False, why, "Sec. 2.4"))
        claims.append(Claim(DIFFERENTIAL_PRIVACY, False, why, "Sec. 2.4"))
        bounds = "; ".join(f"{q.name}: Σ = {s:,}" for q, s in zip(self.queries, sigmas,
                                                                  strict=True))
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"for every graph and each query, Pr[|A_i(I) − q_i(I)| ≥ Σ_i] ≤ Γ/m with Γ = "
            f"2·Σg/γ = {big_gamma:.4g} ({bounds}).", "Def. 2.1, Sec. 4.3"))
        return Guarantee(f"Algorithm 2.1, {len(self.queries)} queries ({names}, ε = {eps}, "
                         f"γ = {gamma}, m = {m:,})", tuple(claims))

    def draw(self, values: Sequence[int], bits: Bits) -> tuple[str, list[int]]:
        """(branch, outputs) for the true values; the branch is for tests only."""
        if len(values) != len(self.queries):
            raise ParameterError(f"{len(values)} values for {len(self.queries)} queries")
        if bits.bernoulli(self.p / Fraction(self.gamma)):
            return "uniform", [bits.randbelow(self.m ** q.v + 1) for q in self.queries]
        return "laplace", [value + bits.discrete_laplace(scale_up(b))
                           for value, b in zip(values, self.scales, strict=True)]

    @classmethod
    def for_graph(cls, epsilon: float, gamma: float, queries: Sequence[CQ | str],
                  graph: Graph) -> MultipleQueryMechanism:
        if isinstance(queries, Sequence) and not isinstance(queries, str):
            queries = [checked_inputs(graph, q) for q in queries]
        return cls(epsilon, gamma, queries, graph.m, graph_facts=facts_of(graph))

    def noise_laws(self) -> list[NoiseLaw]:
        """Per query: uniform over {0, …, m^{v_i}} with probability p/γ (one coin for
        all), otherwise q_i(I) + DLap(b_i) with b_i the scale the sampler uses."""
        rate = self.p / Fraction(self.gamma)
        return [NoiseLaw(DISCRETE_LAPLACE, float(scale_up(b)), uniform=rate,
                         uniform_high=self.m ** q.v)
                for q, b in zip(self.queries, self.scales, strict=True)]

    def value_ranges(self) -> list[QueryRange]:
        return [query_range(q, self.m) for q in self.queries]

    def answer(self, graph: Graph, seed: SeedLike = None, *,
               clamp: bool = False) -> GraphAnswers:
        """A_1(I), …, A_l(I) for this graph (its m must be the mechanism's);
        ``clamp=True`` clamps each to its query's range (post-processing, no
        privacy cost)."""
        check_graph_domain(graph, self.m)
        check_clamp(clamp)
        source = resolve_seed(seed)
        _, values = self.draw([count(graph, q) for q in self.queries],
                              Bits(source.derive(self.name)))
        me = MultipleQueryMechanism(self.epsilon, self.gamma, self.queries, self.m,
                                    graph_facts=facts_of(graph))
        out = GraphAnswers(values, self.name, me.parameters(), source.policy)
        return out.clamped() if clamp else out


@register_release_document
class GraphAnswers(DocumentRelease):
    """Released answers to a sequence of queries, in the queries' order.

    As :class:`~privpub.graphs.GraphAnswer`, per query: :attr:`noise`,
    :attr:`scales`, :meth:`intervals` (each covers its own q_i(I) with
    probability at least ``level``; not all at once) and :meth:`clamped`
    (post-processing: no privacy cost).
    """

    kind = "graph-answers"
    answers_own_query = True

    def __init__(self, values: Sequence[int], mechanism: str, parameters: Mapping[str, Any],
                 seed_policy: str, *, clamped: bool = False, **kwargs: Any):
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise ArtifactError(f"field 'values' must hold integers, got {list(values)!r}")
        if not isinstance(clamped, bool):
            raise ArtifactError(f"field 'clamped' must be true or false, got {clamped!r}")
        super().__init__(mechanism, parameters, seed_policy, **kwargs)
        self.values = list(values)
        self.is_clamped = clamped
        if len(self.values) != len(self.ranges):
            raise ArtifactError(f"field 'values' holds {len(self.values)} answers for "
                                f"{len(self.ranges)} queries")
        if clamped and not all(0 <= v <= r.high for v, r in zip(self.values, self.ranges,
                                                                strict=True)):
            raise ArtifactError("field 'values' is marked clamped but an answer lies outside "
                                "its query's range")

    @property
    def noise(self) -> list[NoiseLaw]:
        mech: MultipleQueryMechanism = self.mechanism_object()
        return mech.noise_laws()

    @property
    def scales(self) -> list[float]:
        return [law.scale for law in self.noise]

    @property
    def ranges(self) -> list[QueryRange]:
        mech: MultipleQueryMechanism = self.mechanism_object()
        return mech.value_ranges()

    def intervals(self, level: float = LEVEL) -> list[GraphInterval]:
        """Per query, an interval holding q_i(I) with probability at least ``level``
        for every graph (each on its own, not simultaneously)."""
        return [interval(v, law, span, level, clamped=self.is_clamped)
                for v, law, span in zip(self.values, self.noise, self.ranges, strict=True)]

    def estimate(self, index: int) -> Estimate:
        """The estimate of query ``index``'s true answer (as
        :meth:`GraphAnswer.estimate <privpub.graphs.GraphAnswer.estimate>`)."""
        if isinstance(index, bool) or not isinstance(index, int) or \
                not 0 <= index < len(self.values):
            raise QueryError(f"index must be a query's position, 0 to {len(self.values) - 1}, "
                             f"got {index!r}")
        law, span = self.noise[index], self.ranges[index]
        return answer_estimate(
            self.values[index], law,
            lambda level: interval(self.values[index], law, span, level,
                                   clamped=self.is_clamped),
            str(self.parameters["queries"][index]), self.is_clamped, span.high)

    def estimate_many(self, indices: Sequence[int] | None = None) -> Estimates:
        """:meth:`estimate` for each query position (default: every query)."""
        chosen = range(len(self.values)) if indices is None else indices
        return Estimates.of([self.estimate(i) for i in chosen])

    def clamped(self) -> GraphAnswers:
        """Each answer clamped to its query's range: post-processing, no privacy cost."""
        return GraphAnswers([clamp(v, 0, r.high)
                             for v, r in zip(self.values, self.ranges, strict=True)],
                            self.mechanism, self.parameters, self.seed_policy, clamped=True,
                            library_version=self.library_version)

    def true_answers(self, data: Any) -> list[int]:
        """The exact answer(s) q(I) on ``data``, the :class:`~privpub.graphs.Graph` the
        answer was made on (the card shows them beside the released ones)."""
        return true_answers(data, [str(q) for q in self.parameters["queries"]])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; values as strings (they may exceed 2^53)."""
        return self.envelope() | {"values": [str(v) for v in self.values],
                                  "clamped": self.is_clamped}

    @classmethod
    def from_dict(cls, meta: Mapping[str, Any]) -> GraphAnswers:
        env = Release.read_envelope(meta, cls.kind)
        raw = validate.field(meta, "values", "metadata")
        if not isinstance(raw, list) or not all(
                isinstance(v, str) and v.lstrip("-").isdigit() for v in raw):
            raise ArtifactError(f"field 'values' must be a list of decimal integer strings, "
                                f"got {raw!r}")
        return cls([int(v) for v in raw], clamped=meta.get("clamped", False), **env)

    def __repr__(self) -> str:
        extra = ", clamped=True" if self.is_clamped else ""
        return f"GraphAnswers({self.values}, mechanism={self.mechanism!r}{extra})"
