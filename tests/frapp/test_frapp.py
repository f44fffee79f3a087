"""FRAPP: transition law, estimator, γ_frapp derivation and exact posteriors."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.frapp import FRAPP, accounting

# The law tests publish a few records of a 16-tuple domain thousands of times: every bound
# is wide, which each view says (UsefulnessWarning); they check the transition law.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


@pytest.fixture(scope="module")
def small():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 3)])  # m = 16
    records = np.array([0, 5, 5, 9, 12, 15], dtype=np.uint64)
    return schema, records


def test_each_record_follows_the_frapp_matrix(small):
    schema, _ = small
    mech = FRAPP(schema, 0.4)
    o = (1 - 0.4) / 15
    out = np.array([mech.publish(np.array([6], dtype=np.uint64),
            duplicates="records", seed=s).codes[0]
                    for s in range(6000)])
    freq = np.bincount(out.astype(np.int64), minlength=16) / len(out)
    for t in range(16):
        p = 0.4 if t == 6 else o
        assert abs(freq[t] - p) < 4 * math.sqrt(p * (1 - p) / len(out)), t
    # Power: the test rejects a keep probability 10% off.
    assert abs(freq[6] - 0.44) > 4 * math.sqrt(0.44 * 0.56 / len(out))


@pytest.mark.slow
def test_estimator_is_unbiased(small):
    schema, records = small
    frame = schema.decode(records)
    mech = FRAPP(schema, 0.5)
    queries = [{"a": 1}, {"b": 1}, {"a": 3, "b": 3}, {}]
    est = {i: [] for i in range(len(queries))}
    for s in range(3000):
        view = mech.publish(records, duplicates="records", seed=s)
        assert len(view) == len(records)
        for i, q in enumerate(queries):
            est[i].append(view.estimate(q).value)
    for i, q in enumerate(queries):
        truth = int((frame[list(q)] == pd.Series(q)).all(axis=1).sum()) if q else len(frame)
        e = np.array(est[i])
        # ({} has no spread: n_V = n always and the estimate is exactly n.)
        se = e.std(ddof=1) / math.sqrt(len(e))
        assert abs(e.mean() - truth) <= 4 * se + 1e-9, (q, e.mean(), truth)
    e = np.array(est[0])  # power: the test rejects a truth one record off
    wrong = int((frame["a"] == 1).sum()) + 1
    assert abs(e.mean() - wrong) > 4 * e.std(ddof=1) / math.sqrt(len(e))


def test_gamma_frapp_is_the_largest_meeting_gamma_and_has_power():
    """The calibrated γ_frapp's exact posterior (frapp_posterior, small domain,
    others at the base rate) for a tuple shown once is ≤ γ; 10% more γ_frapp
    breaks it."""
    m, n, d, gamma = 80, 4, 0.05, 0.2
    g_f = accounting.frapp_gamma_for_privacy(d, gamma, m, n)
    priors = np.full(m, n / m)
    priors[0] = d
    counts = np.zeros(m, dtype=np.int64)
    counts[:n] = 1
    assert accounting.frapp_posterior(priors, g_f, counts)[0] <= gamma
    assert accounting.frapp_posterior(priors, g_f, counts)[0] == pytest.approx(gamma, rel=2e-3)
    assert accounting.frapp_posterior(priors, 1.1 * g_f, counts)[0] > gamma


def test_set_model_posterior_matches_brute_force_bayes():
    m, g_f = 16, 0.3
    rng = np.random.default_rng(2)
    priors = rng.uniform(0.05, 0.4, size=m)
    view = np.zeros(m, dtype=np.int64)
    view[[1, 4]] = [1, 2]  # V = {1, 4, 4}
    o = (1 - g_f) / (m - 1)
    a = np.full((m, m), o)
    np.fill_diagonal(a, g_f)
    outputs = [1, 4, 4]
    num, total = np.zeros(m), 0.0
    for inst in itertools.combinations(range(m), 3):
        p_inst = np.prod([priors[s] if s in inst else 1 - priors[s] for s in range(m)])
        # Pr[multiset V | I]: sum over assignments of I's records to V's entries,
        # divided by the orderings of the repeated output 4.
        lik = sum(np.prod([a[s, v] for s, v in zip(inst, perm, strict=True)])
                  for perm in itertools.permutations(outputs)) / 2
        total += p_inst * lik
        num[list(inst)] += p_inst * lik
    np.testing.assert_allclose(accounting.frapp_posterior(priors, g_f, view), num / total,
                               rtol=1e-9)


def test_set_model_posterior_shows_the_count_leak():
    priors = np.array([0.3] + [1.0] * 3 + [0.0] * 12)
    view = np.zeros(16, dtype=np.int64)
    view[[5, 6, 7, 8]] = 1  # four records: t must be in I
    assert accounting.frapp_posterior(priors, 0.3, view)[0] == pytest.approx(1.0)
    view[8] = 0  # three records: t cannot be
    assert accounting.frapp_posterior(priors, 0.3, view)[0] == pytest.approx(0.0)


def test_for_privacy_on_adult_and_guarantee():
    df, schema = privpub.datasets.load_adult()
    f = FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    assert f.gamma_frapp == pytest.approx(0.02434, rel=1e-3)
    post = f.posteriors()
    assert post["once"] == pytest.approx(0.2) and post["twice"] > 0.2
    g = f.guarantee()
    assert g["(d, γ)-privacy at the base rate, views showing t at most once"].holds
    assert not g["(d, γ)-privacy, all views (Def. 2.3)"].holds
    view = f.publish(df, duplicates="records", seed=0)
    assert len(view) == len(df)
    assert "3,990 tuples have several" in str(view.guarantee())


def test_bad_parameters():
    schema = privpub.Schema([privpub.IntRange("a", 0, 9)])
    with pytest.raises(privpub.ParameterError, match="gamma_frapp must be in"):
        FRAPP(schema, 1.5)
    with pytest.raises(privpub.ParameterError, match="must exceed the off-diagonal"):
        FRAPP(schema, 0.05)
    with pytest.raises(privpub.ParameterError, match="exactly one of k"):
        FRAPP.for_privacy(schema, n=5, gamma=0.2)


def test_a_prior_below_the_base_rate_is_asked_for_as_for_alphabeta(tmp_path):
    """k < 1 (d below n/m) is refused unless allowed, with αβ's message; an allowed one
    says so in the release's parameters and survives a round trip through Parquet."""
    df, schema = privpub.datasets.load_adult()
    for build in (FRAPP.for_privacy, privpub.AlphaBeta.for_privacy):
        with pytest.raises(privpub.ParameterError, match=r"below the base rate .*\(k = 0.5 < 1\)"):
            build(schema, n=len(df), gamma=0.2, k=0.5)
    with pytest.raises(privpub.ParameterError, match="below the base rate"):
        FRAPP(schema, 0.5, n=len(df), d=0.5 * len(df) / schema.size)
    f = FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=0.5, allow_prior_below_base_rate=True)
    view = f.publish(df, duplicates="records", seed=0)
    assert view.parameters["allow_prior_below_base_rate"] is True
    view.to_parquet(tmp_path / "v.parquet")
    again = privpub.PublishedView.open(tmp_path / "v.parquet")
    assert again.mechanism_object().allow_prior_below_base_rate is True
    with pytest.raises(privpub.ParameterError, match="True or False"):
        FRAPP(schema, 0.5, allow_prior_below_base_rate="yes")
