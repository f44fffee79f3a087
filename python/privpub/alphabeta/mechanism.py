"""The αβ algorithm: publish a randomised view with (d, γ)-privacy.

Rastogi, Suciu, Hong, *The Boundary Between Privacy and Utility in Data
Publishing*, VLDB 2007, Algorithm 1:

- α-step: every record of I is kept in V with probability α + β;
- β-step: every tuple of the domain D that is not in I is inserted with
  probability β (simulated exactly in expected O(βm + n) time, never O(m));
- publish V, α, β and the domains.

Counting queries are estimated by Q̃(V) = (n_V − β n_D)/α (Algorithm 3),
with n_V = Q(V) and n_D = Q(D).

Repeated records (DESIGN.md): real tables repeat tuples (Adult: 30,162
records, 19,502 distinct). The paper treats I as a set, and so the caller
chooses (``publish(duplicates=...)``) when the data repeat a tuple:

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

import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from privpub import _core
from privpub.alphabeta.accounting import (
    CALIBRATIONS,
    alphabeta_error_bound,
    alphabeta_leakage,
    alphabeta_posterior,
    calibrate,
    exclusive_worst_posterior,
    is_alphabeta_private,
    largest_private_d,
    rho_theorem_4_3,
    theorem_4_2_holds,
    theorem_4_3_r,
)
from privpub.alphabeta.source import SourceDistribution, largest_weight
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.files import PARQUET, check_output
from privpub.core.guarantee import Claim, Guarantee, Resolution, usefulness_claim, warn_if_weak
from privpub.core.inputs import TableLike
from privpub.core.release import register_mechanism
from privpub.core.renamed import renamed_keywords
from privpub.core.seeding import RandomSource, SeedLike, resolve_seed
from privpub.domain.schema import Schema
from privpub.tables.confidence import CountLaw, HoeffdingLaw, KeepLaw, count_top
from privpub.tables.distributed import DaskRelease, is_dask
from privpub.tables.published import Counts, PublishedView, write_view
from privpub.tables.records import (
    as_schema_codes,
    check_record_facts,
    code_range,
    counted,
    distinct_sorted,
    prepare_records,
    repeated_rows,
)
from privpub.tables.view import MemoryView

#: Largest expected number of noise tuples publish() accepts by default.
MAX_NOISE_ROWS = 2_000_000_000
#: Domains must be smaller than this: codes and m itself are u128 in the kernels.
MAX_DOMAIN = 2**128
#: γ values at which a guarantee without a stated (d, γ) lists the d it protects.
REGION_GAMMAS = (0.05, 0.1, 0.2, 0.5)


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
    >>> round(mech.alpha + mech.beta, 4), round(mech.beta, 6)
    (0.4991, 0.001852)
    """

    name = "alphabeta"
    #: Parameter names that files written by earlier versions store, and their names now.
    renamed_parameters: ClassVar[dict[str, str]] = {"epsilon": "failure_probability"}

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
        n = validate.optional(validate.count, "n", n, minimum=1)
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
    @renamed_keywords(epsilon="failure_probability")
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, failure_probability: float = 0.05,
                    source: SourceDistribution | Mapping[str, Any] | None = None,
                    calibration: str = "exclusive",
                    allow_prior_below_base_rate: bool = False) -> AlphaBeta:
        """α and β for (d, γ)-privacy, chosen for a named adversary.

        Give the adversary's prior bound either as ``k`` (d = k·n/m, k ≥ 1) or
        as ``d`` (≥ n/m). ``calibration`` (see
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
        n = validate.count("n (records in I)", n, minimum=1)
        gamma = validate.probability("gamma", gamma, open_low=True, open_high=True)
        failure_probability = validate.probability("failure_probability", failure_probability,
                                                   open_low=True, open_high=True)
        d = prior_bound(schema, n, k, d)
        if source is not None and not isinstance(source, SourceDistribution):
            source = SourceDistribution(schema, source)
        w_max = largest_weight(source)
        if d * w_max >= gamma:
            raise ParameterError(f"infeasible: d = {d * w_max:.6g} (most likely tuple) ≥ "
                                 f"γ = {gamma}; a posterior bound below the prior bound "
                                 "cannot be met")
        alpha, beta_top = calibrate(d * w_max, gamma, calibration)
        return cls(schema, alpha, beta_top / w_max, n=n, d=d, gamma=gamma,
                   failure_probability=failure_probability,
                   source=source, calibration=calibration,
                   allow_prior_below_base_rate=allow_prior_below_base_rate)

    # ---- guarantee ---------------------------------------------------------------------
    def guarantee(self) -> Guarantee:
        """Each privacy and utility statement with whether it holds for these
        parameters and, on a release, for the data published."""
        a, m = self.alpha, self.schema.size
        # With a source, every bound below is for the most likely tuple, where
        # both leakages are worst (posterior and d(t)/γ grow with w(t)).
        w, b = largest_weight(self.source), self.beta_max
        claims = []
        if self.source is not None:
            claims.append(Claim(
                "source distribution", True,
                f"β(t) = β·w(t) with w(t) in [{self.source.min_weight:.4g}, {w:.4g}]; the "
                f"adversary's prior bound is taken as d(t) = d·w(t), so the statements below "
                f"are for the most likely tuple, the worst case.",
                "Sec. 4.4.2, Algorithm 8"))
        if self.schema.derived:
            claims.append(Claim(
                "public domain", False,
                f"the domains of {', '.join(self.schema.derived)} were derived from the data "
                "(the values that occur), so publishing the domain reveals them; the claims "
                "below assume a public domain. Declare the domains (Schema, --schema) to "
                "avoid this.",
                "Sec. 2 (D is public)"))
        if self.d is not None and self.gamma is not None:
            claims.extend(self._privacy_claims(a, b, min(self.d * w, 0.999999), self.gamma))
        else:
            claims.append(self._privacy_region(a, b))
        if self.n is not None:
            claims.append(self._usefulness_claim())
        calibrated = "" if self.calibration is None else f", calibration {self.calibration!r}"
        return Guarantee(f"αβ (α = {a:.6g}, β = {b:.6g}, m = {m:,}{calibrated})",
                         tuple(claims))

    def _privacy_claims(self, a: float, b: float, d: float, g: float) -> list[Claim]:
        worst_post, worst_ratio = alphabeta_leakage(a, b, d)
        records = self.records or {}
        repeated = records.get("repeated_tuples", 0)
        who = "every tuple"
        if repeated:
            who = "every tuple with one record in I"
        elif records.get("duplicates") == "set":
            who = (f"every tuple (the {records['records_given']:,} records were published as "
                   f"{self.n:,} distinct tuples; estimates count distinct tuples)")
        k = None if self.n is None else self.d * self.schema.size / self.n
        bound_note = ("" if k is None or k >= 1
                      else f"\nd is below the base rate n/m (k = {k:.3g}): allowed "
                           "explicitly, it protects no adversary whose prior is at the base rate.")
        claims = [Claim(
            "(d, γ)-privacy", is_alphabeta_private(a, b, d, g),
            f"d = {d:.6g}, γ = {g}, for {who}: against every d-independent adversary, "
            f"Pr[t|V] ≤ {worst_post:.6g} (≤ γ: no positive leakage) and "
            f"Pr[t|V]/Pr[t] ≥ {worst_ratio:.6g} (≥ d/γ = {d / g:.6g}: no negative leakage). "
            f"Theorem 4.2's sufficient conditions are "
            f"{'met' if theorem_4_2_holds(a, b, d, g) else 'not met'}; the posteriors are "
            f"exact.{bound_note}",
            "Def. 2.3, Theorem 4.2 (App. C.1)")]
        if repeated:
            claims.append(Claim(
                "(d, γ)-privacy, tuples with several records", False,
                f"{repeated:,} tuples have several records in the data and were published with "
                f"duplicates='records' (first copy kept with α+β, each further copy with α): "
                f"they are NOT protected. Noise tuples are distinct, so a tuple that appears "
                f"twice in V is certainly in I; {records.get('revealed_in_view', 0):,} tuples "
                f"appear two or more times in this view. Publish with duplicates='set' for "
                f"the full guarantee.",
                "DESIGN.md (repeated records)"))
        excl = exclusive_worst_posterior(a, b, d)
        claims.append(Claim(
            "no positive leakage, d-exclusive adversaries", excl <= g * (1 + 1e-12),
            f"an adversary who knows a person has exactly one record among a set of tuples "
            f"(a link attack) reaches Pr[t|V] ≤ {excl:.6g} at prior d, against γ = {g} "
            f"(exact worst case: V holds t and no other tuple of the set). Negative leakage "
            f"is not excluded for such adversaries (Example 6.4).",
            "Def. 6.2, Theorem 6.3 generalised (App. D.2.1)"))
        return claims

    def _privacy_region(self, a: float, b: float) -> Claim:
        lines = []
        for g in REGION_GAMMAS:
            ind, exc = largest_private_d(a, b, g)
            ks = "" if self.n is None else (f" (k = {ind * self.schema.size / self.n:.4g}, "
                                            f"{exc * self.schema.size / self.n:.4g})")
            lines.append(f"γ = {g}: d ≤ {ind:.6g} against d-independent adversaries, "
                         f"d ≤ {exc:.6g} against d-exclusive ones{ks}")
        return Claim("(d, γ)-privacy region", True,
                     "no (d, γ) was requested; these (α, β) are (d, γ)-private (exact "
                     "posteriors) for\n" + "\n".join(lines), "Def. 2.3, Def. 6.2")

    def _usefulness_claim(self) -> Claim:
        r = theorem_4_3_r(self.alpha, self.beta_max, self.n, self.schema.size)
        bound = self.error_bound()
        printed = rho_theorem_4_3(r, self.failure_probability) * math.sqrt(self.n)
        unit = counted(self.records)
        return usefulness_claim(
            f"for each fixed counting query (not all at once), |Q̃(V) − Q(I)| < {bound:,.1f} "
            f"= ρ√n with ρ = {bound / math.sqrt(self.n):.6g}, n = {self.n:,} {unit}, with "
            f"probability ≥ 1 − ε = {1 - self.failure_probability:g} (failure probability ε): "
            "Bernstein's inequality on the exact "
            f"variance bound, the argument of Theorem 4.3 with its slips mended. Theorem 4.3 "
            f"as printed gives ρ√n = √(2(r+1) ln(2/ε))·√n = {printed:,.1f} (r = βm/(α²n) = "
            f"{r:.6g}).",
            "Theorem 4.3 (App. C.1), corrected", self.resolution())

    def resolution(self) -> Resolution | None:
        """Which counts the error bound tells from zero, when n is known
        (:class:`~privpub.core.guarantee.Resolution`: the usefulness rule)."""
        if self.n is None:
            return None
        return Resolution.of("αβ", self.error_bound(), self.failure_probability, self.n,
                             counted(self.records), self.schema)

    def posterior_curves(self) -> tuple[dict[str, Any], float | None, float | None]:
        """Each named adversary's posterior as a function of its prior, with d and γ
        (the release card's plot; :class:`~privpub.core.capabilities.PosteriorCurves`).
        As :meth:`guarantee`: with a source, the most likely tuple's β(t), the worst case."""
        a = self.alpha
        b = self.beta_max
        return ({"d-independent, t in V": lambda p: alphabeta_posterior(p, a, b, True),
                 "d-independent, t not in V": lambda p: alphabeta_posterior(p, a, b, False),
                 "d-exclusive (link attack), worst view": lambda p: exclusive_worst_posterior(
                     a, b, p)}, self.d, self.gamma)

    def error_bound(self) -> float | None:
        """The per-query (ρ, ε) bound ρ√n when n is known
        (:func:`~privpub.alphabeta.accounting.alphabeta_error_bound`)."""
        if self.n is None:
            return None
        return alphabeta_error_bound(self.alpha, self.beta_max, self.n, self.schema.size,
                                     self.failure_probability, source=self.source is not None)

    def parameters(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "beta": self.beta, "n": self.n, "d": self.d,
                "gamma": self.gamma, "failure_probability": self.failure_probability,
                "error_bound": self.error_bound(),
                "source": None if self.source is None else self.source.to_dict(),
                "calibration": self.calibration,
                "allow_prior_below_base_rate": self.allow_prior_below_base_rate,
                "records": self.records}

    # ---- estimation ------------------------------------------------------------------
    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """Algorithm 3: Q̃ = (n_V − β n_D)/α; with a source (Algorithm 8, DESIGN.md's
        correction) Q̃ = (n_V − Σ_{t ∈ Q(D)} β(t))/α. Returns (Q̃, plug-in variance).

        Variance: Q(V) sums independent indicators, so α²·Var Q̃ =
        q_r·α(1−α) − 2αβ·q_d + Σ_{t ∈ Q(D)} β(t)(1−β(t)), where q_r counts the
        query's records and q_d its distinct tuples in I (a tuple's first record
        has variance (α+β)(1−α−β) and replaces its noise indicator; each further
        record has α(1−α)). It depends on the unknown counts, so it is a
        *plug-in*: q_r is Q̃ clipped to the counts the release allows, [0, n_D]
        under set semantics (or data without repeats) and [0, min(n, n_D + E)]
        under ``duplicates="records"`` (E = n − distinct tuples: a query's
        records may outnumber its domain tuples); q_d is q_r under set
        semantics, and q_r times the published table's share of distinct tuples
        (at most n_D) under ``duplicates="records"`` (exact when the query's
        records repeat like the table's; the term is 2αβ·q_d, small against
        the others when β is). With a source, β(t) in the −2αβ term is its mean
        over Q(D). The plug-in is far off at small counts: the confidence
        interval (:meth:`interval_law`) is what holds for every count.
        """
        a, b = self.alpha, self.beta
        if self.source is None:
            w_sum = w2_sum = c.n_domain
        else:
            w_sum = c.domain_sum(self.source.weights)
            w2_sum = c.domain_sum([w * w for w in self.source.weights])
        noise, noise_sq = b * np.asarray(w_sum, dtype=float), b * b * np.asarray(w2_sum,
                                                                                 dtype=float)
        value = (c.n_view - noise) / a
        q_records = np.clip(value, 0.0, count_top(self.n, c.n_domain, self.extra_records))
        q_distinct = np.minimum(q_records * self.distinct_share, c.n_domain)
        b_mean = np.divide(noise, c.n_domain, out=np.full_like(noise, b),
                           where=np.asarray(c.n_domain) > 0)
        variance = (q_records * a * (1 - a) - 2 * a * b_mean * q_distinct
                    + (noise - noise_sq)) / (a * a)
        return value, variance

    def interval_law(self, c: Counts) -> CountLaw:
        """The law of Q(V) given the true count, with Q(V) observed: its
        ``interval(level)`` is the confidence interval of :class:`Estimate`
        (:mod:`privpub.tables.confidence` has the derivations and proofs).

        - Exact under set semantics or data without repeats: Q(V) ~ Bin(c, α+β)
          + Bin(n_D − c, β), stochastically increasing in the true count c, so
          inverting the test of each c gives an exact (Clopper–Pearson-type)
          interval over c in [0, min(n, n_D)].
        - Conservative under ``duplicates="records"`` with repeated tuples:
          Q(V) ~ Bin(q, α+β) + Bin(c − q, α) + Bin(n_D − q, β) with q the
          query's distinct tuples, unknown; q ≥ max(min(c, 1), c − E) (E = n −
          distinct tuples, known), and the tests take the largest tail over
          every such q (the least q, where they can reject).
        - Conservative with a source distribution: Hoeffding's (1956) binomial
          bound on the tails of the Poisson binomial Q(V), whose mean
          α·c + Σ_{t ∈ Q(D)} β(t) is known.
        """
        extra = self.extra_records
        top = count_top(self.n, c.n_domain, extra)
        if self.source is None:
            return KeepLaw(c.n_view, self.alpha + self.beta, self.beta, c.n_domain, top, extra)
        noise = self.beta * np.asarray(c.domain_sum(self.source.weights), dtype=float)
        return HoeffdingLaw(c.n_view, self.alpha, noise, np.asarray(c.n_domain, float) + extra,
                            top)

    @property
    def extra_records(self) -> int:
        """E, the published records beyond the first copy of their tuple (0
        unless duplicates='records')."""
        records = self.records or {}
        if records.get("duplicates") != "records" or self.n is None:
            return 0
        return self.n - records["distinct_tuples"]

    @property
    def distinct_share(self) -> float:
        """Distinct tuples per published record (1 unless duplicates='records')."""
        records = self.records or {}
        if records.get("duplicates") != "records" or self.n is None:
            return 1.0
        return records["distinct_tuples"] / self.n

    # ---- publishing --------------------------------------------------------------------
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
        self._check_noise(max_noise_rows)
        if is_dask(data):
            from privpub.alphabeta.distributed import publish_dask
            return publish_dask(self, data, resolve_seed(seed), duplicates, npartitions)
        records, facts = prepare_records(self.schema, data, self.n, duplicates)
        rand = resolve_seed(seed)
        run = _Draw(self, rand, records)
        (view,) = run.chunks()
        released = PublishedView(as_schema_codes(self.schema, view), self.schema, self.name,
                                 self._released(records, facts, run.revealed()), rand.policy)
        warn_if_weak(released.mechanism_object().resolution())
        return released

    def publish_to_parquet(self, data: TableLike | np.ndarray, path: str | os.PathLike,
                           seed: SeedLike = None, *, duplicates: str | None = None,
                           max_noise_rows: int = MAX_NOISE_ROWS,
                           progress: Callable[[int, int], None] | None = None,
                           overwrite: bool = False) -> PublishedView:
        """:meth:`publish` straight to a Parquet file, in bounded memory.

        The view is drawn and written ``WINDOW_SEGMENTS`` β-step segments at a
        time (about 4M noise tuples), so memory holds the records and one
        window, not the view: the same rows, byte for byte, as
        ``publish(data, seed).to_parquet(path)``. ``progress(done, total)`` is
        called after each window with segment counts. Returns the view opened
        from the file. (A dask DataFrame: ``publish(ddf).to_parquet(directory)``.)

        The file appears whole or not at all, as with :meth:`PublishedView.to_parquet`:
        an existing ``path`` is refused (before anything is drawn) unless
        ``overwrite=True``, and so is ``path`` being the ``data`` file.
        """
        self._check_noise(max_noise_rows)
        if is_dask(data):
            raise ParameterError("publish_to_parquet takes an in-memory table or a file; for a "
                                 "dask DataFrame use publish(ddf, seed=...).to_parquet(directory)")
        inputs = (data,) if isinstance(data, (str, os.PathLike)) else ()
        check_output(path, overwrite=overwrite, suffix=PARQUET, inputs=inputs)
        records, facts = prepare_records(self.schema, data, self.n, duplicates)
        rand = resolve_seed(seed)
        run = _Draw(self, rand, records, window=WINDOW_SEGMENTS, progress=progress)

        def batches() -> Iterator[dict[str, np.ndarray]]:
            for chunk in run.chunks():
                yield from MemoryView(self.schema, as_schema_codes(self.schema, chunk)).batches()

        def metadata(rows: int, prints: dict[str, list[int]]) -> dict[str, Any]:
            empty = as_schema_codes(self.schema, records[:0])
            return PublishedView(empty, self.schema, self.name,
                                 self._released(records, facts, run.revealed()),
                                 rand.policy).metadata(prints, rows=rows)

        write_view(path, self.schema, batches(), metadata, overwrite=overwrite, inputs=inputs)
        released = PublishedView.open(path)
        warn_if_weak(released.mechanism_object().resolution())
        return released

    def draw(self, rand: RandomSource, records: np.ndarray, start: int = 0,
             segments: tuple[int, int] | None = None) -> np.ndarray:
        """Algorithm 1's two steps over sorted (n, limbs) ``records``: the sorted view rows.

        The α-step keeps record i with stream element ``start`` + i of the
        "alpha-step" key; the β-step draws the "beta-step" key's ``segments``
        (a, b) (all by default), i.e. the codes in [a·L, b·L) for
        L = ``_core.beta_step_layout(m, β)[0]``, leaving out the records' own
        codes. A slice of the globally sorted records holding every record in
        [a·L, b·L), with ``start`` its first record's position, thus gives the
        slice of the whole view in that range: a Dask task's share, byte for
        byte (:mod:`privpub.alphabeta.distributed`).
        """
        (view,) = _Draw(self, rand, records, start=start, segments=segments).chunks()
        return view

    def _check_noise(self, max_noise_rows: int) -> None:
        max_noise_rows = validate.real("max_noise_rows", max_noise_rows)
        # With a source, candidates come at the largest rate β_max and are
        # thinned to β(t) (exact); the candidate count is what costs.
        expected_noise = self.beta_max * self.schema.size
        if expected_noise > max_noise_rows:
            raise ParameterError(f"max β(t)·m = {expected_noise:.4g} expected noise candidates "
                                 f"exceeds max_noise_rows = {max_noise_rows:,}")

    def _released(self, records: np.ndarray, facts: dict[str, Any],
                  revealed: int) -> dict[str, Any]:
        """The release's parameters: n (and the bound it gives) for the records published."""
        facts = facts | {"distinct_tuples": len(distinct_sorted(records)),
                         "revealed_in_view": revealed}
        return self.with_records(len(records), facts).parameters()

    def with_records(self, n: int, records: Mapping[str, Any]) -> AlphaBeta:
        """This mechanism as stated for the ``n`` records published (a release's)."""
        return AlphaBeta(self.schema, self.alpha, self.beta, n=n, d=self.d, gamma=self.gamma,
                         failure_probability=self.failure_probability, source=self.source,
                         calibration=self.calibration,
                         allow_prior_below_base_rate=self.allow_prior_below_base_rate,
                         records=records)


def prior_bound(schema: Schema, n: int, k: float | None, d: float | None) -> float:
    """The adversary's prior bound d from exactly one of ``k`` (d = k·n/m) or ``d``,
    checked to lie in (0, 1) (``for_privacy``'s and the multi-view publisher's)."""
    if (k is None) == (d is None):
        raise ParameterError("give exactly one of k (d = k·n/m) or d")
    m = schema.size
    if k is not None:
        k = validate.real("k", k)
        if k <= 0:
            raise ParameterError(f"k must be positive, got {k}")
        d = k * n / m
    else:
        d = validate.real("d", d)
    if not 0 < d < 1:
        raise ParameterError(f"d must be in (0, 1), got d = {d:.6g} (n = {n:,}, "
                             f"m = {m:,}; with k, d = k·n/m, so k must be below m/n = "
                             f"{m / n:.6g})")
    return d


#: β-step segments drawn and written together by publish_to_parquet: about
#: 2^6 · SEGMENT_TARGET (2^16) ≈ 4M noise tuples, 32 MiB of codes per window.
WINDOW_SEGMENTS = 64


class _Draw:
    """Algorithm 1 over sorted records, the β-step drawn window by window.

    The α-step mask is drawn for all the records at once (they are in memory),
    record i from stream element ``start`` + i; the β-step is drawn over the
    segments [a, b) (all by default), ``window`` segments at a time (all at
    once by default), each window merged with the kept records of its code
    range. A window's codes depend only on its segments (rust/src/sample.rs),
    so any window gives the same view.
    """

    def __init__(self, mech: AlphaBeta, rand: RandomSource, records: np.ndarray, *,
                 start: int = 0, segments: tuple[int, int] | None = None,
                 window: int | None = None,
                 progress: Callable[[int, int], None] | None = None):
        self.mech, self.rand, self.segments = mech, rand, segments
        self.window, self.progress = window, progress
        first = mech.alpha + mech.beta * (np.ones(1) if mech.source is None
                                          else mech.source.weight_of(records))
        keep = _core.keep_records(rand.derive("alpha-step").key, records, first, mech.alpha,
                                  start=start)
        self.kept = np.ascontiguousarray(records[keep])
        self.distinct = distinct_sorted(records)

    def revealed(self) -> int:
        """How many tuples appear two or more times in the view. The β-step
        leaves out the records' own codes and draws distinct codes, so only
        kept records repeat: counted on them, not on the (much larger) view."""
        return repeated_rows(self.kept)

    def chunks(self) -> Iterator[np.ndarray]:
        """The view's sorted (rows, limbs) codes, one array per window."""
        mech, m = self.mech, self.mech.schema.size
        seg_len, count = _core.beta_step_layout(m, mech.beta_max)
        begin, end = (0, count) if self.segments is None else self.segments
        window = max(end - begin, 1) if self.window is None else self.window
        key = self.rand.derive("beta-step").key
        thinning, candidates = self.rand.derive("thinning").key, 0
        for first in range(begin, max(end, begin + 1), window):
            stop = min(first + window, end)
            lo, hi = first * seg_len, m if stop == count else stop * seg_len
            kept = self.kept[code_range(self.kept, lo, hi)]
            excluded = self.distinct[code_range(self.distinct, lo, hi)]
            if mech.source is None:  # the kernel writes the kept records in as it draws
                rows = _core.beta_step(key, m, mech.beta_max, excluded, segments=(first, stop),
                                       kept=kept)
            else:  # candidates are thinned first: the records join after
                noise = _core.beta_step(key, m, mech.beta_max, excluded, segments=(first, stop))
                accept = _core.thin_product(thinning, noise, list(mech.schema.radices),
                                            mech.source.ratios(), start=candidates)
                candidates += len(noise)
                rows = _core.merge_sorted(kept, np.ascontiguousarray(noise[accept]))
            if self.progress is not None:
                self.progress(stop - begin, end - begin)
            yield rows
