"""What an estimator reads of a published view (:class:`Counts`), and the
counting passes behind it that a view's rows alone do not make: Q(V) and the
rows inside one of the view's public context sets (the codes of the views
before it, for the i-th of several αβ views).

Q(V) of a batch over the whole view is :func:`privpub.tables.batchcount.count_many`'s;
inside a context set every attribute is read to form the codes, batch by batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core.errors import ParameterError
from privpub.counting.query import Condition
from privpub.tables.records import isin_sorted
from privpub.viewfile.columns import Digits, codes_of
from privpub.viewfile.rows import TableView


@dataclass(frozen=True)
class Counts:
    """What an estimator reads, for one query (scalars) or a batch (arrays).

    ``domain_sum(weights)`` is ``Σ_{t ∈ Q(D)} Π_j weights[j][t_j]``;
    ``context(name)`` is (Q(V ∩ C), Q(C)) for the release's context set C.
    """

    n_view: Any
    n_domain: Any
    domain_sum: Callable[[Sequence[np.ndarray]], Any]
    context: Callable[[str], tuple[Any, Any]]

    def row(self, i: int) -> Counts:
        """Query i's counts of a batch, as that query alone has them (Python
        numbers; Q(D) a float64, as the estimators read it)."""
        def domain_sum(weights: Sequence[np.ndarray]) -> Any:
            return self.domain_sum(weights)[i]

        def context(name: str) -> tuple[Any, Any]:
            inside, known = self.context(name)
            return inside[i].item(), known[i].item()

        return Counts(self.n_view[i].item(), np.float64(self.n_domain[i]), domain_sum, context)


def context_set(context: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    """The codes of the context set ``name`` of a view's ``context`` (a
    ParameterError naming the sets it has otherwise)."""
    if name not in context:
        raise ParameterError(f"this view has no context set {name!r} "
                             f"(it has: {sorted(context) or 'none'})")
    return context[name]


def batches_within(rows: TableView, attributes: Sequence[str],
                   within: np.ndarray | None) -> Iterator[Digits]:
    """Batches of a view's ``rows``; with ``within``, only rows whose code is in
    that sorted code set (all attributes are read to form the codes)."""
    if within is None:
        yield from rows.counting_batches(attributes)
        return
    for batch in rows.batches():
        codes = codes_of(rows.schema, batch)
        keep = isin_sorted(_rows(codes), _rows(within))
        yield {n: batch[n][keep] for n in rows.schema.names}


def count_rows(rows: TableView, cond: Condition, within: np.ndarray | None = None) -> int:
    """Q(V): the ``rows`` that satisfy ``cond`` (inside ``within``, when given)."""
    if not cond.attributes:  # TRUE or FALSE: no column to read
        return int(cond.mask_digits({}, rows_in(rows, within)).sum())
    if within is None:
        return rows.count(cond)
    total = 0
    for batch in batches_within(rows, cond.attributes, within):
        total += cond.count_digits(batch, len(batch[cond.attributes[0]]))
    return total


def rows_in(rows: TableView, within: np.ndarray | None) -> int:
    """How many ``rows`` (inside ``within``, when given): on file, counted in a
    pass over one column the first time (not the footer's word for it)."""
    if within is None:
        return rows.checked_len()
    return int(isin_sorted(_rows(rows.codes()), _rows(within)).sum())


def memo(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``function`` computed once per argument (by identity for arrays: the
    estimator and its interval law ask for the same context or weights)."""
    seen: dict[Any, Any] = {}

    def memoised(arg: Any) -> Any:
        key = arg if isinstance(arg, str) else id(arg)
        if key not in seen:
            seen[key] = (arg, function(arg))  # keep arg alive: its id stays unique
        return seen[key][1]

    return memoised


def _rows(codes: np.ndarray) -> np.ndarray:
    """Codes as (n, limbs) rows (what the record helpers take)."""
    return codes.reshape(-1, 1) if codes.ndim == 1 else codes
