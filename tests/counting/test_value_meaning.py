"""One meaning for every value (issue 33): missing is a marker outside the
value order, text has no order unless one is declared, a missing label never
merges into a real value. Each case is checked against DuckDB on the same rows
(missing cells as NULL), through the release a user counts with at zero noise
(αβ at α = 1, β = 0 publishes the distinct tuples exactly)."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import privpub
from privpub import AlphaBeta, Categorical, IntRange, Schema
from privpub.core.errors import MissingValueError, QueryError

pytestmark = pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning",
                                        "ignore::privpub.UsefulnessWarning")

#: nhefs-like: income codes 11..22, a non-reporter marked 0 (inside the range).
SCHEMA = Schema([IntRange("income", 0, 22, missing=0),
                 Categorical("hiv", ["negative", "positive", "(missing)"], missing="(missing)"),
                 Categorical("band", ["low", "mid", "high", "(missing)"], ordered=True,
                             missing="(missing)")])


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "income": pd.array(rng.integers(11, 23, n), dtype="Int64"),
        "hiv": rng.choice(["negative", "positive"], n).astype(object),
        "band": pd.Categorical(rng.choice(["low", "mid", "high"], n),
                               categories=["low", "mid", "high"], ordered=True),
    })
    for name in frame:
        frame.loc[rng.random(n) < 0.15, name] = None
    return frame


def _duckdb(frame: pd.DataFrame, where: str) -> int:
    distinct = frame.astype(object).drop_duplicates()  # αβ under set semantics
    distinct["band"] = distinct["band"].map({"low": 0, "mid": 1, "high": 2})
    con = duckdb.connect()
    con.register("t", distinct)
    return con.execute(f"SELECT count(*) FROM t WHERE {where}").fetchone()[0]


#: (privpub's query, the same meaning in DuckDB over NULL cells; band by rank)
CASES = [
    ("income <= 15", "income <= 15"),
    ("income BETWEEN 0 AND 15", "income BETWEEN 0 AND 15"),
    ("income > 0", "income > 0"),
    ("income + 1 < 14", "income + 1 < 14"),
    ("NOT (income > 15)", "NOT coalesce(income > 15, false)"),
    ("income = 0", "income IS NULL"),
    ("income IS NULL", "income IS NULL"),
    ("income IS NOT NULL", "income IS NOT NULL"),
    ("income <> 12", "coalesce(income <> 12, true)"),
    ("hiv = '(missing)'", "hiv IS NULL"),
    ("hiv <> 'negative'", "coalesce(hiv <> 'negative', true)"),
    ("hiv IN ('positive', '(missing)')", "hiv = 'positive' OR hiv IS NULL"),
    ("band >= 'mid'", "band >= 1"),
    ("band < 'high' AND income >= 20", "band < 2 AND income >= 20"),
    ("band NOT BETWEEN 'mid' AND 'high'", "NOT coalesce(band BETWEEN 1 AND 2, false)"),
    ("hiv NOT LIKE 'neg%'", "NOT coalesce(hiv LIKE 'neg%', false)"),
    ("NOT (hiv LIKE 'neg%')", "NOT coalesce(hiv LIKE 'neg%', false)"),
    ("hiv NOT IN ('negative')", "NOT coalesce(hiv IN ('negative'), false)"),
    ("band IS NULL OR hiv IS NULL", "band IS NULL OR hiv IS NULL"),
]


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_missing_is_outside_the_order_at_zero_noise(kind):
    frame = _frame()
    data = frame if kind == "pandas" else pa.Table.from_pandas(frame, preserve_index=False)
    release = AlphaBeta(SCHEMA, 1.0, 0.0).publish(data, duplicates="set", seed=1)
    for query, reference in CASES:
        assert release.estimate(query).value == _duckdb(frame, reference), query


def test_a_range_never_counts_the_non_reporters():
    """The nhefs case: `income <= 15` counted non-reporters marked 0 (issue 33)."""
    frame = _frame()
    release = AlphaBeta(SCHEMA, 1.0, 0.0).publish(frame, duplicates="records", seed=1)
    reporters = frame["income"].dropna()
    assert release.estimate("income <= 15").value == int((reporters <= 15).sum())
    assert release.estimate("income = 0").value == int(frame["income"].isna().sum()) > 0


@pytest.mark.parametrize("query", ["band < '(missing)'", "band BETWEEN 'low' AND '(missing)'",
                                   "band >= '(missing)' OR income > 3"])
def test_order_against_the_missing_marker_is_refused(query):
    """The label's place in a declared order is where it was written, not a meaning."""
    with pytest.raises(QueryError, match=r"missing marker.*band IS NULL"):
        privpub.counting.query.Condition(SCHEMA, query)


@pytest.mark.parametrize("query", ["hiv > 'negative'", "hiv BETWEEN 'a' AND 'z'",
                                   "hiv <= 'positive' AND income > 12"])
def test_order_on_unordered_text_is_refused(query):
    with pytest.raises(QueryError, match=r"'hiv' by order.*ordered=True.*schema file"):
        privpub.counting.query.Condition(SCHEMA, query)


