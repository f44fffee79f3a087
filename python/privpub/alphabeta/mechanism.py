"""The αβ algorithm: publish a randomised view with (d, γ)-privacy.

Rastogi, Suciu, Hong, *The Boundary Between Privacy and Utility in Data
Publishing*, VLDB 2007, Algorithm 1:

- α-step: every record of I is kept in V with probability α + β;
- β-step: every tuple of the domain D that is not in I is inserted with
  probability β (simulated exactly in expected O(βm + n) time, never O(m));
- publish V, α, β and the domains.

Counting queries are estimated by Q̃(V) = (n_V − β n_D)/α (Algorithm 3),
with n_V = Q(V) and n_D = Q(D).

This module holds the parameters: their checks (the constructor's, and a
release's through :meth:`AlphaBeta.from_parameters`), their calibration for a
privacy request and what they bound. The rest lives by reason to change:
the claims in :mod:`~privpub.alphabeta.claims`, the estimator and its
interval laws in :mod:`~privpub.alphabeta.estimator`, the publish paths in
:mod:`~privpub.alphabeta.publishing` and Algorithm 1's steps in
:mod:`~privpub.alphabeta.draw`.

Repeated records (docs/design.md, "Real tables repeat records"): real tables repeat
tuples (Adult: 30,162 records, 19,502 distinct). The paper treats I as a
set, and so the caller chooses (``publish(duplicates=...)``) when the data
repeat a tuple:

- ``"set"`` publishes the distinct tuples: the full guarantee holds, and the
  estimates count distinct tuples;
- ``"records"`` keeps the *first* copy of a tuple with probability α+β and
  each further copy with probability α, so a tuple with c records contributes
  cα + β copies to V in expectation and the estimator stays unbiased for
  record counts. A tuple that appears more than once in V must come from I
  (noise tuples are distinct), so the guarantee does not hold for tuples with
  several records, and says how many there are and how many this view reveals.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privpub.alphabeta import claims, estimator, publishing, sums
from privpub.alphabeta.accounting import CALIBRATIONS, alphabeta_error_bound, calibrate
from privpub.alphabeta.draw import Draw
from privpub.alphabeta.meanings import ALPHABETA_PARAMETERS
from privpub.alphabeta.priors import prior_for_privacy_loss
from privpub.alphabeta.publishing import MAX_NOISE_ROWS
from privpub.alphabeta.source import SourceDistribution, largest_weight
from privpub.core import validate
from privpub.core.capabilities import (
    CountIntervalLaw,
    FloatArray,
    PrivacyRequest,
    StatedBound,
    SumCells,
)
from privpub.core.errors import ParameterError
from privpub.core.guarantee import Guarantee, Resolution
from privpub.core.inputs import TableLike
from privpub.core.release import register_mechanism
from privpub.core.renamed import renamed_keywords
from privpub.core.seeding import RandomSource, SeedLike
from privpub.core.useful import release_remedy
from privpub.domain.schema import Schema
from privpub.tables.records import check_record_facts, counted

if TYPE_CHECKING:
    from privpub.tables.confidence import CountLaw
    from privpub.tables.distributed import DaskRelease
    from privpub.tables.published import PublishedView
    from privpub.tables.viewcounts import Counts

#: Domains must be smaller than this: codes and m itself are u128 in the kernels.
MAX_DOMAIN = 2**128


@register_mechanism
class AlphaBeta:
    """The αβ mechanism over a schema.

    Parameters
    ----------
    schema : Schema
        The domain D (its size m may be up to 2^128).
    alpha, beta : float
        α > 0, β ≥ 0 with α + β ≤ 1.
    n, d, gamma : optional
        The privacy request the parameters were chosen for (set by
        :meth:`for_privacy`): n records, prior bound d, posterior bound γ;
        used by :meth:`guarantee`. With both n and d, d must be at least the
        base rate n/m unless ``allow_prior_below_base_rate`` says the caller
        gives that up.
    failure_probability : float
        The probability that the error bound fails: the paper's ε of
        (ρ, ε)-usefulness (default 0.05). Earlier versions called it
        ``epsilon``, which now means only a privacy loss.
    calibration : str, optional
        Which choice of :func:`~privpub.alphabeta.accounting.calibrate` gave
        α and β (informational).
    records : dict, optional
        Set on a release: how the published data treated repeated tuples
        (see :func:`prepare_records`) and how many tuples the view shows twice.

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> round(mech.alpha, 5), round(mech.beta, 7)
    (0.49722, 0.0018523)
    """

    name: ClassVar[str] = "alphabeta"
    #: Parameter names that files written by earlier versions store, and their names now.
    renamed_parameters: ClassVar[dict[str, str]] = {"epsilon": "failure_probability"}
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings: ClassVar[Mapping[str, tuple[str, str]]] = ALPHABETA_PARAMETERS

    @renamed_keywords(epsilon="failure_probability")
    def __init__(self, schema: Schema, alpha: float, beta: float, *, n: int | None = None,
                 d: float | None = None, gamma: float | None = None,
                 failure_probability: float = 0.05,
                 source: SourceDistribution | Mapping[str, Any] | None = None,
                 calibration: str | None = None, allow_prior_below_base_rate: bool = False,
                 records: Mapping[str, Any] | None = None):
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        if schema.size >= MAX_DOMAIN:
            raise ParameterError(f"αβ publishing supports domains with m < 2^128; this schema "
                                 f"has m = {schema.size:,} (≈ 2^{math.log2(schema.size):.1f})")
        alpha = validate.probability("alpha", alpha)
        beta = validate.probability("beta", beta)
        failure_probability = validate.probability("failure_probability", failure_probability)
        n = validate.optional(validate.integer, "n", n, minimum=1)
        d = validate.optional(validate.probability, "d", d, open_low=True, open_high=True)
        gamma = validate.optional(validate.probability, "gamma", gamma, open_low=True,
                                  open_high=True)
        if alpha <= 0 or alpha * alpha < 1 / sys.float_info.max:
            raise ParameterError(f"alpha must be positive (the estimator divides by it) and "
                                 f"1/alpha² finite, got {alpha}")
        if alpha + beta > 1:
            raise ParameterError(f"alpha + beta must be at most 1, got {alpha} + {beta}")
        if not 0 < failure_probability < 1:
            raise ParameterError(f"failure_probability must be in (0, 1), got "
                                 f"{failure_probability}")
        if calibration is not None and calibration not in CALIBRATIONS:
            raise ParameterError(f"calibration must be one of {list(CALIBRATIONS)} or None, "
                                 f"got {calibration!r}")
        validate.prior_at_least_base_rate(d, n, schema.size, allow_prior_below_base_rate)
        self.schema, self.alpha, self.beta = schema, float(alpha), float(beta)
        self.n, self.d, self.gamma = n, d, gamma
        self.failure_probability = float(failure_probability)
        self.calibration = calibration
        self.allow_prior_below_base_rate = allow_prior_below_base_rate
        self.records = None if records is None else check_record_facts(records, n)
        if source is not None and not isinstance(source, SourceDistribution):
            source = SourceDistribution(schema, source)
        self.source = source
        if self.beta_max > 1 or alpha + self.beta_max > 1:
            raise ParameterError(f"with this source the most likely tuple's β(t) = "
                                 f"{self.beta_max:.6g}; α + β(t) must stay ≤ 1")

    @classmethod
    def from_parameters(cls, schema: Schema, parameters: Mapping[str, Any]) -> AlphaBeta:
        """The mechanism of a release's parameters, checked as by the constructor;
        the stored error bound must follow from them."""
        mech = cls.from_fields(schema, parameters)
        validate.same("error_bound", validate.field(parameters, "error_bound"),
                      mech.error_bound())
        return mech

    @classmethod
    def from_fields(cls, schema: Schema, parameters: Mapping[str, Any]) -> AlphaBeta:
        """The constructor called with the stored fields (each present, each
        checked by the constructor)."""
        p = parameters
        source = validate.field(p, "source")
        if source is not None and not isinstance(source, Mapping):
            raise ParameterError(f"source must be a mapping attribute → probabilities, "
                                 f"got {source!r}")
        return cls(schema, validate.field(p, "alpha"), validate.field(p, "beta"),
                   n=validate.field(p, "n"), d=validate.field(p, "d"),
                   gamma=validate.field(p, "gamma"),
                   failure_probability=validate.field(p, "failure_probability"),
                   source=source, calibration=validate.field(p, "calibration"),
                   allow_prior_below_base_rate=validate.field(
                       p, "allow_prior_below_base_rate"),
                   records=validate.field(p, "records"))

    @property
    def beta_max(self) -> float:
        """The largest insertion probability β(t) = β·max w(t), the most likely
        tuple's (β without a source): the one definition, used by the β-step,
        the guarantee, the error bound and the report."""
        return self.beta * largest_weight(self.source)

    @classmethod
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, failure_probability: float = 0.05,
                    source: SourceDistribution | Mapping[str, Any] | None = None,
                    calibration: str = "exclusive",
                    allow_prior_below_base_rate: bool = False, *,
                    epsilon: float | None = None) -> AlphaBeta:
        """α and β for (d, γ)-privacy, chosen for a named adversary.

        Give the adversary's prior bound either as ``k`` (d = k·n/m, k ≥ 1) or
        as ``d`` (≥ n/m), or give a privacy loss ``epsilon`` instead: the d at
        which the calibration below has exactly that ε under replacement of one
        tuple (:func:`~privpub.alphabeta.accounting.prior_for_epsilon`), stated
        as the mechanism's ``d`` with ``gamma`` (so ``for_privacy(d=mech.d,
        gamma=mech.gamma)`` gives the same α and β). For ``"exclusive"``,
        ε = ln(γ(1−d)/(d(1−γ))): the d-exclusive adversary's worst likelihood
        ratio is e^ε, and γ only says where the (d, γ) statement is made unless
        α + β ≤ 1 − d/γ binds. Giving ``epsilon`` with ``k`` or ``d`` checks that
        they agree. (``failure_probability`` was once called ``epsilon``; the
        name now means only a privacy loss.) ``calibration`` (see
        :func:`~privpub.alphabeta.accounting.calibrate`):

        - ``"exclusive"`` (default): least estimator variance meeting
          Theorem 4.2 (d-independent adversaries, both leakage sides) and no
          positive leakage to d-exclusive adversaries (Sec. 6.2.1, link
          attacks: one who knows a person has exactly one record among a set
          of tuples);
        - ``"independent"``: least variance meeting Theorem 4.2 alone; the
          guarantee states how far a d-exclusive adversary gets;
        - ``"sec4.2"``: the paper's α + β = 1/2, β = d/γ (for reproductions);
        - ``"half"``: α + β = 1/2 with Theorem 4.2's least β.

        ``n`` is the number of records the mechanism will publish; a prior
        below the base rate (k < 1) protects no adversary the paper considers
        and is refused unless ``allow_prior_below_base_rate=True``.

        With a ``source`` (Sec. 4.4.2) the prior bound is taken proportional to
        it, d(t) = d·w(t), and β(t) = β·w(t); the choice is made for the most
        likely tuple, d·max w(t), and applied to β through β(t) = β·w(t).
        """
        n = validate.integer("n (records in I)", n, minimum=1)
        gamma = validate.probability("gamma", gamma, open_low=True, open_high=True)
        failure_probability = validate.probability("failure_probability", failure_probability,
                                                   open_low=True, open_high=True)
        if source is not None and not isinstance(source, SourceDistribution):
            source = SourceDistribution(schema, source)
        w_max = largest_weight(source)
        if epsilon is not None:
            d = prior_for_privacy_loss(schema, n, gamma, k, d, epsilon, calibration, source,
                                       allow_prior_below_base_rate)
        else:
            d = validate.prior_bound(schema.size, n, k, d)
        if d * w_max >= gamma:
            raise ParameterError(f"infeasible: d = {d * w_max:.6g} (most likely tuple) ≥ "
                                 f"γ = {gamma}; a posterior bound below the prior bound "
                                 "cannot be met")
        alpha, beta_top = calibrate(d * w_max, gamma, calibration)
        return cls(schema, alpha, beta_top / w_max, n=n, d=d, gamma=gamma,
                   failure_probability=failure_probability,
                   source=source, calibration=calibration,
                   allow_prior_below_base_rate=allow_prior_below_base_rate)

    # ---- claims (alphabeta/claims.py) ------------------------------------------------------
    def guarantee(self) -> Guarantee:
        """Each privacy and utility statement with whether it holds for these
        parameters and, on a release, for the data published
        (:mod:`privpub.alphabeta.claims`)."""
        return claims.guarantee(self)

    def posterior_curves(self) -> tuple[dict[str, Any], float | None, float | None]:
        """Each named adversary's posterior as a function of its prior, with d and γ
        (the release card's plot; :class:`~privpub.core.capabilities.PosteriorCurves`).
        As :meth:`guarantee`: with a source, the most likely tuple's β(t), the worst case."""
        return claims.posterior_curves(self)

    def resolution(self) -> Resolution | None:
        """Which counts the error bound tells from zero, when n is known
        (:class:`~privpub.core.guarantee.Resolution`: the usefulness rule)."""
        bound = self.error_bound()  # (None exactly when n is)
        if self.n is None or bound is None:
            return None
        return Resolution.of("αβ", bound, self.failure_probability, self.n,
                             counted(self.records), self.schema)

    def usefulness_remedy(self) -> str | None:
        """When this release's usefulness is weak: the largest k at its γ and the least
        γ at its k that make it useful, each with its cost in privacy, searched over
        :meth:`for_privacy` with this release's calibration
        (:func:`privpub.core.useful.release_remedy`). None when there is none, or the
        mechanism was not built by a calibration (or has a source)."""
        if self.calibration is None or self.source is not None:
            return None
        return release_remedy(self, functools.partial(AlphaBeta.for_privacy,
                                                      calibration=self.calibration))

    def error_bound(self) -> float | None:
        """The per-query (ρ, ε) bound ρ√n when n is known
        (:func:`~privpub.alphabeta.accounting.alphabeta_error_bound`)."""
        if self.n is None:
            return None
        return alphabeta_error_bound(self.alpha, self.beta_max, self.n, self.schema.size,
                                     self.failure_probability, source=self.source is not None)

    def stated_bound(self) -> StatedBound:
        """The per-query (ρ, ε) bound and ε
        (:class:`~privpub.core.capabilities.StatesErrorBound`)."""
        return StatedBound(self.error_bound(), self.failure_probability)

    def record_facts(self) -> Mapping[str, Any] | None:
        """How repeated tuples were published
        (:class:`~privpub.core.capabilities.PublishesRecords`)."""
        return self.records

    def privacy_request(self) -> PrivacyRequest:
        """d, γ, the calibration and the records given
        (:class:`~privpub.core.capabilities.StatesPrivacyRequest`)."""
        given = (self.records or {}).get("records_given", self.n)
        return PrivacyRequest(self.d, self.gamma, self.calibration, given)

    def parameters(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "beta": self.beta, "n": self.n, "d": self.d,
                "gamma": self.gamma, "failure_probability": self.failure_probability,
                "error_bound": self.error_bound(),
                "source": None if self.source is None else self.source.to_dict(),
                "calibration": self.calibration,
                "allow_prior_below_base_rate": self.allow_prior_below_base_rate,
                "records": self.records}

    # ---- estimation (alphabeta/estimator.py) -----------------------------------------------
    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """Algorithm 3: Q̃ = (n_V − β n_D)/α; with a source (Algorithm 8)
        Q̃ = (n_V − Σ_{t ∈ Q(D)} β(t))/α. Returns (Q̃, plug-in variance)
        (:func:`privpub.alphabeta.estimator.estimate` derives it); the
        confidence interval (:meth:`interval_law`) is what holds for every count."""
        return estimator.estimate(self, c)

    def interval_law(self, c: Counts) -> CountLaw:
        """The law of Q(V) given the true count, with Q(V) observed: its
        ``interval(level)`` is the confidence interval of :class:`Estimate`
        (:mod:`privpub.alphabeta.estimator` has the laws and their proofs):
        exact under set semantics or data without repeats, conservative under
        ``duplicates="records"`` with repeated tuples and with a source."""
        return estimator.interval_law(self, c)

    def estimate_sum(self, cells: SumCells, cell_weights: FloatArray) -> tuple[float, float]:
        """Σ_v w_v·Q_v(I) over the cells Q ∧ col = v, with its plug-in variance
        (:mod:`privpub.alphabeta.sums`: unbiased, the count estimator's linear
        combination)."""
        return sums.estimate_sum(self.estimate, cells, cell_weights)

    def sum_law(self, cells: SumCells, cell_weights: FloatArray, value_range: tuple[float, float]
                ) -> CountIntervalLaw:
        """The sum's interval law: conservative, Bernstein's inequality
        (:mod:`privpub.alphabeta.sums`)."""
        return sums.sum_law(self, cells, cell_weights, value_range)

    @property
    def extra_records(self) -> int:
        """E, the published records beyond the first copy of their tuple (0
        unless duplicates='records')."""
        records = self.records or {}
        if records.get("duplicates") != "records" or self.n is None:
            return 0
        distinct: int = records["distinct_tuples"]
        return self.n - distinct

    @property
    def distinct_share(self) -> float:
        """Distinct tuples per published record (1 unless duplicates='records')."""
        records = self.records or {}
        if records.get("duplicates") != "records" or self.n is None:
            return 1.0
        distinct: int = records["distinct_tuples"]
        return distinct / self.n

    # ---- publishing (alphabeta/publishing.py, alphabeta/draw.py) ---------------------------
    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None, *,
                duplicates: str | None = None, max_noise_rows: int = MAX_NOISE_ROWS,
                npartitions: int | None = None) -> PublishedView | DaskRelease:
        """Run Algorithm 1 on ``data`` and return the published view.

        ``data`` is a table with exactly the schema's columns (pandas, Arrow,
        polars or a Parquet/CSV path), or an array of codes; it must hold the
        n records the mechanism was built for. ``seed`` is None for a real
        release (OS CSPRNG), or an int / numpy Generator for a reproducible
        run. ``duplicates`` must be given when the data repeat a tuple:
        ``"set"`` or ``"records"`` (module docstring). Refuses when the
        expected number of noise tuples β·m exceeds ``max_noise_rows``. Warns
        (:class:`~privpub.core.errors.UsefulnessWarning`) when the release's
        error bound cannot tell its typical counts from zero (:meth:`resolution`).

        A dask DataFrame gives a lazy :class:`~privpub.tables.distributed.DaskRelease`
        (:func:`privpub.alphabeta.distributed.publish_dask`, over ``npartitions``
        ranges of code space, default the frame's partition count): for the same
        seed, its rows are this method's rows, byte for byte.
        """
        return publishing.publish(self, data, seed, duplicates, max_noise_rows, npartitions)

    def publish_to_parquet(self, data: TableLike | np.ndarray, path: str | os.PathLike[str],
                           seed: SeedLike = None, *, duplicates: str | None = None,
                           max_noise_rows: int = MAX_NOISE_ROWS,
                           progress: Callable[[int, int], None] | None = None,
                           overwrite: bool = False, sign: Any = None) -> PublishedView:
        """:meth:`publish` straight to a Parquet file, in bounded memory.

        The view is drawn and written ``WINDOW_SEGMENTS`` β-step segments at a
        time (about 4M noise tuples; :mod:`privpub.alphabeta.publishing`), so
        memory holds the records and one window, not the view: the same rows,
        byte for byte, as ``publish(data, seed).to_parquet(path)``.
        ``progress(done, total)`` is called after each window with segment
        counts. Returns the view opened from the file. (A dask DataFrame:
        ``publish(ddf).to_parquet(directory)``.)

        The file appears whole or not at all, as with :meth:`PublishedView.to_parquet`:
        an existing ``path`` is refused (before anything is drawn) unless
        ``overwrite=True``, and so is ``path`` being the ``data`` file. ``sign``
        signs it, as :meth:`PublishedView.to_parquet`'s.
        """
        return publishing.publish_to_parquet(self, data, path, seed, duplicates,
                                             max_noise_rows, progress, overwrite, sign)

    def draw(self, rand: RandomSource, records: np.ndarray, start: int = 0,
             segments: tuple[int, int] | None = None) -> np.ndarray:
        """Algorithm 1's two steps over sorted (n, limbs) ``records``: the sorted view rows.

        The α-step keeps record i with stream element ``start`` + i of the
        "alpha-step" key; the β-step draws the "beta-step" key's ``segments``
        (a, b) (all by default), i.e. the codes in [a·L, b·L) for
        L = ``_core.sampling.beta_step_layout(m, β)[0]``, leaving out the records' own
        codes. A slice of the globally sorted records holding every record in
        [a·L, b·L), with ``start`` its first record's position, thus gives the
        slice of the whole view in that range: a Dask task's share, byte for
        byte (:mod:`privpub.alphabeta.distributed`).
        """
        (view,) = Draw(self, rand, records, start=start, segments=segments).chunks()
        return view

    def with_records(self, n: int, records: Mapping[str, Any]) -> AlphaBeta:
        """This mechanism as stated for the ``n`` records published (a release's)."""
        return AlphaBeta(self.schema, self.alpha, self.beta, n=n, d=self.d, gamma=self.gamma,
                         failure_probability=self.failure_probability, source=self.source,
                         calibration=self.calibration,
                         allow_prior_below_base_rate=self.allow_prior_below_base_rate,
                         records=records)
