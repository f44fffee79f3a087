"""Artifacts: one Parquet file with frame and privpub metadata (privpub.tables.artifact)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import Artifact, ArtifactError, Categorical, IntRange, ParameterError, Schema
from privpub.core.artifacts import load_json


def every_dtype_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "s": pd.Series(["b", "a", "c", "a"]),
        "o": pd.Series(["x", "y", "x", "é"], dtype=object),
        "i64": np.array([5, 3, -(2**63), 2**63 - 1], dtype=np.int64),
        "i32": np.array([1, 2, 1, -7], dtype=np.int32),
        "u64": np.array([0, 2**64 - 1, 1, 2], dtype=np.uint64),
        "b": np.array([True, False, True, True]),
        "f": np.array([0.5, np.nan, -0.0, 1e300]),
        "c": pd.Categorical(["u", "v", "u", "u"]),
        "c_unused_ordered": pd.Categorical(["u", "v", "u", "u"], categories=["v", "u", "w"],
                                           ordered=True),
        "c_object_categories": pd.Categorical(
            ["u", "v", "u", "u"], categories=pd.Index(["u", "v"], dtype=object)),
        "c_int": pd.Categorical([10, 20, 10, 10], categories=[30, 10, 20]),
        "c_int32": pd.Categorical(np.array([1, 2, 1, 1], dtype=np.int32)),
        "c_float": pd.Categorical([0.5, 0.25, 0.5, 0.5]),
        "c_bool": pd.Categorical([True, False, True, True]),
    })


def test_round_trip_preserves_frame_and_metadata(tmp_path):
    df = every_dtype_frame()
    schema = Schema([IntRange("i32", -10, 10, dtype="int32"), Categorical("s", ["a", "b", "c"])])
    parameters = {
        "alpha": 0.1, "beta": 1e-9, "k": 3, "big": 2**80 + 1, "neg_big": -(2**70),
        "flags": [True, False, None], "nested": {"a": {"b": [1, {"c": "d"}], "e": {}}},
        "text": "privacy ε/δ",
    }
    extra = {"dropped": 7, "notes": {"seed": "seeded (reproducible; not for real releases)"}}
    art = Artifact(df, "alpha-beta", parameters, schema, extra=extra)
    path = tmp_path / "release.parquet"
    art.to_parquet(path)
    back = Artifact.read_parquet(path)
    pd.testing.assert_frame_equal(back.frame, df)
    for name in df.columns:
        assert back.frame[name].dtype == df[name].dtype, name
    assert list(back.frame["c_unused_ordered"].cat.categories) == ["v", "u", "w"]
    assert back.frame["c_unused_ordered"].cat.ordered
    assert back.frame["u64"].iloc[1] == 2**64 - 1
    assert back.mechanism == "alpha-beta"
    assert back.parameters == parameters
    assert type(back.parameters["big"]) is int and back.parameters["big"] == 2**80 + 1
    assert back.extra == extra
    assert back.schema == schema
    assert back.library_version == privpub.__version__
    assert back.metadata() == art.metadata()


def test_file_is_plain_parquet_with_a_json_document(tmp_path):
    df = pd.DataFrame({"x": [1, 2]})
    path = tmp_path / "a.parquet"
    Artifact(df, "m", {"eps": 1.0}, library_version="9.9").to_parquet(path)
    pd.testing.assert_frame_equal(pd.read_parquet(path), df)
    doc = json.loads(pq.read_schema(path).metadata[b"privpub"])
    assert doc == {"format_version": 1, "library_version": "9.9", "mechanism": "m",
                   "parameters": {"eps": 1.0}, "schema": None, "extra": {}}
    back = Artifact.read_parquet(str(path))
    assert back.schema is None and back.library_version == "9.9"


def test_decoded_frame_survives(tmp_path):
    df, schema = privpub.datasets.load_adult()
    sample = schema.decode(schema.encode(df.iloc[:500]))
    path = tmp_path / "adult.parquet"
    Artifact(sample, "identity", {}, schema).to_parquet(path)
    back = Artifact.read_parquet(path)
    pd.testing.assert_frame_equal(back.frame, df.iloc[:500])
    np.testing.assert_array_equal(back.schema.encode(back.frame), schema.encode(sample))


def test_plain_parquet_is_rejected(tmp_path):
    path = tmp_path / "plain.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(path)
    with pytest.raises(ArtifactError) as ei:
        Artifact.read_parquet(path)
    assert "plain.parquet" in str(ei.value) and "privpub metadata" in str(ei.value)


@pytest.mark.parametrize(("raw", "needle"), [
    (b"{not json", "not JSON"),
    (json.dumps({"format_version": 99}).encode(), "99"),
    (json.dumps({"format_version": 1}).encode(), "lack the field 'schema'"),
    (json.dumps({"format_version": 1, "schema": {"attributes": 3}, "mechanism": "m",
                 "parameters": {}, "extra": {}, "library_version": "0"}).encode(),
     "field 'schema'"),
])
def test_malformed_privpub_metadata_is_rejected(tmp_path, raw, needle):
    path = tmp_path / "bad.parquet"
    table = pa.table({"x": [1]})
    pq.write_table(table.replace_schema_metadata({b"privpub": raw}), path)
    with pytest.raises(ArtifactError) as ei:
        Artifact.read_parquet(path)
    assert needle in str(ei.value) and "bad.parquet" in str(ei.value)


# name: (the document, made when the test runs; what the error says, None: valid)
BOUNDED = {
    "10^7 deep": (lambda: b"[" * 10**7, "nested more than 64 deep"),  # must not recurse
    "65 deep": (lambda: b'{"a": ' * 65 + b"1" + b"}" * 65, "nested more than 64 deep"),
    "brackets in a string": (lambda: b'{"a": "' + b"[" * 10**4 + b'"}', None),
    "escapes": (lambda: b'{"a": "\\\\", "b": "\\"[["}', None),  # \\ and \"
    "5,000 digits": (lambda: b'{"n": ' + b"9" * 5_000 + b"}", "an integer of 5,000 characters"),
    "long float": (lambda: b'{"n": 1.' + b"5" * 100 + b"}", "a number of 102 characters"),
    "NaN": (lambda: b'{"n": NaN}', "NaN, which is not a JSON number"),
    "key twice": (lambda: b'{"n": 1, "n": 2}', "the key 'n' twice"),
    "unicode escape": (lambda: b'"\\u00ff"', None),
    "unterminated": (lambda: b'{"a": "abc', "not JSON"),
    "64 MiB": (lambda: b'"x"' + b" " * (64 << 20), "bytes (at most 67,108,864)"),
    "2^20 containers": (lambda: b"[" + b"[]," * (1 << 20) + b"[]]",
                        "more than 1,048,576 objects and arrays"),
    "not UTF-8": (lambda: b'{"a": "\xff"}', "not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(BOUNDED))
def test_metadata_is_parsed_within_bounds(case):
    """A hostile document is an ArtifactError naming the bound it breaks, never a
    RecursionError or a ValueError from int(); valid ones parse as json does."""
    make, needle = BOUNDED[case]
    raw = make()
    if needle is None:
        assert load_json(raw, "doc") == json.loads(raw)
        return
    with pytest.raises(ArtifactError, match=re.escape(needle)) as ei:
        load_json(raw, "doc")
    assert str(ei.value).startswith("doc ") and len(str(ei.value)) < 200


@pytest.mark.parametrize(("parameters", "needle"), [
    ({"x": {1, 2}}, "set"),
    ({"x": float("nan")}, "float"),
    ({"x": float("inf")}, "float"),
    ({"x": np.int64(3)}, "int64"),
    ({"x": object()}, "object"),
    ({1: "a"}, "1"),
    ({"outer": {(1, 2): "a"}}, "(1, 2)"),
    ({"outer": [{2.5: "a"}]}, "2.5"),
])
def test_non_json_metadata_raises_parameter_error(tmp_path, parameters, needle):
    path = tmp_path / "x.parquet"
    with pytest.raises(ParameterError) as ei:
        Artifact(pd.DataFrame({"x": [1]}), "m", parameters).to_parquet(path)
    assert needle in str(ei.value)
    assert not path.exists()


def test_non_json_extra_raises_parameter_error(tmp_path):
    with pytest.raises(ParameterError):
        Artifact(pd.DataFrame({"x": [1]}), "m", {}, extra={"when": pd.Timestamp(0)}).to_parquet(
            tmp_path / "x.parquet")


def test_a_non_default_index_survives_the_round_trip(tmp_path):
    frame = pd.DataFrame({"x": [1, 2, 3]}, index=pd.Index(["a", "b", "c"], name="key"))
    privpub.Artifact(frame, mechanism="identity", parameters={}).to_parquet(tmp_path / "a.pq")
    back = privpub.Artifact.read_parquet(tmp_path / "a.pq").frame
    pd.testing.assert_frame_equal(back, frame)


def test_categories_that_json_cannot_hold_are_a_parameter_error(tmp_path):
    frame = pd.DataFrame({"t": pd.Categorical(pd.to_datetime(["2020-01-01", "2021-01-01"]))})
    with pytest.raises(privpub.ParameterError, match="categories cannot be stored as JSON"):
        privpub.Artifact(frame, mechanism="identity", parameters={}).to_parquet(
            tmp_path / "b.parquet")
