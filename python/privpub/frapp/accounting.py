"""FRAPP's privacy calculators (αβ paper Sec. 4.3; Agrawal & Haritsa's γ-amplification).

Plain functions: the matrix entries, γ_frapp for a (d, γ) request per
record, the worst per-record leakage, and exact posteriors on small domains
for checking the claims numerically.
"""

from __future__ import annotations

import math

import numpy as np

from privpub.core.errors import ParameterError
from privpub.core.validate import probability


def frapp_off_diagonal(gamma_frapp: float, m: int) -> float:
    """FRAPP's off-diagonal entry (1 − γ_frapp)/(m − 1)."""
    return (1 - probability("gamma_frapp", gamma_frapp)) / (m - 1)


def frapp_amplification(gamma_frapp: float, m: int) -> float:
    """The largest ratio of two entries in a column of FRAPP's matrix,
    R = γ_frapp (m − 1)/(1 − γ_frapp) (γ-amplification of Agrawal–Haritsa)."""
    return probability("gamma_frapp", gamma_frapp, open_high=True) * (m - 1) / (1 - gamma_frapp)


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
    d = probability("d", d, open_low=True, open_high=True)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
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


def rho_frapp(k: float, gamma: float, epsilon: float) -> float:
    """Sec. 5's bound for FRAPP: ρ = 2k(1−γ)/γ · √ln(2/ε)."""
    return 2 * k * (1 - gamma) / gamma * math.sqrt(math.log(2 / epsilon))
