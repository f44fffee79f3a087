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
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from privpub import _core
from privpub.core.errors import (
    CodeError,
    DataTypeError,
    DomainError,
    MissingValueError,
    PrivacyWarning,
    SchemaError,
)
from privpub.core.inputs import TableLike, column_names, tabular
from privpub.core.limbs import ints_from_limbs, limbs_from_ints

#: The value kinds a domain may hold; a column must hold the same kind.
KINDS = ("string", "integer", "float", "boolean")
#: Integer domains with values in [0, LOOKUP_LIMIT) are mapped by a lookup table.
LOOKUP_LIMIT = 1 << 16
#: Largest projection of D that :meth:`Schema.projection` builds: at least the
#: largest truth table the domain count asks for (privpub.counting.domaincount.TABLE_LIMIT,
#: checked by tests/counting/test_domaincount.py), which cannot be imported here without the
#: schema loading the counting engine.
PROJECTION_BUDGET = 1 << 24


def _value_kind(value: Any) -> str | None:
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


def _py(value: Any) -> Any:
    """A numpy scalar as the Python scalar, so messages show 8, not np.int64(8)."""
    return value.item() if isinstance(value, np.generic) else value


def with_offset(digits: np.ndarray, offset: int) -> np.ndarray:
    """Domain indices + offset as int64 (narrow digits would overflow)."""
    return digits.astype(np.int64) + offset if offset else digits


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def _column_kind(name: str, values: pd.Series | pd.Index) -> str:
    """The kind of a column's values, or a DataTypeError naming the first odd value."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _column_kind(name, dtype.categories)
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_string_dtype(dtype) and dtype != np.dtype(object):
        return "string"
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype) \
            or isinstance(dtype, pd.PeriodDtype):
        raise _temporal_error(name, f"dates or times ({dtype})")
    if dtype == np.dtype(object):
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        if inferred in ("date", "datetime", "datetime64", "time", "timedelta", "timedelta64",
                        "period"):
            raise _temporal_error(name, f"{inferred} values")
        kind = {"string": "string", "integer": "integer", "floating": "float",
                "boolean": "boolean"}.get(inferred)
        if kind is not None:
            return kind
        if inferred == "empty":
            return "empty"
        # Mixed or unsupported: name the first value whose kind differs from the first one.
        kinds = [(v, _value_kind(v)) for v in values if not _is_missing(v)]
        first = kinds[0][1] if kinds else None
        odd = next((v for v, k in kinds if k != first or k is None), kinds[0][0])
        raise DataTypeError(
            f"column {name!r} mixes value types or holds an unsupported type: "
            f"{odd!r} ({type(odd).__name__}); supported kinds are {', '.join(KINDS)}"
        )
    raise DataTypeError(f"column {name!r} has unsupported dtype {dtype}; "
                        f"supported kinds are {', '.join(KINDS)}")


#: What a missing-cell error suggests (the same for every input kind).
MISSING_FIX = ("privpub does not drop or impute records: clean them, or declare a missing "
               "category (Categorical(..., missing=LABEL), Schema.from_frame(..., "
               "missing=LABEL), --missing LABEL on the command line)")


def _missing_error(name: str, total: int, first: Any) -> MissingValueError:
    return MissingValueError(f"column {name!r} has {total} missing value(s) (NaN/None/null), "
                             f"the first at row {first!r}; {MISSING_FIX}")


def _collision_error(name: str, label: Any, count: int) -> MissingValueError:
    """A missing label that is also a real value would merge the two silently."""
    return MissingValueError(
        f"column {name!r}: the missing label {label!r} is also the value of {count:,} cell(s) "
        "that are not missing; a missing cell would be counted as that value. Choose a label "
        "that does not occur in the column (text: e.g. '<missing>'; numbers: one outside the "
        "values, with an IntRange widened to hold it)")


def _check_no_missing(name: str, values: pd.Series) -> None:
    missing = values.isna().to_numpy()
    if missing.any():
        raise _missing_error(name, int(missing.sum()), _py(values.index[int(np.argmax(missing))]))


def _fill_missing(attr: Attribute, values: pd.Series) -> pd.Series:
    """A pandas column with its missing cells replaced by the attribute's declared
    missing value (the column as it is when there is none or no cell is missing)."""
    if attr.missing is None or not values.hasnans:
        return values
    collisions = int((values == attr.missing).sum())
    if collisions:
        raise _collision_error(attr.name, attr.missing, collisions)
    if isinstance(values.dtype, pd.CategoricalDtype):
        if attr.missing not in values.cat.categories:
            values = values.cat.add_categories([attr.missing])
    elif values.dtype != object and _column_kind(attr.name, values) != _value_kind(attr.missing):
        # A label of another kind (text in a float column, an all-empty CSV column as
        # pandas reads it): filled as objects; a mix of kinds is then named by _check_kind.
        values = values.astype(object)
    return values.fillna(attr.missing)


def _fill_arrow_missing(attr: Attribute, array: pa.Array) -> pa.Array:
    """``_fill_missing`` for an Arrow column (nulls, and NaN in a float column)."""
    if attr.missing is None:
        return array
    value_type = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if array.null_count == 0 and not pa.types.is_floating(value_type):
        return array
    missing = pc.is_null(array, nan_is_null=True)
    if not pc.any(missing).as_py():
        return array
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    kind = _arrow_kind(attr.name, array.type)
    wide = attr.kind == "integer" and attr.missing >= 2**63
    label = pa.array([attr.missing], type=pa.uint64() if wide else None)
    if kind == "empty":  # every cell is missing (an all-empty CSV column: type null)
        return label.take(pa.array(np.zeros(len(array), dtype=np.int64)))
    if kind != attr.kind:  # as pandas' fillna then finds (a DataTypeError, not a cast error)
        raise DataTypeError(f"column {attr.name!r} holds {kind} values but attribute "
                            f"{attr.name!r} has a {attr.kind} domain ({attr.describe()}); "
                            "convert the column explicitly")
    collisions = _arrow_count_of(array, attr.missing)
    if collisions:
        raise _collision_error(attr.name, attr.missing, collisions)
    if kind == "integer" and array.type != label.type:
        try:  # a narrow or unsigned column widened to hold the label
            array = array.cast(label.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise DataTypeError(f"column {attr.name!r} holds {array.type} values, which cannot "
                                f"hold its missing value {attr.missing!r}; convert the column "
                                "explicitly") from None
    return pc.if_else(missing, label.cast(array.type)[0], array)


def _arrow_count_of(array: pa.Array, value: Any) -> int:
    """How many cells of an Arrow column (of the value's kind) equal ``value``."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    scalar = pa.scalar(value, type=pa.uint64() if isinstance(value, int) and value >= 2**63
                       else None)
    if scalar.type != array.type:
        try:
            scalar = scalar.cast(array.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return 0  # the column cannot hold the value: no cell equals it
    return pc.sum(pc.equal(array, scalar)).as_py() or 0


def _temporal_error(name: str, what: str) -> DataTypeError:
    """Dates and times have no domain of their own: say how to give them one."""
    return DataTypeError(
        f"column {name!r} holds {what}, which have no declared domain; convert it to one, "
        f"e.g. df[{name!r}].dt.year (an IntRange of years), df[{name!r}].dt.strftime('%Y-%m') "
        "(a Categorical of months) or a binning you choose (pd.cut)")


def _check_kind(attr: Attribute, values: pd.Series) -> None:
    kind = _column_kind(attr.name, values)
    if kind not in (attr.kind, "empty"):
        example = (f" (e.g. {attr._value_at(values, 0)!r} at row {_py(values.index[0])!r})"
                   if len(values) else "")
        raise DataTypeError(
            f"column {attr.name!r} holds {kind} values{example} but attribute {attr.name!r} has a "
            f"{attr.kind} domain ({attr.describe()}); convert the column explicitly"
        )


class Attribute:
    """One attribute: a name and a finite, ordered domain of values."""

    name: str
    kind: str
    dtype: str

    @property
    def size(self) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError

    def _raw(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        """An integer array, an offset and an optional remap table: the domain
        index is remap[raw] when there is a table, else raw − offset (both
        checked in Rust; the array keeps its integer width)."""
        raise NotImplementedError

    def _from_raw(self, raw: np.ndarray) -> Any:
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

    def _query_values(self, digits: np.ndarray) -> Any:
        """The column a query is evaluated on: the values, or for an ordered
        attribute its domain indices (comparisons follow the declared order)."""
        return digits if self.ordered else self._from_raw(with_offset(digits, self.offset))

    def _value_at(self, values: pd.Series, row: int) -> Any:
        return _py(values.iloc[row])

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
            if _is_missing(v):
                raise SchemaError(f"attribute {name!r}: NaN/None cannot be a domain value")
            if isinstance(v, (float, np.floating)) and math.isinf(v):
                raise SchemaError(f"attribute {name!r}: {v} cannot be a domain value (a release "
                                  "stores its schema as JSON, which has no infinities); map it "
                                  "to a finite value or a label first")
        kinds = {_value_kind(v) for v in values}
        if None in kinds:
            odd = next(v for v in values if _value_kind(v) is None)
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
        if missing is not None and _py(missing) not in self.values:
            raise SchemaError(f"attribute {name!r}: missing={missing!r} is not one of its "
                              "values; list it in the domain")
        self.missing = _py(missing)

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

    @property
    def _index(self) -> pd.Index:
        """The values as a pandas Index, made on first use (a release's schema is
        parsed on every open, and counting over a file never needs it)."""
        cached = self.__dict__.get("_values_index")
        if cached is None:
            cached = self.__dict__["_values_index"] = pd.Index(self.values)
        return cached

    @property
    def categorical_dtype(self) -> pd.CategoricalDtype:
        """The pandas dtype of this attribute as a categorical column (made once:
        pandas checks the categories each time one is made)."""
        cached = self.__dict__.get("_categorical_dtype")
        if cached is None:
            cached = self.__dict__["_categorical_dtype"] = pd.CategoricalDtype(
                self._index, ordered=self.ordered)
        return cached

    def _raw(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        if isinstance(values.dtype, pd.CategoricalDtype):
            # The column's small integer codes go to Rust as they are, with a
            # table mapping each category to its domain index (−1: outside).
            remap = self._index.get_indexer(values.cat.categories).astype(np.int64)
            return values.cat.codes.to_numpy(), 0, remap
        return self._index.get_indexer(values), 0, None

    def _from_raw(self, raw: np.ndarray) -> Any:
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
            if _value_kind(v) != "integer":
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
        if missing is not None and (_value_kind(missing) != "integer"
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

    def to_dict(self) -> dict:
        out = {"type": "int_range", "name": self.name, "lo": self.lo, "hi": self.hi,
               "dtype": self.dtype}
        return out if self.missing is None else out | {"missing": self.missing}

    def _raw(self, values: pd.Series) -> tuple[np.ndarray, int, np.ndarray | None]:
        raw = values.to_numpy()
        if raw.dtype.kind not in "iu":  # nullable or object integers (no NA: checked)
            try:
                raw = values.to_numpy(dtype=np.int64)
            except OverflowError:  # a Python int past int64 is outside any IntRange
                row = next(i for i, v in enumerate(raw) if not -2**63 <= v < 2**63)
                raise DomainError(f"column {self.name!r}: value {_py(raw[row])!r} at row "
                                  f"{_py(values.index[row])!r} is outside the domain "
                                  f"({self.describe()})") from None
        return raw, self.lo, None

    def _from_raw(self, raw: np.ndarray) -> Any:
        return raw if self.dtype == "int64" else pd.array(raw, dtype=self.dtype)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, IntRange) and self.name == other.name
                and (self.lo, self.hi, self.dtype, self.missing)
                == (other.lo, other.hi, other.dtype, other.missing))

    def __hash__(self) -> int:
        return hash((self.name, self.lo, self.hi, self.dtype, self.missing))


def _attribute_from_dict(d: Any) -> Attribute:
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


class Schema:
    """An ordered list of attributes; the domain D is their product.

    Examples
    --------
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
        self.radices: tuple[int, ...] = tuple(a.size for a in attributes)
        if any(r >= 2**64 for r in self.radices):
            raise SchemaError("an attribute's domain must have fewer than 2^64 values")
        #: m = |D|, exact.
        self.size: int = math.prod(self.radices)
        #: 64-bit words per code: 1 when m ≤ 2^64.
        self.limbs: int = _core.limbs_for(list(self.radices))
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
        table = tabular(data)
        names = column_names(table) if columns is None else list(columns)
        labels = missing if isinstance(missing, dict) else dict.fromkeys(names, missing)
        unknown = [n for n in labels if n not in names]
        if unknown:
            raise SchemaError(f"missing= names columns not in the table: {unknown}")
        if isinstance(exact_domain, str) or [n for n in exact_domain if n not in names]:
            raise SchemaError(f"exact_domain= lists columns of the table, got {exact_domain!r} "
                              f"(columns: {', '.join(map(str, names))})")
        declared = isinstance(missing, dict)
        if isinstance(table, pd.DataFrame):
            attributes = [_infer_pandas(name, _column(table, name), labels.get(name), declared)
                          for name in names]
        else:
            attributes = [_infer_arrow(name, _arrow_column(table, name), labels.get(name),
                                       declared) for name in names]
        rows = len(table) if isinstance(table, pd.DataFrame) else table.num_rows
        for attr in attributes:
            if attr.name not in exact_domain and attr.dtype != "category":
                _check_inferred_domain(attr, rows)
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
        return cls([_attribute_from_dict(a) for a in document["attributes"]], derived)

    def to_dict(self) -> dict:
        """A JSON-ready description (for artifact metadata)."""
        out: dict[str, Any] = {"attributes": [a.to_dict() for a in self.attributes]}
        if self.derived:
            out["derived_from_data"] = list(self.derived)
        return out

    # ---- access -----------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def is_wide(self) -> bool:
        """True when codes need more than one 64-bit word (m > 2^64)."""
        return self.limbs > 1

    def __getitem__(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
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
                return a._query_values(d)
            return pd.Series(a._from_raw(with_offset(d, a.offset)), dtype=a.dtype, copy=False)

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
        table = tabular(data, column_types=self.csv_types())
        columns = [RawColumn.of(table, a) for a in self.attributes]
        # Aligned too: a frame deserialised from a buffer (a Dask partition) may not be.
        raws = [np.require(c.raw, requirements=["C", "A"]) for c in columns]
        radices = list(self.radices)
        offsets = [c.offset for c in columns]
        remaps = [c.remap for c in columns]
        try:
            if self.is_wide:
                return _core.encode_wide(raws, offsets, remaps, radices, self.limbs)
            return _core.encode_u64(raws, offsets, remaps, radices)
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
                return _core.decode_wide(codes, offsets, radices)
            return _core.decode_u64(codes, offsets, radices)
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
            if _value_kind(v) != "integer" or not 0 <= v < self.size:
                raise CodeError(f"code #{i} = {v!r} is not an integer in [0, m = {self.size})")
        rows = limbs_from_ints(ints, self.limbs)
        return rows if self.is_wide else rows.reshape(len(ints))


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    if name not in df.columns:
        columns = ", ".join(map(str, df.columns))
        raise SchemaError(f"the frame has no column {name!r} (columns: {columns})")
    column = df[name]
    if isinstance(column, pd.DataFrame):
        raise SchemaError(f"the frame has more than one column named {name!r}")
    return column


# ---- inferring domains ----------------------------------------------------------------------

#: An inferred domain of more values than this, held by more than half the rows,
#: is refused as an identifier's (Schema.from_frame).
NEAR_UNIQUE = 100


def _check_inferred_domain(attr: Categorical, rows: int) -> None:
    """Values read off the data are a domain only when a release may show them
    all and a query can name them: not non-integer numbers (every exact float
    would be published, and ``wt82 = 68.946`` would name none of them), not an
    identifier (each record's own value, published for all to see)."""
    fix = (f"bin it into an ordered categorical first (pd.cut(df[{attr.name!r}], bins=[...], "
           f"labels=[...]): privpub keeps the order), drop it, or declare its domain; to "
           f"publish its values as they are, pass exact_domain=[{attr.name!r}] (command line: "
           f"--exact-domain {attr.name})")
    if attr.kind == "float":
        fractional = [v for v in attr.values if not float(v).is_integer()]
        if fractional:
            raise SchemaError(f"column {attr.name!r} holds {len(fractional):,} distinct "
                              f"non-integer numbers (e.g. {fractional[0]!r}), which are no "
                              f"domain: a release would publish each exact value and a query "
                              f"would have to name it to the last digit; {fix}")
    if attr.size > NEAR_UNIQUE and 2 * attr.size > rows:
        raise SchemaError(f"column {attr.name!r} holds {attr.size:,} distinct values in "
                          f"{rows:,} rows: most records have a value of their own (an "
                          f"identifier?), which a release would publish for all to see; {fix}")



def _with_missing(name: str, kind: str, values: list, label: Any, dtype: str, ordered: bool,
                  collisions: int = 0) -> Categorical:
    """The inferred attribute, its declared missing label appended to the domain
    (``collisions``: the cells that hold the label while others are missing)."""
    if label is None:
        return Categorical(name, values, dtype=dtype, ordered=ordered)
    if _value_kind(label) != kind:
        raise SchemaError(f"column {name!r} holds {kind} values; its missing label {label!r} "
                          f"must be one too")
    if collisions:
        raise _collision_error(name, label, collisions)
    if label not in values:  # (a label that occurs where no cell is missing: a release read back)
        values = [*values, label]
    return Categorical(name, values, dtype=dtype, ordered=ordered, missing=label)


def _infer_pandas(name: str, values: pd.Series, label: Any = None,
                  declared: bool = False) -> Categorical:
    collisions = 0
    if label is None or not values.hasnans:
        _check_no_missing(name, values)
        label = label if declared else None
    else:
        collisions = int((values == label).sum())
    present = values.dropna()
    kind = _column_kind(name, present)
    if kind == "empty":
        raise SchemaError(f"column {name!r} is empty: cannot infer a domain")
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = list(dtype.categories)
        return _with_missing(name, kind, categories if dtype.ordered else sorted(categories),
                             label, "category", bool(dtype.ordered), collisions)
    if label is not None and pd.api.types.is_integer_dtype(dtype):
        dtype = np.dtype(np.int64)  # a nullable Int64 column: its values, then the label
    return _with_missing(name, kind, sorted(pd.unique(present)), label, str(dtype), False,
                         collisions)


def _infer_arrow(name: str, array: pa.Array, label: Any = None,
                 declared: bool = False) -> Categorical:
    kind = _arrow_kind(name, array.type)
    collisions = 0
    if label is None or pc.sum(pc.is_null(array, nan_is_null=True)).as_py() == 0:
        _check_arrow_missing(name, array)
        label = label if declared else None
    elif _value_kind(label) == kind:
        collisions = _arrow_count_of(array, label)
    if kind == "empty" or len(array) == 0:
        raise SchemaError(f"column {name!r} is empty: cannot infer a domain")
    if pa.types.is_dictionary(array.type):
        categories = array.dictionary.to_pylist()
        ordered = bool(array.type.ordered)
        return _with_missing(name, kind, categories if ordered else sorted(categories), label,
                             "category", ordered, collisions)
    present = pc.drop_null(pc.if_else(pc.is_nan(array), None, array)
                           if pa.types.is_floating(array.type) else array)
    return _with_missing(name, kind, sorted(pc.unique(present).to_pylist()), label,
                         _pandas_dtype(array.type), False, collisions)


def _pandas_dtype(arrow_type: pa.DataType) -> str:
    """The dtype pandas gives such a column by default (strings: 'str' or object)."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_string_view(arrow_type):
        return str(pd.Series(["x"]).dtype)
    return str(np.dtype(arrow_type.to_pandas_dtype()))


# ---- reading columns --------------------------------------------------------------------------


def _arrow_kind(name: str, arrow_type: pa.DataType) -> str:
    if pa.types.is_dictionary(arrow_type):
        return _arrow_kind(name, arrow_type.value_type)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_string_view(arrow_type):
        return "string"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_null(arrow_type):
        return "empty"
    if pa.types.is_temporal(arrow_type) or "period" in str(arrow_type):
        raise _temporal_error(name, f"dates or times (Arrow {arrow_type})")
    raise DataTypeError(f"column {name!r} has unsupported Arrow type {arrow_type}; supported "
                        f"kinds are {', '.join(KINDS)}")


def _arrow_column(table: pa.Table, name: str) -> pa.Array:
    names = table.column_names
    if name not in names:
        raise SchemaError(f"the table has no column {name!r} (columns: {', '.join(names)})")
    if names.count(name) > 1:
        raise SchemaError(f"the table has more than one column named {name!r}")
    column = table.column(name)
    if pa.types.is_dictionary(column.type) and column.num_chunks > 1:
        try:
            column = column.unify_dictionaries()
        except pa.ArrowInvalid:  # the union needs wider indices than the chunks have
            column = pa.chunked_array([pa.DictionaryArray.from_arrays(
                c.indices.cast(pa.int32()), c.dictionary, ordered=c.type.ordered)
                for c in column.chunks]).unify_dictionaries()
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def _check_arrow_missing(name: str, array: pa.Array) -> None:
    value_type = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if array.null_count == 0 and not pa.types.is_floating(value_type):
        return  # (null_count is stored: no pass over the rows)
    missing = pc.is_null(array, nan_is_null=True)
    total = pc.sum(missing).as_py() or 0
    if total:
        raise _missing_error(name, total, pc.index(missing, True).as_py())


class RawColumn:
    """One attribute's column, ready for the Rust encoder: an integer array, an
    offset and an optional remap table (see ``Attribute._raw``), and how to name
    a row and its value in an error. ``dictionary_size`` is set when ``raw``
    holds an Arrow column's dictionary indices: an index outside [0, size) has
    no value to show (a damaged file)."""

    def __init__(self, raw, offset, remap, value_at, row_label, dictionary_size=None):
        self.raw, self.offset, self.remap = raw, offset, remap
        self.value_at, self.row_label = value_at, row_label
        self.dictionary_size = dictionary_size

    @classmethod
    def of(cls, table: pd.DataFrame | pa.Table, attr: Attribute) -> RawColumn:
        if isinstance(table, pd.DataFrame):
            values = _fill_missing(attr, _column(table, attr.name))
            _check_no_missing(attr.name, values)
            _check_kind(attr, values)
            raw, offset, remap = attr._raw(values)
            return cls(raw, offset, remap, lambda row: attr._value_at(values, row),
                       lambda row: _py(values.index[row]))
        array = _fill_arrow_missing(attr, _arrow_column(table, attr.name))
        kind = _arrow_kind(attr.name, array.type)
        _check_arrow_missing(attr.name, array)
        if kind not in (attr.kind, "empty"):
            example = f" (e.g. {array[0].as_py()!r} at row 0)" if len(array) else ""
            raise DataTypeError(
                f"column {attr.name!r} holds {kind} values{example} but attribute "
                f"{attr.name!r} has a {attr.kind} domain ({attr.describe()}); convert the "
                "column explicitly")
        raw, offset, remap = _arrow_raw(attr, array)
        indexed = (pa.types.is_dictionary(array.type) and len(array) > 0
                   and not isinstance(attr, IntRange))  # as _arrow_raw reads it
        return cls(raw, offset, remap, lambda row: array[row].as_py(), lambda row: row,
                   len(array.dictionary) if indexed else None)


def arrow_values(attr: Categorical) -> pa.Array:
    """The attribute's domain values as an Arrow array (uint64 for integers past
    int64, where Arrow would infer int64 and overflow). Made once per attribute."""
    cached = attr.__dict__.get("_arrow_values")
    if cached is None:
        wide = attr.kind == "integer" and max(attr.values) >= 2**63
        cached = attr.__dict__["_arrow_values"] = pa.array(list(attr.values),
                                                           type=pa.uint64() if wide else None)
    return cached


def _arrow_raw(attr: Attribute, array: pa.Array) -> tuple[np.ndarray, int, np.ndarray | None]:
    """``Attribute._raw`` for an Arrow column: dictionary indices with a remap
    table of the (small) dictionary, integers with the range's offset, other
    values looked up in the domain by Arrow's hash join (−1: outside)."""
    if len(array) == 0 or pa.types.is_null(array.type):
        return np.zeros(0, dtype=np.int64), 0, None
    if pa.types.is_dictionary(array.type):
        if isinstance(attr, IntRange):
            return _arrow_raw(attr, array.dictionary_decode())
        indices = array.indices.to_numpy(zero_copy_only=False)
        if array.dictionary.equals(arrow_values(attr)):  # as privpub writes: indices are digits
            return indices, 0, None
        remap = attr._index.get_indexer(array.dictionary.to_pandas()).astype(np.int64)
        return indices, 0, remap
    if isinstance(attr, IntRange):
        return array.to_numpy(zero_copy_only=False), attr.lo, None
    if attr.kind == "integer" and min(attr.values) >= 0 and max(attr.values) < LOOKUP_LIMIT:
        # Small non-negative integers (ages, years): a lookup table indexed by the
        # value itself, checked in Rust (−1 or past the end: outside the domain).
        remap = np.full(max(attr.values) + 1, -1, dtype=np.int64)
        remap[list(attr.values)] = np.arange(attr.size)
        return array.to_numpy(zero_copy_only=False), 0, remap
    domain = arrow_values(attr)
    if domain.type != array.type:
        try:
            array = array.cast(domain.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            domain = domain.cast(array.type)  # a value the column cannot hold matches nothing
    index = pc.fill_null(pc.index_in(array, value_set=domain), -1)
    return index.to_numpy(zero_copy_only=False), 0, None
