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
  with a :class:`~privpub.tables.viewcounts.Counts`); the audits ask it too.
  The law it hands over is a :class:`CountIntervalLaw`: the floor reads its
  ``method`` and asks its ``interval(level)``, and knows nothing else of it.
- :class:`SumEstimator`: it estimates ``sum(col)`` (and so ``avg(col)``) from the
  counts of the cells Q ∧ col = v (:mod:`privpub.tables.sums`);
  :class:`RefusesSums`: it cannot, and says why.
- :class:`ReleaseEstimator`: its releases are not estimated from Q(V) alone;
  ``PublishedView.estimate_many`` hands it the view and the conditions.
- :class:`HidesAttributes`: attributes it does not publish as they are (SPLU-Gen's
  sensitive ones): no quasi-identifier includes them, the card's sampled
  queries and audits target them, the plan's alternatives name them.
- :class:`SubsetSumAuditor`: it answers the attribute audit's subset sums
  itself (by default the audit asks :class:`CountEstimator`).
- :class:`RefusesPresenceAudit`: it makes no presence claim to audit, and says why.
- :class:`PosteriorCurves`: each named adversary's posterior over priors, for the card.
- :class:`StatesErrorBound`: a (ρ, ε) error bound for each fixed count query
  (:class:`StatedBound`), which estimates, the card and its alternatives state.
- :class:`PublishesRecords`: how it published repeated tuples (the record facts of
  :mod:`privpub.tables.records`), so what its estimates count and how many records
  it was given.
- :class:`DescribesParameters`: each parameter's letter in the paper and meaning, for
  the card.
- :class:`StatesPrivacyRequest`: the (d, γ)-privacy request its parameters meet
  (:class:`PrivacyRequest`), which the presence audit tests and the card's
  alternatives plan around.

The floors read a family's parameters through these, never by key
(``release.parameters["error_bound"]``: ``tests/test_layout.py`` refuses that too).

