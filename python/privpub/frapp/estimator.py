"""FRAPP's estimator and the law its confidence intervals invert.

A record matching Q is published matching Q with probability p_in = γ_f +
o(n_D − 1) (kept, or replaced by one of the other n_D − 1 matching tuples), a
record not matching with probability p_out = o·n_D, independently, so
E[n_V] = Q(I)(γ_f − o) + n·o·n_D and Q̃ = (n_V − n·o·n_D)/(γ_f − o).

The law of n_V given the true count c is Bin(c, p_in) + Bin(n − c, p_out)
under any semantics (records are perturbed independently, repeated or not):
:class:`~privpub.tables.confidence.KeepLaw` with keep = p_in, background =
p_out and total = n, **exact** over c in [0, top], top = n under
``duplicates="records"`` and min(n, n_D) when the view's records are
distinct tuples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from privpub.core.errors import ParameterError
from privpub.tables.confidence import KeepLaw

if TYPE_CHECKING:
    from privpub.frapp.mechanism import FRAPP
    from privpub.tables.viewcounts import Counts


def estimate(mech: FRAPP, c: Counts) -> tuple[Any, Any]:
    """Q̃ = (n_V − n·o·n_D)/(γ_f − o), with its *plug-in* variance: each
    record's Bernoulli variance summed (exact for any repeats: records are
    perturbed independently), with Q̃ clipped to the counts the release
    allows for the unknown Q(I): [0, n] under ``duplicates="records"``,
    [0, min(n, n_D)] when the view's records are distinct tuples. The
    confidence interval (:func:`interval_law`) holds for every count."""
    g, n, o = mech.gamma_frapp, n_published(mech), mech.off_diagonal
    value = (c.n_view - n * o * c.n_domain) / (g - o)
    q = np.clip(value, 0.0, count_top(mech, c.n_domain))
    p_in, p_out = g + o * (c.n_domain - 1), o * c.n_domain
    variance = (q * p_in * (1 - p_in) + (n - q) * p_out * (1 - p_out)) / (g - o) ** 2
    return value, variance


def interval_law(mech: FRAPP, c: Counts) -> KeepLaw:
    """The law of Q(V) given the true count c, with Q(V) observed: Q(V) ~
    Bin(c, p_in) + Bin(n − c, p_out) under any semantics; p_in > p_out, so
    inverting the test of each c gives an exact interval (module docstring)."""
    g, n, o = mech.gamma_frapp, n_published(mech), mech.off_diagonal
    return KeepLaw(c.n_view, g + o * (c.n_domain - 1), o * c.n_domain, float(n),
                   count_top(mech, c.n_domain))


def n_published(mech: FRAPP) -> int:
    """n, the records the release published (estimation needs it)."""
    if mech.n is None:
        raise ParameterError("FRAPP estimates need n, the number of records published")
    return mech.n


def count_top(mech: FRAPP, n_domain: Any) -> Any:
    """The largest count: n under duplicates='records', else min(n, n_D)
    (each matching record a distinct tuple of Q(D))."""
    n = n_published(mech)
    if (mech.records or {}).get("duplicates") == "records":
        return float(n)
    return np.minimum(np.asarray(n_domain, dtype=float), float(n))
