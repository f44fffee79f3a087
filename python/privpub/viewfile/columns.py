"""A view's columns as the file holds them: domain indices ↔ Arrow ↔ pandas.

Rows travel as *batches of domain indices* (digits), one integer array per
attribute (:data:`Digits`). On file, each attribute is one column: a
:class:`~privpub.Categorical` as a dictionary-encoded column whose dictionary
is its domain, an :class:`~privpub.IntRange` as plain integers, so DuckDB,
Spark and pandas read ordinary values; reading back maps dictionary indices to
domain indices with a remap table of the (small) dictionary, checked against
the domains in Rust (:func:`digits_of`, :func:`file_digits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import privpub._core as _core
from privpub.core.errors import ArtifactError, DataTypeError, DomainError
from privpub.domain.attributes import Attribute, Categorical, with_offset
from privpub.domain.columns import RawColumn
from privpub.domain.schema import Schema

Digits = dict[str, np.ndarray]


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
        digits = _core.codes.to_digits([np.ascontiguousarray(columns[j].raw) for j in mapped],
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
        return _core.codes.encode_wide(digits, [0] * k, [None] * k, list(schema.radices),
                                       schema.limbs)
    return _core.codes.encode_u64(digits, [0] * k, [None] * k, list(schema.radices))


def arrow_batch(schema: Schema, digits: Digits, in_domain: bool = False) -> pa.RecordBatch:
    """A batch of domain indices as an Arrow record batch of the attributes' columns
    (``in_domain`` as :func:`arrow_column`)."""
    return pa.RecordBatch.from_arrays([arrow_column(a, digits[a.name], in_domain)
                                       for a in schema], names=list(schema.names))



def arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of a view's columns (:func:`arrow_column`'s types)."""
    empty = np.zeros(0, dtype=np.int8)
    return pa.schema([pa.field(a.name, arrow_column(a, empty).type) for a in schema])
