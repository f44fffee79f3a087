"""Table views: rows over a schema, held columnar, in memory or on file.

A :class:`TableView` is what a table mechanism publishes. Its rows are tuple
codes (never per-row Python objects): in memory as a code array
(:class:`MemoryView`), or in a Parquet file read row group by row group
(:class:`FileView`), so a view larger than memory is counted in bounded
memory. Every consumer reads rows as *batches of domain indices* (digits),
one integer array per attribute, through :meth:`TableView.batches`.

On file, each attribute is one column: a :class:`~privpub.Categorical` as a
dictionary-encoded column whose dictionary is its domain, an
:class:`~privpub.IntRange` as plain integers, so DuckDB, Spark and pandas
read ordinary values; reading back maps dictionary indices to domain
indices with a remap table of the (small) dictionary.

A *fingerprint* (per column: row count, Σ digit and Σ digit² mod 2^64) is
stored beside the rows and checked whenever a column is read in full, so
rows and metadata from different files are not mixed silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privpub import _core
from privpub.core.errors import ArtifactError, DomainError, ParameterError
from privpub.tables.schema import Attribute, Categorical, Schema, _Column, _shifted, arrow_values

#: Rows per batch when streaming (decoding, writing, reading a file).
CHUNK_ROWS = 1 << 20
#: In a file holding a view and its context sets: which set a row belongs to
#: ("" for the view's own rows). Absent when there is no context.
SET_COLUMN = "__privpub_set"

#: A release written as a directory (by Dask, one file per partition): the file
#: holding the metadata (an empty Parquet file); the rows are in ``part.*.parquet``.
METADATA_FILE = "_common_metadata"
#: The names of a directory release's part files (``part.<i>.parquet``).
PART_FILES = "part.*.parquet"

Digits = dict[str, np.ndarray]


def part_files(path: str | os.PathLike) -> list[str]:
    """The files holding a view's rows: the file itself, or a directory's
    ``part.<i>.parquet`` files in partition order."""
    if not os.path.isdir(path):
        return [os.fspath(path)]
    parts = sorted(Path(path).glob(PART_FILES),
                   key=lambda p: (len(p.name), p.name))
    return [str(p) for p in parts]


def metadata_file(path: str | os.PathLike) -> str:
    """Where a view's metadata is: the file itself, or a directory's METADATA_FILE."""
    return os.path.join(path, METADATA_FILE) if os.path.isdir(path) else os.fspath(path)


# ---- columns: digits ↔ Arrow ↔ pandas ---------------------------------------------------------


def arrow_column(attr: Attribute, digits: np.ndarray) -> pa.Array:
    """One attribute's Arrow column: dictionary-encoded over its domain
    (Categorical) or plain integers of its dtype (IntRange)."""
    if isinstance(attr, Categorical):
        return pa.DictionaryArray.from_arrays(digits.astype(index_dtype(attr), copy=False),
                                              _dictionary(attr), ordered=attr.ordered)
    dtype = pd.api.types.pandas_dtype(attr.dtype)
    dtype = getattr(dtype, "numpy_dtype", dtype)  # nullable Int64 → int64 (no nulls here)
    return pa.array(_shifted(digits, attr.offset).astype(dtype, copy=False))


def index_dtype(attr: Categorical) -> np.dtype:
    """The dictionary index type of an attribute's column: fixed by its domain size,
    so every batch of a file has the same Arrow type (the digits of a batch come in
    whatever width the kernel chose)."""
    for dtype in (np.int8, np.int16, np.int32):
        if attr.size <= np.iinfo(dtype).max + 1:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _dictionary(attr: Categorical) -> pa.Array:
    cached = attr.__dict__.get("_arrow_dictionary")
    if cached is None:
        cached = attr.__dict__["_arrow_dictionary"] = arrow_values(attr)
    return cached


def pandas_column(attr: Attribute, digits: np.ndarray) -> Any:
    """One attribute's pandas column: a Categorical with the declared categories
    and order for string (or 'category') domains; integers, floats and booleans
    keep their dtype."""
    if isinstance(attr, Categorical) and (attr.kind == "string" or attr.dtype == "category"):
        return pd.Categorical.from_codes(digits, dtype=attr.categorical_dtype)
    return pd.Series(attr._from_raw(_shifted(digits, attr.offset)), dtype=attr.dtype,
                     copy=False)


def digits_of(schema: Schema, table: pa.Table | pd.DataFrame,
              attributes: Sequence[str]) -> Digits:
    """Domain indices of the named columns of ``table``, checked against the
    domains in Rust (a value outside names the column, row and value)."""
    attrs = [schema[name] for name in attributes]
    columns = [_Column.of(table, attr) for attr in attrs]
    try:
        digits = _core.to_digits([np.ascontiguousarray(c.raw) for c in columns],
                                 [c.offset for c in columns], [c.remap for c in columns],
                                 [a.size for a in attrs])
    except DomainError as exc:
        attr, column = attrs[exc.attribute_index], columns[exc.attribute_index]
        raise ArtifactError(f"column {attr.name!r}: value {column.value_at(exc.row)!r} at row "
                            f"{exc.row} is not in the schema's domain ({attr.describe()})"
                            ) from None
    return dict(zip(attributes, digits, strict=True))


def codes_of(schema: Schema, batch: Digits) -> np.ndarray:
    """Tuple codes of a batch of domain indices (Rust)."""
    digits = [np.ascontiguousarray(batch[n]) for n in schema.names]
    k = len(digits)
    if schema.is_wide:
        return _core.encode_wide(digits, [0] * k, [None] * k, list(schema.radices),
                                 schema.limbs)
    return _core.encode_u64(digits, [0] * k, [None] * k, list(schema.radices))


def arrow_batch(schema: Schema, digits: Digits) -> pa.RecordBatch:
    """A batch of domain indices as an Arrow record batch of the attributes' columns."""
    return pa.RecordBatch.from_arrays([arrow_column(a, digits[a.name]) for a in schema],
                                      names=list(schema.names))


