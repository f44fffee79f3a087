"""What the shared floors ask a mechanism or a release, declared once.

The :class:`~privpub.core.release.Mechanism` protocol says what every
mechanism is (``name``, ``parameters()``, ``guarantee()``,
``from_parameters``). What the floors above it *call* is declared here, one
runtime-checkable protocol per capability, and each family implements the
ones it has. The table machinery, the audits, the release card, the plan and
the command line dispatch on these (``isinstance(mech, CountEstimator)``),
never on a family's name or class (``tests/test_layout.py`` refuses both
outside the families), so a new family plugs in by writing only its own
package (``tests/test_fifth_family.py`` shows one that does).

A mechanism's capabilities:

- :class:`CountEstimator`: its releases are estimated from counts
  (``PublishedView`` calls ``estimate(counts)`` and ``interval_law(counts)``
  with a :class:`~privpub.tables.published.Counts`); the audits ask it too.
  The law it hands over is a :class:`CountIntervalLaw`: the floor reads its
  ``method`` and asks its ``interval(level)``, and knows nothing else of it.
- :class:`ReleaseEstimator`: its releases are not estimated from Q(V) alone;
  ``PublishedView.estimate_many`` hands it the view and the conditions.
- :class:`HidesAttributes`: attributes it does not publish as they are (SPLU-Gen's
  sensitive ones): no quasi-identifier includes them, the card's sampled
  queries and audits target them, the plan's alternatives name them.
- :class:`SubsetSumAuditor`: it answers the attribute audit's subset sums
  itself (by default the audit asks :class:`CountEstimator`).
- :class:`RefusesPresenceAudit`: it makes no presence claim to audit, and says why.
- :class:`PosteriorCurves`: each named adversary's posterior over priors, for the card.

A release's shape is declared on the release class
(:attr:`~privpub.core.release.Release.answers_own_query`): a table release
answers conditions; a query answer (a graph mechanism's) answers its own
query, and offers :class:`AnswersOwnQuery`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from privpub.core.estimate import IntervalLaw


@runtime_checkable
class CountEstimator(Protocol):
    """Estimates a release's counts from what counting the view gives."""

    def estimate(self, counts: Any) -> tuple[Any, Any]:
        """(value, variance) of the true count(s), from a ``Counts`` (Q(V), Q(D),
        weighted domain sums, counts inside context sets): one query or a batch
        (arrays, one entry per query)."""
        ...

    def interval_law(self, counts: Any) -> CountIntervalLaw:
        """The law the confidence interval of each count is read from (a family
        builds its laws on :mod:`privpub.tables.confidence`'s test inversion, or
        states its own)."""
        ...


@runtime_checkable
class CountIntervalLaw(IntervalLaw, Protocol):
    """The law of a :class:`CountEstimator`'s count(s): what ``Estimate.interval``
    and ``Estimate.interval_method`` are read from, for one query or a batch."""

    #: How its intervals are made, as ``Estimate.interval_method`` reports it
    #: (``"exact"``, ``"conservative: …"``, ``"point"``).
    method: str

    def interval(self, level: float) -> tuple[Any, Any]:
        """(lo, hi), covering each true count with probability ≥ ``level`` whatever
        it is: scalars for one query, arrays of the counts' shape for a batch."""
        ...


@runtime_checkable
class ReleaseEstimator(Protocol):
    """Estimates its releases itself (they are not estimated from Q(V) alone)."""

    def estimate_release_many(self, view: Any, conditions: Sequence[Any]) -> Any:
        """An :class:`~privpub.core.estimate.Estimates` batch, one per condition."""
        ...


@runtime_checkable
class HidesAttributes(Protocol):
    """Publishes some attributes other than as they are."""

    def hidden_attributes(self) -> list[str]:
        """The attributes randomised rather than published: none identifies a
        record, and they are what an attribute audit and the card's queries target."""
        ...


@runtime_checkable
class SubsetSumAuditor(Protocol):
    """Answers the attribute audit's subset-sum queries with its own estimator."""

    def audit_subset_sums(self, view: Any, qi_columns: Sequence[int], secret: int, one: int,
                          tuple_digits: Sequence[Any], queries: Any) -> tuple[Any, Any]:
        """Estimates (and their variances) of count(qi ∈ {qi_i : i ∈ q} ∧ secret = one)
        for each row q of ``queries`` (0/1, queries × targets), the targets given by
        ``tuple_digits`` (their digits, the secret's set to ``one``); ``qi_columns``
        are the attributes that identify a record, ``secret`` the secret's column."""
        ...


@runtime_checkable
class RefusesPresenceAudit(Protocol):
    """Makes no presence claim, so the presence audit has nothing to test."""

    #: Why, as the audit's error says it.
    presence_refusal: str


@runtime_checkable
class PosteriorCurves(Protocol):
    """Names adversaries whose posterior it can compute at any prior."""

    def posterior_curves(self) -> tuple[dict[str, Callable[[float], float]],
                                        float | None, float | None] | None:
        """Each named adversary's posterior as a function of its prior, the prior
        bound d and the posterior bound γ (None when it has no such accounting
        for these parameters)."""
        ...


@runtime_checkable
class AnswersOwnQuery(Protocol):
    """A release that answers its own query (a graph answer), not conditions."""

    def estimate_many(self) -> Any:
        """Every answer's estimate (an ``Estimates`` batch)."""
        ...

    def true_answers(self, data: Any) -> list[int]:
        """The exact answers on ``data`` (what the release was made from); a
        ``ParameterError`` when ``data`` is not of the kind the answer was made from."""
        ...


def hidden_attributes(mechanism: Any) -> list[str]:
    """The attributes ``mechanism`` does not publish as they are (none unless it
    declares :class:`HidesAttributes`)."""
    return list(mechanism.hidden_attributes()) if isinstance(mechanism, HidesAttributes) else []
