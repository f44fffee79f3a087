"""SPLU-Gen publishing of a dask DataFrame: the single-machine release, byte for byte.

The decoy-group partition is a global greedy computation over the sensitive
columns (Anatomy's rounds pick records by value frequency and row id), so it
runs in one task: the partitions are encoded where they are, only the
sensitive columns' domain indices (one small integer per record and
sensitive attribute) travel to that task, and it runs
:meth:`SPLUGen.randomise`, the code one machine runs, on the same streams.
Each partition then gets its slice of the published values back, replaces
its sensitive columns, drops its rows in no group, and the published codes
are shuffled into sorted ranges (the release's canonical order). For the
same seed and the same row order (the partitions in order) the release
equals ``SPLUGen.publish(pandas_frame, seed)``, for any partitioning.

The records in no group (N mod γ) are counted in the release's parameters
and stated by its guarantee; their row positions are not reported (the
single-machine ``SPLUGen.partition`` lists them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privpub.core.errors import ParameterError
from privpub.core.seeding import RandomSource
from privpub.domain.schema import Schema
from privpub.tables.distributed import (
    DaskRelease,
    by_range,
    code_sample,
    encoded,
    rows_frame,
    rows_of,
    split_points,
)
from privpub.tables.records import as_schema_codes
from privpub.viewfile.columns import codes_of

if TYPE_CHECKING:
    from privpub.splu.mechanism import SPLUGen


def _digits(schema: Schema, frame: pd.DataFrame) -> list[np.ndarray]:
    return schema.digits(as_schema_codes(schema, rows_of(frame, schema.limbs)))


def _sensitive(mech: SPLUGen, schema: Schema, frame: pd.DataFrame) -> dict[str, np.ndarray]:
    return mech._sensitive_of(schema, _digits(schema, frame))


def _plan(mech: SPLUGen, schema: Schema, parts: list[dict[str, np.ndarray]],
          source: RandomSource) -> tuple[list[tuple[dict[str, np.ndarray], np.ndarray]],
                                         dict[str, Any]]:
    """:meth:`SPLUGen.randomise` over all records; each partition's slice of it."""
    sensitive = {s: np.concatenate([p[s] for p in parts]) for s in mech.sensitive}
    published, keep, part = mech.randomise(schema, sensitive, source)
    cuts = np.cumsum([0] + [len(p[mech.sensitive[0]]) for p in parts])
    slices = [({s: v[a:b] for s, v in published.items()}, keep[a:b])
              for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    parameters = mech.released(schema, len(keep), len(part.residue)).parameters()
    return slices, parameters


def _apply(schema: Schema, frame: pd.DataFrame, plan: Any, i: int) -> np.ndarray:
    published, keep = plan[0][i]
    digits = _digits(schema, frame)
    rows = {n: published.get(n, d)[keep] for n, d in zip(schema.names, digits, strict=True)}
    return codes_of(schema, rows).reshape(int(keep.sum()), schema.limbs)


def publish_dask(mech: SPLUGen, data: Any, schema: Schema | None, source: RandomSource,
                 npartitions: int | None = None) -> DaskRelease:
    """SPLU-Gen over a dask DataFrame (module docstring). Reads the data once
    now (bad values are reported then); the rest runs when the release is
    written or computed."""
    import dask

    if schema is None:
        raise ParameterError("publishing a dask DataFrame with SPLU-Gen needs a declared "
                             "schema (SPLUGen(..., schema=) or publish(..., schema=)); "
                             "deriving one would read every value first")
    mech._check_schema(schema)
    codes = encoded(schema, data)
    sample = code_sample(codes, schema.limbs)
    if sample.total == 0:
        raise ParameterError("the data hold no records; there is nothing to publish")
    parts = codes.to_delayed()
    plan = dask.delayed(_plan, nout=2)(
        mech, schema, [dask.delayed(_sensitive)(mech, schema, p) for p in parts], source)
    rows = [dask.delayed(_apply)(schema, p, plan, i) for i, p in enumerate(parts)]
    bounds = split_points(sample, schema.size, npartitions or data.npartitions)
    ranges = by_range(rows_frame(rows, schema.limbs), bounds, schema.limbs)
    return DaskRelease(schema, mech.name, ranges, plan[1], source.policy)