class Fingerprint:
    """Per column [rows, Σ digit, Σ digit²] (the sums mod 2^64), added up batch by batch."""

    def __init__(self, names: Sequence[str]):
        self.totals = {n: np.zeros(3, dtype=np.uint64) for n in names}

    def add(self, batch: Digits) -> Digits:
        prints = _core.fingerprints([np.ascontiguousarray(batch[n]) for n in self.totals])
        for total, found in zip(self.totals.values(), prints, strict=True):
            total += np.array(found, dtype=np.uint64)  # wraps mod 2^64, as in Rust
        return batch

    def result(self) -> dict[str, list[int]]:
        return {n: [int(x) for x in t] for n, t in self.totals.items()}


def fingerprint(batches: Iterator[Digits], names: Sequence[str]) -> dict[str, list[int]]:
    """The :class:`Fingerprint` of all the batches."""
    prints = Fingerprint(names)
    for batch in batches:
        prints.add(batch)
    return prints.result()


# ---- views ------------------------------------------------------------------------------------


class TableView:
    """Rows over a schema; subclasses say where the rows live."""

    schema: Schema

    def __len__(self) -> int:
        raise NotImplementedError

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        """The rows as batches of domain indices of ``attributes`` (default: all)."""
        raise NotImplementedError

    def codes(self) -> np.ndarray:
        """All rows as tuple codes (in memory)."""
        raise NotImplementedError

    # ---- shared by both kinds of view -------------------------------------------------------
    def to_arrow(self) -> pa.Table:
        """The rows as an Arrow table: dictionary-encoded categorical columns whose
        values are as in the input, plain integers for integer ranges."""
        batches = [arrow_batch(self.schema, digits) for digits in self.batches()]
        return pa.Table.from_batches(batches, schema=self.arrow_schema())

    def arrow_schema(self) -> pa.Schema:
        empty = {a.name: np.zeros(0, dtype=np.int8) for a in self.schema}
        return pa.schema([pa.field(a.name, arrow_column(a, empty[a.name]).type)
                          for a in self.schema])

    def to_pandas(self) -> pd.DataFrame:
        """The rows as pandas: categorical columns keep their declared categories
        and order; integers stay integers."""
        frames = [self._frame(batch) for batch in self.batches()]
        if not frames:
            return self._frame({a.name: np.zeros(0, dtype=np.int8) for a in self.schema})
        return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)

    def _frame(self, batch: Digits) -> pd.DataFrame:
        return pd.DataFrame({a.name: pandas_column(a, batch[a.name]) for a in self.schema},
                            copy=False)

    def iter_frames(self) -> Iterator[pd.DataFrame]:
        """The rows as pandas frames, one per batch (bounded memory)."""
        for batch in self.batches():
            yield self._frame(batch)

    def to_polars(self) -> Any:
        """The rows as a polars DataFrame (needs polars installed)."""
        try:
            import polars as pl
        except ImportError as exc:
            raise ImportError("to_polars() needs polars: pip install polars") from exc
        return pl.from_arrow(self.to_arrow())

    def fingerprint(self, names: Sequence[str] | None = None) -> dict[str, list[int]]:
        names = list(self.schema.names if names is None else names)
        return fingerprint(self.batches(names), names)

    def count(self, condition: Any) -> int:
        """Rows satisfying ``condition`` (a :class:`~privpub.tables.query.Condition`
        over at least one attribute), counted batch by batch."""
        names = list(condition.attributes)
        return sum(condition.count_digits(batch, len(batch[names[0]]))
                   for batch in self.batches(names))


