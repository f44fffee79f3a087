"""The view file's document: the JSON stored under the key ``privpub`` in the
file's footer (a Dask release's: in its ``_common_metadata``), built, parsed
within bounds and checked against the files.

Its fields (format 3, :data:`VIEW_FORMAT`):

- ``format_version``: 3; older formats are refused with the reason
  (:data:`RETIRED_FORMATS`);
- the release envelope (``kind`` = :data:`KIND`, ``library_version``,
  ``mechanism``, ``parameters``, ``seed_policy``:
  :meth:`~privpub.core.release.Release.read_envelope`);
- ``schema`` (:meth:`~privpub.Schema.to_dict`) and ``domain_size`` (m, as a
  decimal string, which the schema must give);
- ``rows``: the view's rows over all part files;
- ``context``: each context set's name and rows (a later view of several);
- ``digest`` (:func:`~privpub.viewfile.digest.digest_document`): the
  algorithm, one entry per part file (its rows, per column SHA-256, and its row
  groups' statistics sealed: :mod:`privpub.viewfile.groupstats`) and one per
  context set.

A signed release holds, under the footer key ``privpub.signature`` beside the
document, the publisher's signature of the document's exact bytes
(:func:`~privpub.core.signing.signature_entry`): :func:`footer_entries` writes
both, :func:`read_document` checks it (against the key the reader trusts, if
given).

:func:`view_document` builds it; :func:`read_document` parses and checks it
(format, envelope, schema against its domain size, row counts against the
digest's parts, every digest and statistic within bounds) into a
:class:`ViewDocument`; :func:`check_part` holds a part file's columns and row
groups against it. A field added to the format is added in these three places.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.artifacts import (
    METADATA_KEY,
    SIGNATURE_KEY,
    encode_metadata,
    footer_metadata,
    load_json,
    parse_metadata,
    shown,
)
from privpub.core.errors import ArtifactError
from privpub.core.release import Release
from privpub.core.signing import Signed, check_signature, signature_entry
from privpub.core.validate import field
from privpub.domain.schema import Schema
from privpub.viewfile.digest import DIGEST_ALGORITHM, PartDigest
from privpub.viewfile.groupstats import stored_groups
from privpub.viewfile.layout import SET_COLUMN, metadata_file
from privpub.viewfile.pages import PageReader

KIND = "published_view"
#: Layout of a view file's metadata (3: rows as dictionary-encoded columns with an
#: order-sensitive digest per part file and column; 2, before, had order-invariant
#: per-column sums instead, 1 held decoded rows and nothing to check them by).
VIEW_FORMAT = 3
#: Formats this library no longer reads, and why.
RETIRED_FORMATS = {
    1: "a view file from before privpub checked its rows; re-publish the table",
    2: "a view file whose check (per-column sums) cannot tell reordered values apart, "
       "so its rows cannot be trusted unseen; re-publish the table with this version",
}



def view_document(envelope: Mapping[str, Any], schema: Schema, rows: int,
                  digest: Mapping[str, Any], context: Mapping[str, int]) -> dict[str, Any]:
    """The document of a view: ``envelope`` (:meth:`~privpub.core.release.Release.envelope`),
    its ``rows``, ``digest`` (:func:`~privpub.viewfile.digest.digest_document`) and
    ``context`` (each context set's rows)."""
    return {"format_version": VIEW_FORMAT, **envelope, "schema": schema.to_dict(),
            "domain_size": str(schema.size), "rows": rows, "digest": dict(digest),
            "context": dict(context)}


def footer_entries(document: Mapping[str, Any], sign: Any = None) -> dict[bytes, bytes]:
    """The footer's key-value entries of ``document``: the document, and with
    ``sign`` (a private key or its file) its signature."""
    raw = encode_metadata(dict(document))
    if sign is None:
        return {METADATA_KEY: raw}
    return {METADATA_KEY: raw, SIGNATURE_KEY: json.dumps(signature_entry(sign, raw)).encode()}


@dataclass(frozen=True)
class ViewDocument:
    """What a view file's document says, parsed and checked; ``signed`` says
    who signed it (None: unsigned)."""

    envelope: dict[str, Any]
    schema: Schema
    rows: int
    context_sizes: dict[str, int]
    parts: list[PartDigest]
    context_digests: dict[str, PartDigest]
    signed: Signed | None = None


def read_document(path: str | os.PathLike, trust: Any = None) -> ViewDocument:
    """The document of the view at ``path`` (a file, or a Dask release's directory),
    parsed and checked (module docstring), its signature checked
    (:func:`~privpub.core.signing.check_signature`: ``trust`` a public key or its
    file). The envelope is the caller's to copy."""
    where = os.fspath(path)
    document = metadata_file(path)
    footer = footer_metadata(document)
    raw, entry = footer.get(METADATA_KEY), footer.get(SIGNATURE_KEY)
    signed = None
    if raw is not None:  # (None: refused by the parse, naming what is missing)
        # The signature first: an edited document is refused as edited, before
        # its content is parsed.
        stored = None if entry is None else load_json(entry, f"{where!r}: privpub signature")
        signed = check_signature(raw, stored, trust, repr(where))
    return replace(_parsed(where, document, raw), signed=signed)


@functools.lru_cache(maxsize=32)
def _parsed(where: str, document: str, raw: bytes | None) -> ViewDocument:
    """The privpub document ``raw`` of the view at ``where`` (found in the file
    ``document``), parsed and checked. Memoised on the exact bytes (the same
    bytes parse the same; an open reads them from the footer each time, and
    checks the part files itself): a view reopened skips the JSON, schema and
    digest parses."""
    meta = parse_metadata(document, pa.schema([], metadata={} if raw is None
                                              else {METADATA_KEY: raw}),
                          VIEW_FORMAT, RETIRED_FORMATS)
    envelope = Release.read_envelope(meta, KIND)
    stored_schema = field(meta, "schema", "metadata")
    try:
        schema = Schema.from_dict(stored_schema)
    except (TypeError, ValueError) as exc:  # SchemaError, or a dtype pandas refuses
        raise ArtifactError(f"{where!r}: field 'schema': {shown(str(exc), 300)}") from None
    stored_m = field(meta, "domain_size", "metadata")
    if stored_m != str(schema.size):
        raise ArtifactError(f"{where!r}: field 'domain_size' = {shown(stored_m)} but the "
                            f"schema has m = {schema.size}; the schema was altered")
    rows = _stored_count(field(meta, "rows", "metadata"), "rows", where)
    context_sizes = _context_sizes(field(meta, "context", "metadata"), where)
    parts, context_digests = _stored_digest(field(meta, "digest", "metadata"), schema, where)
    in_parts = sum(p.rows for p in parts)
    if in_parts != rows:
        raise ArtifactError(f"{where!r}: field 'rows' = {rows:,} but the digest's parts "
                            f"hold {in_parts:,} rows")
    if {k: d.rows for k, d in context_digests.items()} != context_sizes:
        raise ArtifactError(f"{where!r}: field 'context' = {shown(context_sizes)} does not "
                            "match the digest's context sets "
                            f"{shown({k: d.rows for k, d in context_digests.items()})}")
    return ViewDocument(envelope, schema, rows, context_sizes, parts, context_digests)


def check_part(file: str, where: str, schema: Schema, with_sets: bool,
               rows: int, pages: PageReader | None = None) -> list[int]:
    """A part file's columns are the schema's (and the set column iff there are
    context sets), and its row groups hold ``rows``: counted from the row groups
    themselves, which must also agree with the footer's total. Returns the
    row groups' row counts. The footer read is kept by ``pages`` (the view's page
    reader), so the view's first count does not read it again."""
    try:
        with open(file, "rb") as handle, pq.ParquetFile(handle) as parquet:
            info = os.fstat(handle.fileno())  # the identity of the file whose footer this is
            names, meta = parquet.schema_arrow.names, parquet.metadata
            sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
            groups = sum(sizes)
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{where}: not a readable Parquet file: "
                            f"{str(exc).splitlines()[0]}") from None
    if not with_sets and SET_COLUMN in names:
        raise ArtifactError(f"{where} has a column {SET_COLUMN!r} but its metadata lists no "
                            "context sets")
    if with_sets and SET_COLUMN not in names:
        raise ArtifactError(f"{where}: its metadata lists context sets but the file has no "
                            f"column {SET_COLUMN!r} saying which rows are whose")
    wanted = [*schema.names, *([SET_COLUMN] if with_sets else [])]
    missing = [n for n in wanted if n not in names]
    extra = [n for n in names if n not in wanted]
    twice = sorted({n for n in names if names.count(n) > 1})
    if missing or extra or twice:
        raise ArtifactError(f"{where}: its columns must be the schema's; missing "
                            f"{shown(missing)}, not in the schema {shown(extra)}, "
                            f"repeated {shown(twice)}")
    if meta.num_rows != groups:
        raise ArtifactError(f"{where}: its footer says {meta.num_rows:,} rows but its row "
                            f"groups hold {groups:,}")
    if groups != rows:
        raise ArtifactError(f"{where} holds {groups:,} rows in its row groups but its "
                            f"metadata says {rows:,}")
    if pages is not None:
        pages.keep_metadata(info, meta)
    return sizes


