"""Q(V) of a batch of conditions in one pass over the view, whatever the batch's size.

Counting each condition over the rows costs a pass per condition (a truth
table lookup per row: :meth:`~privpub.counting.query.Condition.count_digits`),
so 5,000 WHERE texts on Adult's view cost 5,000 passes over its rows. But a
condition with a truth table (the condition over the projection of D on its
attributes) counts the same from the view's histogram over those attributes:
Q(V) = Σ over cells of histogram × table. The histograms of every attribute
set in the batch come from one pass over the rows
(:func:`~privpub.tables.marginals.covered_histograms`: a budgeted cover of the
sets, summed down exactly), and each condition then costs its table's cells,
not the view's rows.

A small batch on a file keeps the row-group scan, which skips the groups a
condition cannot match (:mod:`privpub.viewfile.scan`); a condition on the
leading attributes of sorted codes in memory is counted by binary search
(:meth:`~privpub.viewfile.rows.MemoryView.prefix_counts`); conditions without
a truth table (a projection past its limit) are counted over the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privpub.domain.schema import Schema
from privpub.tables.marginals import covered_histograms
from privpub.viewfile.rows import MemoryView, TableView

#: Conditions from which a file-backed view is counted by histograms: below it,
#: the pruned scan (which skips row groups per condition) reads less.
FILE_BATCH = 8


def count_many(schema: Schema, rows: TableView, conditions: Sequence[Any]) -> list[int]:
    """Q(V) of each condition (each reads at least one attribute), exactly."""
    found: list[int | None] = [None] * len(conditions)
    if isinstance(rows, MemoryView):  # the leading attributes of sorted codes: searched
        for i, n in rows.prefix_counts(conditions).items():
            found[i] = n
    tabled = [i for i, c in enumerate(conditions)
              if found[i] is None and c.truth_table() is not None]
    by_tables = len(tabled) > 1 and (isinstance(rows, MemoryView) or len(tabled) >= FILE_BATCH)
    if not by_tables:
        tabled = []
    subsets = list(dict.fromkeys(conditions[i].attributes for i in tabled))
    histograms = dict(zip(subsets, covered_histograms(
        schema, [list(s) for s in subsets], rows.counting_batches), strict=True)) \
        if subsets else {}
    for i in tabled:
        condition = conditions[i]
        # Both are over the condition's attributes in schema order, first slowest.
        found[i] = int(np.dot(histograms[condition.attributes],
                              condition.truth_table().astype(np.int64)))
    rest = [i for i, n in enumerate(found) if n is None]
    if rest:
        for i, n in zip(rest, rows.count_many([conditions[i] for i in rest]), strict=True):
            found[i] = n
    return [int(n) for n in found]
