"""A row group's dictionary-encoded column read straight into domain indices.

pyarrow reads a dictionary column of a million rows in ~4 ms, most of it
building an Arrow dictionary array, then privpub remaps its indices. The
columns privpub writes are simple: a dictionary page (PLAIN) and data pages
(v1, RLE_DICTIONARY, no nulls), Snappy or uncompressed. For those, the page
reader in Rust (``rust/src/pages.rs``, on the ``polars-parquet-format``
crate's Thrift reader) reads the file's footer (where each chunk lies, its
codec, physical type and levels), the dictionary page (its PLAIN values) and
the data pages. This module orchestrates (:class:`PageReader`, one per view,
with the footers it has read: :class:`FooterCache`): it reads the bytes, maps
a dictionary to domain indices once
(:func:`~privpub.viewfile.columns.file_digits`: the same checks as any read)
and hands the data pages to ``_core.parquet.decode_data_pages`` (or, from
:meth:`PageReader.chunk`, to ``_core.parquet.scan_groups``, which also digests and
counts).

Anything else (another page type, encoding, codec or physical type, nulls,
a header or footer the reader refuses) gives None, and the caller reads the
column with pyarrow, which names what is wrong. pyarrow's own view of a
chunk's codec is never asked for: its ``.compression`` aborts the process on
a codec it does not know. Correctness never rests on this reader: the caller
checks the digits against the group's SHA-256 digest and, on a mismatch,
reads the column again with pyarrow before it refuses the file
(:func:`privpub.viewfile.scan.read_group`).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import privpub._core as _core
from privpub.core.errors import PrivpubError
from privpub.domain.attributes import IntRange
from privpub.domain.schema import Schema
from privpub.viewfile.columns import file_digits, index_width

#: Footers a view keeps: one per part file it reads (a file replaced while the
#: view is open is a new entry, the old one ages out).
FOOTERS_KEPT = 64
_TAIL = 64 << 10  # bytes read from the end first: a privpub footer is a few KiB


def identity(info: os.stat_result) -> tuple[int, int, int, int]:
    """A file's identity as a footer cache keys it: device, inode, size and
    modification time (ns), from ``os.stat`` or ``os.fstat`` at the read."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


