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
  q(I) + Lap(GS_q/ε), ε-indistinguishable.

"log" in the paper is the natural log (DESIGN.md). Lap(b) has scale b. The
noise is the discrete Laplace of scale b, sampled exactly
(:mod:`privpub.graphs.noise`, Canonne–Kamath–Steinke), so no floating-point
rendering leaks; b is rounded up to the next double.

Privacy is per tuple of R. An undirected graph stores each friendship as two
tuples; the guarantees say what that means for a friendship.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from privpub.core import validate
from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import Release, register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.graphs.analysis import stability
from privpub.graphs.count import checked_inputs, count
from privpub.graphs.graph import Graph, check_graph
from privpub.graphs.noise import Bits, laplace_bound, scale_up
from privpub.graphs.query import CQ, as_query
from privpub.graphs.sensitivity import Sensitivity, global_sensitivity


def _epsilon(value: Any) -> float:
    eps = validate.real("epsilon", value)
    if eps <= 0:
        raise ParameterError(f"epsilon must be positive, got {eps}")
    return eps


def _graph_claims(graph_facts: Mapping[str, Any]) -> list[Claim]:
    claims = []
    if graph_facts.get("m_derived"):
        claims.append(Claim(
            "public domain", False,
            f"m = {graph_facts['m']:,} was derived from the node ids in the data, so "
            "publishing it reveals the number of nodes; the claims below assume m is public "
            "(pass m= to the Graph to declare it).", "Sec. 2.1 (the domain is public)"))
    return claims


