"""One rule for missing cells and careful reading of input files (issue 21).

A missing cell is an error naming its column and row, whatever the input
kind (pandas, Arrow, polars, CSV, Parquet), unless the schema declares the
value it stands for, which then gives the same codes for every kind. CSV
follows pandas' NA conventions in every column (text included) unless
turned off. A CSV read with the wrong separator, a YAML schema's bare
``no``/``yes`` and dates are named, one-line errors or read as written.
"""

import datetime as dt
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import Categorical, IntRange, PublishedView, Schema
from privpub.core.errors import DataTypeError, MissingValueError, ParameterError, SchemaError
from privpub.core.inputs import NA_VALUES, read_table_file

CSV = "job,age,zip\nnurse,30,02134\n,41,\nNA,52,10001\nclerk,,02134\n"


def _kinds(tmp_path, frame: pd.DataFrame) -> dict:
    """The same table as pandas, Arrow, polars, a CSV path and a Parquet path."""
    polars = pytest.importorskip("polars")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    frame.to_csv(csv, index=False)
    pq.write_table(table, parquet)
    return {"pandas": frame, "arrow": table, "polars": polars.from_arrow(table),
            "csv": str(csv), "parquet": str(parquet)}


def test_na_values_are_pandas_defaults():
    from pandas._libs.parsers import STR_NA_VALUES

    assert set(NA_VALUES) == set(STR_NA_VALUES)


def test_csv_empty_cells_and_na_are_missing_in_text_columns(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(CSV)
    table = read_table_file(path)
    assert table.column("job").to_pylist() == ["nurse", None, None, "clerk"]
    assert table.column("age").to_pylist() == [30, 41, 52, None]
    schema = Schema([Categorical("job", ["", "NA", "clerk", "nurse"]), IntRange("age", 0, 99),
                     IntRange("zip", 0, 99_999)])
    with pytest.raises(MissingValueError, match=r"column 'job' has 2 missing .* at row 1;"):
        schema.encode(path)
    # Turned off: the text is the value (what the file says, nothing else).
    off = read_table_file(path, na_values=())
    assert off.column("job").to_pylist() == ["nurse", "", "NA", "clerk"]


@pytest.mark.parametrize("kind", ["pandas", "arrow", "polars", "csv", "parquet"])
def test_missing_cell_is_the_same_error_for_every_input_kind(tmp_path, kind):
    frame = pd.DataFrame({"job": ["nurse", None, "clerk"], "sex": ["F", "M", "F"]})
    data = _kinds(tmp_path, frame)[kind]
    schema = Schema([Categorical("job", ["clerk", "nurse"]), Categorical("sex", ["F", "M"])])
    with pytest.raises(MissingValueError, match=r"column 'job' has 1 missing .*row 1;.*missing="):
        schema.encode(data)
    with pytest.raises(MissingValueError, match=r"column 'job'"), warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.PrivacyWarning)
        Schema.from_frame(data)


@pytest.mark.parametrize("kind", ["pandas", "arrow", "polars", "csv", "parquet"])
def test_declared_missing_category_gives_the_same_codes_for_every_kind(tmp_path, kind):
    frame = pd.DataFrame({"job": ["nurse", None, "clerk", None],
                          "age": pd.array([30, 41, None, 52], dtype="Int64")})
    schema = Schema([Categorical("job", ["clerk", "nurse", "(missing)"], missing="(missing)"),
                     IntRange("age", 0, 120, missing=120)])
    codes = schema.encode(_kinds(tmp_path, frame)[kind])
    decoded = schema.decode(codes)
    assert decoded["job"].tolist() == ["nurse", "(missing)", "clerk", "(missing)"]
    assert decoded["age"].tolist() == [30, 41, 120, 52]


def test_missing_category_in_a_pandas_categorical_and_a_float_column():
    frame = pd.DataFrame({"c": pd.Categorical(["a", None, "b"]), "x": [0.5, np.nan, 1.5]})
    schema = Schema([Categorical("c", ["a", "b", "?"], missing="?"),
                     Categorical("x", [0.5, 1.5, -1.0], missing=-1.0)])
    assert schema.decode(schema.encode(frame)).to_dict("list") == {
        "c": ["a", "?", "b"], "x": [0.5, -1.0, 1.5]}


