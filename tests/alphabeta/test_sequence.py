"""Exact privacy of Algorithm 7 sequences (privpub.alphabeta.sequence): brute force
over every inclusion pattern, simulation of the publisher, calibration for v views."""

import itertools
import math

import numpy as np
import pytest

import privpub
from privpub.alphabeta import AlphaBeta, sequence, sequence_claims
from privpub.alphabeta.accounting import calibrate
from privpub.alphabeta.multiview import MultiViewPublisher

# The paper's Adult setting (docs/design.md, "Notes on the papers"): d = 10n/m, γ = 0.2.
M, N = 648_023_040, 30_162
D, GAMMA = 10 * N / M, 0.2


def paper_probabilities(alpha, beta, views, index):
    """Algorithm 7 lines 5–7 as printed, written out here independently of the module."""
    s = alpha + beta
    return s, s * math.exp(-1 / views), (1 - s) ** (index - 1) * beta


def pattern_probability(pattern, history, alpha, beta, views, probabilities):
    """Pr[pattern] for one tuple with membership ``history`` (all False: absent),
    following Algorithm 7 view by view."""
    prob, shown = 1.0, False
    for i, (x, member) in enumerate(zip(pattern, history, strict=True), start=1):
        s, p_prev, p_fresh = probabilities(alpha, beta, views, i)
        p = s if member else p_prev if shown else p_fresh
        prob *= p if x else 1 - p
        shown = shown or x
    return prob


def brute_force(alpha, beta, views, history, probabilities=paper_probabilities):
    """(L_max, L_min) over all 2^j patterns, and the two sides' totals."""
    absent = (False,) * len(history)
    ratios, total_in, total_out = [], 0.0, 0.0
    for pattern in itertools.product((False, True), repeat=len(history)):
        p_in = pattern_probability(pattern, history, alpha, beta, views, probabilities)
        p_out = pattern_probability(pattern, absent, alpha, beta, views, probabilities)
        total_in, total_out = total_in + p_in, total_out + p_out
        ratios.append(p_in / p_out)
    return max(ratios), min(ratios), total_in, total_out


HISTORIES = {
    "static": lambda j: (True,) * j,
    "enters at 2": lambda j: (False,) + (True,) * (j - 1),
    "enters at j": lambda j: (False,) * (j - 1) + (True,),
    "leaves at 2": lambda j: (True,) + (False,) * (j - 1),
    "leaves and returns": lambda j: tuple(i % 3 != 1 for i in range(j)),
}
PARAMETERS = [(0.3, 0.1, 8), (0.5, 0.002, 3), (0.05, 0.2, 5), (0.7, 0.25, 20)]


def worst_mismatch(probabilities=paper_probabilities):
    """Largest relative gap between the module's extremes and brute force."""
    gap = 0.0
    for alpha, beta, views in PARAMETERS:
        for j in range(1, min(views, 8) + 1):
            for make in HISTORIES.values():
                history = make(j)
                high, low, total_in, total_out = brute_force(alpha, beta, views, history,
                                                             probabilities)
                assert total_in == pytest.approx(1, rel=1e-12)
                assert total_out == pytest.approx(1, rel=1e-12)
                got_high, got_low = sequence.likelihood_extremes(alpha, beta, views, history)
                gap = max(gap, abs(got_high / high - 1), abs(got_low / low - 1))
    return gap


def test_exact_extremes_equal_brute_force_over_every_pattern():
    assert worst_mismatch() < 1e-12


def test_a_wrong_factor_in_algorithm_7_is_caught(monkeypatch):
    """e^{−1/v} replaced by e^{−2/v} in the module's p' (which the publisher and the
    accounting share) makes the brute force over the paper's Algorithm 7 disagree."""
    def wrong(alpha, beta, views, index):
        s = alpha + beta
        return s, s * math.exp(-2 / views), (1 - s) ** (index - 1) * beta

    monkeypatch.setattr(sequence, "view_probabilities", wrong)
    assert worst_mismatch() > 0.05


def test_classes_hold_every_pattern_with_their_probabilities():
    alpha, beta, views = 0.3, 0.1, 8
    for j in (1, 4, 8):
        classes = {(f, r): (p_in, p_out) for f, r, p_in, p_out in
                   sequence.pattern_classes(alpha, beta, views, j)}
        sums = {key: [0.0, 0.0] for key in classes}
        for pattern in itertools.product((0, 1), repeat=j):
            f = pattern.index(1) + 1 if 1 in pattern else None
            key = (f, sum(pattern) - 1 if f else 0)
            sums[key][0] += pattern_probability(pattern, (True,) * j, alpha, beta, views,
                                                paper_probabilities)
            sums[key][1] += pattern_probability(pattern, (False,) * j, alpha, beta, views,
                                                paper_probabilities)
        for key, (p_in, p_out) in classes.items():
            assert p_in == pytest.approx(sums[key][0], rel=1e-12, abs=1e-300)
            assert p_out == pytest.approx(sums[key][1], rel=1e-12, abs=1e-300)


