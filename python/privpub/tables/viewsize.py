"""The expected Parquet size of a published view, measured with the library's writer.

Used by the αβ and FRAPP planners (:mod:`privpub.alphabeta.planning`,
:mod:`privpub.frapp.planning`): both publish views of uniform-looking tuples at
a density rows/m, whatever produced them.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from privpub.core.seeding import SEEDED
from privpub.core.temporaries import temporary_directory
from privpub.domain.schema import Schema
from privpub.tables.published import PublishedView
from privpub.tables.records import as_schema_codes, distinct_sorted, sorted_rows
from privpub.viewfile.rows import MemoryView

#: Rows of the synthetic slice written to measure Parquet bytes per row.
SAMPLE_ROWS = 1 << 15


def _slice_digits(schema: Schema, rows: float, size: int, rng: np.random.Generator
                  ) -> list[np.ndarray]:
    """Digits of about ``size`` distinct tuples drawn uniformly, at the density
    rows/m of a view of ``rows`` rows, from one contiguous slice of the code
    order (leading digits 0, the next one below q, the rest free: q·T tuples,
    T a product of trailing radices). A sorted view's row group is such a
    slice, so its Parquet pages see the same run lengths as the full view's."""
    radices = [int(r) for r in schema.radices]
    density = min(1.0, rows / schema.size)
    want = size / density                     # the slice length that holds `size` rows
    j = 0
    while math.prod(radices[j:]) > want:      # stops: the empty product 1 ≤ want
        j += 1
    sizes = [1] * (j - 1) + radices[max(j - 1, 0):]
    if j:
        sizes[j - 1] = min(radices[j - 1], max(1, round(want / math.prod(radices[j:]))))
    length = math.prod(sizes)
    if length <= 64 * size:                   # enumerate the slice, keep each w.p. density
        idx = np.flatnonzero(rng.random(length) < density)
        digits = []
        for radix in reversed(sizes):
            idx, digit = np.divmod(idx, radix)
            digits.append(digit)
        return digits[::-1]
    # Sparse: independent uniform digits (repeats, < 1/128 of them, are dropped by the caller).
    count = max(1, round(density * length))
    return [rng.integers(0, radix, count) for radix in sizes]


def _measure(mech: Any, rows: float) -> tuple[float, float]:
    """(bytes per row, fixed bytes) of the library's writer at this view's density."""
    rng = np.random.default_rng(0)            # a size measurement, not a release
    sizes = []
    with temporary_directory() as tmp:
        path = os.path.join(tmp, "slice.parquet")
        for size in (min(rows, SAMPLE_ROWS), min(rows, SAMPLE_ROWS) / 2):
            digits = _slice_digits(mech.schema, rows, max(1, round(size)), rng)
            codes = as_schema_codes(mech.schema, distinct_sorted(sorted_rows(
                MemoryView(mech.schema, digits=digits).codes())))
            PublishedView(codes, mech.schema, mech.name, mech.parameters(),
                          SEEDED).to_parquet(path, overwrite=True)
            sizes.append((len(codes), os.path.getsize(path)))
    (r1, b1), (r2, b2) = sizes
    slope = (b1 - b2) / (r1 - r2) if r1 != r2 else 0.0
    return slope, b1 - slope * r1


def view_bytes(mech: Any, rows: float,
                   cache: dict[tuple, tuple[float, float]] | None = None) -> int:
    """Estimated bytes of ``PublishedView.to_parquet`` for a view of ``rows`` rows
    published by ``mech`` (any mechanism with a ``schema``, ``name`` and ``parameters()``).

    Measured, not derived from code widths: the library's own writer writes
    two sorted slices of uniform tuples at the view's density (SAMPLE_ROWS
    rows and half as many, :func:`_slice_digits`) and the size is extrapolated
    linearly (the intercept is the footer: schema and metadata). Uniform tuples
    are what αβ's noise and FRAPP's replacements are; kept records cluster and
    compress a little better, so the estimate errs high where they are a large
    share of the view (tested within 25% of real writes). ``cache`` reuses a
    measurement for views within 2^(1/16) in density.
    """
    rows = max(float(rows), 1.0)
    cache = {} if cache is None else cache
    key = (mech.name, round(16 * math.log2(rows / mech.schema.size)),
           round(16 * math.log2(min(rows, SAMPLE_ROWS))))
    if key not in cache:
        cache[key] = _measure(mech, rows)
    slope, fixed = cache[key]
    return round(fixed + slope * rows)
