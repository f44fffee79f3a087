"""A table's columns read for the encoder: each cell's kind, missing cells
filled with the attribute's declared label (or named in an error), and each
attribute's column as integers the Rust encoder maps to domain indices
(:class:`RawColumn`), for pandas and Arrow alike, without per-row Python objects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from privpub.core.errors import DataTypeError, MissingValueError, SchemaError
from privpub.domain.attributes import (
    KINDS,
    Attribute,
    IntRange,
    is_missing,
    python_scalar,
    value_kind,
)

#: Integer domains with values in [0, LOOKUP_LIMIT) are mapped by a lookup table.
LOOKUP_LIMIT = 1 << 16


def column_kind(name: str, values: pd.Series | pd.Index) -> str:
    """The kind of a column's values, or a DataTypeError naming the first odd value."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return column_kind(name, dtype.categories)
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_string_dtype(dtype) and dtype != np.dtype(object):
        return "string"
    if pd.api.types.is_timedelta64_dtype(dtype):
        raise _duration_error(name, f"durations ({dtype})")
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        raise _temporal_error(name, f"dates or times ({dtype})")
    if dtype == np.dtype(object):
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        if inferred in ("timedelta", "timedelta64"):
            raise _duration_error(name, f"{inferred} values")
        if inferred in ("date", "datetime", "datetime64", "time", "period"):
            raise _temporal_error(name, f"{inferred} values")
        kind = {"string": "string", "integer": "integer", "floating": "float",
                "boolean": "boolean"}.get(inferred)
        if kind is not None:
            return kind
        if inferred == "empty":
            return "empty"
        # Mixed or unsupported: name the first value whose kind differs from the first one.
        kinds = [(v, value_kind(v)) for v in values if not is_missing(v)]
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
               "missing=LABEL), --missing LABEL on the command line); a CSV's NA markers "
               "('', 'NA', 'null', …) are read as missing: --no-na or --na-values change them")


def missing_error(name: str, total: int, first: Any) -> MissingValueError:
    return MissingValueError(f"column {name!r} has {total} missing value(s) (NaN/None/null), "
                             f"the first at row {first!r}; {MISSING_FIX}")


def collision_error(name: str, label: Any, count: int) -> MissingValueError:
    """A missing label that is also a real value would merge the two silently."""
    return MissingValueError(
        f"column {name!r}: the missing label {label!r} is also the value of {count:,} cell(s) "
        "that are not missing; a missing cell would be counted as that value. Choose a label "
        "that does not occur in the column (text: e.g. '<missing>'; numbers: one outside the "
        "values, with an IntRange widened to hold it)")


def check_no_missing(name: str, values: pd.Series) -> None:
    missing = values.isna().to_numpy()
    if missing.any():
        first = python_scalar(values.index[int(np.argmax(missing))])
        raise missing_error(name, int(missing.sum()), first)


