"""The digest stored beside a view's rows: what every full read checks.

Per part file (one for a single file, one per range for a Dask release, in
part order) and per context set, the row count and, per column, SHA-256 of the
column's domain indices in file order, each index as a little-endian integer
of the width the column's domain size fixes
(:func:`~privpub.viewfile.columns.index_width`), so neither batch boundaries
nor the width a kernel chose change it (:class:`Digest` takes it,
:class:`PartDigest` holds and checks it, :func:`digest_document` is the
metadata's ``digest`` field). It is checked whenever a column is read in
full, so an edited, reordered, dropped or foreign value is refused. It is not
a signature: whoever rewrites rows and digest consistently has written a new
file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core.errors import ArtifactError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, index_width

#: What the metadata's ``digest`` holds: SHA-256 of each column's domain indices in
#: file order, each a little-endian signed integer of :func:`index_width` bytes.
DIGEST_ALGORITHM = "sha256/domain-index-le"


@dataclass(frozen=True)
class PartDigest:
    """What one stream of rows (a part file's view rows, or a context set) reads
    back as: its row count and, per column, the hex SHA-256 of :class:`Digest`."""

    rows: int
    columns: Mapping[str, str]
    #: Per row group statistics and digests (:class:`~privpub.viewfile.groupstats.GroupStats`)
    #: and their seal; None in a file written before them, or holding context sets.
    groups: Sequence[Any] | None = None
    groups_sha256: str | None = None

    def to_dict(self) -> dict[str, object]:
        groups = {} if self.groups is None else {
            "groups": [g.to_dict() for g in self.groups], "groups_sha256": self.groups_sha256}
        return {"rows": self.rows, "columns": dict(self.columns), **groups}

    def check(self, found: PartDigest, where: str) -> None:
        """``found`` (a pass over some of the columns) must be this: an ArtifactError
        naming ``where`` and the column otherwise."""
        if found.rows != self.rows:
            raise ArtifactError(f"{where}: {found.rows:,} rows read, its metadata says "
                                f"{self.rows:,}; rows were dropped, added or moved")
        for name, value in found.columns.items():
            if value != self.columns.get(name):
                raise ArtifactError(f"{where}: column {name!r} does not match the digest in "
                                    "its metadata; its values were edited or reordered, or "
                                    "come from another file")


class Digest:
    """Per column, SHA-256 (hashlib) of its domain indices in the order the
    batches bring them, each a little-endian signed integer of the width
    :func:`index_width` gives for its domain size; and the rows counted.

    A batch's columns are hashed on a small thread pool (hashlib releases the
    GIL; no copy when the indices already have the column's width) while the
    caller reads or writes the next batch: :meth:`add` first waits for the
    previous batch's hashes, so each column's hash takes its batches in order
    and at most one batch is pending; :meth:`result` waits for the last. A
    batch's arrays must not change until the next :meth:`add` or :meth:`result`."""

    def __init__(self, schema: Schema, names: Sequence[str]):
        self.dtypes = {n: index_width(schema[n].size).newbyteorder("<") for n in names}
        self.hashes = {n: hashlib.sha256() for n in names}
        self.rows = 0
        self._pending: list[Any] = []

    def add(self, batch: Digits, rows: int | None = None) -> Digits:
        """Take a batch in (``rows``: its row count, when it has no column)."""
        self._wait()
        pool = hash_pool()
        self._pending = [pool.submit(hashed.update,
                                     np.ascontiguousarray(batch[name], dtype=self.dtypes[name]))
                         for name, hashed in self.hashes.items()]
        self.rows += len(batch[next(iter(self.hashes))]) if rows is None else rows
        return batch

    def _wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def result(self) -> PartDigest:
        self._wait()
        return PartDigest(self.rows, {n: h.hexdigest() for n, h in self.hashes.items()})


_POOL: list[ThreadPoolExecutor] = []


def hash_pool() -> ThreadPoolExecutor:
    """The digest's threads (two: the machines we run on have few cores, and the
    caller's reading or writing runs beside them), made on first use."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="privpub-digest"))
    return _POOL[0]


# A forked child has no pool threads: it makes its own pool on first use.
os.register_at_fork(after_in_child=_POOL.clear)


def digest_document(parts: Sequence[PartDigest],
                    context: Mapping[str, PartDigest] | None = None) -> dict[str, object]:
    """The metadata's ``digest`` field: the algorithm, each part file's view rows
    in part order, and each context set's rows."""
    return {"algorithm": DIGEST_ALGORITHM, "parts": [p.to_dict() for p in parts],
            "context": {k: v.to_dict() for k, v in (context or {}).items()}}


def digest(batches: Iterator[Digits], schema: Schema, names: Sequence[str]) -> PartDigest:
    """The :class:`Digest` of all the batches."""
    found = Digest(schema, names)
    for batch in batches:
        found.add(batch)
    return found.result()