def test_one_view_is_the_single_view_accounting():
    for calibration in ("exclusive", "independent", "half", "sec4.2"):
        alpha, beta = calibrate(D, GAMMA, calibration)
        leak = sequence.sequence_leakage(alpha, beta, D, 1)
        single_post, single_ratio = privpub.accounting.alphabeta_leakage(alpha, beta, D)
        assert leak.independent_posterior == pytest.approx(single_post, rel=1e-12)
        assert leak.independent_ratio == pytest.approx(single_ratio, rel=1e-12)
        assert leak.exclusive_posterior == pytest.approx(
            privpub.accounting.exclusive_worst_posterior(alpha, beta, D), rel=1e-12)


def test_the_issues_numbers_for_uncalibrated_sequences():
    """Issue 26's table (worst pattern "in every view", planned v = views published):
    exclusive calibration 0.171, 0.196, 0.218, 0.235 at v = 2, 3, 5, 10; the exact
    value at v = 10 is 0.23580…, which rounds to 0.236. The issue's "past γ from v = 5"
    skips v = 4, where the posterior is already 0.2099 > γ."""
    expected = {"exclusive": (0.171, 0.196, 0.218, 0.236), "half": (0.292, 0.327, 0.357, 0.381)}
    for calibration, values in expected.items():
        alpha, beta = calibrate(D, GAMMA, calibration)
        got = [sequence.sequence_leakage(alpha, beta, D, v).independent_posterior
               for v in (2, 3, 5, 10)]
        assert [round(g, 3) for g in got] == list(values), (calibration, got)
    alpha, beta = calibrate(D, GAMMA, "exclusive")
    assert sequence.sequence_leakage(alpha, beta, D, 3).independent_posterior < GAMMA
    assert sequence.sequence_leakage(alpha, beta, D, 4).independent_posterior > GAMMA
    # The closed form of the worst pattern: L = (s/β)·e^{(v−1)/v}.
    alpha, beta = calibrate(D, GAMMA, "exclusive")
    leak = sequence.sequence_leakage(alpha, beta, D, 10)
    assert leak.likelihood_max == pytest.approx((alpha + beta) / beta * math.exp(0.9))


def test_worst_cases_grow_with_the_views_published():
    alpha, beta = calibrate(D, GAMMA, "exclusive")
    leaks = [sequence.sequence_leakage(alpha, beta, D, 20, published=j) for j in range(1, 21)]
    for a, b in itertools.pairwise(leaks):
        assert b.likelihood_max >= a.likelihood_max and b.likelihood_min <= a.likelihood_min


def test_leavers_are_covered_by_the_static_sequence_and_late_entrants_are_not():
    alpha, beta = calibrate(D, GAMMA, "exclusive")
    v = 10
    for j in range(2, v + 1):
        static = sequence.sequence_leakage(alpha, beta, D, v, published=j)
        for left in range(2, j + 1):
            leaver = sequence.sequence_leakage(alpha, beta, D, v, published=j,
                                               history=(True,) * (left - 1)
                                               + (False,) * (j - left + 1))
            before = sequence.sequence_leakage(alpha, beta, D, v, published=left - 1)
            assert leaver.likelihood_max == pytest.approx(before.likelihood_max, rel=1e-12)
            assert leaver.independent_posterior <= static.independent_posterior
    # Entering at version e multiplies the first-inclusion ratio by ~(1 − s)^{−(e−1)}.
    entrant = sequence.sequence_leakage(alpha, beta, D, v, history=(False,) * 4 + (True,) * 6)
    s = alpha + beta
    assert entrant.likelihood_max == pytest.approx(s / (beta * (1 - s) ** 4) * math.exp(5 / v),
                                                   rel=1e-2)
    assert entrant.independent_posterior > GAMMA


QUICK_VIEWS = (1, 2, 7, 20)


#: The single-view closed forms meet γ exactly, so up to floating-point rounding.
ROUNDING = 1e-12


def check_calibrated(views):
    for calibration in sequence.VIEW_CALIBRATIONS:
        alpha, beta = sequence.calibrate_views(D, GAMMA, views, calibration)
        for j in range(1, views + 1):  # every prefix, and the planned sequence
            leak = sequence.sequence_leakage(alpha, beta, D, views, published=j)
            assert leak.independent_posterior <= GAMMA * (1 + ROUNDING), (views, calibration, j)
            assert leak.independent_ratio >= D / GAMMA * (1 - ROUNDING), (views, calibration, j)
            if calibration == "exclusive":
                assert leak.exclusive_posterior <= GAMMA * (1 + ROUNDING), (views, j)


