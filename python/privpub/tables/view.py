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

A *digest* is stored beside the rows (:class:`Digest`): per part file (one
for a single file, one per range for a Dask release, in part order) the row
count and, per column, SHA-256 of the column's domain indices in file order,
each index as a little-endian integer of the width the column's domain size
fixes (:func:`index_width`), so neither batch boundaries nor the width a
kernel chose change it. It is checked whenever a column is read in full, so
an edited, reordered, dropped or foreign value is refused. It is not a
signature: whoever rewrites rows and digest consistently has written a new file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from privpub import _core
from privpub.core.errors import ArtifactError, DataTypeError, DomainError, ParameterError
from privpub.domain.attributes import Attribute, Categorical, with_offset
from privpub.domain.columns import RawColumn
from privpub.domain.schema import Schema

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
#: What the metadata's ``digest`` holds: SHA-256 of each column's domain indices in
#: file order, each a little-endian signed integer of :func:`index_width` bytes.
DIGEST_ALGORITHM = "sha256/domain-index-le"

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


def arrow_column(attr: Attribute, digits: np.ndarray, in_domain: bool = False) -> pa.Array:
    """One attribute's Arrow column: dictionary-encoded over its domain
    (Categorical) or plain integers of its dtype (IntRange). ``in_domain``: the
    caller has checked every index is in [0, size), so pyarrow's own check of
    each index (a tenth of a millisecond per 100,000 rows) is skipped."""
    if isinstance(attr, Categorical):
        return pa.DictionaryArray.from_arrays(digits.astype(index_dtype(attr), copy=False),
                                              attr.arrow_values, ordered=attr.ordered,
                                              safe=not in_domain)
    dtype = pd.api.types.pandas_dtype(attr.dtype)
    dtype = getattr(dtype, "numpy_dtype", dtype)  # nullable Int64 → int64 (no nulls here)
    return pa.array(with_offset(digits, attr.offset).astype(dtype, copy=False))


def index_dtype(attr: Categorical) -> np.dtype:
    """The dictionary index type of an attribute's column: fixed by its domain size,
    so every batch of a file has the same Arrow type (the digits of a batch come in
    whatever width the kernel chose)."""
    return index_width(attr.size)


def index_width(size: int) -> np.dtype:
    """The narrowest signed integer type holding the indices 0 … size − 1: a
    Categorical column's dictionary index type, and each index's width in the digest."""
    for dtype in (np.int8, np.int16, np.int32):
        if size <= np.iinfo(dtype).max + 1:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def pandas_column(attr: Attribute, digits: np.ndarray, *, checked: bool = False) -> Any:
    """One attribute's pandas column, as an array (a frame built from arrays
    skips the index alignment a Series asks for): a Categorical with the
    declared categories and order for string (or 'category') domains;
    integers, floats and booleans keep their dtype. ``checked``: the digits
    are known to be domain indices (pandas then skips its own check)."""
    if isinstance(attr, Categorical) and (attr.kind == "string" or attr.dtype == "category"):
        return pd.Categorical.from_codes(digits, dtype=attr.categorical_dtype,
                                         validate=not checked)
    return pd.array(attr.from_raw(with_offset(digits, attr.offset)), dtype=attr.dtype,
                    copy=False)


def digits_of(schema: Schema, table: pa.Table | pd.DataFrame,
              attributes: Sequence[str]) -> Digits:
    """Domain indices of the named columns of ``table``, checked against the
    domains in Rust (a value outside names the column, row and value).

    A column whose values already are its domain indices in the digest's width
    (a dictionary column over the domain itself, as privpub writes it) is only
    range-checked and then used as it is, read-only, without a copy."""
    attrs = [schema[name] for name in attributes]
    columns = [RawColumn.of(table, attr) for attr in attrs]
    found = [_as_digits(c, a) for c, a in zip(columns, attrs, strict=True)]
    mapped = [j for j, d in enumerate(found) if d is None]
    try:
        digits = _core.to_digits([np.ascontiguousarray(columns[j].raw) for j in mapped],
                                 [columns[j].offset for j in mapped],
                                 [columns[j].remap for j in mapped],
                                 [attrs[j].size for j in mapped])
    except DomainError as exc:
        j = mapped[exc.attribute_index]
        raise ArtifactError(f"column {attrs[j].name!r}: "
                            f"{_value_at(columns[j], exc.row)} at row "
                            f"{exc.row} is not in the schema's domain ({attrs[j].describe()})"
                            ) from None
    for j, d in zip(mapped, digits, strict=True):
        found[j] = d
    return dict(zip(attributes, found, strict=True))