class FooterCache:
    """Footers of the files one view reads, each parsed once, bounded.

    Keyed by the kind of footer (pyarrow's metadata, or the page reader's
    layout) and the file's :func:`identity` taken when it is used, so a file
    replaced (a new inode: privpub's writes rename into place) or rewritten (a
    new size or time) is a new key whose footer is read afresh; at most
    ``kept`` entries, the least recently used dropped. It is owned by one view
    (:class:`~privpub.viewfile.fileview.FileView`, through its
    :class:`PageReader`) and ends with it, and a lock guards it (the scan's and
    the whole read's threads share it). It is safe because no result rests on
    it: a footer that is stale all the same (a rewrite of the same size
    within one mtime tick) can only misplace chunks, whose digits then miss
    the row group's stored SHA-256, and the group is read again by pyarrow
    from the file itself (:func:`privpub.viewfile.scan.read_group`,
    :func:`privpub.viewfile.reader.read_whole`) before anything is counted or
    refused."""

    def __init__(self, kept: int = FOOTERS_KEPT):
        self.kept = kept
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a view pickled for a Dask task, or to another process) starts
        # empty: footers are read where the file is read, and a lock does not travel.
        return {"kept": self.kept}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["kept"])

    def get(self, key: tuple, read: Callable[[], Any]) -> Any:
        """The footer kept under ``key``, or ``read()`` kept there now (read
        outside the lock: two threads may both read a new file's; one is kept)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        found = read()
        with self._lock:
            self._entries[key] = found
            while len(self._entries) > self.kept:
                self._entries.popitem(last=False)
        return found


class PageReader:
    """The one page reader of a view's files (module docstring): the footers
    it has read (:class:`FooterCache`) and the view's schema, which maps each
    dictionary to domain indices."""

    def __init__(self, schema: Schema, footers: FooterCache | None = None):
        self.schema = schema
        self.footers = FooterCache() if footers is None else footers

    def metadata(self, path: str) -> pq.FileMetaData | None:
        """pyarrow's footer of ``path`` (where the row groups and columns are), or
        None when it cannot be read (reading the groups then says what is wrong)."""
        try:
            key = ("arrow", *identity(os.stat(path)))
            return self.footers.get(key, lambda: pq.read_metadata(path))
        except (OSError, pa.ArrowException):
            return None

    def keep_metadata(self, info: os.stat_result, meta: pq.FileMetaData) -> None:
        """Keep ``meta``, pyarrow's footer of the file whose ``os.fstat`` is ``info``,
        read by the caller (the open's check of the part files:
        :func:`~privpub.viewfile.document.check_part`), for :meth:`metadata`."""
        self.footers.get(("arrow", *identity(info)), lambda: meta)

    def layout(self, fd: int) -> list | None:
        """Per row group of the file open as ``fd`` (rows, per column its chunk
        layout or None), or None when the page reader cannot read its footer."""
        info = os.fstat(fd)
        return self.footers.get(("pages", *identity(info)),
                                lambda: _read_layout(fd, info.st_size))

    def column(self, fd: int, group: int, column: int, name: str,
               where: str) -> tuple[np.ndarray, tuple[int, int] | None] | None:
        """Row group ``group``'s column ``column`` (attribute ``name``) of the file
        open as ``fd``, as domain indices of its attribute's width with their
        least and greatest (None when empty: found in the decoding call), or
        None when it is not a chunk this reader decodes (module docstring)."""
        found = self.chunk(fd, group, column, name, where)
        if found is None:
            return None
        try:
            return _core.parquet.decode_data_pages(*found, self.layout(fd)[group][0])
        except (PrivpubError, ValueError):
            return None

    def chunk(self, fd: int, group: int, column: int, name: str, where: str,
              remaps: dict | None = None) -> tuple | None:
        """Row group ``group``'s column ``column`` as ``_core.parquet.decode_data_pages``
        takes it (data pages, snappy, nullable, remap, width: the rows aside), its
        dictionary page read and mapped to domain indices here; None when it is
        not a chunk this reader decodes (module docstring). ``remaps``, kept by
        the caller for one count, holds the remap of each dictionary page met
        (by its bytes): a view's groups mostly repeat their columns' dictionaries,
        and mapping one costs as much as decoding a chunk of long runs."""
        groups = self.layout(fd)
        if groups is None or not 0 <= group < len(groups) or \
                not 0 <= column < len(groups[group][1]) or groups[group][1][column] is None:
            return None
        start, length, snappy, physical, nullable = groups[group][1][column]
        try:
            data = os.pread(fd, length, start)  # (within the file: the reader checked)
            end, values = _core.parquet.dictionary_page(data, snappy, physical)
            key = (name, physical, snappy, data[:end])
            remap = (remaps if remaps is not None else {}).get(key)
            if remap is None:
                remap = _remap(self.schema, name, values, where)
                if remaps is not None:
                    remaps[key] = remap
        except (PrivpubError, ValueError, OSError, pa.ArrowException):
            return None
        width = index_width(self.schema[name].size).itemsize * 8
        return np.frombuffer(data, np.uint8, offset=end), snappy, nullable, remap, width


def _remap(schema: Schema, name: str, values: list[str] | np.ndarray, where: str) -> np.ndarray:
    """A dictionary page's values as domain indices (int64). An integer range's
    dictionary (integers: its values less ``lo``, checked against its size in
    Rust, as :func:`~privpub.viewfile.columns.file_digits` reads a plain integer
    column) goes straight to that check: building an Arrow table for it cost
    ~0.2 ms a chunk, and each row group of an age-sorted view has its own. A
    value outside the domain is a DomainError (the chunk is then read by
    pyarrow, which names it). Any other goes through ``file_digits``."""
    attr = schema[name]
    if isinstance(attr, IntRange) and isinstance(values, np.ndarray):
        (digits,) = _core.codes.to_digits([values], [attr.lo], [None], [attr.size])
    else:
        digits = file_digits(schema, pa.table({name: _array(values)}), [name], where)[name]
    return np.ascontiguousarray(digits, dtype=np.int64)


def _read_layout(fd: int, size: int) -> list | None:
    try:
        take = min(size, _TAIL)
        need, groups = _core.parquet.footer(os.pread(fd, take, size - take), size)
        if need is not None:  # (at most the file: the reader checked)
            need, groups = _core.parquet.footer(os.pread(fd, need, size - need), size)
    except (PrivpubError, OSError):
        return None
    return None if need is not None else groups


def _array(values: list[str] | np.ndarray) -> pa.Array:
    return pa.array(values) if isinstance(values, np.ndarray) else pa.array(values, pa.string())