A release's shape is declared on the release class
(:attr:`~privpub.core.release.Release.answers_own_query`): a table release
answers conditions; a query answer (a graph mechanism's) answers its own
query, and offers :class:`AnswersOwnQuery`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from privpub.core.estimate import Estimates, IntervalLaw


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
    and ``Estimate.interval_method`` are read from, for one query or a batch.
    A law may also offer ``inconsistent(level)``: where no count is consistent
    with what was observed at that level (the interval then claims nothing);
    ``Estimate.inconsistent`` reads it when present (:mod:`privpub.core.ranges`)."""

    #: How its intervals are made, as ``Estimate.interval_method`` reports it
    #: (``"exact"``, ``"conservative: …"``, ``"point"``).
    method: str

    def interval(self, level: float) -> tuple[Any, Any]:
        """(lo, hi), covering each true count with probability ≥ ``level`` whatever
        it is: scalars for one query, arrays of the counts' shape for a batch."""
        ...


#: One number per cell (per value of the summed column).
FloatArray = npt.NDArray[np.float64]


class SumCells(Protocol):
    """What a family reads of a sum's cells Q ∧ col = v (a
    :class:`~privpub.tables.viewcounts.Counts` of arrays, one entry per value v)."""

    @property
    def n_view(self) -> FloatArray: ...

    @property
    def n_domain(self) -> FloatArray: ...

    def domain_sum(self, weights: Sequence[FloatArray]) -> FloatArray: ...

    def context(self, name: str) -> tuple[FloatArray, FloatArray]: ...


@runtime_checkable
class SumEstimator(Protocol):
    """Estimates a weighted sum of its cells' true counts (a column's sum)."""

    def estimate_sum(self, cells: SumCells, cell_weights: FloatArray) -> tuple[float, float]:
        """(value, plug-in variance) of Σ_v cell_weights[v]·Q_v(I), from the ``Counts`` of
        the cells Q ∧ col = v (arrays, one entry per value v)."""
        ...

    def sum_law(self, cells: SumCells, cell_weights: FloatArray, value_range: tuple[float, float]
                ) -> CountIntervalLaw:
        """The law the sum's interval is read from (exact or conservative, as its
        ``method`` says), the sum lying in ``value_range``."""
        ...


@runtime_checkable
class RefusesSums(Protocol):
    """Estimates no sums of its releases, and says why."""

    #: Why, as the estimate's error says it.
    sum_refusal: str


def sum_refusal(mechanism: object) -> str:
    """Why ``mechanism`` estimates no sums (:class:`RefusesSums`), or a plain word."""
    if isinstance(mechanism, RefusesSums):
        return mechanism.sum_refusal
    return f"{getattr(mechanism, 'name', type(mechanism).__name__)} states no sum estimator"


@runtime_checkable
class ReleaseEstimator(Protocol):
    """Estimates its releases itself (they are not estimated from Q(V) alone)."""

    def estimate_release_many(self, view: Any, conditions: Sequence[Any]) -> Estimates:
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


@dataclass(frozen=True)
class StatedBound:
    """The error bound a release states for each fixed count query: the estimate is
    within ``bound`` (ρ√n) of the true count with probability ≥ 1 − ``failure_probability``
    (ε of (ρ, ε)-usefulness). ``bound`` is None when the mechanism has no n to state
    it for."""

    bound: float | None
    failure_probability: float


@runtime_checkable
class StatesErrorBound(Protocol):
    """States a (ρ, ε) error bound for each fixed count query of its releases."""

    def stated_bound(self) -> StatedBound:
        """The bound and its failure probability (:class:`StatedBound`)."""
        ...


@runtime_checkable
class PublishesRecords(Protocol):
    """Publishes a table's records, and says how it treated repeated tuples."""

    def record_facts(self) -> Mapping[str, Any] | None:
        """The record facts of :func:`privpub.tables.records.check_record_facts`
        (``duplicates``, ``records_given``, …), None when none were recorded (a
        mechanism not yet given its data)."""
        ...


@runtime_checkable
class DescribesParameters(Protocol):
    """Says what each of its parameters is, for the release card."""

    #: parameter name → (its letter in the paper, "—" for none; its meaning).
    parameter_meanings: Mapping[str, tuple[str, str]]


@dataclass(frozen=True)
class PrivacyRequest:
    """The (d, γ)-privacy request a release's parameters meet: the prior bound ``d`` and
    the posterior bound ``gamma`` (each None when the release states none), the
    ``calibration`` that chose the parameters (None when they were given as they are),
    and ``records``, the records given to the mechanism, which d = k·records/m counts
    (None when not known)."""

    d: float | None
    gamma: float | None
    calibration: str | None
    records: int | None


@runtime_checkable
class StatesPrivacyRequest(Protocol):
    """Publishes for a (d, γ)-privacy request."""

    def privacy_request(self) -> PrivacyRequest:
        """The request its parameters meet (:class:`PrivacyRequest`)."""
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


def stated_bound(mechanism: Any) -> StatedBound | None:
    """The per-query error bound ``mechanism`` states (None unless it declares
    :class:`StatesErrorBound`)."""
    return mechanism.stated_bound() if isinstance(mechanism, StatesErrorBound) else None


def record_facts_of(mechanism: Any) -> Mapping[str, Any]:
    """How ``mechanism`` published repeated tuples (empty unless it declares
    :class:`PublishesRecords` and has recorded them)."""
    facts = mechanism.record_facts() if isinstance(mechanism, PublishesRecords) else None
    return facts or {}


def privacy_request(mechanism: Any) -> PrivacyRequest:
    """The (d, γ)-privacy request ``mechanism`` states (every field None unless it
    declares :class:`StatesPrivacyRequest`)."""
    if isinstance(mechanism, StatesPrivacyRequest):
        return mechanism.privacy_request()
    return PrivacyRequest(None, None, None, None)


def parameter_meanings(mechanism: Any) -> Mapping[str, tuple[str, str]]:
    """Each parameter's letter and meaning as ``mechanism`` declares them (empty unless
    it declares :class:`DescribesParameters`)."""
    return mechanism.parameter_meanings if isinstance(mechanism, DescribesParameters) else {}
