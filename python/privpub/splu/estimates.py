"""SPLU estimates with their uncertainty: one count (:class:`SPLUEstimate`) or a
batch (:class:`Reconstruction`), and the warning they raise.

The attribute names follow the table families' ``Estimate`` (``value``,
``stderr``, ``interval(level)``, ``counts``, ``method``, ``converged``) so
that a later unification can merge the two; this class lives here until then.

What each field means (derivations in :mod:`privpub.splu.uncertainty`):

- ``value``: the method's estimate (``mle``: the published count f'_s of one
  value over all records, Theorem 2; ``paper`` / ``exact-rate``: Eq. 13/14's
  fixed point; ``partition``: see :mod:`privpub.splu.reconstruction`).
- ``stderr``: the estimate's standard error over SPLU-Gen's randomisation
  (delta method with the release's own law). It measures noise only: an
  estimate whose model does not hold for the predicate is biased by more than
  this, and the release cannot tell (NaN for ``partition``: not stated).
- ``interval(level)``: what the release determines. It covers the true count
  with probability ≥ ``level`` for every data set, predicate and row order;
  for one value over all records it is the exact binomial interval of f_s,
  otherwise it is wide (it starts at 0 for most counts with a predicate),
  because the release does not tell a record of P whose decoy group holds s
  from one that holds s itself.
- ``model_interval(level)``: value ± z·stderr. It covers the true count only
  when the method's model holds for this predicate (``paper``/``exact-rate``:
  records of P that lack s are decoyed with s like all records that lack s),
  which nothing in a release can check. Measured coverage at 95% on Adult and
  on the synthetic census is in :mod:`privpub.splu.reconstruction`.
- ``observed``: the published count of (P ∧ s_1 ∧ …); ``states``: the
  published counts of all 2^{w+1} states the estimate was computed from.
- ``misfit``: how far (in the release's standard deviations) the published
  counts the estimate implies lie from the observed ones; 0 at an interior
  fixed point, large where the EM was driven to the boundary (a state at 0)
  or stopped before its fixed point (the paper's rule).
- ``notes``: why this estimate raised a :class:`ReconstructionWarning`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privpub.core import validate
from privpub.core.errors import UsefulnessWarning
from privpub.splu.uncertainty import MISFIT_Z, guaranteed_interval

#: What the ``model_interval`` of each method assumes.
ASSUMPTIONS = {
    "mle": "none: f'_s ~ Binomial(γ f_s, 1/γ) exactly (Theorem 2)",
    "paper": "records of P that lack s are decoyed with s at the paper's rate f_s/N "
             "(Eq. 9; the partition's true average is f_s(γ−1)/(γ(N − f_s)))",
    "exact-rate": "records of P that lack s are decoyed with s at the rate of all records "
                  "that lack s, f_s(γ−1)/(γ(N − f_s))",
    "partition": "records of P with each value s' share groups with s as all s'-records do "
                 "(the partition rebuilt from f')",
}


class ReconstructionWarning(UsefulnessWarning):
    """A SPLU estimate cannot be taken at face value: not told from 0 even under
    its model, not reproducing the published counts, stopped at the iteration
    cap, outside what the release determines, or without a standard error. The
    message names the queries and figures; each estimate's ``notes`` say the same."""


def _level(level: float) -> float:
    return validate.probability("level", level, open_low=True, open_high=True)