def _value_at(column: RawColumn, row: int) -> str:
    """The bad value for an error, or the dictionary index it is when that index
    points outside its own dictionary (a damaged file: there is no value to show)."""
    size = column.dictionary_size
    if size is not None and not 0 <= int(column.raw[row]) < size:
        return f"dictionary index {int(column.raw[row])} (its dictionary has {size} entries)"
    return f"value {column.value_at(row)!r}"


def _as_digits(column: RawColumn, attr: Attribute) -> np.ndarray | None:
    """``column``'s values as they are when they are its domain indices: no remap,
    no offset, the width :func:`index_width` gives, every value in [0, size)
    (two vectorised scans; None, and the Rust pass names the first bad row,
    otherwise)."""
    raw = column.raw
    if (column.remap is not None or column.offset != 0 or raw.dtype != index_width(attr.size)
            or not raw.flags.c_contiguous):
        return None
    if len(raw) and (raw.min() < 0 or raw.max() >= attr.size):
        return None
    raw = raw.view()
    raw.flags.writeable = False  # may be the file's buffer: never written through
    return raw


def file_digits(schema: Schema, table: pa.Table, attributes: Sequence[str],
                where: str) -> Digits:
    """:func:`digits_of` for rows read from a file: a value outside its domain, a
    missing value, a column of the wrong type or bytes pyarrow cannot convert
    (text that is not UTF-8 in a dictionary, which its reader does not check) is
    an ArtifactError naming ``where``."""
    try:
        return digits_of(schema, table, attributes)
    except (ArtifactError, DataTypeError, DomainError) as exc:
        raise ArtifactError(f"{where}: {exc}") from None
    except pa.ArrowException as exc:
        raise ArtifactError(f"{where}: its values cannot be read: "
                            f"{str(exc).splitlines()[0][:200]}") from None


def codes_of(schema: Schema, batch: Digits) -> np.ndarray:
    """Tuple codes of a batch of domain indices (Rust)."""
    digits = [np.ascontiguousarray(batch[n]) for n in schema.names]
    k = len(digits)
    if schema.is_wide:
        return _core.encode_wide(digits, [0] * k, [None] * k, list(schema.radices),
                                 schema.limbs)
    return _core.encode_u64(digits, [0] * k, [None] * k, list(schema.radices))


def arrow_batch(schema: Schema, digits: Digits, in_domain: bool = False) -> pa.RecordBatch:
    """A batch of domain indices as an Arrow record batch of the attributes' columns
    (``in_domain`` as :func:`arrow_column`)."""
    return pa.RecordBatch.from_arrays([arrow_column(a, digits[a.name], in_domain)
                                       for a in schema], names=list(schema.names))


@dataclass(frozen=True)
class PartDigest:
    """What one stream of rows (a part file's view rows, or a context set) reads
    back as: its row count and, per column, the hex SHA-256 of :class:`Digest`."""

    rows: int
    columns: Mapping[str, str]
    #: Per row group statistics and digests (:class:`~privpub.tables.filescan.GroupStats`)
    #: and their seal; None in a file written before them, or holding context sets.
    groups: Sequence[Any] | None = None
    groups_sha256: str | None = None

    def to_dict(self) -> dict[str, object]:
        groups = {} if self.groups is None else {
            "groups": [g.to_dict() for g in self.groups], "groups_sha256": self.groups_sha256}
        return {"rows": self.rows, "columns": dict(self.columns), **groups}

    def check(self, found: PartDigest, where: str) -> None:
        """``found`` (a pass over some of the columns) must be this: an ArtifactError
        naming ``where`` and the column otherwise."""
        if found.rows != self.rows:
            raise ArtifactError(f"{where}: {found.rows:,} rows read, its metadata says "
                                f"{self.rows:,}; rows were dropped, added or moved")
        for name, value in found.columns.items():
            if value != self.columns.get(name):
                raise ArtifactError(f"{where}: column {name!r} does not match the digest in "
                                    "its metadata; its values were edited or reordered, or "
                                    "come from another file")


