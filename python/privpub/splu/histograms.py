"""What a reconstruction reads off a SPLU-Gen release: the joint counts of a
predicate P (on non-sensitive attributes) and the sensitive values, and each
query's published state counts y (:mod:`privpub.splu.em` estimates from
them). A batch is grouped by attribute set, as the αβ marginals are: the
joint histograms of every predicate's attributes with the sensitive ones come
from one pass over the release, each predicate sums the cells it holds on,
and the state counts of all queries are gathered at once (issue 36)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from privpub.core.errors import ParameterError, QueryError
from privpub.tables.marginals import covered_histograms
from privpub.tables.published import PublishedView

if TYPE_CHECKING:
    from privpub.counting.query import Condition

#: Largest joint histogram (P × sensitive values) per predicate.
MAX_CELLS = 1 << 24


def value_index(schema, attribute: str, value: Any) -> int:
    """The domain index of ``value`` in ``attribute``, or a QueryError naming both."""
    index = schema.index_of(attribute, value)
    if index is None:
        raise QueryError(f"value {value!r} is not in the domain of sensitive attribute "
                         f"{attribute!r} ({schema[attribute].describe()})")
    return index


def _predicate(view: PublishedView, where: Any) -> Condition:
    """P parsed against the release, refused if it reads a sensitive attribute."""
    cond = view.condition(where)
    overlap = [a for a in cond.attributes if a in view.parameters["sensitive"]]
    if overlap:
        raise QueryError(f"the predicate reads sensitive attribute(s) {overlap}; give their "
                         "values as the query's sensitive values, P must be non-sensitive")
    return cond


def joint_counts(view: PublishedView, attrs: Sequence[str], mask: Condition | None = None
                 ) -> np.ndarray:
    """The release's counts over ``attrs`` (shape (V_1, …)) in one pass; with
    ``mask`` a leading axis of 2 splits them by P false / true."""
    sizes = [view.schema[a].size for a in attrs]
    cells = (1 if mask is None else 2) * math.prod(sizes)
    if cells > MAX_CELLS:
        raise ParameterError(f"{cells:,} joint cells over {list(attrs)}; the limit is "
                             f"{MAX_CELLS:,}")
    total = np.zeros(cells, dtype=np.int64)
    needed = sorted(set(attrs) | (set() if mask is None else set(mask.attributes)))
    for batch in view.rows.batches(needed):
        rows = len(batch[needed[0]]) if needed else len(view)
        index = (np.zeros(rows, dtype=np.int64) if mask is None
                 else mask.mask_digits(batch, rows).astype(np.int64))
        for a, size in zip(attrs, sizes, strict=True):
            index = index * size + batch[a]
        total += np.bincount(index, minlength=cells)
    return total.reshape(([] if mask is None else [2]) + sizes)


def predicate_histogram(view: PublishedView, where: Any, attrs: list[str]) -> np.ndarray:
    """Joint counts over (P true/false, each attribute's value): shape (2, V_1, …).
    P false is index 0 along the first axis; the paper's state order puts P first."""
    return joint_counts(view, attrs, _predicate(view, where))


def predicate_histograms(view: PublishedView, wheres: Sequence[Any], attrs: list[str]
                ) -> list[np.ndarray]:
    """:func:`predicate_histogram` for many predicates: those reading the same attributes
    share the joint histogram over their attributes and ``attrs``, summed over
    the tuples of the attributes' domain each predicate holds on (exact: P
    depends on those attributes alone). The joint histograms of every such
    attribute set come from one pass over the release (a budgeted cover of
    them, summed down: :func:`~privpub.tables.marginals.covered_histograms`, as
    the αβ marginals are); a predicate whose joint histogram would pass the
    cell limit is counted in a pass of its own."""
    conds = [_predicate(view, w) for w in wheres]
    out: list[np.ndarray] = [np.zeros(0)] * len(conds)
    by_attrs: dict[tuple[str, ...], list[int]] = {}
    for i, cond in enumerate(conds):
        by_attrs.setdefault(tuple(cond.attributes), []).append(i)
    schema, sizes = view.schema, [view.schema[a].size for a in attrs]
    domains = {p: math.prod(schema[a].size for a in p) for p in by_attrs}
    shared = [p for p in by_attrs if domains[p] * math.prod(sizes) <= MAX_CELLS]
    joints = dict(zip(shared, joint_histograms(view, [[*p, *attrs] for p in shared]),
                      strict=True))
    for pattrs, members in by_attrs.items():
        if pattrs not in joints:
            for i in members:
                out[i] = joint_counts(view, attrs, conds[i])
            continue
        joint = joints[pattrs].reshape(domains[pattrs], -1)
        total = joint.sum(axis=0)
        for i in members:
            # The predicate over the projection of D on its attributes (first slowest,
            # as the joint counts are): the cells it holds on, few for a conjunction.
            holds = _holds(conds[i], pattrs)
            true = joint[np.flatnonzero(holds)].sum(axis=0)
            out[i] = np.stack([total - true, true]).reshape(2, *sizes)
    return out


#: Most cells of the joint histograms counted in one pass (int64: 128 MiB).
PASS_CELLS = 1 << 24


def joint_histograms(view: PublishedView, subsets: Sequence[list[str]]) -> list[np.ndarray]:
    """The release's counts over each attribute list of ``subsets`` (flat, first
    attribute slowest), in one pass per :data:`PASS_CELLS` of them."""
    out: list[np.ndarray] = []
    start = 0
    while start < len(subsets):
        end, cells = start, 0
        while end < len(subsets) and (end == start or cells + _cells(view, subsets[end])
                                      <= PASS_CELLS):
            cells += _cells(view, subsets[end])
            end += 1
        out += covered_histograms(view.schema, list(subsets[start:end]),
                                  view.rows.counting_batches)
        start = end
    return out


def _cells(view: PublishedView, attrs: Sequence[str]) -> int:
    return math.prod(view.schema[a].size for a in attrs)


def _holds(cond: Condition, attrs: tuple[str, ...]) -> np.ndarray:
    """``cond`` over every tuple of the projection of D on ``attrs`` (its attributes,
    first slowest): its truth table, or past the table's limit its mask over the
    projection's digits."""
    table = cond.truth_table()
    if table is not None:
        return table
    sizes = [cond.schema[a].size for a in attrs]
    domain = math.prod(sizes)
    digits = np.indices(sizes).reshape(len(attrs), domain)
    return cond.mask_digits({a: digits[j] for j, a in enumerate(attrs)}, domain)


#: Most histogram cells gathered at once for the state counts of a chunk of queries.
STATE_CELLS = 1 << 22


def state_counts(hists: Sequence[np.ndarray], indices: Sequence[np.ndarray]
                 ) -> list[np.ndarray]:
    """y for each histogram's queries: published counts of the K = 2^{w+1}
    states, P slowest, then s_1 … s_w (bit 1 = the query's value). ``hists``
    are joint histograms of one shape (2, V_1, …: :func:`predicate_histograms`),
    ``indices[g]`` (Q_g, w) the value indices of histogram g's queries; the
    queries of many histograms are done together, a chunk of at most
    :data:`STATE_CELLS` gathered cells (and the histograms it reads) at a time."""
    cells = max(1, math.prod(hists[0].shape[1:])) if hists else 1
    out: list[np.ndarray] = []
    start = 0
    while start < len(hists):
        end, size = start + 1, len(indices[start])
        while end < len(hists) and (size + len(indices[end])) * cells <= STATE_CELLS:
            size += len(indices[end])
            end += 1
        which = np.repeat(np.arange(end - start), [len(i) for i in indices[start:end]])
        y = _states(np.stack(hists[start:end]), which, np.concatenate(indices[start:end]))
        out += np.split(y, np.cumsum([len(i) for i in indices[start:end - 1]]))
        start = end
    return out


def _states(hists: np.ndarray, which: np.ndarray, index: np.ndarray) -> np.ndarray:
    """:func:`state_counts` of queries reading histogram ``which`` of ``hists``."""
    q, w = index.shape
    y = np.empty((q, 2, *([2] * w)))
    for p in (0, 1):
        h = hists[which, p].astype(float)
        # Collapse one attribute at a time into (¬s_j, s_j).
        for j in range(w):
            axis = 1 + j
            hit = np.take_along_axis(h, _expand(index[:, j], h.ndim), axis=axis)
            rest = h.sum(axis=axis, keepdims=True) - hit
            h = np.concatenate([rest, hit], axis=axis)
        y[:, p] = h
    return y.reshape(q, -1)


def _expand(idx: np.ndarray, ndim: int) -> np.ndarray:
    """(Q,) indices shaped (Q, 1, …, 1) to take along any axis of a (Q, …) array."""
    shape = [1] * ndim
    shape[0] = len(idx)
    return idx.reshape(shape)