@pytest.mark.parametrize("views", QUICK_VIEWS)
def test_the_calibrated_sequence_is_private_for_both_adversaries(views):
    check_calibrated(views)


@pytest.mark.slow
def test_the_calibrated_sequence_is_private_at_every_v_to_20():
    for views in sorted(set(range(1, 21)) - set(QUICK_VIEWS)):
        check_calibrated(views)


def test_the_search_finds_the_closed_forms_at_one_view():
    for calibration in sequence.VIEW_CALIBRATIONS:
        closed = calibrate(D, GAMMA, calibration)
        found = sequence._least_variance(D, GAMMA, 1, calibration == "exclusive")
        assert found == pytest.approx(closed, rel=1e-5)


def test_single_view_calibrations_are_refused_for_several_views():
    with pytest.raises(privpub.ParameterError, match="'half'.*no version for several views"):
        sequence.calibrate_views(D, GAMMA, 3, "half")


# ---- simulation of the publisher -----------------------------------------------------------

ALPHA, BETA, V = 0.3, 0.1, 20
SIM_D = 0.05


def simulate(trials, seed0=0):
    """Inclusion patterns of every domain tuple over V views, per trial."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 63), privpub.IntRange("b", 0, 63)])
    records = np.sort(np.random.default_rng(7).choice(schema.size, 300, replace=False))
    member = np.zeros(schema.size, dtype=bool)
    member[records] = True
    hits = np.zeros((trials, V, schema.size), dtype=bool)
    for t in range(trials):
        pub = MultiViewPublisher(AlphaBeta(schema, ALPHA, BETA), max_views=V)
        for i in range(V):
            view = pub.publish(records.astype(np.uint64), seed=seed0 + t * V + i,
                               duplicates="set")
            hits[t, i, view.codes.astype(np.int64)] = True
    return hits, member


def rates(hits, member):
    """Per view: (shown, at risk) for tuples of I, of V' − I and fresh noise."""
    out = []
    shown_before = np.zeros_like(hits[:, 0])
    for i in range(hits.shape[1]):
        x = hits[:, i]
        groups = (member[None, :] & np.ones_like(x), ~member & shown_before,
                  ~member & ~shown_before)
        out.append([(int((x & g).sum()), int(g.sum())) for g in groups])
        shown_before = shown_before | x
    return out


def path_posterior(d, first, probabilities):
    """The posterior of the pattern "first shown in view ``first``, then in every view",
    with ``probabilities(i)`` = ((k, n) or p for I, V' − I, fresh noise) for view i, and
    the standard error of log L when counts are given (delta method)."""
    log_l, var = 0.0, 0.0
    for i in range(1, V + 1):
        inside, previous, fresh = probabilities(i)
        if i < first:  # not shown: (1 − s)/(1 − p_i)
            terms = ((inside, 1, False), (fresh, -1, False))
        else:  # shown: s/p_first, then s/p'
            terms = ((inside, 1, True), (fresh if i == first else previous, -1, True))
        for p, sign, shown in terms:
            if isinstance(p, tuple):
                k, n = p
                p = k / n
                var += (1 - p) / (n * p) if shown else p / (n * (1 - p))
            log_l += sign * math.log(p if shown else 1 - p)
    odds = d / (1 - d) * math.exp(log_l)
    post = odds / (1 + odds)
    return post, post * (1 - post) * math.sqrt(var)


def exact_path(d, first, probabilities=sequence.view_probabilities):
    return path_posterior(d, first, lambda i: probabilities(ALPHA, BETA, V, i))[0]


@pytest.fixture(scope="module")
def runs():
    with pytest.warns(privpub.UsefulnessWarning):  # 300 records, a noisy toy domain
        return simulate(300)


@pytest.mark.slow
def test_simulated_worst_posterior_at_20_views_is_the_exact_one(runs):
    """At α = 0.3, β = 0.1 > 1 − e^{−1/20} the worst pattern is not "every view": it
    starts later. Its posterior, with each probability on the path estimated from the
    simulated views, is within 4 SE of the exact one."""
    hits, member = runs
    exact = sequence.sequence_leakage(ALPHA, BETA, SIM_D, V).independent_posterior
    first = max(range(1, V + 1), key=lambda f: exact_path(SIM_D, f))
    assert first > 1 and exact == pytest.approx(exact_path(SIM_D, first), rel=1e-12)
    measured = rates(hits, member)
    post, se = path_posterior(SIM_D, first, lambda i: tuple(measured[i - 1]))
    print(f"first = {first}, simulated {post:.5f} ± {se:.5f}, exact {exact:.5f}")
    assert abs(post - exact) < 4 * se, (post, exact, se)
    # Power: the same path's posterior with p' = s·e^{−2/v} is many standard errors away.
    wrong = exact_path(SIM_D, first, lambda a, b, v, i: (a + b, (a + b) * math.exp(-2 / v),
                                                         (1 - a - b) ** (i - 1) * b))
    assert abs(post - wrong) > 20 * se, (post, wrong, se)


