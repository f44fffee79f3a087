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
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.errors import ArtifactError, ParameterError
from privpub.schema import Schema

METADATA_KEY = b"privpub"
FORMAT_VERSION = 1


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
        try:
            document = json.dumps(self.metadata(), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"artifact metadata must be JSON-serialisable: {exc}") from exc
        table = pa.Table.from_pandas(self.frame, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[METADATA_KEY] = document.encode()
        pq.write_table(table.replace_schema_metadata(meta), path)

    @classmethod
    def read_parquet(cls, path: str | os.PathLike) -> Artifact:
        """Read an artifact written by :meth:`to_parquet`."""
        table = pq.read_table(path)
        raw = (table.schema.metadata or {}).get(METADATA_KEY)
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
        schema = None if meta["schema"] is None else Schema.from_dict(meta["schema"])
        return cls(frame=table.to_pandas(), mechanism=meta["mechanism"],
                   parameters=meta["parameters"], schema=schema, extra=meta["extra"],
                   library_version=meta["library_version"])
