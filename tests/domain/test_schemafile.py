"""Schema.read / Schema.write: a schema file is a library call (issue 34), the
one the CLI's --schema uses, and how a CSV keeps its declared order (issue 33)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privpub import AlphaBeta, Categorical, IntRange, Schema
from privpub.core.errors import OutputExistsError, SchemaError

SCHEMA = Schema([Categorical("band", ["low", "mid", "high", "(none)"], ordered=True,
                             missing="(none)"),
                 Categorical("answer", ["no", "yes"]), Categorical("zip", ["02134", "10001"]),
                 IntRange("age", 0, 120, dtype="int16", missing=0),
                 Categorical("score", [0.5, 1.5], dtype="float64")])


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_round_trip(tmp_path, suffix):
    path = tmp_path / f"schema{suffix}"
    SCHEMA.write(path)
    assert Schema.read(path) == SCHEMA
    with pytest.raises(OutputExistsError, match="exists"):
        SCHEMA.write(path)
    SCHEMA.write(path, overwrite=True)


def test_yaml_scalars_are_typed_by_field_not_guessed(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("attributes:\n"
                    "  - {type: categorical, name: answer, values: [no, yes]}\n"
                    "  - {type: categorical, name: zip, values: ['02134', 10001]}\n"
                    "  - {type: int_range, name: age, lo: '0', hi: 99, missing: 0}\n"
                    "  - {type: categorical, name: band, values: [b, a], ordered: 'true'}\n")
    schema = Schema.read(path)
    assert schema["answer"].values == ("no", "yes")
    assert schema["zip"].values == ("02134", "10001")
    assert (schema["age"].lo, schema["age"].missing) == (0, 0)
    assert schema["band"].ordered


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "must hold a mapping with 'attributes', got list"),
    ("{attributes: [{type: int_range, name: a, lo: x, hi: 3}]}", "lo 'x' is not a integer"),
    ("{attributes: [{type: nope, name: a}]}", "unknown attribute type 'nope'"),
    ("{: :", "is not YAML"),
])
def test_bad_files_are_named(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError, match=message) as info:
        Schema.read(path)
    assert str(path) in str(info.value)
    with pytest.raises(SchemaError, match="No such file"):
        Schema.read(tmp_path / "absent.json")


def test_a_csv_counts_by_the_order_its_schema_file_declares(tmp_path):
    bands = ["low", "mid", "high"]
    drawn = np.random.default_rng(2).choice(bands, 500)
    pd.DataFrame({"band": drawn}).to_csv(tmp_path / "t.csv", index=False)
    Schema([Categorical("band", bands, ordered=True)]).write(tmp_path / "s.yaml")
    release = AlphaBeta(Schema.read(tmp_path / "s.yaml"), 1.0, 0.0).publish(
        str(tmp_path / "t.csv"), duplicates="records", seed=1)
    assert release.estimate("band >= 'mid'").value == int((drawn != "low").sum())
