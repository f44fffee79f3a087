"""--encoding on every command that reads a table (issue 33): a CSV that is not
UTF-8 is one error line naming the file, the byte and --encoding; with
--encoding the file reads as its text; UTF-8 with a byte-order mark reads as
UTF-8, from a file or standard input."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import cli

CITIES = ["Zürich", "Köln", "Málaga", "Genève"]


@pytest.fixture
def people():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"age": rng.integers(20, 60, 120),
                         "sex": rng.choice(["F", "M"], 120),
                         "city": rng.choice(CITIES, 120)})


@pytest.fixture
def latin1(people, tmp_path):
    path = tmp_path / "people-latin1.csv"
    path.write_bytes(people.to_csv(index=False).encode("latin-1"))
    return path


@pytest.fixture
def release(people, tmp_path):
    path = tmp_path / "splu.parquet"
    privpub.SPLUGen(2, "city").publish(people, seed=1).to_parquet(path)
    return path


def _last_error(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("privpub: error: ")
    assert not any("Traceback" in line or line.startswith("privpub: error") for line in lines[:-1])
    return lines[-1]


def _commands(latin1, release, tmp_path):
    """Each command that reads a table, with the Latin-1 file as its table."""
    out = tmp_path / "out"
    return {
        "publish": ["publish", "splu", "--input", str(latin1), "--output", f"{out}.parquet",
                    "--group-size", "2", "--sensitive", "city", "--seed", "1"],
        "plan": ["plan", "--input", str(latin1), "--mechanism", "splu", "--sensitive", "city"],
        "estimate": ["estimate", str(release), "sex IN (SELECT sex FROM c)",
                     "--table", f"c={latin1}", "--format", "json"],
        "report": ["report", str(release), "--data", str(latin1), "--queries", "4",
                   "--output", f"{out}.html"],
        "attack": ["attack", str(release), "--data", str(latin1), "--secret", "sex",
                   "--targets", "4", "--queries", "20", "--seed", "1"],
    }


# The Latin-1 table's domains are derived from its values, which SPLU-Gen says
# (PrivacyWarning); this test checks that every command reads the encoding.
@pytest.mark.filterwarnings("ignore::privpub.PrivacyWarning")
# (and the SPLU release's small counts, which its card says need care: ReconstructionWarning)
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
@pytest.mark.parametrize("command", ["publish", "plan", "estimate", "report", "attack"])
def test_every_command_takes_encoding(latin1, release, tmp_path, capsys, command):
    argv = _commands(latin1, release, tmp_path)[command]
    assert cli.main(argv) == 1
    line = _last_error(capsys)
    assert repr(str(latin1)) in line and "is not utf-8 text: byte " in line
    assert "pass --encoding latin-1 (or the file's codec" in line
    code = cli.main([*argv, "--encoding", "latin-1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    if command == "publish":
        view = privpub.PublishedView.open(tmp_path / "out.parquet")
        assert sorted(view.schema["city"].values) == sorted(CITIES)
    if command == "estimate":
        assert json.loads(captured.out)[0]["value"] == 120


def test_a_bad_codec_or_one_for_parquet_is_named(people, latin1, tmp_path, capsys):
    out = str(tmp_path / "v.parquet")
    base = ["publish", "splu", "--output", out, "--group-size", "2", "--sensitive", "city"]
    assert cli.main([*base, "--input", str(latin1), "--encoding", "klingon"]) == 1
    assert "--input encoding='klingon' (--encoding) is not a codec" in _last_error(capsys)
    parquet = tmp_path / "people.parquet"
    people.to_parquet(parquet)
    assert cli.main([*base, "--input", str(parquet), "--encoding", "latin-1"]) == 1
    assert "is for CSV files; Parquet stores text as UTF-8" in _last_error(capsys)


def test_utf8_with_a_byte_order_mark_from_a_file_and_stdin(people, tmp_path, capsys,
                                                           monkeypatch):
    data = b"\xef\xbb\xbf" + people.to_csv(index=False).encode()
    path = tmp_path / "bom.csv"
    path.write_bytes(data)
    schema = privpub.Schema([privpub.IntRange("age", 0, 99), privpub.Categorical("sex", ["F", "M"]),
                             privpub.Categorical("city", CITIES)])
    spec = tmp_path / "schema.json"
    spec.write_text(json.dumps(schema.to_dict()))
    out = tmp_path / "v.parquet"
    base = ["publish", "splu", "--output", str(out), "--group-size", "2", "--sensitive", "city",
            "--schema", str(spec), "--seed", "1", "--force"]
    assert cli.main([*base, "--input", str(path)]) == 0
    capsys.readouterr()
    # SPLU-Gen publishes the non-sensitive columns as they are, in groups of 2 (no record
    # is left over from 120): the file's own ages are the table's.
    assert sorted(pq.read_table(out, columns=["age"])["age"].to_pylist()) == \
        sorted(people["age"])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main([*base, "--input", "-"]) == 0, capsys.readouterr().err
    assert sorted(pq.read_table(out, columns=["age"])["age"].to_pylist()) == \
        sorted(people["age"])
