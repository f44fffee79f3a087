"""FRAPP's sum estimator and the conservative law of its intervals.

Each record keeps its tuple t with probability γ_f and is otherwise replaced
by one of the other m − 1 tuples, each with probability o, independently.
With f(t) the summed column's value and Y_r = f(out_r)·[out_r ∈ Q] record r's
contribution to S_V = Σ_{V ∩ Q} f,

    E Y_r = (γ_f − o)·f(t_r)[t_r ∈ Q] + o·F_D,   E Y_r² = (γ_f − o)·f(t_r)²[t_r ∈ Q] + o·F2_D

(F_D = Σ_{Q(D)} f, F2_D = Σ_{Q(D)} f²), so S̃ = (S_V − n·o·F_D)/(γ_f − o) is
unbiased for s = Σ_{Q(I)} f: the count estimator's linear combination over the
cells Q ∧ col = v. Summing Var Y_r over the n independent records,

    Var S_V = g(1 − g)·S2 − 2·g·o·F_D·s + n·o·F2_D − n·o²·F_D²,   g = γ_f − o,

S2 = Σ_{records in Q(I)} f². The cells are *not* independent here (a record
lands in one cell), so the plug-in variance is this formula with s and S2
estimated (S2 by the same estimator with weights f², each clipped to what the
release allows), not a sum over cells.

Interval: conservative, Bernstein's inequality (:mod:`privpub.tables.sumlaw`)
on the n independent Y_r, each within max(f, 0) − min(f, 0) of its mean, with
the variance bounded over every instance of sum s by the display with S2 ≤
M·|s| (f of one sign over the query's values, M = max |f|) or ≤ Σ_v f(v)²·top_v.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from privpub.core.capabilities import FloatArray, SumCells
from privpub.frapp.estimator import count_top, n_published
from privpub.tables.sumlaw import BernsteinLaw
from privpub.tables.sums import sum_range

if TYPE_CHECKING:
    from privpub.frapp.mechanism import FRAPP


@dataclass(frozen=True)
class _Terms:
    """The sums the estimator and the law read (module docstring's letters)."""

    w: FloatArray
    g: float
    o: float
    n: int
    f_d: float
    f2_d: float
    bound: float
    span: float
    one_signed: bool
    cap: float


def _terms(mech: FRAPP, cells: SumCells, weights: FloatArray) -> _Terms:
    w = np.asarray(weights, dtype=float)
    n_domain = np.asarray(cells.n_domain, dtype=float)
    g, o = mech.gamma_frapp - mech.off_diagonal, mech.off_diagonal
    held = w[n_domain > 0]
    return _Terms(w, g, o, n_published(mech), float(np.dot(w, n_domain)),
                  float(np.dot(w * w, n_domain)), float(np.abs(held).max(initial=0.0)),
                  float(max(held.max(initial=0.0), 0.0) - min(held.min(initial=0.0), 0.0)),
                  bool(np.all(held >= 0) or np.all(held <= 0)),
                  float(np.dot(w * w, np.broadcast_to(count_top(mech, n_domain),
                                                      n_domain.shape))))


def _variance(t: _Terms, s: float, squares: float) -> float:
    g, o, n = t.g, t.o, t.n
    return g * (1 - g) * squares - 2 * g * o * t.f_d * s + n * o * t.f2_d - n * o * o * t.f_d ** 2


def estimate_sum(mech: FRAPP, cells: SumCells, weights: FloatArray) -> tuple[float, float]:
    """(S̃, plug-in variance) (module docstring)."""
    t = _terms(mech, cells, weights)
    view = np.asarray(cells.n_view, dtype=float)
    value = (float(np.dot(t.w, view)) - t.n * t.o * t.f_d) / t.g
    squares = (float(np.dot(t.w ** 2, view)) - t.n * t.o * t.f2_d) / t.g
    squares = min(max(squares, 0.0), t.cap)
    return value, max(_variance(t, value, squares), 0.0) / t.g ** 2


def sum_law(mech: FRAPP, cells: SumCells, weights: FloatArray,
            value_range: tuple[float, float]) -> BernsteinLaw:
    """The Bernstein law of S_V (module docstring)."""
    t = _terms(mech, cells, weights)
    g, o, n = t.g, t.o, t.n
    low, high = sum_range(n, cells.n_domain, t.w,
                          (mech.records or {}).get("duplicates") != "records")
    value_range = (max(value_range[0], low), min(value_range[1], high))
    return BernsteinLaw(float(np.dot(t.w, np.asarray(cells.n_view, dtype=float))),
                        n * o * t.f_d, g, n * o * t.f2_d - n * o * o * t.f_d ** 2,
                        g * (1 - g), t.bound, t.cap, t.one_signed, *value_range,
                        linear=-2 * g * o * t.f_d, spread=t.span)