def _z(level: float) -> float:
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`

    return float(stats.norm.ppf(0.5 + _level(level) / 2))


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for text and JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def describe(where: str | None, values: Mapping[str, Any]) -> str:
    """count(P ∧ s_1 ∧ …) as text."""
    parts = ([] if where is None else [str(where)]) + [
        f"{a} = {_plain(v)!r}" for a, v in values.items()]
    return "count(" + " and ".join(parts) + ")"


@dataclass(frozen=True)
class SPLUEstimate:
    """One SPLU count with its uncertainty (module docstring)."""

    value: float
    stderr: float
    observed: float
    method: str
    converged: bool
    iterations: int
    where: str | None
    values: dict[str, Any]
    group_size: int
    states: tuple[float, ...]
    misfit: float
    notes: tuple[str, ...] = ()
    counts: str = "records"

    @property
    def query(self) -> str:
        return describe(self.where, self.values)

    @property
    def assumption(self) -> str:
        """What :meth:`model_interval` assumes (nothing :meth:`interval` does)."""
        return ASSUMPTIONS[self.method]

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """What the release determines: covers the true count with probability
        ≥ ``level`` for every data set (module docstring)."""
        lo, hi = guaranteed_interval(np.array([self.states]), self.group_size, _level(level))
        return float(lo[0]), float(hi[0])

    def model_interval(self, level: float = 0.95) -> tuple[float, float]:
        """value ± z·stderr: covers the true count only where the method's model
        holds for this predicate (:attr:`assumption`)."""
        z = _z(level)
        return self.value - z * self.stderr, self.value + z * self.stderr

    def to_dict(self, level: float = 0.95) -> dict[str, Any]:
        """The fields (and both intervals at ``level``) as JSON-ready values."""
        return _row(self, level, self.interval(level), self.model_interval(level))

    def __str__(self) -> str:
        lo, hi = self.interval()
        text = (f"{self.query} ≈ {self.value:,.1f} {self.counts} ± {self.stderr:,.1f} "
                f"(stderr, {self.method}); 95% interval [{lo:,.0f}, {hi:,.0f}] (what the "
                f"release determines); published {self.observed:,.0f}")
        if not self.converged:
            text += f"; stopped at {self.iterations:,} iterations"
        return text + "".join(f"\n  note: {n}" for n in self.notes)


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else float(x)


def _row(est: SPLUEstimate, level: float, interval: tuple[float, float],
         model: tuple[float, float]) -> dict[str, Any]:
    return {"query": est.query, "value": _num(est.value), "stderr": _num(est.stderr),
            "level": level, "lower": float(interval[0]), "upper": float(interval[1]),
            "model_lower": _num(float(model[0])), "model_upper": _num(float(model[1])),
            "observed": _num(est.observed), "method": est.method,
            "converged": est.converged, "iterations": est.iterations, "counts": est.counts,
            "misfit_sd": _num(est.misfit), "notes": list(est.notes),
            "assumption": est.assumption}


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """A batch of SPLU estimates (arrays, one entry per query, in query order);
    ``batch[i]`` is the :class:`SPLUEstimate` of query i. ``estimate`` is
    ``value`` under the name earlier releases of privpub used. ``states[i]``
    holds query i's published state counts (2^{w+1} of them)."""

    value: np.ndarray
    stderr: np.ndarray
    observed: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    method: str
    group_size: int
    states: tuple[np.ndarray, ...]
    misfit: np.ndarray
    queries: tuple[tuple[str | None, dict[str, Any]], ...]
    notes: tuple[tuple[str, ...], ...] = field(default=())
    counts: str = "records"

    @property
    def estimate(self) -> np.ndarray:
        return self.value

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> SPLUEstimate:
        where, values = self.queries[i]
        return SPLUEstimate(float(self.value[i]), float(self.stderr[i]),
                            float(self.observed[i]), self.method, bool(self.converged[i]),
                            int(self.iterations[i]), where, dict(values), self.group_size,
                            tuple(float(v) for v in self.states[i]), float(self.misfit[i]),
                            self.notes[i] if self.notes else (), self.counts)

    def __iter__(self) -> Iterator[SPLUEstimate]:
        return (self[i] for i in range(len(self)))

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Each query's :meth:`SPLUEstimate.interval`, as two arrays."""
        level = _level(level)
        lower, upper = np.zeros(len(self)), np.zeros(len(self))
        by_width: dict[int, list[int]] = {}
        for i, s in enumerate(self.states):
            by_width.setdefault(len(s), []).append(i)
        for rows in by_width.values():
            lower[rows], upper[rows] = guaranteed_interval(
                np.stack([self.states[i] for i in rows]), self.group_size, level)
        return lower, upper

    def model_interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Each query's :meth:`SPLUEstimate.model_interval`, as two arrays."""
        z = _z(level)
        return self.value - z * self.stderr, self.value + z * self.stderr

    def to_records(self, level: float = 0.95) -> list[dict[str, Any]]:
        """:meth:`SPLUEstimate.to_dict` for each query (both intervals computed once)."""
        lo, hi = self.interval(level)
        mlo, mhi = self.model_interval(level)
        return [_row(est, level, (lo[i], hi[i]), (mlo[i], mhi[i]))
                for i, est in enumerate(self)]

    def to_frame(self, level: float = 0.95) -> pd.DataFrame:
        """One row per query: :meth:`to_records` as a DataFrame."""
        return pd.DataFrame(self.to_records(level))


def diagnose(value: np.ndarray, stderr: np.ndarray, lower: np.ndarray, upper: np.ndarray,
             misfit: np.ndarray, converged: np.ndarray, iterations: np.ndarray,
             method: str, stopping: str) -> tuple[tuple[str, ...], ...]:
    """Each estimate's notes: the reasons it raises a :class:`ReconstructionWarning`."""
    z = 1.959963984540054
    out = []
    for i in range(len(value)):
        notes = []
        if method == "mle":
            if lower[i] <= 0:
                notes.append(f"its 95% interval [{lower[i]:,.0f}, {upper[i]:,.0f}] includes 0: "
                             "the release does not tell this count from 0")
        elif not math.isfinite(stderr[i]):
            notes.append("no standard error is stated for this method"
                         if method == "partition" else
                         "no standard error: the model has no interior fixed point in "
                         "closed form here (its marginal equation has no root, or a rate is "
                         "1/γ)")
        elif value[i] - z * stderr[i] <= 0:
            notes.append(f"value ± 1.96·stderr = [{value[i] - z * stderr[i]:,.1f}, "
                         f"{value[i] + z * stderr[i]:,.1f}] includes 0: even under the "
                         f"{method} model the release does not tell this count from 0")
        if misfit[i] > MISFIT_Z:
            why = ("the iteration stopped before its fixed point (the paper's rule)"
                   if stopping == "paper" else
                   "the model needs a negative count to fit them; the EM stopped on the "
                   "boundary (a state at 0)")
            notes.append(f"the estimate does not reproduce the published counts: they lie "
                         f"{misfit[i]:.1f} standard deviations from what it implies; {why}")
        if not converged[i]:
            notes.append(f"stopped at the iteration cap ({int(iterations[i]):,}) before its "
                         "stopping rule fired")
        if value[i] < lower[i] - 1e-9 or value[i] > upper[i] + 1e-9:
            why = ("a count cannot exceed the records that could publish it, and that bound "
                   "binds here" if method == "mle" else
                   "the model contradicts the release for this predicate")
            notes.append(f"the estimate lies outside [{lower[i]:,.0f}, {upper[i]:,.0f}], the "
                         f"95% interval the release determines: {why}")
        out.append(tuple(notes))
    return tuple(out)


def warn(batch: Reconstruction, stacklevel: int = 2) -> None:
    """One :class:`ReconstructionWarning` naming the estimates with notes (at most
    five shown), if any."""
    flagged = [i for i, n in enumerate(batch.notes) if n]
    if not flagged:
        return
    shown = "; ".join(f"#{i} {describe(*batch.queries[i])} ≈ {batch.value[i]:,.1f}: "
                      + " / ".join(batch.notes[i]) for i in flagged[:5])
    more = f" (and {len(flagged) - 5} more; see each estimate's notes)" if len(flagged) > 5 \
        else ""
    warnings.warn(f"SPLU reconstruction: {len(flagged)} of {len(batch)} estimates need care: "
                  f"{shown}{more}", ReconstructionWarning, stacklevel=stacklevel + 1)


def check_batch(queries: Sequence[tuple[str | None, Mapping[str, Any]]]) -> tuple:
    """The queries as stored on a batch: (where text or None, values dict)."""
    return tuple((w, {a: _plain(x) for a, x in v.items()}) for w, v in queries)
