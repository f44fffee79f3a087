"""Counting over a view file row group by row group: skip, count whole, or read.

A view file privpub writes (:func:`~privpub.viewfile.writer.write_view`, a Dask
release's parts) records in its own metadata, for every row group of every part
file (:mod:`privpub.viewfile.groupstats`): its row count, per attribute the least
and greatest *domain index* its rows hold, and per column the SHA-256 of the
group's domain indices; the list sealed. The view is written in code order,
so the leading attributes are clustered and their ranges narrow.

A count (:func:`count_parts`) decides a condition over each group's box of index ranges
(:mod:`privpub.viewfile.decide`): false on every tuple of the box, the
group is skipped; true on every tuple, its row count is added unread; otherwise the
columns the condition names are read and the group counted, under the condition
restricted to the box (:class:`~privpub.viewfile.decide.Reductions`: a column it
no longer depends on there is decoded and checked but not counted): the groups
of a count in batches, each batch in one Rust call
(``_core.parquet.scan_groups``: every chunk decoded by the view's page reader,
:mod:`privpub.viewfile.pages`, its
SHA-256 and range computed in the same pass, the group counted under each condition's
truth table; groups and columns on rayon's pool, the GIL released), each column's digest
and range then compared here with the stats before the group's counts are used. A group
that call cannot take (a chunk that reader does not decode, a condition without a truth
table) or whose digest differs is read by :func:`read_group` (pyarrow when the page
reader's digits do not match) and counted in Python, so a count never rests on
privpub's own page reader.

What a pruned count checks, and what it trusts (:data:`TRUSTED_UNREAD`, which
``privpub inspect`` prints):

- The metadata document is checked on open: the stats parse within bounds,
  each range lies in its attribute's domain, the seal matches (damage to the
  stats is found before any is used), and the groups' rows add up to the
  part's. They are used only if the groups are the file's row groups, row for
  row (:func:`~privpub.viewfile.groupstats.usable_groups`; the Parquet footer
  is used to find the groups, never its statistics).
- Every group it reads is checked against its stats: the rows read must be
  the group's stated count, and each column the conditions name must have its
  stated SHA-256 and exactly its stated least and greatest index (a
  :class:`~privpub.core.errors.StatisticsError` naming the group, the
  attribute, the stated and the observed range). So stats that lie about a
  group that is read are refused, whichever of its attributes the count's
  pruning used; a column no condition names is not read and its stated range
  plays no part in the count (any read of it checks it: ``read_parquet``
  checks every group's stats).
- A skipped or whole-counted group is not read: its stated row count and the
  stated ranges of the condition's attributes are trusted, and the seal is a
  SHA-256 anyone can recompute, not a signature. Stats rewritten and resealed
  for such a group (or rows edited in it) change that count unseen; any count
  that reads the group, and every full pass, refuses them. Only the
  publisher's signature, checked against a trusted key (``trust=``,
  ``--trust``), covers what a count trusts unread.

Files without these stats (written before them, or holding context sets),
or whose stats describe other row groups, are counted by the full pass, which
checks the part digests.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import privpub._core as _core
from privpub.core.errors import ArtifactError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, file_digits, index_width
from privpub.viewfile.decide import READ, WHOLE, Decider, Reductions
from privpub.viewfile.fileview import FileView
from privpub.viewfile.groupstats import GroupStats, check_range, check_rows
from privpub.viewfile.pages import PageReader


@dataclass(frozen=True)
class Part:
    """One part file to count over: its path, how errors name it, its groups."""

    path: str
    where: str
    groups: Sequence[GroupStats]


def count_parts(pages: PageReader, parts: Sequence[Part], conditions: Sequence[Any],
                workers: int | None = None) -> list[int]:
    """Each condition's count over the parts (read by ``pages``, whose schema is
    theirs): every group decided for every condition, and each group some
    condition cannot decide read once, for the columns those conditions name
    (module docstring: what is checked)."""
    schema = pages.schema
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

    footers = _footers(pages, {task[0].path for task in tasks})

    def count_group(task: tuple[Part, int, list[int]]) -> list[tuple[int, int]]:
        part, g, undecided = task
        digits = read_group(pages, part, g, _names(schema, conditions, undecided),
                            footers.get(part.path))
        rows = part.groups[g].rows
        return [(i, conditions[i].count_digits(digits, rows)) for i in undecided]

    # Groups in batches (bounded memory: two batches' column chunks are held at
    # once), each batch in one Rust call; a group it cannot count (a chunk the
    # page reader does not decode, a condition with no truth table, a digest
    # that differs) is read and counted as before, the reads checked there.
    # The reductions and dictionary remaps serve every batch of the count.
    # The next batch's chunks are read and their dictionaries mapped here
    # while the Rust call (GIL released) scans the one before: that reading
    # holds the GIL, and done in turn it left both cores idle.
    # (One batch has nothing to overlap with: it is scanned here, without a thread.)
    batch, reduced, remaps = 4 * (os.cpu_count() or 1), Reductions(schema, conditions), {}
    pipelined = len(tasks) > batch
    with ThreadPoolExecutor(1) if pipelined else contextlib.nullcontext() as scanner:
        submit = scanner.submit if scanner is not None else _now
        pending = None
        for start in range(0, len(tasks) + batch, batch):
            chunk = tasks[start:start + batch]
            ready = _requests(pages, chunk, reduced, footers, remaps) if chunk else None
            if pending is not None:
                done, requests, scanning = pending
                scanned = _results(schema, done, requests, scanning.result())
                missed = [task for task, counts in zip(done, scanned, strict=True)
                          if counts is None]
                for counted in [*(c for c in scanned if c is not None),
                                *_run(count_group, missed, workers)]:
                    for i, n in counted:
                        totals[i] += n
            pending = None if ready is None else (chunk, ready,
                                                  submit(_scan, ready, reduced.tables))
    return totals


def _now(function: Callable[..., Any], *args: Any) -> Future:
    """``function(*args)`` run at once, as a finished Future."""
    done: Future = Future()
    done.set_result(function(*args))
    return done


def _names(schema: Schema, conditions: Sequence[Any], undecided: Sequence[int]) -> list[str]:
    """The columns the ``undecided`` conditions name, in schema order."""
    return [n for n in schema.names if any(n in conditions[i].attributes for i in undecided)]


def _requests(pages: PageReader, tasks: Sequence[tuple[Part, int, list[int]]],
              reduced: Reductions, footers: Mapping[str, pq.FileMetaData],
              remaps: dict) -> list[tuple | None]:
    """Each task's group as ``_core.parquet.scan_groups`` takes it, after the
    names of the columns it reads (:func:`_request`; None when that call cannot
    count it). ``remaps``: the dictionary pages' remaps met so far
    (:meth:`PageReader.chunk`)."""
    requests: list[tuple | None] = []
    fds: dict[str, int] = {}
    try:
        for part, g, undecided in tasks:
            requests.append(_request(pages, part, g, undecided, reduced,
                                     footers.get(part.path), fds, remaps))
    finally:
        for fd in fds.values():
            os.close(fd)
    return requests


def _scan(requests: Sequence[tuple | None], tables: list) -> list:
    """``_core.parquet.scan_groups`` of the groups requested (every group's columns
    decoded, digested and counted in Rust, on both cores, the GIL released):
    per group sent, its counts and its columns' digests and ranges, or None."""
    sent = [r[1:] for r in requests if r is not None]
    return _core.parquet.scan_groups(sent, tables) if sent else []


