"""Every equality query over attribute subsets at once.

The histograms of the view over the asked subsets come from a budgeted cover
of them (:mod:`privpub.tables.cover`), one Rust pass over the rows in
parallel, summed down exactly; the estimates of all cells are flat arrays
(:class:`MarginalEstimates`), labelled per subset on request
(:func:`labelled_frames`). The estimator itself is the mechanism's
(:func:`marginal_estimates`, behind
:meth:`~privpub.tables.published.PublishedView.estimate_marginals_arrays`,
hands it the counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np
import pandas as pd

import privpub._core as _core
from privpub.core.errors import ParameterError
from privpub.core.estimate import LEVEL, check_level
from privpub.domain.schema import Schema
from privpub.tables.cover import budgeted_cover, sum_down
from privpub.tables.viewcounts import Counts, batches_within, context_set, memo
from privpub.viewfile.columns import Digits, pandas_column
from privpub.viewfile.rows import MemoryView, TableView

#: Most value combinations estimate_marginals handles in one call.
MARGINAL_CELLS = 1 << 24


def check_subsets(schema: Schema, subsets: Sequence[Sequence[str]]) -> list[list[str]]:
    """The subsets as lists, each of distinct known attributes and at most
    :data:`MARGINAL_CELLS` cells; at least one."""
    subsets = [list(s) for s in subsets]
    if not subsets:
        raise ParameterError("no attribute subsets were given")
    for attributes in subsets:
        if not attributes:
            raise ParameterError("a marginal needs at least one attribute; "
                                 "estimate(None) counts all records")
        for name in attributes:
            schema[name]  # names unknown attributes
        if len(set(attributes)) != len(attributes):
            raise ParameterError(f"attributes repeat: {attributes}")
        cells = math.prod(schema[a].size for a in attributes)
        if cells > MARGINAL_CELLS:
            raise ParameterError(f"{cells:,} value combinations over {attributes}; the "
                                 f"limit is {MARGINAL_CELLS:,}")
    return subsets


def covered_histograms(schema: Schema, subsets: list[list[str]],
                       batches: Callable[[list[str]], Iterator[Digits]]) -> list[np.ndarray]:
    """Each subset's histogram, from histograms over a budgeted cover of the
    subsets summed down exactly (``batches(attributes)`` yields the rows)."""
    sizes = {a.name: a.size for a in schema}
    covers, where = budgeted_cover(subsets, schema.names, sizes)
    used = [n for n in schema.names if any(n in c for c in covers)]
    hists = _histograms(schema, covers, batches(used))
    out: list[np.ndarray] = [np.empty(0)] * len(subsets)
    for c, cover in enumerate(covers):
        members = [s for s in range(len(subsets)) if where[s] == c]
        for s, counts in zip(members, sum_down(hists[c], cover, [subsets[s] for s in members],
                                               sizes), strict=True):
            out[s] = counts
    return out


@dataclass(frozen=True)
class MarginalEstimates:
    """Estimates of every equality query over several attribute subsets, flat:
    subset s's cells are ``offsets[s]:offsets[s+1]`` of ``n_view``,
    ``estimate`` and ``stderr`` (plug-in; first attribute slowest);
    ``n_domain[s]`` is exact (a Python int) and the same for every cell of
    subset s. ``counts`` says what the estimates count, as
    :attr:`Estimate.counts`; :meth:`interval` gives every cell's confidence
    interval (``interval_method`` as :attr:`Estimate.interval_method`)."""

    subsets: list[list[str]]
    offsets: np.ndarray
    n_view: np.ndarray
    n_domain: list[int]
    estimate: np.ndarray
    stderr: np.ndarray
    counts: str
    interval_method: str
    #: The law the intervals invert.
    law: Any = dataclass_field(default=None, compare=False, repr=False)

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi), int64 arrays aligned with ``estimate``: each cell's count
        is within its interval with probability ≥ ``level`` whatever it is
        (:class:`Estimate`). Vectorised over the cells (cells with the same
        Q(V) and Q(D) are solved once)."""
        lo, hi = self.law.interval(check_level(level))
        return np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)

    def inconsistent(self, level: float = LEVEL) -> np.ndarray:
        """Each cell's :meth:`Estimate.inconsistent
        <privpub.core.estimate.Estimate.inconsistent>`: every count rejected at
        ``level``, the interval then the whole range (bool, aligned with ``estimate``)."""
        return np.asarray(self.law.inconsistent(check_level(level)), dtype=bool).reshape(-1)


