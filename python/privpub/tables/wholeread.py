"""A view file read whole into memory, each column on its own thread.

:meth:`~privpub.tables.published.PublishedView.read_parquet` reads every column
of every row group. Here each (part file, column) is one task on a thread pool
(as many threads as cores): its row groups are decoded in file order by
:mod:`privpub.tables.pages` (Rust, the GIL released) or, for a chunk that reader
does not decode, by pyarrow; copied into the column's place in one array
allocated up front (no list of batches concatenated afterwards); and hashed as
they come (hashlib releases the GIL), so the SHA-256 is that of the column's
domain indices in file order, as the stored digest's.

It checks what a full pass of :class:`~privpub.tables.view.FileView` checks:
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

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.errors import ArtifactError
from privpub.domain.schema import Schema
from privpub.tables import pages
from privpub.tables.view import FileView, row_groups
from privpub.viewfile.columns import file_digits, index_width
from privpub.viewfile.digest import PartDigest


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
        if _read_column(schema, view.files[i], where, footers[i], name, column,
                        view.batch_rows, fast=True) != expected.columns[name]:
            # Not the page reader's word against the digest: pyarrow's.
            found = _read_column(schema, view.files[i], where, footers[i], name, column,
                                 view.batch_rows, fast=False)
            expected.check(PartDigest(expected.rows, {name: found}), where)

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


def _read_column(schema: Schema, path: str, where: str, meta: pq.FileMetaData, name: str,
                 out: np.ndarray, batch_rows: int, fast: bool) -> str:
    """Read column ``name`` of every row group (``meta``: the file's footer) into
    ``out`` and return the hex SHA-256 of its domain indices: through the page
    reader where it decodes a chunk when ``fast``, with pyarrow otherwise."""
    hashed = hashlib.sha256()
    little = out.dtype.newbyteorder("<")
    column = {meta.schema.column(c).path: c for c in range(meta.num_columns)}.get(name)
    start, fd = 0, None
    try:
        if fast and column is not None:  # (a missing column: pyarrow says so)
            fd = os.open(path, os.O_RDONLY)
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            found = None if fd is None else pages.read_column(schema, fd, group, column, name,
                                                              where)
            if found is None or len(found) != rows:
                found = _arrow_chunk(schema, path, where, name, group, batch_rows)
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
    return hashed.hexdigest()


def _arrow_chunk(schema: Schema, path: str, where: str, name: str, group: int,
                 batch_rows: int) -> np.ndarray:
    """One row group's column read by pyarrow (its rows counted against the footer)."""
    pieces = [file_digits(schema, table, [name], where)[name]
              for table in row_groups(path, where, [name], batch_rows, [group])]
    return pieces[0] if len(pieces) == 1 else np.concatenate(
        [np.zeros(0, dtype=index_width(schema[name].size)), *pieces])
