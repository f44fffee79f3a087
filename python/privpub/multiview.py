"""Publishing several αβ views of the same (or updated) data: Algorithm 7.

Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.4.1. Publishing independent αβ
views of one instance breaks privacy (a real tuple shows up in most of them,
a noise tuple in few). Algorithm 7 publishes V_i, given V' = V_1 ∪ … ∪ V_{i−1}:

- each tuple of I with probability α + β;
- each tuple of V' − I with probability p' = (α+β)·e^{−1/v};
- each other tuple of D with probability p_i = (1 − α − β)^{i−1}·β;

for at most v views. Fresh noise becomes rarer with every view, so
E|V_i| ≤ E|V_1|/(α+β) whatever i is.

Estimator. The paper's Q̃ = (n_{V_i} − p' n_{V'} − p_i n_D)/((α+β)(1 − e^{−1/v}))
is unbiased only when I ⊆ V' and p_i → 0 (it charges every tuple of V' and
of D with a noise probability, the tuples of I included). privpub uses the
unbiased form that conditions on V' (public), splitting the query by V':

  Q̃ = (n_A − p' n_{V'})/(α+β − p') + (n_B − p_i (n_D − n_{V'}))/(α+β − p_i)

with n_A = Q(V_i ∩ V'), n_B = Q(V_i − V'), n_{V'} = Q(V'). Repeated records:
the first copy of a tuple is kept with α + β and each further copy with
α + β − p (p = p' inside V', p_i outside), which keeps the estimator unbiased
for record counts; for V_1 this is the single-view rule (α + β, then α).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from privpub import _core
from privpub.alphabeta import AlphaBeta
from privpub.errors import ParameterError
from privpub.records import (
    as_schema_codes,
    distinct_sorted,
    isin_sorted,
    records_as_codes,
    sorted_rows,
    union_sorted,
)
from privpub.seeding import SeedLike, resolve_seed
from privpub.views import PublishedView, QueryCounts, register_estimator

MECHANISM = "alphabeta-multiview"


class MultiViewPublisher:
    """Publish up to ``max_views`` αβ views with Algorithm 7.

    Parameters
    ----------
    mech : AlphaBeta
        The single-view mechanism whose α, β and schema are used.
    max_views : int
        v, the bound on the number of views (it sets p' = (α+β)e^{−1/v}).

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> pub = privpub.MultiViewPublisher(
    ...     privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10), max_views=3)
    >>> v1 = pub.publish(df, seed=1); v2 = pub.publish(df, seed=2)
    >>> len(pub.views)
    2
    """

    def __init__(self, mech: AlphaBeta, max_views: int):
        if not isinstance(mech, AlphaBeta):
            raise ParameterError(f"mech must be an AlphaBeta, got {type(mech).__name__}")
        if not isinstance(max_views, (int, np.integer)) or max_views < 1:
            raise ParameterError(f"max_views must be a positive integer, got {max_views!r}")
        if mech.source is not None:
            raise ParameterError("MultiViewPublisher supports the uniform β-step only "
                                 "(Algorithm 7 is stated for it); this mechanism has a source")
        self.mech, self.max_views = mech, int(max_views)
        self.views: list[PublishedView] = []
        self._union = np.zeros((0, max(mech.schema.limbs, 1)), dtype=np.uint64)

    def probabilities(self, i: int) -> tuple[float, float, float]:
        """(α+β, p', p_i) for view number i (1-based)."""
        a, b, v = self.mech.alpha, self.mech.beta, self.max_views
        return a + b, (a + b) * math.exp(-1 / v), (1 - a - b) ** (i - 1) * b

    def expected_size_bound(self, n: int) -> float:
        """E|V_1|/(α+β) for n records: the Sec. 4.4.1 bound on every E|V_i|."""
        a, b, m = self.mech.alpha, self.mech.beta, self.mech.schema.size
        return (a * n + b * m) / (a + b)

    def publish(self, data: pd.DataFrame | np.ndarray, seed: SeedLike = None) -> PublishedView:
        """Publish the next view V_i of ``data`` (the current instance)."""
        i = len(self.views) + 1
        if i > self.max_views:
            raise ParameterError(f"max_views = {self.max_views} views have been published; "
                                 "a further view would exceed the privacy analysis")
        schema = self.mech.schema
        first, p_prev, p_fresh = self.probabilities(i)
        records = sorted_rows(records_as_codes(schema, data))
        distinct = distinct_sorted(records)
        source = resolve_seed(seed)
        union = self._union
        in_prev = isin_sorted(records, union)
        parts = []
        for label, rows, p_bg in (("in-previous", records[in_prev], p_prev),
                                  ("outside", records[~in_prev], p_fresh)):
            rows = np.ascontiguousarray(rows)
            keep = _core.keep_records(source.derive(f"alpha-step/{label}").key, rows,
                                      np.array([first]), first - p_bg)
            parts.append(rows[keep])
        previous_noise = np.ascontiguousarray(union[~isin_sorted(union, distinct)])
        keep = _core.keep_records(source.derive("previous-noise").key, previous_noise,
                                  np.array([p_prev]), p_prev)
        parts.append(previous_noise[keep])
        parts.append(_core.beta_step(source.derive("beta-step").key, schema.size, p_fresh,
                                     union_sorted(distinct, union)))
        view = parts[0]
        for part in parts[1:]:
            view = _core.merge_sorted(np.ascontiguousarray(view), np.ascontiguousarray(part))
        params = self.mech.parameters() | {
            "n": len(records), "view_index": i, "max_views": self.max_views,
            "p_previous": p_prev, "p_fresh": p_fresh, "error_bound": None}
        published = PublishedView(as_schema_codes(schema, view), schema, MECHANISM, params,
                                  source.policy,
                                  context={"previous_union": as_schema_codes(schema, union)})
        self.views.append(published)
        self._union = union_sorted(union, distinct_sorted(view))
        return published


@register_estimator(MECHANISM)
def _estimate(view: PublishedView, c: QueryCounts) -> tuple[Any, Any]:
    """The split estimator of the module docstring, with plug-in binomial variances."""
    p = view.parameters
    first, p_prev, p_fresh = p["alpha"] + p["beta"], p["p_previous"], p["p_fresh"]
    n_union = c.previous
    x_a = (c.view_previous - p_prev * n_union) / (first - p_prev)
    x_b = (c.n_view - c.view_previous - p_fresh * (c.n_domain - n_union)) / (first - p_fresh)

    def variance(x, total, p_bg: float):
        x = np.clip(x, 0.0, total)
        return (x * first * (1 - first) + (total - x) * p_bg * (1 - p_bg)) / (first - p_bg) ** 2

    return x_a + x_b, variance(x_a, n_union, p_prev) + variance(x_b, c.n_domain - n_union,
                                                                   p_fresh)