def _fill_missing(attr: Attribute, values: pd.Series) -> pd.Series:
    """A pandas column with its missing cells replaced by the attribute's declared
    missing value (the column as it is when there is none or no cell is missing)."""
    if attr.missing is None or not values.hasnans:
        return values
    collisions = int((values == attr.missing).sum())
    if collisions:
        raise collision_error(attr.name, attr.missing, collisions)
    if isinstance(values.dtype, pd.CategoricalDtype):
        if attr.missing not in values.cat.categories:
            values = values.cat.add_categories([attr.missing])
    elif values.dtype != object and column_kind(attr.name, values) != value_kind(attr.missing):
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
    kind = arrow_kind(attr.name, array.type)
    wide = attr.kind == "integer" and attr.missing >= 2**63
    label = pa.array([attr.missing], type=pa.uint64() if wide else None)
    if kind == "empty":  # every cell is missing (an all-empty CSV column: type null)
        return label.take(pa.array(np.zeros(len(array), dtype=np.int64)))
    if kind != attr.kind:  # as pandas' fillna then finds (a DataTypeError, not a cast error)
        raise DataTypeError(f"column {attr.name!r} holds {kind} values but attribute "
                            f"{attr.name!r} has a {attr.kind} domain ({attr.describe()}); "
                            "convert the column explicitly")
    collisions = arrow_count_of(array, attr.missing)
    if collisions:
        raise collision_error(attr.name, attr.missing, collisions)
    if kind == "integer" and array.type != label.type:
        try:  # a narrow or unsigned column widened to hold the label
            array = array.cast(label.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise DataTypeError(f"column {attr.name!r} holds {array.type} values, which cannot "
                                f"hold its missing value {attr.missing!r}; convert the column "
                                "explicitly") from None
    return pc.if_else(missing, label.cast(array.type)[0], array)


def arrow_count_of(array: pa.Array, value: Any) -> int:
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


def _duration_error(name: str, what: str) -> DataTypeError:
    """Durations are no dates: say how to make them numbers or bands."""
    return DataTypeError(
        f"column {name!r} holds {what}, which have no declared domain; convert it to one, "
        f"e.g. df[{name!r}].dt.days (an IntRange of whole days), "
        f"df[{name!r}].dt.total_seconds() // 3600 (whole hours) or a binning you choose "
        "(pd.cut)")


def _check_kind(attr: Attribute, values: pd.Series) -> None:
    kind = column_kind(attr.name, values)
    if kind not in (attr.kind, "empty"):
        example = (f" (e.g. {attr.value_at(values, 0)!r} at row {python_scalar(values.index[0])!r})"
                   if len(values) else "")
        raise DataTypeError(
            f"column {attr.name!r} holds {kind} values{example} but attribute {attr.name!r} has a "
            f"{attr.kind} domain ({attr.describe()}); convert the column explicitly"
        )


def frame_column(df: pd.DataFrame, name: str) -> pd.Series:
    if name not in df.columns:
        columns = ", ".join(map(str, df.columns))
        raise SchemaError(f"the frame has no column {name!r} (columns: {columns})")
    column = df[name]
    if isinstance(column, pd.DataFrame):
        raise SchemaError(f"the frame has more than one column named {name!r}")
    return column


def arrow_kind(name: str, arrow_type: pa.DataType) -> str:
    if pa.types.is_dictionary(arrow_type):
        return arrow_kind(name, arrow_type.value_type)
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
    if pa.types.is_duration(arrow_type):
        raise _duration_error(name, f"durations (Arrow {arrow_type})")
    if pa.types.is_temporal(arrow_type) or "period" in str(arrow_type):
        raise _temporal_error(name, f"dates or times (Arrow {arrow_type})")
    raise DataTypeError(f"column {name!r} has unsupported Arrow type {arrow_type}; supported "
                        f"kinds are {', '.join(KINDS)}")


def arrow_column(table: pa.Table, name: str) -> pa.Array:
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


def check_arrow_missing(name: str, array: pa.Array, first_row: int = 0) -> None:
    value_type = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if array.null_count == 0 and not pa.types.is_floating(value_type):
        return  # (null_count is stored: no pass over the rows)
    missing = pc.is_null(array, nan_is_null=True)
    total = pc.sum(missing).as_py() or 0
    if total:
        raise missing_error(name, total, first_row + pc.index(missing, True).as_py())


class RawColumn:
    """One attribute's column, ready for the Rust encoder: an integer array, an
    offset and an optional remap table (see ``Attribute.raw_indices``), and how to name
    a row and its value in an error. ``dictionary_size`` is set when ``raw``
    holds an Arrow column's dictionary indices: an index outside [0, size) has
    no value to show (a damaged file)."""

    def __init__(self, raw, offset, remap, value_at, row_label, dictionary_size=None):
        self.raw, self.offset, self.remap = raw, offset, remap
        self.value_at, self.row_label = value_at, row_label
        self.dictionary_size = dictionary_size

    @classmethod
    def of(cls, table: pd.DataFrame | pa.Table, attr: Attribute, first_row: int = 0
           ) -> RawColumn:
        """``attr``'s column of ``table``; an Arrow table's rows are named from
        ``first_row`` (a batch of a file read in batches)."""
        if isinstance(table, pd.DataFrame):
            values = _fill_missing(attr, frame_column(table, attr.name))
            check_no_missing(attr.name, values)
            _check_kind(attr, values)
            raw, offset, remap = attr.raw_indices(values)
            return cls(raw, offset, remap, lambda row: attr.value_at(values, row),
                       lambda row: python_scalar(values.index[row]))
        array = _fill_arrow_missing(attr, arrow_column(table, attr.name))
        kind = arrow_kind(attr.name, array.type)
        check_arrow_missing(attr.name, array, first_row)
        if kind not in (attr.kind, "empty"):
            example = f" (e.g. {array[0].as_py()!r} at row {first_row})" if len(array) else ""
            raise DataTypeError(
                f"column {attr.name!r} holds {kind} values{example} but attribute "
                f"{attr.name!r} has a {attr.kind} domain ({attr.describe()}); convert the "
                "column explicitly")
        raw, offset, remap = _arrow_raw(attr, array)
        indexed = (pa.types.is_dictionary(array.type) and len(array) > 0
                   and not isinstance(attr, IntRange))  # as _arrow_raw reads it
        return cls(raw, offset, remap, lambda row: array[row].as_py(),
                   lambda row: first_row + row,
                   len(array.dictionary) if indexed else None)


def _arrow_raw(attr: Attribute, array: pa.Array) -> tuple[np.ndarray, int, np.ndarray | None]:
    """``Attribute.raw_indices`` for an Arrow column: dictionary indices with a remap
    table of the (small) dictionary, integers with the range's offset, other
    values looked up in the domain by Arrow's hash join (−1: outside)."""
    if len(array) == 0 or pa.types.is_null(array.type):
        return np.zeros(0, dtype=np.int64), 0, None
    if pa.types.is_dictionary(array.type):
        if isinstance(attr, IntRange):
            return _arrow_raw(attr, array.dictionary_decode())
        indices = array.indices.to_numpy(zero_copy_only=False)
        if array.dictionary.equals(attr.arrow_values):  # as privpub writes: indices are digits
            return indices, 0, None
        remap = attr.values_index.get_indexer(array.dictionary.to_pandas()).astype(np.int64)
        return indices, 0, remap
    if isinstance(attr, IntRange):
        return array.to_numpy(zero_copy_only=False), attr.lo, None
    if attr.kind == "integer" and min(attr.values) >= 0 and max(attr.values) < LOOKUP_LIMIT:
        # Small non-negative integers (ages, years): a lookup table indexed by the
        # value itself, checked in Rust (−1 or past the end: outside the domain).
        remap = np.full(max(attr.values) + 1, -1, dtype=np.int64)
        remap[list(attr.values)] = np.arange(attr.size)
        return array.to_numpy(zero_copy_only=False), 0, remap
    domain = attr.arrow_values
    if domain.type != array.type:
        try:
            array = array.cast(domain.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            domain = domain.cast(array.type)  # a value the column cannot hold matches nothing
    index = pc.fill_null(pc.index_in(array, value_set=domain), -1)
    return index.to_numpy(zero_copy_only=False), 0, None
