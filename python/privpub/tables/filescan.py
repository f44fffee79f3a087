"""Counting over a view file row group by row group: skip, count whole, or read.

A view file privpub writes (:func:`~privpub.tables.published.write_view`, a Dask
release's parts) records in its own metadata, for every row group of every part
file (:class:`GroupStats`, in the part's entry of the ``digest`` document): its
row count, per attribute the least and greatest *domain index* its rows hold,
and per column the SHA-256 of the group's domain indices (the part digest's
algorithm, :class:`~privpub.tables.view.Digest`, over the group's rows alone).
The list is sealed by the SHA-256 of its canonical JSON (``groups_sha256``).
The view is written in code order, so the leading attributes are clustered and
their ranges narrow.

A count (:func:`count_parts`) decides a condition over each group's box of
index ranges from the condition's truth table over its attributes
(:meth:`~privpub.counting.query.Condition.truth_table`; when that is too large,
Kleene's three-valued logic over its atoms' tables, and an atom on one huge
integer range by its intervals of values, as the domain count does): false on every
tuple of the box, the group is skipped; true on every tuple, its row count is
added unread; otherwise only the condition's columns of that group are read
(groups in parallel on a thread pool; pyarrow, the SHA-256 and the Rust
counting kernel all release the GIL) and counted.

What a pruned count checks, and what it trusts:

- It trusts the metadata document, as every read of a view does (the digest
  is in it): stats that were rewritten consistently with the rows are a new
  file (the digest is not a signature). The document is checked on open: the
  stats parse within bounds, each range lies in its attribute's domain, the
  seal matches (damage to the stats is found before any is used). They are
  used only if the groups are the file's row groups, row for row, and hold
  the part's stored rows (:func:`usable_groups`; the Parquet footer is used
  to find the groups, never its statistics).
- Every group it reads is checked in full for the columns read: the rows read
  must be the group's stored count, each column's SHA-256 must be its stored
  one, and each column's least and greatest index must be the stored range
  (so stats that lie about a group that is read are found). An edit to a
  group that is read is an :class:`~privpub.ArtifactError`, never a count.
- A skipped or whole-counted group is not read, so an edit to *its rows*
  goes unseen by that count (its stored row count and ranges, sealed, are
  what it contributes); any count that reads it, or a full pass
  (``read_parquet``, ``codes``, which check the part digests), finds it.

Files without these stats (written before them, or holding context sets)
are counted by the full pass, which checks the part digests.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.artifacts import shown
from privpub.core.errors import ArtifactError
from privpub.counting import intervals
from privpub.counting.query import PROJECTION_LIMIT
from privpub.tables.schema import Schema
from privpub.tables.view import (
    CHUNK_ROWS,
    Digits,
    FileView,
    PartDigest,
    file_digits,
    index_width,
)

#: Decisions of a condition over a row group.
SKIP, WHOLE, READ = 0, 1, 2


@dataclass(frozen=True)
class GroupStats:
    """One row group: its rows, per attribute (schema order) the least and
    greatest domain index (None for an empty group), per column the SHA-256 of
    its domain indices (as :class:`~privpub.tables.view.Digest`)."""

    rows: int
    low: tuple[int, ...] | None
    high: tuple[int, ...] | None
    columns: Mapping[str, str]

    def to_dict(self) -> dict[str, object]:
        return {"rows": self.rows, "low": None if self.low is None else list(self.low),
                "high": None if self.high is None else list(self.high),
                "columns": dict(self.columns)}


def seal(groups: Sequence[GroupStats]) -> str:
    """SHA-256 of the groups' canonical JSON (sorted keys, no spaces)."""
    text = json.dumps([g.to_dict() for g in groups], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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
        return replace(part, groups=tuple(self.groups), groups_sha256=seal(self.groups))


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
    if sealed != seal(groups):
        raise ArtifactError(f"{where}: field '{name}.groups_sha256' = {shown(sealed)} does not "
                            "match its row groups' statistics; they were damaged or edited")
    return groups


def _group(value: Any, name: str, schema: Schema, where: str) -> GroupStats:
    if not isinstance(value, dict) or set(value) != {"rows", "low", "high", "columns"}:
        raise ArtifactError(f"{where}: field {name!r} must be an object with rows, low, high "
                            f"and columns, got {shown(value)}")
    rows = value["rows"]
    if type(rows) is not int or rows < 0:
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


def usable_groups(part: PartDigest, sizes: Sequence[int]) -> PartDigest:
    """``part``, without its groups unless they are the file's row groups
    (``sizes``), row for row, and hold the part's rows: statistics of other
    groups (a file rewritten with another row-group size, or row counts edited
    in the metadata) are not used, and the file is counted by full passes,
    which check the part's digest and rows."""
    if part.groups is None or ([g.rows for g in part.groups] == list(sizes)
                               and sum(sizes) == part.rows):
        return part
    return replace(part, groups=None, groups_sha256=None)


# ---- deciding a condition over a group ----------------------------------------------------------


class Decider:
    """A condition's decision (SKIP, WHOLE or READ) over boxes of domain-index
    ranges, memoised by box (groups of trailing attributes share theirs)."""

    def __init__(self, condition: Any):
        self.condition, self.schema = condition, condition.schema
        self.index = [self.schema.names.index(a) for a in condition.attributes]
        self.table = condition.truth_table()
        self.seen: dict[tuple, int] = {}

    def __call__(self, group: GroupStats) -> int:
        if group.rows == 0:
            return SKIP
        box = tuple((group.low[j], group.high[j]) for j in self.index)
        decision = self.seen.get(box)
        if decision is None:
            decision = self.seen[box] = self._decide(box)
        return decision

    def _decide(self, box: tuple) -> int:
        if self.table is not None:
            return _verdict(_within(self.table, self.condition.attributes, self.schema, box))
        ranges = dict(zip(self.condition.attributes, box, strict=True))
        return _kleene(self.condition, self.condition.formula, ranges)


def _within(table: np.ndarray, attributes: Sequence[str], schema: Schema,
            box: Sequence[tuple[int, int]]) -> np.ndarray:
    """The part of a truth table (first attribute slowest) inside ``box``."""
    shape = [schema[a].size for a in attributes]
    return table.reshape(shape)[tuple(slice(lo, hi + 1) for lo, hi in box)]


def _verdict(values: np.ndarray) -> int:
    if not values.any():
        return SKIP
    return WHOLE if values.all() else READ


def _kleene(condition: Any, formula: tuple, ranges: Mapping[str, tuple[int, int]]) -> int:
    """Three-valued: each atom from its own table over its box (READ when it has
    none within the projection limit), combined by AND / OR / NOT."""
    kind = formula[0]
    if kind == "atom":
        atom = condition.atoms[formula[1]]
        table = condition.atom_table(formula[1], PROJECTION_LIMIT)
        if table is None:
            return _interval_verdict(condition.schema, atom, ranges)
        return _verdict(_within(table, atom.attributes, condition.schema,
                                [ranges[a] for a in atom.attributes]))
    if kind == "not":
        inner = _kleene(condition, formula[1], ranges)
        return {SKIP: WHOLE, WHOLE: SKIP, READ: READ}[inner]
    parts = [_kleene(condition, f, ranges) for f in formula[1]]
    absorbing, neutral = (SKIP, WHOLE) if kind == "and" else (WHOLE, SKIP)
    if absorbing in parts:
        return absorbing
    return neutral if all(p == neutral for p in parts) else READ


def _interval_verdict(schema: Schema, atom: Any, ranges: Mapping[str, tuple[int, int]]) -> int:
    """An atom on one integer range too large for a table (a timestamp, an id):
    the values of its box satisfying it, as intervals (:mod:`privpub.counting.intervals`,
    as the domain count does); READ when the atom is not a comparison with constants."""
    if len(atom.attributes) != 1 or not hasattr(schema[atom.attributes[0]], "lo"):
        return READ
    attr, (lo, hi) = schema[atom.attributes[0]], ranges[atom.attributes[0]]
    found = intervals.of_atom(atom.node, attr.name, attr.lo + lo, attr.lo + hi)
    if found is None:
        return READ
    held = intervals.size(found)
    return SKIP if held == 0 else WHOLE if held == hi - lo + 1 else READ


# ---- counting --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part file to count over: its path, how errors name it, its groups."""

    path: str
    where: str
    groups: Sequence[GroupStats]


def count_parts(schema: Schema, parts: Sequence[Part], conditions: Sequence[Any],
                workers: int | None = None) -> list[int]:
    """Each condition's count over the parts: every group decided for every
    condition, and each group some condition cannot decide read once, for the
    columns those conditions name (module docstring: what is checked)."""
    deciders = [Decider(c) for c in conditions]
    totals = [0] * len(conditions)
    tasks = []
    for part in parts:
        for g, group in enumerate(part.groups):
            undecided = []
            for i, decide in enumerate(deciders):
                verdict = decide(group)
                if verdict == WHOLE:
                    totals[i] += group.rows
                elif verdict == READ:
                    undecided.append(i)
            if undecided:
                tasks.append((part, g, undecided))

    def count_group(task: tuple[Part, int, list[int]]) -> list[tuple[int, int]]:
        part, g, undecided = task
        names = [n for n in schema.names
                 if any(n in conditions[i].attributes for i in undecided)]
        digits = read_group(schema, part, g, names)
        rows = part.groups[g].rows
        return [(i, conditions[i].count_digits(digits, rows)) for i in undecided]

    for counted in _run(count_group, tasks, workers):
        for i, n in counted:
            totals[i] += n
    return totals


def group_batches(schema: Schema, parts: Sequence[Part], names: Sequence[str],
                  workers: int | None = None) -> Iterator[Digits]:
    """Every group's ``names`` columns in order, read (and checked) ahead on a thread
    pool, at most two groups per worker held at once."""
    tasks = [(part, g) for part in parts for g in range(len(part.groups))]
    yield from _run(lambda task: read_group(schema, task[0], task[1], names), tasks, workers)


def read_group(schema: Schema, part: Part, g: int, names: Sequence[str]) -> Digits:
    """Group ``g``'s domain indices of ``names``, checked against its stats: its
    rows, each column's SHA-256 and range; an ArtifactError naming the group otherwise."""
    stats, where = part.groups[g], f"{part.where}, row group {g}"
    try:
        # Dictionary columns as dictionaries with the reader's own int32 indices (a
        # cast to the written int8 or int16 would cost a fifth of the read).
        with pq.ParquetFile(part.path, read_dictionary=list(names)) as file:
            table = file.read_row_group(g, columns=list(names), use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{where}: its rows cannot be read: "
                            f"{str(exc).splitlines()[0]}") from None
    if table.num_rows != stats.rows:
        raise ArtifactError(f"{where} holds {table.num_rows:,} rows but its metadata says "
                            f"{stats.rows:,}")
    digits = file_digits(schema, table, names, where)
    for name in names:
        column = np.ascontiguousarray(digits[name],
                                      dtype=index_width(schema[name].size).newbyteorder("<"))
        if hashlib.sha256(column).hexdigest() != stats.columns[name]:
            raise ArtifactError(f"{where}: column {name!r} does not match the digest in its "
                                "metadata; its values were edited or reordered, or come "
                                "from another file")
        j = schema.names.index(name)
        if stats.rows and (int(column.min()) != stats.low[j] or
                           int(column.max()) != stats.high[j]):
            raise ArtifactError(f"{where}: column {name!r} holds indices "
                                f"{int(column.min())}..{int(column.max())} but its metadata "
                                f"says {stats.low[j]}..{stats.high[j]}")
    return digits


def _run(function: Callable[[Any], Any], tasks: Sequence[Any],
         workers: int | None) -> Iterator[Any]:
    """``function`` over ``tasks`` on a thread pool, results in task order, at
    most two tasks per worker in flight (bounded memory)."""
    workers = workers or min(os.cpu_count() or 1, max(len(tasks), 1))
    if workers == 1 or len(tasks) <= 1:
        yield from map(function, tasks)
        return
    with ThreadPoolExecutor(workers) as pool:
        pending = [pool.submit(function, t) for t in tasks[:2 * workers]]
        for ahead in tasks[2 * workers:]:
            yield pending.pop(0).result()
            pending.append(pool.submit(function, ahead))
        for future in pending:
            yield future.result()


# ---- the view ---------------------------------------------------------------------------------


class PrunedFileView(FileView):
    """A :class:`~privpub.tables.view.FileView` whose counts go by row group
    where its parts have statistics (:func:`count_parts`), and whose counting
    passes read groups ahead on both cores (:func:`group_batches`); a file
    without them is counted by the full pass, as by a FileView."""

    def scan_parts(self) -> list[Part] | None:
        """The part files with their row groups' statistics, or None when a
        part has none (an older file, or one holding context sets)."""
        if (self.label is not None or self.expected is None
                or any(p.groups is None for p in self.expected)):
            return None
        return [Part(f, self.where(i), p.groups)
                for i, (f, p) in enumerate(zip(self.files, self.expected, strict=True))]

    def count_many(self, conditions: Sequence[Any]) -> list[int]:
        parts = self.scan_parts()
        if parts is None:
            return super().count_many(conditions)
        return count_parts(self.schema, parts, conditions)

    def counting_batches(self, attributes: Sequence[str]) -> Iterator[Digits]:
        parts = self.scan_parts()
        if parts is None:
            return self.batches(attributes)
        return group_batches(self.schema, parts, attributes)
