"""The one estimate contract: what every release's ``estimate`` and
``estimate_many`` return, whatever the family.

An :class:`Estimate` is a count (or a query's answer) estimated from a
release, with what the release says about its error:

- ``value``: the estimate; ``stderr``: its standard error (how each family
  obtains it is in its docs; NaN where none is stated, 0 for a count the
  release publishes exactly);
- ``interval(level)``: an interval covering the true count with probability
  at least ``level`` over the mechanism's randomness, computed from the law
  the family hands over (``interval_method`` says how: ``"exact"``,
  ``"conservative: …"``, ``"release-determined"``, ``"point"``, …);
- ``bound`` with ``bound_confidence``: a proved error bound, where the
  mechanism proves one (|error| ≤ bound with probability ≥ bound_confidence);
- ``counts``: what the true count counts (``"records"``, ``"distinct
  tuples"``, ``"query answer"``); ``method``: how ``value`` was computed;
- ``converged`` and ``iterations`` where the estimator iterates (else None);
  ``notes``: why the estimate needs care (empty when it does not);
- ``assumption`` with ``model_interval(level)`` = value ± z·stderr where an
  estimator's standard error rests on a model the release cannot check;
- ``value_range``: the values the true count can take, where the release
  states them ([0, n] for a table, [0, max] for a graph query);
  :meth:`Estimate.clamped` maps the estimate into it (post-processing, no
  privacy cost; ``is_clamped`` says it was);
- ``inconsistent(level)``: whether the release's tests reject every count at
  that level (the observed count lies in the far tail for all of them); the
  interval then claims nothing (the whole range) and a note says so: it is
  never shown as a point no count was consistent with.

**Extension.** A family attaches its own facts in ``details`` (JSON-ready
values: the αβ counts Q(V) and Q(D), a SPLU estimate's published state
counts and misfit, a graph answer's noise scale). They read as attributes
(``est.n_view``) and appear in :meth:`Estimate.to_dict` after the core
fields; they never change what a core field means.

:class:`Estimates` is a batch, columnar (arrays, one entry per query, in query
order); ``batch[i]`` is query i's :class:`Estimate`.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from statistics import NormalDist
from typing import Any, Protocol, runtime_checkable

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.ranges import ClampedLaw, clamp, inconsistent

#: The interval level when none is asked for (the one default: every layer imports it).
LEVEL = 0.95


class IntervalLaw(Protocol):
    """What an :class:`Estimate` computes its interval from."""

    def interval(self, level: float) -> tuple[Any, Any]: ...


class BatchLaw(Protocol):
    """What an :class:`Estimates` computes its intervals from: arrays for the
    batch, and one query's law."""

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]: ...

    def row(self, i: int) -> IntervalLaw: ...


class StackedLaw(BatchLaw, Protocol):
    """The batch law of stacked one-query laws (:class:`StackableLaw`), which
    also says which of its counts are inconsistent at a level."""

    def inconsistent(self, level: float) -> np.ndarray: ...


def check_level(level: Any) -> float:
    """A confidence level: a number strictly in (0, 1), as a float. A string or
    a bool is refused (a one-line ParameterError naming ``level`` and the
    value), not read. The one check every interval of every family uses."""
    return validate.probability("level", level, open_low=True, open_high=True)


def normal_quantile(level: float) -> float:
    """z with P(|N(0, 1)| ≤ z) = level (the standard library's: no SciPy at import)."""
    return NormalDist().inv_cdf(0.5 + check_level(level) / 2)


@dataclass(frozen=True)
class PointLaw:
    """The interval of a count published exactly: [value, value] at every level."""

    value: int

    def interval(self, level: float) -> tuple[int, int]:
        check_level(level)
        return self.value, self.value


@dataclass(frozen=True)
class KnownLaw:
    """A law whose interval (and whether it is inconsistent) at one level is
    already known (a batch computes them at once, vectorised); any other level
    is asked of ``law``."""

    law: IntervalLaw
    level: float
    known: tuple[Any, Any]
    known_inconsistent: bool | None = None

    def interval(self, level: float) -> tuple[Any, Any]:
        return self.known if level == self.level else self.law.interval(level)

    def inconsistent(self, level: float) -> bool:
        if level == self.level and self.known_inconsistent is not None:
            return self.known_inconsistent
        return inconsistent(self.law, level)


@runtime_checkable
class StackableLaw(Protocol):
    """A law whose type solves many of its one-query laws as one batch (a
    family's test inversion works on arrays): ``stacked(laws)`` is that batch
    law, or None when these laws cannot be stacked."""

    @classmethod
    def stacked(cls, laws: Sequence[Any]) -> StackedLaw | None: ...


