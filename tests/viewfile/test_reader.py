"""read_parquet's whole-file read (privpub.viewfile.reader) and the writer's checks.

The page reader's digits must be pyarrow's on any schema (wide dictionaries,
declared missing values, integer ranges small and huge, integer-valued and
date-like categoricals, many row groups); a file it cannot decode is read by
pyarrow; its word is never taken against the digest; an edited column is still
refused, naming the column.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import privpub.viewfile.writer as writer
from privpub import (
    AlphaBeta,
    ArtifactError,
    Categorical,
    DomainError,
    IntRange,
    PublishedView,
    Schema,
    _core,
)
from privpub.viewfile import reader
from privpub.viewfile.layout import SET_COLUMN
from privpub.viewfile.pages import PageReader
from privpub.viewfile.rows import MemoryView

pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning",
                                        "ignore::privpub.PrivacyWarning")

GROUP = 300  # rows per row group: many groups from a few thousand rows


def _schema(rng: np.random.Generator) -> Schema:
    """A random schema: string categoricals of 2 to 400 values (some with a declared
    missing value), dates in order, integer-valued categoricals, integer ranges
    (negative, small, and huge: plain integers on file)."""
    attrs = []
    for j in range(int(rng.integers(2, 7))):
        kind = rng.choice(["strings", "dates", "ints", "range", "huge"])
        if kind == "strings":
            k = int(rng.choice([2, 5, 127, 129, 300, 400]))
            values = [f"v{i}" for i in rng.permutation(k)]
            attrs.append(Categorical(f"s{j}", values, missing=values[-1] if k > 2 and
                                     rng.random() < 0.5 else None))
        elif kind == "dates":
            days = pd.date_range("2020-01-01", periods=int(rng.integers(2, 200)))
            attrs.append(Categorical(f"d{j}", [str(d.date()) for d in days], ordered=True))
        elif kind == "ints":
            attrs.append(Categorical(f"i{j}", sorted(rng.choice(1000, int(rng.integers(2, 150)),
                                                               replace=False).tolist())))
        elif kind == "range":
            lo = int(rng.integers(-50, 50))
            attrs.append(IntRange(f"r{j}", lo, lo + int(rng.integers(1, 300))))
        else:
            attrs.append(IntRange(f"h{j}", -5, 2**33))
    return Schema(attrs)


def _frame(schema: Schema, n: int, rng: np.random.Generator) -> pd.DataFrame:
    columns = {}
    for attr in schema:
        if isinstance(attr, IntRange):
            columns[attr.name] = rng.integers(attr.lo, min(attr.hi, attr.lo + 10**6) + 1, n)
        else:
            values = [v for v in attr.values if v != attr.missing]  # the label marks None only
            p = np.geomspace(1, 0.01, len(values))
            columns[attr.name] = rng.choice(np.array(values, dtype=object), n, p=p / p.sum())
            if attr.missing is not None:
                columns[attr.name][rng.random(n) < 0.1] = None  # published as declared
    return pd.DataFrame(columns)


def _written(schema: Schema, tmp_path, monkeypatch, seed: int, n: int = 2_000,
             name: str = "v") -> tuple[PublishedView, str]:
    monkeypatch.setattr(writer, "CHUNK_ROWS", GROUP)
    rng = np.random.default_rng(seed)
    view = AlphaBeta(schema, 0.9, 1e-30, n=n).publish(_frame(schema, n, rng), seed=seed,
                                                      duplicates="records")
    path = str(tmp_path / f"{name}.parquet")
    view.to_parquet(path)
    return view, path


def _pyarrow_digits(path: str) -> list[np.ndarray]:
    """The view's digits as FileView's full pass reads them (pyarrow, checked)."""
    view = PublishedView.open(path)
    batches = list(view.rows.batches())
    return [np.concatenate([b[n] for b in batches]) for n in view.schema.names]


def _rewrite(path: str, out: str, table: pa.Table, **options) -> str:
    """``table`` written to ``out`` with ``path``'s privpub metadata (pyarrow options)."""
    stored = pq.read_metadata(path).metadata
    pq.write_table(table.replace_schema_metadata({b"privpub": stored[b"privpub"]}), out,
                   row_group_size=GROUP, **options)
    return out


