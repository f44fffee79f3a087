"""What every graph mechanism shares: its parameter checks (ε, the graph's
domain, ``clamp``), the facts about a graph its guarantee depends on, and
the claims built from them (the neighbour notions, the PTLM adversary, an
undirected friendship, a derived domain), and Algorithm 2.1's claims
(:class:`~privpub.graphs.mechanism.RelationshipMechanism` assembles them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.guarantee import DIFFERENTIAL_PRIVACY, INDISTINGUISHABILITY, Claim
from privpub.graphs.graph import Graph, check_graph

#: What each graph mechanism's parameters mean, for the release card
#: (:class:`~privpub.core.capabilities.DescribesParameters`): the relationship-privacy
#: paper's letters ("—" for none) and meanings.
GRAPH_PARAMETERS = {
    "epsilon": ("ε", "privacy loss"),
    "delta": ("δ", "δ of (ε, δ)-differential privacy"),
    "gamma": ("γ", "the uniform branch's bound of Algorithm 2.1"),
    "query": ("q", "the CQ(≠) query answered"),
    "queries": ("q_1 … q_k", "the CQ(≠) queries answered"),
    "m": ("m", "nodes of the graph's domain"),
    "lambda": ("λ", "the noise multiplier (scale λ/ε)"),
    "lambdas": ("λ_i", "each query's noise multiplier"),
    "p": ("p", "probability of the uniform branch"),
    "min_with_gs": ("—", "whether λ is capped by the global sensitivity"),
    "branch": ("—", "which branch of the mechanism answered"),
    "sensitivity": ("GS", "the query's global sensitivity"),
    "beta": ("β", "β of β-smooth sensitivity"),
    "graph": ("—", "public facts of the graph (size, directedness)"),
}


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
              f"{noise}", "Dwork, McSherry, Nissim, Smith 2006; paper Def. 2.7, Sec. 2.4",
              epsilon=eps),
        Claim(DIFFERENTIAL_PRIVACY, holds,
              f"{head}the same ε = {eps} for {unit} when I' = I + t or I = I' + t: q is "
              "monotone, so the sensitivity bounding a replacement is the largest gain from "
              "adding one tuple, and it bounds an addition or a removal as well.",
              "Dwork, McSherry, Nissim, Smith 2006; paper Sec. 2.4 (the two notions)",
              epsilon=eps),
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


# ---- Algorithm 2.1's claims (RelationshipMechanism) -------------------------------------------


def sensitivity_text(gs: Any) -> str:
    """GS_q as a guarantee states it: its value, whether exact, and why."""
    return f"GS = {gs.value:,} ({'exact' if gs.exact else 'an upper bound'}: {gs.reason})"


def noise_parameter_claim(gs_text: str, lam: float, scale: float, capped: bool) -> Claim:
    """Which of λ and GS_q the Laplace branch of min(λ, GS) used (``capped``: GS_q)."""
    return Claim(
        "noise parameter min(λ, GS)", True,
        (f"{gs_text} < λ = {lam:.4g}, so the Laplace branch adds noise of scale "
         f"GS/ε = {scale:.4g}" if capped else
         f"λ = {lam:.4g} ≤ {gs_text}, so the Laplace branch keeps λ/ε = "
         f"{scale:.4g}, as Algorithm 2.1 states") + ".",
        "Sec. 5 (an improved algorithm could set λ to min(GS_q, λ))")


def adversarial_privacy_claim(query: str, stable: str, m: int, eps: float, gamma: float,
                              capped: bool) -> Claim:
    """Theorem 2.6's (ε, γ)-adversarial privacy against (δ, k)-bounded PTLM adversaries
    for a stable query (``stable``: why it is), with Theorem 2.12's γ = 0 against every
    PTLM adversary when the noise is GS_q's (``capped``)."""
    delta, k = math.log(m) / m, math.log(m)
    return Claim(
        "(ε, γ)-adversarial privacy", True,
        f"{query} is {stable}. For each tuple t of R: every "
        f"(δ, k)-bounded {PTLM} with δ = ln m/m = {delta:.4g} (Def. 2.4: no tuple believed "
        f"with probability ≥ δ other than at most k = ln m = {k:.3g} known tuples) has "
        f"Pr[t | A] ≤ e^ε·Pr[t] + γ with ε = {eps}, γ = {gamma}. "
        + ("Since this answer is also ε-indistinguishable (below), the bound holds with "
           "γ = 0 against every PTLM adversary, bounded or not (Theorem 2.12)."
           if capped else
           "Adversaries outside that class (positively correlated priors, more known "
           "tuples, or beliefs ≥ δ) are not covered."),
        "Theorem 2.6 (Defs. 2.4, 2.10, 2.11; Props. 3.7, 3.8)"
        + (", Theorem 2.12" if capped else ""))


def not_indistinguishable_claims(scale: float, gs_text: str, offer_min: bool) -> list[Claim]:
    """Why Algorithm 2.1 with noise λ/ε is neither ε-indistinguishable nor ε-differentially
    private (``offer_min``: name min_with_gs=True as the way to be)."""
    why = (f"the Laplace scale λ/ε = {scale:.4g} follows the adversary class, not "
           f"the global sensitivity ({gs_text}); use LaplaceMechanism"
           + (" or min_with_gs=True" if offer_min else "") + " for that guarantee.")
    return [Claim(INDISTINGUISHABILITY, False, why, "Sec. 2.4"),
            Claim(DIFFERENTIAL_PRIVACY, False, why, "Sec. 2.4")]


def usefulness_claim(sigma: int, big_gamma: float, uniform: float, scale: float) -> Claim:
    """Theorem 2.2's (Σ, Γ)-usefulness of Algorithm 2.1, the uniform branch taken with
    probability ``uniform`` = p/γ."""
    return Claim(
        "(Σ, Γ)-usefulness", True,
        f"for every graph, Pr[|A(I) − q(I)| ≥ {sigma:,}] ≤ Γ/m with Γ = 2g/γ = "
        f"{big_gamma:.4g}: the uniform branch has probability p/γ = {uniform:.3g}"
        f", and the discrete Laplace of scale {scale:.4g} exceeds Σ with at most that "
        "probability.", "Def. 2.1, Theorem 2.2")
