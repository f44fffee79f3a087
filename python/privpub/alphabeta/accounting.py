"""The αβ algorithm's privacy and utility calculators.

Plain functions, each citing the result it implements from Rastogi, Suciu,
Hong, *The Boundary Between Privacy and Utility in Data Publishing* (VLDB
2007), with the corrections listed in docs/design.md, "Notes on the papers".
Probabilities are floats; the domain size m is an exact int.

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
    """Worst posterior of a d-exclusive adversary (Def. 6.2) for the αβ algorithm,
    for any α, β (Theorem 6.3's proof, App. D.2.1, without its α + β = 1/2).

    Pr[t|V] depends only on which tuples of t's exclusion set S appear in V;
    it is largest when V holds t and no other tuple of S, where
    Pr[V|t] ∝ (α+β)(1−β) and Pr[V|t'] ∝ β(1−α−β) for each other t' ∈ S, so
    Pr[t|V] = (α+β)(1−β)p / ((α+β)(1−β)p + β(1−α−β)(1−p)), increasing in
    p ≤ d. Only positive leakage: Example 6.4 shows negative leakage is not
    excluded for such adversaries.
    """
    a, b = _check_alpha_beta(alpha, beta)
    d = probability("d", d, open_low=True, open_high=True)
    num = (a + b) * (1 - b) * d
    other = b * (1 - a - b) * (1 - d)
    return num / (num + other) if num + other > 0 else 1.0


# ---- pure differential privacy (the appendix's ε-indistinguishability) ---------------------


def alphabeta_epsilon(alpha: float, beta_min: float, beta_max: float | None = None) -> float:
    """The exact ε of the αβ algorithm under replacement of one tuple
    (ε-indistinguishability, App. A Def. A.1: instances of equal size that
    differ in one tuple); ``math.inf`` when none is finite (β = 0 or α + β = 1).

    Each tuple t enters V independently, with probability α + β(t) if t ∈ I
    and β(t) if not, so Pr[V | I] is a product over tuples and replacing
    s ∈ I by u ∉ I changes only the factors of s and u. Their ratio
    Pr[V | I]/Pr[V | I'] is (α+β(s))/β(s) or (1−α−β(s))/(1−β(s)) for s (in V
    or not) times (1−β(u))/(1−α−β(u)) or β(u)/(α+β(u)) for u; the largest is
    V holding s and not u:

        e^ε = (α+β(s))/β(s) · (1−β(u))/(1−α−β(u)),

    each factor ≥ 1, the first largest at the least β(t) (``beta_min``), the
    second at the largest (``beta_max``, default ``beta_min``: a uniform β-step).
    """
    beta_max = beta_min if beta_max is None else beta_max
    a, lo = _check_alpha_beta(alpha, beta_min)
    hi = _check_alpha_beta(alpha, beta_max)[1]
    if lo == 0 or a + hi >= 1:
        return math.inf
    return math.log((a + lo) / lo) + math.log((1 - hi) / (1 - a - hi))


def alphabeta_epsilon_unbounded(alpha: float, beta_min: float,
                                beta_max: float | None = None) -> float:
    """What adding or removing one tuple alone would cost, were n not published:
    one factor of :func:`alphabeta_epsilon`, ln max((α+β)/β, (1−β)/(1−α−β))
    (the least β(t) in the first, the largest in the second)."""
    beta_max = beta_min if beta_max is None else beta_max
    a, lo = _check_alpha_beta(alpha, beta_min)
    hi = _check_alpha_beta(alpha, beta_max)[1]
    if lo == 0 or a + hi >= 1:
        return math.inf
    return max(math.log((a + lo) / lo), math.log((1 - hi) / (1 - a - hi)))


def calibration_epsilon(d: float, gamma: float, calibration: str,
                        low_share: float = 1.0) -> float:
    """ε (:func:`alphabeta_epsilon`) of :func:`calibrate`'s (α, β) at (d, γ);
    ``low_share`` is β(t)'s least over its largest (a source's least weight over
    its largest, 1 for a uniform β-step). For ``"exclusive"`` it is
    ln(γ(1−d)/(d(1−γ))) = ln(1/c) exactly, whatever α + β: its β makes the
    d-exclusive adversary's worst likelihood ratio, which is e^ε, equal 1/c."""
    alpha, beta = calibrate(d, gamma, calibration)
    return alphabeta_epsilon(alpha, beta * low_share, beta)


def prior_for_epsilon(epsilon: float, gamma: float, calibration: str,
                      low_share: float = 1.0) -> float:
    """The prior bound d at which :func:`calibrate` (at γ) gives privacy loss ε:
    bisection on d ∈ (0, γ), along which ε falls (a larger d asks a larger β); a
    ParameterError naming ``epsilon`` when no d gives it (the least ε the
    calibration reaches at this γ, near d = γ, is above it)."""
    lo, hi = 0.0, gamma
    for _ in range(400):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        try:
            above = calibration_epsilon(mid, gamma, calibration, low_share) > epsilon
        except ParameterError:  # infeasible: d too close to γ
            above = False
        lo, hi = (mid, hi) if above else (lo, mid)
    for d in (hi, lo):
        try:
            found = calibration_epsilon(d, gamma, calibration, low_share)
        except ParameterError:
            continue
        if d > 0 and math.isclose(found, epsilon, rel_tol=1e-9, abs_tol=1e-12):
            return d
    raise ParameterError(f"epsilon = {epsilon} cannot be met by the {calibration!r} "
                         f"calibration at γ = {gamma}: its least ε there, near d = γ, is "
                         f"above it; raise epsilon or gamma")


def prior_ratio_bound(d: float, gamma: float) -> float:
    """c = d(1−γ)/(γ(1−d)): a posterior pL/(pL + 1 − p) with likelihood ratio L
    stays ≤ γ at every prior p ≤ d exactly when L ≤ 1/c."""
    d = probability("d", d, open_low=True, open_high=True)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    return d * (1 - gamma) / (gamma * (1 - d))


def largest_private_d(alpha: float, beta: float, gamma: float) -> tuple[float, float]:
    """The largest prior bounds d the parameters protect at posterior bound γ:
    ``(d-independent, both sides (Def. 2.3), d-exclusive positive leakage)``.

    Solving :func:`alphabeta_leakage` and :func:`exclusive_worst_posterior`
    for d: with s = α + β, positive leakage gives d ≤ γβ/(s(1−γ) + γβ),
    negative leakage d ≤ γ(1−s)/(1−β); the exclusive posterior gives
    d ≤ γB/(A(1−γ) + γB) with A = s(1−β), B = β(1−s).
    """
    a, b = _check_alpha_beta(alpha, beta)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    s = a + b

    def solve(num: float, other: float) -> float:
        return gamma * other / (num * (1 - gamma) + gamma * other) if other > 0 else 0.0

    independent = min(solve(s, b), gamma * (1 - s) / (1 - b) if b < 1 else 0.0)
    return independent, solve(s * (1 - b), b * (1 - s))


#: The parameter choices :func:`calibrate` offers (``AlphaBeta.for_privacy(calibration=)``).
CALIBRATIONS = ("exclusive", "independent", "sec4.2", "half")


def calibrate(d: float, gamma: float, calibration: str = "exclusive") -> tuple[float, float]:
    """(α, β) for (d, γ)-privacy by the named choice (docs/design.md,
    "Parameter choice names its adversary").

    With s = α + β and c = :func:`prior_ratio_bound`, the estimator's noise
    variance n_D·β(1−β)/α², which dominates every query whose domain count
    n_D is large against its true count, is governed by β/α²:

    - ``"exclusive"`` (default): Theorem 4.2 and no positive leakage to
      d-exclusive adversaries. The second needs β ≥ sc/(1 − s + sc); then
      β/α² ∝ (1 − s(1−c))/(s(1−s)²), least where 2(1−c)s² − 3s + 1 = 0,
      s = (3 − √(1 + 8c))/(4(1−c)) (= 1/2 to first order in c). Theorem 4.2
      asks β ≥ cs, which that β exceeds, and s ≤ 1 − d/γ.
    - ``"independent"``: Theorem 4.2 alone (d-independent adversaries, both
      leakage sides): β = cs, so β/α² = c/(s(1−c)²) falls as s grows, to
      s = 1 − d/γ. A d-exclusive adversary then learns much more (the
      guarantee says how much).
    - ``"sec4.2"``: the paper's Sec. 4.2 choice s = 1/2, β = d/γ.
    - ``"half"``: s = 1/2 with Theorem 4.2's least β = c/2.
    """
    c = prior_ratio_bound(d, gamma)
    if d >= gamma:
        raise ParameterError(f"infeasible: d = {d:.6g} ≥ γ = {gamma}; a posterior bound "
                             "below the prior bound cannot be met")
    s_max = 1 - d / gamma
    if calibration == "exclusive":
        # (3 − √(1+8c))/(4(1−c)) written without its 0/0 at c = 1: c rounds to 1
        # when d is within a few ulps below γ (plan's bisections go there).
        s = min(2 / (3 + math.sqrt(1 + 8 * c)), s_max)
        beta = s * c / (1 - s + s * c)
    elif calibration == "independent":
        s = s_max
        beta = c * s
    elif calibration == "sec4.2":
        s, beta = 0.5, d / gamma
    elif calibration == "half":
        s, beta = 0.5, c / 2
    else:
        raise ParameterError(f"calibration must be one of {list(CALIBRATIONS)}, "
                             f"got {calibration!r}")
    if not beta < s:
        raise ParameterError(f"infeasible: the {calibration!r} choice needs β = {beta:.6g} "
                             f"≥ α + β = {s:.6g}, leaving no α > 0; raise γ or lower d")
    return s - beta, beta


# ---- utility --------------------------------------------------------------------------------


def theorem_4_3_r(alpha: float, beta: float, n: int, m: int) -> float:
    """The smallest r with β ≤ r α² n/m (Theorem 4.3's hypothesis)."""
    a, b = _check_alpha_beta(alpha, beta)
    if a == 0:
        raise ParameterError("alpha must be positive for (ρ, ε)-usefulness")
    return b * m / (a * a * n)


def rho_theorem_4_3(r: float, failure_probability: float) -> float:
    """ρ = √(2(r+1) ln(2/ε)) of Theorem 4.3 (appendix form; docs/design.md,
    "Notes on the papers"): the estimate's absolute error is below ρ√n with
    probability ≥ 1 − ε."""
    failure_probability = probability("failure_probability", failure_probability,
                                      open_low=True, open_high=True)
    return math.sqrt(2 * (r + 1) * math.log(2 / failure_probability))


def rho_alphabeta(k: float, gamma: float, failure_probability: float) -> float:
    """Sec. 5's bound for αβ: ρ = 2√(2k(1−γ)/γ · ln(2/ε))."""
    return 2 * math.sqrt(2 * k * (1 - gamma) / gamma * math.log(2 / failure_probability))


def bernstein_deviation(variance: float, term_bound: float, failure_probability: float) -> float:
    """The λ with Pr[|S − E S| ≥ λ] ≤ ε for a sum S of independent terms, each
    within ``term_bound`` (Bernstein's b) of its mean, of total variance at most
    ``variance``; ε is ``failure_probability`` (Bernstein: 2·exp(−λ²/(2σ² + 2bλ/3)) = ε,
    solved for λ)."""
    failure_probability = probability("failure_probability", failure_probability,
                                      open_low=True, open_high=True)
    log = math.log(2 / failure_probability)
    return term_bound * log / 3 + math.sqrt((term_bound * log / 3) ** 2 + 2 * variance * log)


def alphabeta_error_bound(alpha: float, beta_max: float, n: int, m: int, failure_probability: float,
                          *, source: bool = False) -> float:
    """A bound B with Pr[|Q̃(V) − Q(I)| ≥ B] ≤ ε for each fixed counting query:
    the bound Theorem 4.3's argument gives once its two slips are mended
    (docs/design.md, "Notes on the papers": the variance term, a two-sided tail).

    α·(Q̃ − Q) = Y − E Y, where Y = Q(V) is a sum of independent indicators:
    one per record (kept with α + β(t) for a tuple's first record, α for a
    further one) and one per tuple of Q(D) not in I (inserted with β(t)).
    A first record replaces its tuple's noise indicator, which changes the
    variance by (α+β)(1−α−β) − β(1−β) = α(1 − α − 2β) ≤ α(1−α); so over all
    queries Var Y ≤ nα(1−α) + Σ_t β(t)(1−β(t)), with the last sum ≤ mβ(1−β)
    for a uniform β-step and ≤ Σ_t β(t) = mβ with a source (weights average 1).
    Bernstein's inequality (:func:`bernstein_deviation`, terms within 1 of
    their means) then bounds |Y − E Y| with probability ≥ 1 − ε; divide by α.
    It holds for each query on its own, not for all queries at once.
    """
    a, b = _check_alpha_beta(alpha, beta_max)
    if a == 0:
        raise ParameterError("alpha must be positive for an error bound")
    noise = m * b if source else m * b * (1 - b)
    return bernstein_deviation(n * a * (1 - a) + noise, 1.0, failure_probability) / a


# ---- relations between privacy definitions (Appendix A) -------------------------------------


def relative_delta_from_gamma(d: float, gamma: float) -> float:
    """Proposition A.3: a (d, γ)-private algorithm is (d, δ)-relative-private
    with e^δ = (γ/d)(1−d)/(1−γ)."""
    d = probability("d", d, open_low=True, open_high=True)
    gamma = probability("gamma", gamma, open_low=True, open_high=True)
    return math.log(gamma / d * (1 - d) / (1 - gamma))


def gamma_from_relative_delta(d: float, relative_delta: float) -> float:
    """Proposition A.3: a (d, δ)-relative-private algorithm is (d, γ)-private with
    γ = d e^δ (``relative_delta`` is that δ)."""
    return probability("d", d, open_low=True) * math.exp(relative_delta)


def indistinguishability_from_delta(relative_delta: float) -> float:
    """Proposition A.5: (d, δ)-relative privacy (``relative_delta`` is δ) implies
    ε-indistinguishability with ε = 2δ + 2 ln 2."""
    if relative_delta < 0:
        raise ParameterError(f"relative_delta must be non-negative, got {relative_delta}")
    return 2 * relative_delta + 2 * math.log(2)


def _check_alpha_beta(alpha: float, beta: float) -> tuple[float, float]:
    a = probability("alpha", alpha)
    b = probability("beta", beta)
    if a + b > 1:
        raise ParameterError(f"alpha + beta must be at most 1, got {a} + {b} = {a + b}")
    return a, b
