"""Counting over a view file row group by row group: skip, count whole, or read.

A view file privpub writes (:func:`~privpub.tables.published.write_view`, a Dask
release's parts) records in its own metadata, for every row group of every part
file (:mod:`privpub.viewfile.groupstats`): its row count, per attribute the least
and greatest *domain index* its rows hold, and per column the SHA-256 of the
group's domain indices; the list sealed. The view is written in code order,
so the leading attributes are clustered and their ranges narrow.

A count (:func:`count_parts`) decides a condition over each group's box of index ranges
from the condition's truth table over its attributes
(:meth:`~privpub.counting.query.Condition.truth_table`; when that is too large, Kleene's
three-valued logic over its atoms' tables, and an atom on one huge integer range by its
intervals of values, as the domain count does): false on every tuple of the box, the
group is skipped; true on every tuple, its row count is added unread; otherwise only the
columns the condition still depends on inside that box (:class:`Reductions`) are read
and counted: the groups of a count in batches, each batch in one Rust call
(``_core.scan_groups``: every chunk decoded by :mod:`privpub.tables.pages`'s reader, its
SHA-256 and range computed, the group counted under each condition's truth table; groups
and columns on rayon's pool, the GIL released), each column's digest and range then
compared here with the stats before the group's counts are used. A group that call
cannot take (a chunk that reader does not decode, a condition without a truth table) or
whose digest differs is read by :func:`read_group` (pyarrow when the page reader's
digits do not match) and counted in Python, so a count never rests on privpub's own page
reader.

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

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privpub import _core
from privpub.core.errors import ArtifactError
from privpub.counting import intervals
from privpub.counting.query import PROJECTION_LIMIT
from privpub.domain.attributes import IntRange
from privpub.domain.schema import Schema
from privpub.tables import pages
from privpub.tables.view import FileView
from privpub.viewfile.columns import Digits, file_digits, index_width
from privpub.viewfile.groupstats import GroupStats

#: Decisions of a condition over a row group.
SKIP, WHOLE, READ = 0, 1, 2


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
    if len(atom.attributes) != 1 or not isinstance(schema[atom.attributes[0]], IntRange):
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

    footers = _footers({task[0].path for task in tasks})

    def count_group(task: tuple[Part, int, list[int]]) -> list[tuple[int, int]]:
        part, g, undecided = task
        digits = read_group(schema, part, g, _names(schema, conditions, undecided),
                            footers.get(part.path))
        rows = part.groups[g].rows
        return [(i, conditions[i].count_digits(digits, rows)) for i in undecided]

    # Groups in batches (bounded memory: a batch's column chunks are held at
    # once), each batch in one Rust call; a group it cannot count (a chunk the
    # page reader does not decode, a condition with no truth table, a digest
    # that differs) is read and counted as before, the reads checked there.
    # The reductions and dictionary remaps serve every batch of the count.
    batch, reduced, remaps = 4 * (os.cpu_count() or 1), Reductions(schema, conditions), {}
    for start in range(0, len(tasks), batch):
        chunk = tasks[start:start + batch]
        scanned = _scan_groups(schema, chunk, reduced, footers, remaps)
        missed = [task for task, counts in zip(chunk, scanned, strict=True) if counts is None]
        for counted in [*(c for c in scanned if c is not None), *_run(count_group, missed,
                                                                      workers)]:
            for i, n in counted:
                totals[i] += n
    return totals


def _names(schema: Schema, conditions: Sequence[Any], undecided: Sequence[int]) -> list[str]:
    """The columns the ``undecided`` conditions name, in schema order."""
    return [n for n in schema.names if any(n in conditions[i].attributes for i in undecided)]


def _scan_groups(schema: Schema, tasks: Sequence[tuple[Part, int, list[int]]],
                 reduced: Reductions, footers: Mapping[str, pq.FileMetaData],
                 remaps: dict) -> list[list[tuple[int, int]] | None]:
    """Each task's counts from one ``_core.scan_groups`` call (every group's
    columns decoded, digested and counted in Rust, on both cores, the GIL
    released), each group's digests and ranges checked against its stats
    here; None for a group that call cannot count or whose digest differs
    (the caller reads it through :func:`read_group`). ``remaps``: the
    dictionary pages' remaps met so far (:func:`pages.chunk_args`)."""
    requests: list[tuple | None] = []
    fds: dict[str, int] = {}
    try:
        for part, g, undecided in tasks:
            requests.append(_request(schema, part, g, undecided, reduced,
                                     footers.get(part.path), fds, remaps))
    finally:
        for fd in fds.values():
            os.close(fd)
    sent = [r[1:] for r in requests if r is not None]
    found = iter(_core.scan_groups(sent, reduced.tables) if sent else [])
    results: list[list[tuple[int, int]] | None] = []
    for (part, g, undecided), request in zip(tasks, requests, strict=True):
        got = next(found) if request is not None else None
        results.append(None if got is None else
                       _checked(schema, part, g, request[0], undecided, got))
    return results


