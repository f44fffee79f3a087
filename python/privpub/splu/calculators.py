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

Parameters are named for what they are, the paper's letters in brackets:
``group_size`` (γ, records per decoy group), ``relative_error`` (ε),
``small_sum_bound`` (α, the largest count small-sum privacy protects) and
``error_probability`` (T_E, the allowed probability of a larger error).
"""

from __future__ import annotations

import math

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.renamed import renamed_keywords

#: Slack for ⌈(1−ε)f⌉ and ⌊(1+ε)f⌋ so that 0.7·10 = 7.000000000000001 is 7.
_ROUND = 1e-9
#: The names these calculators took before each name had one meaning.
_renamed = renamed_keywords(gamma="group_size", eps="relative_error", alpha="small_sum_bound",
                            t_e="error_probability")


def _group_size(group_size: int) -> int:
    return validate.integer("group_size", group_size, minimum=2)


def _relative_error(relative_error: float) -> float:
    relative_error = validate.real("relative_error", relative_error)
    if not 0 < relative_error < 1:
        raise ParameterError(f"relative_error (the paper's ε) must be in (0, 1), got "
                             f"{relative_error}")
    return relative_error


def within_probability(f: int, group_size: int, relative_error: float) -> float:
    """Pr[⌈(1−ε)f⌉ ≤ f'_s ≤ ⌊(1+ε)f⌋] for f'_s ~ Binomial(γf, 1/γ)."""
    f = validate.integer("f", f, minimum=1)
    group_size, relative_error = _group_size(group_size), _relative_error(relative_error)
    lo = math.ceil((1 - relative_error) * f - _ROUND)
    hi = math.floor((1 + relative_error) * f + _ROUND)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    dist = stats.binom(group_size * f, 1 / group_size)
    return float(dist.cdf(hi) - dist.cdf(lo - 1))


@_renamed
def relative_error_probability(f: int, group_size: int, relative_error: float) -> float:
    """Pr[|f'_s − f| > εf]: the probability that the published count of a value
    with f records misses f by more than the relative error ε (Example 1)."""
    return 1.0 - within_probability(f, group_size, relative_error)


@_renamed
def privacy_guarantee(group_size: int, relative_error: float, small_sum_bound: int) -> float:
    """T_P of Lemma 2 / Theorem 4: min over f ∈ [1..α] of
    1 − Σ_{x=⌈(1−ε)f⌉}^{⌊(1+ε)f⌋} C(γf, x) γ^{−x} (1 − 1/γ)^{γf−x}.
    SPLU-Gen with this γ has (ε, T_P, α) small-sum privacy."""
    small_sum_bound = validate.integer("small_sum_bound", small_sum_bound, minimum=1)
    return min(relative_error_probability(f, group_size, relative_error)
               for f in range(1, small_sum_bound + 1))


@_renamed
def utility_threshold(group_size: int, relative_error: float, error_probability: float) -> float:
    """T_f of Lemma 1 as printed: (1/(γ ε² T_E))^{1/2}. Kept for reproductions;
    the bound it rests on is too optimistic (module docstring), see
    :func:`utility_threshold_chebyshev`."""
    group_size, relative_error = _group_size(group_size), _relative_error(relative_error)
    error_probability = validate.probability("error_probability", error_probability,
                                             open_low=True, open_high=True)
    return math.sqrt(1 / (group_size * relative_error**2 * error_probability))


@_renamed
def utility_threshold_chebyshev(group_size: int, relative_error: float,
                                error_probability: float) -> float:
    """The smallest f for which Chebyshev with Var f'_s = f(1 − 1/γ) gives
    Pr[|f'_s − f| ≥ εf] ≤ T_E: f ≥ (1 − 1/γ)/(ε² T_E)."""
    group_size, relative_error = _group_size(group_size), _relative_error(relative_error)
    error_probability = validate.probability("error_probability", error_probability,
                                             open_low=True, open_high=True)
    return (1 - 1 / group_size) / (relative_error**2 * error_probability)


def error_probabilities(fs: np.ndarray, group_size: int, relative_error: float) -> np.ndarray:
    """:func:`relative_error_probability` for each f of ``fs`` (vectorised)."""
    group_size, relative_error = _group_size(group_size), _relative_error(relative_error)
    fs = np.asarray(fs, dtype=np.int64)
    if fs.size and fs.min() < 1:
        raise ParameterError(f"every f must be at least 1, got {int(fs.min())}")
    lo = np.ceil((1 - relative_error) * fs - _ROUND)
    hi = np.floor((1 + relative_error) * fs + _ROUND)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    n = group_size * fs
    p = 1 / group_size
    return 1.0 - (stats.binom.cdf(hi, n, p) - stats.binom.cdf(lo - 1, n, p))
