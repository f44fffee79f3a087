"""SPLU estimates with their uncertainty, as the core contract's
:class:`~privpub.core.estimate.Estimate` (one count) and
:class:`~privpub.core.estimate.Estimates` (a batch), and the warning they raise.

What each field means (derivations in :mod:`privpub.splu.uncertainty`):

- ``value``: the method's estimate (``mle``: the published count f'_s of one
  value over all records, Theorem 2; ``paper`` / ``exact-rate``: Eq. 13/14's
  fixed point; ``partition``: see :mod:`privpub.splu.reconstruction`).
- ``stderr``: the estimate's standard error over SPLU-Gen's randomisation
  (delta method with the release's own law). It measures noise only: an
  estimate whose model does not hold for the predicate is biased by more than
  this, and the release cannot tell (NaN for ``partition``: not stated).
- ``interval(level)``: what the release determines (``interval_method``
  ``"release-determined"``). It covers the true count
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
- ``details``: ``observed``, the published count of (P ∧ s_1 ∧ …);
  ``states``, the published counts of all 2^{w+1} states the estimate was
  computed from; ``misfit``; ``group_size``; ``where`` and ``values``, the query.
- ``misfit``: how far (in the release's standard deviations) the published
  counts the estimate implies lie from the observed ones; 0 at an interior
  fixed point, large where the EM was driven to the boundary (a state at 0)
  or stopped before its fixed point (the paper's rule).
- ``notes``: why this estimate raised a :class:`ReconstructionWarning`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core.errors import UsefulnessWarning
from privpub.core.estimate import Estimates
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


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for text and JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def describe(where: str | None, values: Mapping[str, Any]) -> str:
    """count(P ∧ s_1 ∧ …) as text."""
    parts = ([] if where is None else [str(where)]) + [
        f"{a} = {_plain(v)!r}" for a, v in values.items()]
    return "count(" + " and ".join(parts) + ")"


#: How a SPLU estimate's interval is obtained: what the release determines
#: (:func:`~privpub.splu.uncertainty.guaranteed_interval`), for every data set.
RELEASE_DETERMINED = "release-determined"


@dataclass(frozen=True)
class DeterminedLaw:
    """The intervals the release determines, from each query's published state
    counts (2^{w+1} of them; queries of different widths are solved apart)."""

    states: tuple[np.ndarray, ...]
    group_size: int

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        lower, upper = np.zeros(len(self.states)), np.zeros(len(self.states))
        by_width: dict[int, list[int]] = {}
        for i, s in enumerate(self.states):
            by_width.setdefault(len(s), []).append(i)
        for rows in by_width.values():
            lower[rows], upper[rows] = guaranteed_interval(
                np.stack([self.states[i] for i in rows]), self.group_size, level)
        return lower, upper

    def row(self, i: int) -> DeterminedLaw:
        return DeterminedLaw((self.states[i],), self.group_size)


def splu_estimates(value: np.ndarray, stderr: np.ndarray, states: Sequence[np.ndarray],
          iterations: np.ndarray, converged: np.ndarray, method: str, group_size: int,
          fit: np.ndarray, queries: tuple[tuple[str | None, dict[str, Any]], ...],
          notes: tuple[tuple[str, ...], ...] = ()) -> Estimates:
    """SPLU estimates as the core batch (:class:`~privpub.core.estimate.Estimates`).
    Its ``details`` per query: ``observed`` (the published count of (P ∧ s_1 ∧ …)),
    ``misfit`` (standard deviations), ``states`` (the published state counts),
    ``group_size``, ``where`` and ``values`` (the query's parts)."""
    states = tuple(np.asarray(s, dtype=float) for s in states)
    q = len(states)
    return Estimates(
        np.asarray(value, dtype=float), np.asarray(stderr, dtype=float), "records", method,
        RELEASE_DETERMINED, DeterminedLaw(states, group_size),
        tuple(describe(w, v) for w, v in queries), converged=np.asarray(converged, dtype=bool),
        iterations=np.asarray(iterations, dtype=np.int64), notes=notes,
        assumption=ASSUMPTIONS[method],
        details={"observed": [float(s[-1]) for s in states],
                 "misfit": np.asarray(fit, dtype=float), "states": [s.tolist() for s in states],
                 "group_size": [group_size] * q, "where": [w for w, _ in queries],
                 "values": [dict(v) for _, v in queries]})


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


def warn(found: Estimates, stacklevel: int = 2) -> None:
    """One :class:`ReconstructionWarning` naming the estimates with notes (at most
    five shown), if any."""
    flagged = [i for i, n in enumerate(found.notes) if n]
    if not flagged:
        return
    shown = "; ".join(f"#{i} {found.queries[i]} ≈ {found.value[i]:,.1f}: "
                      + " / ".join(found.notes[i]) for i in flagged[:5])
    more = f" (and {len(flagged) - 5} more; see each estimate's notes)" if len(flagged) > 5 \
        else ""
    warnings.warn(f"SPLU reconstruction: {len(flagged)} of {len(found)} estimates need care: "
                  f"{shown}{more}", ReconstructionWarning, stacklevel=stacklevel + 1)


def check_batch(queries: Sequence[tuple[str | None, Mapping[str, Any]]]) -> tuple:
    """The queries as stored on a batch: (where text or None, values dict)."""
    return tuple((w, {a: _plain(x) for a, x in v.items()}) for w, v in queries)