class Reductions:
    """Each undecided condition restricted to a group's box: an attribute on
    which its truth table does not change inside the box is fixed at the box's
    low end and dropped (every row of the group holds a value in the box), so
    its column is neither read nor counted: ``race = 'White' AND age > 60``
    over a group whose ages all exceed 60 reads ``race`` alone. (One is kept
    when the condition is constant over the box: a decided group is never
    sent, but could be.) The reduced tables are the ``tables`` argument of
    ``_core.scan_groups``, each made once."""

    def __init__(self, schema: Schema, conditions: Sequence[Any]):
        self.schema, self.conditions = schema, conditions
        self.full = [c.truth_table() for c in conditions]
        self.tables: list[tuple[list[int], np.ndarray]] = []
        self.made: dict[tuple, int] = {}  # (radices, table bytes) -> its slot
        self.slots: dict[tuple, tuple[int, list[str]]] = {}

    def __call__(self, i: int, group: GroupStats) -> tuple[int, list[str]]:
        """Condition i over the group: (its slot in ``tables``, the attributes read)."""
        attributes = self.conditions[i].attributes
        box = tuple((group.low[j], group.high[j])
                    for j in (self.schema.names.index(a) for a in attributes))
        key = (i, box)
        if key not in self.slots:
            shape = [self.schema[a].size for a in attributes]
            table = self.full[i].reshape(shape)
            inside = _within(self.full[i], attributes, self.schema, box)
            # An axis matters if some slice along it differs from the first.
            keep = [k for k in range(len(attributes))
                    if not (inside == inside.take([0], axis=k)).all()] or [0]
            fixed = tuple(slice(None) if k in keep else box[k][0] for k in range(len(shape)))
            radices = [shape[k] for k in keep]
            reduced = np.ascontiguousarray(table[fixed].reshape(-1))
            same = (tuple(radices), reduced.tobytes())
            if same not in self.made:
                self.made[same] = len(self.tables)
                self.tables.append((radices, reduced))
            self.slots[key] = (self.made[same], [attributes[k] for k in keep])
        return self.slots[key]


def _request(schema: Schema, part: Part, g: int, undecided: Sequence[int],
             reduced: Reductions, meta: pq.FileMetaData | None,
             fds: dict[str, int], remaps: dict) -> tuple | None:
    """A group as ``_core.scan_groups`` takes it, after the names of the
    columns it reads; or None when it cannot."""
    if meta is None or any(reduced.full[i] is None for i in undecided):
        return None
    wanted = [reduced(i, part.groups[g]) for i in undecided]
    names = [n for n in schema.names if any(n in read for _, read in wanted)]
    where = f"{part.where}, row group {g}"
    index = {meta.schema.column(k).path: k for k in range(meta.num_columns)}
    if any(n not in index for n in names):
        return None
    try:
        if part.path not in fds:
            fds[part.path] = os.open(part.path, os.O_RDONLY)
    except OSError:
        return None  # read_group says what is wrong
    chunks = []
    for name in names:
        found = pages.chunk_args(schema, fds[part.path], g, index[name], name, where, remaps)
        if found is None:
            return None
        chunks.append(found)
    counts = [(slot, [names.index(a) for a in read]) for slot, read in wanted]
    return names, part.groups[g].rows, chunks, counts


def _checked(schema: Schema, part: Part, g: int, names: Sequence[str], undecided: Sequence[int],
             got: tuple) -> list[tuple[int, int]] | None:
    """The group's counts if every column read has its stored digest (None
    otherwise: not this reader's word against the digest) and range."""
    counts, columns = got
    stats = part.groups[g]
    if any(digest != stats.columns[n] for n, (digest, _) in zip(names, columns, strict=True)):
        return None
    for name, (_, found) in zip(names, columns, strict=True):
        _check_range(schema, stats, name, found, f"{part.where}, row group {g}")
    return list(zip(undecided, counts, strict=True))


