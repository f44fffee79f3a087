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
    epsilon = validate.privacy_loss(epsilon)
    if calibration not in CALIBRATIONS:
        raise ParameterError(f"calibration must be one of {list(CALIBRATIONS)}, "
                             f"got {calibration!r}")
    w_max = largest_weight(source)
    share = 1.0 if source is None else source.min_weight / w_max
    if k is not None or d is not None:
        d = validate.prior_bound(schema.size, n, k, d)
        stated = calibration_epsilon(min(d * w_max, 0.999999), gamma, calibration, share)
        return validate.prior_agrees(d, stated, epsilon, schema.size, n, gamma,
                                     f"the {calibration!r} calibration")
    d = prior_for_epsilon(epsilon, gamma, calibration, share) / w_max
    return _at_base_rate(d, epsilon, schema, n, gamma, allow_below)


def views_prior_for_privacy_loss(schema: Schema, n: int, gamma: float, k: float | None,
                                 d: float | None, epsilon: Any, max_views: int,
                                 calibration: str, allow_below: bool) -> float:
    """The prior bound d of the multi-view ``for_privacy(epsilon=...)``: the d at
    which :func:`~privpub.alphabeta.sequence.calibrate_views` gives all
    ``max_views`` views together (I unchanged) privacy loss ε, or the given k/d
    once checked to give it. ε falls as d grows (a larger d asks a larger β),
    so the d is found by Brent's method on log d, from the single-view
    exclusive calibration's closed form d = γ/(γ + (1 − γ)e^ε), which the
    exclusive calibration of several views also meets (its d-exclusive
    constraint binds at the same ratio)."""
    from scipy import optimize

    from privpub.alphabeta.sequence import calibrate_views, sequence_epsilon

    epsilon = validate.privacy_loss(epsilon)
    what = f"the {calibration!r} calibration of {max_views} views"

    def planned(prior: float) -> float:
        alpha, beta = calibrate_views(prior, gamma, max_views, calibration)
        return sequence_epsilon(alpha, beta, max_views, (True,) * max_views)[0]

    if k is not None or d is not None:
        d = validate.prior_bound(schema.size, n, k, d)
        return validate.prior_agrees(d, planned(d), epsilon, schema.size, n, gamma, what)
    unmet = ParameterError(f"epsilon = {epsilon} cannot be met by {what} at γ = {gamma}: "
                           "its least ε, near d = γ, is above it; raise epsilon or gamma")
    low = gamma / (gamma + (1 - gamma) * math.exp(epsilon))
    try:
        if math.isclose(planned(low), epsilon, rel_tol=1e-8):
            return _at_base_rate(low, epsilon, schema, n, gamma, allow_below)
    except ParameterError:  # no calibration at d this close to γ, nor closer
        raise unmet from None
    high, below = low, False
    while not below:  # halve the distance to γ until ε falls below the request
        high = (high + gamma) / 2
        try:
            below = planned(high) < epsilon
        except ParameterError:
            raise unmet from None
        if not below and high >= gamma * (1 - 1e-12):
            raise unmet
    root = optimize.brentq(lambda x: planned(math.exp(x)) - epsilon, math.log(low),
                           math.log(high), rtol=1e-12)
    return _at_base_rate(math.exp(root), epsilon, schema, n, gamma, allow_below)


def _at_base_rate(d: float, epsilon: float, schema: Schema, n: int, gamma: float,
                  allow_below: bool) -> float:
    """``d``, refused below the base rate n/m unless allowed."""
    m = schema.size
    if d * m < n and not allow_below:
        raise ParameterError(
            f"epsilon = {epsilon} at γ = {gamma} gives d = {d:.6g}, below the base rate "
            f"n/m = {n / m:.6g} (k = {d * m / n:.4g} < 1): a larger ε protects only "
            "adversaries with smaller priors than the base rate. Lower epsilon, raise gamma, "
            "or pass allow_prior_below_base_rate=True")
    return d
