"""Artifacts: a DataFrame plus the metadata needed to use it alone.

An :class:`Artifact` is one Parquet file (:mod:`privpub.core.artifacts`):
the frame with its dtypes and index, and the mechanism, parameters, schema
and library version that made it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privpub.core.artifacts import FORMAT_VERSION, read_frame, write_parquet
from privpub.core.errors import ArtifactError
from privpub.core.validate import field as stored_field
from privpub.core.version import LIBRARY_VERSION
from privpub.domain.schema import Schema


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
        return {
            "format_version": FORMAT_VERSION,
            "library_version": self.library_version or LIBRARY_VERSION,
            "mechanism": self.mechanism,
            "parameters": self.parameters,
            "schema": None if self.schema is None else self.schema.to_dict(),
            "extra": self.extra,
        }

    def to_parquet(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write frame and metadata to one Parquet file, whole or not at all (an
        existing ``path`` is refused unless ``overwrite=True``)."""
        write_parquet(path, [self.frame], self.metadata(), overwrite=overwrite)

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str]) -> Artifact:
        """Read an artifact written by :meth:`to_parquet`."""
        frame, meta = read_frame(path)
        stored = {name: stored_field(meta, name, f"{os.fspath(path)!r}: metadata") for name in
                  ("schema", "mechanism", "parameters", "extra", "library_version")}
        try:
            schema = None if stored["schema"] is None else Schema.from_dict(stored["schema"])
        except (TypeError, ValueError) as exc:  # SchemaError, or a dtype pandas refuses
            raise ArtifactError(f"{os.fspath(path)!r}: field 'schema': {exc}") from None
        return cls(frame=frame, mechanism=stored["mechanism"],
                   parameters=stored["parameters"], schema=schema, extra=stored["extra"],
                   library_version=stored["library_version"])
