"""Algorithm 8: the generalized β-step with a product-form source distribution."""

import math

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.alphabeta import AlphaBeta
from privpub.alphabeta.source import SourceDistribution
from privpub.counting.domaincount import count

ALPHA, BETA, TRIALS = 0.3, 0.1, 4000
PROBS = {"a": [0.1, 0.2, 0.3, 0.4], "b": [0.5, 0.25, 0.125, 0.125]}
# 4 records of a 16-tuple domain (and Adult under a weighted β-step): the bounds are wide,
# which each view says (UsefulnessWarning); these tests check Algorithm 8's law.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


@pytest.fixture(scope="module")
def setup():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 3)])  # m = 16
    source = SourceDistribution(schema, PROBS)
    records = np.array([1, 6, 6, 15], dtype=np.uint64)
    mech = AlphaBeta(schema, ALPHA, BETA, source=source)
    counts = np.array([np.bincount(mech.publish(records,
            duplicates="records", seed=s).codes.astype(np.int64),
                                   minlength=16) for s in range(TRIALS)])
    return schema, source, records, mech, counts


def beta_of(t: int) -> float:
    a, b = divmod(t, 4)
    return BETA * 4 * PROBS["a"][a] * 4 * PROBS["b"][b]


def test_noise_tuples_appear_with_beta_t_and_records_with_alpha_plus_beta_t(setup):
    schema, _, records, _, counts = setup
    copies = np.bincount(records.astype(np.int64), minlength=16)
    for t in range(16):
        p = beta_of(t) + (ALPHA if copies[t] else 0.0)
        mean = p + (copies[t] - 1) * ALPHA if copies[t] else p
        var = p * (1 - p) + max(copies[t] - 1, 0) * ALPHA * (1 - ALPHA)
        assert abs(counts[:, t].mean() - mean) < 4 * math.sqrt(var / TRIALS), t
    # Power: the uniform β (the wrong law) is rejected for the most likely tuple (a=3, b=0).
    t = 12
    assert abs(counts[:, t].mean() - BETA) > 4 * math.sqrt(BETA * (1 - BETA) / TRIALS)


@pytest.mark.slow
def test_estimator_with_source_is_unbiased(setup):
    schema, _, records, mech, _ = setup
    frame = schema.decode(records)
    queries = [{"a": 1}, {"b": 2}, {"a": 3, "b": 3}, {}]
    est = np.array([[mech.publish(records,
            duplicates="records", seed=10_000 + s).estimate(q).value for q in queries]
                    for s in range(2000)])
    for j, q in enumerate(queries):
        truth = int((frame[list(q)] == pd.Series(q)).all(axis=1).sum()) if q else len(frame)
        e = est[:, j]
        assert abs(e.mean() - truth) < 4 * e.std(ddof=1) / math.sqrt(len(e)), (q, e.mean())


def test_weighted_count_matches_brute_force(setup):
    schema, source, _, _, _ = setup
    all_codes = np.arange(16, dtype=np.uint64).reshape(-1, 1)
    w = source.weight_of(all_codes)
    assert w.sum() == pytest.approx(16)
    frame = schema.decode(np.arange(16, dtype=np.uint64))
    squares = [x * x for x in source.weights]
    for q in [{"a": 2}, {"a": 0, "b": 3}, {}, "a + b > 3 or a = 0"]:
        mask = privpub.counting.query.Condition(schema, q).mask(frame)
        for method in ("direct", "cond"):
            got = count(schema, q, weights=source.weights, method=method).value
            assert got == pytest.approx(w[mask].sum())
            got = count(schema, q, weights=squares, method=method).value
            assert got == pytest.approx((w[mask] ** 2).sum())


def test_adult_with_empirical_source(tmp_path):
    df, schema = privpub.datasets.load_adult()
    with pytest.raises(privpub.ParameterError, match="d = 51.01.* ≥ γ"):
        AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10,
                              source=SourceDistribution.from_frame(schema, df))
    source = SourceDistribution.from_frame(schema, df, columns=["sex", "race", "salary"])
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10, source=source)
    # The choice is made for the most likely tuple: d·max w(t), β(t) = β·w(t).
    alpha, beta_top = privpub.accounting.calibrate(mech.d * source.max_weight, 0.2)
    assert mech.alpha == pytest.approx(alpha)
    assert mech.beta * source.max_weight == pytest.approx(beta_top)
    g = mech.guarantee()
    assert g["(d, γ)-privacy"].holds and g["source distribution"].holds
    view = mech.publish(df, duplicates="records", seed=4)
    view.to_parquet(tmp_path / "v.parquet")
    back = privpub.PublishedView.read_parquet(tmp_path / "v.parquet")
    assert back.estimate({"sex": "Male"}) == view.estimate({"sex": "Male"})


@pytest.mark.parametrize("probs, message", [
    ({"a": [0.5, 0.5]}, "needs 4 probabilities"),
    ({"a": [0.5, 0.5, 0.5, -0.5]}, "negative"),
    ({"a": [0.5, 0.5, 0.0, 0.0]}, "probability 0"),
    ({"a": [0.3, 0.3, 0.3, 0.3]}, "sums to 1.2"),
    ({"a": {0: 0.5, 1: 0.5, 2: 0.0, 9: 0.0}}, "outside its domain: \\[9\\]"),
    ({"zz": [1.0]}, "not in the schema"),
])
def test_bad_sources_are_refused(probs, message):
    schema = privpub.Schema([privpub.IntRange("a", 0, 3)])
    with pytest.raises(privpub.ParameterError, match=message):
        SourceDistribution(schema, probs)


def test_source_too_skewed_for_beta_is_refused():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3)])
    with pytest.raises(privpub.ParameterError, match="α \\+ β\\(t\\) must stay ≤ 1"):
        AlphaBeta(schema, 0.5, 0.3, source={"a": [0.97, 0.01, 0.01, 0.01]})
