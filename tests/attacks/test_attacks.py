"""Dinur–Nissim reconstruction: the database, its perturbations, and the decoders.

Thresholds from the issue: at E = √n/10 the exhaustive (n ≤ 20) and LP
(n = 256) attacks recover ≥ 99% of the bits; against Sec. 3.3's rounding
and Theorem 5's binomial noise at the paper's parameters they recover ≤ 70%.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privpub.attacks import (
    BinomialNoise,
    BoundedNoise,
    CDModel,
    Exact,
    LaplaceNoise,
    Rounding,
    SubsetSumDatabase,
    default_queries,
    exhaustive_reconstruct,
    lp_reconstruct,
    lstsq_reconstruct,
    random_queries,
)
from privpub.core.errors import ParameterError, QueryError


def bits(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, n).astype(bool)


# ---- decoders: the √n threshold ---------------------------------------------------------
@pytest.mark.parametrize("adversarial", [False, True])
def test_exhaustive_recovers_below_sqrt_n(adversarial):
    n = 16
    E = math.sqrt(n) / 10
    db = SubsetSumDatabase(bits(n), BoundedNoise(E, adversarial=adversarial), seed=1)
    r = exhaustive_reconstruct(db, E)
    assert db.agreement(r.bits) >= 0.99
    assert r.n_queries == 2**n == db.queries_answered


def test_exhaustive_is_within_4e_and_the_first_survivor():
    """Theorem 2 with a wide band, checked against brute force over all candidates."""
    n, E = 8, 1.0
    d = bits(n, 3)
    db = SubsetSumDatabase(d, BoundedNoise(E, adversarial=True), seed=2)
    r = exhaustive_reconstruct(db, E)
    q, a = db.log()
    cands = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(float)
    ok = np.all(np.abs(cands @ q.T.astype(float) - a) <= E, axis=1)
    first = cands[np.argmax(ok)].astype(bool)
    assert ok.any() and np.array_equal(r.bits, first)
    assert np.sum(r.bits != d) <= 4 * E


@pytest.mark.parametrize("solver", ["auto", "highs"])
@pytest.mark.slow
def test_lp_recovers_below_sqrt_n(solver):
    n = 256
    E = math.sqrt(n) / 10
    db = SubsetSumDatabase(bits(n), BoundedNoise(E), seed=1)
    r = lp_reconstruct(db, E, seed=2, solver=solver)
    assert db.agreement(r.bits) >= 0.99
    assert r.n_queries == default_queries(n) == math.ceil(256 * math.log(256) ** 2)
    assert r.note == ""
    q, a = db.log()
    assert np.max(np.abs(q.astype(float) @ r.fractional - a)) <= E + 1e-3


@pytest.mark.slow
def test_first_order_finds_an_lp_feasible_point_and_recovers():
    """At E = √n (uniform noise) least squares misses bits the LP recovers
    (seeded: 0.992 against 1.0); the first-order method returns a point of
    the LP's feasible set (every answer within E) and recovers what HiGHS's does."""
    from privpub.attacks.decoders import band_fit

    n = 256
    E = math.sqrt(n)
    db = SubsetSumDatabase(bits(n, 3), BoundedNoise(E), seed=1)
    queries = random_queries(n, default_queries(n), 2)
    answers = db.query(queries)
    c, note = band_fit(queries, answers, E)
    assert note == ""
    assert np.max(np.abs(queries.astype(float) @ c - answers)) <= E + 1e-3
    assert c.min() >= 0 and c.max() <= 1
    r = lp_reconstruct(db, E, seed=2, solver="first-order")
    highs = lp_reconstruct(db, E, seed=2, solver="highs")
    assert db.agreement(r.bits) >= db.agreement(highs.bits) - 0.01
    assert db.agreement(r.bits) >= 0.99
    assert db.agreement(lstsq_reconstruct(db, seed=2).bits) < db.agreement(r.bits)


def test_first_order_starts_from_least_squares():
    """Under adversarial noise at E = √n/2 the box's centre is already feasible
    for many queries; started there the decoder returned it (0.48 of the bits in
    a seeded sweep). Started from the clipped least-squares fit it recovers."""
    n = 256
    E = math.sqrt(n) / 2
    db = SubsetSumDatabase(bits(n, 0), BoundedNoise(E, adversarial=True), seed=1)
    r = lp_reconstruct(db, E, seed=2, solver="first-order")
    assert r.note == "" and db.agreement(r.bits) >= 0.99


def test_first_order_says_when_it_stops_short():
    """Power: a run cut off after a few steps is not feasible, and says so."""
    from privpub.attacks.decoders import band_fit

    n = 128
    E = math.sqrt(n) / 10
    db = SubsetSumDatabase(bits(n, 4), BoundedNoise(E), seed=1)
    queries = random_queries(n, default_queries(n), 2)
    c, note = band_fit(queries, db.query(queries), E, max_steps=3)
    assert "no point within bound" in note and "largest excess" in note
    with pytest.raises(ParameterError, match="solver"):
        lp_reconstruct(db, E, solver="simplex")


def test_auto_hands_an_infeasible_lp_to_highs():
    """Laplace noise of scale 2 told a bound of 0.5: no point is within it. The
    first-order method stalls and says so; "auto" then returns exactly what
    HiGHS's least-excess LP returns."""
    from privpub.attacks.decoders import band_fit, lp_fit

    n = 64
    db = SubsetSumDatabase(bits(n, 6), LaplaceNoise(2.0), seed=1)
    queries = random_queries(n, default_queries(n), 2)
    answers = db.query(queries)
    _, note = band_fit(queries, answers, 0.5)
    assert "stalled" in note
    auto, auto_note = lp_fit(queries, answers, 0.5)
    highs, highs_note = lp_fit(queries, answers, 0.5, solver="highs")
    assert "least-excess" in auto_note and auto_note == highs_note
    assert np.array_equal(auto, highs)


