"""αβ's sum estimator and the conservative law of its intervals.

A sum is Σ_v f(v)·Q_v(I) over the cells Q ∧ col = v (:mod:`privpub.tables.sums`).
αβ's count estimator is linear, so Σ_v f(v)·Q̃_v = (Σ_{V ∩ Q} f − β·Σ_{Q(D)} f)/α
(with a source, β·f(t) becomes β(t)·f(t) in the domain sum), unbiased for
Σ_{Q(I)} f: E Σ_{V ∩ Q} f = α·Σ_{Q(I)} f + Σ_{Q(D)} β(t) f(t), whatever the
semantics (under ``duplicates="records"`` a tuple's first record is kept with
α+β, each further one with α: the records' sum enters with α, the tuples'
noise with β). Its variance, exactly as the count's (:func:`estimator.estimate`)
with f² weighting each term: tuples and records are kept independently, and
cells hold disjoint tuples, so

    α²·Var = Σ_{Q(D)} f² β(t)(1 − β(t)) + α(1 − α)·Σ_{records in Q(I)} f²
             − 2α·Σ_{distinct tuples t in Q(I)} β(t)·f(t)²,

which is the sum over cells of f(v)² times each cell's count variance; the
plug-in stderr sums the cells' plug-in variances (:func:`estimate_sum`).

Interval (:func:`sum_law`): conservative, Bernstein's inequality on S_V =
Σ_{V ∩ Q} f (:mod:`privpub.tables.sumlaw`), with E S_V = α·s + Σ β(t) f(t),
every term within M = max |f| of its mean, and the variance bounded over
every instance with sum s by the display above with its last term dropped
(it is ≤ 0) or, under set semantics without a source, kept as the first
record's α(1 − α − 2β) (≥ 0 taken); Σ_{records in Q(I)} f² ≤ M·|s| where f
has one sign over the query's values, else ≤ Σ_v f(v)²·top_v (top_v the
cell's largest count). Several views (Algorithm 7): the view's sum is two
independent parts, inside and outside the union of the earlier views, each
with its own (keep, background); each part's interval at level 1 − (1 − L)/2
and the ends added (Bonferroni), as for counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from privpub.alphabeta.estimator import count_top
from privpub.core.capabilities import FloatArray, SumCells
from privpub.tables.sumlaw import BernsteinLaw, PartsLaw
from privpub.tables.sums import sum_range
from privpub.tables.viewcounts import Counts

if TYPE_CHECKING:
    from privpub.alphabeta.mechanism import AlphaBeta
    from privpub.alphabeta.multiview import MultiViewStep


def estimate_sum(estimate: Callable[[Counts], tuple[npt.ArrayLike, npt.ArrayLike]],
                 cells: SumCells, weights: FloatArray) -> tuple[float, float]:
    """Σ_v w_v·Q̃_v with Σ_v w_v²·Var Q̃_v: the cells' estimates (``estimate``,
    the family's count estimator, on all cells at once) combined; the cells
    hold disjoint tuples, so their estimates are independent."""
    value, variance = estimate(cast(Counts, cells))  # (a Counts of arrays: tables.sums)
    w = np.asarray(weights, dtype=float)
    return (float(np.dot(w, np.asarray(value, dtype=float))),
            float(np.dot(w * w, np.asarray(variance, dtype=float))))


def part_law(observed: npt.ArrayLike, total: npt.ArrayLike, keep: float, background: float,
             weights: FloatArray, n: int | None, extra: int,
             noise: npt.ArrayLike | None = None, noise_sq: npt.ArrayLike | None = None
             ) -> BernsteinLaw:
    """The Bernstein law of one part's sum: cells whose tuples of I are kept with
    ``keep`` (further copies with keep − background) and whose other ``total``
    domain tuples are inserted with ``background`` (or with β(t): ``noise`` =
    Σ β(t), ``noise_sq`` = Σ β(t)² per cell)."""
    w = np.asarray(weights, dtype=float)
    total = np.asarray(total, dtype=float)
    noise_v = background * total if noise is None else np.asarray(noise, dtype=float)
    noise_sq_v = background * background * total if noise_sq is None else \
        np.asarray(noise_sq, dtype=float)
    slope = keep - background
    # A further copy adds slope(1 − slope) per unit of f²; a first record
    # slope(1 − slope − 2·background) (its noise indicator's variance replaced).
    unit = slope * (1 - slope) if extra else max(slope * (1 - slope - 2 * background), 0.0)
    held = w[total > 0]
    bound = float(np.abs(held).max(initial=0.0))
    low, high = sum_range(n, total, w, distinct=extra == 0)
    tops = count_top(n, total, extra)
    return BernsteinLaw(float(np.dot(w, np.asarray(observed, dtype=float))),
                        float(np.dot(w, noise_v)), slope,
                        float(np.dot(w * w, noise_v - noise_sq_v)), unit, bound,
                        float(np.dot(w * w, tops)), bool(np.all(held >= 0) or np.all(held <= 0)),
                        low, high)


def sum_law(mech: AlphaBeta, cells: SumCells, weights: FloatArray,
            value_range: tuple[float, float]) -> BernsteinLaw:
    """One view's sum law (module docstring); with a source, β(t) by tuple."""
    n, extra = mech.n, mech.extra_records
    noise = noise_sq = None
    if mech.source is not None:
        w = mech.source.weights
        noise = mech.beta * np.asarray(cells.domain_sum(w), dtype=float)
        noise_sq = mech.beta ** 2 * np.asarray(cells.domain_sum([x * x for x in w]), dtype=float)
    law = part_law(cells.n_view, cells.n_domain, mech.alpha + mech.beta, mech.beta, weights, n,
                   extra, noise, noise_sq)
    if mech.source is not None:  # β(t) differs by tuple: the first record's term is ≤ α(1 − α)
        law = BernsteinLaw(**{**law.__dict__, "unit": mech.alpha * (1 - mech.alpha)})
    return _within(law, value_range)


def views_sum_law(view: MultiViewStep, cells: SumCells, weights: FloatArray,
                  value_range: tuple[float, float]) -> BernsteinLaw | PartsLaw:
    """View i of several (``view``, a MultiViewStep): the first view's law is one
    view's with (α+β, β) = (s, p_1); a later view's is its two parts' laws
    (module docstring)."""
    first, p_prev, p_fresh = view.probabilities()
    n, extra = view.mech.n, view.mech.extra_records
    if view.view_index == 1:
        return _within(part_law(cells.n_view, cells.n_domain, first, p_fresh, weights, n,
                                extra), value_range)
    view_previous, n_union = cells.context("previous_union")
    outside = np.asarray(cells.n_domain, dtype=float) - np.asarray(n_union, dtype=float)
    inside_law = part_law(view_previous, n_union, first, p_prev, weights, n, extra)
    outside_law = part_law(np.asarray(cells.n_view, dtype=float) - view_previous, outside,
                           first, p_fresh, weights, n, extra)
    return PartsLaw((inside_law, outside_law), *value_range)


def _within(law: BernsteinLaw, value_range: tuple[float, float]) -> BernsteinLaw:
    low, high = value_range
    return BernsteinLaw(**{**law.__dict__, "low": max(law.low, low), "high": min(law.high, high)})
