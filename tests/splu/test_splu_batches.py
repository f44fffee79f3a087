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
