"""Published artifacts: a DataFrame plus the metadata needed to use it alone.

An :class:`Artifact` is written as one Parquet file whose key-value metadata
holds, under the key ``privpub``, a JSON document with the mechanism, its
parameters, the schema and the library version. Reading it back gives the
same frame (values and dtypes, via pyarrow's pandas metadata) and the same
metadata. Later modules (views, releases) build on this container.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.errors import ArtifactError, ParameterError
from privpub.schema import Schema

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


@dataclass
class Artifact:
    """A frame, the mechanism that made it, its parameters and its schema."""

    frame: pd.DataFrame
    mechanism: str
    parameters: dict[str, Any]
    schema: Schema | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    library_version: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The JSON document stored beside the frame."""
        from privpub import __version__

        return {
            "format_version": FORMAT_VERSION,
            "library_version": self.library_version or __version__,
            "mechanism": self.mechanism,
            "parameters": self.parameters,
            "schema": None if self.schema is None else self.schema.to_dict(),
            "extra": self.extra,
        }

    def to_parquet(self, path: str | os.PathLike) -> None:
        """Write frame and metadata to one Parquet file."""
        write_parquet(path, [self.frame], self.metadata())

    @classmethod
    def read_parquet(cls, path: str | os.PathLike) -> Artifact:
        """Read an artifact written by :meth:`to_parquet`."""
        frame, meta = read_frame(path)
        schema = None if meta["schema"] is None else Schema.from_dict(meta["schema"])
        return cls(frame=frame, mechanism=meta["mechanism"],
                   parameters=meta["parameters"], schema=schema, extra=meta["extra"],
                   library_version=meta["library_version"])


def write_parquet(path: str | os.PathLike, frames: Iterable[pd.DataFrame],
                  metadata: dict[str, Any]) -> None:
    """Write frames (same columns and dtypes) as row groups of one Parquet file,
    with ``metadata`` as JSON under the key ``privpub``. Streaming: only one
    frame is in memory at a time."""
    _check_keys(metadata, "metadata")
    try:
        document = json.dumps(metadata, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"artifact metadata must be JSON-serialisable: {exc}") from exc
    writer = None
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
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        raise ParameterError("write_parquet needs at least one frame (it may be empty)")


def read_frame(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The frame (dtypes restored) and privpub metadata of a file from :func:`write_parquet`."""
    table = pq.read_table(path)
    meta = _parse_metadata(path, table.schema)
    notes = json.loads((table.schema.metadata or {}).get(DTYPES_KEY, b"[]"))
    return _restore_dtypes(table.to_pandas(), notes), meta


def _parse_metadata(path: str | os.PathLike, schema: pa.Schema) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise ArtifactError(f"{os.fspath(path)!r} has no privpub metadata; "
                            "was it written by privpub?")
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{os.fspath(path)!r}: privpub metadata is not JSON") from exc
    found = meta.get("format_version")
    if found != FORMAT_VERSION:
        raise ArtifactError(f"{os.fspath(path)!r}: unsupported artifact format {found!r} "
                            f"(this library reads {FORMAT_VERSION})")
    return meta
