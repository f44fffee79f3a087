"""Where a view file's rows are: the file, or a Dask release's directory of parts;
the row-group size privpub writes; the column that tells context sets apart.

A release is one Parquet file, or a directory a Dask release wrote: its
metadata in an empty Parquet file (:data:`METADATA_FILE`), its rows in part
files (:data:`PART_FILES`) read in partition order.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Rows per batch when streaming (decoding, writing, reading a file), and the
#: row-group size of the files privpub writes.
CHUNK_ROWS = 1 << 20
#: In a file holding a view and its context sets: which set a row belongs to
#: ("" for the view's own rows). Absent when there is no context.
SET_COLUMN = "__privpub_set"

#: A release written as a directory (by Dask, one file per partition): the file
#: holding the metadata (an empty Parquet file); the rows are in ``part.*.parquet``.
METADATA_FILE = "_common_metadata"
#: The names of a directory release's part files (``part.<i>.parquet``).
PART_FILES = "part.*.parquet"


def part_files(path: str | os.PathLike) -> list[str]:
    """The files holding a view's rows: the file itself, or a directory's
    ``part.<i>.parquet`` files in partition order."""
    if not os.path.isdir(path):
        return [os.fspath(path)]
    parts = sorted(Path(path).glob(PART_FILES),
                   key=lambda p: (len(p.name), p.name))
    return [str(p) for p in parts]


def metadata_file(path: str | os.PathLike) -> str:
    """Where a view's metadata is: the file itself, or a directory's METADATA_FILE."""
    return os.path.join(path, METADATA_FILE) if os.path.isdir(path) else os.fspath(path)

