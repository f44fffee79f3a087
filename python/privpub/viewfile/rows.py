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

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privpub.core.errors import ParameterError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, arrow_batch, arrow_schema, codes_of, pandas_column
from privpub.viewfile.digest import PartDigest, digest
from privpub.viewfile.layout import CHUNK_ROWS


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
