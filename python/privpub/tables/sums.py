"""Sums and averages of a numeric column over a WHERE, estimated from a published view.

``SELECT sum(col) FROM I WHERE C`` is Σ_{t ∈ Q(I)} f(t), f(t) the number t
holds in ``col``. Split Q by the column's value v: the cells Q ∧ col = v are
count queries, and the sum is Σ_v f(v)·Q_v(I). Each family's count estimator
is linear in what it reads of a cell (Q(V), Q(D), weighted domain sums, counts
in a context set), so the same linear combination of its cell estimates is its
sum estimator: for αβ, (Σ_{V ∩ Q} f − β·Σ_{Q(D)} f)/α. The cells are read the
way a marginal's are: one histogram pass over the view's rows on the
attributes the condition and the column read (the Rust counting kernel), the
condition's truth table laid over it, and the domain's cells from the same
table (:func:`cell_counts`); no pass per value, no per-row Python object.

An average is avg(col) = sum / count of the rows whose ``col`` is not missing
(DuckDB's avg skips NULL, and privpub's missing marker stands for NULL): a
**ratio estimator**, consistent but not unbiased, with a delta-method stderr.

What a column must be: an integer range or numeric labels (an attribute whose
values are numbers). A string column is refused, even when its labels look
like numbers or bands (``'20-29'``): they are not numbers to add. The missing
marker adds nothing to a sum and is left out of an average's count, as NULL
is in SQL.

The family does the estimating (:class:`~privpub.core.capabilities.SumEstimator`);
this module reads the view and the column, and puts the result in the one
:class:`~privpub.core.estimate.Estimate` contract.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from privpub.core.capabilities import (
    CountEstimator,
    SumEstimator,
    hidden_attributes,
    privacy_request,
    sum_refusal,
)
from privpub.core.errors import QueryError
from privpub.core.estimate import Estimate
from privpub.counting.query import Condition
from privpub.domain.schema import Schema
from privpub.tables.marginals import MARGINAL_CELLS, covered_histograms, product_sums
from privpub.tables.sumlaw import AverageLaw, BernsteinLaw, RatioLaw
from privpub.tables.viewcounts import Counts, batches_within, context_set, memo
from privpub.viewfile.rows import MemoryView, TableView


@dataclass(frozen=True)
class Summed:
    """The column a sum or average reads: ``values[v]`` the number domain value v
    holds (0 for the missing marker), ``present[v]`` 1 unless v is the marker."""

    column: str
    values: np.ndarray
    present: np.ndarray


def summed_column(schema: Schema, column: str, query: str) -> Summed:
    """The numbers of ``column`` by domain index; a QueryError naming the column
    (and why) when it is not in the schema or does not hold numbers."""
    if column not in schema.names:
        raise QueryError(f"{query}: no column {column!r} to sum (the table has: "
                         f"{', '.join(schema.names)})")
    attr = schema[column]
    if attr.kind not in ("integer", "float"):
        shown = ", ".join(repr(v) for v in list(attr.values)[:3])
        raise QueryError(f"{query}: column {column!r} holds {attr.kind} labels ({shown}, …), "
                         "not numbers, so it has no sum or average; a sum reads an integer "
                         "range or numeric labels (bin a number into bands only to count)")
    values = np.asarray(attr.values, dtype=float)
    present = np.ones(len(values))
    if attr.missing is not None:  # a marker standing for NULL: no value, not counted
        index = list(attr.values).index(attr.missing)
        values[index], present[index] = 0.0, 0.0
    return Summed(column, values, present)


def cell_counts(schema: Schema, rows: TableView, context: Mapping[str, np.ndarray],
                queries: Sequence[tuple[Condition, str]]) -> list[Counts]:
    """For each (condition, column): the :class:`Counts` of its cells
    (condition ∧ column = v, one per value v of the column, as arrays), the
    view's side from one histogram pass over the attributes the batch reads."""
    plans = [_CellPlan(schema, cond, column) for cond, column in queries]
    subsets = list(dict.fromkeys(tuple(p.attributes) for p in plans))
    histograms = dict(zip(subsets, covered_histograms(
        schema, [list(s) for s in subsets], rows.counting_batches), strict=True))
    return [plan.counts(histograms[tuple(plan.attributes)], rows, context) for plan in plans]


class _CellPlan:
    """One query's cells over A (the condition's attributes and the column, in
    schema order): its truth table laid over A, and how A's grid reduces to
    the column's values."""

    def __init__(self, schema: Schema, cond: Condition, column: str):
        self.schema, self.cond, self.column = schema, cond, column
        self.attributes = [n for n in schema.names if n in cond.attributes or n == column]
        self.shape = [schema[a].size for a in self.attributes]
        cells = math.prod(self.shape)
        table = cond.truth_table()
        if table is None or cells > MARGINAL_CELLS:
            raise QueryError(f"{cond.text}: the condition and column {column!r} read "
                             f"{cells:,} value combinations; a sum reads at most "
                             f"{MARGINAL_CELLS:,} (coarsen the condition's columns)")
        self.mask = table.reshape([schema[a].size if a in cond.attributes else 1
                                   for a in self.attributes]).astype(float)
        axis = self.attributes.index(column)
        self.others = tuple(j for j in range(len(self.shape)) if j != axis)

    def reduce(self, grid: np.ndarray) -> np.ndarray:
        """A grid over A (flat, first slowest) to the cells: the condition's
        part summed onto the column's values."""
        cells: np.ndarray = np.sum(np.asarray(grid, dtype=float).reshape(self.shape) * self.mask,
                                   axis=self.others)
        return cells

    def counts(self, histogram: np.ndarray, rows: TableView,
               context: Mapping[str, np.ndarray]) -> Counts:
        schema = self.schema
        ones = [np.ones(a.size) for a in schema]

        @memo
        def in_context(name: str) -> tuple[np.ndarray, np.ndarray]:
            within = context_set(context, name)
            inside, = covered_histograms(schema, [self.attributes],
                                         lambda used: batches_within(rows, used, within))
            known, = covered_histograms(schema, [self.attributes],
                                        lambda used: MemoryView(schema, within).batches())
            return self.reduce(inside), self.reduce(known)

        return Counts(self.reduce(histogram),
                      self.reduce(product_sums(schema, self.attributes, ones)),
                      memo(lambda w: self.reduce(product_sums(schema, self.attributes, w))),
                      in_context)


