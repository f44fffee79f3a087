"""Attributes: a name and a finite domain, and what each of its values means.

A :class:`Categorical` lists its values, ordered (``<``, ``>`` and BETWEEN follow
the listed order) or not (text then has no order: such comparisons are
refused); an :class:`IntRange` is {lo, …, hi}, ordered by value. Either may
declare a ``missing`` label: the marker a missing cell becomes, outside the
value order (no range matches it; ``IS NULL`` and ``= <label>`` do) and never
one of the values that occur (docs/design.md, "Missing is a marker outside the value order").

Nothing is coerced silently: a value outside its domain, a NaN/None, or a
value of the wrong type raises an error naming the attribute and the value.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privpub.core.errors import DomainError, SchemaError

#: The value kinds a domain may hold; a column must hold the same kind.
KINDS = ("string", "integer", "float", "boolean")


def value_kind(value: Any) -> str | None:
    """The kind of one scalar, or None if privpub does not support it."""
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, (int, np.integer)):
        return "integer"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, str):
        return "string"
    return None


def python_scalar(value: Any) -> Any:
    """A numpy scalar as the Python scalar, so messages show 8, not np.int64(8)."""
    return value.item() if isinstance(value, np.generic) else value


def with_offset(digits: np.ndarray, offset: int) -> np.ndarray:
    """Domain indices + offset as int64 (narrow digits would overflow)."""
    return digits.astype(np.int64) + offset if offset else digits


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))



class Attribute:
    """One attribute: a name and a finite, ordered domain of values."""

    name: str
    kind: str
    dtype: str
    #: The domain's values in domain-index order (an IntRange: a range, never listed).
    values: Sequence[Any]

    @property
    def size(self) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError

    def raw_indices(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        """An integer array, an offset and an optional remap table: the domain
        index is remap[raw] when there is a table, else raw − offset (both
        checked in Rust; the array keeps its integer width)."""
        raise NotImplementedError

    def from_raw(self, raw: np.ndarray) -> Any:
        """Column values (array-like with the attribute's dtype) from raw int64 digits."""
        raise NotImplementedError

    @property
    def offset(self) -> int:
        """What a domain index is shifted by to give the raw integer (IntRange: lo)."""
        return 0

    #: Whether the domain order is the values' order in queries (ordered categoricals).
    ordered: bool = False
    #: The domain value a missing cell stands for (None: a missing cell is an error).
    missing: Any = None

    def query_values(self, digits: np.ndarray) -> Any:
        """The column a query is evaluated on: the values, or for an ordered
        attribute its domain indices (comparisons follow the declared order)."""
        return digits if self.ordered else self.from_raw(with_offset(digits, self.offset))

    def value_at(self, values: pd.Series, row: int) -> Any:
        return python_scalar(values.iloc[row])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.describe()})"


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise SchemaError(f"an attribute name must be a non-empty string, got {name!r}")
    _check_text(name, f"attribute name {name!r}")
    return name


