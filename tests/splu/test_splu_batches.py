"""SPLU batches: predicates reading the same attributes share one pass over the
release (a joint histogram summed over the domain tuples each predicate holds
on). Checked exactly against a pass per predicate, for predicates of every
shape, for one and two sensitive attributes, and past the cell limit."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.splu import SPLUGen, histograms, reconstruct_many
from privpub.splu.histograms import predicate_histogram, predicate_histograms

WHERES = [None, "TRUE", "FALSE", "a = 1", "a = 2", "a IN (0, 3) OR a > 4", "NOT a = 1",
          "a = 1 AND b < 3", "b = 2 AND a = 1", "a + b > 5", "b BETWEEN 1 AND 4 OR a = 0",
          "a = 99 - 99", "c = 'x'", "c <> 'y' AND b = 0"]


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(4)
    n = 3_000
    df = pd.DataFrame({"a": rng.integers(0, 6, n), "b": rng.integers(0, 5, n),
                       "c": rng.choice(["x", "y", "z"], n),
                       "s": rng.integers(0, 7, n), "t": rng.integers(0, 5, n)})
    schema = privpub.Schema([privpub.IntRange("a", 0, 5), privpub.IntRange("b", 0, 4),
                             privpub.Categorical("c", ["x", "y", "z"]),
                             privpub.IntRange("s", 0, 6), privpub.IntRange("t", 0, 4)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return SPLUGen(3, ["s", "t"], schema=schema).publish(df, seed=2)


@pytest.mark.parametrize("attrs", [["s"], ["t"], ["s", "t"]])
def test_shared_passes_equal_a_pass_per_predicate(release, attrs):
    shared = predicate_histograms(release, WHERES, attrs)
    for where, hist in zip(WHERES, shared, strict=True):
        assert np.array_equal(hist, predicate_histogram(release, where, attrs)), where


def test_predicates_without_a_truth_table_are_masked_over_their_projection(release,
                                                                            monkeypatch):
    """Past the truth table's limit a predicate is evaluated over the projection's
    digits: the same histograms."""
    expected = [predicate_histogram(release, w, ["s"]) for w in WHERES]
    monkeypatch.setattr(privpub.Condition, "truth_table", lambda self: None)
    for where, hist, want in zip(WHERES, predicate_histograms(release, WHERES, ["s"]), expected,
                                 strict=True):
        assert np.array_equal(hist, want), where


def test_past_the_cell_limit_each_predicate_gets_its_own_pass(release, monkeypatch):
    expected = [predicate_histogram(release, w, ["s", "t"]) for w in WHERES]
    # No joint histogram over a predicate's attributes fits:
    monkeypatch.setattr(histograms, "MAX_CELLS", 2 * 7 * 5)
    for hist, want in zip(predicate_histograms(release, WHERES, ["s", "t"]), expected, strict=True):
        assert np.array_equal(hist, want)


def test_a_batch_equals_its_queries_one_by_one(release):
    queries = [(w, {"s": v}) for w in WHERES for v in (0, 3)] + \
        [(w, {"s": 1, "t": 2}) for w in WHERES[:6]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        batch = reconstruct_many(release, queries, method="exact-rate")
        alone = [reconstruct_many(release, [q], method="exact-rate").value[0] for q in queries]
    assert np.allclose(batch.value, alone, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("method", ["paper", "exact-rate", "partition"])
def test_a_batch_gives_each_query_its_own_estimate_exactly(release, method, monkeypatch):
    """Every field of every estimate (value and stderr to the bit, states,
    intervals, notes) is the one the query gets alone, with the joint histograms
    counted a few per pass and the state counts gathered a few queries at a time."""
    attrs = [["s"]] if method == "partition" else [["s"], ["t"], ["s", "t"]]
    rng = np.random.default_rng(12)
    queries = [(w, {a: int(rng.integers(0, 5)) for a in rng.permutation(chosen)})
               for w in WHERES for chosen in attrs for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        alone = [reconstruct_many(release, [q], method=method)[0] for q in queries]
        monkeypatch.setattr(histograms, "PASS_CELLS", 200)
        monkeypatch.setattr(histograms, "STATE_CELLS", 40)
        batch = reconstruct_many(release, queries, method=method)
    assert [batch[i] for i in range(len(queries))] == alone
    assert batch.value.tolist() == [e.value for e in alone]
    assert batch.states == [e.states for e in alone]


def test_joint_histograms_counted_a_few_per_pass_are_the_same(release, monkeypatch):
    subsets = [["a", "s"], ["b", "s", "t"], ["c"], ["a", "b", "c", "s"], ["t"]]
    whole = histograms.joint_histograms(release, subsets)
    monkeypatch.setattr(histograms, "PASS_CELLS", 50)  # each subset a pass of its own
    for got, want, attrs in zip(histograms.joint_histograms(release, subsets), whole, subsets,
                                strict=True):
        assert np.array_equal(got, want)
        assert np.array_equal(got, histograms.joint_counts(release, attrs).reshape(-1))


def test_release_determined_intervals_of_a_batch_are_each_querys_alone():
    """A search whose range closes where no count passes its test (here: P's 6
    records all published with s, (1/3)^6 below the tail) stays at its end
    while a wide query's search runs on (it had moved one past it)."""
    from privpub.splu.uncertainty import guaranteed_interval

    y = np.array([[0.0, 0.0, 0.0, 6.0], [200_000.0, 90_000.0, 150_000.0, 60_000.0],
                  [40.0, 3.0, 20.0, 11.0]])
    lower, upper = guaranteed_interval(y, 3, 0.95)
    alone = [guaranteed_interval(y[i:i + 1], 3, 0.95) for i in range(len(y))]
    assert lower.tolist() == [float(lo[0]) for lo, _ in alone]
    assert upper.tolist() == [float(hi[0]) for _, hi in alone]
