"""Algorithm 1's two steps over sorted records, the β-step drawn window by window.

- α-step: record i of the sorted records is kept with element ``start`` + i
  of the "alpha-step" stream: the first copy of a tuple with probability
  α + β(t), each further copy with α (``_core.sampling.keep_records``);
- β-step: every code of the domain not in I is inserted with probability
  β(t), drawn exactly in expected O(β_max·m + n) time, never O(m), in fixed
  segments of code space, segment s from its own stream
  (``_core.sampling.beta_step``); with a source distribution, candidates come
  at the largest rate β_max and are thinned to β(t)
  (``_core.sampling.thin_product``).

A slice of the sorted records and the segments of its code range give the
slice of the whole view in that range (a Dask task's share, byte for byte:
:mod:`privpub.alphabeta.distributed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

import privpub._core as _core
from privpub.core.seeding import RandomSource
from privpub.tables.records import code_range, distinct_sorted, repeated_rows

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta


class Draw:
    """Algorithm 1 over sorted records, the β-step drawn window by window.

    The α-step mask is drawn for all the records at once (they are in memory),
    record i from stream element ``start`` + i; the β-step is drawn over the
    segments [a, b) (all by default), ``window`` segments at a time (all at
    once by default), each window merged with the kept records of its code
    range. A window's codes depend only on its segments (rust/src/sample.rs),
    so any window gives the same view.
    """

    def __init__(self, mech: AlphaBeta, rand: RandomSource, records: np.ndarray, *,
                 start: int = 0, segments: tuple[int, int] | None = None,
                 window: int | None = None,
                 progress: Callable[[int, int], None] | None = None):
        self.mech, self.rand, self.segments = mech, rand, segments
        self.window, self.progress = window, progress
        first = mech.alpha + mech.beta * (np.ones(1) if mech.source is None
                                          else mech.source.weight_of(records))
        keep = _core.sampling.keep_records(rand.derive("alpha-step").key, records, first,
                                           mech.alpha, start=start)
        self.kept = np.ascontiguousarray(records[keep])
        self.distinct = distinct_sorted(records)

    def revealed(self) -> int:
        """How many tuples appear two or more times in the view. The β-step
        leaves out the records' own codes and draws distinct codes, so only
        kept records repeat: counted on them, not on the (much larger) view."""
        return repeated_rows(self.kept)

    def chunks(self) -> Iterator[np.ndarray]:
        """The view's sorted (rows, limbs) codes, one array per window."""
        mech, m = self.mech, self.mech.schema.size
        seg_len, count = _core.sampling.beta_step_layout(m, mech.beta_max)
        begin, end = (0, count) if self.segments is None else self.segments
        window = max(end - begin, 1) if self.window is None else self.window
        key = self.rand.derive("beta-step").key
        thinning, candidates = self.rand.derive("thinning").key, 0
        for first in range(begin, max(end, begin + 1), window):
            stop = min(first + window, end)
            lo, hi = first * seg_len, m if stop == count else stop * seg_len
            kept = self.kept[code_range(self.kept, lo, hi)]
            excluded = self.distinct[code_range(self.distinct, lo, hi)]
            if mech.source is None:  # the kernel writes the kept records in as it draws
                rows = _core.sampling.beta_step(key, m, mech.beta_max, excluded,
                                                segments=(first, stop), kept=kept)
            else:  # candidates are thinned first: the records join after
                noise = _core.sampling.beta_step(key, m, mech.beta_max, excluded,
                                                 segments=(first, stop))
                accept = _core.sampling.thin_product(thinning, noise, list(mech.schema.radices),
                                                     mech.source.ratios(), start=candidates)
                candidates += len(noise)
                rows = _core.sampling.merge_sorted(kept, np.ascontiguousarray(noise[accept]))
            if self.progress is not None:
                self.progress(stop - begin, end - begin)
            yield rows
