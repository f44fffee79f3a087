"""Counts from a SPLU-Gen release (Sec. 4–5 of the paper, and corrections),
each with its uncertainty.

Every function returns estimates (:mod:`privpub.splu.estimates`): ``value``,
``stderr``, ``interval(level)``, ``model_interval(level)``, ``observed``,
``method``, ``converged``, ``iterations`` and ``notes``, and raises one
:class:`~privpub.splu.estimates.ReconstructionWarning` naming the estimates
that need care.

- :func:`sensitive_counts`: f'_s, the number of published rows with value s,
  is the MLE of f_s (Theorem 2) and unbiased: f'_s ~ Binomial(γ f_s, 1/γ),
  so its standard error is √(f_s(1 − 1/γ)) (f'_s plugged in) and its
  interval is the exact binomial one (covers f_s with probability ≥ the level
  for every f_s). This is the count Theorem 3's large-sum utility is about.
- :func:`reconstruct` / :func:`reconstruct_many`, ``method="paper"``: the
  count of (P ∧ s_1 ∧ … ∧ s_w) for a predicate P on non-sensitive attributes
  (SQL WHERE text) by the iterative Bayesian reconstruction of Eq. 13/14.
  Each record is in one of K = 2^{w+1} states (P or not, s_j or not); the
  transition matrix is M = I_2 ⊗ M_1 ⊗ … ⊗ M_w with
  M_j = [[1 − f_j/N, f_j/N], [(γ−1)/γ, 1/γ]] (rows: original ¬s_j, s_j;
  columns: published), f_j the current estimate of s_j's count, recomputed
  from x every iteration, and x_i ← Σ_k y_k m_ik x_i / Σ_r m_rk x_r (y: the
  published state counts). How it starts and stops is ``stopping``
  (:mod:`privpub.splu.em`).
- ``method="partition"`` (one sensitive attribute): the paper's model says a
  record of value s' ≠ s publishes s with probability f_s/N whatever s' is.
  The greedy partition breaks that: the largest values share groups again
  and again, so where P correlates with the sensitive value (Adult: sex and
  occupation) the paper's estimate is biased. The partition is a function of
  the value frequencies alone, which the release estimates (f'), so it
  is rebuilt from f' (:func:`privpub.splu.partition.cooccurrence`): a record
  of value s' publishes s ≠ s' with probability T[s', s] = C[s', s]/(γ C[s', s']).
  Within P the published count of s is then
  E y_P(s) = x_P(s)/γ + r_P(s)(n_P − x_P(s)), with r_P(s) the average of
  T[s', s] over the records of P whose value s' ≠ s. That is the paper's
  two-state model with the partition's actual ¬s → s rate; it is linear in
  x_P(s), so x_P(s) = (y_P(s) − r_P(s) n_P)/(1/γ − r_P(s)), clipped to
  [0, n_P] (the two-state EM's fixed point). The weights of r_P start at the
  published distribution within P and are replaced by the estimates
  ``rounds`` times (a fixed point of estimate → rates → estimate). The full
  value-to-value inversion is not used: values that always share groups
  make T near singular (measured on Adult, γ = 5: its standard deviation is
  about the count itself). No stderr is stated for this method (NaN): the
  partition rebuilt from f' jumps with f' (a delta method holding it fixed
  was measured 0.3–2× the estimate's actual spread).
- ``method="exact-rate"``: the paper's EM with the partition's *average*
  ¬s → s rate. The paper's f_s/N counts the s-records among the records a
  ¬s record could share a group with; it cannot (groups hold distinct
  values), and the right average is f_s(γ − 1)/(γ(N − f_s)). With f_s/N
  the model's E y_s is f_s(1 − f_s/N) + f_s/γ ≠ f_s, so the paper's
  estimator is biased even on data where P and s are independent (with P =
  all records its estimate of f_s is not f'_s, and falls outside f_s's exact
  interval: a note says so).

**Uncertainty** (:mod:`privpub.splu.uncertainty`). ``interval(level)`` is
what the release determines: a record of P whose decoy group holds s
publishes s at the same rate 1/γ as a record with s, so the release fixes
how many records of P share groups with s (a) and of ¬P (b), exactly
Binomial, but not how many of them hold s; (a − (γ − 1)b)/γ ≤ count(P ∧ s) ≤
min(a, (a + b)/γ, |P|), with exact binomial limits for a and b. It covers the
truth for every data set and is wide. ``stderr`` is the delta method of the
closed form with the release's exact covariance of y (noise only), and
``model_interval`` = value ± z·stderr covers the truth only where the model
holds for P. Measured over 2,000 runs of the release's law at 95%
(``python -m privpub.experiments.splu_uncertainty``; counts count(P ∧ s),
P an equality on one attribute; large: truth ≥ 0.5% of N):

=====================  =================  =====================  ====================  =============
data, γ (queries)      interval: worst    model_interval         stderr: value ±       20% narrower
                       coverage; median   (``paper``): median    1.96·stderr covers    (pooled)
                       width / truth      coverage; share of     the estimate's mean,
                                          large ≥ 94%            pooled (worst)
=====================  =================  =====================  ====================  =============
Adult, 5 (83)          99.95%; 3.5        81%; 22%               94.9% (93.9%)         88.2%
Adult, 3 (83)          100%; 3.0          23%; 5%                95.0% (94.0%)         88.4%
census 100K, 5 (250)   100%; 2.1          15%; 7%                95.0% (94.1%)         88.3%
=====================  =================  =====================  ====================  =============

So the stderr is right about the noise, and the model's bias dominates it:
on the census the paper model's 95% interval covers the truth in a median 15%
of runs. Nothing in a release can tell which predicates the model fits.

**Error.** Measured mean relative error over counts with selectivity ≥ 1%
(seeds 0–2; ``python -m privpub.experiments.splu_estimators`` reproduces it),
with each stopping rule (the partition method has no EM):

==================================  =====  =================  =================  =================
data (queries)                      rule   paper              exact-rate         partition
==================================  =====  =================  =================  =================
Adult train γ=5, occ. × sex (19)    paper  0.205 0.214 0.216  0.205 0.217 0.203  0.272 0.275 0.251
                                    count  0.340 0.321 0.292  0.323 0.321 0.277
Adult test, same (19)               paper  0.221 0.244 0.253  0.223 0.232 0.248  0.298 0.266 0.382
                                    count  0.313 0.264 0.402  0.306 0.247 0.409
synth. 100K γ=3, correlated (19)    paper  0.470 0.467 0.459  0.591 0.593 0.592  0.231 0.282 0.298
                                    count  0.486 0.483 0.474  0.587 0.591 0.588
synth. 100K γ=3, independent (16)   paper  0.169 0.164 0.175  0.018 0.019 0.017  0.058 0.059 0.053
                                    count  0.196 0.190 0.202  0.052 0.054 0.050
==================================  =====  =================  =================  =================

The published count y_P(s) itself scores 0.206 0.213 0.207 (Adult train), 0.229
0.238 0.228 (test), 0.195 0.196 0.206 (correlated) and 0.016 0.017 0.016
(independent): the paper's rule scores like it because it stops about one
step from it; run to its fixed point, the reconstruction is worse on all
four. The default stays the fixed point (a defined estimator, with a
stderr); the published count is ``observed`` on every estimate. The
partition method lowers the Male ∧ Adm-clerical bias on Adult train (truth
1,209; paper's rule 2,378–2,550; partition 1,692–2,142) but its denominator
1/γ − r_P(s) is small where s shares groups with the values common in P, so
its variance outweighs the bias it removes there; more rounds are worse
(rounds = 5: 0.86–1.05 on Adult train). Also tried and worse: the partition
rates weighted by the exact-rate estimates instead of the published
distribution within P (correlated synthetic: 0.90–0.98).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError, QueryError
from privpub.core.estimate import LEVEL, Estimate, Estimates
from privpub.splu.em import (
    STOPPING,
    paper_em,
    partition_estimates,
    sharing_rates,
    transition_matrix,
)
from privpub.splu.estimates import check_batch, diagnose, splu_estimates, warn
from privpub.splu.histograms import (
    joint_counts,
    predicate_histogram,
    predicate_histograms,
    state_counts,
    value_index,
)
from privpub.splu.uncertainty import delta_stderr, misfit
from privpub.tables.published import PublishedView

#: The estimators of count(P ∧ s …): see the module docstring.
METHODS = ("paper", "exact-rate", "partition")


def _splu_view(view: PublishedView) -> tuple[int, list[str]]:
    if not isinstance(view, PublishedView) or view.mechanism != "splu":
        raise ParameterError(f"expected a SPLU-Gen release (PublishedView of mechanism "
                             f"'splu'), got {view!r}")
    return int(view.parameters["group_size"]), list(view.parameters["sensitive"])


def sensitive_counts(view: PublishedView, attribute: str) -> Estimates:
    """Every value's count f_s over all published records, with its uncertainty:
    the estimate f'_s (its published count; Theorem 2's MLE, unbiased), stderr
    √(f'_s(1 − 1/γ)), and ``interval(level)`` the exact binomial interval of
    f'_s ~ Binomial(γ f_s, 1/γ) (covers f_s with probability ≥ level for
    every f_s). Method ``"mle"``; one query per domain value, in domain order
    (``to_frame()`` lists them). Raises a ReconstructionWarning naming the
    values whose interval includes 0 (published 0 times)."""
    group_size, sensitive = _splu_view(view)
    if attribute not in sensitive:
        raise ParameterError(f"{attribute!r} is not a sensitive attribute of this release "
                             f"(sensitive: {sensitive}); its counts are published exactly")
    out = _sensitive_counts(view, attribute, group_size)
    warn(out, stacklevel=2)
    return out


def sensitive_count(view: PublishedView, attribute: str, value: Any) -> Estimate:
    """One value's count f_s over all published records: its entry of
    :func:`sensitive_counts` (the warning names it alone, if it needs care)."""
    group_size, sensitive = _splu_view(view)
    if attribute not in sensitive:
        raise ParameterError(f"{attribute!r} is not a sensitive attribute of this release "
                             f"(sensitive: {sensitive}); its counts are published exactly")
    index = value_index(view.schema, attribute, value)
    found = Estimates.of([_sensitive_counts(view, attribute, group_size)[index]])
    warn(found, stacklevel=2)
    return found[0]


def _sensitive_counts(view: PublishedView, attribute: str, group_size: int) -> Estimates:
    counts = predicate_histogram(view, None, [attribute]).sum(axis=0).astype(float)
    n = counts.sum()
    states = np.zeros((len(counts), 4))
    states[:, 2], states[:, 3] = n - counts, counts
    labels = view.schema.projection([attribute])[attribute].tolist()
    stderr = np.sqrt(counts * (1 - 1 / group_size))
    q = len(counts)
    return _batch(counts, stderr, [states[i] for i in range(q)], np.zeros(q, dtype=np.int64),
                  np.ones(q, dtype=bool), "mle", group_size, np.zeros(q),
                  [(None, {attribute: v}) for v in labels], "count")


def from_states(y: np.ndarray, group_size: int, method: str = "paper", stopping: str = "count",
                tol: float | None = None, max_iter: int = 10_000,
                queries: Sequence[tuple[str | None, Mapping[str, Any]]] | None = None
                ) -> Estimates:
    """The ``paper`` / ``exact-rate`` estimates with their uncertainty from published
    state counts y (Q, K) alone, as :func:`reconstruct_many` computes them (it
    calls this): the EM, the delta-method stderr, the misfit and the notes. No
    warning is raised here. ``queries`` labels the rows (default: unnamed)."""
    if method not in ("paper", "exact-rate"):
        raise ParameterError(f"from_states runs the EM methods 'paper' and 'exact-rate', "
                             f"got {method!r}")
    y = np.asarray(y, dtype=np.float64)
    value, stderr, iterations, converged, fit = _em_estimates(y, group_size, method, stopping, tol,
                                                              max_iter)
    return _batch(value, stderr, list(y), iterations, converged, method, group_size, fit, queries,
                  stopping)


def _em_estimates(y: np.ndarray, group_size: int, method: str, stopping: str, tol: float | None,
                  max_iter: int) -> tuple[np.ndarray, ...]:
    exact = method == "exact-rate"
    x, iterations, converged = paper_em(y, group_size, tol, max_iter, exact, stopping)
    stderr = delta_stderr(y, group_size, exact)
    # ŷ = Mᵀx̂ as contiguous sums, in one order whatever the batch's size
    # (:func:`~privpub.splu.uncertainty.state_covariance`'s note).
    implied = (np.swapaxes(transition_matrix(x, group_size, exact), 1, 2)
               * x[:, None, :]).sum(axis=2)
    return x[:, -1], stderr, iterations, converged, misfit(y, implied, group_size)


def _batch(value, stderr, states, iterations, converged, method, group_size, fit, queries, stopping
           ) -> Estimates:
    q = len(value)
    queries = tuple((None, {}) for _ in range(q)) if queries is None else check_batch(queries)
    found = splu_estimates(value, stderr, states, iterations, converged, method, group_size, fit,
                           queries)
    lower, upper = found.interval(LEVEL)
    notes = diagnose(found.value, found.stderr, lower, upper, np.asarray(fit, dtype=float),
                     found.converged, found.iterations, method, stopping)
    return replace(found, notes=notes)


def _run(view: PublishedView, queries: Sequence[tuple[Any, Mapping[str, Any]]], method: str,
         tol: float | None, max_iter: int, rounds: int, stopping: str) -> Estimates:
    group_size, sensitive = _splu_view(view)
    if method not in METHODS:
        raise ParameterError(f"method must be one of {list(METHODS)}, got {method!r}")
    if stopping not in STOPPING:
        raise ParameterError(f"stopping must be one of {list(STOPPING)}, got {stopping!r}")
    if tol is not None:
        tol = validate.real("tol", tol)
        if tol <= 0:
            raise ParameterError(f"tol must be positive, got {tol}")
    max_iter = validate.integer("max_iter", max_iter, minimum=1)
    rounds = validate.integer("rounds", rounds, minimum=1)
    groups: dict[tuple, list[int]] = {}
    parsed = []
    labels: list[tuple[str | None, dict[str, Any]]] = []
    for i, query in enumerate(queries):
        if not (isinstance(query, tuple) and len(query) == 2 and isinstance(query[1], Mapping)
                and query[1]):
            raise ParameterError(f"query #{i} must be (where, {{sensitive attribute: value, "
                                 f"…}}), got {query!r}")
        where, values = query
        for a in values:
            if a not in sensitive:
                raise QueryError(f"query #{i}: {a!r} is not a sensitive attribute of this "
                                 f"release (sensitive: {sensitive})")
        attrs = [a for a in sensitive if a in values]
        if method == "partition" and len(attrs) > 1:
            raise ParameterError("method='partition' handles one sensitive attribute per "
                                 f"query; query #{i} names {attrs}")
        # SQL text keys as given (parsed once per distinct text, in predicate_histogram);
        # expressions and mappings as their text (labels, which parse back to them).
        text = where if where is None or isinstance(where, str) else view.condition(where).text
        key = (text, tuple(attrs))
        parsed.append([value_index(view.schema, a, values[a]) for a in attrs])
        labels.append((text, {a: values[a] for a in attrs}))
        groups.setdefault(key, []).append(i)
    q = len(parsed)
    states: list[np.ndarray] = [np.zeros(0)] * q
    value, stderr, fit = np.zeros(q), np.full(q, np.nan), np.zeros(q)
    iterations, converged = np.zeros(q, dtype=np.int64), np.ones(q, dtype=bool)
    rates: dict[str, np.ndarray] = {}  # the partition method's t, per attribute
    pending: dict[int, list[int]] = {}  # w → the queries to run in one vectorised EM
    keys = list(groups)
    hists: dict[tuple, np.ndarray] = {}
    for attrs in dict.fromkeys(a for _, a in keys):
        wheres = [w for w, a in keys if a == attrs]
        hists |= {(w, attrs): h for w, h in
                  zip(wheres, predicate_histograms(view, wheres, list(attrs)), strict=True)}
    for attrs in dict.fromkeys(a for _, a in keys):  # every query's states, a set at a time
        chosen = [k for k in keys if k[1] == attrs]
        indices = [np.array([parsed[i] for i in groups[k]], dtype=np.int64) for k in chosen]
        for k, y in zip(chosen, state_counts([hists[k] for k in chosen], indices), strict=True):
            for i, row in zip(groups[k], y, strict=True):
                states[i] = row
            if method != "partition":
                pending.setdefault(len(attrs), []).extend(groups[k])
    for (where, attrs), members in groups.items() if method == "partition" else ():
        a = attrs[0]
        if a not in rates:
            rates[a] = sharing_rates(joint_counts(view, [a]), group_size)
        x = partition_estimates(hists[(where, attrs)], rates[a], group_size, rounds)
        value[members] = x[[parsed[i][0] for i in members]]
        iterations[members] = rounds
    for members in pending.values():
        y = np.stack([states[i] for i in members])
        value[members], stderr[members], iterations[members], converged[members], \
            fit[members] = _em_estimates(y, group_size, method, stopping, tol, max_iter)
    return _batch(value, stderr, states, iterations, converged, method, group_size, fit, labels,
                  stopping)


def reconstruct_many(view: PublishedView, queries: Sequence[tuple[Any, Mapping[str, Any]]],
                     method: str = "paper", tol: float | None = None, max_iter: int = 10_000,
                     rounds: int = 1, stopping: str = "count") -> Estimates:
    """Estimate count(P ∧ s_1 ∧ …) for each (where, {sensitive attribute: value})
    query, with its uncertainty (:class:`~privpub.core.estimate.Estimates`:
    value, stderr, interval(level), model_interval(level), converged,
    iterations, method; ``batch[i]`` is query i's estimate). Queries with the
    same predicate and attributes share one pass over the release; the
    reconstruction runs vectorised over all of them.

    ``stopping`` chooses the EM's rule (:func:`~privpub.splu.em.paper_em`): ``"count"`` (default)
    runs to the requested count's fixed point within ``tol`` (default 10⁻⁶,
    relative); ``"paper"`` is Sec. 5's rule (every state's change ≤ ``tol``,
    default 1%) for reproductions. Raises one
    :class:`~privpub.splu.estimates.ReconstructionWarning` naming the estimates
    that need care (their ``notes`` say why)."""
    out = _run(view, queries, method, tol, max_iter, rounds, stopping)
    warn(out, stacklevel=2)
    return out


def reconstruct(view: PublishedView, where: Any, values: Mapping[str, Any],
                method: str = "paper", tol: float | None = None, max_iter: int = 10_000,
                rounds: int = 1, stopping: str = "count") -> Estimate:
    """Estimate count(P ∧ s_1 ∧ …) for one query, with its uncertainty
    (:class:`~privpub.core.estimate.Estimate`; options and warning as for
    :func:`reconstruct_many`)."""
    out = _run(view, [(where, values)], method, tol, max_iter, rounds, stopping)
    warn(out, stacklevel=2)
    return out[0]
