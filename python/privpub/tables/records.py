"""Records to publish, as the code arrays the Rust kernels take.

The kernels work on C-contiguous (n, limbs) uint64 arrays (limbs = 1 when
m ≤ 2^64); these helpers convert from what users pass and back.
"""

from __future__ import annotations

import numpy as np

from privpub import _core
from privpub.core.errors import ParameterError
from privpub.tables.inputs import TableLike, column_names, tabular
from privpub.tables.schema import Schema


def records_as_codes(schema: Schema, data: TableLike | np.ndarray) -> np.ndarray:
    """The codes of the records to publish: a table with exactly the schema's
    columns (an extra column would be dropped from the release, so it is an
    error) in any form privpub accepts, or an array of codes below m."""
    if isinstance(data, np.ndarray):
        codes = schema._check_codes(data)
        if len(codes) and not schema.is_wide and int(codes.max()) >= schema.size:
            raise ParameterError(f"code {int(codes.max())} is not below m = {schema.size}")
        if len(codes) and schema.is_wide:
            schema.decode(codes)  # raises CodeError on any code ≥ m
        return codes
    table = tabular(data)
    extra = [c for c in column_names(table) if c not in schema.names]
    if extra:
        raise ParameterError(f"the table has columns not in the schema: {extra}; publishing "
                             "would drop them, select the schema's columns explicitly")
    return schema.encode(table)


def sorted_rows(codes: np.ndarray) -> np.ndarray:
    """Codes as a sorted, C-contiguous (n, limbs) array."""
    if codes.ndim == 1:
        return np.sort(codes).reshape(-1, 1)
    order = np.lexsort(codes.T[::-1])
    return np.ascontiguousarray(codes[order])


def distinct_sorted(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of a sorted (n, limbs) array (adjacent-difference dedupe)."""
    if len(rows) == 0:
        return rows
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return np.ascontiguousarray(rows[new])


def as_schema_codes(schema: Schema, rows: np.ndarray) -> np.ndarray:
    """(n, limbs) kernel output in the schema's code representation."""
    return rows if schema.is_wide else rows.reshape(-1)


def _comparable(rows: np.ndarray) -> np.ndarray:
    """A 1-D view of (n, limbs) rows that numpy compares lexicographically."""
    if rows.shape[1] == 1:
        return rows.reshape(-1)
    fields = [(f"w{j}", "<u8") for j in range(rows.shape[1])]
    return np.ascontiguousarray(rows).view(fields).reshape(-1)


def isin_sorted(rows: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which of the (n, limbs) ``rows`` occur in the sorted (k, limbs) ``sorted_set``."""
    if len(sorted_set) == 0:
        return np.zeros(len(rows), dtype=bool)
    keys, pool = _comparable(rows), _comparable(sorted_set)
    at = np.minimum(np.searchsorted(pool, keys), len(pool) - 1)
    return pool[at] == keys


def union_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted distinct union of two sorted (n, limbs) arrays."""
    return distinct_sorted(_core.merge_sorted(np.ascontiguousarray(a), np.ascontiguousarray(b)))
