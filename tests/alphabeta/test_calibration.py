"""Parameter choice for a named adversary, and every claimed posterior checked
by brute force (αβ paper Def. 2.3, Def. 6.2, Theorem 4.2, Theorem 6.3; FRAPP
at the same (d, γ))."""

import itertools
import math

import numpy as np
import pytest

import privpub
from privpub.alphabeta import accounting
from privpub.frapp import accounting as frapp_accounting

# Adult at (10n/m, 0.2): the table.
N, M = 30_162, 648_023_040
D = 10 * N / M
GAMMA = 0.2


def brute_independent(alpha, beta, priors, t=0):
    """max over views of Pr[t ∈ I | V] and min of Pr[t ∈ I | V]/Pr[t], by
    enumerating every instance I and view V of a tuple-independent prior."""
    m = len(priors)
    posts = []
    for view in itertools.product([0, 1], repeat=m):
        joint_t = total = 0.0
        for inst in itertools.product([0, 1], repeat=m):
            p_i = math.prod(p if x else 1 - p for p, x in zip(priors, inst, strict=True))
            p_v = math.prod((alpha + beta if x else beta) if v else
                            (1 - alpha - beta if x else 1 - beta)
                            for x, v in zip(inst, view, strict=True))
            total += p_i * p_v
            joint_t += p_i * p_v * inst[t]
        posts.append(joint_t / total)
    return max(posts), min(posts) / priors[t]


def brute_exclusive(alpha, beta, priors, t=0):
    """max over views of Pr[t ∈ I | V] for a d-exclusive adversary whose set S is
    the whole (small) domain: exactly one tuple of S is in I, tuple s with priors[s]."""
    m, best = len(priors), 0.0
    for view in itertools.product([0, 1], repeat=m):
        like = []
        for s in range(m):
            like.append(priors[s] * math.prod(
                (alpha + beta if u == s else beta) if v else
                (1 - alpha - beta if u == s else 1 - beta) for u, v in enumerate(view)))
        best = max(best, like[t] / sum(like))
    return best


@pytest.mark.parametrize("alpha, beta, d", [(0.45, 0.05, 0.02), (0.3, 0.2, 0.1),
                                            (0.9, 0.01, 0.001), (0.2, 0.3, 0.3)])
def test_posteriors_match_brute_force(alpha, beta, d):
    post, ratio = accounting.alphabeta_leakage(alpha, beta, d)
    # The worst ratio is approached as the prior → 0; the worst posterior at prior d.
    got_post, _ = brute_independent(alpha, beta, [d, 0.3, 0.6])
    _, got_ratio = brute_independent(alpha, beta, [1e-9, 0.3, 0.6])
    assert got_post == pytest.approx(post, rel=1e-9)
    assert got_ratio == pytest.approx(ratio, rel=1e-6)
    excl = accounting.exclusive_worst_posterior(alpha, beta, d)
    assert brute_exclusive(alpha, beta, [d, (1 - d) / 3, (1 - d) / 3, (1 - d) / 3]) \
        == pytest.approx(excl, rel=1e-9)
    # Any other split of the rest of S gives no more (the proof's worst case).
    assert brute_exclusive(alpha, beta, [d, 1 - d - 1e-3, 1e-3]) <= excl * (1 + 1e-9)


@pytest.mark.parametrize("calibration, beta, post_ind, post_excl", [
    ("sec4.2", 2.3272e-3, 0.0910, 0.1664),
    ("exclusive", 1.8523e-3, 0.1114, 0.2000),
    ("independent", 1.8583e-3, 0.2000, 0.9908),
    ("half", 9.313e-4, 0.2000, 0.3331),
])
def test_calibrations_at_adult(calibration, beta, post_ind, post_excl):
    alpha, b = accounting.calibrate(D, GAMMA, calibration)
    assert b == pytest.approx(beta, rel=1e-3)
    assert accounting.alphabeta_leakage(alpha, b, D)[0] == pytest.approx(post_ind, abs=1e-4)
    assert accounting.exclusive_worst_posterior(alpha, b, D) == pytest.approx(post_excl, abs=1e-4)
    assert accounting.theorem_4_2_holds(alpha, b, D, GAMMA)


def test_exclusive_is_the_least_noise_meeting_both():
    """Over a grid of α+β, the least β meeting both conditions (found from the exact
    posteriors by bisection) never gives a smaller β/α² than the chosen point."""
    alpha, beta = accounting.calibrate(D, GAMMA, "exclusive")
    best = beta / alpha ** 2
    for s in np.linspace(0.05, 0.95, 181):
        lo, hi = 0.0, s
        for _ in range(100):
            mid = (lo + hi) / 2
            ok = (accounting.exclusive_worst_posterior(s - mid, mid, D) <= GAMMA
                  and accounting.theorem_4_2_holds(s - mid, mid, D, GAMMA))
            lo, hi = (lo, mid) if ok else (mid, hi)
        assert hi / (s - hi) ** 2 >= best * (1 - 1e-9), s
    # and the d-independent-only point is the least noise under Theorem 4.2 alone
    a_ind, b_ind = accounting.calibrate(D, GAMMA, "independent")
    for s in np.linspace(0.05, 1 - D / GAMMA, 50):
        b = accounting.prior_ratio_bound(D, GAMMA) * s
        assert b / (s - b) ** 2 >= b_ind / a_ind ** 2 * (1 - 1e-9)