def _stored_count(value: Any, name: str, where: str) -> int:
    if type(value) is not int or value < 0:  # not a bool, not 3.0, not "3"
        raise ArtifactError(f"{where!r}: field {name!r} must be a count (an integer >= 0), "
                            f"got {shown(value)} ({type(value).__name__})")
    return value


def _context_sizes(value: Any, where: str) -> dict[str, int]:
    """The metadata's ``context``: set name → rows (names non-empty: "" labels the view)."""
    if not isinstance(value, dict):
        raise ArtifactError(f"{where!r}: field 'context' must be a JSON object, got "
                            f"{type(value).__name__}")
    if "" in value:
        raise ArtifactError(f"{where!r}: field 'context' names a set '' (the view's own rows)")
    return {k: _stored_count(v, f"context[{shown(k)}]", where) for k, v in value.items()}


def _hex_digest(value: Any) -> bool:
    return (isinstance(value, str) and len(value) == 64
            and all(c in "0123456789abcdef" for c in value))


def _part_digest(value: Any, name: str, schema: Schema, where: str) -> PartDigest:
    if not isinstance(value, dict):
        raise ArtifactError(f"{where!r}: field {name!r} must be a JSON object, got "
                            f"{type(value).__name__}")
    rows = _stored_count(field(value, "rows", f"field {name!r}"), f"{name}.rows", where)
    columns = field(value, "columns", f"field {name!r}")
    if not isinstance(columns, dict):
        raise ArtifactError(f"{where!r}: field '{name}.columns' must be a JSON object, got "
                            f"{type(columns).__name__}")
    missing = [n for n in schema.names if n not in columns]
    extra = [n for n in columns if n not in schema.names]
    if missing or extra:
        raise ArtifactError(f"{where!r}: field '{name}.columns' must hold the schema's "
                            f"columns; missing {shown(missing)}, not in the schema "
                            f"{shown(extra)}")
    for column, found in columns.items():
        if not _hex_digest(found):
            raise ArtifactError(f"{where!r}: field '{name}.columns[{column!r}]' = "
                                f"{shown(found)} is not a SHA-256 digest (64 hex digits)")
    groups = stored_groups(value, name, schema, where)
    return PartDigest(rows, columns, groups, value.get("groups_sha256"))