def undirected_edge_claim() -> Claim:
    """What Theorem 2.6 does not give for a friendship of an undirected graph."""
    return Claim(
        "privacy of an undirected edge", False,
        "this graph is undirected, stored as a symmetric R: a friendship is the two tuples "
        "R(u, v), R(v, u). An adversary who knows the graph is undirected holds a prior with "
        "R(u, v) ⇔ R(v, u), which is not log-submodular, so he is outside the PTLM class the "
        "theorem covers; no bound is claimed for him.", "Sec. 2.5 (PTLM), Theorem 2.6")


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

    name = "relationship-alg2.1"

    def __init__(self, epsilon: float, gamma: float, query: CQ | str, m: int, *,
                 min_with_gs: bool = False, graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = _epsilon(epsilon)
        self.gamma = validate.probability("gamma", gamma, open_low=True)
        if not isinstance(min_with_gs, bool):
            raise ParameterError(f"min_with_gs must be True or False, got {min_with_gs!r}")
        self.min_with_gs = min_with_gs
        self.query = as_query(query)
        self.m = validate.count("m", m, minimum=2)
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
    def from_parameters(cls, schema: Any, parameters: Mapping[str, Any]) -> RelationshipMechanism:
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
        m, eps, gamma = self.m, self.epsilon, self.gamma
        delta, k = math.log(m) / m, math.log(m)
        sigma, big_gamma = self.error_bound()
        directed = self.graph_facts.get("directed", True)
        gs = self.gs
        gs_text = f"GS = {gs.value:,} ({'exact' if gs.exact else 'an upper bound'}: {gs.reason})"
        claims = _graph_claims(self.graph_facts)
        if self.min_with_gs:
            claims.append(Claim(
                "noise parameter min(λ, GS)", True,
                (f"{gs_text} < λ = {self.lam:.4g}, so the Laplace branch adds noise of scale "
                 f"GS/ε = {self.scale:.4g}" if self.branch == "global sensitivity" else
                 f"λ = {self.lam:.4g} ≤ {gs_text}, so the Laplace branch keeps λ/ε = "
                 f"{self.scale:.4g}, as Algorithm 2.1 states") + ".",
                "Sec. 5 (an improved algorithm could set λ to min(GS_q, λ))"))
        claims.append(Claim(
            "(ε, γ)-adversarial privacy", True,
            f"{self.query.name} is {self.stability.reason}. For each tuple t of R: every "
            "(δ, k)-bounded PTLM adversary (planar: knows |I|; log-submodular prior) with "
            f"δ = ln m/m = {delta:.4g} (no tuple believed with probability "
            f"≥ δ other than at most k = ln m = {k:.3g} known tuples) has Pr[t | A] ≤ "
            f"e^ε·Pr[t] + γ with ε = {eps}, γ = {gamma}. "
            + ("Since this answer is also ε-indistinguishable (below), the bound holds with "
               "γ = 0 against every PTLM adversary, bounded or not (Theorem 2.12)."
               if self.branch == "global sensitivity" else
               "Adversaries with stronger priors (more known tuples, or beliefs ≥ δ) are not "
               "covered."),
            "Theorem 2.6 (Props. 3.7, 3.8)" + (", Theorem 2.12"
                                               if self.branch == "global sensitivity" else "")))
        if self.branch == "global sensitivity":
            unit = ("each tuple R(u, v)" if directed else
                    f"each tuple R(u, v); an undirected edge is two tuples, so a friendship is "
                    f"protected at 2ε = {2 * eps} (group privacy)")
            claims.append(Claim(
                "ε-indistinguishability", True,
                f"ε = {eps} for {unit}, against any adversary: the Laplace branch is "
                f"q(I) + DLap(GS/ε) with {gs_text}, and the uniform branch (probability "
                f"p/γ = {float(self.p) / gamma:.3g}) does not look at the data, so each "
                "output's probability changes by at most e^ε between neighbours.",
                "Dwork, McSherry, Nissim, Smith 2006; paper Sec. 2.4"))
        else:
            if not directed:
                claims.append(undirected_edge_claim())
            claims.append(Claim(
                "ε-indistinguishability", False,
                f"the Laplace scale λ/ε = {self.scale:.4g} follows the adversary class, not "
                f"the global sensitivity ({gs_text}); use LaplaceMechanism"
                + ("" if self.min_with_gs else " or min_with_gs=True") + " for that guarantee.",
                "Sec. 2.4"))
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"for every graph, Pr[|A(I) − q(I)| ≥ {sigma:,}] ≤ Γ/m with Γ = 2g/γ = "
            f"{big_gamma:.4g}: the uniform branch has probability p/γ = {float(self.p) / gamma:.3g}"
            f", and the discrete Laplace of scale {self.scale:.4g} exceeds Σ with at most that "
            "probability.", "Def. 2.1, Theorem 2.2"))
        name = "Algorithm 2.1, min(λ, GS)" if self.min_with_gs else "Algorithm 2.1"
        return Guarantee(f"{name} ({self.query.name}, ε = {eps}, γ = {gamma}, "
                         f"m = {m:,}, λ = {self.lam:.4g}"
                         + (f", noise parameter {self.noise_lambda:.4g}" if self.min_with_gs
                            else "") + ")", tuple(claims))

    def draw(self, value: int, bits: Bits) -> tuple[str, int]:
        """(branch, output) for the true value q(I); the branch is for tests
        only and is never published."""
        if bits.bernoulli(self.p / Fraction(self.gamma)):
            return "uniform", bits.randbelow(self.m ** self.v + 1)
        return "laplace", value + bits.discrete_laplace(scale_up(self.scale))

    @classmethod
    def for_graph(cls, epsilon: float, gamma: float, query: CQ | str, graph: Graph, *,
                  min_with_gs: bool = False) -> RelationshipMechanism:
        return cls(epsilon, gamma, checked_inputs(graph, query), graph.m,
                   min_with_gs=min_with_gs, graph_facts=_facts(graph))

    def answer(self, graph: Graph, seed: SeedLike = None) -> GraphAnswer:
        """A(I) for this graph (its m must be the mechanism's)."""
        _check_graph(graph, self.m)
        source = resolve_seed(seed)
        _, value = self.draw(count(graph, self.query), Bits(source.derive(self.name)))
        return GraphAnswer(value, self.name, self.with_facts(_facts(graph)).parameters(),
                           source.policy)

    def with_facts(self, graph_facts: Mapping[str, Any]) -> RelationshipMechanism:
        """This mechanism, recording the facts of the graph it answered on."""
        return RelationshipMechanism(self.epsilon, self.gamma, self.query, self.m,
                                     min_with_gs=self.min_with_gs, graph_facts=graph_facts)


