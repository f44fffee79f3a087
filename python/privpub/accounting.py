"""Privacy and utility calculators shared by the mechanisms.

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
from dataclasses import dataclass

import numpy as np

from privpub.errors import ParameterError


def _probability(name: str, value: float, *, open_low: bool = False,
                 open_high: bool = False) -> float:
    value = float(value)
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if open_high else value <= 1
    if not (low_ok and high_ok) or math.isnan(value):
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise ParameterError(f"{name} must be in {lo}0, 1{hi}, got {value!r}")
    return value


# ---- the exact posterior of a d-independent adversary ------------------------------------


def alphabeta_posterior(prior: float, alpha: float, beta: float, in_view: bool) -> float:
    """Pr[t ∈ I | V] for the αβ algorithm and a tuple-independent adversary.

    The α- and β-steps decide each tuple independently, so under a
    tuple-independent prior the posterior of t depends only on whether t is
    in V (proof of Theorem 4.2, Appendix C.1):

    - t ∈ V:  (α+β)p / ((α+β)p + β(1−p))
    - t ∉ V:  (1−α−β)p / ((1−α−β)p + (1−β)(1−p))
    """
    p = _probability("prior", prior)
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
    d = _probability("d", d, open_low=True, open_high=True)
    return alphabeta_posterior(d, a, b, True), min(1.0, (1 - a - b) / (1 - b))


def is_alphabeta_private(alpha: float, beta: float, d: float, gamma: float) -> bool:
    """Whether the αβ algorithm with (α, β) is exactly (d, γ)-private (Def. 2.3).

    Uses :func:`alphabeta_leakage`, so it is the exact condition; Theorem 4.2's
    conditions (see :func:`theorem_4_2_holds`) are sufficient for it.
    """
    gamma = _probability("gamma", gamma, open_low=True, open_high=True)
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
    epsilon = _probability("epsilon", epsilon, open_low=True, open_high=True)
    return math.sqrt(2 * (r + 1) * math.log(2 / epsilon))


def rho_alphabeta(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 5's bound for αβ: ρ = 2√(2k(1−γ)/γ · ln(2/ε))."""
    return 2 * math.sqrt(2 * k * (1 - gamma) / gamma * math.log(2 / epsilon))