def test_first_order_metric_bounds_the_curvature_and_projects_exactly():
    """QᵀQ ⪯ a·I + b·11ᵀ (else steps overshoot), and the box projection in that
    metric is the exact minimiser (scipy's bounded least squares on M's Cholesky factor)."""
    from scipy import optimize

    from privpub.attacks.decoders import _metric, _project

    n = 40
    Q = random_queries(n, 600, 7).astype(np.float32)
    a, b = _metric(Q)
    M = a * np.eye(n) + b * np.ones((n, n))
    gram = Q.T.astype(float) @ Q.astype(float)
    assert np.linalg.eigvalsh(M - gram).min() >= 0
    assert a < 0.1 * np.linalg.eigvalsh(gram).max()  # and it is far below ‖Q‖₂² (the point)
    L = np.linalg.cholesky(M).T
    rng = np.random.default_rng(8)
    for scale in (0.3, 2.0, 20.0):
        z = 0.5 + scale * rng.standard_normal(n)
        exact = optimize.lsq_linear(L, L @ z, bounds=(0, 1), tol=1e-12).x
        assert np.max(np.abs(_project(z, a, b) - exact)) <= 1e-6


def test_lp_and_lstsq_recover_against_the_whole_band():
    n = 128
    E = math.sqrt(n) / 10
    db = SubsetSumDatabase(bits(n, 5), BoundedNoise(E, adversarial=True), seed=1)
    assert db.agreement(lp_reconstruct(db, E, seed=2).bits) >= 0.99
    assert db.agreement(lstsq_reconstruct(db, seed=3).bits) >= 0.99


def test_decoders_fail_against_rounding_at_the_papers_e():
    n = 128
    mech = Rounding.paper(n)
    assert pytest.approx(math.sqrt(n) * math.log(n) ** 1.1) == mech.E
    db = SubsetSumDatabase(bits(n), mech, seed=1)
    assert db.agreement(lp_reconstruct(db, mech.E, n_queries=2 * n, seed=2).bits) <= 0.70
    assert db.agreement(lstsq_reconstruct(db, seed=3).bits) <= 0.70
    small = SubsetSumDatabase(bits(16), Rounding.paper(16), seed=1)
    assert small.agreement(exhaustive_reconstruct(small, Rounding.paper(16).E).bits) <= 0.70


def test_decoders_fail_against_binomial_noise_at_the_papers_parameters():
    n = 128
    mech = BinomialNoise(T=n)  # μ = 9
    db = SubsetSumDatabase(bits(n), mech, seed=1)
    bound = mech.small_size(n)  # the paper's high-probability magnitude √R·ln²n
    assert db.agreement(lp_reconstruct(db, bound, n_queries=2 * n, seed=2).bits) <= 0.70
    assert db.agreement(lstsq_reconstruct(db, seed=3).bits) <= 0.70
    small = SubsetSumDatabase(bits(16), BinomialNoise(T=16), seed=1)
    assert small.agreement(exhaustive_reconstruct(small, bound).bits) <= 0.70


def test_lstsq_fails_once_noise_dwarfs_sqrt_n():
    """Power of the threshold: the same decoder at noise sd ≫ √t loses the bits."""
    n = 128
    db = SubsetSumDatabase(bits(n), LaplaceNoise(scale=20 * n), seed=1)
    assert db.agreement(lstsq_reconstruct(db, seed=2).bits) <= 0.70


