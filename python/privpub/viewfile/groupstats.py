"""privpub's own statistics of a view file's row groups (what
:mod:`privpub.viewfile.scan` counts by).

For every row group of every part file, in the part's entry of the metadata's
``digest`` document: its row count, per attribute the least and greatest
domain index its rows hold, and per column the SHA-256 of the group's domain
indices (the part digest's algorithm, :class:`~privpub.viewfile.digest.Digest`,
over the group's rows alone); the list sealed by one SHA-256 (:func:`seal`,
``groups_sha256``). Written by :class:`GroupRecorder` in the writer's
pass, parsed within bounds and checked against the seal on open
(:func:`stored_groups`), used only when they describe the file's row groups
(:func:`usable_groups`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privpub.core.artifacts import shown
from privpub.core.errors import ArtifactError, StatisticsError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, index_width
from privpub.viewfile.digest import PartDigest
from privpub.viewfile.layout import CHUNK_ROWS


@dataclass(frozen=True)
class GroupStats:
    """One row group: its rows, per attribute (schema order) the least and
    greatest domain index (None for an empty group), per column the SHA-256 of
    its domain indices (as :class:`~privpub.viewfile.digest.Digest`)."""

    rows: int
    low: tuple[int, ...] | None
    high: tuple[int, ...] | None
    columns: Mapping[str, str]

    def to_dict(self) -> dict[str, object]:
        return {"rows": self.rows, "low": None if self.low is None else list(self.low),
                "high": None if self.high is None else list(self.high),
                "columns": dict(self.columns)}


def seal(groups: Sequence[GroupStats], names: Sequence[str]) -> str:
    """SHA-256 of the groups in a fixed binary form: each group's rows, low and
    high indices (−1 for an empty group's) as 16-byte little-endian signed
    integers (a domain index may pass 2^63), then every group's column digests
    in the order of ``names`` (the schema's), as ASCII."""
    k = len(names)
    found = hashlib.sha256(b"".join(
        v.to_bytes(16, "little", signed=True)
        for g in groups for v in (g.rows, *(g.low or (-1,) * k), *(g.high or (-1,) * k))))
    found.update("".join(g.columns[n] for g in groups for n in names).encode("ascii", "replace"))
    return found.hexdigest()


class GroupRecorder:
    """The writer's side: :class:`GroupStats` of the row groups a
    ``ParquetWriter.write_batch(batch, row_group_size=group_rows)`` call makes
    of each batch (pyarrow starts a group at every call and cuts the batch
    every ``group_rows`` rows; an empty batch is an empty group). Open checks
    that they are the file's groups (:func:`usable_groups`)."""

    def __init__(self, schema: Schema, group_rows: int = CHUNK_ROWS):
        self.schema, self.group_rows = schema, group_rows
        self.dtypes = [index_width(a.size).newbyteorder("<") for a in schema]
        self.groups: list[GroupStats] = []

    def add(self, batch: Digits) -> Digits:
        """Record the groups of one written batch (returned unchanged)."""
        rows = len(batch[self.schema.names[0]])
        for start in range(0, max(rows, 1), self.group_rows):
            part = [np.ascontiguousarray(batch[n][start:start + self.group_rows], dtype=t)
                    for n, t in zip(self.schema.names, self.dtypes, strict=True)]
            size = len(part[0])
            self.groups.append(GroupStats(
                size, tuple(int(d.min()) for d in part) if size else None,
                tuple(int(d.max()) for d in part) if size else None,
                {n: hashlib.sha256(d).hexdigest()
                 for n, d in zip(self.schema.names, part, strict=True)}))
        return batch

    def attach(self, part: PartDigest) -> PartDigest:
        """The part's digest with these groups (and their seal) added."""
        return replace(part, groups=tuple(self.groups),
                       groups_sha256=seal(self.groups, self.schema.names))


# ---- reading the stats back -------------------------------------------------------------------


def stored_groups(part: Mapping[str, Any], name: str, schema: Schema,
                  where: str) -> tuple[GroupStats, ...] | None:
    """The groups of a part's digest entry ``part`` (None when it has none: an
    older file), checked within bounds: an ArtifactError naming the field otherwise."""
    if "groups" not in part and "groups_sha256" not in part:
        return None
    value, sealed = part.get("groups"), part.get("groups_sha256")
    if not isinstance(value, list):
        raise ArtifactError(f"{where}: field '{name}.groups' must be a list, got "
                            f"{type(value).__name__}")
    groups = tuple(_group(g, f"{name}.groups[{i}]", schema, where) for i, g in enumerate(value))
    if sealed != seal(groups, schema.names):
        raise ArtifactError(f"{where}: field '{name}.groups_sha256' = {shown(sealed)} does not "
                            "match its row groups' statistics; they were damaged or edited")
    return groups


def _group(value: Any, name: str, schema: Schema, where: str) -> GroupStats:
    if not isinstance(value, dict) or set(value) != {"rows", "low", "high", "columns"}:
        raise ArtifactError(f"{where}: field {name!r} must be an object with rows, low, high "
                            f"and columns, got {shown(value)}")
    rows = value["rows"]
    if type(rows) is not int or not 0 <= rows < 2**63:
        raise ArtifactError(f"{where}: field '{name}.rows' must be a count, got {shown(rows)}")
    bounds = []
    for side in ("low", "high"):
        found = value[side]
        if rows == 0 and found is None:
            bounds.append(None)
            continue
        if (not isinstance(found, list) or len(found) != len(schema)
                or any(type(v) is not int or not 0 <= v < a.size
                       for v, a in zip(found, schema, strict=True))):
            raise ArtifactError(f"{where}: field '{name}.{side}' must list one domain index "
                                f"per attribute ({len(schema)}), got {shown(found)}")
        bounds.append(tuple(found))
    low, high = bounds
    if low is not None and any(a > b for a, b in zip(low, high, strict=True)):
        raise ArtifactError(f"{where}: field {name!r}: a low index is above its high one")
    columns = value["columns"]
    if (not isinstance(columns, dict) or set(columns) != set(schema.names)
            or not all(isinstance(h, str) and len(h) == 64 for h in columns.values())):
        raise ArtifactError(f"{where}: field '{name}.columns' must give a SHA-256 digest for "
                            "each of the schema's columns")
    return GroupStats(rows, low, high, columns)


def usable_groups(part: PartDigest, sizes: Sequence[int], where: str) -> PartDigest:
    """``part``, without its groups unless they are the file's row groups
    (``sizes``), row for row: statistics of other groups (a file rewritten
    with another row-group size) are not used, and the file is counted by
    full passes, which check the part's digest and rows. Groups whose rows do
    not add up to the part's are no rewrite (one keeps every row): a
    :class:`~privpub.core.errors.StatisticsError`, naming the first group
    whose count is not the file's when the groups are as many as the file's."""
    if part.groups is None:
        return part
    stated = [g.rows for g in part.groups]
    if sum(stated) != part.rows:
        if len(stated) != len(sizes):
            raise StatisticsError(where, None, None, sum(stated), part.rows)
        g = next(g for g, (a, b) in enumerate(zip(stated, sizes, strict=True)) if a != b)
        raise StatisticsError(where, g, None, stated[g], sizes[g])
    if stated == list(sizes):
        return part
    return replace(part, groups=None, groups_sha256=None)


def check_rows(stats: GroupStats, where: str, group: int, rows: int) -> None:
    """Group ``group`` read as ``rows`` rows must hold its stated count: a
    :class:`~privpub.core.errors.StatisticsError` otherwise."""
    if rows != stats.rows:
        raise StatisticsError(where, group, None, stats.rows, rows)


def check_range(schema: Schema, stats: GroupStats, where: str, group: int, name: str,
                found: tuple[int, int] | None) -> None:
    """Column ``name`` of group ``group``, read in full and holding its digest
    (so these are its rows), must hold exactly its stated range (``found``:
    its least and greatest index, None when empty): a range is what decides
    whether a group is read at all, so one wider or narrower than the rows is
    forged (a :class:`~privpub.core.errors.StatisticsError`)."""
    j = schema.names.index(name)
    stated = None if stats.low is None else (stats.low[j], stats.high[j])
    if found != stated:
        raise StatisticsError(where, group, name, stated, found)
