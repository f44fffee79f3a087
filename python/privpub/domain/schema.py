"""Schemas, attribute domains and mixed-radix tuple codes.

A :class:`Schema` is an ordered list of attributes, each with a finite
domain. The domain D is their product and ``schema.size`` is m = |D| as an
exact Python int. A tuple is identified with its *code*: the mixed-radix
number whose digits are the attributes' domain indices, first attribute most
significant, so codes sort like tuples.

Code representation:

- m ≤ 2^64: a 1-D ``numpy.uint64`` array, one code per row.
- m > 2^64: a 2-D ``numpy.uint64`` array of shape (n, L) with L = ``schema.limbs``
  64-bit words per code, most significant word first (rows compare
  lexicographically like the integers). :meth:`Schema.codes_to_ints` and
  :meth:`Schema.ints_to_codes` convert to and from Python ints.

Nothing is coerced silently: a value outside its domain, a NaN/None, or a
value of the wrong type raises an error naming the column and the value.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import privpub._core as _core
from privpub.core.errors import CodeError, DomainError, PrivacyWarning, SchemaError
from privpub.core.inputs import TableFile, TableLike, column_names, tabular
from privpub.core.limbs import ints_from_limbs, limbs_from_ints
from privpub.domain import schemafile
from privpub.domain.attributes import (
    Attribute,
    Categorical,
    attribute_from_dict,
    value_kind,
    with_offset,
)
from privpub.domain.columns import RawColumn
from privpub.domain.inference import infer_attributes

#: Largest projection of D that :meth:`Schema.projection` builds: at least the
#: largest truth table the domain count asks for (privpub.counting.domaincount.TABLE_LIMIT,
#: checked by tests/counting/test_domaincount.py).
PROJECTION_BUDGET = 1 << 24


class Schema:
    """An ordered list of attributes; the domain D is their product.

    Examples
    --------
    >>> import pandas as pd
    >>> from privpub import Categorical, IntRange, Schema
    >>> s = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99)])
    >>> s.size
    200
    >>> codes = s.encode(pd.DataFrame({"sex": ["M", "F"], "age": [30, 7]}))
    >>> codes.tolist()
    [130, 7]
    >>> s.decode(codes)["sex"].tolist()
    ['M', 'F']
    """

    def __init__(self, attributes: Sequence[Attribute], derived: Sequence[str] = ()):
        attributes = list(attributes)
        if not attributes:
            raise SchemaError("a schema needs at least one attribute")
        seen: set[str] = set()
        for a in attributes:
            if not isinstance(a, Attribute):
                raise SchemaError(f"schema entries must be Categorical or IntRange, got {a!r}")
            if a.name in seen:
                raise SchemaError(f"duplicate attribute name {a.name!r}")
            seen.add(a.name)
        self.attributes: tuple[Attribute, ...] = tuple(attributes)
        # By name, once: a query's checks look attributes up by name many times.
        self._by_name: dict[str, Attribute] = {a.name: a for a in attributes}
        self._names: tuple[str, ...] = tuple(self._by_name)
        self.radices: tuple[int, ...] = tuple(a.size for a in attributes)
        if any(r >= 2**64 for r in self.radices):
            raise SchemaError("an attribute's domain must have fewer than 2^64 values")
        #: m = |D|, exact.
        self.size: int = math.prod(self.radices)
        #: 64-bit words per code: 1 when m ≤ 2^64.
        self.limbs: int = _core.codes.limbs_for(list(self.radices))
        if isinstance(derived, str) or not all(isinstance(d, str) for d in derived):
            raise SchemaError(f"derived must be a list of attribute names, got {derived!r}")
        unknown = [d for d in derived if d not in seen]
        if unknown:
            raise SchemaError(f"derived names attributes not in the schema: {unknown}")
        #: Attributes whose domain was derived from the data (see from_frame); a
        #: guarantee says so. Not part of equality: the domains are what they are.
        self.derived: tuple[str, ...] = tuple(a.name for a in attributes if a.name in derived)

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_frame(cls, data: TableLike, columns: Sequence[str] | None = None,
                   missing: Any = None, exact_domain: Sequence[str] = ()) -> Schema:
        """Infer a schema of active domains: each column's distinct values, sorted.

        ``data`` is any table privpub accepts (pandas, Arrow, polars, a path).
        Every column becomes a :class:`Categorical` holding the values that
        occur (so Adult's age has 72 values, not 74), remembering the column's
        dtype for :meth:`decode`. A categorical (or Arrow dictionary) column is
        a declared domain: all its categories are kept, and an ordered one
        keeps its order (``ordered=True``), so comparisons follow it.
        Mixed types raise, and so do missing cells (NaN, None, null) unless
        ``missing`` declares what they stand for: one label for every column
        that has missing cells, or ``{column: label}`` (those columns always get
        it); the label joins the column's domain as its last value and is the
        attribute's ``missing`` value.

        A domain read off the values reveals which values occur, so the other
        columns are listed in ``schema.derived`` (and in every guarantee) and a
        :class:`~privpub.PrivacyWarning` says so. A column of non-integer
        numbers, or one where most records hold a value of their own (more than
        ``NEAR_UNIQUE`` distinct values, in more than half the rows: an
        identifier), is refused as such a domain, with how to bin it; name it in
        ``exact_domain`` to publish its values as they are.
        """
        # A file is read in batches (twice over for a CSV file: its types, then its values).
        table = TableFile(data) if isinstance(data, (str, os.PathLike)) else \
            data if isinstance(data, TableFile) else tabular(data)
        names = column_names(table) if columns is None else list(columns)
        labels = missing if isinstance(missing, dict) else dict.fromkeys(names, missing)
        unknown = [n for n in labels if n not in names]
        if unknown:
            raise SchemaError(f"missing= names columns not in the table: {unknown}")
        if isinstance(exact_domain, str) or [n for n in exact_domain if n not in names]:
            raise SchemaError(f"exact_domain= lists columns of the table, got {exact_domain!r} "
                              f"(columns: {', '.join(map(str, names))})")
        attributes = infer_attributes(table, names, labels, isinstance(missing, dict),
                                      exact_domain)
        # A categorical/dictionary column declared its domain; the others did not.
        derived = [a.name for a in attributes if a.dtype != "category"]
        if derived:
            warnings.warn(f"the domains of {', '.join(derived)} were derived from the data "
                          "(the values that occur), which reveals them; declare public domains "
                          "for a release", PrivacyWarning, stacklevel=2)
        return cls(attributes, derived)

    @classmethod
    def from_dict(cls, document: dict) -> Schema:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(document, dict) or not isinstance(document.get("attributes"), list):
            raise SchemaError("a schema dict needs an 'attributes' list")
        derived = document.get("derived_from_data", [])
        if not isinstance(derived, list):
            raise SchemaError(f"'derived_from_data' must be a list of names, got {derived!r}")
        return cls([attribute_from_dict(a) for a in document["attributes"]], derived)

    @classmethod
    def read(cls, path: str | os.PathLike) -> Schema:
        """The schema in a JSON or YAML file (by its suffix; JSON otherwise), as
        :meth:`write` writes it: how a CSV keeps its declared order and missing
        labels (``--schema`` on the command line). YAML's scalars are typed by
        field and dtype, never by YAML 1.1's guesses (:mod:`privpub.domain.schemafile`).

        Examples
        --------
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "schema.yaml")
        >>> Schema([Categorical("band", ["low", "mid", "high"], ordered=True)]).write(path)
        >>> Schema.read(path)["band"].ordered
        True
        """
        document = schemafile.read_document(path)
        try:
            return cls.from_dict(document)
        except SchemaError as exc:
            raise SchemaError(f"schema file {os.fspath(path)!r}: {exc}") from None

    def write(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """This schema as a JSON or YAML file (by the suffix), whole or not at all;
        an existing file is refused unless ``overwrite``."""
        schemafile.write_document(self.to_dict(), path, overwrite=overwrite)

    def to_dict(self) -> dict:
        """A JSON-ready description (for artifact metadata)."""
        out: dict[str, Any] = {"attributes": [a.to_dict() for a in self.attributes]}
        if self.derived:
            out["derived_from_data"] = list(self.derived)
        return out

    # ---- access -----------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def is_wide(self) -> bool:
        """True when codes need more than one 64-bit word (m > 2^64)."""
        return self.limbs > 1

    def __getitem__(self, name: str) -> Attribute:
        found = self._by_name.get(name) if isinstance(name, str) else None
        if found is not None:
            return found
        raise SchemaError(f"no attribute {name!r} in schema (attributes: {', '.join(self.names)})")

    def __len__(self) -> int:
        return len(self.attributes)

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.attributes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self.attributes == other.attributes

    def __hash__(self) -> int:
        return hash(self.attributes)

    def __repr__(self) -> str:
        lines = [f"Schema({len(self)} attributes, m = {self.size:,})"]
        width = max(len(n) for n in self.names)
        lines += [f"  {a.name:<{width}}  {type(a).__name__}({a.describe()})" for a in self]
        return "\n".join(lines)

    def csv_types(self) -> dict[str, pa.DataType]:
        """The types a CSV path's columns are read with when this schema encodes it:
        text domains as text, so ``02134`` is the value ``'02134'``, not 2134; integer
        domains past int64 as uint64, not as doubles that lose the last digits. The
        other columns are typed by the reader, and a mismatch is named by the encoder."""
        out = {a.name: pa.string() for a in self if a.kind == "string"}
        return out | {a.name: pa.uint64() for a in self if a.kind == "integer"
                      and isinstance(a, Categorical) and max(a.values) >= 2**63}

    # ---- projections ------------------------------------------------------------
    def projection(self, attributes: Sequence[str], query: bool = False) -> pd.DataFrame:
        """Every combination of the attributes' domain values (first attribute
        slowest): the projection Π_attributes D, with the schema's dtypes, or
        with ``query=True`` the columns queries are evaluated on (ordered
        attributes as their domain indices)."""
        attrs = [self[a] for a in attributes]
        radices = [a.size for a in attrs]
        size = math.prod(radices)
        if size > PROJECTION_BUDGET:
            raise SchemaError(f"the projection over {list(attributes)} has {size:,} tuples, "
                              f"more than the budget of {PROJECTION_BUDGET:,}")
        digits = np.indices(radices, dtype=np.int64).reshape(len(attrs), -1) if attrs else []
        return self.frame_of(attrs, digits, query=query, rows=size)

    def index_of(self, attribute: str, value: Any) -> int | None:
        """The domain index of ``value`` in ``attribute`` (None: not in its domain),
        without listing the domain (an integer range may hold billions of values)."""
        attr = self[attribute]
        if isinstance(attr, Categorical):
            return attr.values.index(value) if value in attr.values else None
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
                and 0 <= value - attr.offset < attr.size:
            return int(value - attr.offset)
        return None

    def frame_of(self, attributes: Sequence[Attribute], digits: Sequence[np.ndarray],
                 query: bool = False, rows: int | None = None) -> pd.DataFrame:
        """A frame from the attributes' domain indices: their values (or, with
        ``query=True``, the columns queries are evaluated on)."""
        if not attributes:
            return pd.DataFrame({"_": np.zeros(rows or 0, dtype=np.int8)})
        def column(a: Attribute, d: np.ndarray) -> Any:
            if query:
                return a.query_values(d)
            return pd.Series(a.from_raw(with_offset(d, a.offset)), dtype=a.dtype, copy=False)

        return pd.DataFrame({a.name: column(a, d) for a, d in zip(attributes, digits,
                                                                   strict=True)}, copy=False)

    # ---- codes ------------------------------------------------------------------
    def encode(self, data: TableLike) -> np.ndarray:
        """Tuple codes of the rows of ``data`` (columns not in the schema are ignored).

        ``data`` is any table privpub accepts: pandas, Arrow, polars, or a
        path to a Parquet or CSV file; categorical and dictionary columns go to
        codes through their category codes, without per-row Python objects.
        Returns a uint64 array of shape (n,) when m ≤ 2^64, else (n, limbs).
        Raises MissingValueError, DataTypeError or DomainError naming the
        column, row and value at fault. A CSV path is read with the column types
        of :meth:`csv_types`.
        """
        if isinstance(data, (str, os.PathLike)):
            data = TableFile(data, column_types=self.csv_types())
        if isinstance(data, TableFile):
            return self._encode_batches(data)
        return self._encode_table(tabular(data, column_types=self.csv_types()))

    def _encode_batches(self, table: TableFile) -> np.ndarray:
        """:meth:`encode` of a file read batch by batch: the codes are the only array
        as long as the file (a bad value is named by its row in the file; the count
        of such rows in an error is its batch's)."""
        codes = np.empty((table.num_rows, self.limbs) if self.is_wide else table.num_rows,
                         dtype=np.uint64)
        at = 0
        for batch in table.batches(list(self.names)):
            rows = batch.num_rows
            try:
                codes[at:at + rows] = self._encode_table(batch, first_row=at)
            except DomainError as exc:  # (a MissingValueError too)
                raise type(exc)(f"{exc} (counted in rows {at:,}–{at + rows - 1:,}, the batch "
                                "of the file it was found in)") from None
            at += rows
        return codes

    def _encode_table(self, table: pd.DataFrame | pa.Table, first_row: int = 0) -> np.ndarray:
        """:meth:`encode` of a table in memory, its rows numbered from ``first_row``."""
        columns = [RawColumn.of(table, a, first_row) for a in self.attributes]
        # Aligned too: a frame deserialised from a buffer (a Dask partition) may not be.
        raws = [np.require(c.raw, requirements=["C", "A"]) for c in columns]
        radices = list(self.radices)
        offsets = [c.offset for c in columns]
        remaps = [c.remap for c in columns]
        try:
            if self.is_wide:
                return _core.codes.encode_wide(raws, offsets, remaps, radices, self.limbs)
            return _core.codes.encode_u64(raws, offsets, remaps, radices)
        except DomainError as exc:
            j, row = exc.attribute_index, exc.row
            attr, column = self.attributes[j], columns[j]
            # (error path only; object arithmetic is exact for uint64 too)
            raw, remap = raws[j], remaps[j]
            if remap is None:
                index = raw.astype(object) - offsets[j]
            else:  # a value past either end of the lookup table is outside, not wrapped
                inside = (raw >= 0) & (raw < len(remap))
                index = np.full(len(raw), -1, dtype=np.int64)
                index[inside] = remap[raw[inside]]
            outside = int(((index < 0) | (index >= attr.size)).sum())
            raise DomainError(
                f"column {attr.name!r}: value {column.value_at(row)!r} at row "
                f"{column.row_label(row)!r} is outside the domain ({attr.describe()}); "
                f"{outside} row(s) of this column are outside"
            ) from None

    def decode(self, codes: np.ndarray | Sequence[int]) -> pd.DataFrame:
        """The DataFrame whose rows have these codes, with the schema's values and dtypes."""
        # Explicit Series dtypes (in frame_of): pandas >= 3 would infer 'str' for object.
        return self.frame_of(self.attributes, self.digits(codes), rows=len(codes))

    def digits(self, codes: np.ndarray) -> list[np.ndarray]:
        """Domain indices of each attribute: k arrays of n integers, each in the
        narrowest signed type that holds its attribute's indices (Rust)."""
        return self._decode(codes, [0] * len(self))

    def _decode(self, codes: np.ndarray | Sequence[int], offsets: list[int]) -> list[np.ndarray]:
        """Each attribute's digit + offset (Rust); a code ≥ m is named in the error."""
        codes = self._check_codes(codes)
        radices = list(self.radices)
        try:
            if self.is_wide:
                return _core.codes.decode_wide(codes, offsets, radices)
            return _core.codes.decode_u64(codes, offsets, radices)
        except CodeError as exc:
            if exc.row is None:
                raise
            value = self.codes_to_ints(codes[exc.row:exc.row + 1])[0]
            raise CodeError(f"code {value} at row {exc.row} is not below the domain size "
                            f"m = {self.size:,}") from None

    def _check_codes(self, codes: np.ndarray | Sequence[int]) -> np.ndarray:
        if isinstance(codes, (int, np.generic)) or (isinstance(codes, np.ndarray)
                                                    and codes.ndim == 0):
            raise CodeError(f"codes must be a sequence or array of codes, got the scalar {codes!r}")
        if not isinstance(codes, np.ndarray):
            return self.ints_to_codes(codes)
        if codes.dtype.kind not in "iu":
            raise CodeError(f"codes must be an integer array, got dtype {codes.dtype}")
        expected = (codes.shape[0], self.limbs) if self.is_wide else (len(codes),)
        if codes.shape != expected or (not self.is_wide and codes.ndim != 1):
            shape = f"(n, {self.limbs})" if self.is_wide else "(n,)"
            raise CodeError(f"codes for this schema must have shape {shape}, got {codes.shape}")
        if codes.dtype.kind == "i" and codes.size and codes.min() < 0:
            raise CodeError(f"codes must be non-negative, got {codes.min()}")
        return np.ascontiguousarray(codes, dtype=np.uint64)

    def codes_to_ints(self, codes: np.ndarray) -> list[int]:
        """Codes as exact Python ints (for either representation)."""
        return ints_from_limbs(self._check_codes(codes))

    def ints_to_codes(self, ints: Iterable[int]) -> np.ndarray:
        """The code array for Python ints in [0, m); raises CodeError otherwise."""
        ints = list(ints)
        for i, v in enumerate(ints):
            if value_kind(v) != "integer" or not 0 <= v < self.size:
                raise CodeError(f"code #{i} = {v!r} is not an integer in [0, m = {self.size})")
        rows = limbs_from_ints(ints, self.limbs)
        return rows if self.is_wide else rows.reshape(len(ints))