def _stored_digest(value: Any, schema: Schema, where: str
                   ) -> tuple[list[PartDigest], dict[str, PartDigest]]:
    """The metadata's ``digest``: one PartDigest per part file, and per context set."""
    if not isinstance(value, dict):
        raise ArtifactError(f"{where!r}: field 'digest' must be a JSON object, got "
                            f"{type(value).__name__}")
    algorithm = field(value, "algorithm", "field 'digest'")
    if algorithm != DIGEST_ALGORITHM:
        raise ArtifactError(f"{where!r}: field 'digest.algorithm' = {shown(algorithm)}; this "
                            f"library checks {DIGEST_ALGORITHM!r}")
    parts = field(value, "parts", "field 'digest'")
    context = field(value, "context", "field 'digest'")
    if not isinstance(parts, list) or not parts:
        raise ArtifactError(f"{where!r}: field 'digest.parts' must be a non-empty list, got "
                            f"{shown(parts)}")
    if not isinstance(context, dict):
        raise ArtifactError(f"{where!r}: field 'digest.context' must be a JSON object, got "
                            f"{type(context).__name__}")
    return ([_part_digest(p, f"digest.parts[{i}]", schema, where) for i, p in enumerate(parts)],
            {k: _part_digest(v, f"digest.context[{k!r}]", schema, where)
             for k, v in context.items()})


