"""What every graph mechanism shares: its parameter checks (ε, the graph's
domain, ``clamp``), the facts about a graph its guarantee depends on, and
the claims built from them (the neighbour notions, the PTLM adversary, an
undirected friendship, a derived domain).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.guarantee import Claim
from privpub.graphs.graph import Graph, check_graph


def check_epsilon(value: Any) -> float:
    """ε, the privacy loss: a positive real."""
    eps = validate.real("epsilon", value)
    if eps <= 0:
        raise ParameterError(f"epsilon must be positive, got {eps}")
    return eps


def graph_claims(graph_facts: Mapping[str, Any]) -> list[Claim]:
    """What every graph guarantee states about the graph itself: that a domain size
    m derived from the data is published with it."""
    claims = []
    if graph_facts.get("m_derived"):
        claims.append(Claim(
            "public domain", False,
            f"m = {graph_facts['m']:,} was derived from the node ids in the data, so "
            "publishing it reveals the number of nodes; the claims below assume m is public "
            "(pass m= to the Graph to declare it).", "Sec. 2.1 (the domain is public)"))
    return claims


#: Who Theorem 2.6 and Theorem 2.12 protect against (Defs. 2.10, 2.11), in words.
PTLM = ("PTLM adversary (planar, Def. 2.11: knows |I|; total log-submodular, Def. 2.10: "
        "for every set Q of tuples the marginal P_Q of his prior is log-submodular, which "
        "tuple-independent and negatively correlated priors are and positively correlated "
        "ones are not)")

INDISTINGUISHABILITY = "ε-indistinguishability (replace one tuple, Def. 2.7)"
DIFFERENTIAL_PRIVACY = "ε-differential privacy (add or remove one tuple)"


def undirected_edge_claim() -> Claim:
    """What Theorem 2.6 does not give for a friendship of an undirected graph."""
    return Claim(
        "privacy of an undirected edge", False,
        "this graph is undirected, stored as a symmetric R: a friendship is the two tuples "
        "R(u, v), R(v, u). An adversary who knows the graph is undirected holds a prior with "
        "R(u, v) ⇔ R(v, u): a positive correlation, so his prior is not total "
        "log-submodular (Def. 2.10: on Q = {R(u, v), R(v, u)}, P_Q({R(u, v)})·P_Q({R(v, u)}) "
        "= 0 < P_Q(∅)·P_Q(Q) whenever he is unsure of the friendship), and he is outside the "
        "PTLM class the theorem covers; no bound is claimed for him.",
        "Def. 2.10 (PTLM), Theorem 2.6")


def neighbour_claims(eps: float, directed: bool, holds: bool, noise: str,
                     unverified: str = "") -> list[Claim]:
    """The ε-indistinguishability (replacement) and ε-differential privacy
    (addition or removal) claims of a q(I) + DLap(S/ε) answer, S bounding the
    change of q under both. ``holds`` False with ``unverified`` set: S is the
    caller's figure, below privpub's upper bound."""
    unit = ("each tuple R(u, v)" if directed else
            f"each tuple R(u, v); an undirected friendship is two tuples, so it is protected "
            f"at 2ε = {2 * eps} (group privacy: replacing a friendship replaces two tuples, "
            "removing one removes two)")
    head = unverified + " If so: " if unverified else ""
    return [
        Claim(INDISTINGUISHABILITY, holds,
              f"{head}ε = {eps} for {unit}, against any adversary: for instances I, I' of the "
              "same size with I + t = I' + t' (one tuple replaced by another, the paper's "
              "neighbours), every output is at most e^ε times as likely on I as on I'. "
              f"{noise}", "Dwork, McSherry, Nissim, Smith 2006; paper Def. 2.7, Sec. 2.4"),
        Claim(DIFFERENTIAL_PRIVACY, holds,
              f"{head}the same ε = {eps} for {unit} when I' = I + t or I = I' + t: q is "
              "monotone, so the sensitivity bounding a replacement is the largest gain from "
              "adding one tuple, and it bounds an addition or a removal as well.",
              "Dwork, McSherry, Nissim, Smith 2006; paper Sec. 2.4 (the two notions)"),
    ]


def facts_of(graph: Graph) -> dict[str, Any]:
    """The facts about ``graph`` its guarantee depends on (recorded in the parameters)."""
    return {"m": graph.m, "m_derived": graph.m_derived, "directed": graph.directed}


def check_graph_domain(graph: Graph, m: int) -> None:
    """``graph`` is a Graph over the m nodes the mechanism was built for."""
    if check_graph(graph).m != m:
        raise ParameterError(f"the mechanism was built for m = {m:,} but the graph has "
                             f"m = {graph.m:,}")


def check_clamp(clamp: Any) -> None:
    """``clamp`` is a bool (a truthy string would silently clamp)."""
    if not isinstance(clamp, bool):
        raise ParameterError(f"clamp must be True or False, got {clamp!r}")