def test_infeasible_lp_falls_back_and_says_so():
    n = 32
    db = SubsetSumDatabase(bits(n), LaplaceNoise(scale=3.0), seed=1)
    r = lp_reconstruct(db, 0.0, n_queries=200, seed=2)
    assert "infeasible" in r.note and r.bits.shape == (n,)


def test_results_are_reproducible_by_seed():
    n = 64
    runs = []
    for _ in range(2):
        db = SubsetSumDatabase(bits(n), LaplaceNoise(2.0), seed=7)
        runs.append((lstsq_reconstruct(db, seed=8), db.log()[1]))
    assert np.array_equal(runs[0][0].fractional, runs[1][0].fractional)
    assert np.array_equal(runs[0][1], runs[1][1])
    other = SubsetSumDatabase(bits(n), LaplaceNoise(2.0), seed=9)
    assert not np.array_equal(other.query(random_queries(n, 50, 8)), runs[0][1][:50])
    assert not np.array_equal(random_queries(n, 5, 1), random_queries(n, 5, 2))


def test_answers_do_not_depend_on_batching():
    n = 40
    q = random_queries(n, 30, 4)
    one = SubsetSumDatabase(bits(n), LaplaceNoise(3.0), seed=5)
    two = SubsetSumDatabase(bits(n), LaplaceNoise(3.0), seed=5)
    whole = one.query(q)
    parts = np.concatenate([two.query(q[:7]), two.query(q[7:])])
    assert np.array_equal(whole, parts) and two.queries_answered == 30


# ---- perturbations ---------------------------------------------------------------------
def noise_of(mech, n=64, t=20000, seed=11):
    d = bits(n)
    db = SubsetSumDatabase(d, mech, seed=seed)
    q = random_queries(n, t, seed + 1)
    return db.query(q) - q.astype(float) @ d, q


def test_exact_answers_are_the_subset_sums():
    noise, _ = noise_of(Exact(), t=100)
    assert np.all(noise == 0)


def test_bounded_noise_is_uniform_on_the_band():
    E = 3.0
    noise, _ = noise_of(BoundedNoise(E))
    assert stats.kstest(noise, stats.uniform(-E, 2 * E).cdf).pvalue > 1e-6
    # power: a band 10% wider is rejected
    assert stats.kstest(noise, stats.uniform(-1.1 * E, 2.2 * E).cdf).pvalue < 1e-6


def test_adversarial_noise_moves_answers_towards_half_by_the_whole_band():
    E = 2.0
    d = bits(64)
    db = SubsetSumDatabase(d, BoundedNoise(E, adversarial=True), seed=3)
    q = random_queries(64, 5000, 4)
    exact, half = q.astype(float) @ d, q.sum(axis=1) / 2
    a = db.query(q)
    near = np.abs(exact - half) <= E
    assert np.all(a[near] == half[near])
    assert np.all(a[~near] == exact[~near] + E * np.sign(half[~near] - exact[~near]))
    assert near.any() and (~near).any()


def test_rounding_follows_sec_3_3():
    E = 2.5
    d = bits(30)
    db = SubsetSumDatabase(d, Rounding(E), seed=1)
    q = random_queries(30, 3000, 2)
    exact, half = q.astype(float) @ d, q.sum(axis=1) / 2
    want = np.where(np.abs(exact - half) < E, half, exact)
    assert np.array_equal(db.query(q), want)


def test_laplace_is_discrete_laplace():
    scale = 2.5
    noise, _ = noise_of(LaplaceNoise(scale), t=40000)
    assert np.all(noise == np.round(noise))  # integers: no floating-point leakage

    def chi2(s):
        r = math.exp(-1 / s)
        ks = np.arange(-15, 16)
        pmf = (1 - r) / (1 + r) * r ** np.abs(ks)
        obs = np.array([np.sum(noise == k) for k in ks] + [np.sum(np.abs(noise) > 15)])
        exp = np.append(pmf, 1 - pmf.sum()) * noise.size
        return stats.chisquare(obs, exp).pvalue

    assert chi2(scale) > 1e-6
    assert chi2(1.1 * scale) < 1e-6  # power: scale off by 10% is rejected


def test_binomial_noise_has_variance_r_over_4():
    mech = BinomialNoise(T=100, mu=0.0)  # R = 100 coins
    R = mech.coins(64)
    assert R == 100
    u = np.random.default_rng(1).random(40000)
    e = mech.noise(64, u)
    ks = np.arange(R + 1)
    obs = np.bincount((e + R / 2).astype(int), minlength=R + 1)
    keep = stats.binom.pmf(ks, R, 0.5) * e.size >= 5
    exp = stats.binom.pmf(ks, R, 0.5) * e.size

    def pval(expected):
        o = np.append(obs[keep], obs[~keep].sum())
        x = np.append(expected[keep], expected[~keep].sum())
        return stats.chisquare(o, x * o.sum() / x.sum()).pvalue

    assert pval(exp) > 1e-6
    assert abs(e.var() - R / 4) < 4 * (R / 4) * math.sqrt(2 / e.size)
    wide = stats.norm.pdf(ks, R / 2, math.sqrt(1.1 * R / 4))  # power: variance ×1.1 rejected
    assert pval(wide) < 1e-6


