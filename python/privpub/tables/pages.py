"""A row group's dictionary-encoded column read straight into domain indices.

pyarrow reads a dictionary column of a million rows in ~4 ms, most of it
building an Arrow dictionary array, then privpub remaps its indices. The
columns privpub writes are simple: a dictionary page (PLAIN) and data pages
(v1, RLE_DICTIONARY, no nulls), Snappy or uncompressed. For those, this
module reads the dictionary page (Thrift compact header parsed here, pyarrow
decompresses it), maps the dictionary to domain indices once
(:func:`~privpub.tables.view.file_digits`: the same checks as any read), and
decodes the data pages in Rust through that map (``_core.decode_data_pages``:
headers, Snappy, definition levels and values in one call per column chunk;
or ``_core.scan_groups``, which also digests and counts, from
:func:`chunk_args`).

Anything else (another page type, encoding, codec or physical type, nulls,
a header it cannot parse) gives None, and the caller reads the column with
pyarrow. Correctness never rests on this reader: the caller checks the
digits against the group's SHA-256 digest and, on a mismatch, reads the
column again with pyarrow before it refuses the file
(:func:`privpub.tables.filescan.read_group`).
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pyarrow as pa

from privpub import _core
from privpub.core.errors import PrivpubError
from privpub.domain.schema import Schema
from privpub.tables.view import file_digits, index_width

_DICTIONARY_PAGE = 2
_PLAIN, _PLAIN_DICTIONARY = 0, 2
_CODECS = {"UNCOMPRESSED": None, "SNAPPY": "snappy"}


class _Unknown(Exception):
    """The chunk is not in a form this reader decodes (pyarrow reads it)."""


class _Compact:
    """Just enough of Thrift's compact protocol to read a PageHeader."""

    def __init__(self, data: bytes, pos: int):
        self.data, self.pos = data, pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise _Unknown("truncated page header")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 70:
                raise _Unknown("varint too long")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def struct(self) -> dict[int, object]:
        """The fields of a struct: ints and nested structs by id; others skipped."""
        fields, last = {}, 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == 0:
                return fields
            last = last + (head >> 4) if head >> 4 else self.zigzag()
            fields[last] = self.value(kind)

    def value(self, kind: int) -> object:
        if kind in (1, 2):
            return kind == 1
        if kind == 3:
            return self.byte()
        if kind in (4, 5, 6):
            return self.zigzag()
        if kind == 7:
            self.pos += 8
            return None
        if kind == 8:
            length = self.varint()  # (read before pos, which varint() moves)
            self.pos += length
            return None
        if kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.value(head & 0x0F)
            return None
        if kind == 12:
            return self.struct()
        raise _Unknown(f"Thrift type {kind}")


def read_column(schema: Schema, fd: int, meta: object, group: int, column: int, name: str,
                where: str) -> np.ndarray | None:
    """Row group ``group``'s column ``column`` (attribute ``name``) as domain
    indices of its attribute's width, or None when it is not a chunk this
    reader decodes (module docstring)."""
    found = chunk_args(schema, fd, meta, group, column, name, where)
    if found is None:
        return None
    try:
        return _core.decode_data_pages(*found, meta.row_group(group).num_rows)
    except (PrivpubError, ValueError):
        return None


def chunk_args(schema: Schema, fd: int, meta: object, group: int, column: int, name: str,
               where: str, remaps: dict | None = None) -> tuple | None:
    """Row group ``group``'s column ``column`` as ``_core.decode_data_pages``
    takes it (data pages, snappy, nullable, remap, width: the rows aside), its
    dictionary page read and mapped to domain indices here; None when it is
    not a chunk this reader decodes (module docstring). ``remaps``, kept by
    the caller for one schema, holds the remap of each dictionary page met
    (by its bytes): a view's groups mostly repeat their columns' dictionaries,
    and mapping one costs as much as decoding a chunk of long runs."""
    chunk = meta.row_group(group).column(column)
    codec = chunk.compression
    if codec not in _CODECS or not chunk.has_dictionary_page or \
            chunk.physical_type not in ("BYTE_ARRAY", "INT64", "INT32"):
        return None
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    try:
        data = os.pread(fd, chunk.total_compressed_size, start)
        nullable = meta.schema.column(column).max_definition_level > 0
        return _prepare(schema, data, _CODECS[codec], chunk.physical_type, name, nullable,
                        where, {} if remaps is None else remaps)
    except (_Unknown, PrivpubError, ValueError, OSError, pa.ArrowException, struct.error):
        return None


def _prepare(schema: Schema, data: bytes, codec: str | None, physical: str, name: str,
             nullable: bool, where: str, remaps: dict) -> tuple:
    """The dictionary page here (its values mapped to domain indices with the
    checks of any read); the data pages left to Rust."""
    header = _Compact(data, 0)
    page = header.struct()
    size, info = page.get(3), page.get(7)
    if page.get(1) != _DICTIONARY_PAGE or not isinstance(info, dict) or \
            info.get(2) not in (_PLAIN, _PLAIN_DICTIONARY) or not isinstance(size, int) or \
            not 0 <= size <= len(data) - header.pos:
        raise _Unknown("dictionary page")
    key = (name, physical, codec, data[:header.pos + size])
    remap = remaps.get(key)
    if remap is None:
        body = _body(data[header.pos:header.pos + size], codec, page.get(2))
        values = _plain(body, physical, info.get(1))
        remap = remaps[key] = np.ascontiguousarray(
            file_digits(schema, pa.table({name: values}), [name], where)[name], dtype=np.int64)
    width = index_width(schema[name].size).itemsize * 8
    return (np.frombuffer(data, np.uint8, offset=header.pos + size), codec is not None,
            nullable, remap, width)


def _body(raw: bytes, codec: str | None, uncompressed: object) -> bytes:
    if codec is None:
        return raw
    if not isinstance(uncompressed, int) or uncompressed < 0:
        raise _Unknown("page size")
    return pa.decompress(raw, decompressed_size=uncompressed, codec=codec).to_pybytes()


def _plain(body: bytes, physical: str, count: object) -> pa.Array:
    """A dictionary page's values (PLAIN)."""
    if not isinstance(count, int) or count < 0:
        raise _Unknown("dictionary size")
    if physical in ("INT64", "INT32"):
        dtype = "<i8" if physical == "INT64" else "<i4"
        return pa.array(np.frombuffer(body, dtype, count=count))
    values, pos = [], 0
    for _ in range(count):
        length = struct.unpack_from("<I", body, pos)[0]
        values.append(body[pos + 4:pos + 4 + length].decode("utf-8"))
        pos += 4 + length
    return pa.array(values, pa.string())
