"""αβ publishing of a dask DataFrame: the single-machine view, byte for byte.

Algorithm 1 splits over ranges of code space. The β-step draws code space in
fixed segments of L codes, segment s from its own stream, and drops selected
codes that are in I; so the segments [a, b) need only I's codes in
[a·L, b·L) and give exactly the whole draw's codes there. The α-step keeps
record i of the sorted records with element i of its stream, seekable. Hence
(docs/scaling.md):

1. the records are encoded per partition and shuffled into ranges of code
   space whose boundaries are multiples of L (every copy of a tuple and every
   segment in one task), then sorted there
   (:func:`~privpub.tables.distributed.ranged_records`);
2. the only cross-range values are the record facts and each range's first
   position in the globally sorted records (sums of per-range counts);
3. each range runs :meth:`AlphaBeta.draw` with that start and its segments:
   the same code one machine runs, on the same streams
   ("alpha-step", "beta-step").

The view is the concatenation of the ranges, equal to
``AlphaBeta.publish(pandas_frame, seed)`` for the same seed, for any
partitioning. Algorithm 8's thinning numbers the candidates of the whole
β-step, so a source distribution is refused here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import privpub._core as _core
from privpub.core.errors import ParameterError
from privpub.core.seeding import RandomSource
from privpub.tables.distributed import DaskRelease, aligned, ranged_records
from privpub.tables.records import repeated_rows

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta


def _draw(mech: AlphaBeta, rand: RandomSource, records: np.ndarray,
          plan: tuple[dict[str, Any], list[int]], i: int,
          segments: tuple[int, int]) -> np.ndarray:
    return mech.draw(rand, aligned(records), start=plan[1][i], segments=segments)


def _parameters(mech: AlphaBeta, plan: tuple[dict[str, Any], list[int]],
                revealed: list[int]) -> dict[str, Any]:
    facts = plan[0] | {"revealed_in_view": sum(revealed)}
    n = facts["distinct_tuples"] if facts["duplicates"] == "set" else facts["records_given"]
    return mech.with_records(n, facts).parameters()


def publish_dask(mech: AlphaBeta, data: Any, rand: RandomSource, duplicates: str | None,
                 npartitions: int | None = None) -> DaskRelease:
    """Algorithm 1 over a dask DataFrame (module docstring). Reads the data once
    now (a sample of codes places the ranges; bad values are reported then);
    the rest runs when the release is written or computed."""
    import dask

    if mech.source is not None:
        raise ParameterError("a source distribution (Algorithm 8) is not supported on Dask: "
                             "its thinning numbers the candidates of the whole β-step, so a "
                             "range's draws depend on every range before it; publish with a "
                             "source on one machine")
    m = mech.schema.size
    seg_len, segments = _core.sampling.beta_step_layout(m, mech.beta)
    align = seg_len if segments else 1
    ranged = ranged_records(mech.schema, data, mech.n, duplicates, npartitions, align=align,
                            rate=mech.beta)
    edges = [0, *ranged.bounds, segments * align]
    # β = 0 draws no segment at all: each range is its own records, all of them
    # (segments=None; the edges, in codes then, would cut every range but the first).
    views = [dask.delayed(_draw)(mech, rand, records, ranged.plan, i,
                                 (edges[i] // align, edges[i + 1] // align) if segments else None)
             for i, records in enumerate(ranged.records)]
    parameters = dask.delayed(_parameters)(mech, ranged.plan,
                                           [dask.delayed(repeated_rows)(v) for v in views])
    return DaskRelease(mech.schema, mech.name, views, parameters, rand.policy)