# 4 records: the view says its bound is weak (UsefulnessWarning); this test checks
# the missing category's round trip.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_inferred_missing_category_and_its_round_trip(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(CSV)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.PrivacyWarning)
        schema = Schema.from_frame(path, missing={"job": "(missing)", "age": -1, "zip": -1})
        from_pandas = Schema.from_frame(pd.read_csv(path, dtype={"zip": str}),
                                        missing={"job": "(missing)", "age": -1.0, "zip": "-"})
    assert schema["job"].values == ("clerk", "nurse", "(missing)")
    assert schema["job"].missing == "(missing)" and schema["age"].missing == -1
    assert from_pandas["zip"].values == ("02134", "10001", "-")
    assert Schema.from_dict(schema.to_dict()) == schema
    view = privpub.AlphaBeta(schema, alpha=0.5, beta=0.01, n=4).publish(path, seed=1)
    view.to_parquet(tmp_path / "v.parquet")
    again = PublishedView.open(tmp_path / "v.parquet")
    assert again.schema["job"].missing == "(missing)"
    assert again.estimate({"job": "(missing)"}) == view.estimate({"job": "(missing)"})


@pytest.mark.parametrize("kind", ["pandas", "arrow", "polars", "csv", "parquet"])
def test_all_missing_column_takes_the_declared_value(tmp_path, kind):
    """A column whose every cell is missing (Arrow's null type from a CSV or an
    all-None column) gets the declared missing value in every row: it was a bare
    ArrowNotImplementedError (a cast to null) for every kind but pandas."""
    frame = pd.DataFrame({"job": pd.Series([None, None, None], dtype=object),
                          "age": pd.Series([None, None, None], dtype=object)})
    schema = Schema([Categorical("job", ["clerk", "(missing)"], missing="(missing)"),
                     IntRange("age", 0, 120, missing=120)])
    decoded = schema.decode(schema.encode(_kinds(tmp_path, frame)[kind]))
    assert decoded.to_dict("list") == {"job": ["(missing)"] * 3, "age": [120] * 3}
    if kind == "csv":  # pandas reads those empty columns as float NaN
        read = pd.read_csv(_kinds(tmp_path, frame)["csv"])
        assert schema.decode(schema.encode(read)).equals(decoded)


def test_declared_missing_value_meets_arrow_columns_of_other_types():
    """Filling an Arrow column's nulls: a narrow or unsigned integer column is
    widened to hold the label (uint8 with −1, uint64 past int64), and a column
    of another kind is the DataTypeError pandas gives, not an Arrow cast error."""
    narrow = Schema([Categorical("n", [-1, 5], missing=-1)])
    assert narrow.decode(narrow.encode(pa.table({"n": pa.array([5, None], pa.uint8())})))[
        "n"].tolist() == [5, -1]
    big = Schema([Categorical("n", [0, 2**63 + 1], missing=2**63 + 1)])
    assert big.decode(big.encode(pa.table({"n": pa.array([0, None], pa.uint64())})))[
        "n"].tolist() == [0, 2**63 + 1]
    text = Schema([Categorical("job", ["x", "?"], missing="?")])
    for data in (pa.table({"job": [1, None]}), pd.DataFrame({"job": [1.0, None]})):
        with pytest.raises(DataTypeError, match=r"column 'job'"):
            text.encode(data)


def test_missing_declarations_are_checked():
    with pytest.raises(SchemaError, match=r"'job': missing='\?' is not one of its values"):
        Categorical("job", ["a", "b"], missing="?")
    with pytest.raises(SchemaError, match=r"'age': missing=200 is not in its domain"):
        IntRange("age", 0, 120, missing=200)
    frame = pd.DataFrame({"age": [1.0, None]})
    with pytest.raises(SchemaError, match=r"column 'age' holds float values; its missing label"):
        Schema.from_frame(frame, missing="(missing)")
    with pytest.raises(SchemaError, match=r"missing= names columns not in the table: \['nope'\]"):
        Schema.from_frame(frame, missing={"nope": 1})


