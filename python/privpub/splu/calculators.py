"""SPLU's privacy and utility calculators (Lemma 1, Lemma 2 / Theorem 4).

A sensitive value s with f records is covered by f decoy groups, so its
published count f'_s is Binomial(γf, 1/γ): mean f, variance f(1 − 1/γ).

- :func:`relative_error_probability` is Pr[|f'_s − f| > εf] exactly (Sec. 4.2,
  Example 1: f = 5, γ = 10, ε = 0.3 gives 0.48; 0.52 of landing in [4, 6]).
- :func:`privacy_guarantee` is Lemma 2 / Theorem 4's T_P: the least such
  probability over f ∈ [1..α].
- :func:`utility_threshold` is Lemma 1's T_f = (1/(γ ε² T_E))^{1/2} as the
  paper prints it. Its proof divides the variance of the mean by n twice
  (Var X̄ = p(1−p)/n, then "p(1−p)/(ε² n²)"); Chebyshev with the right
  variance gives Pr[|f' − f| ≥ εf] ≤ (1 − 1/γ)/(ε² f), so the frequency
  that really meets T_E is :func:`utility_threshold_chebyshev`
  = (1 − 1/γ)/(ε² T_E), much larger. privpub states guarantees with the latter.
"""

from __future__ import annotations

import math

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError

#: Slack for ⌈(1−ε)f⌉ and ⌊(1+ε)f⌋ so that 0.7·10 = 7.000000000000001 is 7.
_ROUND = 1e-9


def _gamma(gamma: int) -> int:
    return validate.count("gamma", gamma, minimum=2)


def _eps(eps: float) -> float:
    eps = validate.real("eps", eps)
    if not 0 < eps < 1:
        raise ParameterError(f"eps (a relative error) must be in (0, 1), got {eps}")
    return eps


def within_probability(f: int, gamma: int, eps: float) -> float:
    """Pr[⌈(1−ε)f⌉ ≤ f'_s ≤ ⌊(1+ε)f⌋] for f'_s ~ Binomial(γf, 1/γ)."""
    f = validate.count("f", f, minimum=1)
    gamma, eps = _gamma(gamma), _eps(eps)
    lo = math.ceil((1 - eps) * f - _ROUND)
    hi = math.floor((1 + eps) * f + _ROUND)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    dist = stats.binom(gamma * f, 1 / gamma)
    return float(dist.cdf(hi) - dist.cdf(lo - 1))


def relative_error_probability(f: int, gamma: int, eps: float) -> float:
    """Pr[|f'_s − f| > εf]: the probability that the published count of a value
    with f records misses f by more than the relative error ε (Example 1)."""
    return 1.0 - within_probability(f, gamma, eps)


def privacy_guarantee(gamma: int, eps: float, alpha: int) -> float:
    """T_P of Lemma 2 / Theorem 4: min over f ∈ [1..α] of
    1 − Σ_{x=⌈(1−ε)f⌉}^{⌊(1+ε)f⌋} C(γf, x) γ^{−x} (1 − 1/γ)^{γf−x}.
    SPLU-Gen with this γ has (ε, T_P, α) small-sum privacy."""
    alpha = validate.count("alpha", alpha, minimum=1)
    return min(relative_error_probability(f, gamma, eps) for f in range(1, alpha + 1))


def utility_threshold(gamma: int, eps: float, t_e: float) -> float:
    """T_f of Lemma 1 as printed: (1/(γ ε² T_E))^{1/2}. Kept for reproductions;
    the bound it rests on is too optimistic (module docstring), see
    :func:`utility_threshold_chebyshev`."""
    gamma, eps = _gamma(gamma), _eps(eps)
    t_e = validate.probability("t_e", t_e, open_low=True, open_high=True)
    return math.sqrt(1 / (gamma * eps**2 * t_e))


def utility_threshold_chebyshev(gamma: int, eps: float, t_e: float) -> float:
    """The smallest f for which Chebyshev with Var f'_s = f(1 − 1/γ) gives
    Pr[|f'_s − f| ≥ εf] ≤ T_E: f ≥ (1 − 1/γ)/(ε² T_E)."""
    gamma, eps = _gamma(gamma), _eps(eps)
    t_e = validate.probability("t_e", t_e, open_low=True, open_high=True)
    return (1 - 1 / gamma) / (eps**2 * t_e)


def error_probabilities(fs: np.ndarray, gamma: int, eps: float) -> np.ndarray:
    """:func:`relative_error_probability` for each f of ``fs`` (vectorised)."""
    gamma, eps = _gamma(gamma), _eps(eps)
    fs = np.asarray(fs, dtype=np.int64)
    if fs.size and fs.min() < 1:
        raise ParameterError(f"every f must be at least 1, got {int(fs.min())}")
    lo = np.ceil((1 - eps) * fs - _ROUND)
    hi = np.floor((1 + eps) * fs + _ROUND)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    n = gamma * fs
    return 1.0 - (stats.binom.cdf(hi, n, 1 / gamma) - stats.binom.cdf(lo - 1, n, 1 / gamma))
