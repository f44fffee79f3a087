"""FRAPP: transition law, estimator, γ_frapp derivation and exact posteriors."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.frapp import FRAPP, accounting


@pytest.fixture(scope="module")
def small():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 3)])  # m = 16
    records = np.array([0, 5, 5, 9, 12, 15], dtype=np.uint64)
    return schema, records


def test_each_record_follows_the_frapp_matrix(small):
    schema, _ = small
    mech = FRAPP(schema, 0.4)
    o = (1 - 0.4) / 15
    out = np.array([mech.publish(np.array([6], dtype=np.uint64), seed=s).codes[0]
                    for s in range(6000)])
    freq = np.bincount(out.astype(np.int64), minlength=16) / len(out)
    for t in range(16):
        p = 0.4 if t == 6 else o
        assert abs(freq[t] - p) < 4 * math.sqrt(p * (1 - p) / len(out)), t
    # Power: the test rejects a keep probability 10% off.
    assert abs(freq[6] - 0.44) > 4 * math.sqrt(0.44 * 0.56 / len(out))


def test_estimator_is_unbiased(small):
    schema, records = small
    frame = schema.decode(records)
    mech = FRAPP(schema, 0.5)
    queries = [{"a": 1}, {"b": 1}, {"a": 3, "b": 3}, {}]
    est = {i: [] for i in range(len(queries))}
    for s in range(3000):
        view = mech.publish(records, seed=s)
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


def test_gamma_frapp_meets_d_gamma_per_record_exactly():
    m, d, gamma = 1000, 0.01, 0.2
    g_f = accounting.frapp_gamma_for_privacy(d, gamma, m)
    worst_post, worst_ratio = 0.0, np.inf
    rng = np.random.default_rng(1)
    for p in np.linspace(1e-6, d, 25):
        for _ in range(20):  # the other mass spread at random, or all on one tuple
            rest = rng.dirichlet(np.full(m - 1, 0.05)) * (1 - p)
            prior = np.concatenate(([p], rest))
            y = int(rng.integers(1, m))
            prior_y = prior.copy()
            prior_y[1:] = 0
            prior_y[y] = 1 - p
            worst_post = max(worst_post, accounting.frapp_record_posterior(prior, g_f, 0)[0])
            worst_ratio = min(worst_ratio,
                              accounting.frapp_record_posterior(prior_y, g_f, y)[0] / p)
    assert worst_post <= gamma
    assert worst_ratio >= d / gamma * (1 - 1e-9)
    assert worst_ratio == pytest.approx(d / gamma, rel=1e-3)  # tight: R = γ/d is the largest
    # 10% more γ_frapp breaks the negative-leakage side.
    post, ratio = accounting.frapp_record_leakage(1.1 * g_f, m, d)
    assert ratio < d / gamma


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
    d = 10 * len(df) / schema.size
    r = 0.2 / d
    assert f.gamma_frapp == pytest.approx(r / (schema.size - 1 + r))
    g = f.guarantee()
    assert g["(d, γ)-privacy per record"].holds
    assert not g["(d, γ)-privacy against d-independent adversaries (set model)"].holds
    view = f.publish(df, seed=0)
    assert len(view) == len(df)


def test_bad_parameters():
    schema = privpub.Schema([privpub.IntRange("a", 0, 9)])
    with pytest.raises(privpub.ParameterError, match="gamma_frapp must be in"):
        FRAPP(schema, 1.5)
    with pytest.raises(privpub.ParameterError, match="must exceed the off-diagonal"):
        FRAPP(schema, 0.05)
    with pytest.raises(privpub.ParameterError, match="exactly one of k"):
        FRAPP.for_privacy(schema, n=5, gamma=0.2)
