"""The command line on release files and schemas (issue 33): CSV rows of mixed
kinds, a --schema column the data lack, a Dask directory's size, αβ's n and d
under set semantics."""

from __future__ import annotations

import csv
import io
import json
import os
import warnings

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import cli
from privpub.core.errors import UsefulnessWarning


@pytest.fixture
def table(tmp_path):
    """A CSV of 200 records: two non-sensitive columns and a sensitive one."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 40, 200),
                       "year": rng.choice([2004, 2005, 2006], 200),
                       "occ": rng.choice(["a", "b", "c"], 200)})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return df, path


def _error_line(capsys) -> str:
    """The one line a refused command writes to stderr, checked to be the only error."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("privpub: error: ")
    assert not any("Traceback" in line or line.startswith("privpub: error") for line in lines[:-1])
    return lines[-1]


def test_estimate_csv_writes_rows_of_every_kind(table, tmp_path, capsys):
    """A SPLU-Gen release answers a condition on non-sensitive attributes exactly and one on
    the sensitive attribute by reconstruction, with different fields: CSV holds both rows,
    every field in first-seen order (the writer took the first row's fields and crashed)."""
    df, path = table
    release = tmp_path / "splu.parquet"
    assert cli.main(["publish", "splu", "--input", str(path), "--output", str(release),
                     "--group-size", "2", "--sensitive", "occ", "--seed", "1"]) == 0
    capsys.readouterr()
    queries = ["age < 30", "occ = 'a'", "year = 2005"]
    assert cli.main(["estimate", str(release), *queries, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert set(rows[1]) - set(rows[0]), "the reconstructed row must carry fields of its own"
    assert cli.main(["estimate", str(release), *queries, "--format", "csv"]) == 0
    text = capsys.readouterr().out
    header = next(csv.reader(io.StringIO(text)))
    assert header == list(dict.fromkeys(f for row in rows for f in row))
    read = list(csv.DictReader(io.StringIO(text)))
    assert len(read) == 3
    assert float(read[0]["value"]) == (df["age"] < 30).sum()
    assert float(read[2]["value"]) == (df["year"] == 2005).sum()
    assert read[0]["observed"] == "" and float(read[1]["observed"]) == rows[1]["observed"]


@pytest.mark.parametrize("mechanism", [["alphabeta", "--duplicates", "set"],
                                       ["frapp", "--duplicates", "set"],
                                       ["splu", "--group-size", "2", "--sensitive", "occ"]])
def test_a_schema_column_the_data_lack_is_one_named_line(table, tmp_path, capsys, mechanism):
    _, path = table
    schema = privpub.Schema([privpub.IntRange("age", 20, 39), privpub.IntRange("year", 2004, 2006),
                             privpub.Categorical("occ", ["a", "b", "c"]),
                             privpub.IntRange("zzz", 0, 9_999)])
    spec = tmp_path / "schema.json"
    spec.write_text(json.dumps(schema.to_dict()))
    argv = ["publish", *mechanism, "--input", str(path), "--schema", str(spec),
            "--output", str(tmp_path / "v.parquet"), "--seed", "1"]
    assert cli.main(argv) == 1
    line = _error_line(capsys)
    assert "has no column 'zzz'" in line and "--schema" in line and "age, year, occ" in line
    assert "leave it out of the schema" in line
    # With --columns, the fix is to choose the column too.
    assert cli.main([*argv, "--columns", "age,occ,zzz"]) == 1
    assert "--columns names ['zzz']" in _error_line(capsys)
    assert cli.main([*argv, "--columns", "age,occ"]) == 1
    assert "has no column 'year'" in (line := _error_line(capsys)) and "add it to --columns" in line


def test_inspect_a_dask_directory_counts_its_files(table, tmp_path, capsys):
    """A Dask release is a directory: its size is its files' (the directory's own size
    is that of its entry list, 4,096 bytes on most file systems)."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    df, _ = table
    schema = privpub.Schema([privpub.IntRange("age", 0, 99), privpub.IntRange("year", 2000, 2009),
                             privpub.Categorical("occ", ["a", "b", "c"])])
    folder = tmp_path / "release"
    with dask.config.set(scheduler="synchronous"):  # one part per partition
        privpub.SPLUGen(2, "occ", schema=schema).publish(
            dd.from_pandas(df, npartitions=3), seed=1).to_parquet(folder)
    files = sorted(os.listdir(folder))
    assert len([f for f in files if f.startswith("part.")]) == 3
    size = sum(os.path.getsize(folder / f) for f in files)
    assert cli.main(["inspect", str(folder), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["bytes"] == size
    assert cli.main(["inspect", str(folder)]) == 0
    assert f"{size:,} bytes" in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("mechanism", ["alphabeta", "frapp"])
@pytest.mark.parametrize("duplicates", ["set", "records"])
def test_inspect_states_d_for_the_records_given_and_n_for_those_published(
        tmp_path, capsys, mechanism, duplicates):
    """The CLI calibrates as the library's for_privacy(n=len(table)) does: d = k·n/m for
    every record given (under --duplicates set the cautious choice, a larger d than the
    distinct tuples' count gives), and the release states n as the rows it publishes
    (300 records as 6 distinct tuples under set). Same release as the library's."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 3, 300), "b": rng.choice(["x", "y"], 300)})
    distinct = len(df.drop_duplicates())
    assert distinct == 6
    path = tmp_path / "dup.csv"
    df.to_csv(path, index=False)
    schema = privpub.Schema([privpub.IntRange("a", 0, 9_999), privpub.Categorical("b", ["x", "y"])])
    spec = tmp_path / "schema.json"
    schema.write(spec)
    out = tmp_path / "v.parquet"
    k = 5
    assert cli.main(["publish", mechanism, "--input", str(path), "--schema", str(spec),
                     "--output", str(out), "--duplicates", duplicates, "--k", str(k),
                     "--gamma", "0.5", "--seed", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["inspect", str(out), "--format", "json"]) == 0
    parameters = json.loads(capsys.readouterr().out)["parameters"]
    assert parameters["n"] == (distinct if duplicates == "set" else len(df))
    assert parameters["d"] == pytest.approx(k * len(df) / schema.size, rel=1e-12)
    assert parameters["records"]["records_given"] == len(df)
    family = privpub.AlphaBeta if mechanism == "alphabeta" else privpub.FRAPP
    mech = family.for_privacy(schema, n=len(df), gamma=0.5, k=k)
    with warnings.catch_warnings():  # weak usefulness, as the CLI said
        warnings.simplefilter("ignore", UsefulnessWarning)
        same = mech.publish(df, seed=1, duplicates=duplicates)
    assert same.parameters == parameters
    written = pq.read_table(out, columns=["a", "b"]).to_pandas().astype({"b": str})
    assert sorted(written.itertuples(index=False)) == \
        sorted(same.frame.astype({"b": str})[["a", "b"]].itertuples(index=False))


def test_a_mechanism_is_built_for_the_records_it_publishes():
    """What the CLI relies on: under duplicates='set' a mechanism built for the distinct
    tuples publishes them; any other n is refused, naming it."""
    df = pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "y"]})
    schema = privpub.Schema([privpub.IntRange("a", 0, 9_999), privpub.Categorical("b", ["x", "y"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UsefulnessWarning)
        view = privpub.AlphaBeta.for_privacy(schema, n=3, gamma=0.5, k=2).publish(
            df, seed=1, duplicates="set")
        assert view.parameters["n"] == 3
        for n, duplicates, fix in ((3, "records", "n=4)"), (2, "set", "n=4, or n=3 for its "
                                   "distinct tuples)"), (5, "set", "or n=3 for")):
            with pytest.raises(privpub.ParameterError) as ei:
                privpub.AlphaBeta.for_privacy(schema, n=n, gamma=0.5, k=2).publish(
                    df, seed=1, duplicates=duplicates)
            assert f"built for n = {n} records but the data hold 4" in str(ei.value)
            assert fix in str(ei.value)
