"""Publishing several αβ views of the same (or updated) data: Algorithm 7.

Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.4.1. Publishing independent αβ
views of one instance breaks privacy (a real tuple shows up in most of them,
a noise tuple in few). Algorithm 7 publishes V_i, given V' = V_1 ∪ … ∪ V_{i−1}:

- each tuple of I with probability α + β;
- each tuple of V' − I with probability p' = (α+β)·e^{−1/v};
- each other tuple of D with probability p_i = (1 − α − β)^{i−1}·β;

for at most v views. Fresh noise becomes rarer with every view, so
E|V_i| ≤ E|V_1|/(α+β) whatever i is.

Privacy. The paper says this keeps "the same privacy"; it does not (for
the single-view calibrations on Adult, the worst posterior passes γ from
v = 2 to 20 depending on the calibration). :mod:`privpub.alphabeta.sequence`
computes the exact worst cases of the views so far and of all v planned,
per adversary and per membership history, and calibrates α, β for v views
(:meth:`MultiViewPublisher.for_privacy`); every view's guarantee states them.

Estimator. The paper's Q̃ = (n_{V_i} − p' n_{V'} − p_i n_D)/((α+β)(1 − e^{−1/v}))
is unbiased only when I ⊆ V' and p_i → 0 (it charges every tuple of V' and
of D with a noise probability, the tuples of I included). privpub uses the
unbiased form that conditions on V' (public), splitting the query by V':

  Q̃ = (n_A − p' n_{V'})/(α+β − p') + (n_B − p_i (n_D − n_{V'}))/(α+β − p_i)

with n_A = Q(V_i ∩ V'), n_B = Q(V_i − V'), n_{V'} = Q(V'). Repeated records:
the first copy of a tuple is kept with α + β and each further copy with
α + β − p (p = p' inside V', p_i outside), which keeps the estimator unbiased
for record counts; for V_1 this is the single-view rule (α + β, then α).

Error bound. Sec. 4.4.1 states ρ = v√(k/γ) for V_i without constants or a
proof. privpub states the bound the estimator's own variance gives: Q̃ − Q
is a sum of independent indicators, each divided by s − p (s = α+β, p = p'
inside V', p_i outside), so each term lies within w = 1/(s − max(p', p_i))
of its mean, and over all queries the variance is at most
n·w²/4 + |V'|·p'(1−p')/(s−p')² + m·p_i(1−p_i)/(s−p_i)²; Bernstein's
inequality turns that into a bound for each fixed query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

import privpub._core as _core
from privpub.alphabeta import sums
from privpub.alphabeta.accounting import bernstein_deviation
from privpub.alphabeta.estimator import SplitLaw, count_top, records_law
from privpub.alphabeta.meanings import MULTIVIEW_PARAMETERS
from privpub.alphabeta.mechanism import AlphaBeta
from privpub.alphabeta.priors import views_prior_for_privacy_loss
from privpub.alphabeta.sequence import VIEW_CALIBRATIONS, calibrate_views, view_probabilities
from privpub.alphabeta.sequence_claims import (
    epsilon_claims,
    history_claim,
    region_claim,
    sequence_claims,
)
from privpub.core import validate
from privpub.core.capabilities import (
    CountIntervalLaw,
    FloatArray,
    PrivacyRequest,
    StatedBound,
    SumCells,
)
from privpub.core.errors import ParameterError
from privpub.core.guarantee import (
    DIFFERENTIAL_PRIVACY,
    INDISTINGUISHABILITY,
    Guarantee,
    Resolution,
    usefulness_claim,
    warn_if_weak,
)
from privpub.core.inputs import TableLike
from privpub.core.release import register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.core.useful import release_remedy
from privpub.domain.schema import Schema
from privpub.tables.confidence import CountLaw
from privpub.tables.published import PublishedView
from privpub.tables.records import (
    as_schema_codes,
    counted,
    distinct_sorted,
    isin_sorted,
    prepare_records,
    repeated_rows,
    union_sorted,
)
from privpub.tables.viewcounts import Counts


@register_mechanism
class MultiViewStep:
    """View number ``view_index`` of at most ``max_views`` published by Algorithm 7
    with the single-view mechanism ``mech``: what its release is rebuilt into."""

    name: ClassVar[str] = "alphabeta-multiview"
    renamed_parameters = AlphaBeta.renamed_parameters
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings: ClassVar[Mapping[str, tuple[str, str]]] = MULTIVIEW_PARAMETERS

    def __init__(self, mech: AlphaBeta, view_index: int, max_views: int,
                 previous_rows: int = 0, histories: Sequence[Sequence[int]] | None = None):
        if mech.source is not None:
            raise ParameterError("Algorithm 7 is stated for the uniform β-step; this "
                                 "mechanism has a source")
        self.mech = mech
        self.max_views = validate.integer("max_views", max_views, minimum=1)
        self.view_index = validate.integer("view_index", view_index, minimum=1)
        self.previous_rows = validate.integer("previous_rows", previous_rows)
        if self.view_index > self.max_views:
            raise ParameterError(f"view_index = {view_index} exceeds max_views = {max_views}")
        if self.view_index == 1 and self.previous_rows:
            raise ParameterError("the first view has no previous views (previous_rows = "
                                 f"{previous_rows})")
        self.histories = None if histories is None else _check_histories(histories,
                                                                          self.view_index)

    def probabilities(self) -> tuple[float, float, float]:
        """(α+β, p', p_i) for this view."""
        return view_probabilities(self.mech.alpha, self.mech.beta, self.max_views,
                                  self.view_index)

    def error_bound(self) -> float | None:
        """The per-query Bernstein bound of the module docstring (needs n)."""
        if self.mech.n is None:
            return None
        s, p_prev, p_fresh = self.probabilities()
        scale = 1 / (s - max(p_prev, p_fresh))
        variance = (self.mech.n * scale ** 2 / 4
                    + self.previous_rows * p_prev * (1 - p_prev) / (s - p_prev) ** 2
                    + self.mech.schema.size * p_fresh * (1 - p_fresh) / (s - p_fresh) ** 2)
        return bernstein_deviation(variance, scale, self.mech.failure_probability)

    def stated_bound(self) -> StatedBound:
        """The per-query (ρ, ε) bound and ε
        (:class:`~privpub.core.capabilities.StatesErrorBound`)."""
        return StatedBound(self.error_bound(), self.mech.failure_probability)

    def record_facts(self) -> Mapping[str, Any] | None:
        """How repeated tuples were published
        (:class:`~privpub.core.capabilities.PublishesRecords`)."""
        return self.mech.records

    def privacy_request(self) -> PrivacyRequest:
        """The (d, γ) request of the αβ mechanism each view is drawn by
        (:class:`~privpub.core.capabilities.StatesPrivacyRequest`)."""
        return self.mech.privacy_request()

    def parameters(self) -> dict[str, Any]:
        _, p_prev, p_fresh = self.probabilities()
        return self.mech.parameters() | {
            "view_index": self.view_index, "max_views": self.max_views,
            "previous_rows": self.previous_rows, "p_previous": p_prev, "p_fresh": p_fresh,
            "error_bound": self.error_bound(),
            "histories": None if self.histories is None else [list(h) for h in self.histories]}

    @classmethod
    def from_parameters(cls, schema: Schema, parameters: Mapping[str, Any]) -> MultiViewStep:
        mech = AlphaBeta.from_fields(schema, parameters)
        step = cls(mech, validate.field(parameters, "view_index"),
                   validate.field(parameters, "max_views"),
                   validate.field(parameters, "previous_rows"),
                   # files written before histories were tracked lack the field
                   parameters.get("histories"))
        _, p_prev, p_fresh = step.probabilities()
        validate.same("p_previous", validate.field(parameters, "p_previous"), p_prev)
        validate.same("p_fresh", validate.field(parameters, "p_fresh"), p_fresh)
        validate.same("error_bound", validate.field(parameters, "error_bound"),
                      step.error_bound())
        return step

    def guarantee(self) -> Guarantee:
        """The privacy of the views so far and of all ``max_views`` planned, per
        adversary, with exact posteriors (:mod:`privpub.alphabeta.sequence`);
        the single view's other claims (repeated records, public domain); the
        usefulness of this view."""
        single = self.mech.guarantee()
        a, b, v, i = self.mech.alpha, self.mech.beta, self.max_views, self.view_index
        replaced = ("(d, γ)-privacy", "no positive leakage, d-exclusive adversaries",
                    "(d, γ)-privacy region", "(ρ, ε)-usefulness", INDISTINGUISHABILITY,
                    DIFFERENTIAL_PRIVACY)
        claims = [c for c in single.claims if c.name not in replaced]
        claims.extend(epsilon_claims(self.mech, v, i, self.histories or ()))
        if self.mech.d is not None and self.mech.gamma is not None:
            d, g = min(self.mech.d, 0.999999), self.mech.gamma
            claims.extend(sequence_claims(a, b, d, g, v, i))
            changed = history_claim(a, b, d, g, v, self.histories or ())
            if changed is not None:
                claims.append(changed)
        else:
            claims.append(region_claim(a, b, v))
        if self.mech.n is not None:
            claims.append(usefulness_claim(
                f"for each fixed counting query, |Q̃(V_{i}) − Q(I)| < "
                f"{self.error_bound():,.1f} with probability ≥ "
                f"{1 - self.mech.failure_probability:g} "
                f"(Bernstein on the split estimator's variance bound, with |V'| = "
                f"{self.previous_rows:,}; module docstring). Sec. 4.4.1's ρ = v√(k/γ) has no "
                "constants and is not used.",
                "Sec. 4.4.1, corrected", self.resolution()))
        return Guarantee(f"{single.mechanism}, view {i}/{v}", tuple(claims))

    def resolution(self) -> Resolution | None:
        """Which counts this view's error bound tells from zero, when n is known
        (:class:`~privpub.core.guarantee.Resolution`)."""
        if self.mech.n is None:
            return None
        return Resolution.of(f"αβ view {self.view_index}/{self.max_views}", self.error_bound(),
                             self.mech.failure_probability, self.mech.n, counted(self.mech.records),
                             self.mech.schema)

    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """The split estimator of the module docstring, with *plug-in* binomial
        variances: each part's estimate, clipped to the counts the release
        allows there ([0, part's Q(D)], or [0, min(n, part's Q(D) + E)] under
        ``duplicates="records"``, E the records beyond first copies), stands in
        for its unknown count. The confidence interval (:meth:`interval_law`)
        holds for every count."""
        first, p_prev, p_fresh = self.probabilities()
        view_previous, n_union = c.context("previous_union")
        x_a = (view_previous - p_prev * n_union) / (first - p_prev)
        x_b = (c.n_view - view_previous - p_fresh * (c.n_domain - n_union)) / (first - p_fresh)
        extra = self.mech.extra_records

        def variance(x, total, p_bg: float):
            x = np.clip(x, 0.0, count_top(self.mech.n, total, extra))
            return (x * first * (1 - first) + (total - x) * p_bg * (1 - p_bg)) \
                / (first - p_bg) ** 2

        return x_a + x_b, (variance(x_a, n_union, p_prev)
                           + variance(x_b, c.n_domain - n_union, p_fresh)
                           + self.repeat_correction(x_a, n_union, p_prev)
                           + self.repeat_correction(x_b, c.n_domain - n_union, p_fresh))

    def repeat_correction(self, x, total, p_bg: float):
        """Variance change from repeated records (duplicates='records'): a further
        copy has variance (s−p)(1−s+p) where a first record's s(1−s) − p(1−p) was
        counted; scaled by the share of records that are further copies."""
        s = self.mech.alpha + self.mech.beta
        x = np.clip(x, 0.0, count_top(self.mech.n, total, self.mech.extra_records))
        further = x * (1 - self.mech.distinct_share)
        change = (s - p_bg) * (1 - s + p_bg) - (s * (1 - s) - p_bg * (1 - p_bg))
        return further * change / (s - p_bg) ** 2

    def estimate_sum(self, cells: SumCells, cell_weights: FloatArray) -> tuple[float, float]:
        """Σ_v w_v·Q_v(I) over the cells Q ∧ col = v: the split estimator's
        linear combination (:mod:`privpub.alphabeta.sums`)."""
        return sums.estimate_sum(self.estimate, cells, cell_weights)

    def sum_law(self, cells: SumCells, cell_weights: FloatArray, value_range: tuple[float, float]
                ) -> CountIntervalLaw:
        """The sum's interval law: Bernstein's inequality on each part, the
        parts' intervals added (:mod:`privpub.alphabeta.sums`)."""
        return sums.views_sum_law(self, cells, cell_weights, value_range)

    def interval_law(self, c: Counts) -> CountLaw | SplitLaw:
        """The law of Q(V_i) given the true count, with the view's counts
        observed (:mod:`privpub.alphabeta.estimator`). Inside V' (public) a tuple of
        I is kept with s = α+β (further copies s − p'), another tuple with p';
        outside, with s and p_i: each part is the single-view law with (α, β)
        replaced by (s − p, p), so the first view's interval is the single
        view's (exact, or conservative under repeated records). A later view's
        count is the sum of the two parts' unknown counts: each part's interval
        is taken at half the error probability and the ends added (Bonferroni),
        a conservative interval."""
        first, p_prev, p_fresh = self.probabilities()
        n, extra = self.mech.n, self.mech.extra_records
        if self.view_index == 1:
            return records_law(c.n_view, first, p_fresh, c.n_domain,
                               count_top(n, c.n_domain, extra), extra)
        view_previous, n_union = c.context("previous_union")
        outside = np.asarray(c.n_domain, dtype=float) - n_union
        return SplitLaw(
            records_law(view_previous, first, p_prev, n_union, count_top(n, n_union, extra),
                        extra),
            records_law(c.n_view - view_previous, first, p_fresh, outside,
                        count_top(n, outside, extra), extra),
            count_top(n, c.n_domain, extra))


def _check_histories(histories: Sequence[Sequence[int]], view_index: int
                     ) -> tuple[tuple[int, int], ...]:
    """(mask, count) pairs: bit i−1 of mask set when a tuple is in I_i (i ≤ view_index)."""
    checked = []
    for pair in histories:
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise ParameterError(f"histories must hold [mask, count] pairs, got {pair!r}")
        mask = validate.integer("histories mask", pair[0], minimum=1)
        count = validate.integer("histories count", pair[1], minimum=1)
        if mask >= 1 << view_index:
            raise ParameterError(f"histories mask {mask} names a version after view "
                                 f"{view_index}")
        checked.append((mask, count))
    return tuple(checked)


class MultiViewPublisher:
    """Publish up to ``max_views`` αβ views with Algorithm 7.

    Each view's :meth:`guarantee` states the exact privacy of the views so
    far and of all ``max_views`` planned (:mod:`privpub.alphabeta.sequence`);
    the data may change between views (versions I_1, I_2, …): the publisher
    keeps each tuple's membership history, in memory, and the guarantee
    states what tuples that entered after the first version get. A view
    after ``max_views`` is refused.

    Parameters
    ----------
    mech : AlphaBeta
        The single-view mechanism whose α, β and schema are used. A
        single-view calibration (``AlphaBeta.for_privacy``) does not make
        several views private together; :meth:`for_privacy` calibrates for
        ``max_views``.
    max_views : int
        v, the bound on the number of views (it sets p' = (α+β)e^{−1/v}).

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> pub = privpub.MultiViewPublisher(
    ...     privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10), max_views=3)
    >>> v1 = pub.publish(df, seed=1, duplicates="set")

    A later view is noisier; here the second's error bound is too wide to tell
    typical counts from zero, and the publisher says so:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     v2 = pub.publish(df, seed=2, duplicates="set")
    >>> [type(w.message).__name__ for w in said]
    ['UsefulnessWarning']
    >>> len(pub.views)
    2
    """

    def __init__(self, mech: AlphaBeta, max_views: int):
        if not isinstance(mech, AlphaBeta):
            raise ParameterError(f"mech must be an AlphaBeta, got {type(mech).__name__}")
        first = MultiViewStep(mech, 1, max_views)  # checks max_views and the β-step
        self.mech, self.max_views = mech, first.max_views
        #: The view calibration :meth:`for_privacy` used (None: α, β given).
        self.calibration: str | None = None
        self.views: list[PublishedView] = []
        self._union = np.zeros((0, max(mech.schema.limbs, 1)), dtype=np.uint64)
        # Every tuple ever in I (sorted codes) and its membership bits (bit i−1: in I_i).
        self._members = self._union
        self._history = np.zeros(0, dtype=np.uint64)

    @classmethod
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, *, max_views: int,
                    calibration: str = "exclusive", failure_probability: float = 0.05,
                    allow_prior_below_base_rate: bool = False,
                    epsilon: float | None = None) -> MultiViewPublisher:
        """A publisher whose ``max_views`` views are (d, γ)-private together.

        α and β come from :func:`~privpub.alphabeta.sequence.calibrate_views`
        (Algorithm 7's probabilities unchanged): ``"exclusive"`` (default)
        against d-independent adversaries (both leakage sides) and with no
        positive leakage to d-exclusive ones, ``"independent"`` against
        d-independent adversaries alone; each the least first-view variance
        β/α² found. ``n``, ``k``/``d``, ``failure_probability`` and
        ``allow_prior_below_base_rate`` as in :meth:`AlphaBeta.for_privacy`.
        Or give a privacy loss ``epsilon`` instead of k/d: the d at which all
        ``max_views`` views together (I unchanged) have that ε
        (:func:`~privpub.alphabeta.priors.views_prior_for_privacy_loss`); with
        k or d as well, the two must agree.

        >>> import privpub
        >>> df, schema = privpub.datasets.load_adult()
        >>> pub = privpub.MultiViewPublisher.for_privacy(schema, n=len(df), gamma=0.2, k=10,
        ...                                              max_views=5)
        >>> pub.guarantee()["(d, γ)-privacy over all views together"].holds
        True
        """
        n = validate.integer("n (records in I)", n, minimum=1)
        gamma = validate.probability("gamma", gamma, open_low=True, open_high=True)
        if calibration not in VIEW_CALIBRATIONS:
            raise ParameterError(f"calibration must be one of {list(VIEW_CALIBRATIONS)} for "
                                 f"several views, got {calibration!r}")
        if epsilon is None:
            d = validate.prior_bound(schema.size, n, k, d)
        else:
            d = views_prior_for_privacy_loss(schema, n, gamma, k, d, epsilon, max_views,
                                             calibration, allow_prior_below_base_rate)
        alpha, beta = calibrate_views(d, gamma, max_views, calibration)
        mech = AlphaBeta(schema, alpha, beta, n=n, d=d, gamma=gamma,
                         failure_probability=failure_probability,
                         allow_prior_below_base_rate=allow_prior_below_base_rate)
        publisher = cls(mech, max_views)
        publisher.calibration = calibration
        return publisher

    def probabilities(self, i: int) -> tuple[float, float, float]:
        """(α+β, p', p_i) for view number i (1-based)."""
        return MultiViewStep(self.mech, i, self.max_views).probabilities()

    def expected_size_bound(self, n: int) -> float:
        """E|V_1|/(α+β) for n records: the Sec. 4.4.1 bound on every E|V_i|."""
        a, b, m = self.mech.alpha, self.mech.beta, self.mech.schema.size
        return (a * n + b * m) / (a + b)

    def guarantee(self) -> Guarantee:
        """The guarantee of the last view published (of the first view to come
        when none has been published yet)."""
        if self.views:
            return self.views[-1].guarantee()
        return MultiViewStep(self.mech, 1, self.max_views).guarantee()

    def _record_history(self, distinct: np.ndarray, i: int) -> list[tuple[int, int]]:
        """Add version i's distinct tuples to the membership histories; the
        (mask, count) pairs of every tuple ever in I."""
        members = union_sorted(self._members, distinct)
        history = np.zeros(len(members), dtype=np.uint64)
        history[isin_sorted(members, self._members)] = self._history  # both sorted
        history[isin_sorted(members, distinct)] |= np.uint64(1 << (i - 1))
        self._members, self._history = members, history
        masks, counts = np.unique(history, return_counts=True)
        return [(int(m), int(c)) for m, c in zip(masks, counts, strict=True)]

    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None, *,
                duplicates: str | None = None) -> PublishedView:
        """Publish the next view V_i of ``data`` (the current instance I_i);
        ``duplicates`` as in :meth:`AlphaBeta.publish`. The first view's data
        must hold the n records the mechanism was built for; later versions
        may differ (updates: the view's n, error bound and the tuples'
        membership histories follow the data; d and γ stay as requested)."""
        i = len(self.views) + 1
        if i > self.max_views:
            raise ParameterError(f"this sequence was planned for max_views = {self.max_views} "
                                 f"views and all {self.max_views} have been published; view "
                                 f"{i} is refused: its privacy was not accounted for (start a "
                                 "new sequence, calibrated for more views, on its own α, β)")
        schema = self.mech.schema
        first, p_prev, p_fresh = self.probabilities(i)
        records, facts = prepare_records(schema, data, self.mech.n if i == 1 else None,
                                         duplicates)
        distinct = distinct_sorted(records)
        # Each view draws from its own streams, also when called with the same seed.
        source = resolve_seed(seed).derive(f"view-{i}")
        union = self._union
        in_prev = isin_sorted(records, union)
        parts = []
        for label, rows, p_bg in (("in-previous", records[in_prev], p_prev),
                                  ("outside", records[~in_prev], p_fresh)):
            rows = np.ascontiguousarray(rows)
            keep = _core.sampling.keep_records(source.derive(f"alpha-step/{label}").key, rows,
                                               np.array([first]), first - p_bg)
            parts.append(rows[keep])
        previous_noise = np.ascontiguousarray(union[~isin_sorted(union, distinct)])
        keep = _core.sampling.keep_records(source.derive("previous-noise").key, previous_noise,
                                           np.array([p_prev]), p_prev)
        parts.append(previous_noise[keep])
        parts.append(_core.sampling.beta_step(source.derive("beta-step").key, schema.size,
                                              p_fresh, union_sorted(distinct, union)))
        view = parts[0]
        for part in parts[1:]:
            view = _core.sampling.merge_sorted(np.ascontiguousarray(view),
                                               np.ascontiguousarray(part))
        facts |= {"distinct_tuples": len(distinct), "revealed_in_view": repeated_rows(view)}
        released = self.mech.with_records(len(records), facts)
        step = MultiViewStep(released, i, self.max_views, len(union),
                             self._record_history(distinct, i))
        published = PublishedView(as_schema_codes(schema, view), schema, step.name,
                                  step.parameters(), source.policy,
                                  context={"previous_union": as_schema_codes(schema, union)})
        self.views.append(published)
        self._union = union_sorted(union, distinct_sorted(view))
        warn_if_weak(step.resolution(), remedy=(lambda: self._first_view_remedy(released))
                     if i == 1 else None)
        return published

    def _first_view_remedy(self, released: AlphaBeta) -> str | None:
        """When the first view (``released``: the mechanism as stated for its
        records) is weak: the requests of :meth:`for_privacy` (this sequence's
        max_views and calibration) that make it useful, with their cost in privacy
        (:func:`~privpub.core.useful.release_remedy`). None for a publisher not
        built by :meth:`for_privacy`. A later view's bound depends on the earlier
        views' rows, which another request would change, so it is not searched."""
        if self.calibration is None:
            return None
        calibration, max_views = self.calibration, self.max_views

        def build(schema: Schema, **request: Any) -> _FirstView:
            publisher = MultiViewPublisher.for_privacy(
                schema, max_views=max_views, calibration=calibration, **request)
            return _FirstView(MultiViewStep(publisher.mech, 1, max_views))

        return release_remedy(_FirstView(MultiViewStep(released, 1, max_views)), build)


class _FirstView:
    """The first view of a sequence as the request :func:`~privpub.core.useful.release_remedy`
    searches: the mechanism's request (n, d, γ, records, …) with the view's own
    error bound, usefulness and guarantee."""

    def __init__(self, step: MultiViewStep):
        self.step = step

    def __getattr__(self, name: str) -> Any:
        return getattr(self.step.mech, name)

    def resolution(self) -> Resolution | None:
        return self.step.resolution()

    def error_bound(self) -> float | None:
        return self.step.error_bound()

    def guarantee(self) -> Guarantee:
        return self.step.guarantee()

    def with_records(self, n: int, records: Mapping[str, Any]) -> _FirstView:
        return _FirstView(MultiViewStep(self.step.mech.with_records(n, records), 1,
                                       self.step.max_views))
