"""Records to publish, as the code arrays the Rust kernels take.

The kernels work on C-contiguous (n, limbs) uint64 arrays (limbs = 1 when
m ≤ 2^64); these helpers convert from what users pass and back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

import privpub._core as _core
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.inputs import TableFile, TableLike, column_names, tabular
from privpub.core.limbs import LIMB_BITS, limbs_from_ints
from privpub.domain.schema import Schema


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
    if isinstance(data, (str, os.PathLike)):  # read in batches by the encoder
        data = TableFile(data, column_types=schema.csv_types())
    table = data if isinstance(data, TableFile) else tabular(data, column_types=schema.csv_types())
    extra = [c for c in column_names(table) if c not in schema.names]
    if extra:
        raise ParameterError(f"the table has columns not in the schema: {extra}; publishing "
                             "would drop them, select the schema's columns explicitly")
    return schema.encode(table)


#: How a release treats tuples the data repeat ("none": the data repeat none).
DUPLICATES = ("none", "set", "records")


def counted(records: Mapping[str, Any] | None) -> str:
    """What a release's counts and estimates count, from its ``records`` facts:
    ``"distinct tuples"`` when it published the distinct tuples
    (``duplicates="set"``), else ``"records"`` (every record was published; when
    the data repeat no tuple the two are the same)."""
    return "distinct tuples" if (records or {}).get("duplicates") == "set" else "records"


def replacement_neighbours(records: Mapping[str, Any] | None, n: int | None) -> str:
    """The neighbouring tables a replacement ε is stated for, from a release's
    ``records`` facts: those the release's exact statements (n and the record
    facts) leave indistinct, one tuple (or record) replaced by another."""
    records = records or {}
    mode = records.get("duplicates")
    if mode == "set":
        return (f"two tables whose distinct tuples (n = {n:,} each, published as a set) differ "
                f"in one, s replaced by u, and whose records given ({records['records_given']:,}, "
                "also stated) are as many")
    if mode == "records":
        return (f"two tables of n = {n:,} records that differ in one record, s replaced by u, and "
                f"agree on the record facts the release states ({records['distinct_tuples']:,} "
                f"distinct tuples, {records['repeated_tuples']:,} with several records)")
    size = "the same n records" if n is None else f"n = {n:,} records"
    return (f"two tables of {size}, no tuple repeated, that differ in one, s replaced by a "
            "tuple u not in the table")


def prepare_records(schema: Schema, data: TableLike | np.ndarray, n: int | None,
                    duplicates: str | None) -> tuple[np.ndarray, dict[str, Any]]:
    """The sorted records to publish and what the guarantee must know of them.

    Refuses empty data, a record count other than the ``n`` the mechanism was
    built for, and data that repeat a tuple when ``duplicates`` is not
    ``"set"`` or ``"records"``. Returns the rows (the distinct tuples under
    ``"set"``) and the facts ``duplicates``, ``records_given``,
    ``repeated_tuples`` (tuples with several records among those published).
    """
    check_duplicates(duplicates)
    records = sorted_rows(records_as_codes(schema, data))
    facts = record_facts(record_stats(records), n, duplicates)
    if facts["duplicates"] == "set":
        records = distinct_sorted(records)
    return records, facts


def check_duplicates(duplicates: str | None) -> None:
    """``duplicates`` must be None, "set" or "records"."""
    if duplicates not in (None, "set", "records"):
        raise ParameterError(f"duplicates must be 'set' or 'records', got {duplicates!r}")


def record_stats(records: np.ndarray) -> dict[str, int]:
    """Records, distinct tuples and repeated tuples of sorted (n, limbs) records.
    Sums over pieces that split no tuple (ranges of code space) give the whole's."""
    return {"records": len(records), "distinct": len(distinct_sorted(records)),
            "repeated": repeated_rows(records)}


def record_facts(stats: dict[str, int], n: int | None,
                 duplicates: str | None) -> dict[str, Any]:
    """The checks and facts of :func:`prepare_records` from the :func:`record_stats`
    of all the records (summed over ranges when the records are distributed)."""
    total, repeated = stats["records"], stats["repeated"]
    if total == 0:
        raise ParameterError("the data hold no records; there is nothing to publish (a view "
                             "of noise alone would estimate counts of an empty table)")
    # Under set semantics the records published are the distinct tuples: the αβ paper's
    # instance is a set, so a mechanism may be built for n = |I| (d = k·|I|/m).
    if n is not None and total != n and not (duplicates == "set" and n == stats["distinct"]):
        raise ParameterError(f"this mechanism was built for n = {n:,} records but the data "
                             f"hold {total:,}: its d and error bound are for another "
                             f"table; build it for this one (n={total}"
                             + (f", or n={stats['distinct']} for its distinct tuples"
                                if duplicates == "set" else "") + ")")
    if repeated and duplicates is None:
        extra = total - stats["distinct"]
        raise ParameterError(
            f"the data repeat {repeated:,} tuples ({extra:,} records beyond their first "
            "copies); the privacy analysis is for sets of tuples. Pass duplicates='set' to "
            "publish the distinct tuples with the full guarantee (estimates then count "
            "distinct tuples), or duplicates='records' to keep every record (estimates "
            f"count records; the guarantee does not cover the {repeated:,} repeated tuples)")
    mode = "none" if not repeated else duplicates
    return {"duplicates": mode, "records_given": total,
            "repeated_tuples": repeated if mode == "records" else 0}


