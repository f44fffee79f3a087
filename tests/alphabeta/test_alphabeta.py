"""The αβ algorithm: exact α/β-steps, estimator, parameter choice, guarantee.

Statistical tests use fixed seeds and 4-standard-error tolerances; each has
a power check showing it rejects a parameter 10% off.
"""

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub import accounting
from privpub.alphabeta import AlphaBeta

ALPHA, BETA = 0.3, 0.2
TRIALS = 4000
# The sampling-law tests publish 8 records of a 32-tuple domain thousands of times, and the
# wide-domain ones 2 records of 10^24 tuples: every bound is wide, which each view says
# (UsefulnessWarning); what these tests check is the law, not usefulness.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


@pytest.fixture(scope="module")
def small():
    """A 32-tuple domain and an instance with single, double and triple records."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 7)])
    records = np.array([0, 5, 5, 9, 17, 17, 17, 30], dtype=np.uint64)
    copies = np.bincount(records.astype(np.int64), minlength=schema.size)
    views = [AlphaBeta(schema, ALPHA, BETA).publish(records, duplicates="records", seed=s).codes
             for s in range(TRIALS)]
    counts = np.array([np.bincount(v.astype(np.int64), minlength=schema.size) for v in views])
    return schema, records, copies, counts


def _z(observed_mean, expected_mean, variance, trials):
    return (observed_mean - expected_mean) / math.sqrt(variance / trials)


def test_each_tuple_is_included_with_its_probability(small):
    schema, _, copies, counts = small
    first = ALPHA + BETA
    for t in range(schema.size):
        c = copies[t]
        # copies of t in V: Bernoulli(α+β) + (c−1)·Bernoulli(α) if t ∈ I, else Bernoulli(β)
        mean = first + (c - 1) * ALPHA if c else BETA
        var = first * (1 - first) + (c - 1) * ALPHA * (1 - ALPHA) if c else BETA * (1 - BETA)
        assert abs(_z(counts[:, t].mean(), mean, var, TRIALS)) < 4, (t, c)


def test_inclusion_test_has_power_against_beta_off_by_ten_percent(small):
    schema, _, copies, counts = small
    outside = copies == 0
    freq = counts[:, outside].mean()
    wrong = 1.1 * BETA
    n = TRIALS * outside.sum()
    assert abs(_z(freq, BETA, BETA * (1 - BETA), n)) < 4
    assert abs(_z(freq, wrong, wrong * (1 - wrong), n)) > 4


def test_view_size_has_binomial_mean_and_variance(small):
    schema, records, copies, counts = small
    sizes = counts.sum(axis=1)
    distinct = int((copies > 0).sum())
    extra = len(records) - distinct
    first = ALPHA + BETA
    mean = first * distinct + ALPHA * extra + BETA * (schema.size - distinct)
    var = (first * (1 - first) * distinct + ALPHA * (1 - ALPHA) * extra
           + BETA * (1 - BETA) * (schema.size - distinct))
    assert abs(_z(sizes.mean(), mean, var, TRIALS)) < 4
    # The sample variance of a near-normal sum has standard error var·√(2/(T−1)).
    assert abs(sizes.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (TRIALS - 1))


@pytest.mark.slow
def test_estimator_is_unbiased_for_equality_queries_with_repeated_records(small):
    schema, records, _, _ = small
    frame = schema.decode(records)
    queries = [{}, {"a": 1}, {"b": 1}, {"a": 0, "b": 5}, {"a": 2, "b": 1}, {"a": 3}]
    estimates = {i: [] for i in range(len(queries))}
    for s in range(1500):
        view = AlphaBeta(schema, ALPHA, BETA).publish(frame, duplicates="records", seed=s)
        for i, q in enumerate(queries):
            estimates[i].append(view.estimate(q).value)
    for i, q in enumerate(queries):
        truth = int((frame[list(q)] == pd.Series(q)).all(axis=1).sum()) if q else len(frame)
        est = np.array(estimates[i])
        se = est.std(ddof=1) / math.sqrt(len(est))
        assert abs(est.mean() - truth) < 4 * se, (q, est.mean(), truth)
    # Power: the same test rejects a truth one record off for {"a": 1}.
    est = np.array(estimates[1])
    truth = int((frame["a"] == 1).sum())
    assert abs(est.mean() - (truth + 1)) > 4 * est.std(ddof=1) / math.sqrt(len(est))


def test_stderr_matches_the_spread_of_estimates(small):
    schema, records, _, _ = small
    values, stderrs = [], []
    for s in range(1500):
        e = AlphaBeta(schema, ALPHA, BETA).publish(records,
                duplicates="records", seed=s).estimate({"a": 1})
        values.append(e.value)
        stderrs.append(e.stderr)
    assert np.std(values) == pytest.approx(np.mean(stderrs), rel=0.15)


def test_posterior_matches_brute_force_bayes_on_16_tuples():
    rng = np.random.default_rng(0)
    m = 16
    prior = rng.uniform(0.01, 0.3, size=m)
    view = rng.random(m) < 0.5
    instances = np.array(list(itertools.product([0, 1], repeat=m)), dtype=bool)
    p_instance = np.prod(np.where(instances, prior, 1 - prior), axis=1)
    p_view = np.prod(np.where(instances,
                              np.where(view, ALPHA + BETA, 1 - ALPHA - BETA),
                              np.where(view, BETA, 1 - BETA)), axis=1)
    joint = p_instance * p_view
    brute = (joint[:, None] * instances).sum(axis=0) / joint.sum()
    exact = [accounting.alphabeta_posterior(prior[t], ALPHA, BETA, bool(view[t])) for t in range(m)]
    np.testing.assert_allclose(exact, brute, rtol=1e-10)


def test_exact_privacy_check_agrees_with_a_grid_of_priors():
    for alpha, beta, d, gamma in [(0.4977, 0.0023, 4.65e-4, 0.2), (0.3, 0.01, 0.01, 0.2),
                                  (0.45, 0.05, 0.02, 0.2)]:
        worst_post = max(accounting.alphabeta_posterior(p, alpha, beta, True)
                         for p in np.linspace(1e-9, d, 200))
        worst_ratio = min(accounting.alphabeta_posterior(p, alpha, beta, v) / p
                          for p in np.linspace(1e-9, d, 200) for v in (True, False))
        expected = worst_post <= gamma and worst_ratio >= d / gamma - 1e-9
        assert accounting.is_alphabeta_private(alpha, beta, d, gamma) == expected
    # (0.3, 0.01): posterior (0.31·0.01)/(0.31·0.01 + 0.01·0.99) ≈ 0.238 > 0.2
    assert not accounting.is_alphabeta_private(0.3, 0.01, 0.01, 0.2)


def test_for_privacy_on_adult_sec42_reproduces_the_paper():
    df, schema = privpub.datasets.load_adult()
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10, calibration="sec4.2")
    d = 10 * len(df) / schema.size
    assert mech.d == pytest.approx(d) and mech.d == pytest.approx(4.654e-4, rel=1e-3)
    assert mech.beta == pytest.approx(d / 0.2)
    assert mech.alpha + mech.beta == pytest.approx(0.5)
    g = mech.guarantee()
    assert g["(d, γ)-privacy"].holds
    assert g["(ρ, ε)-usefulness"].holds
    assert "Theorem 4.2" in g["(d, γ)-privacy"].source
    # Theorem 6.3's proof: worst view holds t and no other tuple of its exclusion set.
    a, b = mech.alpha, mech.beta
    worst = (a + b) * (1 - b) * d / ((a + b) * (1 - b) * d + b * (1 - a - b) * (1 - d))
    assert accounting.exclusive_worst_posterior(a, b, d) == pytest.approx(worst)
    assert worst == pytest.approx(0.1664, abs=1e-4) and worst <= 0.2
    assert g["no positive leakage, d-exclusive adversaries"].holds
    # The claimed bound is Bernstein's on the exact variance bound; Theorem 4.3's
    # printed ρ√n is shown beside it.
    sigma2 = len(df) * a * (1 - a) + schema.size * b * (1 - b)
    log = math.log(2 / 0.05)
    assert mech.error_bound() == pytest.approx((log / 3 + math.sqrt(log ** 2 / 9 + 2 * sigma2
                                                                    * log)) / a)
    r = mech.beta * schema.size / (mech.alpha ** 2 * len(df))
    printed = math.sqrt(2 * (r + 1) * math.log(2 / 0.05)) * math.sqrt(len(df))
    assert f"{printed:,.1f}" in str(g)
    assert AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, d=d,
                                 calibration="sec4.2").beta == pytest.approx(mech.beta)


def test_error_bound_covers_the_error_at_its_confidence():
    """Over many seeds the per-query error exceeds the bound in at most ε of the
    runs; a bound 0.6× as large is exceeded more often (the bound is not loose by
    orders of magnitude)."""
    schema = privpub.Schema([privpub.IntRange("a", 0, 199), privpub.IntRange("b", 0, 4)])
    records = np.arange(0, 1000, 3, dtype=np.uint64)
    mech = AlphaBeta(schema, 0.45, 0.05, n=len(records), failure_probability=0.2)
    truth = int((records // 5 < 100).sum())
    errs = np.array([abs(mech.publish(records, seed=s).estimate("a < 100").value - truth)
                     for s in range(400)])
    bound = mech.error_bound()
    assert (errs >= bound).mean() <= 0.2
    assert (errs >= 0.6 * bound).mean() > (errs >= bound).mean()


@pytest.mark.parametrize("kwargs, message", [
    (dict(gamma=0.2, d=0.3), "d = 0.3 (most likely tuple) ≥ γ"),
    (dict(gamma=0.2, d=0.15, calibration="sec4.2"), "needs β = 0.75 ≥ α + β = 0.5"),
    (dict(gamma=1.5, k=10), "gamma must be in (0, 1)"),
    (dict(gamma=0.2, k=10, d=0.1), "exactly one of k"),
    (dict(gamma=0.2), "exactly one of k"),
])
def test_for_privacy_refuses_infeasible_requests(kwargs, message):
    schema = privpub.Schema([privpub.IntRange("a", 0, 99)])
    with pytest.raises(privpub.ParameterError, match=re.escape(message)):
        AlphaBeta.for_privacy(schema, n=10, **kwargs)


def test_adult_publish_size_and_parquet_round_trip(tmp_path):
    df, schema = privpub.datasets.load_adult()
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    view = mech.publish(df, duplicates="records", seed=7)
    expected = mech.beta * (schema.size - 19502) + mech.alpha * len(df) + mech.beta * 19502
    assert abs(len(view) - expected) < 5 * math.sqrt(expected)
    assert 1.1e6 < len(view) < 1.3e6
    assert np.all(np.diff(view.codes.astype(np.int64)) >= 0)
    assert view.parameters["records"]["records_given"] - view.parameters["records"][
        "distinct_tuples"] == 30162 - 19502
    path = tmp_path / "view.parquet"
    view.to_parquet(path)
    back = privpub.PublishedView.read_parquet(path)
    np.testing.assert_array_equal(back.codes, view.codes)
    assert back.parameters == view.parameters and back.schema == schema
    for q in [{"sex": "Male"}, {"age": 30, "salary": ">50K"}]:
        assert back.estimate(q) == view.estimate(q)


@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")  # tiny tables, wide bounds
def test_seeds_reproduce_and_default_randomness_is_not_seeded():
    schema = privpub.Schema([privpub.IntRange("a", 0, 999)])
    mech = AlphaBeta(schema, 0.4, 0.1)
    data = np.arange(0, 1000, 7, dtype=np.uint64)
    a, b = mech.publish(data,
            duplicates="records", seed=1), mech.publish(data, duplicates="records", seed=1)
    np.testing.assert_array_equal(a.codes, b.codes)
    assert not np.array_equal(a.codes, mech.publish(data, duplicates="records", seed=2).codes)
    rng = np.random.default_rng(5)
    first = mech.publish(data, duplicates="records", seed=rng).codes
    assert not np.array_equal(first, mech.publish(data, duplicates="records", seed=rng).codes)
    real = mech.publish(data)
    assert real.seed_policy == "os-csprng" and "seeded" in a.seed_policy


def test_domains_beyond_2_64_publish_and_beyond_2_128_are_refused():
    wide = privpub.Schema([privpub.IntRange(f"x{i}", 0, 9) for i in range(24)])  # m = 10^24
    assert wide.is_wide and wide.limbs == 2
    frame = pd.DataFrame({f"x{i}": [i % 10, 3] for i in range(24)})
    view = AlphaBeta(wide, 0.4, 2e-20).publish(frame, duplicates="records", seed=3)
    assert view.codes.shape[1] == 2
    assert abs(len(view) - (0.4 * 2 + 2e-20 * 1e24)) < 5 * math.sqrt(2e4)
    assert set(view.frame.columns) == set(wide.names)
    huge = privpub.Schema([privpub.IntRange(f"x{i}", 0, 999) for i in range(44)])
    with pytest.raises(privpub.ParameterError, match="2\\^128"):
        AlphaBeta(huge, 0.4, 0.1)


def test_publish_refuses_extra_columns_and_oversized_noise():
    df, schema = privpub.datasets.load_adult()
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    with pytest.raises(privpub.ParameterError, match="not in the schema: \\['extra'\\]"):
        mech.publish(df.assign(extra=1), duplicates="records", seed=1)
    with pytest.raises(privpub.ParameterError, match="max_noise_rows"):
        mech.publish(df, duplicates="records", seed=1, max_noise_rows=1000)
    view = mech.publish(df, duplicates="records", seed=1)
    with pytest.raises(privpub.DomainError, match="'Other' is not in the domain of 'sex'"):
        view.estimate({"sex": "Other"})
    with pytest.raises(privpub.SchemaError, match="no attribute 'colour'"):
        view.estimate({"colour": "red"})


@pytest.mark.slow
def test_seeded_publish_is_byte_identical_on_one_and_two_threads():
    """End to end, in fresh processes: the α-step, the β-step's segments and the
    merge give the same bytes whatever the thread count (docs/design.md, "Conventions")."""
    import os
    import subprocess
    import sys
    script = ("import hashlib, privpub\n"
              "df, schema = privpub.datasets.load_adult()\n"
              "mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)\n"
              "view = mech.publish(df, seed=5, duplicates='records')\n"
              "print(len(view), hashlib.sha256(view.codes.tobytes()).hexdigest())\n")
    outs = []
    for threads in ("1", "2"):
        env = {**os.environ, "RAYON_NUM_THREADS": threads}
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env=env, timeout=300, check=True)
        outs.append(result.stdout.strip())
    assert outs[0] == outs[1] and int(outs[0].split()[0]) > 1_000_000


def _code_counts(trials: int, m: int, excluded: np.ndarray, beta: float,
                 drop_segment_ends: int = 0) -> np.ndarray:
    """How often each code of [0, m) is drawn by the β-step over ``trials`` keys.
    ``drop_segment_ends`` > 0 simulates a β-step that never draws the last code
    of each segment of that many codes (to show the test below has power)."""
    from privpub import _core
    counts = np.zeros(m, dtype=np.int64)
    rows = excluded.reshape(-1, 1)
    for s in range(trials):
        key = privpub.resolve_seed(s).derive("segments").key
        codes = _core.sampling.beta_step(key, m, beta, rows).reshape(-1).astype(np.int64)
        if drop_segment_ends:
            codes = codes[codes % drop_segment_ends != drop_segment_ends - 1]
        counts += np.bincount(codes, minlength=m)
    return counts


def test_every_code_is_drawn_across_segment_and_chunk_boundaries():
    """All 2^20 codes over 200 runs at β = 1/2: every code outside I is drawn
    Binomial(200, 1/2) times, so each at least 30 times unless something is
    wrong (P < 1e-20 per code); codes of I never. This spans several segments
    and the kernel's thread split, so a code that a segment, chunk or thread
    boundary can never reach shows up as a zero."""
    m, beta, trials = 1 << 20, 0.5, 200
    excluded = np.arange(0, m, 997, dtype=np.uint64)
    counts = _code_counts(trials, m, excluded, beta)
    inside = np.zeros(m, dtype=bool)
    inside[excluded.astype(np.int64)] = True
    assert counts[inside].sum() == 0
    assert counts[~inside].min() >= 30
    z = (counts[~inside].mean() - trials * beta) / np.sqrt(trials * beta * (1 - beta)
                                                           / (~inside).sum())
    assert abs(z) < 5
    # Power: the same check fails for a β-step that never draws a segment's last
    # code, whatever the segment length (here 2^17 codes).
    broken = _code_counts(20, m, excluded, beta, drop_segment_ends=1 << 17)
    assert broken[~inside].min() == 0