class Digest:
    """Per column, SHA-256 (hashlib) of its domain indices in the order the
    batches bring them, each a little-endian signed integer of the width
    :func:`index_width` gives for its domain size; and the rows counted.

    A batch's columns are hashed on a small thread pool (hashlib releases the
    GIL; no copy when the indices already have the column's width) while the
    caller reads or writes the next batch: :meth:`add` first waits for the
    previous batch's hashes, so each column's hash takes its batches in order
    and at most one batch is pending; :meth:`result` waits for the last. A
    batch's arrays must not change until the next :meth:`add` or :meth:`result`."""

    def __init__(self, schema: Schema, names: Sequence[str]):
        self.dtypes = {n: index_width(schema[n].size).newbyteorder("<") for n in names}
        self.hashes = {n: hashlib.sha256() for n in names}
        self.rows = 0
        self._pending: list[Any] = []

    def add(self, batch: Digits, rows: int | None = None) -> Digits:
        """Take a batch in (``rows``: its row count, when it has no column)."""
        self._wait()
        pool = hash_pool()
        self._pending = [pool.submit(hashed.update,
                                     np.ascontiguousarray(batch[name], dtype=self.dtypes[name]))
                         for name, hashed in self.hashes.items()]
        self.rows += len(batch[next(iter(self.hashes))]) if rows is None else rows
        return batch

    def _wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def result(self) -> PartDigest:
        self._wait()
        return PartDigest(self.rows, {n: h.hexdigest() for n, h in self.hashes.items()})


_POOL: list[ThreadPoolExecutor] = []


def hash_pool() -> ThreadPoolExecutor:
    """The digest's threads (two: the machines we run on have few cores, and the
    caller's reading or writing runs beside them), made on first use."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="privpub-digest"))
    return _POOL[0]


# A forked child has no pool threads: it makes its own pool on first use.
os.register_at_fork(after_in_child=_POOL.clear)


def digest_document(parts: Sequence[PartDigest],
                    context: Mapping[str, PartDigest] | None = None) -> dict[str, object]:
    """The metadata's ``digest`` field: the algorithm, each part file's view rows
    in part order, and each context set's rows."""
    return {"algorithm": DIGEST_ALGORITHM, "parts": [p.to_dict() for p in parts],
            "context": {k: v.to_dict() for k, v in (context or {}).items()}}


def digest(batches: Iterator[Digits], schema: Schema, names: Sequence[str]) -> PartDigest:
    """The :class:`Digest` of all the batches."""
    found = Digest(schema, names)
    for batch in batches:
        found.add(batch)
    return found.result()


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

    def digest(self, names: Sequence[str] | None = None) -> PartDigest:
        """The :class:`Digest` of the rows (in the order :meth:`batches` gives them)."""
        names = list(self.schema.names if names is None else names)
        return digest(self.batches(names), self.schema, names)

    def checked_len(self) -> int:
        """The number of rows, once it is known to be right (a file-backed view
        counts them in a pass over one column the first time)."""
        return len(self)

    def count(self, condition: Any) -> int:
        """Rows satisfying ``condition`` (a :class:`~privpub.counting.query.Condition`
        over at least one attribute), counted batch by batch."""
        return self.count_many([condition])[0]

    def count_many(self, conditions: Sequence[Any]) -> list[int]:
        """:meth:`count` of each condition, in one pass over the columns they read."""
        names = [n for n in self.schema.names if any(n in c.attributes for c in conditions)]
        totals = [0] * len(conditions)
        for batch in self.counting_batches(names):
            rows = len(batch[names[0]])
            totals = [t + c.count_digits(batch, rows) for t, c in zip(totals, conditions,
                                                                      strict=True)]
        return totals

    def counting_batches(self, attributes: Sequence[str]) -> Iterator[Digits]:
        """:meth:`batches`, for a pass that counts (a file may read them faster)."""
        return self.batches(attributes)


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