def test_binomial_small_queries_are_answered_zero():
    n = 64
    mech = BinomialNoise(T=1, mu=0.0)  # R = 1: small means |q| < ln² n ≈ 17.3
    d = np.ones(n, bool)
    db = SubsetSumDatabase(d, mech, seed=1)
    q = np.zeros((2, n), bool)
    q[0, :10] = True
    q[1, :40] = True
    a = db.query(q)
    assert a[0] == 0 and abs(a[1] - 40) <= 0.5
    assert BinomialNoise(T=64).small_size(64) > 64  # at μ = 9 every query is small


def test_cd_model_keeps_each_bit_with_half_plus_delta():
    n, delta = 20000, 0.1
    d = bits(n)
    db = SubsetSumDatabase(d, CDModel(delta), seed=2)
    eye = np.eye(n, dtype=bool)[:2000]
    copy = db.query(eye)
    kept = np.mean(copy == d[:2000])
    assert abs(kept - (0.5 + delta)) < 4 * math.sqrt(0.24 / 2000)
    assert abs(kept - 0.5) > 4 * math.sqrt(0.25 / 2000)  # power: δ = 0 is rejected
    assert np.array_equal(db.query(eye[:5]), copy[:5])  # one private copy, answered exactly


# ---- bad input ---------------------------------------------------------------------------
def test_bad_input_is_named():
    with pytest.raises(ParameterError, match="bits: bit 1 is 2; entries must be 0 or 1"):
        SubsetSumDatabase([0, 2, 1])
    with pytest.raises(ParameterError, match="non-empty"):
        SubsetSumDatabase([])
    with pytest.raises(ParameterError, match="E must be non-negative"):
        BoundedNoise(-1)
    with pytest.raises(ParameterError, match="advantage"):
        CDModel(0.7)
    with pytest.raises(ParameterError, match="scale"):
        LaplaceNoise(0)
    db = SubsetSumDatabase(bits(4))
    with pytest.raises(QueryError, match=r"\(t, 4\)"):
        db.query(np.ones((2, 5), bool))
    with pytest.raises(QueryError, match="queries: bit 0 of query 1 is 3"):
        db.query([[1, 0, 0, 0], [3, 0, 0, 0]])
    with pytest.raises(ParameterError, match="limit of 20"):
        exhaustive_reconstruct(SubsetSumDatabase(bits(21)), 1.0)
    with pytest.raises(ParameterError, match="bound must be non-negative"):
        lp_reconstruct(db, -1.0)
    with pytest.raises(ParameterError, match="no candidate survives"):
        exhaustive_reconstruct(SubsetSumDatabase(bits(6), LaplaceNoise(5.0), seed=1), 0.0)
    with pytest.raises(ParameterError, match="SubsetSumDatabase"):
        lstsq_reconstruct(object())


# ---- Theorem 5's confidence walk -------------------------------------------------------
def test_confidence_walk_steps_follow_the_binomial():
    """Each step is ln((k+1)/(R−k)), k ~ Bin(R, 1/2): sd checked against the exact sum
    over k (≈ 2/√R), with power against R off by 10%."""
    from privpub.attacks.walk import confidence_walk, delta_prime, stays_private

    R, walks = 400, 40000
    steps = confidence_walk(R, 1, walks, seed=1)[:, 0]

    def exact_sd(r):
        k = np.arange(r)  # k = r has probability 2^-r
        x, w = np.log((k + 1) / (r - k)), stats.binom.pmf(k, r, 0.5)
        return math.sqrt(np.sum(w * x * x) - np.sum(w * x) ** 2)

    se = exact_sd(R) / math.sqrt(2 * walks)
    assert abs(steps.std() - exact_sd(R)) < 4 * se
    assert abs(steps.std() - exact_sd(int(1.1 * R))) > 4 * se
    assert exact_sd(R) == pytest.approx(2 / math.sqrt(R), rel=0.01)
    assert delta_prime(0.1) == pytest.approx(math.log(1.5))
    assert stays_private(confidence_walk(100_000, 100, 50, seed=2), 0.1) == 1.0
    assert stays_private(confidence_walk(10, 100, 50, seed=2), 0.1) == 0.0
    with pytest.raises(ParameterError, match="advantage"):
        delta_prime(0.5)
