"""Privacy of a sequence of Algorithm 7 views: exact worst cases and calibration.

Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.4.1 says Algorithm 7 "allows us to
publish multiple views while providing the same privacy", without a proof.
This module computes what it provides, exactly.

Algorithm 7, view i of at most v, with s = α + β and V' = V_1 ∪ … ∪ V_{i−1}:
a tuple of I_i is kept with s, a tuple of V' − I_i with p' = s·e^{−1/v}, any
other tuple with p_i = (1 − s)^{i−1}·β (:func:`view_probabilities`).

Derivation. Each tuple's inclusions depend only on its own membership and
its own earlier inclusions, so under a tuple-independent prior the posterior
of t depends only on t's inclusion pattern x ∈ {0,1}^j over the j views
published, through the likelihood ratio L(x) = Pr[x | t present]/Pr[x | t
absent]. "Present" means present with a membership history h (h_i = 1 when
t ∈ I_i; the paper's case is I unchanged, h = 1…1); "absent" means in no
version. With f the first view that shows t, view by view:

- before f, not shown: (1 − s)/(1 − p_i) if h_i = 1, else 1 (both sides p_i);
- at f: s/p_f if h_f = 1, else 1;
- after f (t ∈ V' on both sides): shown e^{1/v} = s/p', not shown
  (1 − s)/(1 − p') if h_i = 1; 1 if h_i = 0 (p' on both sides).

For I unchanged this gives, with r the views after f that show t,

  L(f, r) = s/(β·Π_{i<f}(1 − p_i)) · e^{r/v} · ((1 − s)/(1 − p'))^{j−f−r},
  L(never) = (1 − s)^j / Π_{i≤j}(1 − p_i),

(p_f = (1 − s)^{f−1}β cancels the (1 − s)^{f−1} of the views before f): the
likelihood depends only on (f, r), so the j(j+1)/2 + 1 classes of
:func:`pattern_classes` hold every pattern. For fixed f, L grows with r
(e^{1/v} > 1 > (1 − s)/(1 − p')), so the extremes over patterns are at
r = j − f ("shown in every view from f on") and r = 0 (shown once), and the
worst cases take O(j) per history (:func:`likelihood_extremes`). The largest
is at f = 1, L = (s/β)·e^{(j−1)/v}, whenever β ≤ 1 − e^{−1/v} (moving f one
view later multiplies it by e^{−1/v}/(1 − p_f) ≤ 1 then); the code takes the
maximum over f without assuming it.

Adversaries (Def. 2.3 and Def. 6.2, as for one view in
:mod:`privpub.alphabeta.accounting`); with L_max, L_min the extremes over
patterns and prior p ≤ d:

- d-independent, positive leakage: Pr[t|V] = pL/(pL + 1 − p), largest at
  p = d and L = L_max;
- d-independent, negative leakage: Pr[t|V]/Pr[t] = L/(pL + 1 − p), whose
  infimum over p ∈ (0, d] is min(1, L_min) (as p → 0);
- d-exclusive (one record among a set S of tuples), positive leakage:
  Pr[t|V] = pL_t/(pL_t + Σ_{u ∈ S−t} p_u L_u) ≤ dL_max/(dL_max + (1 − d)L_min),
  attained when t shows the worst pattern and every other tuple of S the
  least likely one. Negative leakage is not excluded for such adversaries
  even for one view (Example 6.4), and not claimed.

For one view these are :func:`~privpub.alphabeta.accounting.alphabeta_leakage`
and :func:`~privpub.alphabeta.accounting.exclusive_worst_posterior`.

Monotone in j: a pattern of j views extends to j + 1 by a factor e^{1/v} or
(1 − s)/(1 − p') (after f), or s/p_{j+1} ≥ 1 or (1 − s)/(1 − p_{j+1}) < 1
(never shown), so L_max never falls and L_min never rises as views are
published: the worst case of the planned v views bounds every prefix.

Updates. A tuple that leaves (h = 1…1 0…0, last present in view ℓ − 1) has
factor 1 at every view from ℓ on, so its ratios are those of I unchanged
over ℓ − 1 views: covered by the static guarantee. A tuple that enters at
version e ≥ 2 (h = 0…0 1…1) and was never shown before is shown first with
s against p_e = (1 − s)^{e−1}β: L = s/(β(1 − s)^{e−1}·Π) · e^{(j−e)/v}, a factor
about (1 − s)^{−(e−1)} above the static worst case. Algorithm 7's fresh noise
decays to keep the views small, and a tuple that arrives late stands out
against it: the guarantee of such a tuple is computed from its history and
stated for it (:class:`~privpub.alphabeta.multiview.MultiViewPublisher`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError

__all__ = ["VIEW_CALIBRATIONS", "SequenceLeakage", "calibrate_views", "is_sequence_private",
           "largest_private_d_views", "likelihood_extremes", "pattern_classes",
           "sequence_epsilon", "sequence_leakage", "view_probabilities"]


def view_probabilities(alpha: float, beta: float, max_views: int, index: int
                       ) -> tuple[float, float, float]:
    """(s, p', p_i) of Algorithm 7 for view ``index`` (1-based) of at most
    ``max_views``: s = α+β for a tuple of I, p' = s·e^{−1/v} for a tuple of
    V' − I, p_i = (1 − s)^{i−1}·β for any other tuple."""
    s = alpha + beta
    return s, s * math.exp(-1 / max_views), (1 - s) ** (index - 1) * beta


@dataclass(frozen=True)
class SequenceLeakage:
    """The exact worst cases after ``published`` of at most ``max_views`` views, for a
    tuple with membership ``history``, at prior bound ``d`` (module docstring).

    ``independent_posterior``: largest Pr[t|V] of a d-independent adversary;
    ``independent_ratio``: least Pr[t|V]/Pr[t] (its infimum over priors ≤ d);
    ``exclusive_posterior``: largest Pr[t|V] of a d-exclusive adversary
    (computed for I unchanged, the other tuples of t's set being static).
    """

    max_views: int
    published: int
    d: float
    history: tuple[bool, ...]
    likelihood_max: float
    likelihood_min: float
    independent_posterior: float
    independent_ratio: float
    exclusive_posterior: float

    def independent_private(self, gamma: float) -> bool:
        """Def. 2.3 over the sequence: Pr[t|V] ≤ γ and Pr[t|V]/Pr[t] ≥ d/γ."""
        return (self.independent_posterior <= gamma * (1 + 1e-12)
                and self.independent_ratio >= self.d / gamma * (1 - 1e-12))

    def exclusive_private(self, gamma: float) -> bool:
        """No positive leakage to d-exclusive adversaries: Pr[t|V] ≤ γ."""
        return self.exclusive_posterior <= gamma * (1 + 1e-12)


def likelihood_extremes(alpha: float, beta: float, max_views: int,
                        history: Sequence[bool]) -> tuple[float, float]:
    """(L_max, L_min) over every inclusion pattern of the ``len(history)`` views
    published, for a tuple present with ``history`` against absent throughout
    (module docstring: first view shown f, then the extremes r = all, r = none)."""
    j = len(history)
    s, p_prev, _ = view_probabilities(alpha, beta, max_views, 1)
    fresh = [view_probabilities(alpha, beta, max_views, f)[2] for f in range(1, j + 1)]
    if beta == 0 or min(fresh, default=1.0) == 0:  # no noise (or so little it underflows):
        return math.inf, (1 - s) ** sum(history)  # a tuple shown is in I
    later_max, later_min = s / p_prev, (1 - s) / (1 - p_prev)  # e^{1/v}, and below 1
    present_after = np.cumsum(np.asarray(history, dtype=int)[::-1])[::-1]  # Σ_{i ≥ f} h_i
    prefix, high, low = 1.0, 0.0, math.inf
    for f in range(1, j + 1):
        p_f = fresh[f - 1]
        present = history[f - 1]
        first = prefix * (s / p_f if present else 1.0)
        later = int(present_after[f]) if f < j else 0
        high = max(high, first * later_max ** later)
        low = min(low, first * later_min ** later)
        prefix *= (1 - s) / (1 - p_f) if present else 1.0
    return max(high, prefix), min(low, prefix)


def sequence_epsilon(alpha: float, beta: float, max_views: int,
                     history: Sequence[bool]) -> tuple[float, float]:
    """The exact ε of the ``len(history)`` views published, under replacement of a
    tuple with membership ``history`` by another with the same history, and the
    ε one added or removed tuple alone would cost: ``(ln(L_max/L_min),
    max(ln L_max, −ln L_min))`` (``math.inf`` when not finite).

    Every tuple's inclusions depend only on its own membership and its own
    earlier inclusions, so Pr[V_1..V_j | I] is a product over tuples and
    replacing s by u, both with history h, changes only their two factors:
    the ratio is L_h(x_s)/L_h(x_u) for their inclusion patterns, at most
    L_max/L_min (:func:`likelihood_extremes`), reached with s showing the most
    telling pattern and u the least."""
    high, low = likelihood_extremes(alpha, beta, max_views, history)
    if math.isinf(high) or low <= 0:
        return math.inf, math.inf
    return math.log(high) - math.log(low), max(math.log(high), -math.log(low))


def sequence_leakage(alpha: float, beta: float, d: float, max_views: int,
                     published: int | None = None,
                     history: Sequence[bool] | None = None) -> SequenceLeakage:
    """The exact worst cases of :class:`SequenceLeakage` after ``published``
    views (default: all ``max_views`` planned) for a tuple with membership
    ``history`` (default: present in every version, I unchanged)."""
    alpha = validate.probability("alpha", alpha)
    beta = validate.probability("beta", beta)
    if alpha + beta > 1:
        raise ParameterError(f"alpha + beta must be at most 1, got {alpha} + {beta}")
    d = validate.probability("d", d, open_low=True, open_high=True)
    max_views = validate.integer("max_views", max_views, minimum=1)
    published = max_views if published is None else validate.integer("published", published,
                                                                minimum=1)
    if published > max_views:
        raise ParameterError(f"published = {published} exceeds max_views = {max_views}")
    history = (True,) * published if history is None else tuple(bool(h) for h in history)
    if len(history) != published:
        raise ParameterError(f"history has {len(history)} versions for {published} views")
    high, low = likelihood_extremes(alpha, beta, max_views, history)
    static_high, static_low = (high, low) if all(history) else likelihood_extremes(
        alpha, beta, max_views, (True,) * published)
    return SequenceLeakage(max_views, published, d, history, high, low,
                           _posterior(d, high), min(1.0, low),
                           _exclusive(d, high, static_low))


def _posterior(p: float, ratio: float) -> float:
    return 1.0 if math.isinf(ratio) else p * ratio / (p * ratio + 1 - p)


def _exclusive(p: float, high: float, low: float) -> float:
    if math.isinf(high):
        return 1.0
    return p * high / (p * high + (1 - p) * low) if low > 0 else 1.0


def pattern_classes(alpha: float, beta: float, max_views: int, published: int
                    ) -> list[tuple[int | None, int, float, float]]:
    """Every class (f, r) of inclusion patterns over ``published`` views for I
    unchanged, with Pr[class | t ∈ I] and Pr[class | t ∉ I] (multiplicity
    C(j − f, r) included); f = None is "never shown". The probabilities of
    each side sum to 1; L(f, r) is their ratio (module docstring)."""
    j = published
    s, p_prev, _ = view_probabilities(alpha, beta, max_views, 1)
    classes: list[tuple[int | None, int, float, float]] = []
    absent_before = 1.0  # Π_{i<f}(1 − p_i)
    for f in range(1, j + 1):
        p_f = view_probabilities(alpha, beta, max_views, f)[2]
        for r in range(j - f + 1):
            ways = math.comb(j - f, r)
            present = ways * (1 - s) ** (f - 1) * s ** (1 + r) * (1 - s) ** (j - f - r)
            absent = ways * absent_before * p_f * p_prev ** r * (1 - p_prev) ** (j - f - r)
            classes.append((f, r, present, absent))
        absent_before *= 1 - p_f
    classes.append((None, 0, (1 - s) ** j, absent_before))
    return classes


def is_sequence_private(alpha: float, beta: float, d: float, gamma: float, max_views: int,
                        exclusive: bool = True) -> bool:
    """Whether all ``max_views`` planned views are (d, γ)-private together against
    d-independent adversaries (both sides) and, with ``exclusive``, leak
    nothing positive to d-exclusive ones (exact, :func:`sequence_leakage`)."""
    leak = sequence_leakage(alpha, beta, d, max_views)
    return leak.independent_private(gamma) and (not exclusive or leak.exclusive_private(gamma))


#: Calibrations for several views (``MultiViewPublisher.for_privacy(calibration=)``).
VIEW_CALIBRATIONS = ("exclusive", "independent")


def calibrate_views(d: float, gamma: float, max_views: int,
                    calibration: str = "exclusive") -> tuple[float, float]:
    """(α, β) with which all ``max_views`` Algorithm 7 views are (d, γ)-private together.

    The probabilities of Algorithm 7 are the paper's; only α and β change.
    ``"exclusive"``: d-independent adversaries (both sides) and no positive
    leakage to d-exclusive ones; ``"independent"``: d-independent adversaries
    alone. For one view these are
    :func:`~privpub.alphabeta.accounting.calibrate`'s choices of the same names
    (closed forms). For v ≥ 2, as for one view, the choice least in the first
    view's estimator variance ∝ β/α² = β/(s − β)²: for each s the least β that
    passes :func:`is_sequence_private` (bisection: raising β lowers L_max and
    raises L_min of the never-shown pattern), then a golden-section search
    over s ∈ (0, 1 − d/γ] after a grid. The search is numerical, so the
    variance is least up to its resolution; privacy is not: the returned
    (α, β) are checked exactly and refused if they fail.
    """
    from privpub.alphabeta.accounting import CALIBRATIONS, calibrate

    max_views = validate.integer("max_views", max_views, minimum=1)
    if calibration not in VIEW_CALIBRATIONS:
        extra = (" (the single-view choice has no version for several views)"
                 if calibration in CALIBRATIONS else "")
        raise ParameterError(f"calibration must be one of {list(VIEW_CALIBRATIONS)} for "
                             f"several views, got {calibration!r}{extra}")
    if max_views == 1:
        return calibrate(d, gamma, calibration)
    alpha, beta = _least_variance(d, gamma, max_views, calibration == "exclusive")
    if not is_sequence_private(alpha, beta, d, gamma, max_views, calibration == "exclusive"):
        raise ParameterError(f"no (α, β) found for {max_views} views at d = {d:.6g}, γ = {gamma}")
    return alpha, beta


#: Points of the grid over s = α + β before the golden-section search.
GRID = 60


def _least_variance(d: float, gamma: float, max_views: int, exclusive: bool
                    ) -> tuple[float, float]:
    """The search of :func:`calibrate_views` (also run at v = 1 by the tests,
    against the closed forms)."""
    if not 0 < d < gamma < 1:
        raise ParameterError(f"infeasible: need 0 < d < γ < 1, got d = {d:.6g}, γ = {gamma}")
    # Aim a hair inside γ so that the worst posterior is ≤ γ, not within rounding above it.
    gamma = gamma * (1 - 1e-9)

    def least_beta(s: float) -> float | None:
        lo, hi = 0.0, s * (1 - 1e-9)  # β = s would leave α = 0
        if not is_sequence_private(s - hi, hi, d, gamma, max_views, exclusive):
            return None
        for _ in range(60):
            mid = (lo + hi) / 2
            if is_sequence_private(s - mid, mid, d, gamma, max_views, exclusive):
                hi = mid
            else:
                lo = mid
        return hi

    def cost(s: float) -> float:
        beta = least_beta(s)
        return math.inf if beta is None else beta / (s - beta) ** 2

    top = 1 - d / gamma
    grid = [top * (k / GRID) for k in range(1, GRID + 1)]
    costs = [cost(s) for s in grid]
    best = int(np.argmin(costs))
    if math.isinf(costs[best]):
        raise ParameterError(f"infeasible: no α + β ≤ {top:.6g} makes {max_views} views "
                             f"(d = {d:.6g}, γ = {gamma})-private")
    lo, hi = grid[max(best - 1, 0)] if best else top / (2 * GRID), grid[min(best + 1, GRID - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):  # golden section on the bracket around the grid's best
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if cost(a) <= cost(b):
            hi = b
        else:
            lo = a
    s = min((lo + hi) / 2, grid[best], key=cost)
    beta = least_beta(s)
    return s - beta, beta


def largest_private_d_views(alpha: float, beta: float, gamma: float, max_views: int
                            ) -> tuple[float, float]:
    """The largest d at which all ``max_views`` views are (d, γ)-private together:
    ``(d-independent, both sides; d-exclusive, positive leakage)``, by bisection
    (both worst cases get worse as d grows)."""

    def largest(ok) -> float:
        lo, hi = 0.0, gamma
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if ok(sequence_leakage(alpha, beta, mid, max_views)) else (lo, mid)
        return lo

    return (largest(lambda leak: leak.independent_private(gamma)),
            largest(lambda leak: leak.exclusive_private(gamma)))
