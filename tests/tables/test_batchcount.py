"""Q(V) of a batch by histograms (tables.batchcount, issue 36) equals the count
over the rows, condition by condition: in memory and on file, with missing
values, an ordered band column, a column of more than 128 values, and
conditions past the truth-table limit (zip with city) mixed in."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracle import joined_texts  # (tests/oracle.py, not a package)

from privpub import AlphaBeta, Categorical, IntRange, PublishedView, Schema
from privpub.counting.query import Condition
from privpub.tables import batchcount

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

BANDS = ["<20", "20-39", "40-59", "60+"]
CITIES = [f"c{i:03d}" for i in range(300)]
SCHEMA = Schema([Categorical("band", BANDS, ordered=True), IntRange("age", 0, 99),
                 Categorical("city", CITIES), Categorical("sex", ["F", "M", "?"], missing="?"),
                 IntRange("zip", 0, 9_999)])


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"band": rng.choice(BANDS, n), "age": rng.integers(0, 100, n),
                         "city": rng.choice(CITIES, n),
                         "sex": rng.choice(["F", "M", "?"], n, p=[0.45, 0.45, 0.1]),
                         "zip": rng.integers(0, 10_000, n)})


def _conditions(rng: np.random.Generator, count: int) -> list[str]:
    atoms = [lambda: f"band >= '{rng.choice(BANDS)}'",
             lambda: f"age {rng.choice(['<', '>=', '=', '<>'])} {rng.integers(0, 100)}",
             lambda: f"city IN ('{rng.choice(CITIES)}', '{rng.choice(CITIES)}')",
             lambda: f"city NOT IN ('{rng.choice(CITIES)}')",
             lambda: "sex IS NULL" if rng.random() < 0.3 else f"sex = '{rng.choice(['F', 'M'])}'",
             lambda: f"age BETWEEN {rng.integers(0, 50)} AND {rng.integers(50, 100)}",
             lambda: f"zip < {rng.integers(0, 10_000)}"]
    return joined_texts(rng, atoms, count)


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    view = AlphaBeta(SCHEMA, 0.7, 1e-6).publish(_frame(3_000, 1), seed=2,
                                                 duplicates="records")
    path = tmp_path_factory.mktemp("batch") / "view.parquet"
    view.to_parquet(path)
    return view, PublishedView.open(path)


@pytest.mark.parametrize("where", ["memory", "file"])
def test_batch_counts_equal_counts_over_the_rows(views, where):
    view = views[0] if where == "memory" else views[1]
    rng = np.random.default_rng(7)
    batch = [Condition(SCHEMA, t) for t in _conditions(rng, 400)]
    # Conditions on zip and city have no truth table (past its limit): counted over the rows.
    assert 0 < sum(c.truth_table() is None for c in batch) < len(batch) / 2
    # Conditions on the leading attributes (band; band and age) are searched in memory.
    assert sum(c.attributes in (("band",), ("band", "age")) for c in batch) > 20
    expected = [c.count_digits(_all_digits(view), len(view)) for c in batch]
    assert batchcount.count_many(SCHEMA, view.rows, batch) == expected
    assert [e.details["n_view"] for e in view.estimate_many(batch)] == expected


def _all_digits(view) -> dict:
    """Every attribute's domain indices, read in one full pass (the reference)."""
    batches = list(view.rows.batches())
    return {n: np.concatenate([b[n] for b in batches]) for n in SCHEMA.names}


def test_leading_attributes_are_searched_not_read(views, monkeypatch):
    """On sorted codes in memory, a condition on the leading attributes reads no
    row: each run of true leading values is a range of codes, found by binary
    search (a view read back as digits has no codes to search, and is counted)."""
    view = views[0]
    texts = ["band = '40-59'", "band >= '20-39'", "band <> '<20' AND age < 37",
             "NOT (band = '60+' OR age BETWEEN 10 AND 80)", "age >= 0 OR band = '<20'"]
    conditions = [Condition(SCHEMA, t) for t in texts]
    expected = [c.count_digits(_all_digits(view), len(view)) for c in conditions]

    def no_pass(*args):
        raise AssertionError("the rows were read")

    monkeypatch.setattr(type(view.rows), "batches", no_pass)
    monkeypatch.setattr(type(view.rows), "digits", no_pass)
    assert view.rows.count_many(conditions) == expected
    assert batchcount.count_many(SCHEMA, view.rows, conditions) == expected
    monkeypatch.undo()
    as_digits = PublishedView.read_parquet(views[1].rows.path)
    assert as_digits.rows.prefix_counts(conditions) == {}
    assert as_digits.rows.count_many(conditions) == expected


def test_many_runs_are_counted_by_the_pass(views):
    """A leading-attribute condition with more runs than the searches pay for
    (150 here: every even age in three bands, on ~6,600 rows) is left to the
    pass, with the same count; one run is still searched."""
    view = views[0]
    evens = ", ".join(map(str, range(0, 100, 2)))
    many, one = (Condition(SCHEMA, t) for t in
                 (f"band <> '<20' AND age IN ({evens})", "band = '40-59'"))
    assert len(view) < 150 * 2 * 64
    expected = [c.count_digits(_all_digits(view), len(view)) for c in (many, one)]
    assert view.rows.prefix_counts([many, one]) == {1: expected[1]}
    assert view.rows.count_many([many, one]) == expected


def test_the_batch_is_one_pass_over_the_rows(views, monkeypatch):
    """The histograms, not a pass per condition, count a batch in memory."""
    view = views[0]
    passes = []
    original = type(view.rows).counting_batches

    def counted(self, attributes):
        passes.append(tuple(attributes))
        return original(self, attributes)

    monkeypatch.setattr(type(view.rows), "counting_batches", counted)
    conditions = [Condition(SCHEMA, t) for t in _conditions(np.random.default_rng(3), 200)]
    conditions = [c for c in conditions if c.attributes[0] != "band"]  # (those are searched)
    tabled = [c for c in conditions if c.truth_table() is not None]
    batchcount.count_many(SCHEMA, view.rows, tabled)
    assert len(passes) == 1
    batchcount.count_many(SCHEMA, view.rows, conditions)  # and one for those without tables
    assert len(passes) == 3
