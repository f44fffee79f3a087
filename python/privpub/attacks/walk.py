"""Theorem 5's confidence random walk (Dinur–Nissim 2003, Sec. 4).

Against the binomial perturbation with R coins, an adversary who knows every
bit but d_i = 1 sees, per query containing i, a step
step_ℓ = ln((k_ℓ + 1) / (R − k_ℓ)) with k_ℓ ~ Binomial(R, 1/2) in its log-odds
conf_ℓ = ln(p_ℓ / (1 − p_ℓ)) that d_i = 1 (the paper's analysis; its
"step_i are mutually independent"). Privacy at level δ holds while
|conf_ℓ| < δ′ = ln((1/2 + δ) / (1/2 − δ)). Each step has mean O(1/R) and
standard deviation ≈ 2/√R, so t steps move conf by ≈ 2√(t/R): the walk stays
below δ′ for t ≪ R δ′² / 4 queries and crosses it beyond.
"""

from __future__ import annotations

import math

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed


def delta_prime(advantage: float) -> float:
    """δ′ = ln((1/2 + δ) / (1/2 − δ)), the log-odds a (T, δ)-private database must not
    reach; ``advantage`` is the paper's δ, an adversary's advantage over 1/2 on a bit."""
    advantage = validate.real("advantage", advantage)
    if not 0 < advantage < 0.5:
        raise ParameterError(f"advantage (the paper's δ) must be in (0, 1/2), got {advantage}")
    return math.log((0.5 + advantage) / (0.5 - advantage))


def confidence_walk(R: int, steps: int, walks: int, seed: SeedLike = None) -> np.ndarray:
    """``walks`` independent paths conf_1..conf_steps (shape (walks, steps)) for d_i = 1."""
    R = validate.integer("R", R, minimum=1)
    steps = validate.integer("steps", steps, minimum=1)
    walks = validate.integer("walks", walks, minimum=1)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    u = resolve_seed(seed).derive("confidence walk").uniform(walks * steps)
    k = stats.binom.ppf(u, R, 0.5).reshape(walks, steps)
    # k = R (probability 2^−R) proves d_i = 1: its step is +inf, as the analysis has it.
    with np.errstate(divide="ignore"):
        return np.cumsum(np.log(k + 1) - np.log(R - k), axis=1)


def stays_private(conf: np.ndarray, advantage: float) -> float:
    """Fraction of walks with |conf_ℓ| < δ′ = :func:`delta_prime` (``advantage``) at every step.

    ``conf`` is (walks, steps), as :func:`confidence_walk` returns: real log-odds, ±inf
    allowed (a proof either way), NaN refused with the walk and step that hold it.
    """
    dp = delta_prime(advantage)
    c = np.asarray(conf)
    if c.dtype.kind not in "iuf":
        raise ParameterError(f"conf must be real log-odds, got dtype {c.dtype}")
    if c.ndim != 2 or 0 in c.shape:
        raise ParameterError(f"conf must be a (walks, steps) array with at least one walk "
                             f"and one step, got shape {c.shape}")
    bad = np.argwhere(np.isnan(c))
    if bad.size:
        walk, step = (int(i) for i in bad[0])
        raise ParameterError(f"conf: walk {walk}, step {step} is nan")
    return float(np.mean(np.max(np.abs(c), axis=1) < dp))
