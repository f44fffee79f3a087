"""The adversary's prior bound d of a privacy request, from what the caller gives:
``k`` (d = k·n/m) or ``d`` itself, or a privacy loss ε (the d at which an αβ
calibration has that ε, :func:`~privpub.alphabeta.accounting.prior_for_epsilon`).
Shared by :meth:`AlphaBeta.for_privacy <privpub.alphabeta.AlphaBeta.for_privacy>`
and the multi-view publisher.
"""

from __future__ import annotations

import math
from typing import Any

from privpub.alphabeta.accounting import CALIBRATIONS, calibration_epsilon, prior_for_epsilon
from privpub.alphabeta.source import SourceDistribution, largest_weight
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.domain.schema import Schema


def prior_for_privacy_loss(schema: Schema, n: int, gamma: float, k: float | None,
                           d: float | None, epsilon: Any, calibration: str,
                           source: SourceDistribution | None, allow_below: bool) -> float:
    """The prior bound d of ``for_privacy(epsilon=...)``: the d at which the
    ``calibration`` has privacy loss ε (for the most likely tuple's d·max w(t),
    with a source), or the given k/d once checked to give that ε."""
    epsilon = validate.real("epsilon", epsilon)
    if epsilon <= 0:
        raise ParameterError(f"epsilon (the privacy loss) must be positive, got {epsilon}")
    if calibration not in CALIBRATIONS:
        raise ParameterError(f"calibration must be one of {list(CALIBRATIONS)}, "
                             f"got {calibration!r}")
    w_max = largest_weight(source)
    share = 1.0 if source is None else source.min_weight / w_max
    m = schema.size
    if k is not None or d is not None:
        d = prior_bound(schema, n, k, d)
        stated = calibration_epsilon(min(d * w_max, 0.999999), gamma, calibration, share)
        if not math.isclose(stated, epsilon, rel_tol=1e-6):
            raise ParameterError(
                f"epsilon = {epsilon} disagrees with d = {d:.6g} (k = {d * m / n:.6g}) at "
                f"γ = {gamma}: the {calibration!r} calibration there has ε = {stated:.6g}. "
                "Give epsilon or k/d, not both (the usefulness failure probability, once "
                "called epsilon, is failure_probability)")
        return d
    d = prior_for_epsilon(epsilon, gamma, calibration, share) / w_max
    if d * m < n and not allow_below:
        raise ParameterError(
            f"epsilon = {epsilon} at γ = {gamma} gives d = {d:.6g}, below the base rate "
            f"n/m = {n / m:.6g} (k = {d * m / n:.4g} < 1): a larger ε protects only "
            "adversaries with smaller priors than the base rate. Lower epsilon, raise gamma, "
            "or pass allow_prior_below_base_rate=True")
    return d


def prior_bound(schema: Schema, n: int, k: float | None, d: float | None) -> float:
    """The adversary's prior bound d from exactly one of ``k`` (d = k·n/m) or ``d``,
    checked to lie in (0, 1) (``for_privacy``'s and the multi-view publisher's)."""
    if (k is None) == (d is None):
        raise ParameterError("give exactly one of k (d = k·n/m) or d")
    m = schema.size
    if k is not None:
        k = validate.real("k", k)
        if k <= 0:
            raise ParameterError(f"k must be positive, got {k}")
        d = k * n / m
    else:
        d = validate.real("d", d)
    if not 0 < d < 1:
        raise ParameterError(f"d must be in (0, 1), got d = {d:.6g} (n = {n:,}, "
                             f"m = {m:,}; with k, d = k·n/m, so k must be below m/n = "
                             f"{m / n:.6g})")
    return d