def rho_alphabeta_sec42(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 4.2's closed form for α+β = 1/2, β = d/γ: ρ = 2√(k(1−γ)/γ · ln(2/ε))."""
    return 2 * math.sqrt(k * (1 - gamma) / gamma * math.log(2 / epsilon))


def rho_frapp(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 5's bound for FRAPP: ρ = 2k(1−γ)/γ · √ln(2/ε)."""
    return 2 * k * (1 - gamma) / gamma * math.sqrt(math.log(2 / epsilon))


# ---- relations between privacy definitions (Appendix A) -------------------------------------


def relative_delta_from_gamma(d: float, gamma: float) -> float:
    """Proposition A.3: a (d, γ)-private algorithm is (d, δ)-relative-private
    with e^δ = (γ/d)(1−d)/(1−γ)."""
    d = _probability("d", d, open_low=True, open_high=True)
    gamma = _probability("gamma", gamma, open_low=True, open_high=True)
    return math.log(gamma / d * (1 - d) / (1 - gamma))


def gamma_from_relative_delta(d: float, delta: float) -> float:
    """Proposition A.3: a (d, δ)-relative-private algorithm is (d, γ)-private with γ = d e^δ."""
    return _probability("d", d, open_low=True) * math.exp(delta)


def indistinguishability_from_delta(delta: float) -> float:
    """Proposition A.5: (d, δ)-relative privacy implies ε-indistinguishability
    with ε = 2δ + 2 ln 2."""
    if delta < 0:
        raise ParameterError(f"delta must be non-negative, got {delta}")
    return 2 * delta + 2 * math.log(2)


def _check_alpha_beta(alpha: float, beta: float) -> tuple[float, float]:
    a = _probability("alpha", alpha)
    b = _probability("beta", beta)
    if a + b > 1:
        raise ParameterError(f"alpha + beta must be at most 1, got {a} + {b} = {a + b}")
    return a, b


# ---- stated guarantees ----------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One property a mechanism does or does not meet, with its source."""

    name: str
    holds: bool
    statement: str
    source: str


@dataclass(frozen=True)
class Guarantee:
    """The privacy and utility statement a mechanism meets for its parameters."""

    mechanism: str
    claims: tuple[Claim, ...]

    def __getitem__(self, name: str) -> Claim:
        for claim in self.claims:
            if claim.name == name:
                return claim
        raise KeyError(f"no claim {name!r}; claims: {[c.name for c in self.claims]}")

    def __str__(self) -> str:
        lines = [f"Guarantee of {self.mechanism}:"]
        for c in self.claims:
            mark = "holds" if c.holds else "does NOT hold"
            lines.append(f"  - {c.name}: {mark} [{c.source}]")
            lines.extend(f"      {part}" for part in c.statement.split("\n"))
        return "\n".join(lines)


# ---- FRAPP (Sec. 4.3) ------------------------------------------------------------------------


def frapp_off_diagonal(gamma_frapp: float, m: int) -> float:
    """FRAPP's off-diagonal entry (1 − γ_frapp)/(m − 1)."""
    return (1 - _probability("gamma_frapp", gamma_frapp)) / (m - 1)


def frapp_amplification(gamma_frapp: float, m: int) -> float:
    """The largest ratio of two entries in a column of FRAPP's matrix,
    R = γ_frapp (m − 1)/(1 − γ_frapp) (γ-amplification of Agrawal–Haritsa)."""
    return _probability("gamma_frapp", gamma_frapp, open_high=True) * (m - 1) / (1 - gamma_frapp)


def frapp_gamma_for_privacy(d: float, gamma: float, m: int) -> float:
    """The largest γ_frapp giving (d, γ)-privacy per record: R = γ/d, γ_frapp = R/(m − 1 + R).

    ``d`` bounds a record's prior Pr[record = t] (see ``FRAPP.for_privacy``
    for how a tuple prior becomes a record prior).

    Derivation (one record X with prior Pr[X = t] = p ≤ d, published as Y;
    o = (1 − γ_f)/(m − 1) and R = γ_f/o):

    - positive leakage: Pr[X = t | Y = t] = pγ_f/(pγ_f + Σ_{s≠t} Pr[X = s]·o)
      = pR/(pR + 1 − p), increasing in p; ≤ γ at p = d iff R ≤ γ(1−d)/(d(1−γ));
    - negative leakage: for Y = y ≠ t the posterior is p·o/(p·o + Pr[X=y]γ_f +
      rest·o) ≥ p/(p + (1 − p)R), so Pr[X = t | Y]/p ≥ 1/(p + (1 − p)R), whose
      infimum (p → 0, all other mass on y) is 1/R; ≥ d/γ iff R ≤ γ/d.

    γ/d is the smaller bound (d < γ), so R = γ/d: then the worst posterior is
    γ/(1 + γ − d) < γ and the worst ratio is exactly d/γ.
    """
    d = _probability("d", d, open_low=True, open_high=True)
    gamma = _probability("gamma", gamma, open_low=True, open_high=True)
    if d >= gamma:
        raise ParameterError(f"infeasible: d = {d:.6g} ≥ γ = {gamma}")
    r = gamma / d
    return r / (m - 1 + r)


def frapp_record_leakage(gamma_frapp: float, m: int, d: float) -> tuple[float, float]:
    """Worst per-record (posterior, posterior/prior) over priors ≤ d: (dR/(dR + 1 − d), 1/R)."""
    r = frapp_amplification(gamma_frapp, m)
    return d * r / (d * r + 1 - d), 1 / r


def frapp_record_posterior(prior: np.ndarray, gamma_frapp: float, observed: int) -> np.ndarray:
    """Pr[X = s | Y = observed] for every s, for one record with prior ``prior``
    (a probability vector over the m tuples) published by FRAPP. Exact Bayes."""
    prior = np.asarray(prior, dtype=float)
    o = frapp_off_diagonal(gamma_frapp, len(prior))
    likelihood = np.full(len(prior), o)
    likelihood[observed] = gamma_frapp
    joint = prior * likelihood
    return joint / joint.sum()


#: Largest domain / view for the exact set-model FRAPP posterior (it is polynomial
#: in m and |V| but meant for checking small cases).
FRAPP_EXACT_MAX_M = 4096
FRAPP_EXACT_MAX_N = 64


def frapp_posterior(priors: np.ndarray, gamma_frapp: float, view_counts: np.ndarray) -> np.ndarray:
    """Pr[t ∈ I | V] for every tuple t, for FRAPP and a tuple-independent adversary.

    Set model: each tuple s is in I independently with probability
    ``priors[s]``; every tuple of I emits one record through FRAPP's matrix;
    V is the multiset of outputs (``view_counts[s]`` copies of s), so |I| = |V|.
    With A = o·(J + (R − 1)·Id), Pr[V | I] = o^n Σ_j (R−1)^j (n−j)! e_j(I), where
    e_j sums Π c_s over j-subsets of I ∩ supp(V) (the j-matchings of equal
    tuples). The sum over I is a generating polynomial: tuple s contributes
    (1 − p_s) + p_s·x·(1 + c_s·y); the coefficient of x^n y^j gives
    Σ_{|I|=n} Pr[I] e_j(I). Exact, O(m² n²) for all t; small domains only.

    Note the size of V equals |I|: an adversary who knows every other tuple
    (priors 0 or 1, which d-bounded adversaries may have) learns t exactly.
    """
    priors = np.asarray(priors, dtype=float)
    counts = np.asarray(view_counts, dtype=np.int64)
    m, n = len(priors), int(counts.sum())
    if counts.shape != priors.shape:
        raise ParameterError("priors and view_counts must both have one entry per tuple")
    if m > FRAPP_EXACT_MAX_M or n > FRAPP_EXACT_MAX_N:
        raise ParameterError(f"exact FRAPP posterior is for m ≤ {FRAPP_EXACT_MAX_M} and "
                             f"|V| ≤ {FRAPP_EXACT_MAX_N}; got m = {m}, |V| = {n}")
    r = frapp_amplification(gamma_frapp, m)
    jmax = int((counts > 0).sum())

    def factor(s: int, present: bool) -> np.ndarray:
        """Tuple s's generating factor; ``present`` keeps only the t ∈ I term."""
        f = np.zeros((n + 1, jmax + 1))
        if not present:
            f[0, 0] = 1 - priors[s]
        if n >= 1:
            f[1, 0] = priors[s]
            if counts[s] and jmax:
                f[1, 1] = priors[s] * counts[s]
        return f

    def product(fs: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((n + 1, jmax + 1))
        out[0, 0] = 1.0
        for f in fs:
            nxt = np.zeros_like(out)
            for a, b in zip(*np.nonzero(f), strict=True):
                nxt[a:, b:] += f[a, b] * out[: n + 1 - a, : jmax + 1 - b]
            out = nxt
        return out

    weights = np.array([(r - 1) ** j * math.factorial(n - j) for j in range(jmax + 1)])
    free = [factor(s, False) for s in range(m)]
    total = product(free)[n] @ weights
    post = np.empty(m)
    for t in range(m):
        with_t = product(free[:t] + [factor(t, True)] + free[t + 1:])[n] @ weights
        post[t] = with_t / total
    return post