def test_semicolon_csv_names_the_separator(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;c\n1;2;3\n")
    with pytest.raises(ParameterError, match=r"'a;b;c'.*separated by ';'.*--sep ';'"):
        read_table_file(path)
    assert read_table_file(path, delimiter=";").column_names == ["a", "b", "c"]
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text("a\tb\n1\t2\n")
    with pytest.raises(ParameterError, match=r"--sep '\\t'"):
        read_table_file(tabbed)
    # One column whose name holds '|' or ';' and whose values do not: read as it is.
    single = tmp_path / "single.csv"
    single.write_text("cost; USD|EUR\n12\nNA\n14\n")
    assert read_table_file(single).column("cost; USD|EUR").to_pylist() == [12, None, 14]
    schema = Schema([IntRange("cost; USD|EUR", 0, 99, missing=0)])
    assert schema.decode(schema.encode(single))["cost; USD|EUR"].tolist() == [12, 0, 14]


def test_file_errors_name_the_path(tmp_path):
    with pytest.raises(ParameterError, match=r"nope.csv': no such file"):
        read_table_file(tmp_path / "nope.csv")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(ParameterError, match=r"cannot read '.*bad.parquet'"):
        read_table_file(bad)


@pytest.mark.parametrize("column", [
    pd.Series(pd.to_datetime(["2020-01-01", "2021-05-06"])),
    pd.Series([dt.date(2020, 1, 1), dt.date(2021, 5, 6)], dtype=object),
    pd.Series(pd.period_range("2020-01", periods=2, freq="M")),
])
def test_dates_are_a_named_error_with_the_fix(column):
    frame = pd.DataFrame({"when": column})
    for data in (frame, pa.Table.from_pandas(frame)):
        with pytest.raises(DataTypeError, match=r"column 'when' holds .*\.dt\.year"):
            Schema.from_frame(data)
        with pytest.raises(DataTypeError, match=r"column 'when' holds .*\.dt\.year"):
            Schema([Categorical("when", ["2020-01-01"])]).encode(data)


@pytest.mark.parametrize("column", [
    pd.Series(pd.to_timedelta([1, 2], unit="D")),
    pd.Series([dt.timedelta(days=1), dt.timedelta(hours=5)], dtype=object),
])
def test_durations_get_duration_advice_not_dates(column):
    # A duration has no year: the fix is whole days or hours (or bands), on every input.
    frame = pd.DataFrame({"stay": column})
    for data in (frame, pa.Table.from_pandas(frame)):
        for call in (Schema.from_frame, Schema([IntRange("stay", 0, 9)]).encode):
            with pytest.raises(DataTypeError, match=r"column 'stay' holds .*durations|"
                                                    r"column 'stay' holds timedelta") as caught:
                call(data)
            assert ".dt.days" in str(caught.value) and ".dt.year" not in str(caught.value)


def test_csv_dates_stay_the_text_of_the_file(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("day,n\n2020-01-01,1\n2020-02-03,2\n")
    table = read_table_file(path)
    assert table.column("day").to_pylist() == ["2020-01-01", "2020-02-03"]
    assert pa.types.is_integer(table.column("n").type)


def test_schema_types_the_csv_columns(tmp_path):
    """A text domain reads '02134' as the text it is, not the number 2134."""
    path = tmp_path / "z.csv"
    path.write_text("zip\n02134\n10001\n")
    schema = Schema([Categorical("zip", ["02134", "10001"])])
    table = read_table_file(path, column_types=schema.csv_types())
    assert schema.decode(schema.encode(table))["zip"].tolist() == ["02134", "10001"]


# 2 records: the views say their bounds are weak (UsefulnessWarning); this test
# checks how a CSV path's text columns are read.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_a_csv_path_is_read_with_the_schemas_text_columns(tmp_path):
    """The API reads a CSV path as the CLI does: a text domain's column as text,
    so encode, publish (αβ, SPLU-Gen) and plan take '02134' (they said the column
    holds integers, which a caller passing a path could not convert); a numeric
    domain given text is still a DataTypeError naming the column."""
    path = tmp_path / "z.csv"
    path.write_text("zip,n\n02134,1\n10001,2\n")
    schema = Schema([Categorical("zip", ["02134", "10001"]), IntRange("n", 0, 9)])
    assert schema.decode(schema.encode(path))["zip"].tolist() == ["02134", "10001"]
    view = privpub.AlphaBeta(schema, 0.5, 0.1, n=2).publish(path, seed=1)
    assert (view.codes == privpub.AlphaBeta(schema, 0.5, 0.1, n=2).publish(
        read_table_file(path, column_types=schema.csv_types()), seed=1).codes).all()
    assert len(privpub.splu.SPLUGen(2, "zip", schema=schema).publish(path, seed=1)) == 2
    assert privpub.plan(path, schema=schema, mechanisms=["frapp"]).n == 2
    # Integers past int64 are read as uint64, not as doubles that lose their last digits.
    big = tmp_path / "big.csv"
    big.write_text(f"id\n{2**63 + 1}\n{2**64 - 1}\n")
    ids = Schema([Categorical("id", [2**63 + 1, 2**64 - 1])])
    assert ids.decode(ids.encode(big))["id"].tolist() == [2**63 + 1, 2**64 - 1]
    assert ids.csv_types() == ids.csv_types() == {"id": pa.uint64()}
    numbers = Schema([IntRange("zip", 0, 99_999), Categorical("n", ["1", "2"])])
    path.write_text("zip,n\nabc,1\n")
    with pytest.raises(DataTypeError, match=r"column 'zip' holds string values"):
        numbers.encode(path)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "privpub.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_cli_yaml_values_are_strings_and_csv_follows_the_schema(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "attributes:\n"
        "- {type: categorical, name: answer, values: [no, yes]}\n"
        "- {type: categorical, name: zip, values: ['02134', 10001]}\n"
        "- {type: categorical, name: score, values: [1, 2], dtype: int64}\n"
        "- {type: int_range, name: age, lo: 0, hi: 120}\n")
    (tmp_path / "t.csv").write_text("answer,zip,score,age\nno,02134,1,30\nyes,10001,2,41\n"
                                    "yes,02134,2,33\n")
    done = _cli("publish", "alphabeta", "--input", "t.csv", "--schema", "s.yaml", "--output",
                "v.parquet", "--seed", "1", "--k", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    schema = PublishedView.open(tmp_path / "v.parquet").schema
    assert schema["answer"].values == ("no", "yes")
    assert schema["zip"].values == ("02134", "10001")
    assert schema["score"].values == (1, 2)


@pytest.mark.slow
def test_cli_missing_cells(tmp_path):
    (tmp_path / "m.csv").write_text(CSV)
    done = _cli("plan", "--input", "m.csv", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0
    assert "column 'job' has 2 missing" in done.stderr and "--missing" in done.stderr
    done = _cli("plan", "--input", "m.csv", "--missing", "(missing)", cwd=tmp_path)
    assert done.returncode == 1 and "--missing age=NUMBER" in done.stderr
    done = _cli("publish", "frapp", "--input", "m.csv", "--missing", "(missing)", "--missing",
                "age=-1", "--missing", "zip=-1", "--output", "f.parquet", "--seed", "1",
                "--k", "1", "--gamma", "0.9", "--duplicates", "set", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    schema = PublishedView.open(tmp_path / "f.parquet").schema
    assert schema["job"].missing == "(missing)" and schema["age"].missing == -1
    # Turned off, '' and 'NA' are values (age becomes a text column): nothing is missing.
    assert _cli("plan", "--input", "m.csv", "--no-na", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_cli_semicolon_and_bad_schema_file(tmp_path):
    (tmp_path / "semi.csv").write_text("a;b\n1;2\n")
    done = _cli("plan", "--input", "semi.csv", cwd=tmp_path)
    assert done.returncode == 1 and "--sep ';'" in done.stderr
    assert _cli("plan", "--input", "semi.csv", "--sep", ";", cwd=tmp_path).returncode == 0
    (tmp_path / "t.csv").write_text("a\n1\n")
    done = _cli("plan", "--input", "t.csv", "--schema", "missing.yaml", cwd=tmp_path)
    assert done.returncode == 1 and "'missing.yaml'" in done.stderr
    assert done.stderr.strip().count("\n") == 0