@pytest.mark.parametrize("d, gamma", [
    (0.20777988738688588, 0.2077798873868859),   # c rounds to 1: was 0/0 (ZeroDivisionError)
    (0.19853977322040892, 0.19853977322040894),
    (D, GAMMA), (0.01, 0.5), (1e-9, 0.9)])
def test_exclusive_calibration_near_d_equal_gamma(d, gamma):
    """The exclusive point, written as 2/(3 + √(1+8c)), equals the docstring's
    (3 − √(1+8c))/(4(1−c)) wherever that is defined, and at d within an ulp of γ
    (where plan's bisections go) it is a point or a named refusal, not a crash."""
    c = accounting.prior_ratio_bound(d, gamma)
    try:
        alpha, beta = accounting.calibrate(d, gamma, "exclusive")
    except privpub.ParameterError as exc:
        assert c >= 1 - 1e-12 and "infeasible" in str(exc)
        return
    if c < 1 - 1e-6:
        s = (3 - math.sqrt(1 + 8 * c)) / (4 * (1 - c))
        assert alpha + beta == pytest.approx(min(s, 1 - d / gamma), rel=1e-12)
    assert alpha > 0 and beta >= 0 and alpha + beta <= 1


def test_for_privacy_calibrations_and_their_guarantees():
    df, schema = privpub.datasets.load_adult()
    for cal in accounting.CALIBRATIONS:
        mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, k=10,
                                             calibration=cal)
        g = mech.guarantee()
        assert g["(d, γ)-privacy"].holds
        excl = g["no positive leakage, d-exclusive adversaries"]
        assert excl.holds == (cal in ("exclusive", "sec4.2"))
        assert f"{accounting.exclusive_worst_posterior(mech.alpha, mech.beta, mech.d):.6g}" \
            in excl.statement
    with pytest.raises(privpub.ParameterError, match="calibration must be one of"):
        privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, k=10, calibration="x")


def test_prior_below_base_rate_is_refused_unless_asked_for():
    df, schema = privpub.datasets.load_adult()
    with pytest.raises(privpub.ParameterError, match="below the base rate"):
        privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, k=1e-60)
    with pytest.raises(privpub.ParameterError, match="below the base rate"):
        privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, d=0.5 * len(df) / M)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, k=0.5,
                                         allow_prior_below_base_rate=True)
    assert "below the base rate" in mech.guarantee()["(d, γ)-privacy"].statement
    privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=GAMMA, k=1)  # the base rate itself


def test_guarantee_for_any_valid_parameters_states_the_region():
    schema = privpub.Schema([privpub.IntRange("a", 0, 99)])
    g = privpub.AlphaBeta(schema, alpha=0.6, beta=0.1).guarantee()
    region = g["(d, γ)-privacy region"]
    ind, exc = accounting.largest_private_d(0.6, 0.1, 0.2)
    assert f"d ≤ {ind:.6g}" in region.statement and f"d ≤ {exc:.6g}" in region.statement
    # the region's d is exactly where the exact posteriors reach the bounds
    post, ratio = accounting.alphabeta_leakage(0.6, 0.1, ind)
    assert post <= 0.2 * (1 + 1e-9) and ratio >= ind / 0.2 * (1 - 1e-9)
    assert max(post / 0.2, (ind / 0.2) / ratio) == pytest.approx(1)
    assert accounting.exclusive_worst_posterior(0.6, 0.1, exc) == pytest.approx(0.2)


def test_frapp_calibration_is_definition_2_3_posterior_checked_exactly():
    """The formula's posterior against the exact set-model posterior
    (frapp_posterior) on small domains, prior at the base rate on the others."""
    m, n = 60, 4
    for gamma_f in (0.05, 0.2, 0.5):
        for d in (0.05, 0.1):
            priors = np.full(m, n / m)
            priors[0] = d
            for copies in (0, 1, 2):
                counts = np.zeros(m, dtype=np.int64)
                counts[0] = copies
                counts[1:1 + n - copies] = 1
                exact = frapp_accounting.frapp_posterior(priors, gamma_f, counts)[0]
                formula = frapp_accounting.posterior_from_ratio(
                    d, frapp_accounting.frapp_copies_ratio(gamma_f, m, n, copies))
                assert exact == pytest.approx(formula, rel=2e-2 if copies == 0 else 1e-3)
                if copies:
                    assert exact <= formula * (1 + 1e-9)
    # for_privacy meets γ exactly at one copy, for Adult's n and m
    gamma_f = frapp_accounting.frapp_gamma_for_privacy(D, GAMMA, M, N)
    once = frapp_accounting.posterior_from_ratio(
        D, frapp_accounting.frapp_copies_ratio(gamma_f, M, N, 1))
    assert once == pytest.approx(GAMMA, rel=1e-9)
    # every other record's replacement hides t: R ≈ n/c, not 1/c
    r = gamma_f * (M - 1) / (1 - gamma_f)
    assert r == pytest.approx(N / accounting.prior_ratio_bound(D, GAMMA), rel=1e-2)


def test_frapp_guarantee_says_what_it_does_not_cover():
    df, schema = privpub.datasets.load_adult()
    g = privpub.FRAPP.for_privacy(schema, n=len(df), gamma=GAMMA, k=10).guarantee()
    assert g["(d, γ)-privacy at the base rate, views showing t at most once"].holds
    assert not g["(d, γ)-privacy, all views (Def. 2.3)"].holds
    assert "|V| = |I|" in g["(d, γ)-privacy, all views (Def. 2.3)"].statement
