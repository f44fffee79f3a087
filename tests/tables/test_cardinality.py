"""Columns of any cardinality publish, save and reopen (issue 21).

A Parquet file's dictionary index type is fixed per column by the domain
size, never by the batch: every integer-width edge (127/128, 255/256,
32,767/32,768, 65,535/65,536) and 100,000 values, in memory, streamed
(publish_to_parquet, several row groups) and through Dask; a domain wider
than 2^64 with a Categorical attribute saves and reopens.
"""

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import AlphaBeta, Categorical, IntRange, PublishedView, Schema
from privpub.core.errors import DomainError, SchemaError

# A few records per domain, up to 10^5 values: every view says its bound is wide
# (UsefulnessWarning); these tests check that any cardinality publishes and reopens.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")

SIZES = (1, 127, 128, 129, 255, 256, 32_767, 32_768, 65_536,
         pytest.param(100_000, marks=pytest.mark.slow))


def _table(size: int, rows: int = 3_000) -> tuple[Schema, pd.DataFrame]:
    """A categorical column of ``size`` string values (the last one always present)
    beside a small one, as zip codes beside sex."""
    schema = Schema([Categorical("zip", [f"z{i:06d}" for i in range(size)]),
                     Categorical("sex", ["F", "M"])])
    rng = np.random.default_rng(size)
    picks = rng.integers(0, size, rows)
    picks[0] = size - 1
    frame = pd.DataFrame({"zip": [f"z{i:06d}" for i in picks],
                          "sex": rng.choice(["F", "M"], rows)}).drop_duplicates()
    return schema, frame.reset_index(drop=True)


def _mechanism(schema: Schema, frame: pd.DataFrame) -> AlphaBeta:
    # β small enough that the view stays a few thousand rows at every size.
    return AlphaBeta(schema, alpha=0.5, beta=min(0.5, 2_000 / schema.size), n=len(frame))


@pytest.mark.parametrize("size", SIZES)
def test_any_cardinality_saves_and_reopens(tmp_path, size):
    schema, frame = _table(size)
    view = _mechanism(schema, frame).publish(frame, seed=1, duplicates="set")
    path = tmp_path / "view.parquet"
    # Small chunks: many batches, each with its own digit width, one file.
    from privpub.viewfile.rows import MemoryView
    PublishedView(MemoryView(schema, view.codes, chunk_rows=97), schema, view.mechanism,
                  view.parameters, view.seed_policy).to_parquet(path)
    again = PublishedView.read_parquet(path)
    assert (again.codes == view.codes).all()
    query = {"zip": f"z{size - 1:06d}"}
    assert PublishedView.open(path).estimate(query) == view.estimate(query)
    index = pq.read_schema(path).field("zip").type.index_type
    assert index.bit_width == (8 if size <= 128 else 16 if size <= 32_768 else 32)


@pytest.mark.parametrize("size", SIZES)
def test_any_cardinality_streams_to_parquet(tmp_path, size, monkeypatch):
    import privpub.alphabeta.publishing as publishing
    import privpub.viewfile.layout as view_module

    monkeypatch.setattr(view_module, "CHUNK_ROWS", 101)  # many batches per window
    monkeypatch.setattr(publishing, "WINDOW_SEGMENTS", 1)
    schema, frame = _table(size)
    mech = _mechanism(schema, frame)
    path = tmp_path / "streamed.parquet"
    on_file = mech.publish_to_parquet(frame, path, seed=3, duplicates="set")
    assert (on_file.codes == mech.publish(frame, seed=3, duplicates="set").codes).all()


