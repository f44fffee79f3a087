"""Opening a view file, and reading one whole.

:func:`open_view` is what :meth:`privpub.PublishedView.open` reads of the
file: the document (:func:`~privpub.viewfile.document.read_document`), each
part file's columns and row groups against it
(:func:`~privpub.viewfile.document.check_part`), the row groups' statistics
kept only where they describe the file's groups
(:func:`~privpub.viewfile.groupstats.usable_groups`); the rows themselves as a
:class:`~privpub.viewfile.scan.PrunedFileView`, each column checked against its
digest when first read in full, and the context sets (small) read now.

:meth:`~privpub.PublishedView.read_parquet` reads every column of every row
group (:func:`read_whole`, through :func:`read_digits`). Here each (part file,
column) is one task on a thread pool (as many threads as cores): its row
groups are decoded in file order by the view's page reader
(:mod:`privpub.viewfile.pages`, Rust, the GIL released) or, for a chunk that
reader does not decode, by pyarrow; copied into the column's place in one
array allocated up front (no list of batches concatenated afterwards); and
hashed as they come (hashlib releases the GIL), so the SHA-256 is that of the
column's domain indices in file order, as the stored digest's.

It checks what a full pass of :class:`~privpub.viewfile.fileview.FileView` checks:
each row group holds the rows its footer says (the page reader yields exactly
that many or fails; pyarrow's are counted), the groups hold the part's stored
rows, every index is in its domain (a dictionary is mapped with the checks of
:func:`~privpub.viewfile.columns.file_digits`; an index outside its dictionary makes
the page reader fail and pyarrow's read name it), and each column's digest is
the stored one. The page reader is never trusted alone: a column whose digest
does not match is read again with pyarrow before the file is refused.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.artifacts import shown
from privpub.core.errors import ArtifactError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import file_digits, index_width
from privpub.viewfile.digest import PartDigest
from privpub.viewfile.document import ViewDocument, check_part, read_document
from privpub.viewfile.fileview import FileView, row_groups
from privpub.viewfile.groupstats import check_range, check_rows, usable_groups
from privpub.viewfile.pages import PageReader
from privpub.viewfile.scan import PrunedFileView


@dataclass(frozen=True)
class OpenedView:
    """A view file as :func:`open_view` found it: ``where`` names it in errors."""

    where: str
    document: ViewDocument
    rows: PrunedFileView

    def context_sets(self) -> dict[str, np.ndarray]:
        """Each context set's codes, read now (a full pass: its digest checked)."""
        stored = self.document
        return {name: FileView(stored.schema, self.where, size,
                               [stored.context_digests[name]], name).codes()
                for name, size in stored.context_sizes.items()}


def open_view(path: str | os.PathLike, trust: Any = None) -> OpenedView:
    """The view file (or Dask release directory) at ``path``: its document (and
    signature, against ``trust`` if given) and part files checked now (module
    docstring), its rows on file."""
    where = os.fspath(path)
    stored = read_document(path, trust)
    schema, context_sizes, parts = stored.schema, stored.context_sizes, stored.parts
    if context_sizes and os.path.isdir(where):
        raise ArtifactError(f"{where!r}: a directory release holds no context sets, its "
                            f"metadata lists {shown(sorted(context_sizes))}")
    rows = PrunedFileView(schema, where, stored.rows, parts, "" if context_sizes else None)
    for index, file in enumerate(rows.files):
        sizes = check_part(file, rows.where(index), schema, bool(context_sizes),
                           parts[index].rows + sum(context_sizes.values()), rows.pages)
        # Row-group statistics count only for the row groups they describe (a
        # file rewritten with other groups is counted by full passes).
        rows.expected[index] = usable_groups(parts[index], sizes, rows.where(index))
    return OpenedView(where, stored, rows)


def read_digits(view: FileView) -> list[np.ndarray]:
    """Every attribute's domain indices (schema order), read in one full pass
    that checks every part's row groups, rows and digests: :func:`read_whole`,
    or the view's batches for a file that also holds context sets."""
    digits = read_whole(view)
    if digits is not None:
        return digits
    batches = list(view.batches())
    return [batches[0][a.name] if len(batches) == 1 else np.concatenate(
        [np.zeros(0, dtype=index_width(a.size)), *(b[a.name] for b in batches)])
        for a in view.schema]


