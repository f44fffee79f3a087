"""A view's rows in a Parquet file, or in a Dask release's part files, read row
group by row group (bounded memory), each full pass checked against the digest."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from privpub.core.errors import ArtifactError
from privpub.domain.schema import Schema
from privpub.viewfile.columns import Digits, codes_of, file_digits, index_width
from privpub.viewfile.digest import Digest, PartDigest
from privpub.viewfile.layout import CHUNK_ROWS, SET_COLUMN, part_files
from privpub.viewfile.pages import PageReader
from privpub.viewfile.rows import TableView


def row_groups(path: str, where: str, columns: Sequence[str], batch_rows: int,
               groups: Sequence[int] | None = None) -> Iterator[pa.Table]:
    """A Parquet file's rows (``columns``), row group by row group (``groups``, default
    all) in batches of at most ``batch_rows``: a damaged file, or a row group holding
    other than the rows its footer says, is an ArtifactError naming ``where``."""
    try:
        with pq.ParquetFile(path) as file:
            meta = file.metadata
            for group in range(meta.num_row_groups) if groups is None else groups:
                read = 0
                for batch in file.iter_batches(batch_size=batch_rows, row_groups=[group],
                                               columns=list(columns), use_threads=True):
                    read += batch.num_rows
                    yield pa.Table.from_batches([batch])
                if read != meta.row_group(group).num_rows:
                    raise ArtifactError(f"{where}: row group {group} holds {read:,} rows but "
                                        f"its footer says {meta.row_group(group).num_rows:,}")
    except (OSError, pa.ArrowException) as exc:
        raise ArtifactError(f"{where}: its rows cannot be read: "
                            f"{str(exc).splitlines()[0]}") from None


class FileView(TableView):
    """Rows in a Parquet file, or in the part files of a directory
    (:func:`part_files`), read row group by row group (bounded memory).

    ``label`` selects the rows of one set when the file also holds context
    sets (the column ``SET_COLUMN``); ``expected`` is the stored digest, one
    :class:`PartDigest` per part file (None: not checked). Every full pass
    checks, for each part, the rows read and the digest of each column it read,
    and then the total against ``rows``. ``pages`` is the view's own page
    reader (:class:`~privpub.viewfile.pages.PageReader`), with the footers of
    its files kept for its later reads (the whole read, pruned counts).
    """

    def __init__(self, schema: Schema, path: str | os.PathLike[str], rows: int,
                 expected: Sequence[PartDigest] | None, label: str | None = None,
                 batch_rows: int = CHUNK_ROWS):
        self.schema, self.path, self.rows = schema, os.fspath(path), rows
        self.expected = None if expected is None else list(expected)
        self.label, self.batch_rows = label, batch_rows
        self.files = part_files(self.path)
        self.pages = PageReader(schema)
        self._rows_checked = False
        if self.expected is not None and len(self.expected) != len(self.files):
            raise ArtifactError(f"{self.path!r} has {len(self.files):,} part files but its "
                                f"metadata has a digest for {len(self.expected):,}")

    def __len__(self) -> int:
        return self.rows

    def where(self, index: int) -> str:
        """How errors name part ``index``: the file, or the part file of a directory."""
        return repr(self.files[index] if os.path.isdir(self.path) else self.path)

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        names = list(self.schema.names if attributes is None else attributes)
        columns = names + ([SET_COLUMN] if self.label is not None else [])
        read = 0
        for index, path in enumerate(self.files):
            where, seen = self.where(index), Digest(self.schema, names)
            for table in row_groups(path, where, columns, self.batch_rows):
                if self.label is not None:
                    table = table.filter(pc.equal(table.column(SET_COLUMN), self.label))
                yield seen.add(file_digits(self.schema, table, names, where), table.num_rows)
            read += seen.rows
            if self.expected is not None:  # a full pass over the part: it must be the stored one
                self.expected[index].check(seen.result(), where)
        if self.expected is not None:
            if read != self.rows:
                raise ArtifactError(f"{self.path!r}: {read:,} rows read, its metadata says "
                                    f"{self.rows:,}")
            self._rows_checked = True

    def checked_len(self) -> int:
        if self.expected is not None and not self._rows_checked:
            narrowest = min(self.schema.names,
                            key=lambda n: index_width(self.schema[n].size).itemsize)
            for _ in self.batches([narrowest]):
                pass
        return self.rows

    def codes(self) -> np.ndarray:
        parts = [codes_of(self.schema, batch) for batch in self.batches()]
        if not parts:
            shape = (0, self.schema.limbs) if self.schema.is_wide else (0,)
            return np.zeros(shape, dtype=np.uint64)
        return np.concatenate(parts)