class _Decoded:
    """Counts the chunks the page reader decoded (not None)."""

    def __init__(self, monkeypatch):
        self.chunks, original = 0, PageReader.column

        def counted(*args):
            found = original(*args)
            self.chunks += found is not None
            return found

        monkeypatch.setattr(PageReader, "column", counted)


@pytest.mark.parametrize("seed", range(8))
def test_read_parquet_equals_the_pyarrow_read_on_random_schemas(seed, tmp_path, monkeypatch):
    schema = _schema(np.random.default_rng(100 + seed))
    view, path = _written(schema, tmp_path, monkeypatch, seed)
    decoded = _Decoded(monkeypatch)
    back = PublishedView.read_parquet(path)
    groups = pq.read_metadata(path).num_row_groups
    assert groups > 3
    # Every dictionary-encoded chunk went through the page reader (a huge range's
    # column may have given its dictionary up: pyarrow's).
    huge = sum(isinstance(a, IntRange) and a.size > 10**6 for a in schema)
    assert decoded.chunks >= groups * (len(schema) - huge)
    expected = _pyarrow_digits(path)
    for attr, found, want in zip(schema, back.rows.digits(), expected, strict=True):
        assert found.dtype == want.dtype, attr.name
        np.testing.assert_array_equal(found, want, err_msg=attr.name)
    np.testing.assert_array_equal(back.codes, view.codes)


def test_a_file_the_page_reader_cannot_decode_is_read_by_pyarrow(tmp_path, monkeypatch):
    """Rewritten with zstd and v2 data pages (the page reader decodes neither):
    every chunk is pyarrow's, and the rows are the same."""
    schema = _schema(np.random.default_rng(7))
    view, path = _written(schema, tmp_path, monkeypatch, 7)
    other = _rewrite(path, str(tmp_path / "zstd.parquet"), pq.read_table(path),
                     compression="zstd", data_page_version="2.0")
    decoded = _Decoded(monkeypatch)
    back = PublishedView.read_parquet(other)
    assert decoded.chunks == 0
    np.testing.assert_array_equal(back.codes, view.codes)


def test_a_wrong_page_reader_is_never_trusted(tmp_path, monkeypatch):
    """Page-reader digits that do not match the digest are read again by pyarrow:
    the rows come back right, and no false alarm is raised."""
    schema = _schema(np.random.default_rng(3))
    view, path = _written(schema, tmp_path, monkeypatch, 3)
    original = _core.parquet.decode_data_pages

    def off_by_one(data, snappy, nullable, remap, width, rows):
        return original(data, snappy, nullable, np.roll(remap, 1), width, rows)

    monkeypatch.setattr(_core.parquet, "decode_data_pages", off_by_one)
    np.testing.assert_array_equal(PublishedView.read_parquet(path).codes, view.codes)


