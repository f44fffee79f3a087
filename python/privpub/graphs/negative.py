"""Algorithm 2.1 protecting against negative leakage (Rastogi et al., PODS
2009, Sec. 4.3).

What the paper prescribes: the extension guarantees P(¬t | O) ≤ e^ε P(¬t) + γ
(no inference of a tuple's *absence*) besides Theorem 2.6's bound on
P(t | O); it works for queries that are both stable and dense (Δ and every
connected pattern with a cycle are; ∨ is not), "by using a larger λ": λ has
to be O(log^g m) rather than Algorithm 2.1's O(log^{g−1} m). Everything else
is Algorithm 2.1. The proof and the constant are in the full version, not
in this paper.

What we implement and why: λ = (8(v+1)g² ln m)^g, Algorithm 2.1's base
raised to g instead of g − 1, which is of the stated order and at least
Algorithm 2.1's λ times that base (≥ 8(v+1)g² ln 2 > 1). p = g/m as in
Algorithm 2.1. Because λ only grows, Theorem 2.6's positive-leakage bound
still holds (Prop. 3.8 needs P(LS_q > λ) small, which a larger λ keeps);
the negative-leakage bound is the paper's claim for *some* constant, so the
guarantee states it without claiming it holds for this constant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from privpub.core import validate
from privpub.core.errors import ArtifactError, ParameterError, QueryError
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY, Claim, Guarantee
from privpub.core.release import register_mechanism
from privpub.graphs.analysis import dense
from privpub.graphs.claims import (
    GRAPH_PARAMETERS,
    PTLM,
    facts_of,
    undirected_edge_claim,
)
from privpub.graphs.exact import checked_inputs
from privpub.graphs.graph import Graph
from privpub.graphs.mechanism import RelationshipMechanism
from privpub.graphs.query import CQ, as_query


@register_mechanism
class NegativeLeakageMechanism(RelationshipMechanism):
    """Sec. 4.3's negative-leakage variant of Algorithm 2.1 for one stable and
    dense query; λ = (8(v+1)g² ln m)^g (see the module notes).

    Examples
    --------
    >>> from privpub.graphs import triangle
    >>> mech = NegativeLeakageMechanism(0.5, 0.1, triangle(), m=4039)
    >>> f"{mech.lam:.4g}"
    '1.368e+10'
    """

    name: ClassVar[str] = "relationship-negative-leakage"
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings = GRAPH_PARAMETERS

    def __init__(self, epsilon: float, gamma: float, query: CQ | str, m: int, *,
                 graph_facts: Mapping[str, Any] | None = None):
        super().__init__(epsilon, gamma, query, m, graph_facts=graph_facts)
        self.dense_check = dense(self.query)
        if not self.dense_check.dense:
            raise QueryError(f"the negative-leakage variant needs a stable and dense query; "
                             f"{self.query.name} is "
                             f"{self.dense_check.explain()} (Sec. 4.3)")

    @classmethod
    def for_graph(cls, epsilon: float, gamma: float, query: CQ | str, graph: Graph, *,
                  min_with_gs: bool = False) -> NegativeLeakageMechanism:
        """As :meth:`RelationshipMechanism.for_graph`; ``min_with_gs=True`` (noise
        from the global sensitivity where it is below λ) is refused: Sec. 4.3's
        negative-leakage bound is proved for the λ calibration alone."""
        if min_with_gs is not False:
            raise ParameterError("min_with_gs applies to Algorithm 2.1 (RelationshipMechanism); "
                                 "the negative-leakage variant's bound (Sec. 4.3) is proved "
                                 "for its λ alone, so it takes no min_with_gs")
        return cls(epsilon, gamma, checked_inputs(graph, query), graph.m,
                   graph_facts=facts_of(graph))

    def with_facts(self, graph_facts: Mapping[str, Any]) -> NegativeLeakageMechanism:
        return NegativeLeakageMechanism(self.epsilon, self.gamma, self.query, self.m,
                                        graph_facts=graph_facts)

    @property
    def lam(self) -> float:
        """λ = (8(v+1)g² ln m)^g: of order log^g m, as Sec. 4.3 requires."""
        return (8 * (self.v + 1) * self.g**2 * math.log(self.m)) ** self.g

    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "gamma": self.gamma, "query": str(self.query),
                "m": self.m, "lambda": self.lam, "p": float(self.p),
                "graph": self.graph_facts}

    @classmethod
    def from_parameters(cls, schema: object,
                        parameters: Mapping[str, Any]) -> NegativeLeakageMechanism:
        p = parameters
        graph = validate.field(p, "graph")
        if not isinstance(graph, dict):
            raise ArtifactError("field 'graph' must be a JSON object")
        mech = cls(validate.field(p, "epsilon"), validate.field(p, "gamma"),
                   as_query(validate.field(p, "query")), validate.field(p, "m"),
                   graph_facts=graph)
        validate.same("lambda", validate.field(p, "lambda"), mech.lam)
        validate.same("p", validate.field(p, "p"), float(mech.p))
        return mech

    def guarantee(self) -> Guarantee:
        m, eps, gamma = self.m, self.epsilon, self.gamma
        delta, k = math.log(m) / m, math.log(m)
        sigma, big_gamma = self.error_bound()
        claims = []
        for claim in super().guarantee().claims:
            if claim.name == "(Σ, Γ)-usefulness":
                break
            if claim.name not in (INDISTINGUISHABILITY, DIFFERENTIAL_PRIVACY,
                                  "privacy of an undirected edge"):
                claims.append(claim)
        claims.append(Claim(
            "no negative leakage", False,
            f"{self.query.name} is stable and dense, the class Sec. 4.3 names. The paper "
            f"states that with λ of order log^g m every (δ, k)-bounded {PTLM} "
            f"(δ = {delta:.4g}, k = {k:.3g}) has Pr[¬t | A] ≤ e^ε·Pr[¬t] + γ, with the "
            f"constant in its full version; λ = {self.lam:.4g} here is of that order, but "
            "the bound is not established for this constant, so it is not claimed.",
            "Sec. 4.3 (negative leakage)"))
        if not self.graph_facts.get("directed", True):
            claims.append(undirected_edge_claim())
        why = (f"the Laplace scale λ/ε = {self.scale:.4g} follows the adversary class, not "
               f"the global sensitivity (GS = {self.gs.value:,}).")
        claims.append(Claim(INDISTINGUISHABILITY, False, why, "Sec. 2.4"))
        claims.append(Claim(DIFFERENTIAL_PRIVACY, False, why, "Sec. 2.4"))
        claims.append(Claim(
            "(Σ, Γ)-usefulness", True,
            f"for every graph, Pr[|A(I) − q(I)| ≥ {sigma:,}] ≤ Γ/m with Γ = 2g/γ = "
            f"{big_gamma:.4g}.", "Def. 2.1"))
        return Guarantee(f"Algorithm 2.1, negative-leakage variant ({self.query.name}, "
                         f"ε = {eps}, γ = {gamma}, m = {m:,}, λ = {self.lam:.4g})",
                         tuple(claims))
