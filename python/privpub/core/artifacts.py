"""Parquet files with privpub metadata: the storage every artifact and release uses.

A file's key-value metadata holds, under the key ``privpub``, a JSON
document with the mechanism, its parameters, the schema and the library
version (:func:`encode_metadata`, :func:`read_metadata`). Reading it back gives the
same frame (values and dtypes, via pyarrow's pandas metadata) and the same
metadata. Table releases (:mod:`privpub.tables.published`) use the same metadata key
and document with Arrow columns of their own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.files import PARQUET, atomic_output

METADATA_KEY = b"privpub"
#: Column dtypes that pyarrow's pandas metadata does not bring back by itself.
DTYPES_KEY = b"privpub.dtypes"
FORMAT_VERSION = 1


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
    notes = json.loads((table.schema.metadata or {}).get(DTYPES_KEY, b"[]"))
    return _restore_dtypes(table.to_pandas(), notes), meta


def read_metadata(path: str | os.PathLike, version: int = FORMAT_VERSION) -> dict[str, Any]:
    """The privpub metadata of a Parquet file (from its footer's key-value
    metadata, where :meth:`pyarrow.parquet.ParquetWriter.add_key_value_metadata`
    and schema metadata both land), without reading its rows."""
    try:
        stored = pq.ParquetFile(path).metadata.metadata or {}
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{os.fspath(path)!r} is not a readable Parquet file: {exc}") from None
    return parse_metadata(path, pa.schema([], metadata=stored), version)


def parse_metadata(path: str | os.PathLike, schema: pa.Schema,
                   version: int = FORMAT_VERSION) -> dict[str, Any]:
    """The privpub document of a file's metadata, of format ``version``."""
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise ArtifactError(f"{os.fspath(path)!r} has no privpub metadata; "
                            "was it written by privpub?")
    try:
        meta = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{os.fspath(path)!r}: privpub metadata is not JSON") from exc
    if not isinstance(meta, dict):
        raise ArtifactError(f"{os.fspath(path)!r}: privpub metadata is not a JSON object")
    found = meta.get("format_version")
    if found != version:
        raise ArtifactError(f"{os.fspath(path)!r}: unsupported artifact format {found!r} "
                            f"(this library reads {version})")
    return meta