def labelled_frames(schema: Schema, bulk: MarginalEstimates,
                    level: float | None) -> list[pd.DataFrame]:
    """One frame per subset of ``bulk``: the value columns labelled from codes
    (:func:`~privpub.viewfile.columns.pandas_column`), then ``n_view``, ``n_domain``,
    ``estimate``, ``stderr`` and, unless ``level`` is None, ``lo``, ``hi`` and
    ``inconsistent`` (every count rejected at that level: the interval is the
    whole range, claiming nothing)."""
    lo, hi = (None, None) if level is None else bulk.interval(level)
    bad = None if level is None else bulk.inconsistent(level)
    attrs = {"counts": bulk.counts}
    if level is not None:
        attrs |= {"level": check_level(level), "interval_method": bulk.interval_method}
    tables = []
    for s, attributes in enumerate(bulk.subsets):
        part = slice(bulk.offsets[s], bulk.offsets[s + 1])
        radices = [schema[a].size for a in attributes]
        digits = np.indices(radices, dtype=np.int32).reshape(len(radices), -1)
        columns = {a: pandas_column(schema[a], d, checked=True)
                   for a, d in zip(attributes, digits, strict=True)}
        n_domain = bulk.n_domain[s]
        # Exact: int64 when it fits, else Python ints (never rounded, never text).
        columns |= {"n_view": bulk.n_view[part], "n_domain": np.full(
                    len(digits[0]), n_domain, dtype=np.int64 if n_domain < 2**63 else object),
                    "estimate": bulk.estimate[part], "stderr": bulk.stderr[part]}
        if level is not None:
            columns |= {"lo": lo[part], "hi": hi[part],
                        "inconsistent": bad[part]}
        frame = pd.DataFrame(columns, copy=False)
        frame.attrs = dict(attrs)
        tables.append(frame)
    return tables


def _histograms(schema: Schema, subsets: list[list[str]],
                batches: Iterator[Digits]) -> list[np.ndarray]:
    """Counts of the rows over each subset's value combinations, summed over
    batches (Rust, parallel over subsets, when every radix fits in u16)."""
    used = [n for n in schema.names if any(n in s for s in subsets)]
    radices = [schema[n].size for n in used]
    index = [[used.index(a) for a in attrs] for attrs in subsets]
    totals = [np.zeros(math.prod(radices[j] for j in attrs), dtype=np.int64) for attrs in index]
    for batch in batches:
        if max(radices) <= 1 << 16:  # the Rust kernel reads u16 digits
            small = np.empty((len(used), len(batch[used[0]])), dtype=np.uint16)
            for j, n in enumerate(used):  # cast as copied: one pass per column
                small[j] = batch[n]
            _core.counting.count_subsets(small, radices, index, totals)
            continue
        for attrs, total in zip(index, totals, strict=True):
            codes = _core.codes.encode_u64([np.ascontiguousarray(batch[used[j]]) for j in attrs],
                                           [0] * len(attrs), [None] * len(attrs),
                                           [radices[j] for j in attrs])
            total += np.bincount(codes.astype(np.int64), minlength=len(total))
    return totals


def product_sums(schema: Schema, attributes: Sequence[str],
                 weights: Sequence[np.ndarray]) -> np.ndarray:
    """Σ over each cell's domain tuples of Π_j w_j: the cell's own weights
    (outer product, first attribute slowest) times the other attributes' sums."""
    chosen = [schema.names.index(a) for a in attributes]
    grid = np.ones(1)
    for j in chosen:
        grid = np.multiply.outer(grid, weights[j]).reshape(-1)
    others = [j for j in range(len(schema)) if j not in chosen]
    return grid * math.prod(float(weights[j].sum()) for j in others)


def marginal_estimates(rows: TableView, context: Mapping[str, np.ndarray], mech: Any,
                       counted: str, subsets: Sequence[Sequence[str]]) -> MarginalEstimates:
    """Every equality query over each attribute subset of a view (its ``rows`` and
    ``context`` sets), estimated by its mechanism ``mech`` (a CountEstimator), as flat
    arrays; ``counted`` is what the estimates count
    (:meth:`~privpub.tables.published.PublishedView.estimate_marginals_arrays`)."""
    schema = rows.schema
    subsets = check_subsets(schema, subsets)
    n_view = view_histograms(rows, subsets)
    offsets = np.cumsum([0] + [len(h) for h in n_view])
    n_domain = [schema.size // len(h) for h in n_view]

    @memo
    def in_context(name: str) -> tuple[np.ndarray, np.ndarray]:
        within = context_set(context, name)
        inside = view_histograms(rows, subsets, within=within)
        known = covered_histograms(schema, subsets,
                                   lambda used: MemoryView(schema, within).batches())
        return np.concatenate(inside), np.concatenate(known)

    counts = Counts(np.concatenate(n_view),
                    np.repeat(np.array(n_domain, dtype=float), np.diff(offsets)),
                    memo(lambda w: np.concatenate([product_sums(schema, a, w)
                                                   for a in subsets])),
                    in_context)
    value, variance = mech.estimate(counts)
    law = mech.interval_law(counts)
    return MarginalEstimates(subsets, offsets, counts.n_view, n_domain,
                             np.asarray(value, dtype=float),
                             np.sqrt(np.maximum(variance, 0.0)), counted,
                             law.method, law)


def view_histograms(rows: TableView, subsets: list[list[str]],
                    within: np.ndarray | None = None) -> list[np.ndarray]:
    """Each subset's histogram over a view's ``rows`` (within a code set)."""
    return covered_histograms(rows.schema, subsets,
                              lambda used: batches_within(rows, used, within))