class MemoryView(TableView):
    """Rows held in memory as a code array (uint64 (n,), or (n, limbs) when
    m > 2^64), or as each attribute's domain indices (``digits``, one array
    per attribute in schema order); either is derived from the other on demand."""

    def __init__(self, schema: Schema, codes: np.ndarray | None = None,
                 chunk_rows: int = CHUNK_ROWS, digits: Sequence[np.ndarray] | None = None):
        if chunk_rows < 1:
            raise ParameterError(f"chunk_rows must be positive, got {chunk_rows}")
        if (codes is None) == (digits is None):
            raise ParameterError("give the rows as codes or as digits (one of them)")
        self.schema, self._codes, self.chunk_rows = schema, codes, chunk_rows
        self._digits = None if digits is None else list(digits)

    def __len__(self) -> int:
        return len(self._codes) if self._codes is not None else len(self._digits[0])

    def codes(self) -> np.ndarray:
        if self._codes is None:
            self._codes = codes_of(self.schema, dict(zip(self.schema.names, self._digits,
                                                         strict=True)))
        return self._codes

    def digits(self) -> list[np.ndarray]:
        """Every attribute's domain indices, decoded once (Rust) and kept."""
        if self._digits is None:
            self._digits = self.schema.digits(self._codes)
        return self._digits

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        names = list(self.schema.names if attributes is None else attributes)
        if self._digits is not None or len(self) <= self.chunk_rows:
            digits = self.digits()
            yield {n: digits[self.schema.names.index(n)] for n in names}
            return
        for start in range(0, len(self), self.chunk_rows):  # decode a chunk at a time
            digits = self.schema.digits(self._codes[start:start + self.chunk_rows])
            yield {n: digits[self.schema.names.index(n)] for n in names}


def _reading(path: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Record batches of a file, a damaged file being an ArtifactError."""
    try:
        yield from batches
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{path!r}: its rows cannot be read: "
                            f"{str(exc).splitlines()[0]}") from None


class FileView(TableView):
    """Rows in a Parquet file, or in the part files of a directory
    (:func:`part_files`), read row group by row group (bounded memory).

    ``label`` selects the rows of one set when the file also holds context
    sets (the column ``SET_COLUMN``); ``expected`` is the stored fingerprint,
    checked for every column a pass reads in full (None: not checked).
    """

    def __init__(self, schema: Schema, path: str | os.PathLike, rows: int,
                 expected: dict[str, list[int]] | None, label: str | None = None,
                 batch_rows: int = CHUNK_ROWS):
        self.schema, self.path, self.rows = schema, os.fspath(path), rows
        self.expected, self.label, self.batch_rows = expected, label, batch_rows
        self.files = part_files(self.path)

    def __len__(self) -> int:
        return self.rows

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        names = list(self.schema.names if attributes is None else attributes)
        columns = names + ([SET_COLUMN] if self.label is not None else [])
        seen = Fingerprint(names)
        for path in self.files:
            with pq.ParquetFile(path) as file:
                for record_batch in _reading(path, file.iter_batches(
                        batch_size=self.batch_rows, columns=columns, use_threads=True)):
                    table = pa.Table.from_batches([record_batch])
                    if self.label is not None:
                        keep = np.asarray(table.column(SET_COLUMN).to_numpy(
                            zero_copy_only=False) == self.label)
                        table = table.filter(pa.array(keep))
                    yield seen.add(digits_of(self.schema, table, names))
        for n, found in seen.result().items():  # a full pass: they must be the stored ones
            if self.expected is not None and found != list(self.expected.get(n, [])):
                raise ArtifactError(f"{self.path!r}: column {n!r} does not match the "
                                    "fingerprint in its metadata; the rows were altered or "
                                    "come from another file")

    def codes(self) -> np.ndarray:
        parts = [codes_of(self.schema, batch) for batch in self.batches()]
        if not parts:
            shape = (0, self.schema.limbs) if self.schema.is_wide else (0,)
            return np.zeros(shape, dtype=np.uint64)
        return np.concatenate(parts)