def row_groups(path: str, where: str, columns: Sequence[str], batch_rows: int,
               groups: Sequence[int] | None = None) -> Iterator[pa.Table]:
    """A Parquet file's rows (``columns``), row group by row group (``groups``, default
    all) in batches of at most ``batch_rows``: a damaged file, or a row group holding
    other than the rows its footer says, is an ArtifactError naming ``where``."""
    try:
        with pq.ParquetFile(path) as file:
            meta = file.metadata
            for group in range(meta.num_row_groups) if groups is None else groups:
                read = 0
                for batch in file.iter_batches(batch_size=batch_rows, row_groups=[group],
                                               columns=list(columns), use_threads=True):
                    read += batch.num_rows
                    yield pa.Table.from_batches([batch])
                if read != meta.row_group(group).num_rows:
                    raise ArtifactError(f"{where}: row group {group} holds {read:,} rows but "
                                        f"its footer says {meta.row_group(group).num_rows:,}")
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{where}: its rows cannot be read: "
                            f"{str(exc).splitlines()[0]}") from None


class FileView(TableView):
    """Rows in a Parquet file, or in the part files of a directory
    (:func:`part_files`), read row group by row group (bounded memory).

    ``label`` selects the rows of one set when the file also holds context
    sets (the column ``SET_COLUMN``); ``expected`` is the stored digest, one
    :class:`PartDigest` per part file (None: not checked). Every full pass
    checks, for each part, the rows read and the digest of each column it read,
    and then the total against ``rows``.
    """

    def __init__(self, schema: Schema, path: str | os.PathLike, rows: int,
                 expected: Sequence[PartDigest] | None, label: str | None = None,
                 batch_rows: int = CHUNK_ROWS):
        self.schema, self.path, self.rows = schema, os.fspath(path), rows
        self.expected = None if expected is None else list(expected)
        self.label, self.batch_rows = label, batch_rows
        self.files = part_files(self.path)
        self._rows_checked = False
        if self.expected is not None and len(self.expected) != len(self.files):
            raise ArtifactError(f"{self.path!r} has {len(self.files):,} part files but its "
                                f"metadata has a digest for {len(self.expected):,}")

    def __len__(self) -> int:
        return self.rows

    def where(self, index: int) -> str:
        """How errors name part ``index``: the file, or the part file of a directory."""
        return repr(self.files[index] if os.path.isdir(self.path) else self.path)

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        names = list(self.schema.names if attributes is None else attributes)
        columns = names + ([SET_COLUMN] if self.label is not None else [])
        read = 0
        for index, path in enumerate(self.files):
            where, seen = self.where(index), Digest(self.schema, names)
            for table in row_groups(path, where, columns, self.batch_rows):
                if self.label is not None:
                    table = table.filter(pc.equal(table.column(SET_COLUMN), self.label))
                yield seen.add(file_digits(self.schema, table, names, where), table.num_rows)
            read += seen.rows
            if self.expected is not None:  # a full pass over the part: it must be the stored one
                self.expected[index].check(seen.result(), where)
        if self.expected is not None:
            if read != self.rows:
                raise ArtifactError(f"{self.path!r}: {read:,} rows read, its metadata says "
                                    f"{self.rows:,}")
            self._rows_checked = True

    def checked_len(self) -> int:
        if self.expected is not None and not self._rows_checked:
            narrowest = min(self.schema.names,
                            key=lambda n: index_width(self.schema[n].size).itemsize)
            for _ in self.batches([narrowest]):
                pass
        return self.rows

    def codes(self) -> np.ndarray:
        parts = [codes_of(self.schema, batch) for batch in self.batches()]
        if not parts:
            shape = (0, self.schema.limbs) if self.schema.is_wide else (0,)
            return np.zeros(shape, dtype=np.uint64)
        return np.concatenate(parts)
