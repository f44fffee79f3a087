"""Writing a view file: the rows streamed batch by batch as they are drawn,
dictionary-encoded (:mod:`privpub.viewfile.columns`), digested and their row
groups' statistics recorded in the same pass, the document last, in the
footer.

:func:`write_view` writes one file whole or not at all (a temporary beside the
path, checked by the viewfile reader, renamed into place); a Dask release
writes its parts with :func:`write_part` and their document with
:func:`write_metadata_file`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from privpub.core.errors import DomainError
from privpub.core.files import PARQUET, atomic_output
from privpub.core.prefetch import prefetched
from privpub.core.signing import signing_key
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, arrow_batch, arrow_schema
from privpub.viewfile.digest import Digest, PartDigest, digest_document, hash_pool
from privpub.viewfile.document import footer_entries
from privpub.viewfile.groupstats import GroupRecorder
from privpub.viewfile.layout import CHUNK_ROWS, METADATA_FILE, SET_COLUMN
from privpub.viewfile.reader import open_view
from privpub.viewfile.rows import MemoryView

#: Values pyarrow's Parquet writer takes per step within a column chunk. At its
#: default (1,024) it recomputes a dictionary column's page statistics (a hash of
#: the indices used, a take of their values, their min and max) every 1,024 rows: a
#: fifth of the Adult view's write. Pages are still cut at the writer's page size,
#: checked after each step (the Adult view's file is byte for byte the same).
WRITE_BATCH_ROWS = 1 << 16


def write_view(path: str | os.PathLike, schema: Schema, batches: Iterable[Digits],
               metadata: Callable[[int, dict[str, Any]], dict[str, Any]],
               context: Mapping[str, np.ndarray] | None = None, *, overwrite: bool = False,
               inputs: Iterable[Any] = (), sign: Any = None) -> None:
    """Write a view's rows, batch by batch as they come, then its context sets,
    then ``metadata(rows, digest)`` in the footer (``digest`` taken in the same
    pass: :func:`~privpub.viewfile.digest.digest_document`), signed with ``sign``
    (a private key or its file) if given: the rows are never all held, so a view
    can be written while it is drawn.

    Written to a temporary beside ``path``, reopened there by the viewfile reader
    (:func:`~privpub.viewfile.reader.open_view`: the document, the columns and the
    row groups; the context sets read and their digests checked), then renamed
    into place (:func:`~privpub.core.files.atomic_output`; ``overwrite`` and
    ``inputs`` as there)."""
    key = signing_key(sign)
    with atomic_output(path, overwrite=overwrite, suffix=PARQUET, inputs=inputs) as temp:
        _write_view(temp, schema, batches, metadata, context, key)
        open_view(temp, trust=None if key is None else key.public_key()).context_sets()


def _write_view(path: str, schema: Schema, batches: Iterable[Digits],
                metadata: Callable[[int, dict[str, Any]], dict[str, Any]],
                context: Mapping[str, np.ndarray] | None, key: Any) -> None:
    context = context or {}
    columns = arrow_schema(schema)
    if context:
        columns = columns.append(
            pa.field(SET_COLUMN, pa.dictionary(pa.int8(), pa.string())))
    labels = pa.array(["", *context])
    digests = [Digest(schema, schema.names) for _ in range(1 + len(context))]
    # The rows' batches are made (drawn, decoded) and turned into Arrow on a thread
    # while the last is written; the writer (one core) is what the write waits for.
    with_arrow = functools.partial(_with_arrow, schema)
    rows = prefetched(batches, then=with_arrow)
    sources = [rows, *(map(with_arrow, MemoryView(schema, c).batches())
                       for c in context.values())]
    # Row-group statistics for pruned counts (scan), of a file of view rows only:
    # hashed on the digest's threads beside the write, one batch pending at a time so
    # the groups are recorded in order.
    groups = None if context else GroupRecorder(schema, CHUNK_ROWS)
    recorded = None
    with closing(rows), pq.ParquetWriter(path, columns,
                                         write_batch_size=WRITE_BATCH_ROWS) as writer:
        for label, source in enumerate(sources):
            for digits, batch in source:
                if groups is not None:
                    if recorded is not None:
                        recorded.result()
                    recorded = hash_pool().submit(groups.add, digits)
                digests[label].add(digits)
                if context:
                    flag = pa.DictionaryArray.from_arrays(
                        np.full(batch.num_rows, label, dtype=np.int8), labels)
                    batch = pa.RecordBatch.from_arrays([*batch.columns, flag],
                                                       schema=columns)
                writer.write_batch(batch, row_group_size=CHUNK_ROWS)
        if recorded is not None:
            recorded.result()
        view = digests[0].result()
        document = digest_document([view if groups is None else groups.attach(view)], {
            name: found.result() for name, found in zip(context, digests[1:], strict=True)})
        writer.add_key_value_metadata(
            footer_entries(metadata(digests[0].rows, document), key))


def _with_arrow(schema: Schema, digits: Digits) -> tuple[Digits, pa.RecordBatch]:
    """A batch with its Arrow record batch, every index first checked to be in its
    domain (a min and a max per column, cheaper than pyarrow's check of each)."""
    for attr in schema:
        column = digits[attr.name]
        if len(column) and (column.min() < 0 or column.max() >= attr.size):
            raise DomainError(f"column {attr.name!r}: a batch to write holds domain "
                              f"indices {int(column.min())}..{int(column.max())}, outside "
                              f"0..{attr.size - 1} ({attr.describe()})")
    return digits, arrow_batch(schema, digits, in_domain=True)


def write_part(path: str, schema: Schema, batches: Iterable[Digits]) -> PartDigest:
    """One part file of a Dask release (dictionary-encoded columns, as one machine
    writes them, the same row groups); its rows' digest and row groups' statistics,
    taken in the write pass."""
    found, groups = Digest(schema, schema.names), GroupRecorder(schema, CHUNK_ROWS)
    with pq.ParquetWriter(path, arrow_schema(schema),
                          write_batch_size=WRITE_BATCH_ROWS) as writer:
        for digits in batches:
            writer.write_batch(arrow_batch(schema, found.add(groups.add(digits))),
                               row_group_size=CHUNK_ROWS)
    return groups.attach(found.result())


def write_metadata_file(directory: str, schema: Schema, document: Mapping[str, Any],
                        sign: Any = None) -> None:
    """A Dask release's document, in the empty Parquet file :data:`METADATA_FILE`
    of ``directory`` (beside its parts, written by :func:`write_part`), signed with
    ``sign`` if given (:func:`~privpub.viewfile.document.footer_entries`)."""
    with pq.ParquetWriter(os.path.join(directory, METADATA_FILE), arrow_schema(schema)) as w:
        w.add_key_value_metadata(footer_entries(document, sign))