def _results(schema: Schema, tasks: Sequence[tuple[Part, int, list[int]]],
             requests: Sequence[tuple | None],
             found: Sequence[Any]) -> list[list[tuple[int, int]] | None]:
    """Each task's counts from its scan (``found``: :func:`_scan` of ``requests``),
    each group's digests and ranges checked against its stats here; None for a
    group that call could not count or whose digest differs (the caller reads
    it through :func:`read_group`)."""
    scanned = iter(found)
    results: list[list[tuple[int, int]] | None] = []
    for (part, g, undecided), request in zip(tasks, requests, strict=True):
        got = next(scanned) if request is not None else None
        results.append(None if got is None else
                       _checked(schema, part, g, request[0], undecided, got))
    return results


def _request(pages: PageReader, part: Part, g: int, undecided: Sequence[int],
             reduced: Reductions, meta: pq.FileMetaData | None,
             fds: dict[str, int], remaps: dict) -> tuple | None:
    """A group as ``_core.parquet.scan_groups`` takes it, after the names of the
    columns it reads; or None when it cannot."""
    if meta is None or any(reduced.full[i] is None for i in undecided):
        return None
    wanted = [reduced(i, part.groups[g]) for i in undecided]
    # Every column the conditions name is read, though a reduced table counts
    # fewer: the box that reduced it is the stated ranges, which must be checked
    # against the rows before a count rests on them.
    names = _names(pages.schema, reduced.conditions, undecided)
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
        found = pages.chunk(fds[part.path], g, index[name], name, where, remaps)
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
        check_range(schema, stats, part.where, g, name, found)
    return list(zip(undecided, counts, strict=True))


def group_batches(pages: PageReader, parts: Sequence[Part], names: Sequence[str],
                  workers: int | None = None) -> Iterator[Digits]:
    """Every group's ``names`` columns in order, read (and checked) ahead on a thread
    pool, at most two groups per worker held at once."""
    tasks = [(part, g) for part in parts for g in range(len(part.groups))]
    footers = _footers(pages, {part.path for part in parts})
    yield from _run(lambda task: read_group(pages, task[0], task[1], names,
                                            footers.get(task[0].path)), tasks, workers)