def read_whole(view: FileView, workers: int | None = None) -> list[np.ndarray] | None:
    """Every attribute's domain indices over all the part files (schema order),
    checked against the stored digests (module docstring); None for a file that
    also holds context sets (its view rows are a selection:
    :meth:`FileView.batches` reads them) or a view with no digest to check."""
    if view.label is not None or view.expected is None:
        return None
    schema = view.schema
    footers = [_footer(path, view.where(i)) for i, path in enumerate(view.files)]
    starts = [0]
    for index, (meta, part) in enumerate(zip(footers, view.expected, strict=True)):
        if meta.num_rows != part.rows:  # the file changed since it was opened
            raise ArtifactError(f"{view.where(index)}: {meta.num_rows:,} rows read, its "
                                f"metadata says {part.rows:,}; rows were dropped, added or "
                                "moved")
        starts.append(starts[-1] + part.rows)
    out = [np.empty(starts[-1], dtype=index_width(a.size)) for a in schema]
    tasks = [(i, j) for i in range(len(view.files)) for j in range(len(schema))]

    def run(task: tuple[int, int]) -> None:
        i, j = task
        name = schema.names[j]
        column = out[j][starts[i]:starts[i + 1]]
        where, expected = view.where(i), view.expected[i]
        found, ranges = _read_column(view.pages, view.files[i], where, footers[i], name,
                                     column, view.batch_rows, fast=True)
        if found != expected.columns[name]:
            # Not the page reader's word against the digest: pyarrow's.
            found, ranges = _read_column(view.pages, view.files[i], where, footers[i], name,
                                         column, view.batch_rows, fast=False)
            expected.check(PartDigest(expected.rows, {name: found}), where)
        # The column is the one digested: each group's statistics must be its own.
        for g, (stats, (rows, found_range)) in enumerate(zip(expected.groups or (), ranges,
                                                             strict=expected.groups is not None)):
            check_rows(stats, where, g, rows)
            check_range(schema, stats, where, g, name, found_range)

    workers = workers or min(os.cpu_count() or 1, len(tasks))
    pool = ThreadPoolExecutor(workers, thread_name_prefix="privpub-read")
    try:
        list(pool.map(run, tasks))  # the first failure, in task order, is raised
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure, the columns not begun are not read
    return out


def _footer(path: str, where: str) -> pq.FileMetaData:
    try:
        return pq.read_metadata(path)
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{where}: not a readable Parquet file: "
                            f"{str(exc).splitlines()[0]}") from None


def _read_column(pages: PageReader, path: str, where: str, meta: pq.FileMetaData, name: str,
                 out: np.ndarray, batch_rows: int,
                 fast: bool) -> tuple[str, list[tuple[int, tuple[int, int] | None]]]:
    """Read column ``name`` of every row group (``meta``: the file's footer) into
    ``out``: the hex SHA-256 of its domain indices, and per row group its rows
    and least and greatest index (None when empty); through the page reader
    ``pages`` where it decodes a chunk when ``fast`` (the range found in the
    same Rust call), with pyarrow otherwise."""
    schema = pages.schema
    hashed = hashlib.sha256()
    little = out.dtype.newbyteorder("<")
    column = {meta.schema.column(c).path: c for c in range(meta.num_columns)}.get(name)
    start, fd, ranges = 0, None, []
    try:
        if fast and column is not None:  # (a missing column: pyarrow says so)
            fd = os.open(path, os.O_RDONLY)
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            got = None if fd is None else pages.column(fd, group, column, name, where)
            found, found_range = (None, None) if got is None else got
            if found is None or len(found) != rows:
                found = _arrow_chunk(schema, path, where, name, group, batch_rows)
                found_range = (int(found.min()), int(found.max())) if len(found) else None
            ranges.append((len(found), found_range))
            if start + len(found) > len(out):
                raise ArtifactError(f"{where}: more rows read than its metadata says "
                                    f"({len(out):,}); rows were added")
            out[start:start + len(found)] = found
            hashed.update(np.ascontiguousarray(out[start:start + len(found)], dtype=little))
            start += len(found)
    except OSError as exc:
        raise ArtifactError(f"{where}: its rows cannot be read: {exc}") from None
    finally:
        if fd is not None:
            os.close(fd)
    if start != len(out):
        raise ArtifactError(f"{where}: {start:,} rows read, its metadata says {len(out):,}; "
                            "rows were dropped, added or moved")
    return hashed.hexdigest(), ranges


def _arrow_chunk(schema: Schema, path: str, where: str, name: str, group: int,
                 batch_rows: int) -> np.ndarray:
    """One row group's column read by pyarrow (its rows counted against the footer)."""
    pieces = [file_digits(schema, table, [name], where)[name]
              for table in row_groups(path, where, [name], batch_rows, [group])]
    return pieces[0] if len(pieces) == 1 else np.concatenate(
        [np.zeros(0, dtype=index_width(schema[name].size)), *pieces])