def check_record_facts(records: Mapping[str, Any], n: int | None) -> dict[str, Any]:
    """The ``records`` facts of a release, each of the right type and consistent with n."""
    if not isinstance(records, Mapping):
        raise ParameterError(f"records must be a mapping, got {records!r}")
    mode = validate.field(records, "duplicates", "records")
    if mode not in DUPLICATES:
        raise ParameterError(f"records.duplicates must be one of {list(DUPLICATES)}, "
                             f"got {mode!r}")
    if n is None:
        raise ParameterError("records facts need n, the number of records published")
    out = {"duplicates": mode}
    for name in ("records_given", "repeated_tuples", "distinct_tuples", "revealed_in_view"):
        out[name] = validate.integer(f"records.{name}", validate.field(records, name, "records"))
    if not out["distinct_tuples"] <= n <= out["records_given"] or out["distinct_tuples"] < 1:
        raise ParameterError(f"records: distinct_tuples = {out['distinct_tuples']}, n = {n}, "
                             f"records_given = {out['records_given']} must be 1 ≤ distinct ≤ "
                             "n ≤ records_given")
    expected_n = out["distinct_tuples"] if mode == "set" else out["records_given"]
    if n != expected_n or (mode == "records") != (out["repeated_tuples"] > 0) \
            or out["repeated_tuples"] > n - out["distinct_tuples"] \
            or (mode == "none" and out["distinct_tuples"] != n) \
            or (mode != "records" and out["revealed_in_view"]):
        raise ParameterError(f"records facts {out} are inconsistent with n = {n}")
    return out


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


def repeated_rows(rows: np.ndarray) -> int:
    """How many distinct rows occur two or more times in a sorted (n, limbs) array."""
    if len(rows) < 2:
        return 0
    same = (rows[1:] == rows[:-1]).all(axis=1)
    # A repeated row's run contributes one "starts a repeat" position.
    starts = same.copy()
    starts[1:] &= ~same[:-1]
    return int(starts.sum())


def as_schema_codes(schema: Schema, rows: np.ndarray) -> np.ndarray:
    """(n, limbs) kernel output in the schema's code representation."""
    return rows if schema.is_wide else rows.reshape(-1)


def comparable(rows: np.ndarray) -> np.ndarray:
    """A 1-D view of (n, limbs) rows that numpy compares lexicographically."""
    if rows.shape[1] == 1:
        return rows.reshape(-1)
    fields = [(f"w{j}", "<u8") for j in range(rows.shape[1])]
    return np.ascontiguousarray(rows).view(fields).reshape(-1)


def code_range(rows: np.ndarray, lo: int, hi: int) -> slice:
    """The rows of a sorted (n, limbs) array whose codes are in [lo, hi)."""
    keys, limbs = comparable(rows), rows.shape[1]

    def position(code: int) -> int:
        if code >= 1 << (LIMB_BITS * limbs):
            return len(keys)
        return int(np.searchsorted(keys, comparable(limbs_from_ints([code], limbs))[0]))

    return slice(position(lo), position(hi))


def isin_sorted(rows: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which of the (n, limbs) ``rows`` occur in the sorted (k, limbs) ``sorted_set``."""
    if len(sorted_set) == 0:
        return np.zeros(len(rows), dtype=bool)
    keys, pool = comparable(rows), comparable(sorted_set)
    at = np.minimum(np.searchsorted(pool, keys), len(pool) - 1)
    return pool[at] == keys


def union_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted distinct union of two sorted (n, limbs) arrays."""
    return distinct_sorted(_core.sampling.merge_sorted(np.ascontiguousarray(a),
                                                       np.ascontiguousarray(b)))


def rows_as_keys(digits: list[np.ndarray]) -> np.ndarray:
    """One comparable key per row from its digits (a void view of the int64 row):
    equal rows, equal keys (for lookups of many rows at once, :class:`KeyCounts`)."""
    stacked = np.ascontiguousarray(np.stack([d.astype(np.int64) for d in digits], axis=1))
    return stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()


class KeyCounts:
    """How often keys (:func:`rows_as_keys`) occur in a table of keys (sorted once,
    looked up by bisection)."""

    def __init__(self, table: np.ndarray):
        self.values, self.counts = np.unique(table, return_counts=True)

    def of(self, keys: np.ndarray) -> np.ndarray:
        if len(self.values) == 0:
            return np.zeros(len(keys), dtype=np.int64)
        pos = np.clip(np.searchsorted(self.values, keys), 0, len(self.values) - 1)
        return np.where(self.values[pos] == keys, self.counts[pos], 0)