def plain(value: Any) -> Any:
    """A value as JSON writes it: numpy scalars and arrays as Python values,
    non-finite floats as None."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, eq=False)
class Estimate:
    """One estimate with its uncertainty (module docstring)."""

    value: float
    stderr: float
    counts: str
    method: str
    interval_method: str
    law: IntervalLaw = field(repr=False)
    query: str | None = None
    bound: float | None = None
    bound_confidence: float | None = None
    converged: bool | None = None
    iterations: int | None = None
    notes: tuple[str, ...] = ()
    assumption: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    #: The level of :attr:`lo`, :attr:`hi` and :meth:`to_dict`'s interval.
    level: float = LEVEL
    #: (low, high): the values the true count can take, where the release states them.
    value_range: tuple[float, float] | None = None
    #: Whether ``value`` was clamped into :attr:`value_range` (:meth:`clamped`).
    is_clamped: bool = False

    def __getattr__(self, name: str) -> Any:
        # The family's extension fields read as attributes (est.n_view).
        details = self.__dict__.get("details", {})
        if name in details:
            return details[name]
        raise AttributeError(f"{type(self).__name__!r} has no field {name!r} (details: "
                             f"{sorted(details)})")

    def interval(self, level: float | None = None) -> tuple[Any, Any]:
        """(lo, hi) covering the true count with probability ≥ ``level`` (default
        :attr:`level`) over the mechanism's randomness; ``interval_method`` says
        how. Computed when first asked, then kept."""
        level = self.level if level is None else check_level(level)
        cache = self._intervals
        if level not in cache:
            cache[level] = tuple(_scalar(end) for end in self.law.interval(level))
        return cache[level]

    def inconsistent(self, level: float | None = None) -> bool:
        """Whether every count is rejected at ``level`` (default :attr:`level`):
        what was observed lies in the far tail of the mechanism's law for every
        count the release allows. The interval is then the whole range, which
        claims nothing (module docstring)."""
        return inconsistent(self.law, self.level if level is None else check_level(level))

    def inconsistency_note(self, level: float | None = None) -> str | None:
        """The note an inconsistent estimate carries at ``level``, else None."""
        level = self.level if level is None else check_level(level)
        if not self.inconsistent(level):
            return None
        lo, hi = self.interval(level)
        return (f"inconsistent at the {level:.0%} level: the release's tests reject every "
                f"count from {lo:,} to {hi:,} (what was observed lies in the far tail of the "
                f"mechanism's randomness for each of them, as happens to a few views), so "
                f"the {level:.0%} interval claims nothing and is shown as the whole range "
                f"[{lo:,}, {hi:,}], not as a point; a higher level gives an interval")

    def clamped(self) -> Estimate:
        """This estimate clamped into :attr:`value_range` ([0, n] for a table):
        post-processing of the estimate and public facts, so no privacy cost.
        The clamped value is never farther from the true count (which lies in
        the range) than the estimate, so the error bound still holds; it is
        biased toward the range (``details['unclamped_value']`` keeps the
        unbiased one, and the stderr is the unclamped estimator's). The interval
        is clamped too and covers at least as often."""
        if self.value_range is None:
            raise ParameterError("this estimate states no range for its true count "
                                 "(value_range is None), so there is nothing to clamp into")
        if self.is_clamped:
            return self
        low, high = self.value_range
        return replace(
            self, value=float(clamp(self.value, low, high)),
            law=ClampedLaw(self.law, low, high), is_clamped=True,
            method=f"{self.method}, clamped to [{low:,}, {high:,}] (post-processing)",
            details={**self.details, "unclamped_value": self.value})

    @functools.cached_property
    def _intervals(self) -> dict[float, tuple[Any, Any]]:
        """:meth:`interval`'s answers by level (kept in the instance's
        ``__dict__``, outside the fields: equality and hashing never see it)."""
        return {}

    @property
    def lo(self) -> Any:
        """The lower end of the interval at :attr:`level`."""
        return self.interval()[0]

    @property
    def hi(self) -> Any:
        """The upper end of the interval at :attr:`level`."""
        return self.interval()[1]

    def model_interval(self, level: float | None = None) -> tuple[float, float]:
        """value ± z·stderr: covers the true count only where the estimator's
        model holds (:attr:`assumption`); :meth:`interval` assumes nothing."""
        z = normal_quantile(self.level if level is None else level)
        return self.value - z * self.stderr, self.value + z * self.stderr

    def to_dict(self, level: float | None = None) -> dict[str, Any]:
        """JSON-ready: the core fields (:attr:`value_range` as ``range_lo``,
        ``range_hi``), ``lo``/``hi`` at ``level`` (default :attr:`level`),
        ``inconsistent`` there (its note added to ``notes``), then ``details``."""
        level = self.level if level is None else check_level(level)
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self)
               if f.name not in ("law", "details", "level", "value_range")}
        # The range as two columns, as lo and hi are (CSV and frames stay flat).
        out["range_lo"], out["range_hi"] = self.value_range or (None, None)
        out["level"] = level
        out["lo"], out["hi"] = (plain(x) for x in self.interval(level))
        out["inconsistent"] = self.inconsistent(level)
        note = self.inconsistency_note(level)
        out["notes"] = out["notes"] + [note] if note else out["notes"]
        if self.assumption is not None:
            out["model_lo"], out["model_hi"] = (plain(x) for x in self.model_interval(level))
        return out | {k: plain(v) for k, v in self.details.items()}

    def to_json(self, level: float | None = None) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(level))

    def __str__(self) -> str:
        lo, hi = self.interval()
        what = f"{self.query} ≈ " if self.query else ""
        shown = ("no count consistent" if self.inconsistent() else "interval")
        text = (f"{what}{self.value:,.1f} {self.counts} ± {self.stderr:,.1f} (stderr, "
                f"{self.method}); {self.level:.0%} {shown} [{_end(lo)}, {_end(hi)}] "
                f"({self.interval_method})")
        if self.bound is not None:
            text += f"; |error| ≤ {self.bound:,.1f} w.p. ≥ {self.bound_confidence:g}"
        if self.converged is False:
            text += f"; stopped at {self.iterations:,} iterations"
        note = self.inconsistency_note()
        notes = self.notes + ((note,) if note else ())
        return text + "".join(f"\n  note: {n}" for n in notes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Estimate):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))


def _end(x: float) -> str:
    """An interval end: a whole number as one (a count's), else with the one
    decimal the value is shown with (an average's ends, [37.9, 39.4], not [38, 39])."""
    return f"{x:,.0f}" if math.isfinite(x) and float(x).is_integer() else f"{x:,.1f}"


@dataclass(frozen=True)
class ListLaw:
    """The batch law of estimates made one by one: solved as one batch where
    the laws stack (:class:`StackableLaw`: 5,000 test inversions at once, not
    one by one), else law by law."""

    laws: tuple[IntervalLaw, ...]

    @functools.cached_property
    def _stacked(self) -> StackedLaw | None:
        first = self.laws[0] if self.laws else None
        return type(first).stacked(self.laws) if isinstance(first, StackableLaw) else None

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        if self._stacked is not None:
            lo, hi = self._stacked.interval(level)
            return np.asarray(lo).reshape(-1), np.asarray(hi).reshape(-1)
        ends = [law.interval(level) for law in self.laws]
        return (np.array([_scalar(e[0]) for e in ends]),
                np.array([_scalar(e[1]) for e in ends]))

    def row(self, i: int) -> IntervalLaw:
        return self.laws[i]

    def inconsistent(self, level: float) -> np.ndarray:
        if self._stacked is not None:
            return np.asarray(self._stacked.inconsistent(level)).reshape(-1)
        return np.array([inconsistent(law, level) for law in self.laws])


def _optional(values: Sequence[Any]) -> np.ndarray | None:
    """A column of a field only some queries have (None where one has not)."""
    if all(v is None for v in values):
        return None
    return np.array(values, dtype=object if None in values else None)


def _at(column: np.ndarray | None, i: int, kind: type) -> Any:
    return None if column is None or column[i] is None else kind(column[i])


#: Fields of a batch that are one value for the whole batch, or one per query
#: where the queries differ (a SPLU-Gen batch mixes exact counts and reconstructions).
SHARED = ("counts", "method", "interval_method", "bound", "bound_confidence", "assumption",
          "is_clamped")


@dataclass(frozen=True, eq=False)
class Estimates:
    """A batch of estimates, columnar: arrays with one entry per query in query
    order (fields as :class:`Estimate`'s; ``details`` maps a name to one value
    per query, None where a query has no such detail). ``counts``, ``method``,
    ``interval_method``, ``bound``, ``bound_confidence`` and ``assumption`` are
    one value when the queries share it, else a tuple, one per query.
    ``batch[i]`` is query i's :class:`Estimate`."""

    value: np.ndarray
    stderr: np.ndarray
    counts: str | tuple[str, ...]
    method: str | tuple[str, ...]
    interval_method: str | tuple[str, ...]
    law: BatchLaw = field(repr=False)
    queries: tuple[str | None, ...] = ()
    bound: float | None | tuple[float | None, ...] = None
    bound_confidence: float | None | tuple[float | None, ...] = None
    converged: np.ndarray | None = None
    iterations: np.ndarray | None = None
    notes: tuple[tuple[str, ...], ...] = ()
    assumption: str | None | tuple[str | None, ...] = None
    details: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    #: Each query's :attr:`Estimate.value_range` (empty: none states one).
    value_ranges: tuple[tuple[float, float] | None, ...] = ()
    is_clamped: bool | tuple[bool, ...] = False

    @classmethod
    def of(cls, estimates: Sequence[Estimate]) -> Estimates:
        """The batch of estimates made one by one."""
        if not estimates:
            raise ParameterError("no estimates to batch (no queries were given)")
        shared = {}
        for name in SHARED:
            found = tuple(getattr(e, name) for e in estimates)
            shared[name] = found[0] if len(set(found)) == 1 else found
        names = list(dict.fromkeys(k for e in estimates for k in e.details))
        return cls(np.array([e.value for e in estimates], dtype=float),
                   np.array([e.stderr for e in estimates], dtype=float),
                   law=ListLaw(tuple(e.law for e in estimates)),
                   queries=tuple(e.query for e in estimates),
                   converged=_optional([e.converged for e in estimates]),
                   iterations=_optional([e.iterations for e in estimates]),
                   notes=tuple(e.notes for e in estimates),
                   details={k: [e.details.get(k) for e in estimates] for k in names},
                   value_ranges=tuple(e.value_range for e in estimates), **shared)

    def __getattr__(self, name: str) -> Any:
        # A detail reads as a column: an array when every query has a number.
        details = self.__dict__.get("details", {})
        if name not in details:
            raise AttributeError(f"{type(self).__name__!r} has no field {name!r} (details: "
                                 f"{sorted(details)})")
        column = details[name]
        if isinstance(column, np.ndarray) or all(
                isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                for v in column):
            return np.asarray(column)
        return list(column)

    def _shared(self, name: str, i: int) -> Any:
        found = getattr(self, name)
        return found[i] if isinstance(found, tuple) else found

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> Estimate:
        if not -len(self) <= i < len(self):
            raise IndexError(f"estimate #{i} of a batch of {len(self)}")
        i %= len(self)
        return self._row(i, self.law.row(i))

    def _row(self, i: int, law: IntervalLaw) -> Estimate:
        """Query i's :class:`Estimate` (0 ≤ i < len), its interval from ``law``."""
        shared = {name: self._shared(name, i) for name in SHARED}
        return Estimate(
            float(self.value[i]), float(self.stderr[i]), law=law,
            query=self.queries[i] if self.queries else None,
            converged=_at(self.converged, i, bool), iterations=_at(self.iterations, i, int),
            notes=self.notes[i] if self.notes else (),
            details={k: _item(v[i]) for k, v in self.details.items() if v[i] is not None},
            value_range=self.value_ranges[i] if self.value_ranges else None, **shared)

    def clamped(self) -> Estimates:
        """Each query's :meth:`Estimate.clamped`, as a batch."""
        return Estimates.of([e.clamped() for e in self])

    def inconsistent(self, level: float = LEVEL) -> np.ndarray:
        """Each query's :meth:`Estimate.inconsistent`, as a bool array."""
        check = getattr(self.law, "inconsistent", None)
        if check is None:
            return np.zeros(len(self), dtype=bool)
        return np.asarray(check(check_level(level)), dtype=bool).reshape(-1)

    def __iter__(self) -> Iterator[Estimate]:
        return (self[i] for i in range(len(self)))

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Each query's :meth:`Estimate.interval`, as two arrays."""
        return self.law.interval(check_level(level))

    def model_interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Each query's :meth:`Estimate.model_interval`, as two arrays."""
        z = normal_quantile(level)
        return self.value - z * self.stderr, self.value + z * self.stderr

    def to_records(self, level: float = LEVEL) -> list[dict[str, Any]]:
        """:meth:`Estimate.to_dict` for each query (the intervals computed once,
        vectorised)."""
        level = check_level(level)
        lo, hi = self.interval(level)
        check = getattr(self.law, "inconsistent", None)  # (a law that rejects nothing has none)
        empty = None if check is None else np.asarray(check(level)).reshape(-1)
        return [self._row(i, KnownLaw(self.law.row(i), level, (_scalar(lo[i]), _scalar(hi[i])),
                                      None if empty is None else bool(empty[i]))
                          ).to_dict(level) for i in range(len(self))]

    def to_frame(self, level: float = LEVEL) -> Any:
        """One row per query: :meth:`to_records` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.to_records(level))

    def to_json(self, level: float = LEVEL) -> str:
        """:meth:`to_records` as JSON text."""
        return json.dumps(self.to_records(level))


def _item(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _scalar(value: Any) -> Any:
    """One end of an interval as a Python number (laws answer with 0-d or
    one-element arrays, being vectorised)."""
    found = np.asarray(value)
    if found.size != 1:
        raise ParameterError(f"an interval end must be one number, got {found.size}")
    return found.reshape(-1)[0].item()

