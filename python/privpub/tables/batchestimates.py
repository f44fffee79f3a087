"""A batch of counting conditions estimated at once from a view's counts (issue 36).

An estimator of counts (:class:`~privpub.core.capabilities.CountEstimator`)
works on arrays as well as on one query's numbers (a marginal's cells are
estimated so: :mod:`privpub.tables.marginals`), so a batch of conditions is
estimated by one call over :class:`~privpub.tables.viewcounts.Counts` of
arrays, one entry per condition, and its interval law is built once over
them (:class:`BatchCountLaw`: the intervals solved together). Making 5,000
estimates one at a time cost more than counting them (a law, a Counts and an
Estimate per query: ~0.5 s of the 5,000 WHERE texts' ~1.1 s on Adult).

Every number is the one a query estimated alone gets: the estimator's
arithmetic is elementwise, and query i's own law (:meth:`BatchCountLaw.row`,
what ``batch[i]`` carries) is the mechanism's law of query i's counts alone
(:meth:`Counts.row <privpub.tables.viewcounts.Counts.row>`), made when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core.capabilities import CountEstimator, StatedBound
from privpub.core.errors import ParameterError
from privpub.core.estimate import Estimates, IntervalLaw
from privpub.counting.domaincount import count
from privpub.counting.query import Condition
from privpub.tables.viewcounts import Counts, context_set, count_rows
from privpub.viewfile.rows import TableView

#: How a count estimate's value is made, as Estimate.method reports it.
METHOD = "unbiased estimator (plug-in stderr)"


class _Answers:
    """A function of the batch's conditions (a weighted domain sum, a context
    set's counts), computed once per argument (arrays by identity, as
    :func:`~privpub.tables.viewcounts.memo` does). Once settled it answers only what
    it was asked, and holds neither the function nor what the function read
    (the conditions with their truth tables, the view): a batch's estimates
    keep these arrays to make a query's own law (:meth:`BatchCountLaw.row`),
    which asks what the batch's law asked. An argument is then found by value
    too (the same weights, from a copy of the mechanism)."""

    def __init__(self, function: Callable[[Any], Any]):
        self.function: Callable[[Any], Any] | None = function
        self.seen: dict[Any, tuple[Any, Any]] = {}

    def __call__(self, arg: Any) -> Any:
        key = arg if isinstance(arg, str) else id(arg)
        if key not in self.seen:
            if self.function is None:
                return self._by_value(arg)
            self.seen[key] = (arg, self.function(arg))  # (arg kept: its id stays unique)
        return self.seen[key][1]

    def settle(self) -> None:
        self.function = None

    def _by_value(self, arg: Any) -> Any:
        for known, answer in self.seen.values():
            if _same(known, arg):
                return answer
        raise ParameterError(f"this batch's estimates were not asked for {arg!r}, and its "
                             "conditions are no longer held to count it")


def _same(a: Any, b: Any) -> bool:
    """Equal arguments: names, or sequences of equal arrays."""
    if isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class BatchCountLaw:
    """A batch's interval law (:class:`~privpub.core.estimate.BatchLaw`): the
    mechanism's law over the batch's counts (``law``) answers for every query
    at once; query i's own law is the mechanism's law of its counts alone."""

    law: Any
    mechanism: CountEstimator
    counts: Counts

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.law.interval(level)
        return np.asarray(lo).reshape(-1), np.asarray(hi).reshape(-1)

    def inconsistent(self, level: float) -> np.ndarray:
        check = getattr(self.law, "inconsistent", None)  # (a law that rejects nothing has none)
        if check is None:
            return np.zeros(len(self.counts.n_view), dtype=bool)
        return np.asarray(check(level), dtype=bool).reshape(-1)

    def row(self, i: int) -> IntervalLaw:
        return self.mechanism.interval_law(self.counts.row(i))


def estimate_conditions(rows: TableView, context: dict[str, np.ndarray],
                        mechanism: CountEstimator, conditions: Sequence[Condition],
                        n_view: Sequence[int], counted: str, stated: StatedBound | None,
                        value_range: tuple[int, int] | None) -> Estimates:
    """The estimates of ``conditions`` (COUNT queries) from a view's ``rows``
    and ``context`` sets, Q(V) of each given (``n_view``); ``counted``, the
    ``stated`` bound and the ``value_range`` are the release's."""
    if not conditions:  # (as Estimates.of refuses a batch of none)
        raise ParameterError("no estimates to batch (no queries were given)")
    schema = rows.schema
    n_domain = [count(schema, c).value for c in conditions]  # exact (Python ints)

    def domain_sum(weights: Sequence[np.ndarray]) -> np.ndarray:
        return np.array([float(count(schema, c, weights=weights).value) for c in conditions])

    def in_context(name: str) -> tuple[np.ndarray, np.ndarray]:
        within = context_set(context, name)
        return (np.array([count_rows(rows, c, within=within) for c in conditions],
                         dtype=np.int64),
                np.array([c.count_codes(within) for c in conditions], dtype=np.int64))

    sums, inside = _Answers(domain_sum), _Answers(in_context)
    counts = Counts(np.asarray(n_view, dtype=np.int64),
                    np.array([float(n) for n in n_domain]), sums, inside)
    value, variance = mechanism.estimate(counts)
    law = mechanism.interval_law(counts)
    sums.settle()  # the batch keeps its answers, not the conditions and the view
    inside.settle()
    size = len(conditions)
    failure = None if stated is None else stated.failure_probability
    return Estimates(
        np.broadcast_to(np.asarray(value, dtype=float), (size,)).copy(),
        np.sqrt(np.maximum(np.broadcast_to(np.asarray(variance, dtype=float), (size,)), 0.0)),
        counted, METHOD, law.method, BatchCountLaw(law, mechanism, counts),
        queries=tuple(c.text for c in conditions),
        bound=None if stated is None else stated.bound,
        bound_confidence=None if failure is None else 1 - failure,
        notes=((),) * size,
        details={"n_view": counts.n_view, "n_domain": n_domain,
                 "failure_probability": [failure] * size},
        value_ranges=(value_range,) * size)
