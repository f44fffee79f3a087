"""FRAPP publishing of a dask DataFrame: the single-machine view, byte for byte.

One machine perturbs the sorted records, record i from position i of the
"frapp" streams, and publishes the result sorted. On Dask the records are
shuffled into sorted ranges of code space
(:func:`~privpub.tables.distributed.ranged_records`); range j perturbs its
records from its first global position (:meth:`FRAPP.perturb`, the same
code), and the perturbed codes are shuffled once more into sorted ranges, so
the release equals the single-machine one for the same seed, for any
partitioning (docs/scaling.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from privpub.core.seeding import RandomSource
from privpub.tables.distributed import (
    DaskRelease,
    aligned,
    by_range,
    ranged_records,
    rows_frame,
    split_points,
)

if TYPE_CHECKING:
    from privpub.frapp.mechanism import FRAPP


def _perturb(mech: FRAPP, source: RandomSource, records: np.ndarray,
             plan: tuple[dict[str, Any], list[int]], i: int) -> np.ndarray:
    return mech.perturb(source, aligned(records), start=plan[1][i])


def _parameters(mech: FRAPP, plan: tuple[dict[str, Any], list[int]]) -> dict[str, Any]:
    facts = plan[0] | {"revealed_in_view": 0}
    n = facts["distinct_tuples"] if facts["duplicates"] == "set" else facts["records_given"]
    return mech.with_records(n, facts).parameters()


def publish_dask(mech: FRAPP, data: Any, source: RandomSource, duplicates: str | None,
                 npartitions: int | None = None) -> DaskRelease:
    """FRAPP over a dask DataFrame (module docstring). Reads the data once now
    to place the ranges; the rest runs when the release is written or computed."""
    import dask

    schema = mech.schema
    ranged = ranged_records(schema, data, mech.n, duplicates, npartitions)
    perturbed = [dask.delayed(_perturb)(mech, source, records, ranged.plan, i)
                 for i, records in enumerate(ranged.records)]
    # Output ranges balanced for the perturbed codes: a kept record stays, a
    # replaced one is uniform over the domain.
    keep = mech.gamma_frapp
    bounds = split_points(ranged.sample, schema.size, npartitions or data.npartitions,
                          record_weight=keep,
                          rate=(1 - keep) * ranged.sample.total / schema.size)
    rows = by_range(rows_frame(perturbed, schema.limbs), bounds, schema.limbs)
    return DaskRelease(schema, mech.name, rows, dask.delayed(_parameters)(mech, ranged.plan),
                       source.policy)
