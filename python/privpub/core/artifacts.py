"""Parquet files with privpub metadata: the storage every artifact and release uses.

A file's key-value metadata holds, under the key ``privpub``, a JSON
document with the mechanism, its parameters, the schema and the library
version (:func:`encode_metadata`; read by :func:`footer_metadata` and
:func:`parse_metadata`). Reading it back gives the
same frame (values and dtypes, via pyarrow's pandas metadata) and the same
metadata. Table releases (:mod:`privpub.viewfile.document`) use the same metadata key
and document with Arrow columns of their own.

A file is untrusted input, so its metadata is parsed within bounds
(:func:`load_json`): at most ``MAX_METADATA_BYTES`` of UTF-8, nesting at most
``MAX_DEPTH`` deep (checked by a scan that does not recurse, before parsing),
at most ``MAX_CONTAINERS`` objects and arrays, integer literals of at most
``MAX_INT_DIGITS`` digits and numbers of at most ``MAX_NUMBER_CHARS``
characters, no NaN or Infinity. Anything else is an :class:`ArtifactError`
saying which bound it broke, never a ``RecursionError`` or ``ValueError``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.files import PARQUET, atomic_output

METADATA_KEY = b"privpub"
#: The signature of the document under METADATA_KEY, beside it (:mod:`privpub.core.signing`).
SIGNATURE_KEY = b"privpub.signature"
#: Column dtypes that pyarrow's pandas metadata does not bring back by itself.
DTYPES_KEY = b"privpub.dtypes"
FORMAT_VERSION = 1

#: Bounds on a file's metadata document (:func:`load_json`). A legitimate document
#: is a few KB, or a few MB when a schema lists a million category values.
MAX_METADATA_BYTES = 64 << 20
MAX_DEPTH = 64
MAX_CONTAINERS = 1 << 20
#: 2^128 (the largest domain size) has 39 digits.
MAX_INT_DIGITS = 40
MAX_NUMBER_CHARS = 64

_SCAN_CHUNK = 1 << 20
_QUOTE = ord('"')
_BRACKETS = tuple(b"[{]}")


def _check_keys(value: Any, where: str) -> None:
    """JSON turns non-string dict keys into strings; refuse rather than coerce."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ParameterError(f"artifact metadata keys must be strings, "
                                     f"got {k!r} in {where}")
            _check_keys(v, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_keys(v, f"{where}[{i}]")


def _dtype_notes(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Object columns (read back as 'str' under pandas >= 3) and categoricals whose
    categories are not 'str' (Parquet keeps only string dictionaries)."""
    notes = []
    for name, dtype in frame.dtypes.items():
        if dtype == np.dtype(object):
            notes.append({"name": name, "dtype": "object"})
        elif isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype != "str":
            notes.append({"name": name, "dtype": "category",
                          "categories": dtype.categories.tolist(),
                          "categories_dtype": str(dtype.categories.dtype),
                          "ordered": bool(dtype.ordered)})
    return notes


def _restore_dtypes(frame: pd.DataFrame, notes: list[dict[str, Any]]) -> pd.DataFrame:
    for note in notes:
        name = note["name"]
        if note["dtype"] == "object":
            frame[name] = frame[name].astype(object)
        else:
            categories = pd.Index(note["categories"], dtype=note["categories_dtype"])
            frame[name] = pd.Categorical(frame[name], categories=categories,
                                         ordered=note["ordered"])
    return frame


def encode_metadata(metadata: dict[str, Any]) -> bytes:
    """``metadata`` as the JSON document stored under the key ``privpub``."""
    _check_keys(metadata, "metadata")
    try:
        return json.dumps(metadata, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"artifact metadata must be JSON-serialisable: {exc}") from exc


def write_parquet(path: str | os.PathLike, frames: Iterable[pd.DataFrame],
                  metadata: dict[str, Any], *, overwrite: bool = False) -> None:
    """Write frames (same columns and dtypes) as row groups of one Parquet file,
    with ``metadata`` as JSON under the key ``privpub``. Streaming: only one
    frame is in memory at a time. The file appears whole or not at all
    (:func:`privpub.core.files.atomic_output`): written beside ``path``, its
    footer and row count checked, then renamed; an existing ``path`` is
    refused unless ``overwrite=True``."""
    document = encode_metadata(metadata)
    with atomic_output(path, overwrite=overwrite, suffix=PARQUET) as temp:
        rows = _write_frames(temp, frames, document)
        found = pq.ParquetFile(temp).metadata
        parse_metadata(path, pa.schema([], metadata=found.metadata or {}))
        if found.num_rows != rows:
            raise ArtifactError(f"{os.fspath(path)!r}: {found.num_rows:,} rows written back, "
                                f"{rows:,} given")


def _write_frames(path: str, frames: Iterable[pd.DataFrame], document: bytes) -> int:
    """The frames as row groups of one file (metadata in its schema); the rows written."""
    writer, rows = None, 0
    try:
        for frame in frames:
            # A default RangeIndex is stored as metadata only; any other index is
            # kept as columns and restored on read (nothing is dropped).
            table = pa.Table.from_pandas(frame, preserve_index=None)
            if writer is None:
                meta = dict(table.schema.metadata or {})
                meta[METADATA_KEY] = document
                try:
                    meta[DTYPES_KEY] = json.dumps(_dtype_notes(frame)).encode()
                except TypeError as exc:
                    raise ParameterError(f"a column's categories cannot be stored as JSON: "
                                         f"{exc}") from exc
                writer = pq.ParquetWriter(path, table.schema.with_metadata(meta))
            writer.write_table(table.replace_schema_metadata(writer.schema.metadata))
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise ParameterError("write_parquet needs at least one frame (it may be empty)")
    return rows


def read_frame(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The frame (dtypes restored) and privpub metadata of a file from :func:`write_parquet`."""
    table = pq.read_table(path)
    meta = parse_metadata(path, table.schema)
    notes = load_json((table.schema.metadata or {}).get(DTYPES_KEY, b"[]"),
                      f"{os.fspath(path)!r}: dtype notes")
    return _restore_dtypes(table.to_pandas(), notes), meta


def _nesting(raw: bytes, where: str) -> None:
    """Refuse a document nested deeper than MAX_DEPTH or holding more than
    MAX_CONTAINERS objects and arrays, without recursing, in linear time and in
    memory bounded by a chunk: escaped backslashes, then escaped quotes, are
    removed (left to right, as JSON pairs them); then a byte is inside a string
    when an odd number of quotes precede it, and the depth is the running sum
    of the brackets outside strings, taken a chunk at a time."""
    data = np.frombuffer(raw.replace(b"\\\\", b"").replace(b'\\"', b""), dtype=np.uint8)
    quotes = depth = opened = 0
    for start in range(0, len(data), _SCAN_CHUNK):
        piece = data[start:start + _SCAN_CHUNK]
        seen = quotes + np.cumsum(piece == _QUOTE, dtype=np.int64)
        outside = (seen & 1) == 0
        opening = outside & ((piece == _BRACKETS[0]) | (piece == _BRACKETS[1]))
        closing = outside & ((piece == _BRACKETS[2]) | (piece == _BRACKETS[3]))
        running = depth + np.cumsum(opening.astype(np.int64) - closing)
        opened += int(opening.sum())
        if len(running) and running.max() > MAX_DEPTH:
            raise ArtifactError(f"{where} is nested more than {MAX_DEPTH} deep")
        if opened > MAX_CONTAINERS:
            raise ArtifactError(f"{where} holds more than {MAX_CONTAINERS:,} objects and "
                                "arrays")
        quotes, depth = int(seen[-1]), int(running[-1])


def _number(limit: int, kind: str, where: str, parse: Any) -> Any:
    def checked(text: str) -> Any:
        if len(text.lstrip("-")) > limit:
            raise ArtifactError(f"{where} holds {kind} of {len(text.lstrip('-')):,} "
                                f"characters (at most {limit})")
        return parse(text)
    return checked


def _object(where: str) -> Any:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) != len(pairs):  # readers differ on which copy wins: refuse both
            seen: set[str] = set()
            twice = next(k for k, _ in pairs if k in seen or seen.add(k))
            raise ArtifactError(f"{where} holds the key {shown(twice)} twice in one object")
        return found
    return build


def _constant(where: str) -> Any:
    def refuse(name: str) -> Any:
        raise ArtifactError(f"{where} holds {name}, which is not a JSON number")
    return refuse


def load_json(raw: bytes | str, where: str) -> Any:
    """A JSON document from an untrusted file, parsed within the module's bounds
    (``where`` names it in errors): every breach is an :class:`ArtifactError`."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_METADATA_BYTES:
        raise ArtifactError(f"{where} is {len(raw):,} bytes (at most {MAX_METADATA_BYTES:,})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"{where} is not UTF-8 text (byte {exc.start:,})") from None
    _nesting(raw, where)
    try:
        return json.loads(text, parse_int=_number(MAX_INT_DIGITS, "an integer", where, int),
                          parse_float=_number(MAX_NUMBER_CHARS, "a number", where, float),
                          parse_constant=_constant(where), object_pairs_hook=_object(where))
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{where} is not JSON: {exc.msg} (character {exc.pos:,})"
                            ) from None
    except RecursionError:  # not reached after _nesting; kept so it can never escape
        raise ArtifactError(f"{where} is nested too deep") from None


def footer_metadata(path: str | os.PathLike) -> dict[bytes, bytes]:
    """The key-value metadata of a Parquet file's footer (the privpub document
    under ``METADATA_KEY``), without reading its rows."""
    try:
        return pq.ParquetFile(path).metadata.metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{os.fspath(path)!r} is not a readable Parquet file: {exc}") from None


def parse_metadata(path: str | os.PathLike, schema: pa.Schema,
                   version: int = FORMAT_VERSION,
                   retired: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The privpub document of a file's metadata, of format ``version``, parsed
    within bounds (:func:`load_json`); ``retired`` says why an older format is
    no longer read."""
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise ArtifactError(f"{os.fspath(path)!r} has no privpub metadata; "
                            "was it written by privpub?")
    meta = load_json(raw, f"{os.fspath(path)!r}: privpub metadata")
    if not isinstance(meta, dict):
        raise ArtifactError(f"{os.fspath(path)!r}: privpub metadata is not a JSON object")
    found = meta.get("format_version")
    if type(found) is int and found in (retired or {}):
        raise ArtifactError(f"{os.fspath(path)!r}: field 'format_version' = {found}: "
                            f"{retired[found]}")
    if type(found) is not int or found != version:  # not 2.0, not True
        raise ArtifactError(f"{os.fspath(path)!r}: field 'format_version' = {shown(found)}: "
                            f"unsupported artifact format (this library reads {version})")
    return meta


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a hostile value can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"
