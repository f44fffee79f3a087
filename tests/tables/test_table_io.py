"""Columnar views and inputs: pandas ↔ Arrow ↔ polars ↔ Parquet, streaming, ordered categories."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import (
    AlphaBeta,
    Categorical,
    DataTypeError,
    IntRange,
    PublishedView,
    Schema,
    count_domain,
)

pl = pytest.importorskip("polars")

QUERIES = ["age > 50", "sex = 'Female' and salary = '>50K'",
           "\"marital-status\" in ('Divorced', 'Separated') or age < 25", None]


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


@pytest.fixture(scope="module")
def view(adult):
    df, schema = adult
    return AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(df,
            duplicates="records", seed=7)


def small_schema() -> Schema:
    return Schema([Categorical("band", ["low", "mid", "high", "top"], ordered=True),
                   Categorical("city", ["Oslo", "Lima", "Pune"], dtype="category"),
                   IntRange("score", -5, 300, dtype="int32"),
                   Categorical("flag", [False, True])])


def small_frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    schema = small_schema()
    return pd.DataFrame({
        "band": pd.Categorical.from_codes(rng.integers(0, 4, n),
                                          dtype=schema["band"].categorical_dtype),
        "city": pd.Categorical.from_codes(rng.integers(0, 3, n),
                                          dtype=schema["city"].categorical_dtype),
        "score": rng.integers(-5, 301, n).astype(np.int32),
        "flag": rng.integers(0, 2, n).astype(bool),
    })


def test_view_frame_keeps_categories_order_and_integers():
    schema, df = small_schema(), small_frame()
    view = AlphaBeta(schema, 1.0, 0.0).publish(df,
            duplicates="records", seed=1)  # every record kept, no noise
    frame = view.frame
    assert frame["band"].cat.ordered
    assert list(frame["band"].cat.categories) == ["low", "mid", "high", "top"]
    assert list(frame["city"].cat.categories) == ["Oslo", "Lima", "Pune"]
    assert frame["score"].dtype == np.int32 and frame["flag"].dtype == bool
    expected = df.sort_values(list(df.columns)).reset_index(drop=True)
    got = frame.sort_values(list(df.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected)


def test_arrow_polars_parquet_round_trips(view, tmp_path):
    schema = view.schema
    table = view.to_arrow()
    for attr in schema:  # Adult's attributes are all Categorical: dictionary-encoded
        assert pa.types.is_dictionary(table.schema.field(attr.name).type)
        assert table.column(attr.name).chunk(0).dictionary.to_pylist() == list(attr.values)
    np.testing.assert_array_equal(schema.encode(table), view.codes)
    frame = view.to_polars()
    assert isinstance(frame, pl.DataFrame) and frame.height == len(view)
    np.testing.assert_array_equal(schema.encode(frame), view.codes)
    path = tmp_path / "v.parquet"
    view.to_parquet(path)
    stored = pq.read_schema(path)  # string columns come back as Arrow dictionaries …
    assert all(pa.types.is_dictionary(stored.field(a.name).type) for a in schema
               if a.kind == "string")
    chunks = pq.ParquetFile(path).metadata.row_group(0)  # … and every column is one on disk
    assert all("RLE_DICTIONARY" in chunks.column(j).encodings for j in range(len(schema)))
    back = PublishedView.read_parquet(path)
    np.testing.assert_array_equal(back.codes, view.codes)
    # Other readers see ordinary values.
    by_pandas = pd.read_parquet(path)
    assert by_pandas["sex"].astype(str).tolist() == view.frame["sex"].astype(str).tolist()
    by_duckdb = duckdb.sql(f"select count(*) from read_parquet('{path}') where age > 50 "
                           "and sex = 'Female'").fetchall()[0][0]
    assert by_duckdb == view.estimate("age > 50 and sex = 'Female'").n_view


def test_small_schema_round_trips_every_form(tmp_path):
    schema, df = small_schema(), small_frame()
    view = AlphaBeta(schema, 0.5, 0.3).publish(df, duplicates="records", seed=2)
    for back in (view.to_arrow(), view.to_polars(), view.frame):
        np.testing.assert_array_equal(schema.encode(back), view.codes)
    view.to_parquet(tmp_path / "s.parquet")
    for reopen in (PublishedView.read_parquet, PublishedView.open):
        again = reopen(tmp_path / "s.parquet")
        assert again.schema == schema
        pd.testing.assert_frame_equal(again.frame, view.frame)
    assert pq.read_table(tmp_path / "s.parquet").schema.field("score").type == pa.int32()


def test_every_input_kind_gives_the_same_view(adult, tmp_path):
    df, schema = adult
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    reference = mech.publish(df, duplicates="records", seed=11).codes
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, tmp_path / "adult.parquet")
    df.to_csv(tmp_path / "adult.csv", index=False)
    as_categories = df.astype({c: "category" for c in df.columns if c != "age"})
    inputs = {
        "arrow": table,
        "arrow dictionary": pa.Table.from_pandas(as_categories, preserve_index=False),
        "record batch reader": pa.RecordBatchReader.from_batches(table.schema,
                                                                 table.to_batches(5000)),
        "polars": pl.from_pandas(df),
        "parquet path": tmp_path / "adult.parquet",
        "csv path": str(tmp_path / "adult.csv"),
        "pandas categories": as_categories,
    }
    for name, data in inputs.items():
        np.testing.assert_array_equal(mech.publish(data,
                duplicates="records", seed=11).codes, reference,
                                      err_msg=name)
        with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
            inferred = Schema.from_frame(data if name != "record batch reader" else table)
        assert inferred.names == schema.names


def test_schema_inference_agrees_across_inputs(adult):
    df, schema = adult
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        assert Schema.from_frame(pa.Table.from_pandas(df, preserve_index=False)) == schema
    with pytest.warns(privpub.PrivacyWarning, match="derived from the data"):
        assert Schema.from_frame(pl.from_pandas(df)) == schema


def test_arrow_input_errors_name_column_row_and_value():
    schema = small_schema()
    table = pa.Table.from_pandas(small_frame(10), preserve_index=False)
    bad = table.set_column(1, "city", pa.array(["Oslo"] * 9 + ["Rome"]))
    with pytest.raises(privpub.DomainError, match="'city'.*'Rome' at row 9"):
        schema.encode(bad)
    nulls = table.set_column(2, "score", pa.array([1] * 9 + [None], type=pa.int32()))
    with pytest.raises(privpub.MissingValueError, match="'score'.*first at row 9"):
        schema.encode(nulls)
    wrong = table.set_column(2, "score", pa.array(["1"] * 10))
    with pytest.raises(DataTypeError, match="'score' holds string"):
        schema.encode(wrong)
    with pytest.raises(DataTypeError, match="expected a table"):
        schema.encode([1, 2, 3])
    with pytest.raises(privpub.SchemaError, match="no column 'band'"):
        schema.encode(table.drop_columns(["band"]))


def test_ordered_categorical_comparisons_follow_the_declared_order():
    schema, df = small_schema(), small_frame(5000)
    view = AlphaBeta(schema, 1.0, 0.0).publish(df,
            duplicates="records", seed=3)  # the view is the data
    for sql, truth in [("band > 'low'", df["band"] > "low"),
                       ("band <= 'high'", df["band"] <= "high"),
                       ("band between 'mid' and 'high'", (df["band"] >= "mid")
                        & (df["band"] <= "high")),
                       ("band in ('top', 'low') and score > 100", df["band"].isin(["top", "low"])
                        & (df["score"] > 100))]:
        assert view.estimate(sql).n_view == int(truth.sum()), sql
    cond = privpub.Condition(schema, "band > 'low'")  # on a frame of values, too
    assert cond.count(df) == int((df["band"] > "low").sum())
    # Alphabetically 'high' < 'low' < 'mid' < 'top': that reading would count differently.
    assert count_domain(schema, "band > 'low'") == 3 * 306 * 2 * 3
    with pytest.raises(privpub.DomainError, match="'lowest'"):
        view.estimate("band > 'lowest'")
    with pytest.raises(privpub.QueryError, match="LIKE"):
        view.estimate("band like 'l%'")


@pytest.mark.parametrize("batch_rows", [1, 997, 1 << 20])
@pytest.mark.slow
def test_file_backed_estimates_match_memory_at_any_batch_size(view, tmp_path, batch_rows):
    path = tmp_path / "v.parquet"
    view.to_parquet(path)
    opened = PublishedView.open(path)
    opened.rows.batch_rows = batch_rows
    if batch_rows == 1:  # one row per batch is slow on 1.5M rows: use a slice of the view
        small = PublishedView(view.codes[:3000], view.schema, view.mechanism, view.parameters,
                              view.seed_policy)
        small.to_parquet(path, overwrite=True)
        opened, view = PublishedView.open(path), small
        opened.rows.batch_rows = 1
    for q in QUERIES:
        assert opened.estimate(q) == view.estimate(q), q
    pd.testing.assert_frame_equal(opened.estimate_marginals(["sex", "race"]),
                                  view.estimate_marginals(["sex", "race"]))


def test_open_does_not_read_the_rows(view, tmp_path, monkeypatch):
    """Opening reads metadata only; rows are read when a count needs them."""
    path = tmp_path / "v.parquet"
    view.to_parquet(path)
    calls = []
    for method in ("iter_batches", "read_row_group"):
        original = getattr(pq.ParquetFile, method)
        monkeypatch.setattr(pq.ParquetFile, method,
                            lambda self, *a, _o=original, **k: calls.append(k.get("columns"))
                            or _o(self, *a, **k))
    opened = PublishedView.open(path)
    assert calls == []
    opened.estimate("age > 50")
    groups = pq.ParquetFile(path).metadata.num_row_groups
    # At most one read per row group (those its statistics leave undecided), of
    # the query's column only (tests/viewfile/test_scan.py: which are read).
    assert calls == [["age"]] * len(calls) and len(calls) <= groups
