"""αβ's three publish paths: a view in memory, a view streamed to a Parquet
file in bounded memory, and a lazy Dask release
(:mod:`privpub.alphabeta.distributed`). Each prepares the records the same way
(:func:`~privpub.tables.records.prepare_records`), draws with
:class:`~privpub.alphabeta.draw.Draw` and states the release's parameters for
the records published (:meth:`AlphaBeta.with_records
<privpub.alphabeta.AlphaBeta.with_records>`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from privpub.alphabeta.draw import Draw
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.files import PARQUET, check_output
from privpub.core.guarantee import warn_if_weak
from privpub.core.inputs import TableFile, TableLike
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.core.signing import signing_key
from privpub.tables.distributed import DaskRelease, is_dask
from privpub.tables.published import PublishedView
from privpub.tables.records import as_schema_codes, distinct_sorted, prepare_records
from privpub.viewfile.rows import MemoryView
from privpub.viewfile.writer import write_view

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta

#: Largest expected number of noise tuples publish() accepts by default.
MAX_NOISE_ROWS = 2_000_000_000
#: β-step segments drawn and written together by publish_to_parquet: about
#: 2^6 · SEGMENT_TARGET (2^16) ≈ 4M noise tuples, 32 MiB of codes per window.
WINDOW_SEGMENTS = 64


def publish(mech: AlphaBeta, data: TableLike | np.ndarray, seed: SeedLike,
            duplicates: str | None, max_noise_rows: int,
            npartitions: int | None) -> PublishedView | DaskRelease:
    """:meth:`AlphaBeta.publish <privpub.alphabeta.AlphaBeta.publish>`."""
    check_noise(mech, max_noise_rows)
    if is_dask(data):
        from privpub.alphabeta.distributed import publish_dask
        return publish_dask(mech, data, resolve_seed(seed), duplicates, npartitions)
    records, facts = prepare_records(mech.schema, data, mech.n, duplicates)
    rand = resolve_seed(seed)
    run = Draw(mech, rand, records)
    (view,) = run.chunks()
    released = PublishedView(as_schema_codes(mech.schema, view), mech.schema, mech.name,
                             _released(mech, records, facts, run.revealed()), rand.policy)
    stated = released.mechanism_object()
    warn_if_weak(stated.resolution(), stacklevel=3,  # AlphaBeta's caller
                 remedy=stated.usefulness_remedy)
    return released


def publish_to_parquet(mech: AlphaBeta, data: TableLike | np.ndarray,
                       path: str | os.PathLike, seed: SeedLike, duplicates: str | None,
                       max_noise_rows: int, progress: Callable[[int, int], None] | None,
                       overwrite: bool, sign: Any = None) -> PublishedView:
    """:meth:`AlphaBeta.publish_to_parquet
    <privpub.alphabeta.AlphaBeta.publish_to_parquet>`: the view drawn and
    written :data:`WINDOW_SEGMENTS` β-step segments at a time."""
    check_noise(mech, max_noise_rows)
    if is_dask(data):
        raise ParameterError("publish_to_parquet takes an in-memory table or a file; for a "
                             "dask DataFrame use publish(ddf, seed=...).to_parquet(directory)")
    inputs = (data,) if isinstance(data, (str, os.PathLike)) else \
        (data.name,) if isinstance(data, TableFile) else ()
    check_output(path, overwrite=overwrite, suffix=PARQUET, inputs=inputs)
    key = signing_key(sign)
    records, facts = prepare_records(mech.schema, data, mech.n, duplicates)
    rand = resolve_seed(seed)
    run = Draw(mech, rand, records, window=WINDOW_SEGMENTS, progress=progress)

    def batches() -> Iterator[dict[str, np.ndarray]]:
        for chunk in run.chunks():
            yield from MemoryView(mech.schema, as_schema_codes(mech.schema, chunk)).batches()

    def metadata(rows: int, prints: dict[str, list[int]]) -> dict[str, Any]:
        empty = as_schema_codes(mech.schema, records[:0])
        return PublishedView(empty, mech.schema, mech.name,
                             _released(mech, records, facts, run.revealed()),
                             rand.policy).metadata(prints, rows=rows)

    write_view(path, mech.schema, batches(), metadata, overwrite=overwrite, inputs=inputs,
               sign=key)
    released = PublishedView.open(path, trust=None if key is None else key.public_key())
    stated = released.mechanism_object()
    warn_if_weak(stated.resolution(), stacklevel=3,  # AlphaBeta's caller
                 remedy=stated.usefulness_remedy)
    return released


def check_noise(mech: AlphaBeta, max_noise_rows: int) -> None:
    """Refuse a β-step expected to draw more than ``max_noise_rows`` candidates."""
    max_noise_rows = validate.real("max_noise_rows", max_noise_rows)
    # With a source, candidates come at the largest rate β_max and are
    # thinned to β(t) (exact); the candidate count is what costs.
    expected_noise = mech.beta_max * mech.schema.size
    if expected_noise > max_noise_rows:
        raise ParameterError(f"max β(t)·m = {expected_noise:.4g} expected noise candidates "
                             f"exceeds max_noise_rows = {max_noise_rows:,}")


def _released(mech: AlphaBeta, records: np.ndarray, facts: dict[str, Any],
              revealed: int) -> dict[str, Any]:
    """The release's parameters: n (and the bound it gives) for the records published."""
    facts = facts | {"distinct_tuples": len(distinct_sorted(records)),
                     "revealed_in_view": revealed}
    return mech.with_records(len(records), facts).parameters()