def _check_text(text: str, what: str) -> None:
    """Text must be encodable as UTF-8 (no lone surrogates): Arrow, Parquet, CSV and
    a release's JSON metadata hold nothing else."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError(f"{what} holds {text[exc.start:exc.end]!r} at position {exc.start}, "
                          "a lone surrogate, which is not Unicode text (UTF-8 cannot encode "
                          "it); decode the source with the right codec") from None


def _check_dtype(name: str, dtype: Any) -> str:
    try:
        pd.api.types.pandas_dtype(dtype)
    except TypeError as exc:
        raise SchemaError(f"attribute {name!r}: {dtype!r} is not a pandas dtype") from exc
    return str(dtype)


def _check_integer_width(name: str, values: Sequence[int]) -> None:
    """Integer domain values must share a 64-bit type, int64 or (none negative)
    uint64: the Arrow and Parquet columns releases are written to hold no wider."""
    lo, hi = min(values), max(values)
    if lo >= -2**63 and (hi < 2**63 or (lo >= 0 and hi < 2**64)):
        return
    odd = lo if lo < -2**63 or (lo < 0 and hi < 2**64) else hi
    raise SchemaError(f"attribute {name!r}: integer value {odd} does not fit in 64 bits with "
                      f"the others (int64, or uint64 when none is negative: Arrow and Parquet, "
                      f"which releases are written to, hold no wider integers); map the values "
                      f"to text or to smaller codes")


class Categorical(Attribute):
    """An attribute whose domain is an explicit list of distinct values.

    Parameters
    ----------
    name : str
    values : sequence
        The domain, in the order that defines the domain index. All values have
        one kind (str, int, float or bool); no NaN/None, no duplicates.
    dtype : str, optional
        The pandas dtype ``Schema.decode`` gives this column (default: what
        pandas infers for ``values``; ``"category"`` decodes to a Categorical).
    ordered : bool
        Whether ``values`` are in a meaningful order: then ``<``, ``>`` and
        BETWEEN in queries follow it (``income > 'low'``), as for an ordered
        pandas categorical; otherwise they compare the values themselves.
    missing : optional
        One of ``values`` that a missing cell (NaN, None, null, an NA marker
        in a CSV file) stands for, whatever the input kind; without it a
        missing cell is an error naming the column and row.

    Examples
    --------
    >>> Categorical("sex", ["Female", "Male"]).size
    2
    >>> Categorical("income", ["low", "mid", "high"], ordered=True).ordered
    True
    """

    def __init__(self, name: str, values: Iterable[Any], dtype: str | None = None,
                 ordered: bool = False, missing: Any = None):
        self.name = _check_name(name)
        if not isinstance(ordered, bool):
            raise SchemaError(f"attribute {name!r}: ordered must be True or False, "
                              f"got {ordered!r}")
        self.ordered = ordered
        values = list(values)
        if not values:
            raise SchemaError(f"attribute {name!r} has an empty domain")
        for v in values:
            if is_missing(v):
                raise SchemaError(f"attribute {name!r}: NaN/None cannot be a domain value")
            if isinstance(v, (float, np.floating)) and math.isinf(v):
                raise SchemaError(f"attribute {name!r}: {v} cannot be a domain value (a release "
                                  "stores its schema as JSON, which has no infinities); map it "
                                  "to a finite value or a label first")
        kinds = {value_kind(v) for v in values}
        if None in kinds:
            odd = next(v for v in values if value_kind(v) is None)
            raise SchemaError(f"attribute {name!r}: unsupported value {odd!r} "
                              f"({type(odd).__name__}); supported kinds are {', '.join(KINDS)}")
        if len(kinds) > 1:
            raise SchemaError(f"attribute {name!r} mixes value kinds {sorted(kinds)}")
        self.kind = kinds.pop()
        self.values = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
        if self.kind == "string":
            for v in self.values:
                _check_text(v, f"attribute {name!r}: value {v!r}")
        if self.kind == "integer":
            _check_integer_width(self.name, self.values)
        if len(set(self.values)) != len(self.values):  # one kind: Python's equality is pandas'
            seen: set = set()
            dup = next(v for v in self.values if v in seen or seen.add(v))
            raise SchemaError(f"attribute {name!r} lists value {dup!r} more than once")
        self.dtype = _check_dtype(name, dtype if dtype is not None
                                  else str(pd.Series(self.values).dtype))
        if self.dtype == "category":
            self._decoder = None
        else:
            # Via an object array: pd.array(list, dtype='uint64') wraps ints above int64 max.
            self._decoder = pd.array(np.array(self.values, dtype=object), dtype=self.dtype)
            if list(self._decoder) != list(self.values):
                raise SchemaError(f"attribute {name!r}: dtype {self.dtype} cannot hold its values")
        if missing is not None and python_scalar(missing) not in self.values:
            raise SchemaError(f"attribute {name!r}: missing={missing!r} is not one of its "
                              "values; list it in the domain")
        self.missing = python_scalar(missing)

    @property
    def size(self) -> int:
        return len(self.values)

    def describe(self) -> str:
        shown = ", ".join(repr(v) for v in self.values[:3])
        if self.size > 4:
            shown += f", …, {self.values[-1]!r}"
        elif self.size == 4:
            shown += f", {self.values[-1]!r}"
        return f"{self.size} {'ordered ' if self.ordered else ''}values: {shown}"

    def to_dict(self) -> dict:
        out = {"type": "categorical", "name": self.name, "values": list(self.values),
               "dtype": self.dtype}
        if self.ordered:
            out["ordered"] = True
        return out if self.missing is None else out | {"missing": self.missing}

    # The cached properties below are made on first use and kept in the
    # instance's __dict__ (so they pickle with it, for Dask); __eq__ and __hash__
    # read the declared fields only, never them.
    @functools.cached_property
    def values_index(self) -> pd.Index:
        """The values as a pandas Index, made on first use (a release's schema is
        parsed on every open, and counting over a file never needs it)."""
        return pd.Index(self.values)

    @functools.cached_property
    def value_set(self) -> frozenset:
        """The values as a set, for membership tests (a query's literals are
        checked against the domain as each query is read)."""
        return frozenset(self.values)

    @functools.cached_property
    def categorical_dtype(self) -> pd.CategoricalDtype:
        """The pandas dtype of this attribute as a categorical column (made once:
        pandas checks the categories each time one is made)."""
        return pd.CategoricalDtype(self.values_index, ordered=self.ordered)

    @functools.cached_property
    def arrow_values(self) -> pa.Array:
        """The values as an Arrow array (uint64 for integers past int64, where
        Arrow would infer int64 and overflow), made on first use."""
        wide = self.kind == "integer" and max(self.values) >= 2**63
        return pa.array(list(self.values), type=pa.uint64() if wide else None)

    def raw_indices(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        if isinstance(values.dtype, pd.CategoricalDtype):
            # The column's small integer codes go to Rust as they are, with a
            # table mapping each category to its domain index (−1: outside).
            remap = self.values_index.get_indexer(values.cat.categories).astype(np.int64)
            return values.cat.codes.to_numpy(), 0, remap
        return self.values_index.get_indexer(values), 0, None

    def from_raw(self, raw: np.ndarray) -> Any:
        if self._decoder is None:
            return pd.Categorical.from_codes(raw, dtype=self.categorical_dtype)
        return self._decoder.take(raw)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Categorical) and self.name == other.name
                and self.values == other.values and self.dtype == other.dtype
                and self.ordered == other.ordered and self.missing == other.missing)

    def __hash__(self) -> int:
        return hash((self.name, self.values, self.dtype, self.ordered, self.missing))


class IntRange(Attribute):
    """An integer attribute with domain {lo, lo+1, …, hi} (both ends included).

    Examples
    --------
    >>> IntRange("age", 17, 90).size
    74
    """

    def __init__(self, name: str, lo: int, hi: int, dtype: str = "int64", missing: Any = None):
        self.name = _check_name(name)
        for label, v in (("lo", lo), ("hi", hi)):
            if value_kind(v) != "integer":
                raise SchemaError(f"attribute {name!r}: {label} must be an integer, got {v!r}")
        self.lo, self.hi = int(lo), int(hi)
        if self.lo > self.hi:
            raise SchemaError(f"attribute {name!r} has an empty domain: lo={lo} > hi={hi}")
        int64 = np.iinfo(np.int64)
        if self.lo < int64.min or self.hi > int64.max:
            raise SchemaError(f"attribute {name!r}: bounds must fit in int64, got [{lo}, {hi}]")
        self.dtype = _check_dtype(name, dtype)
        if not pd.api.types.is_integer_dtype(self.dtype):
            raise SchemaError(f"attribute {name!r}: dtype must be an integer dtype, got {dtype}")
        info = np.iinfo(pd.api.types.pandas_dtype(self.dtype).type)
        if self.lo < info.min or self.hi > info.max:
            raise SchemaError(f"attribute {name!r}: dtype {dtype} cannot hold [{lo}, {hi}]")
        self.kind = "integer"
        if missing is not None and (value_kind(missing) != "integer"
                                    or not self.lo <= missing <= self.hi):
            raise SchemaError(f"attribute {name!r}: missing={missing!r} is not in its domain "
                              f"[{lo}, {hi}]")
        self.missing = None if missing is None else int(missing)

    @property
    def size(self) -> int:
        return self.hi - self.lo + 1

    def describe(self) -> str:
        return f"integers {self.lo}..{self.hi}"

    @property
    def offset(self) -> int:
        return self.lo

    @property
    def values(self) -> range:
        """The domain's values in order, as a range (never listed: it may hold billions)."""
        return range(self.lo, self.hi + 1)

    def to_dict(self) -> dict:
        out = {"type": "int_range", "name": self.name, "lo": self.lo, "hi": self.hi,
               "dtype": self.dtype}
        return out if self.missing is None else out | {"missing": self.missing}

    def raw_indices(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        raw = values.to_numpy()
        if raw.dtype.kind not in "iu":  # nullable or object integers (no NA: checked)
            try:
                raw = values.to_numpy(dtype=np.int64)
            except OverflowError:  # a Python int past int64 is outside any IntRange
                row = next(i for i, v in enumerate(raw) if not -2**63 <= v < 2**63)
                raise DomainError(f"column {self.name!r}: value {python_scalar(raw[row])!r} at row "
                                  f"{python_scalar(values.index[row])!r} is outside the domain "
                                  f"({self.describe()})") from None
        return raw, self.lo, None

    def from_raw(self, raw: np.ndarray) -> Any:
        return raw if self.dtype == "int64" else pd.array(raw, dtype=self.dtype)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, IntRange) and self.name == other.name
                and (self.lo, self.hi, self.dtype, self.missing)
                == (other.lo, other.hi, other.dtype, other.missing))

    def __hash__(self) -> int:
        return hash((self.name, self.lo, self.hi, self.dtype, self.missing))


def attribute_from_dict(d: Any) -> Attribute:
    if not isinstance(d, dict):
        raise SchemaError(f"an attribute is a JSON object, got {d!r}")

    def key(name: str) -> Any:
        if name not in d:
            raise SchemaError(f"attribute {d.get('name', '?')!r} lacks the field {name!r}")
        return d[name]

    kind = d.get("type")
    if kind == "categorical":
        values = key("values")
        if not isinstance(values, list):
            raise SchemaError(f"attribute {d.get('name')!r}: 'values' must be a list")
        return Categorical(key("name"), values, dtype=d.get("dtype"),
                           ordered=d.get("ordered", False), missing=d.get("missing"))
    if kind == "int_range":
        return IntRange(key("name"), key("lo"), key("hi"), dtype=d.get("dtype", "int64"),
                        missing=d.get("missing"))
    raise SchemaError(f"unknown attribute type {kind!r} (expected 'categorical' or 'int_range')")