@pytest.mark.slow
def test_simulated_pattern_classes_follow_the_exact_law(runs):
    """χ² of the (f, r) classes at v = 20 (tuples in I and not), at α = 1e-6, classes with
    fewer than 20 expected pooled."""
    from scipy import stats

    hits, member = runs
    trials = hits.shape[0]
    first = np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, 0)
    later = hits.sum(axis=1) - (first > 0)
    classes = sequence.pattern_classes(ALPHA, BETA, V, V)
    for side, mask, col in (("in", member, 2), ("out", ~member, 3)):
        f, r = first[:, mask].ravel(), later[:, mask].ravel()
        total = f.size
        observed, expected, pooled = [], [], [0.0, 0.0]
        for c in classes:
            cf = 0 if c[0] is None else c[0]
            count = int(np.sum((f == cf) & (r == c[1])))
            e = c[col] * total
            if e >= 20:
                observed.append(count)
                expected.append(e)
            else:
                pooled[0] += count
                pooled[1] += e
        observed.append(pooled[0])
        expected.append(pooled[1])
        chi2 = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True) if e > 0)
        p = stats.chi2.sf(chi2, len(observed) - 1)
        print(f"{side}: χ² = {chi2:.1f} on {len(observed) - 1} df, p = {p:.3g}")
        assert p > 1e-6, (side, chi2, len(observed), trials)


def test_the_region_without_a_request_is_the_largest_private_d():
    alpha, beta, views = 0.3, 0.01, 4
    independent, exclusive = sequence.largest_private_d_views(alpha, beta, GAMMA, views)
    at = sequence.sequence_leakage(alpha, beta, independent, views)
    above = sequence.sequence_leakage(alpha, beta, independent * 1.001, views)
    assert at.independent_private(GAMMA) and not above.independent_private(GAMMA)
    at = sequence.sequence_leakage(alpha, beta, exclusive, views)
    above = sequence.sequence_leakage(alpha, beta, exclusive * 1.001, views)
    assert at.exclusive_private(GAMMA) and not above.exclusive_private(GAMMA)
    schema = privpub.Schema([privpub.IntRange("a", 0, 63)])
    claim = MultiViewPublisher(AlphaBeta(schema, alpha, beta), views).guarantee()[
        "(d, γ)-privacy region over all views together"]
    assert f"γ = {GAMMA}: d ≤ {independent:.6g} against d-independent adversaries, " \
           f"d ≤ {exclusive:.6g} against d-exclusive ones" in claim.statement


def test_the_claims_name_the_worst_pattern_also_when_it_starts_late():
    first = max(range(1, V + 1), key=lambda f: exact_path(SIM_D, f))
    claims = {c.name: c for c in sequence_claims.sequence_claims(ALPHA, BETA, SIM_D, 0.2, V, V)}
    text = claims["(d, γ)-privacy over all views together"].statement
    assert first == 3 and "worst pattern: t first shown in view 3, then in every view" in text
    alpha, beta = calibrate(D, GAMMA, "exclusive")
    claims = sequence_claims.sequence_claims(alpha, beta, D, GAMMA, 5, 2)
    assert "worst pattern: t shown in every view" in claims[0].statement


def test_the_readmes_bound_on_entrants_is_the_computed_worst_case():
    """README: the default calibration for v views keeps a tuple that enters
    after version 1 at or below 0.092315 (v = 2, entering at version 2); a
    few larger v and versions of entry stay below it."""
    from pathlib import Path

    df, schema = privpub.datasets.load_adult()
    readme = (Path(__file__).parents[2] / "README.md").read_text()

    def entrant(v: int, published: int, entry: int) -> float:
        mech = MultiViewPublisher.for_privacy(schema, n=len(df), gamma=GAMMA, k=10,
                                              max_views=v).mech
        bits = (False,) * (entry - 1) + (True,) * (published - entry + 1)
        return sequence.sequence_leakage(mech.alpha, mech.beta, mech.d, v, published=published,
                                         history=bits).independent_posterior

    worst = entrant(2, 2, 2)
    assert f"{worst:.6f}" == "0.092315" and "0.092315, for v = 2" in readme
    assert all(entrant(v, p, e) <= worst for v, p, e in [(3, 3, 2), (5, 3, 3), (20, 20, 2)])
