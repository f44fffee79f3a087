"""A view's rows: over a schema, held columnar, in memory or on file.

A :class:`TableView` is what a table mechanism publishes and what the release
file holds. Its rows are tuple codes (never per-row Python objects): in memory
as a code array or per-attribute domain indices (:class:`MemoryView`), or in a
Parquet file read row group by row group
(:class:`~privpub.viewfile.fileview.FileView`), so a view larger than memory
is counted in bounded memory. Every consumer reads rows as *batches of domain
indices* (digits, :mod:`privpub.viewfile.columns`), one integer array per
attribute, through :meth:`TableView.batches`; :meth:`TableView.digest` is the
file's digest of them (:mod:`privpub.viewfile.digest`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

import privpub._core as _core
from privpub.core.errors import ParameterError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, arrow_batch, arrow_schema, codes_of, pandas_column
from privpub.viewfile.digest import PartDigest, digest
from privpub.viewfile.layout import CHUNK_ROWS

if TYPE_CHECKING:  # (conditions are passed in: the query module is not needed at run time)
    from privpub.counting.query import Condition


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
        """The Arrow schema of :meth:`to_arrow` (:func:`~privpub.viewfile.columns.arrow_schema`)."""
        return arrow_schema(self.schema)

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


#: A binary search for one end of a run of codes costs about as much as the
#: counting pass spends on this many rows (searches into 1.5M sorted codes:
#: 100-500 ns each, cache misses; the Rust pass: ~3 ns a row). Past it, the pass.
_ROWS_PER_SEARCH = 64


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
        self._sorted: bool | None = None

    def __len__(self) -> int:
        return len(self._codes) if self._codes is not None else len(self.digits()[0])

    def codes(self) -> np.ndarray:
        if self._codes is None:
            self._codes = codes_of(self.schema, dict(zip(self.schema.names, self.digits(),
                                                         strict=True)))
        return self._codes

    def digits(self) -> list[np.ndarray]:
        """Every attribute's domain indices, decoded once (Rust) and kept."""
        if self._digits is None:
            self._digits = self.schema.digits(self.codes())
        return self._digits

    def count_many(self, conditions: Sequence[Any]) -> list[int]:
        """:meth:`TableView.count_many`; on a view sorted by code, a condition on
        the leading attributes is counted by binary search (:meth:`prefix_counts`),
        any other with a truth table from the codes themselves (:meth:`table_counts`)."""
        found = self.prefix_counts(conditions)
        found |= self.table_counts(conditions, skip=found.keys())
        rest = [i for i in range(len(conditions)) if i not in found]
        if rest:
            found.update(zip(rest, super().count_many([conditions[i] for i in rest]),
                             strict=True))
        return [found[i] for i in range(len(conditions))]

    def prefix_counts(self, conditions: Sequence[Any]) -> dict[int, int]:
        """Q(V) of each condition (by position) that reads only the schema's
        leading attributes, on a view whose codes are sorted (as every table
        mechanism publishes them): the first attribute is the code's slowest
        digit, so the tuples whose leading values make the condition true are
        runs of codes, each counted by a binary search, in
        O(runs · log n) and without reading the rows. A condition with so many
        runs that their searches cost more than a pass over the rows (a long IN
        list on the leading attribute) is left to the pass."""
        names = self.schema.names
        chosen = {i: c for i, c in enumerate(conditions)
                  if c.attributes and tuple(c.attributes) == tuple(names[:len(c.attributes)])
                  and c.truth_table() is not None}
        if not chosen or not self._sorted_codes():
            return {}
        codes, size = self.codes(), self.schema.size
        out = {}
        for i, condition in chosen.items():
            table = condition.truth_table()
            # (the runs are counted before they are found: a table of many cells
            # whose runs are too many is left to the pass at the cost of one compare)
            if (len(table) + 1) * _ROWS_PER_SEARCH > len(codes) and _ROWS_PER_SEARCH * (
                    int(np.count_nonzero(table[1:] != table[:-1])) + 2) > len(codes):
                continue
            edges = np.flatnonzero(np.diff(table.astype(np.int8), prepend=0, append=0))
            stride = size // len(table)  # the codes one leading combination spans
            # Run ends at the top of the domain (code m, which uint64 may not hold)
            # count every row from their start.
            starts, ends = edges[0::2], edges[1::2]
            inside = ends < len(table)
            low = np.searchsorted(codes, starts.astype(np.uint64) * np.uint64(stride))
            high = np.full(len(ends), len(codes), dtype=np.int64)
            high[inside] = np.searchsorted(codes, ends[inside].astype(np.uint64)
                                           * np.uint64(stride))
            out[i] = int((high - low).sum())
        return out

    def table_counts(self, conditions: Sequence[Condition], skip: Collection[int] = ()
                     ) -> dict[int, int]:
        """Q(V) of each condition (by position, but those in ``skip``) that has a
        truth table, on rows held as one array of uint64 codes: a Rust pass over
        the codes on every core per condition, each code's index into the table
        taken from the code by strength-reduced division (the attributes the
        condition reads, never decoded into digit columns)."""
        codes = self._codes
        if codes is None or codes.ndim != 1 or codes.dtype != np.uint64:
            return {}
        names, radices = self.schema.names, [a.size for a in self.schema]
        out = {}
        for i, condition in enumerate(conditions):
            table = condition.truth_table() if i not in skip and condition.attributes else None
            if table is not None:  # its attributes are in schema order, first slowest
                out[i] = _core.counting.count_codes_in_table(
                    np.ascontiguousarray(codes), radices,
                    [names.index(a) for a in condition.attributes],
                    np.ascontiguousarray(table, dtype=bool))
        return out

    def _sorted_codes(self) -> bool:
        """Whether the rows are held as one array of uint64 codes in ascending
        order (checked once, in one pass; rows held as digits are not encoded
        for it)."""
        if self._sorted is None:
            codes = self._codes
            self._sorted = bool(codes is not None and codes.ndim == 1
                                and codes.dtype == np.uint64
                                and (len(codes) < 2 or bool(np.all(codes[1:] >= codes[:-1]))))
        return self._sorted

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        names = list(self.schema.names if attributes is None else attributes)
        if self._digits is not None or len(self) <= self.chunk_rows:
            # Held digits go in chunks too (slices: no copy), as what a batch is
            # turned into can be larger than its digits (a view written from
            # memory makes each chunk's Arrow columns, not the whole view's).
            digits = self.digits()
            for start in range(0, max(len(self), 1), self.chunk_rows):
                yield {n: digits[self.schema.names.index(n)][start:start + self.chunk_rows]
                       for n in names}
            return
        for start in range(0, len(self), self.chunk_rows):  # decode a chunk at a time
            digits = self.schema.digits(self.codes()[start:start + self.chunk_rows])
            yield {n: digits[self.schema.names.index(n)] for n in names}
