"""Histograms of many subsets from the maximal ones, summed down: exact."""

import itertools

import numpy as np
import pytest

import privpub
from privpub.tables.cover import budgeted_cover, maximal_cover, sum_down


def test_sum_down_matches_direct_histograms_in_any_attribute_order():
    rng = np.random.default_rng(0)
    sizes = {"a": 3, "b": 4, "c": 2, "d": 5}
    rows = {k: rng.integers(0, v, 500) for k, v in sizes.items()}

    def hist(attrs):
        index = np.zeros(500, dtype=np.int64)
        for a in attrs:
            index = index * sizes[a] + rows[a]
        return np.bincount(index, minlength=int(np.prod([sizes[a] for a in attrs])))

    cover = ["a", "b", "c", "d"]
    full = hist(cover)
    subsets = [list(s) for k in (0, 1, 2, 3, 4) for s in itertools.permutations(cover, k)]
    for subset, summed in zip(subsets, sum_down(full, cover, subsets, sizes), strict=True):
        np.testing.assert_array_equal(summed, hist(subset))


def test_maximal_cover_holds_every_subset():
    subsets = [["a"], ["b", "a"], ["c"], ["a", "b"], ["b", "c", "d"], ["d"]]
    covers, where = maximal_cover(subsets, ["a", "b", "c", "d"])
    assert covers == [["a", "b"], ["b", "c", "d"]]
    for s, w in zip(subsets, where, strict=True):
        assert set(s) <= set(covers[w])


def test_budgeted_cover_holds_every_subset_within_the_budget():
    sizes = {"a": 2, "b": 3, "c": 4, "d": 5, "e": 60}
    order = list(sizes)
    subsets = [list(s) for k in (1, 2, 3) for s in itertools.combinations(order, k)]
    for budget in (1, 60, 120, 600, 10**6):
        covers, where = budgeted_cover(subsets, order, sizes, budget)
        for s, w in zip(subsets, where, strict=True):
            assert set(s) <= set(covers[w])
        # a cover wider than its maximal subset stays within the budget
        assert all(len(c) == 3 or np.prod([sizes[a] for a in c]) <= budget for c in covers)
    assert len(budgeted_cover(subsets, order, sizes, 10**6)[0]) == 1  # one pass over a..e
    assert len(budgeted_cover(subsets, order, sizes, 1)[0]) == 10     # the ten triples


def test_budgeted_histograms_equal_direct_ones_on_adult():
    """Every one of Adult's 129 marginals through the budgeted cover (18 passes)
    equals its own bincount."""
    df, schema = privpub.datasets.load_adult()
    from privpub.experiments.adult_alphabeta import equality_queries, true_marginals
    view = privpub.AlphaBeta(schema, 1.0, 0.0).publish(df, seed=0, duplicates="records")
    subsets = equality_queries(schema)
    assert (view.estimate_marginals_arrays(subsets).n_view
            == true_marginals(schema, df, subsets)).all()


# A few records of a small domain: the view says its bound is weak
# (UsefulnessWarning); this test checks that marginals agree with single queries.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_marginal_arrays_agree_with_frames_and_single_queries():
    schema = privpub.Schema([privpub.IntRange("a", 0, 3), privpub.IntRange("b", 0, 7),
                             privpub.Categorical("c", ["x", "y", "z"])])
    codes = np.array([0, 5, 9, 17, 30, 31, 40, 77, 95], dtype=np.uint64)
    view = privpub.AlphaBeta(schema, 0.4, 0.2).publish(codes, seed=3)
    subsets = [["c", "a"], ["a"], ["b", "c"], ["c"]]
    bulk = view.estimate_marginals_arrays(subsets)
    frames = view.estimate_marginals_many(subsets)
    for s, frame in enumerate(frames):
        part = slice(bulk.offsets[s], bulk.offsets[s + 1])
        np.testing.assert_allclose(frame["estimate"], bulk.estimate[part])
        row = frame.iloc[1]
        single = view.estimate({k: frame[k].iloc[1] for k in subsets[s]})
        assert single.n_view == row["n_view"] and abs(single.value - row["estimate"]) < 1e-9


# 3 records: the view says its bound is weak (UsefulnessWarning); this test checks
# the marginal's labels.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_marginal_frames_label_cells_from_codes_in_projection_order():
    """Labels are the projection's values, first attribute slowest: strings as a
    Categorical over the declared categories (and order), integers as integers."""
    import pandas as pd

    schema = privpub.Schema([privpub.IntRange("a", 5, 7),
                             privpub.Categorical("c", ["z", "x", "y"], ordered=True),
                             privpub.Categorical("d", [10, 20])])
    view = privpub.AlphaBeta(schema, 0.5, 0.2).publish(np.array([0, 4, 11], dtype=np.uint64),
                                                       seed=1)
    (frame,) = view.estimate_marginals_many([["c", "a", "d"]], level=None)
    expected = schema.projection(["c", "a", "d"])
    assert list(frame.columns) == ["c", "a", "d", "n_view", "n_domain", "estimate", "stderr"]
    assert isinstance(frame["c"].dtype, pd.CategoricalDtype) and frame["c"].cat.ordered
    assert list(frame["c"].cat.categories) == ["z", "x", "y"]
    assert frame["c"].astype(str).tolist() == expected["c"].astype(str).tolist()
    for name in ("a", "d"):
        assert frame[name].dtype == expected[name].dtype
        assert frame[name].tolist() == expected[name].tolist()
    assert (frame["n_domain"] == 1).all() and frame.attrs == {"counts": view.counts}
    assert frame["n_view"].sum() == len(view)