@register_mechanism
class LaplaceMechanism:
    """DMNS: q(I) + Lap(GS_q/ε), with GS_q from :func:`global_sensitivity` or given.

    Examples
    --------
    >>> from privpub.graphs import triangle
    >>> LaplaceMechanism(0.5, triangle(), m=4039).sensitivity
    12111
    """

    name = "laplace-global-sensitivity"

    def __init__(self, epsilon: float, query: CQ | str, m: int, *,
                 sensitivity: int | None = None, graph_facts: Mapping[str, Any] | None = None):
        self.epsilon = _epsilon(epsilon)
        self.query = as_query(query)
        self.m = validate.count("m", m, minimum=2)
        derived = global_sensitivity(self.query, self.m)
        if sensitivity is None:
            self.sensitivity, self.source = derived.value, derived.reason
            self.exact = derived.exact
        else:
            self.sensitivity = validate.count("sensitivity", sensitivity, minimum=1)
            self.source, self.exact = "given by the caller (not verified)", False
        self.graph_facts = dict(graph_facts or {})

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "query": str(self.query), "m": self.m,
                "sensitivity": self.sensitivity, "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: Any, parameters: Mapping[str, Any]) -> LaplaceMechanism:
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
        unit = ("each tuple R(u, v)" if directed else
                f"each tuple R(u, v); an undirected edge is two tuples, so a friendship is "
                f"protected at 2ε = {2 * eps} (group privacy)")
        gs = self.sensitivity
        claims = _graph_claims(self.graph_facts)
        claims.append(Claim(
            "ε-indistinguishability", True,
            f"ε = {eps} for {unit}, against any adversary: discrete Laplace of scale GS/ε = "
            f"{self.scale:.4g} with GS = {gs:,} ({self.source}).",
            "Dwork, McSherry, Nissim, Smith 2006; paper Sec. 2.4"))
        sigma, _ = self.error_bound()
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"Pr[|A(I) − q(I)| ≥ {sigma:,}] ≤ 1/m (Γ = 1) for every graph.", "Def. 2.1"))
        return Guarantee(f"Laplace (GS) ({self.query.name}, ε = {eps}, m = {self.m:,}, "
                         f"GS = {gs:,})", tuple(claims))

    def draw(self, value: int, bits: Bits) -> int:
        return value + bits.discrete_laplace(scale_up(self.scale))

    @classmethod
    def for_graph(cls, epsilon: float, query: CQ | str, graph: Graph, *,
                  sensitivity: int | None = None) -> LaplaceMechanism:
        return cls(epsilon, checked_inputs(graph, query), graph.m, sensitivity=sensitivity,
                   graph_facts=_facts(graph))

    def answer(self, graph: Graph, seed: SeedLike = None) -> GraphAnswer:
        _check_graph(graph, self.m)
        source = resolve_seed(seed)
        value = self.draw(count(graph, self.query), Bits(source.derive(self.name)))
        me = LaplaceMechanism(self.epsilon, self.query, self.m,
                              sensitivity=self.sensitivity if not self.exact else None,
                              graph_facts=_facts(graph))
        return GraphAnswer(value, self.name, me.parameters(), source.policy)


def _facts(graph: Graph) -> dict[str, Any]:
    return {"m": graph.m, "m_derived": graph.m_derived, "directed": graph.directed}


def _check_graph(graph: Graph, m: int) -> None:
    if check_graph(graph).m != m:
        raise ParameterError(f"the mechanism was built for m = {m:,} but the graph has "
                             f"m = {graph.m:,}")


class GraphAnswer(Release):
    """A released query answer with its mechanism, parameters and seed policy."""

    kind = "graph-answer"

    def __init__(self, value: int, mechanism: str, parameters: Mapping[str, Any],
                 seed_policy: str, **kwargs: Any):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArtifactError(f"field 'value' must be an integer, got {value!r}")
        super().__init__(mechanism, parameters, seed_policy, **kwargs)
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the value as a string (it may exceed 2^53)."""
        return self.envelope() | {"value": str(self.value)}

    @classmethod
    def from_dict(cls, meta: Mapping[str, Any]) -> GraphAnswer:
        """Rebuild and re-validate (the parameters are checked as by the constructor)."""
        env = Release.read_envelope(meta, cls.kind)
        raw = validate.field(meta, "value", "metadata")
        if not isinstance(raw, str) or not raw.lstrip("-").isdigit():
            raise ArtifactError(f"field 'value' must be a decimal integer string, got {raw!r}")
        return cls(int(raw), **env)

    def __repr__(self) -> str:
        return f"GraphAnswer({self.value}, mechanism={self.mechanism!r})"
