"""The αβ algorithm's privacy and utility calculators.

Plain functions, each citing the result it implements from Rastogi, Suciu,
Hong, *The Boundary Between Privacy and Utility in Data Publishing* (VLDB
2007), with the corrections listed in DESIGN.md. Probabilities are floats;
the domain size m is an exact int.

Adversaries: a *d-independent* adversary (Def. 2.2) has a tuple-independent
prior with Pr[t] ≤ d (or = 1) for every tuple t. An algorithm is
*(d, γ)-private* (Def. 2.3) if for every such adversary, view V and tuple t
with Pr[t] ≤ d: d/γ ≤ Pr[t|V]/Pr[t] (no negative leakage) and
Pr[t|V] ≤ γ (no positive leakage).
"""

from __future__ import annotations

import math

from privpub.core.errors import ParameterError
from privpub.core.validate import probability

# ---- the exact posterior of a d-independent adversary ------------------------------------


def alphabeta_posterior(prior: float, alpha: float, beta: float, in_view: bool) -> float:
    """Pr[t ∈ I | V] for the αβ algorithm and a tuple-independent adversary.

    The α- and β-steps decide each tuple independently, so under a
    tuple-independent prior the posterior of t depends only on whether t is
    in V (proof of Theorem 4.2, Appendix C.1):

    - t ∈ V:  (α+β)p / ((α+β)p + β(1−p))
    - t ∉ V:  (1−α−β)p / ((1−α−β)p + (1−β)(1−p))
    """
    p = probability("prior", prior)
    a, b = _check_alpha_beta(alpha, beta)
    if in_view:
        num, other = (a + b) * p, b * (1 - p)
    else:
        num, other = (1 - a - b) * p, (1 - b) * (1 - p)
    return num / (num + other) if num + other > 0 else 0.0


def alphabeta_leakage(alpha: float, beta: float, d: float) -> tuple[float, float]:
    """The worst cases over all d-independent adversaries and views, exactly.

    Returns ``(max posterior, min posterior/prior)`` over priors p ∈ (0, d].
    The in-view posterior increases with p, so its maximum is at p = d; the
    ratio posterior/prior is smallest for t ∉ V as p → 0, where it tends to
    (1−α−β)/(1−β) (it is ≥ 1 for t ∈ V since α ≥ 0).
    """
    a, b = _check_alpha_beta(alpha, beta)
    d = probability("d", d, open_low=True, open_high=True)
    return alphabeta_posterior(d, a, b, True), min(1.0, (1 - a - b) / (1 - b))


def is_alphabeta_private(alpha: float, beta: float, d: float, gamma: float) -> bool:
    """Whether the αβ algorithm with (α, β) is exactly (d, γ)-private (Def. 2.3).

    Uses :func:`alphabeta_leakage`, so it is the exact condition; Theorem 4.2's
    conditions (see :func:`theorem_4_2_holds`) are sufficient for it.
    """
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    worst_posterior, worst_ratio = alphabeta_leakage(alpha, beta, d)
    return worst_posterior <= gamma * (1 + 1e-12) and worst_ratio >= d / gamma * (1 - 1e-12)


def theorem_4_2_holds(alpha: float, beta: float, d: float, gamma: float) -> bool:
    """Theorem 4.2's sufficient conditions for (d, γ)-privacy:
    d ≤ γ, β/(α+β) ≥ d(1−γ)/(γ(1−d)) and α+β ≤ 1 − d/γ."""
    a, b = _check_alpha_beta(alpha, beta)
    if not d <= gamma or a + b == 0:
        return False
    return (b / (a + b) >= d * (1 - gamma) / (gamma * (1 - d)) * (1 - 1e-12)
            and a + b <= (1 - d / gamma) * (1 + 1e-12))


def exclusive_worst_posterior(alpha: float, beta: float, d: float) -> float:
    """Worst posterior of a d-exclusive adversary (Def. 6.2) for the αβ algorithm.

    From the proof of Theorem 6.3 (Appendix D.2.1): the worst view holds t and
    no other tuple of t's exclusion set, giving
    (α+β)(1−β)p / ((α+β)(1−β)p + β(1−α−β)(1−p)) at p = d.
    """
    a, b = _check_alpha_beta(alpha, beta)
    num = (a + b) * (1 - b) * d
    return num / (num + b * (1 - a - b) * (1 - d))


# ---- utility --------------------------------------------------------------------------------


def theorem_4_3_r(alpha: float, beta: float, n: int, m: int) -> float:
    """The smallest r with β ≤ r α² n/m (Theorem 4.3's hypothesis)."""
    a, b = _check_alpha_beta(alpha, beta)
    if a == 0:
        raise ParameterError("alpha must be positive for (ρ, ε)-usefulness")
    return b * m / (a * a * n)


def rho_theorem_4_3(r: float, epsilon: float) -> float:
    """ρ = √(2(r+1) ln(2/ε)) of Theorem 4.3 (appendix form, DESIGN.md): the
    estimate's absolute error is below ρ√n with probability ≥ 1 − ε."""
    epsilon = probability("epsilon", epsilon, open_low=True, open_high=True)
    return math.sqrt(2 * (r + 1) * math.log(2 / epsilon))


def rho_alphabeta(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 5's bound for αβ: ρ = 2√(2k(1−γ)/γ · ln(2/ε))."""
    return 2 * math.sqrt(2 * k * (1 - gamma) / gamma * math.log(2 / epsilon))


def rho_alphabeta_sec42(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 4.2's closed form for α+β = 1/2, β = d/γ: ρ = 2√(k(1−γ)/γ · ln(2/ε))."""
    return 2 * math.sqrt(k * (1 - gamma) / gamma * math.log(2 / epsilon))


# ---- relations between privacy definitions (Appendix A) -------------------------------------


def relative_delta_from_gamma(d: float, gamma: float) -> float:
    """Proposition A.3: a (d, γ)-private algorithm is (d, δ)-relative-private
    with e^δ = (γ/d)(1−d)/(1−γ)."""
    d = probability("d", d, open_low=True, open_high=True)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    return math.log(gamma / d * (1 - d) / (1 - gamma))


def gamma_from_relative_delta(d: float, delta: float) -> float:
    """Proposition A.3: a (d, δ)-relative-private algorithm is (d, γ)-private with γ = d e^δ."""
    return probability("d", d, open_low=True) * math.exp(delta)


def indistinguishability_from_delta(delta: float) -> float:
    """Proposition A.5: (d, δ)-relative privacy implies ε-indistinguishability
    with ε = 2δ + 2 ln 2."""
    if delta < 0:
        raise ParameterError(f"delta must be non-negative, got {delta}")
    return 2 * delta + 2 * math.log(2)


def _check_alpha_beta(alpha: float, beta: float) -> tuple[float, float]:
    a = probability("alpha", alpha)
    b = probability("beta", beta)
    if a + b > 1:
        raise ParameterError(f"alpha + beta must be at most 1, got {a} + {b} = {a + b}")
    return a, b