def test_a_declared_order_answers_and_text_order_does_not_sneak_in():
    """Bikeshare: '300-499' < '50-99' alphabetically; the declared order counts right."""
    bands = ["<50", "50-99", "100-299", "300-499", "500+"]
    rng = np.random.default_rng(3)
    drawn = rng.choice(bands, 2_000)
    ordered = pd.DataFrame({"bikers": pd.Categorical(drawn, categories=bands, ordered=True)})
    release = AlphaBeta(Schema.from_frame(ordered), 1.0, 0.0).publish(
        ordered, duplicates="records", seed=1)
    assert release.estimate("bikers >= '300-499'").value == int(
        np.isin(drawn, ["300-499", "500+"]).sum())
    # The same values in order but not declared ordered: no order to compare by.
    unordered = pd.DataFrame({"bikers": pd.Categorical(drawn, categories=bands)})
    release = AlphaBeta(Schema.from_frame(unordered), 1.0, 0.0).publish(
        unordered, duplicates="records", seed=1)
    with pytest.raises(QueryError, match="no declared order"):
        release.estimate("bikers >= '300-499'")


def test_csv_keeps_the_order_its_schema_declares(tmp_path):
    bands = ["<50", "50-99", "100-299", "300-499", "500+"]
    drawn = np.random.default_rng(4).choice(bands, 1_000)
    frame = pd.DataFrame({"bikers": pd.Categorical(drawn, categories=bands, ordered=True)})
    frame.to_parquet(tmp_path / "b.parquet")
    frame.astype(str).to_csv(tmp_path / "b.csv", index=False)
    schema = Schema([Categorical("bikers", bands, ordered=True)])
    counts = [AlphaBeta(schema, 1.0, 0.0).publish(str(tmp_path / name), duplicates="records",
                                                  seed=1).estimate("bikers >= '300-499'").value
              for name in ("b.parquet", "b.csv")]
    assert counts == [int(np.isin(drawn, ["300-499", "500+"]).sum())] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inferred = Schema.from_frame(str(tmp_path / "b.csv"))  # text, in no declared order
    with pytest.raises(QueryError, match="no declared order"):
        AlphaBeta(inferred, 1.0, 0.0).publish(str(tmp_path / "b.csv"), duplicates="records",
                                              seed=1).estimate("bikers >= '300-499'")


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_a_missing_label_that_occurs_is_refused(kind):
    """thornton_hiv: --missing hiv2004=negative merged 1,926 missing cells into 2,695
    negatives. Now it is an error naming the column and the count."""
    frame = pd.DataFrame({"hiv2004": ["negative"] * 5 + [None] * 3 + ["positive"] * 2})
    data = frame if kind == "pandas" else pa.Table.from_pandas(frame)
    with pytest.raises(MissingValueError, match=r"'hiv2004'.*'negative'.*5 cell"):
        Schema.from_frame(data, missing={"hiv2004": "negative"})
    declared = Schema([Categorical("hiv2004", ["negative", "positive"], missing="negative")])
    with pytest.raises(MissingValueError, match=r"'hiv2004'.*'negative'.*5 cell"):
        declared.encode(data)
    ok = Schema.from_frame(data, missing={"hiv2004": "(missing)"})
    assert ok["hiv2004"].values == ("negative", "positive", "(missing)")


def test_a_released_frame_with_its_label_reencodes():
    """A column holding the label and no missing cell is a release read back, not a clash."""
    schema = Schema([Categorical("h", ["negative", "positive", "(missing)"],
                                 missing="(missing)")])
    back = schema.decode(schema.encode(pd.DataFrame({"h": ["negative", None, "positive"]})))
    assert schema.encode(back).tolist() == [0, 2, 1]


def test_outputs_show_labels_not_indices():
    """An ordered attribute is compared by its indices inside; every output shows
    the labels the query named (the αβ card read `"wage" = 4`)."""
    frame = _frame()
    release = AlphaBeta(SCHEMA, 1.0, 0.0).publish(frame, duplicates="set", seed=1)
    records = release.estimate_many([{"band": "mid"}, privpub.col("band") >= "mid"]).to_records(
        0.95)
    assert [r["query"] for r in records] == ['"band" = \'mid\'', '"band" >= \'mid\'']
    assert "'high'" in str(release.estimate({"band": "high", "hiv": "positive"}))
    with pytest.raises(privpub.DomainError, match=r"value 'top' .*'band'"):
        release.estimate({"band": "top"})


@pytest.mark.parametrize("query, message", [
    ({"hiv": ["negative", "positive"]}, r"one value; for several write col\('hiv'\)\.isin"),
    ({"hiv": None}, r"missing cells are '\(missing\)' \(or write \"hiv\" IS NULL\)"),
    ("hiv = NULL", r"compares with NULL.*IS NULL"),
    ("hvi IS NULL", r"unknown column 'hvi'.*attributes: income, hiv, band"),
])
def test_missing_and_lists_asked_the_wrong_way_say_the_right_way(query, message):
    with pytest.raises(QueryError, match=message):
        privpub.counting.query.Condition(SCHEMA, query)


def test_a_splu_estimate_shows_the_query_as_written():
    frame = _frame()
    schema = Schema([SCHEMA["income"], Categorical("s", ["a", "b"])])
    data = pd.DataFrame({"income": frame["income"],
                         "s": ["a", "b"] * (len(frame) // 2)})
    release = privpub.SPLUGen(2, "s", schema=schema).publish(data, seed=1)
    for query in ["income < 15 AND s = 'a'", "income IS NULL AND s = 'b'"]:
        assert release.estimate(query).query == query