def reduced(cells: Counts, weights: np.ndarray) -> Counts:
    """The counts of the cells' weighted sum (weights 0/1: the count query of
    the chosen cells): every count is linear in the cells."""
    def total(x: npt.ArrayLike) -> float:
        return float(np.dot(weights, np.asarray(x, dtype=float)))

    return Counts(total(cells.n_view), np.float64(total(cells.n_domain)),
                  memo(lambda w: total(cells.domain_sum(w))),
                  memo(lambda name: tuple(map(total, cells.context(name)))))


def sum_range(n: int | None, n_domain: npt.ArrayLike, weights: np.ndarray, distinct: bool
              ) -> tuple[float, float]:
    """The sums the release allows over cells holding ``n_domain`` domain tuples:
    at most n records (None: not known), each a value the cells' domain tuples
    hold; under set semantics (``distinct``) each domain tuple at most once."""
    n_domain = np.asarray(n_domain, dtype=float)
    allowed = n_domain > 0
    held = weights[allowed]
    low, high = min(float(held.min(initial=0.0)), 0.0), max(float(held.max(initial=0.0)), 0.0)
    bounds = [(-math.inf, math.inf)]
    if n is not None:
        bounds.append((n * low, n * high))
    if distinct:
        bounds.append((float(np.dot(np.minimum(weights, 0), n_domain)),
                       float(np.dot(np.maximum(weights, 0), n_domain))))
    return max(b[0] for b in bounds), min(b[1] for b in bounds)


def sum_estimate(mech: object, cond: Condition, summed: Summed, cells: Counts, counts: str,
                 distinct: bool) -> Estimate:
    """``sum(col)`` or ``avg(col)`` (the condition's aggregate) from its cells,
    by the family's :class:`~privpub.core.capabilities.SumEstimator`."""
    kind = cond.aggregate[0]
    if not isinstance(mech, SumEstimator):
        raise QueryError(f"{kind}({summed.column}) where {cond.text}: this release estimates "
                         f"counts, not sums: {sum_refusal(mech)}")
    hidden = [a for a in hidden_attributes(mech) if a in (*cond.attributes, summed.column)]
    if hidden:
        raise QueryError(f"{kind}({summed.column}) where {cond.text}: this release randomises "
                         f"{', '.join(map(repr, hidden))} (it is not published as it is), "
                         "so its sums and averages are not estimated; a sum or average "
                         "that reads only the attributes published unchanged is exact")
    f, g = summed.values, summed.present
    total_range = sum_range(privacy_request(mech).records, cells.n_domain, f, distinct)
    total, total_var = mech.estimate_sum(cells, f)
    total_law = mech.sum_law(cells, f, total_range)
    details = {"column": summed.column, "aggregate": kind,
               "view_sum": float(np.dot(f, cells.n_view)),
               "domain_sum": float(np.dot(f, cells.n_domain))}
    if kind == "sum":
        stated = total_range if math.isfinite(total_range[1] - total_range[0]) else None
        return Estimate(float(total), math.sqrt(max(float(total_var), 0.0)),
                        f"sum of {summed.column} over {counts}",
                        "unbiased linear estimator (plug-in stderr)", total_law.method,
                        total_law, query=cond.text, details=details, value_range=stated)
    count, _ = mech.estimate_sum(cells, g)
    ratio = float(total) / float(count) if count > 0 else math.nan
    spread = mech.estimate_sum(cells, f - (0.0 if math.isnan(ratio) else ratio) * g)[1]
    stderr = math.sqrt(max(float(spread), 0.0)) / float(count) if count > 0 else math.nan
    held = f[(np.asarray(cells.n_domain, dtype=float) > 0) & (g > 0)]
    low, high = (float(held.min()), float(held.max())) if held.size else (0.0, 0.0)
    # The count's own law where the family states one (exact for αβ sets and FRAPP).
    count_law = mech.interval_law(reduced(cells, g)) if isinstance(mech, CountEstimator) \
        else mech.sum_law(cells, g, sum_range(None, cells.n_domain, g, distinct))
    law: RatioLaw | AverageLaw = RatioLaw(total_law, count_law, low, high)
    if isinstance(total_law, BernsteinLaw):  # the test of sum − a·count (tables.sumlaw)
        # (the family's law is a Bernstein law for any weights when it is for the sum's)
        law = AverageLaw(lambda w: cast(BernsteinLaw, mech.sum_law(
                             cells, w, sum_range(None, cells.n_domain, w, distinct))),
                         f, g, count_law, low, high)
    notes = () if count > 0 else ("the count estimate is not positive: no average is "
                                  "estimated (the interval is the values' range)",)
    return Estimate(ratio, stderr, f"average of {summed.column} over {counts}",
                    "ratio of unbiased sum and count estimates (consistent, not unbiased; "
                    "delta-method stderr)", law.method, law, query=cond.text, notes=notes,
                    details={**details, "sum_estimate": float(total),
                             "count_estimate": float(count)},
                    value_range=(low, high))
