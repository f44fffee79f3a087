"""Parquet files taken apart and put back together byte by byte, for tests that
edit what pyarrow will not write: a footer edited in place
(tests/viewfile/test_tampering.py), page headers with hostile fields and footers with
hostile values (tests/viewfile/test_pages_hostile.py).

Thrift's compact protocol is parsed here only as far as well-formed files need
(the files edited are written by pyarrow); the hostile bytes are added raw."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
#: A list's boolean element type as most writers (and Thrift's own readers) take
#: it; the compact-protocol spec says 2, which some readers refuse.
BOOL_ELEMENT = 1


class Thrift:
    """Just enough of Thrift's compact protocol to read and rewrite FileMetaData
    and page headers (structs as lists of [field id, type, value])."""

    def __init__(self, data=b"", pos=0):
        self.data, self.pos, self.out = data, pos, bytearray()

    def _byte(self):
        self.pos += 1
        return self.data[self.pos - 1]

    def _varint(self):
        shift = result = 0
        while True:
            b = self._byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def _int(self):
        n = self._varint()
        return (n >> 1) ^ -(n & 1)

    def read(self, kind):
        if kind in (TRUE, FALSE):
            return kind == TRUE
        if kind == BYTE:
            return self._byte()
        if kind in (I16, I32, I64):
            return self._int()
        if kind in (DOUBLE, BINARY):
            n = 8 if kind == DOUBLE else self._varint()
            self.pos += n
            return bytes(self.data[self.pos - n:self.pos])
        if kind in (LIST, SET):
            head = self._byte()
            size, elem = head >> 4, head & 0x0F
            size = self._varint() if size == 15 else size
            if elem in (TRUE, FALSE):
                return elem, [self._byte() == 1 for _ in range(size)]
            return elem, [self.read(elem) for _ in range(size)]
        if kind == MAP:
            size = self._varint()
            types = self._byte() if size else 0
            return types, [(self.read(types >> 4), self.read(types & 15)) for _ in range(size)]
        fields, last = [], 0
        while (head := self._byte()) != STOP:
            last = last + (head >> 4) if head >> 4 else self._int()
            fields.append([last, head & 0x0F, self.read(head & 0x0F)])
        return fields

    def _put_varint(self, n):
        while n > 0x7F:
            self.out.append(n & 0x7F | 0x80)
            n >>= 7
        self.out.append(n)

    def write(self, kind, value):
        if kind == BYTE:
            self.out.append(value)
        elif kind in (I16, I32, I64):
            self._put_varint((value << 1) ^ (value >> 63))
        elif kind == DOUBLE:
            self.out += value
        elif kind == BINARY:
            self._put_varint(len(value))
            self.out += value
        elif kind in (LIST, SET):
            elem, items = value
            if len(items) < 15:
                self.out.append(len(items) << 4 | elem)
            else:
                self.out.append(0xF0 | elem)
                self._put_varint(len(items))
            for item in items:
                if elem in (TRUE, FALSE):
                    self.out.append(1 if item else 2)
                else:
                    self.write(elem, item)
        elif kind == MAP:
            types, items = value
            self._put_varint(len(items))
            if items:
                self.out.append(types)
            for k, v in items:
                self.write(types >> 4, k)
                self.write(types & 15, v)
        elif kind == STRUCT:
            last = 0
            for fid, field_kind, v in value:
                field_kind = (TRUE if v else FALSE) if field_kind in (TRUE, FALSE) \
                    else field_kind
                if 0 < fid - last <= 15:
                    self.out.append((fid - last) << 4 | field_kind)
                else:
                    self.out.append(field_kind)
                    self._put_varint((fid << 1) ^ (fid >> 63))
                if field_kind not in (TRUE, FALSE):
                    self.write(field_kind, v)
                last = fid
            self.out.append(STOP)


def field(fields, fid):
    """The [id, type, value] of field ``fid`` of a struct read by :class:`Thrift`."""
    return next(f for f in fields if f[0] == fid)


def encode(kind, value) -> bytes:
    writer = Thrift()
    writer.write(kind, value)
    return bytes(writer.out)


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def unknown_field(kind: int, value: bytes, fid: int = 100) -> bytes:
    """A field a reader must pass over: its header (long form, id ``fid``) and
    ``value``, the raw bytes of its value."""
    return bytes([kind]) + varint((fid << 1) ^ (fid >> 63)) + value


def with_field(struct_bytes: bytes, extra: bytes) -> bytes:
    """A written struct with ``extra`` (raw field bytes) before its stop byte."""
    assert struct_bytes[-1] == STOP
    return struct_bytes[:-1] + extra + bytes([STOP])


def edit_footer(path, out, edit):
    """Copy a Parquet file with its footer (FileMetaData) edited by ``edit``; the
    data pages are untouched. FileMetaData: 3 num_rows, 4 row_groups (RowGroup:
    3 num_rows), 5 key_value_metadata (KeyValue: 1 key, 2 value)."""
    data = Path(path).read_bytes()
    length = struct.unpack("<I", data[-8:-4])[0]
    meta = Thrift(data[-8 - length:-8]).read(STRUCT)
    edit(meta)
    writer = Thrift()
    writer.write(STRUCT, meta)
    Path(out).write_bytes(data[:-8 - length] + bytes(writer.out)
                          + struct.pack("<I", len(writer.out)) + b"PAR1")
    return out


# ---- a file laid out again, page by page ---------------------------------------------------------

#: ColumnMetaData fields: 4 codec, 6 total_uncompressed_size, 7 total_compressed_size,
#: 9 data_page_offset, 11 dictionary_page_offset; ColumnChunk: 2 file_offset, 3 meta_data;
#: RowGroup: 1 columns, 5 file_offset, 6 total_compressed_size; PageHeader: 1 type,
#: 2 uncompressed_page_size, 3 compressed_page_size, 5 data page header, 7 dictionary.
CODEC, COMPRESSED, DATA_OFFSET, DICT_OFFSET = 4, 7, 9, 11


class Layout:
    """A Parquet file's footer and the pages of each column chunk, each page as
    [header fields, header bytes, body]; :meth:`bytes` writes the file again
    with every offset and size recomputed, so a page header may be edited or
    given raw fields (its ``header bytes``) of any length."""

    def __init__(self, data: bytes):
        length = struct.unpack("<I", data[-8:-4])[0]
        self.meta = Thrift(data[-8 - length:-8]).read(STRUCT)
        self.tail = b""  # raw fields added at the end of FileMetaData
        self.chunks: list[list[list]] = []  # per (group, column) in order, its pages
        for group in field(self.meta, 4)[2][1]:
            for chunk in field(group, 1)[2][1]:
                meta = field(chunk, 3)[2]
                start = next((f[2] for f in meta if f[0] == DICT_OFFSET),
                             field(meta, DATA_OFFSET)[2])
                end, pos, pages = start + field(meta, COMPRESSED)[2], start, []
                while pos < end:
                    reader = Thrift(data, pos)
                    header = reader.read(STRUCT)
                    size = field(header, 3)[2]
                    pages.append([header, encode(STRUCT, header),
                                  data[reader.pos:reader.pos + size]])
                    pos = reader.pos + size
                self.chunks.append(pages)

    def column_meta(self, chunk: int) -> list:
        """ColumnMetaData of chunk ``chunk`` (groups' chunks in order)."""
        chunks = [c for g in field(self.meta, 4)[2][1] for c in field(g, 1)[2][1]]
        return field(chunks[chunk], 3)[2]

    def bytes(self, edit_meta: Callable[[list], None] | None = None) -> bytes:
        out = bytearray(b"PAR1")
        chunks = iter(self.chunks)
        for group in field(self.meta, 4)[2][1]:
            group_start, group_size = len(out), 0
            for chunk in field(group, 1)[2][1]:
                meta, start = field(chunk, 3)[2], len(out)
                data_pages = False
                for i, (fields, header, body) in enumerate(next(chunks)):
                    kind = next((f[2] for f in fields if f[0] == 1), 2 if i == 0 else 0)
                    if kind != 2 and not data_pages:  # the first data page
                        field(meta, DATA_OFFSET)[2], data_pages = len(out), True
                    out += header + body
                for f in meta:
                    if f[0] == DICT_OFFSET:
                        f[2] = start
                field(meta, COMPRESSED)[2] = len(out) - start
                for f in chunk:
                    if f[0] == 2:
                        f[2] = start
                group_size += len(out) - start
            for f in group:
                if f[0] == 5:
                    f[2] = group_start
                elif f[0] == 6:
                    f[2] = group_size
        if edit_meta is not None:
            edit_meta(self.meta)
        footer = with_field(encode(STRUCT, self.meta), self.tail) if self.tail else \
            encode(STRUCT, self.meta)
        return bytes(out) + footer + struct.pack("<I", len(footer)) + b"PAR1"