def _footers(pages: PageReader, paths: set[str]) -> dict[str, pq.FileMetaData]:
    """Each file's footer, as the page reader keeps it for the view (one that
    cannot be read is left out: reading its groups says what is wrong)."""
    found = {path: pages.metadata(path) for path in paths}
    return {path: meta for path, meta in found.items() if meta is not None}


def read_group(pages: PageReader, part: Part, g: int, names: Sequence[str],
               meta: pq.FileMetaData | None = None) -> Digits:
    """Group ``g``'s domain indices of ``names``, checked against its stats: its
    rows, each column's SHA-256 and range; an ArtifactError naming the group
    otherwise. Columns are decoded by the page reader ``pages`` where it can
    (``meta``: the file's footer, read once per count), by pyarrow otherwise
    or when those digits do not match (so that reader is never trusted)."""
    schema, where = pages.schema, f"{part.where}, row group {g}"
    meta = pages.metadata(part.path) if meta is None else meta
    try:
        index = {} if meta is None else {meta.schema.column(i).path: i
                                         for i in range(meta.num_columns)}
        fd = None if meta is None else os.open(part.path, os.O_RDONLY)
    except OSError:
        fd = None  # pyarrow reads every column, and says what is wrong
    fast: Digits = {}
    if fd is not None:
        try:
            for name in names:
                if name in index:
                    found = pages.column(fd, g, index[name], name, where)
                    if found is not None:
                        fast[name] = found
        finally:
            os.close(fd)
    rest = [n for n in names if n not in fast]
    digits = {**{n: d for n, (d, _) in fast.items()},
              **(_arrow_group(schema, part, g, rest, where) if rest else {})}
    for name in names:
        found = fast[name][1] if name in fast else None
        if not _matches(schema, part, g, name, digits[name], found, name not in fast):
            if name in fast:  # not this reader's word against the digest: pyarrow's
                digits[name] = _arrow_group(schema, part, g, [name], where)[name]
            if name not in fast or not _matches(schema, part, g, name, digits[name], None,
                                                True):
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
    check_rows(stats, part.where, g, table.num_rows)
    return file_digits(schema, table, names, where)


def _matches(schema: Schema, part: Part, g: int, name: str, digits: np.ndarray,
             found: tuple[int, int] | None, measure: bool) -> bool:
    """Whether a column's digits have group ``g``'s digest; digits that do must
    hold its stated range (``found``, from the page reader's call, or measured
    here when ``measure``): otherwise a StatisticsError (the stats were forged)."""
    stats = part.groups[g]
    column = np.ascontiguousarray(digits, dtype=index_width(schema[name].size).newbyteorder("<"))
    if len(column) != stats.rows or hashlib.sha256(column).hexdigest() != stats.columns[name]:
        return False
    if measure:
        found = (int(column.min()), int(column.max())) if len(column) else None
    check_range(schema, stats, part.where, g, name, found)
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

#: What a count over a file with row-group statistics trusts without reading
#: (module docstring), as ``privpub inspect`` says it.
TRUSTED_UNREAD = (
    "a count reads every row group it cannot decide from the statistics and checks them "
    "there (the group's rows; for each column its condition names, the digest and the exact "
    "least and greatest index); a group it skips or counts whole is not read, and its stated "
    "row count and the stated ranges of the condition's attributes are trusted unread: "
    "opened with trust= (--trust) they are the publisher's, signed; otherwise only sealed, "
    "by a SHA-256 anyone can recompute. read_parquet reads every group and checks all of "
    "its statistics.")


class PrunedFileView(FileView):
    """A :class:`~privpub.viewfile.fileview.FileView` whose counts go by row group
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

    def statistics(self) -> str:
        """What counts over this file rest on: its row-group statistics and
        what they are trusted for unread (:data:`TRUSTED_UNREAD`), or that it
        has none in use."""
        parts = self.scan_parts()
        if parts is None:
            return ("none in use (none stored, context sets, or stored for other row groups): "
                    "every count reads the columns it names in full and checks their digests")
        groups = sum(len(p.groups) for p in parts)
        return f"{groups:,} row groups in {len(parts):,} part file(s); {TRUSTED_UNREAD}"

    def count_many(self, conditions: Sequence[Any]) -> list[int]:
        parts = self.scan_parts()
        if parts is None:
            return super().count_many(conditions)
        return count_parts(self.pages, parts, conditions)

    def counting_batches(self, attributes: Sequence[str]) -> Iterator[Digits]:
        parts = self.scan_parts()
        if parts is None:
            return self.batches(attributes)
        return group_batches(self.pages, parts, attributes)