def _check_range(schema: Schema, stats: GroupStats, name: str, found: tuple[int, int] | None,
                 where: str) -> None:
    """A column with the group's digest must hold the stored range: otherwise
    the stats were forged (an ArtifactError)."""
    j = schema.names.index(name)
    if stats.rows and found != (stats.low[j], stats.high[j]):
        low, high = found if found is not None else (None, None)
        raise ArtifactError(f"{where}: column {name!r} holds indices {low}..{high} but its "
                            f"metadata says {stats.low[j]}..{stats.high[j]}")


def group_batches(schema: Schema, parts: Sequence[Part], names: Sequence[str],
                  workers: int | None = None) -> Iterator[Digits]:
    """Every group's ``names`` columns in order, read (and checked) ahead on a thread
    pool, at most two groups per worker held at once."""
    tasks = [(part, g) for part in parts for g in range(len(part.groups))]
    footers = _footers({part.path for part in parts})
    yield from _run(lambda task: read_group(schema, task[0], task[1], names,
                                            footers.get(task[0].path)), tasks, workers)


#: Footers already read, by file identity (device, inode, size, mtime): a count
#: costs ~0.7 ms less without parsing one again. A stale footer could only
#: misplace chunks, whose digests then differ, and those groups are read again
#: from the file itself by pyarrow (:func:`read_group`).
_FOOTER_CACHE: dict[tuple, pq.FileMetaData] = {}
_FOOTER_CACHE_SIZE = 64


def _footers(paths: set[str]) -> dict[str, pq.FileMetaData]:
    """Each file's footer, read once for a pass (one that cannot be read is left
    out: reading its groups says what is wrong)."""
    found = {}
    for path in paths:
        with contextlib.suppress(OSError, pa.ArrowException):
            info = os.stat(path)
            key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
            if key not in _FOOTER_CACHE:
                while len(_FOOTER_CACHE) >= _FOOTER_CACHE_SIZE:
                    del _FOOTER_CACHE[next(iter(_FOOTER_CACHE))]
                _FOOTER_CACHE[key] = pq.read_metadata(path)
            found[path] = _FOOTER_CACHE[key]
    return found


def read_group(schema: Schema, part: Part, g: int, names: Sequence[str],
               meta: pq.FileMetaData | None = None) -> Digits:
    """Group ``g``'s domain indices of ``names``, checked against its stats: its
    rows, each column's SHA-256 and range; an ArtifactError naming the group
    otherwise. Columns are decoded by :mod:`privpub.tables.pages` where it
    can (``meta``: the file's footer, read once per count), by pyarrow otherwise
    or when those digits do not match (so that reader is never trusted)."""
    where = f"{part.where}, row group {g}"
    try:
        meta = pq.read_metadata(part.path) if meta is None else meta
        index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
        fd = os.open(part.path, os.O_RDONLY)
    except (OSError, pa.ArrowException):
        fd = None  # pyarrow reads every column, and says what is wrong
    fast: Digits = {}
    if fd is not None:
        try:
            for name in names:
                if name in index:
                    found = pages.read_column(schema, fd, g, index[name], name, where)
                    if found is not None:
                        fast[name] = found
        finally:
            os.close(fd)
    rest = [n for n in names if n not in fast]
    digits = {**fast, **(_arrow_group(schema, part, g, rest, where) if rest else {})}
    for name in names:
        if not _matches(schema, part.groups[g], name, digits[name], where):
            if name in fast:  # not this reader's word against the digest: pyarrow's
                digits[name] = _arrow_group(schema, part, g, [name], where)[name]
            if name not in fast or not _matches(schema, part.groups[g], name, digits[name],
                                                where):
                raise ArtifactError(f"{where}: column {name!r} does not match the digest in "
                                    "its metadata; its values were edited or reordered, or "
                                    "come from another file")
    return digits


def _arrow_group(schema: Schema, part: Part, g: int, names: Sequence[str],
                 where: str) -> Digits:
    stats = part.groups[g]
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
    return file_digits(schema, table, names, where)


def _matches(schema: Schema, stats: GroupStats, name: str, digits: np.ndarray,
             where: str) -> bool:
    """Whether a column's digits have the group's digest; digits that do but lie
    outside the stored range are an ArtifactError (the stats were forged)."""
    column = np.ascontiguousarray(digits, dtype=index_width(schema[name].size).newbyteorder("<"))
    if len(column) != stats.rows or hashlib.sha256(column).hexdigest() != stats.columns[name]:
        return False
    if stats.rows:
        _check_range(schema, stats, name, (int(column.min()), int(column.max())), where)
    return True


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
