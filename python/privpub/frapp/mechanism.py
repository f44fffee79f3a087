"""FRAPP, the randomised-response baseline of the αβ paper (Sec. 4.3).

Agrawal & Haritsa's optimal FRAPP matrix keeps each record with probability
γ_frapp and otherwise replaces it by one of the other m − 1 tuples
uniformly: y = A x with A = γ_f on the diagonal and o = (1 − γ_f)/(m − 1)
elsewhere. The published view is the multiset of perturbed records.

Estimator: a record matching Q is published matching Q with probability
γ_f + o(n_D − 1), a record not matching with probability o·n_D, so
E[n_V] = Q(I)(γ_f − o) + n·o·n_D and Q̃ = (n_V − n·o·n_D)/(γ_f − o).

Privacy: γ_frapp is calibrated from the same (d, γ) as αβ, at
Definition 2.3's posterior for the paper's d-independent adversary (see
:func:`privpub.frapp.accounting.frapp_gamma_for_privacy`). That bound covers
views that show a tuple at most once; a view showing it twice or more, and
the fact that |V| = |I| (an adversary who knows every other tuple learns
whether t ∈ I), are beyond it, and :meth:`FRAPP.guarantee` says so with numbers
(:mod:`privpub.frapp.claims`). The estimator and the law of its intervals are
in :mod:`privpub.frapp.estimator`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

import privpub._core as _core
from privpub.core import validate
from privpub.core.capabilities import (
    CountIntervalLaw,
    FloatArray,
    PrivacyRequest,
    StatedBound,
    SumCells,
)
from privpub.core.errors import ParameterError
from privpub.core.guarantee import PRIVACY_PARAMETERS, Guarantee, Resolution, warn_if_weak
from privpub.core.inputs import TableLike
from privpub.core.release import register_mechanism
from privpub.core.renamed import renamed_keywords
from privpub.core.seeding import RandomSource, SeedLike, resolve_seed
from privpub.core.useful import release_remedy
from privpub.domain.schema import Schema
from privpub.frapp import claims, estimator, sums
from privpub.frapp.accounting import (
    frapp_copies_ratio,
    frapp_epsilon,
    frapp_exclusive_ratio,
    frapp_gamma_for_epsilon,
    frapp_gamma_for_privacy,
    frapp_off_diagonal,
    frapp_prior_for,
    posterior_from_ratio,
)
from privpub.tables.distributed import DaskRelease, is_dask
from privpub.tables.published import PublishedView
from privpub.tables.records import (
    as_schema_codes,
    check_record_facts,
    counted,
    distinct_sorted,
    prepare_records,
    sorted_rows,
)

if TYPE_CHECKING:
    from privpub.tables.confidence import KeepLaw
    from privpub.tables.viewcounts import Counts


@register_mechanism
class FRAPP:
    """FRAPP over a schema: keep a record with probability ``gamma_frapp``.

    ``n``, ``d`` and ``gamma`` (the posterior bound γ) are the privacy request
    the parameters were chosen for (set by :meth:`for_privacy`);
    ``failure_probability`` is the probability that the error bound fails, the
    paper's ε of (ρ, ε)-usefulness (earlier versions called it ``epsilon``,
    which now means only a privacy loss).

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> f = privpub.FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> f"{f.gamma_frapp:.3e}"
    '2.434e-02'
    """

    name: ClassVar[str] = "frapp"
    #: Parameter names that files written by earlier versions store, and their names now.
    renamed_parameters: ClassVar[dict[str, str]] = {"epsilon": "failure_probability"}
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings: ClassVar[Mapping[str, tuple[str, str]]] = PRIVACY_PARAMETERS | {
        "gamma_frapp": ("γ_frapp", "FRAPP's retention probability: a record stays as it is, "
                                   "else is replaced by a uniform other tuple"),
    }

    @renamed_keywords(epsilon="failure_probability")
    def __init__(self, schema: Schema, gamma_frapp: float, *, n: int | None = None,
                 d: float | None = None, gamma: float | None = None,
                 failure_probability: float = 0.05,
                 allow_prior_below_base_rate: bool = False,
                 records: Mapping[str, Any] | None = None):
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        if not 2 <= schema.size < 2**128:
            raise ParameterError(f"FRAPP needs 2 ≤ m < 2^128, got m = {schema.size:,}")
        gamma_frapp = validate.probability("gamma_frapp", gamma_frapp, open_low=True,
                                           open_high=True)
        failure_probability = validate.probability("failure_probability", failure_probability,
                                                   open_low=True, open_high=True)
        n = validate.optional(validate.integer, "n", n, minimum=1)
        d = validate.optional(validate.probability, "d", d, open_low=True, open_high=True)
        gamma = validate.optional(validate.probability, "gamma", gamma, open_low=True,
                                  open_high=True)
        if gamma_frapp <= frapp_off_diagonal(gamma_frapp, schema.size):
            raise ParameterError(f"gamma_frapp = {gamma_frapp:.6g} must exceed the off-diagonal "
                                 f"(1 − γ_frapp)/(m − 1), or the estimator is undefined")
        self.allow_prior_below_base_rate = validate.prior_at_least_base_rate(
            d, n, schema.size, allow_prior_below_base_rate)
        self.schema, self.gamma_frapp = schema, float(gamma_frapp)
        self.n, self.d, self.gamma = n, d, gamma
        self.failure_probability = float(failure_probability)
        self.records = None if records is None else check_record_facts(records, n)

    @classmethod
    def from_parameters(cls, schema: Schema, parameters: Mapping[str, Any]) -> FRAPP:
        """The mechanism of a release's parameters, checked as by the constructor."""
        p = parameters
        mech = cls(schema, validate.field(p, "gamma_frapp"), n=validate.field(p, "n"),
                   d=validate.field(p, "d"), gamma=validate.field(p, "gamma"),
                   failure_probability=validate.field(p, "failure_probability"),
                   allow_prior_below_base_rate=validate.field(
                       p, "allow_prior_below_base_rate"),
                   records=validate.field(p, "records"))
        validate.same("error_bound", validate.field(p, "error_bound"), mech.error_bound())
        return mech

    @classmethod
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, failure_probability: float = 0.05,
                    allow_prior_below_base_rate: bool = False, *,
                    epsilon: float | None = None) -> FRAPP:
        """γ_frapp meeting the same (d, γ) as αβ: the largest γ_frapp whose
        posterior for a tuple shown once in V is ≤ γ at prior d, for the paper's
        d-independent adversary (derivation in
        :func:`privpub.frapp.accounting.frapp_gamma_for_privacy`). Give d = k·n/m
        through ``k`` or directly as ``d``; ``n`` is the number of records
        the mechanism will publish. A d below the base rate n/m (k < 1) is
        refused unless ``allow_prior_below_base_rate=True``, as for αβ.

        Or give a privacy loss ``epsilon`` instead of k/d: γ_frapp =
        e^ε/(e^ε + m − 1), whose ε under replacement of one record is exactly ε
        (:func:`~privpub.frapp.accounting.frapp_epsilon`), stated with the d that
        calibrates to it at ``gamma`` (:func:`~privpub.frapp.accounting.frapp_prior_for`),
        so ``for_privacy(d=mech.d, gamma=mech.gamma)`` gives the same γ_frapp.
        Giving ``epsilon`` with ``k`` or ``d`` checks that they agree. (The
        usefulness failure probability, once called ``epsilon``, is
        ``failure_probability``.)
        """
        n = validate.integer("n (records in I)", n, minimum=1)
        gamma = validate.probability("gamma", gamma, open_low=True, open_high=True)
        if epsilon is None and (k is None) == (d is None):
            raise ParameterError("give exactly one of k (d = k·n/m) or d, or epsilon")
        if k is not None and d is not None:
            raise ParameterError("give k (d = k·n/m) or d, not both")
        if k is not None or d is not None:
            d = validate.prior_bound(schema.size, n, k, d)
        if epsilon is not None:
            return cls._for_epsilon(schema, n, gamma, d, epsilon, failure_probability,
                                    allow_prior_below_base_rate)
        assert d is not None  # (without epsilon, exactly one of k and d was given: d is set)
        validate.prior_at_least_base_rate(d, n, schema.size, allow_prior_below_base_rate)
        return cls(schema, frapp_gamma_for_privacy(d, gamma, schema.size, n), n=int(n),
                   d=d, gamma=gamma, failure_probability=failure_probability,
                   allow_prior_below_base_rate=allow_prior_below_base_rate)

    @classmethod
    def _for_epsilon(cls, schema: Schema, n: int, gamma: float, d: float | None,
                     epsilon: Any, failure_probability: float, allow_below: bool) -> FRAPP:
        """:meth:`for_privacy` from a privacy loss (``d`` given: checked against it)."""
        m = schema.size
        epsilon = validate.privacy_loss(epsilon)
        gamma_frapp = frapp_gamma_for_epsilon(epsilon, m)
        if d is not None:
            stated = frapp_epsilon(frapp_gamma_for_privacy(d, gamma, m, n), m)
            validate.prior_agrees(d, stated, epsilon, m, n, gamma, "the γ_frapp calibrated")
        else:
            d = frapp_prior_for(gamma_frapp, gamma, m, n)
            if d is None:
                raise ParameterError(
                    f"epsilon = {epsilon} is too small for any (d, γ = {gamma}) statement: "
                    f"γ_frapp = {gamma_frapp:.6g} leaves a view showing t once no more likely "
                    "with t than without; raise epsilon")
            if d * m < n and not allow_below:
                raise ParameterError(
                    f"epsilon = {epsilon} at γ = {gamma} gives d = {d:.6g}, below the base "
                    f"rate n/m = {n / m:.6g} (k = {d * m / n:.4g} < 1). Lower epsilon, raise "
                    "gamma, or pass allow_prior_below_base_rate=True")
        validate.prior_at_least_base_rate(d, n, m, allow_below)
        return cls(schema, gamma_frapp, n=int(n), d=d, gamma=gamma,
                   failure_probability=failure_probability,
                   allow_prior_below_base_rate=allow_below)

    @property
    def off_diagonal(self) -> float:
        return frapp_off_diagonal(self.gamma_frapp, self.schema.size)

    def error_bound(self) -> float | None:
        """Hoeffding bound on |Q̃ − Q(I)| at confidence 1 − ε for each fixed
        query: n_V is a sum of n independent indicators, so
        |n_V − E n_V| < √(n ln(2/ε)/2) w.p. ≥ 1 − ε, divided by γ_f − o."""
        if self.n is None:
            return None
        spread = math.sqrt(self.n * math.log(2 / self.failure_probability) / 2)
        return spread / (self.gamma_frapp - self.off_diagonal)

    def stated_bound(self) -> StatedBound:
        """The per-query (ρ, ε) bound and ε
        (:class:`~privpub.core.capabilities.StatesErrorBound`)."""
        return StatedBound(self.error_bound(), self.failure_probability)

    def record_facts(self) -> Mapping[str, Any] | None:
        """How repeated tuples were published
        (:class:`~privpub.core.capabilities.PublishesRecords`)."""
        return self.records

    def privacy_request(self) -> PrivacyRequest:
        """d, γ and the records given; γ_frapp is solved from them, by no named
        calibration (:class:`~privpub.core.capabilities.StatesPrivacyRequest`)."""
        given = (self.records or {}).get("records_given", self.n)
        return PrivacyRequest(self.d, self.gamma, None, given)

    def parameters(self) -> dict[str, Any]:
        return {"gamma_frapp": self.gamma_frapp, "n": self.n, "d": self.d, "gamma": self.gamma,
                "failure_probability": self.failure_probability, "error_bound": self.error_bound(),
                "allow_prior_below_base_rate": self.allow_prior_below_base_rate,
                "records": self.records}

    def posteriors(self) -> dict[str, float]:
        """The exact worst posteriors at prior d for n records (need d and n):
        ``once`` (t shown once, d-independent), ``twice`` (shown twice),
        ``exclusive`` (shown once, d-exclusive) and the ratio posterior/prior
        ``absent_ratio`` for a view without t."""
        m, n, d, g = self.schema.size, self.n, self.d, self.gamma_frapp
        absent = frapp_copies_ratio(g, m, n, 0)
        return {"once": posterior_from_ratio(d, frapp_copies_ratio(g, m, n, 1)),
                "twice": posterior_from_ratio(d, frapp_copies_ratio(g, m, n, 2)),
                "exclusive": posterior_from_ratio(d, frapp_exclusive_ratio(g, m, n)),
                "absent_ratio": absent / (d * absent + 1 - d)}

    def guarantee(self) -> Guarantee:
        """Each privacy and utility statement with whether it holds for these
        parameters and, on a release, for the data published
        (:mod:`privpub.frapp.claims`)."""
        return claims.guarantee(self)

    def posterior_curves(self) -> tuple[dict[str, Any], float | None, float | None] | None:
        """Each named adversary's posterior as a function of its prior, with d and γ
        (the release card's plot; :class:`~privpub.core.capabilities.PosteriorCurves`);
        None without n (the replacements' likelihood ratios need it)."""
        return claims.posterior_curves(self)

    def usefulness_remedy(self) -> str | None:
        """When this release's usefulness is weak: the largest k at its γ and the least
        γ at its k that make it useful, each with its cost in privacy, searched over
        :meth:`for_privacy` (:func:`privpub.core.useful.release_remedy`)."""
        return release_remedy(self, FRAPP.for_privacy)

    def resolution(self) -> Resolution | None:
        """Which counts the error bound tells from zero, when n is known
        (:class:`~privpub.core.guarantee.Resolution`: the usefulness rule)."""
        bound = self.error_bound()  # (None exactly when n is)
        if self.n is None or bound is None:
            return None
        return Resolution.of("FRAPP", bound, self.failure_probability, self.n,
                             counted(self.records), self.schema)

    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """Q̃ = (n_V − n·o·n_D)/(γ_f − o), with its *plug-in* variance
        (:func:`privpub.frapp.estimator.estimate`); the confidence interval
        (:meth:`interval_law`) holds for every count."""
        return estimator.estimate(self, c)

    def estimate_sum(self, cells: SumCells, cell_weights: FloatArray) -> tuple[float, float]:
        """Σ_v w_v·Q_v(I) over the cells Q ∧ col = v, unbiased, with its plug-in
        variance (:mod:`privpub.frapp.sums`)."""
        return sums.estimate_sum(self, cells, cell_weights)

    def sum_law(self, cells: SumCells, cell_weights: FloatArray, value_range: tuple[float, float]
                ) -> CountIntervalLaw:
        """The sum's interval law: conservative, Bernstein's inequality
        (:mod:`privpub.frapp.sums`)."""
        return sums.sum_law(self, cells, cell_weights, value_range)

    def interval_law(self, c: Counts) -> KeepLaw:
        """The law of Q(V) given the true count c, with Q(V) observed: Q(V) ~
        Bin(c, p_in) + Bin(n − c, p_out) under any semantics, an exact interval
        (:mod:`privpub.frapp.estimator`)."""
        return estimator.interval_law(self, c)

    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None, *,
                duplicates: str | None = None,
                npartitions: int | None = None) -> PublishedView | DaskRelease:
        """Perturb every record; the view holds the n perturbed records, sorted.
        ``data`` must hold the n records the mechanism was built for;
        ``duplicates`` ("set" or "records") must be given when it repeats a tuple.
        Warns (:class:`~privpub.core.errors.UsefulnessWarning`) when the error
        bound cannot tell the release's typical counts from zero (:meth:`resolution`).
        A dask DataFrame gives a lazy :class:`~privpub.tables.distributed.DaskRelease`
        (:func:`privpub.frapp.distributed.publish_dask`) equal to this view for
        the same seed."""
        if is_dask(data):
            from privpub.frapp.distributed import publish_dask
            return publish_dask(self, data, resolve_seed(seed), duplicates, npartitions)
        codes, facts = prepare_records(self.schema, data, self.n, duplicates)
        source = resolve_seed(seed)
        view = sorted_rows(as_schema_codes(self.schema, self.perturb(source, codes)))
        facts |= {"distinct_tuples": len(distinct_sorted(codes)), "revealed_in_view": 0}
        released = self.with_records(len(codes), facts)
        warn_if_weak(released.resolution(), remedy=released.usefulness_remedy)
        return PublishedView(as_schema_codes(self.schema, view), self.schema, self.name,
                             released.parameters(), source.policy)

    def perturb(self, source: RandomSource, records: np.ndarray, start: int = 0) -> np.ndarray:
        """The perturbed (n, limbs) ``records`` (sorted, as published), in their
        order: record i draws as position ``start`` + i of the whole sorted list,
        so a Dask range of it draws its share of the single-machine result."""
        return _core.sampling.frapp_perturb(source.derive("frapp").key, records, self.schema.size,
                                            self.gamma_frapp, start=start)

    def with_records(self, n: int, records: Mapping[str, Any]) -> FRAPP:
        """This mechanism as stated for the ``n`` records published (a release's)."""
        return FRAPP(self.schema, self.gamma_frapp, n=n, d=self.d, gamma=self.gamma,
                     failure_probability=self.failure_probability,
                     allow_prior_below_base_rate=self.allow_prior_below_base_rate,
                     records=records)