def test_an_edited_column_is_refused_by_name(tmp_path, monkeypatch):
    """One value changed in the last row group (the dictionary kept): refused,
    naming the column, though the page reader decodes the edited file."""
    schema = Schema([Categorical("city", [f"c{i}" for i in range(200)]),
                     Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
    view, path = _written(schema, tmp_path, monkeypatch, 5)
    table = pq.read_table(path)
    city = table.column("city").combine_chunks()
    indices = city.indices.to_numpy().copy()
    indices[-1] = (indices[-1] + 1) % 200
    edited = table.set_column(0, "city", pa.DictionaryArray.from_arrays(indices,
                                                                        city.dictionary))
    out = _rewrite(path, str(tmp_path / "edited.parquet"), edited)
    decoded = _Decoded(monkeypatch)
    with pytest.raises(ArtifactError, match="column 'city' does not match the digest"):
        PublishedView.read_parquet(out)
    assert decoded.chunks > 0


def test_a_dask_directory_is_read_part_by_part(tmp_path, monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    from privpub import FRAPP

    monkeypatch.setattr(writer, "CHUNK_ROWS", GROUP)
    schema = Schema([Categorical("day", [f"2020-01-{d:02d}" for d in range(1, 29)],
                                 ordered=True), IntRange("age", 0, 99),
                     Categorical("city", [f"c{i}" for i in range(200)]),
                     Categorical("job", ["a", "b", "?"], missing="?"),
                     Categorical("sex", ["F", "M"])])
    frame = _frame(schema, 2_500, np.random.default_rng(11))
    with dask.config.set(scheduler="synchronous"):
        release = FRAPP.for_privacy(schema, n=len(frame), gamma=0.2, k=10).publish(
            dd.from_pandas(frame, npartitions=3), seed=1, duplicates="records")
        release.to_parquet(tmp_path / "release")
    back = PublishedView.read_parquet(tmp_path / "release")
    assert len(back.rows.digits()[0]) == len(back)
    for found, want in zip(back.rows.digits(), _pyarrow_digits(str(tmp_path / "release")),
                           strict=True):
        np.testing.assert_array_equal(found, want)


def test_a_file_with_context_sets_is_read_by_its_batches(tmp_path):
    """Its view rows are a selection (SET_COLUMN): not this reader's."""
    schema = Schema([Categorical("a", ["x", "y", "z"]), IntRange("b", 0, 9)])
    drawn = AlphaBeta(schema, 0.6, 0.3, n=30).publish(
        pd.DataFrame({"a": ["x", "y", "z"] * 10, "b": np.arange(30) % 10}), seed=1)
    codes = drawn.codes
    view = PublishedView(codes, schema, drawn.mechanism, drawn.parameters, drawn.seed_policy,
                         context={"before": np.array([1, 2, 3], dtype=np.uint64)})
    path = str(tmp_path / "ctx.parquet")
    view.to_parquet(path)
    assert SET_COLUMN in pq.read_schema(path).names
    assert reader.read_whole(PublishedView.open(path).rows) is None
    back = PublishedView.read_parquet(path)
    np.testing.assert_array_equal(back.codes, codes)
    np.testing.assert_array_equal(back.context["before"], [1, 2, 3])


def test_digits_outside_the_domain_are_not_written(tmp_path):
    """A stream whose batch holds an index outside its domain is refused before
    pyarrow (which is told the indices were checked) writes it; nothing is left,
    and the stream is closed."""
    schema = Schema([Categorical("a", ["x", "y", "z"]), IntRange("b", 0, 9)])
    good = {"a": np.array([0, 1, 2], dtype=np.int8), "b": np.array([0, 9, 3], dtype=np.int8)}
    closed = []

    def stream(bad):
        try:
            yield from (good, bad, good)
        finally:
            closed.append(True)

    for bad in ({"a": np.array([0, 3, 1], dtype=np.int8), "b": good["b"]},
                {"a": good["a"], "b": np.array([-1, 0, 0], dtype=np.int8)}):
        path = tmp_path / "bad.parquet"
        with pytest.raises(DomainError, match="outside 0..[29]"):
            writer.write_view(path, schema, stream(bad), lambda rows, digest: {}, None)
        assert not path.exists()
    assert closed == [True, True]  # the stream closed, not left to the garbage collector
    assert MemoryView(schema, digits=[good["a"], good["b"]]).to_arrow().num_rows == 3


def test_an_index_outside_its_dictionary_is_named_where_it_is(tmp_path, monkeypatch):
    """A data page holding index 200 of a 200-entry dictionary (pyarrow writes what it
    is not asked to check): the page reader gives up on the chunk, and pyarrow's read
    names the file, the column and the index."""
    schema = Schema([Categorical("city", [f"c{i}" for i in range(200)]),
                     Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
    view, path = _written(schema, tmp_path, monkeypatch, 9)
    table = pq.read_table(path)
    city = table.column("city").combine_chunks()
    indices = city.indices.to_numpy().astype(np.int16)
    indices[len(indices) - 5] = 200
    broken = table.set_column(0, "city", pa.DictionaryArray.from_arrays(
        indices, city.dictionary, safe=False))
    out = _rewrite(path, str(tmp_path / "outside.parquet"), broken, write_statistics=False)
    decoded = _Decoded(monkeypatch)
    with pytest.raises(ArtifactError, match=re.escape(
            f"{out!r}: column 'city': dictionary index 200 (its dictionary has 200 entries)")):
        PublishedView.read_parquet(out)
    assert decoded.chunks > 0
