"""A row group's dictionary-encoded column read straight into domain indices.

pyarrow reads a dictionary column of a million rows in ~4 ms, most of it
building an Arrow dictionary array, then privpub remaps its indices. The
columns privpub writes are simple: a dictionary page (PLAIN) and data pages
(v1, RLE_DICTIONARY, no nulls), Snappy or uncompressed. For those, the page
reader in Rust (``rust/src/pages.rs``, on the ``polars-parquet-format``
crate's Thrift reader) reads the file's footer (where each chunk lies, its
codec, physical type and levels), the dictionary page (its PLAIN values) and
the data pages. This module orchestrates: it reads the bytes, maps a
dictionary to domain indices once (:func:`~privpub.viewfile.columns.file_digits`:
the same checks as any read) and hands the data pages to
``_core.decode_data_pages`` (or, from :func:`chunk_args`, to
``_core.scan_groups``, which also digests and counts).

Anything else (another page type, encoding, codec or physical type, nulls,
a header or footer the reader refuses) gives None, and the caller reads the
column with pyarrow, which names what is wrong. pyarrow's own view of a
chunk's codec is never asked for: its ``.compression`` aborts the process on
a codec it does not know. Correctness never rests on this reader: the caller
checks the digits against the group's SHA-256 digest and, on a mismatch,
reads the column again with pyarrow before it refuses the file
(:func:`privpub.tables.filescan.read_group`).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from privpub import _core
from privpub.core.errors import PrivpubError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import file_digits, index_width

#: Footers already read, by file identity (device, inode, size, mtime), as
#: ``_core.parquet_footer`` gives them (None: the reader refuses it).
_FOOTERS: dict[tuple, list | None] = {}
_FOOTERS_KEPT = 64
_TAIL = 64 << 10  # bytes read from the end first: a privpub footer is a few KiB


def _footer(fd: int) -> list | None:
    """Per row group (rows, per column its chunk layout or None), or None when
    the page reader cannot read the file's footer."""
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _FOOTERS:
        while len(_FOOTERS) >= _FOOTERS_KEPT:
            del _FOOTERS[next(iter(_FOOTERS))]
        _FOOTERS[key] = _read_footer(fd, info.st_size)
    return _FOOTERS[key]


def _read_footer(fd: int, size: int) -> list | None:
    try:
        take = min(size, _TAIL)
        need, groups = _core.parquet_footer(os.pread(fd, take, size - take), size)
        if need is not None:  # (at most the file: the reader checked)
            need, groups = _core.parquet_footer(os.pread(fd, need, size - need), size)
    except (PrivpubError, OSError):
        return None
    return None if need is not None else groups


def read_column(schema: Schema, fd: int, group: int, column: int, name: str,
                where: str) -> np.ndarray | None:
    """Row group ``group``'s column ``column`` (attribute ``name``) of the file
    open as ``fd``, as domain indices of its attribute's width, or None when it
    is not a chunk this reader decodes (module docstring)."""
    found = chunk_args(schema, fd, group, column, name, where)
    if found is None:
        return None
    try:
        return _core.decode_data_pages(*found, _footer(fd)[group][0])
    except (PrivpubError, ValueError):
        return None


def chunk_args(schema: Schema, fd: int, group: int, column: int, name: str, where: str,
               remaps: dict | None = None) -> tuple | None:
    """Row group ``group``'s column ``column`` as ``_core.decode_data_pages``
    takes it (data pages, snappy, nullable, remap, width: the rows aside), its
    dictionary page read and mapped to domain indices here; None when it is
    not a chunk this reader decodes (module docstring). ``remaps``, kept by
    the caller for one schema, holds the remap of each dictionary page met
    (by its bytes): a view's groups mostly repeat their columns' dictionaries,
    and mapping one costs as much as decoding a chunk of long runs."""
    groups = _footer(fd)
    if groups is None or not 0 <= group < len(groups) or \
            not 0 <= column < len(groups[group][1]) or groups[group][1][column] is None:
        return None
    start, length, snappy, physical, nullable = groups[group][1][column]
    try:
        data = os.pread(fd, length, start)  # (within the file: the reader checked)
        end, values = _core.dictionary_page(data, snappy, physical)
        key = (name, physical, snappy, data[:end])
        remap = (remaps if remaps is not None else {}).get(key)
        if remap is None:
            remap = np.ascontiguousarray(
                file_digits(schema, pa.table({name: _array(values)}), [name], where)[name],
                dtype=np.int64)
            if remaps is not None:
                remaps[key] = remap
    except (PrivpubError, ValueError, OSError, pa.ArrowException):
        return None
    width = index_width(schema[name].size).itemsize * 8
    return np.frombuffer(data, np.uint8, offset=end), snappy, nullable, remap, width


def _array(values: list[str] | np.ndarray) -> pa.Array:
    return pa.array(values) if isinstance(values, np.ndarray) else pa.array(values, pa.string())
