"""A view whose rows are a Dask release's parts: code arrays, persisted where
Dask keeps them (the workers of a distributed client, else this process).

A count runs one Dask task per part, so the rows stay where they are and only
the counts travel; anything else (histograms, a SPLU reconstruction) reads
the parts one at a time, in code order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from privpub.domain.schema import Schema
from privpub.tables.records import as_schema_codes
from privpub.viewfile.columns import Digits
from privpub.viewfile.rows import MemoryView, TableView


def _part_view(schema: Schema, rows: np.ndarray) -> MemoryView:
    # A deserialised buffer may be unaligned; the kernels need C order, aligned.
    return MemoryView(schema, as_schema_codes(schema, np.require(rows, requirements=["C", "A"])))


def _count_part(schema: Schema, rows: np.ndarray, condition: Any) -> int:
    return _part_view(schema, rows).count(condition)


class PartsView(TableView):
    """The rows of a Dask release: ``parts``, persisted Dask Delayed (n_i, limbs)
    code arrays in code order."""

    def __init__(self, schema: Schema, parts: Sequence[Any]):
        import dask

        self.schema, self.parts = schema, list(parts)
        self._lengths = [int(n) for n in dask.compute(*[p.shape[0] for p in self.parts])]

    def __len__(self) -> int:
        return sum(self._lengths)

    def _computed(self) -> Iterator[np.ndarray]:
        import dask

        for part in self.parts:
            (rows,) = dask.compute(part)
            yield rows

    def batches(self, attributes: Sequence[str] | None = None) -> Iterator[Digits]:
        for rows in self._computed():
            yield from _part_view(self.schema, rows).batches(attributes)

    def codes(self) -> np.ndarray:
        return np.concatenate([_part_view(self.schema, r).codes() for r in self._computed()])

    def count(self, condition: Any) -> int:
        """Rows satisfying ``condition``: one Dask task per part."""
        import dask

        return sum(dask.compute(*[dask.delayed(_count_part)(self.schema, p, condition)
                                  for p in self.parts]))
