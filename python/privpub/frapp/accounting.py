"""FRAPP's privacy calculators (αβ paper Sec. 4.3; Agrawal & Haritsa's γ-amplification).

Plain functions: the matrix entries, the likelihood ratios a view gives a
d-independent or d-exclusive adversary, γ_frapp for a (d, γ) request
(Def. 2.3's posterior), and exact posteriors on small domains for checking
the claims numerically.
"""

from __future__ import annotations

import math

import numpy as np

from privpub.core.errors import ParameterError
from privpub.core.validate import probability


def frapp_off_diagonal(gamma_frapp: float, m: int) -> float:
    """FRAPP's off-diagonal entry (1 − γ_frapp)/(m − 1)."""
    if m < 2:
        raise ParameterError(f"FRAPP needs a domain of at least 2 tuples, got m = {m:,}")
    return (1 - probability("gamma_frapp", gamma_frapp)) / (m - 1)


def frapp_amplification(gamma_frapp: float, m: int) -> float:
    """The largest ratio of two entries in a column of FRAPP's matrix,
    R = γ_frapp (m − 1)/(1 − γ_frapp) (γ-amplification of Agrawal–Haritsa)."""
    return probability("gamma_frapp", gamma_frapp, open_high=True) * (m - 1) / (1 - gamma_frapp)


def frapp_epsilon(gamma_frapp: float, m: int) -> float:
    """FRAPP's exact ε under replacement of one record: ln(γ_f/o) = ln R
    (:func:`~privpub.frapp.accounting.frapp_amplification`), for every n
    (derivation in :func:`privpub.frapp.claims._epsilon_claims`)."""
    return math.log(frapp_amplification(gamma_frapp, m))


def frapp_gamma_for_epsilon(epsilon: float, m: int) -> float:
    """The γ_frapp whose :func:`frapp_epsilon` is ε: γ_f/o = e^ε, γ_f = e^ε/(e^ε + m − 1)."""
    return 1 / (1 + (m - 1) * math.exp(-epsilon))


def frapp_prior_for(gamma_frapp: float, gamma: float, m: int, n: int) -> float | None:
    """The d at which :func:`frapp_gamma_for_privacy` (at γ) gives ``gamma_frapp``:
    its posterior bound is met with equality, L₁ = 1/c, so c = 1/L₁ and
    d = γc/(1 − γ + γc); None when L₁ ≤ 1 (no d < γ gives it)."""
    ratio = frapp_copies_ratio(gamma_frapp, m, n, 1)
    if ratio <= 1:
        return None
    c = 1 / ratio
    return gamma * c / (1 - gamma + gamma * c)


def frapp_copies_ratio(gamma_frapp: float, m: int, n: int, copies: int) -> float:
    """Likelihood ratio Pr[t shows ``copies`` times in V | t ∈ I] / Pr[… | t ∉ I]
    for FRAPP on n records, against a d-independent adversary whose prior on
    every other tuple is the base rate (so |V| = n says nothing about t).

    With o = (1 − γ_f)/(m − 1) and R = γ_f/o: if t ∉ I, each of the n records
    lands on t with probability o; if t ∈ I, t's own record stays with γ_f and
    the other n − 1 land on t with o each. Binomial algebra gives
    L_j = jR/n + (1 − γ_f)(n − j)/(n(1 − o)). The rest of V carries a factor
    within 1e-3 of 1 (checked against :func:`frapp_posterior` in the tests).
    """
    o = frapp_off_diagonal(gamma_frapp, m)
    return copies * (gamma_frapp / o) / n + (1 - gamma_frapp) * (n - copies) / (n * (1 - o))


def frapp_exclusive_ratio(gamma_frapp: float, m: int, n: int) -> float:
    """Likelihood ratio of t against another tuple t' of its exclusion set (a
    d-exclusive adversary, Def. 6.2) when V shows t once and no other tuple of
    the set, for FRAPP on n records, other records as in :func:`frapp_copies_ratio`.

    t ∈ I: t's record stays (γ_f) and no other record lands on t or t', or it
    leaves to neither (1 − γ_f − o) and one of the n − 1 others lands on t;
    t' ∈ I: t''s record is replaced onto t (o) and none lands on either, or it
    leaves to neither and one other lands on t. Common factors cancel.
    """
    o = frapp_off_diagonal(gamma_frapp, m)
    shared = (1 - gamma_frapp - o) * (n - 1) * o
    return (gamma_frapp * (1 - 2 * o) + shared) / (o * (1 - 2 * o) + shared)


def posterior_from_ratio(prior: float, ratio: float) -> float:
    """pL/(pL + 1 − p): the posterior of a prior p after evidence of likelihood ratio L."""
    return prior * ratio / (prior * ratio + 1 - prior)


def frapp_gamma_for_privacy(d: float, gamma: float, m: int, n: int) -> float:
    """The largest γ_frapp whose posterior for a tuple shown once in V stays ≤ γ
    at prior d (Def. 2.3's posterior, not the ratio form posterior/prior ≤ γ/d),
    against the d-independent adversary of :func:`frapp_copies_ratio`.

    Derivation: the posterior after a view showing t once is pL₁/(pL₁ + 1 − p)
    with L₁ = R/n + (1 − γ_f)(n − 1)/(n(1 − o)), increasing in p, so it is ≤ γ
    for every p ≤ d iff L₁ ≤ 1/c with c = d(1−γ)/(γ(1−d)). L₁ grows with γ_f
    where it matters (R/n has slope (m−1)/(n(1−γ_f)²) against the second
    term's ≥ −1), so bisection finds the largest such γ_f. R ≈ n/c: every
    other record's replacement also lands on t, which is what hides it; the
    calibration of a lone record (R ≈ 1/c) ignores that and is far stricter.
    Negative leakage: a view without t gives L₀ = (1 − γ_f)/(1 − o) ≥ 1 − γ_f,
    checked by the guarantee against d/γ. Views showing t twice or more give
    L_j ≈ jR/n, beyond γ: the guarantee says so and how likely they are.
    """
    d = probability("d", d, open_low=True, open_high=True)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    if d >= gamma:
        raise ParameterError(f"infeasible: d = {d:.6g} ≥ γ = {gamma}")
    limit = gamma * (1 - d) / (d * (1 - gamma))
    lo, hi = 1 / m, 1 - 1e-12  # γ_f = 1/m carries no information: L₁ = 1
    if frapp_copies_ratio(hi, m, n, 1) <= limit:
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if frapp_copies_ratio(mid, m, n, 1) <= limit else (lo, mid)
    return lo


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


def rho_frapp(k: float, gamma: float, failure_probability: float) -> float:
    """Sec. 5's bound for FRAPP: ρ = 2k(1−γ)/γ · √ln(2/ε)."""
    return 2 * k * (1 - gamma) / gamma * math.sqrt(math.log(2 / failure_probability))
