"""Mechanisms answering one CQ(≠) counting query on a graph.

- :class:`RelationshipMechanism`: Algorithm 2.1 of Rastogi, Hay, Miklau &
  Suciu (PODS 2009). With g subgoals and v variables, λ = (8(v+1)g² ln m)^(g−1)
  and p = g/m; with probability p/γ the answer is uniform over {0, …, m^v}
  (exact big integers), otherwise q(I) + Lap(λ/ε). Theorem 2.6: for a stable
  query, (ε, γ)-adversarial privacy against every (δ, k)-bounded PTLM
  adversary with δ = ln m/m, k = ln m. It is not ε-indistinguishable.
  With ``min_with_gs=True`` it is the improvement the paper's conclusion
  (Sec. 5) names: λ is set to min(λ, GS_q). When GS_q < λ the Laplace
  branch is q(I) + Lap(GS_q/ε), and the whole mechanism is
  ε-indistinguishable (the uniform branch ignores the data, so every
  output's probability changes by at most e^ε between neighbours), hence
  ε-adversarially private against every PTLM adversary (Theorem 2.12),
  stronger than Theorem 2.6. The paper replaces λ only, so the uniform
  branch stays.
- :class:`LaplaceMechanism`: DMNS (Dwork, McSherry, Nissim, Smith 2006):
  q(I) + Lap(GS_q/ε), ε-indistinguishable. A sensitivity the caller gives is
  refused when it is below the exact GS_q privpub computes; where privpub has
  only an upper bound and the caller's figure is below it, the guarantee says
  the claim is unverified and rests on that figure.

Neighbours. The paper's ε-indistinguishability (Def. 2.7) compares instances
of the same size that differ by *replacing* one tuple (I + t = I' + t');
ε-differential privacy compares instances differing by *adding or removing*
one tuple. For these monotone queries a replacement changes q by no more
than an addition or a removal, and the GS privpub computes bounds the change
under both (:mod:`privpub.graphs.sensitivity`), so Lap(GS/ε) gives the same ε
under both notions, and the guarantees state each.

Answers (:class:`~privpub.graphs.answer.GraphAnswer`) carry their noise law,
an interval exact for it, and ``clamped()`` (post-processing, no privacy
cost); see :mod:`privpub.graphs.intervals`.

"log" in the paper is the natural log (docs/design.md, "Algorithm 2.1").
Lap(b) has scale b. The noise is the discrete Laplace of scale b, sampled exactly
(:mod:`privpub.graphs.noise`, Canonne–Kamath–Steinke), so no floating-point
rendering leaks; b is rounded up to the next double.

Privacy is per tuple of R. An undirected graph stores each friendship as two
tuples; the guarantees say what that means for a friendship.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, ClassVar

from privpub.core import validate
from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.graphs.analysis import stability
from privpub.graphs.answer import GraphAnswer
from privpub.graphs.claims import (
    GRAPH_PARAMETERS,
    adversarial_privacy_claim,
    check_clamp,
    check_epsilon,
    check_graph_domain,
    facts_of,
    graph_claims,
    neighbour_claims,
    noise_parameter_claim,
    not_indistinguishable_claims,
    sensitivity_text,
    undirected_edge_claim,
    usefulness_claim,
)
from privpub.graphs.exact import checked_inputs, count
from privpub.graphs.graph import Graph
from privpub.graphs.intervals import (
    DISCRETE_LAPLACE,
    NoiseLaw,
    QueryRange,
)
from privpub.graphs.noise import Bits, laplace_bound, scale_up
from privpub.graphs.query import CQ, as_query
from privpub.graphs.sensitivity import Sensitivity, global_sensitivity, query_range


@register_mechanism
class RelationshipMechanism:
    """Algorithm 2.1 for one stable query over a domain of m nodes.

    Parameters
    ----------
    epsilon : float > 0
    gamma : float in (0, 1]
        The answer is uniform with probability p/γ = g/(mγ), so γ ≥ g/m.
    query : CQ or str
        Refused (QueryError naming the failing derivative) unless stable.
    m : int ≥ 2
        The domain size (nodes of the graph, :attr:`Graph.m`).
    min_with_gs : bool
        Use min(λ, GS_q) as the noise parameter (Sec. 5's improvement);
        :attr:`branch` says which one applied.

    Examples
    --------
    >>> from privpub.graphs import triangle
    >>> mech = RelationshipMechanism(0.5, 0.1, triangle(), m=4039)
    >>> f"{mech.lam:.4g}"
    '5.719e+06'
    >>> better = RelationshipMechanism(0.5, 0.1, triangle(), m=4039, min_with_gs=True)
    >>> better.branch, better.noise_lambda    # GS_Δ = 3(m − 2) < λ
    ('global sensitivity', 12111)
    """

    name: ClassVar[str] = "relationship-alg2.1"
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings = GRAPH_PARAMETERS

    def __init__(self, epsilon: float, gamma: float, query: CQ | str, m: int, *,
                 min_with_gs: bool = False, graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.gamma = validate.probability("gamma", gamma, open_low=True)
        if not isinstance(min_with_gs, bool):
            raise ParameterError(f"min_with_gs must be True or False, got {min_with_gs!r}")
        self.min_with_gs = min_with_gs
        self.query = as_query(query)
        self.m = validate.integer("m", m, minimum=2)
        self.stability = stability(self.query)
        if self.stability.stable is not True:
            raise QueryError(f"Algorithm 2.1 protects only stable queries; {self.query.name} is "
                             f"refused: {self.stability.reason}")
        if Fraction(self.query.g, self.m) > Fraction(self.gamma):
            raise ParameterError(f"gamma = {self.gamma} is below p = g/m = {self.query.g}/"
                                 f"{self.m}; the uniform branch needs p/γ ≤ 1")
        self.graph_facts = dict(graph_facts or {})

    @property
    def g(self) -> int:
        return self.query.g

    @property
    def v(self) -> int:
        return self.query.v

    @property
    def lam(self) -> float:
        """λ = (8(v+1)g² ln m)^(g−1) (Step 2)."""
        return (8 * (self.v + 1) * self.g**2 * math.log(self.m)) ** (self.g - 1)

    @property
    def p(self) -> Fraction:
        """p = g/m (Step 2), exact."""
        return Fraction(self.g, self.m)

    @property
    def gs(self) -> Sensitivity:
        """GS_q over m nodes (exact, or an upper bound: either makes Lap(GS/ε)
        ε-indistinguishable)."""
        return global_sensitivity(self.query, self.m)

    @property
    def branch(self) -> str:
        """Which noise parameter applies: "lambda" (Algorithm 2.1's λ) or
        "global sensitivity" (min_with_gs and GS_q < λ)."""
        if self.min_with_gs and self.gs.value < self.lam:
            return "global sensitivity"
        return "lambda"

    @property
    def noise_lambda(self) -> float:
        """The noise parameter used: λ, or GS_q in the global-sensitivity branch."""
        return self.gs.value if self.branch == "global sensitivity" else self.lam

    @property
    def scale(self) -> float:
        """The Laplace scale b = noise_lambda/ε (λ/ε for Algorithm 2.1 as stated)."""
        return self.noise_lambda / self.epsilon

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "gamma": self.gamma, "query": str(self.query),
                "m": self.m, "lambda": self.lam, "p": float(self.p),
                "min_with_gs": self.min_with_gs, "branch": self.branch,
                "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: object,
                        parameters: Mapping[str, Any]) -> RelationshipMechanism:
        p = parameters
        graph = validate.field(p, "graph")
        if not isinstance(graph, dict):
            raise ArtifactError("field 'graph' must be a JSON object")
        mech = cls(validate.field(p, "epsilon"), validate.field(p, "gamma"),
                   as_query(validate.field(p, "query")), validate.field(p, "m"),
                   min_with_gs=validate.field(p, "min_with_gs"), graph_facts=graph)
        validate.same("lambda", validate.field(p, "lambda"), mech.lam)
        validate.same("p", validate.field(p, "p"), float(mech.p))
        if validate.field(p, "branch") != mech.branch:
            raise ArtifactError(f"field 'branch' = {p['branch']!r} does not follow from the "
                                f"other parameters, which give {mech.branch!r}")
        return mech

    def error_bound(self) -> tuple[int, float]:
        """(Σ, Γ) with Pr[|A(I) − q(I)| ≥ Σ] ≤ Γ/m for every I (Def. 2.1):
        Γ = 2g/γ, half from the uniform branch (probability p/γ), half from the
        Laplace tail (Σ chosen so the tail is ≤ p/γ)."""
        tail = float(self.p / Fraction(self.gamma))
        return laplace_bound(self.scale, tail), 2 * self.g / self.gamma

    def guarantee(self) -> Guarantee:
        """The claims of :mod:`privpub.graphs.claims` for these parameters."""
        eps, gamma = self.epsilon, self.gamma
        sigma, big_gamma = self.error_bound()
        capped = self.branch == "global sensitivity"
        uniform = float(self.p) / gamma
        gs_text = sensitivity_text(self.gs)
        claims = graph_claims(self.graph_facts)
        if self.min_with_gs:
            claims.append(noise_parameter_claim(gs_text, self.lam, self.scale, capped))
        claims.append(adversarial_privacy_claim(self.query.name, self.stability.reason,
                                                self.m, eps, gamma, capped))
        directed = self.graph_facts.get("directed", True)
        if capped:
            claims.extend(neighbour_claims(
                eps, directed, True,
                f"The Laplace branch is q(I) + DLap(GS/ε) with {gs_text}, and the uniform "
                f"branch (probability p/γ = {uniform:.3g}) does not look at the "
                "data, so each output's probability changes by at most e^ε between "
                "neighbours."))
        else:
            if not directed:
                claims.append(undirected_edge_claim())
            claims.extend(not_indistinguishable_claims(self.scale, gs_text,
                                                       not self.min_with_gs))
        claims.append(usefulness_claim(sigma, big_gamma, uniform, self.scale))
        name = "Algorithm 2.1, min(λ, GS)" if self.min_with_gs else "Algorithm 2.1"
        return Guarantee(f"{name} ({self.query.name}, ε = {eps}, γ = {gamma}, "
                         f"m = {self.m:,}, λ = {self.lam:.4g}"
                         + (f", noise parameter {self.noise_lambda:.4g}" if self.min_with_gs
                            else "") + ")", tuple(claims))

    def draw(self, value: int, bits: Bits) -> tuple[str, int]:
        """(branch, output) for the true value q(I); the branch is for tests
        only and is never published."""
        if bits.bernoulli(self.p / Fraction(self.gamma)):
            return "uniform", bits.randbelow(self.m ** self.v + 1)
        return "laplace", value + bits.discrete_laplace(scale_up(self.scale))

    def noise_law(self) -> NoiseLaw:
        """The law of the answer: uniform over {0, …, m^v} with probability p/γ,
        otherwise q(I) + DLap(b) with b the scale the sampler uses."""
        return NoiseLaw(DISCRETE_LAPLACE, float(scale_up(self.scale)),
                        uniform=self.p / Fraction(self.gamma), uniform_high=self.m ** self.v)

    def value_range(self) -> QueryRange:
        """[0, max] holding q(I) on every graph over m nodes."""
        return query_range(self.query, self.m)

    @classmethod
    def for_graph(cls, epsilon: float, gamma: float, query: CQ | str, graph: Graph, *,
                  min_with_gs: bool = False) -> RelationshipMechanism:
        return cls(epsilon, gamma, checked_inputs(graph, query), graph.m,
                   min_with_gs=min_with_gs, graph_facts=facts_of(graph))

    def answer(self, graph: Graph, seed: SeedLike = None, *,
               clamp: bool = False) -> GraphAnswer:
        """A(I) for this graph (its m must be the mechanism's); ``clamp=True``
        returns it clamped to the query's range (:meth:`GraphAnswer.clamped`:
        post-processing, no privacy cost)."""
        check_graph_domain(graph, self.m)
        check_clamp(clamp)
        source = resolve_seed(seed)
        _, value = self.draw(count(graph, self.query), Bits(source.derive(self.name)))
        out = GraphAnswer(value, self.name, self.with_facts(facts_of(graph)).parameters(),
                          source.policy)
        return out.clamped() if clamp else out

    def with_facts(self, graph_facts: Mapping[str, Any]) -> RelationshipMechanism:
        """This mechanism, recording the facts of the graph it answered on."""
        return RelationshipMechanism(self.epsilon, self.gamma, self.query, self.m,
                                     min_with_gs=self.min_with_gs, graph_facts=graph_facts)


@register_mechanism
class LaplaceMechanism:
    """DMNS: q(I) + Lap(S/ε), S = GS_q from :func:`global_sensitivity` or given.

    A given ``sensitivity`` below the exact GS_q privpub computes is refused
    (ParameterError naming both figures): noise that narrow is not
    ε-indistinguishable. One at or above privpub's figure (exact, or an upper
    bound) is verified. One below an upper bound privpub cannot tighten is
    accepted, and the guarantee says the claim is unverified and rests on it.

    Examples
    --------
    >>> from privpub.graphs import triangle
    >>> LaplaceMechanism(0.5, triangle(), m=4039).sensitivity
    12111
    >>> LaplaceMechanism(1.0, triangle(), m=4039, sensitivity=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    privpub.core.errors.ParameterError: sensitivity = 1 is below ... GS = 12,111 (exact: ...
    """

    name: ClassVar[str] = "laplace-global-sensitivity"
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings = GRAPH_PARAMETERS

    def __init__(self, epsilon: float, query: CQ | str, m: int, *,
                 sensitivity: int | None = None, graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.query = as_query(query)
        self.m = validate.integer("m", m, minimum=2)
        self.gs = derived = global_sensitivity(self.query, self.m)
        if sensitivity is None:
            self.sensitivity = derived.value
        else:
            self.sensitivity = validate.integer("sensitivity", sensitivity, minimum=1)
            if derived.exact and self.sensitivity < derived.value:
                raise ParameterError(
                    f"sensitivity = {self.sensitivity:,} is below the global sensitivity of "
                    f"{self.query.name} over m = {self.m:,} nodes, GS = {derived.value:,} "
                    f"(exact: {derived.reason}); Laplace noise of scale sensitivity/ε would "
                    "not be ε-indistinguishable. Omit sensitivity= (GS is used) or pass at "
                    f"least {derived.value:,}")
        self.graph_facts = dict(graph_facts or {})

    @property
    def exact(self) -> bool:
        """The noise uses the exact GS_q."""
        return self.gs.exact and self.sensitivity == self.gs.value

    @property
    def verified(self) -> bool:
        """The sensitivity used is at least privpub's GS_q (exact or an upper bound)."""
        return self.sensitivity >= self.gs.value

    @property
    def source(self) -> str:
        """Where the sensitivity used comes from, and how it compares with GS_q."""
        kind = "exact" if self.gs.exact else "an upper bound"
        if self.sensitivity == self.gs.value:
            return f"{kind}: {self.gs.reason}"
        relation = "≥" if self.verified else "below"
        return (f"given by the caller, {relation} privpub's GS = {self.gs.value:,} ({kind}: "
                f"{self.gs.reason})")

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "query": str(self.query), "m": self.m,
                "sensitivity": self.sensitivity, "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: object, parameters: Mapping[str, Any]) -> LaplaceMechanism:
        p = parameters
        graph = validate.field(p, "graph")
        if not isinstance(graph, dict):
            raise ArtifactError("field 'graph' must be a JSON object")
        return cls(validate.field(p, "epsilon"), as_query(validate.field(p, "query")),
                   validate.field(p, "m"), sensitivity=validate.field(p, "sensitivity"),
                   graph_facts=graph)

    def error_bound(self) -> tuple[int, float]:
        """(Σ, Γ = 1): Pr[|A(I) − q(I)| ≥ Σ] ≤ 1/m for every I."""
        return laplace_bound(self.scale, 1 / self.m), 1.0

    def guarantee(self) -> Guarantee:
        eps = self.epsilon
        directed = self.graph_facts.get("directed", True)
        s = self.sensitivity
        claims = graph_claims(self.graph_facts)
        unverified = "" if self.verified else (
            f"unverified: rests on the sensitivity you gave, {s:,}. privpub's figure for "
            f"{self.query.name} is {self.gs.value:,}, an upper bound it cannot tighten "
            f"({self.gs.reason}); the claim holds only if no single tuple changes q by more "
            f"than {s:,}, which privpub has not checked.")
        claims.extend(neighbour_claims(
            eps, directed, self.verified,
            f"The noise is discrete Laplace of scale S/ε = {self.scale:.4g} with S = {s:,} "
            f"({self.source}).", unverified))
        sigma, _ = self.error_bound()
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"Pr[|A(I) − q(I)| ≥ {sigma:,}] ≤ 1/m (Γ = 1) for every graph.", "Def. 2.1"))
        return Guarantee(f"Laplace (GS) ({self.query.name}, ε = {eps}, m = {self.m:,}, "
                         f"sensitivity = {s:,})", tuple(claims))

    def draw(self, value: int, bits: Bits) -> int:
        return value + bits.discrete_laplace(scale_up(self.scale))

    def noise_law(self) -> NoiseLaw:
        """q(I) + DLap(b), b the scale the sampler uses."""
        return NoiseLaw(DISCRETE_LAPLACE, float(scale_up(self.scale)))

    def value_range(self) -> QueryRange:
        """[0, max] holding q(I) on every graph over m nodes."""
        return query_range(self.query, self.m)

    @classmethod
    def for_graph(cls, epsilon: float, query: CQ | str, graph: Graph, *,
                  sensitivity: int | None = None) -> LaplaceMechanism:
        return cls(epsilon, checked_inputs(graph, query), graph.m, sensitivity=sensitivity,
                   graph_facts=facts_of(graph))

    def answer(self, graph: Graph, seed: SeedLike = None, *,
               clamp: bool = False) -> GraphAnswer:
        """A(I) for this graph; ``clamp=True`` returns it clamped to the query's
        range (:meth:`GraphAnswer.clamped`: post-processing, no privacy cost)."""
        check_graph_domain(graph, self.m)
        check_clamp(clamp)
        source = resolve_seed(seed)
        value = self.draw(count(graph, self.query), Bits(source.derive(self.name)))
        me = LaplaceMechanism(self.epsilon, self.query, self.m, sensitivity=self.sensitivity,
                              graph_facts=facts_of(graph))
        out = GraphAnswer(value, self.name, me.parameters(), source.policy)
        return out.clamped() if clamp else out