def test_any_cardinality_through_dask(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    schema, frame = _table(32_769, rows=5_000)
    release = _mechanism(schema, frame).publish(dd.from_pandas(frame, npartitions=3),
                                                seed=2, duplicates="set")
    release.to_parquet(tmp_path / "dir")
    again = PublishedView.read_parquet(tmp_path / "dir")
    memory = _mechanism(schema, frame).publish(frame, seed=2, duplicates="set")
    assert (np.sort(again.codes) == np.sort(memory.codes)).all()


def test_wide_domain_with_categorical_saves(tmp_path):
    schema = Schema([Categorical("c", [f"v{i}" for i in range(300)]),
                     IntRange("a", 0, 2**40), IntRange("b", 0, 2**40)])
    assert schema.is_wide
    frame = pd.DataFrame({"c": ["v1", "v299", "v5"], "a": [1, 2, 3], "b": [5, 6, 7]})
    view = AlphaBeta(schema, alpha=0.5, beta=1e-30, n=3).publish(frame, seed=1,
                                                                 duplicates="set")
    view.to_parquet(tmp_path / "wide.parquet")
    again = PublishedView.read_parquet(tmp_path / "wide.parquet")
    assert (again.codes == view.codes).all()
    assert again.frame["c"].tolist() == view.frame["c"].tolist()


def test_python_int_beyond_int64_is_a_domain_error():
    schema = Schema([IntRange("a", 0, 10), Categorical("b", [1, 2])])
    for column in ("a", "b"):
        frame = pd.DataFrame({"a": pd.Series([1, 2], dtype=object),
                              "b": pd.Series([1, 2], dtype=object)})
        frame[column] = pd.Series([1, 2**70], dtype=object)
        with pytest.raises(DomainError, match=rf"column '{column}'.*{2**70}.*row 1"):
            schema.encode(frame)


@pytest.mark.parametrize("values, odd", [
    ([1, 2**70], 2**70), ([0, 2**64], 2**64), ([-1, 2**63], -1), ([-(2**63) - 1, 0], -(2**63) - 1)])
def test_integer_domain_values_past_64_bits_are_a_schema_error(values, odd):
    """A Categorical of Python ints that no 64-bit type holds together is refused
    when it is declared or inferred, naming the column and the value: it encoded
    and published, then to_parquet raised a bare OverflowError."""
    with pytest.raises(SchemaError, match=rf"'b': integer value {odd} does not fit in 64 bits"):
        Categorical("b", values)
    frame = pd.DataFrame({"b": pd.Series(values, dtype=object)})
    with pytest.raises(SchemaError, match=rf"'b': integer value {odd}"):
        Schema.from_frame(frame)


@pytest.mark.parametrize("dtype", [object, None])
def test_integer_domains_at_the_64_bit_edges_publish_and_reopen(tmp_path, dtype):
    """int64's ends, and uint64 values past int64 (none negative: to_parquet raised
    OverflowError), save and reopen, from object and from numpy columns."""
    for i, values in enumerate(([-(2**63), 0, 2**63 - 1], [0, 2**63, 2**64 - 1])):
        schema = Schema([Categorical("b", values)])
        frame = pd.DataFrame({"b": pd.Series(values, dtype=dtype)})
        view = AlphaBeta(schema, 0.5, 0.5, n=3).publish(frame, seed=1)
        view.to_parquet(tmp_path / f"edge{i}.parquet")
        again = PublishedView.read_parquet(tmp_path / f"edge{i}.parquet")
        assert (again.codes == view.codes).all()
        assert again.frame["b"].tolist() == view.frame["b"].tolist()


def test_infinite_float_domain_values_are_a_schema_error():
    """±inf in a float domain is refused when declared or inferred, naming the
    column: it published, then to_parquet refused the schema's JSON."""
    with pytest.raises(SchemaError, match=r"'x': inf cannot be a domain value"):
        Categorical("x", [0.5, float("inf")])
    with pytest.raises(SchemaError, match=r"'x': -inf cannot be a domain value"):
        Schema.from_frame(pd.DataFrame({"x": [0.5, -np.inf]}))


def test_lone_surrogates_are_a_schema_error():
    """Text UTF-8 cannot encode (a lone surrogate, e.g. from bytes decoded with
    surrogateescape) in a value or a name is a SchemaError naming it: it was a bare
    UnicodeEncodeError from pandas, or from to_parquet after publishing."""
    with pytest.raises(SchemaError, match=r"attribute 'a': value 'x\\udc80' holds"):
        Categorical("a", ["ok", "x\udc80"])
    with pytest.raises(SchemaError, match=r"attribute name 'b\\ud800' holds"):
        IntRange("b\ud800", 0, 1)


def test_adult_with_a_zip_column_publishes(tmp_path):
    """The issue's repro: Adult plus 200 zip codes, for_privacy, to_parquet."""
    df, _ = privpub.datasets.load_adult()
    df = df.assign(zip=[f"z{i:03d}" for i in np.random.default_rng(0).integers(0, 200, len(df))])
    with pytest.warns(privpub.PrivacyWarning):
        schema = Schema.from_frame(df)
    view = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="set")
    view.to_parquet(tmp_path / "zip.parquet")
    assert PublishedView.open(tmp_path / "zip.parquet").estimate({"sex": "Female"}) \
        == view.estimate({"sex": "Female"})
