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
records, 19,502 distinct). The paper treats I as a set. privpub keeps the
*first* copy of a tuple with probability α+β and each further copy with
probability α, so a tuple with c records contributes cα + β copies to V in
expectation and the estimator stays unbiased for record counts. The cost: a
tuple that appears more than once in V must come from I (noise tuples are
distinct), so the guarantee is stated for tuples with one record; the
metadata reports how many extra copies I holds.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from privpub import _core
from privpub.alphabeta.accounting import (
    alphabeta_leakage,
    exclusive_worst_posterior,
    is_alphabeta_private,
    rho_alphabeta_sec42,
    rho_theorem_4_3,
    theorem_4_2_holds,
    theorem_4_3_r,
)
from privpub.alphabeta.source import SourceDistribution
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.tables.inputs import TableLike
from privpub.tables.published import Counts, PublishedView
from privpub.tables.records import as_schema_codes, distinct_sorted, records_as_codes, sorted_rows
from privpub.tables.schema import Schema

#: Largest expected number of noise tuples publish() accepts by default.
MAX_NOISE_ROWS = 2_000_000_000
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
    n, d, gamma, epsilon : optional
        The privacy request the parameters were chosen for (set by
        :meth:`for_privacy`); used by :meth:`guarantee`.

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> round(mech.beta, 6), round(mech.alpha, 6)
    (0.002327, 0.497673)
    """

    name = "alphabeta"

    def __init__(self, schema: Schema, alpha: float, beta: float, *, n: int | None = None,
                 d: float | None = None, gamma: float | None = None, epsilon: float = 0.05,
                 source: SourceDistribution | Mapping[str, Any] | None = None):
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        if schema.size >= MAX_DOMAIN:
            raise ParameterError(f"αβ publishing supports domains with m < 2^128; this schema "
                                 f"has m = {schema.size:,} (≈ 2^{math.log2(schema.size):.1f})")
        alpha = validate.probability("alpha", alpha)
        beta = validate.probability("beta", beta)
        epsilon = validate.probability("epsilon", epsilon)
        n = validate.optional(validate.count, "n", n, minimum=1)
        d = validate.optional(validate.probability, "d", d, open_low=True, open_high=True)
        gamma = validate.optional(validate.probability, "gamma", gamma, open_low=True,
                                  open_high=True)
        if alpha <= 0 or alpha * alpha < 1 / sys.float_info.max:
            raise ParameterError(f"alpha must be positive (the estimator divides by it) and "
                                 f"1/alpha² finite, got {alpha}")
        if alpha + beta > 1:
            raise ParameterError(f"alpha + beta must be at most 1, got {alpha} + {beta}")
        if not 0 < epsilon < 1:
            raise ParameterError(f"epsilon must be in (0, 1), got {epsilon}")
        self.schema, self.alpha, self.beta = schema, float(alpha), float(beta)
        self.n, self.d, self.gamma, self.epsilon = n, d, gamma, float(epsilon)
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
        p = parameters
        mech = cls.from_fields(schema, p)
        validate.same("error_bound", validate.field(p, "error_bound"), mech.error_bound())
        if "repeated_records" in p:
            repeated = validate.count("repeated_records", p["repeated_records"])
            if mech.n is None or repeated >= mech.n:
                raise ParameterError(f"repeated_records = {repeated} must be below n = {mech.n}")
        return mech

    @classmethod
    def from_fields(cls, schema: Schema, p: Mapping[str, Any]) -> AlphaBeta:
        """The constructor called with the stored fields α, β, n, d, γ, ε, source
        (each present, each checked by the constructor)."""
        source = validate.field(p, "source")
        if source is not None and not isinstance(source, Mapping):
            raise ParameterError(f"source must be a mapping attribute → probabilities, "
                                 f"got {source!r}")
        return cls(schema, validate.field(p, "alpha"), validate.field(p, "beta"),
                   n=validate.field(p, "n"), d=validate.field(p, "d"),
                   gamma=validate.field(p, "gamma"), epsilon=validate.field(p, "epsilon"),
                   source=source)

    @property
    def beta_max(self) -> float:
        """The largest insertion probability β(t) (β without a source)."""
        return self.beta * (1.0 if self.source is None else self.source.max_weight)

    @classmethod
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, epsilon: float = 0.05,
                    source: SourceDistribution | Mapping[str, Any] | None = None) -> AlphaBeta:
        """Parameters of Sec. 4.2 for (d, γ)-privacy: α + β = 1/2, β = d/γ.

        Give the adversary's prior bound either as ``k`` (d = k·n/m) or as
        ``d``. Refuses requests that cannot be met: d ≥ γ, β = d/γ ≥ 1/2 (no
        α > 0 left), or Theorem 4.2's conditions failing.

        With a ``source`` (Sec. 4.4.2) the prior bound is taken proportional to
        it, d(t) = d·w(t), and β(t) = β·w(t); α = 1/2 − max_t β(t).
        """
        n = validate.count("n (records in I)", n, minimum=1)
        if (k is None) == (d is None):
            raise ParameterError("give exactly one of k (d = k·n/m) or d")
        gamma = validate.probability("gamma", gamma, open_low=True, open_high=True)
        epsilon = validate.probability("epsilon", epsilon, open_low=True, open_high=True)
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
        if d >= gamma:
            raise ParameterError(f"infeasible: d = {d:.6g} ≥ γ = {gamma}; a posterior bound "
                                 "below the prior bound cannot be met")
        beta = d / gamma
        if source is not None and not isinstance(source, SourceDistribution):
            source = SourceDistribution(schema, source)
        w_max = 1.0 if source is None else source.max_weight
        if beta * w_max >= 0.5:
            raise ParameterError(f"infeasible: max β(t) = {beta * w_max:.6g} ≥ 1/2 leaves no "
                                 "α > 0 with α + β(t) ≤ 1/2; raise γ or lower k (or d)")
        alpha = 0.5 - beta * w_max
        if not theorem_4_2_holds(alpha, beta * w_max, min(d * w_max, 0.999999), gamma):
            raise ParameterError(f"infeasible: Theorem 4.2's conditions fail for d = {d:.6g}, "
                                 f"γ = {gamma}")
        return cls(schema, alpha, beta, n=int(n), d=d, gamma=gamma, epsilon=epsilon,
                   source=source)

    # ---- guarantee ---------------------------------------------------------------------
    def guarantee(self) -> Guarantee:
        """The privacy and utility statements that hold for these parameters."""
        a, m = self.alpha, self.schema.size
        # With a source, every bound below is for the most likely tuple, where
        # both leakages are worst (posterior and d(t)/γ grow with w(t)).
        w = 1.0 if self.source is None else self.source.max_weight
        b = self.beta * w
        claims = []
        if self.source is not None:
            claims.append(Claim(
                "source distribution", True,
                f"β(t) = β·w(t) with w(t) in [{self.source.min_weight:.4g}, {w:.4g}]; the "
                f"adversary's prior bound is taken as d(t) = d·w(t), so the statements below "
                f"are for the most likely tuple (d(t) = {(self.d or 0) * w:.6g}), the worst case.",
                "Sec. 4.4.2, Algorithm 8"))
        if self.d is not None and self.gamma is not None:
            d, g = min(self.d * w, 0.999999), self.gamma
            worst_post, worst_ratio = alphabeta_leakage(a, b, d)
            claims.append(Claim(
                "(d, γ)-privacy", is_alphabeta_private(a, b, d, g),
                f"d = {d:.6g}, γ = {g}: against every d-independent adversary, "
                f"Pr[t|V] ≤ {worst_post:.6g} (≤ γ: no positive leakage) and "
                f"Pr[t|V]/Pr[t] ≥ {worst_ratio:.6g} (≥ d/γ = {d / g:.6g}: no negative leakage).\n"
                f"Theorem 4.2's sufficient conditions: "
                f"{'met' if theorem_4_2_holds(a, b, d, g) else 'not met'}. Stated for tuples "
                "with one record in I; a tuple repeated in V reveals it is in I.",
                "Def. 2.3, Theorem 4.2 (App. C.1)"))
            excl = exclusive_worst_posterior(a, b, d)
            thm_6_3 = math.isclose(a + b, 0.5) and b >= 2 * d / g * (1 - g) / (1 - d)
            claims.append(Claim(
                "no positive leakage, d-exclusive adversaries",
                math.isclose(a + b, 0.5) and excl <= g,
                f"worst-case posterior {excl:.6g} (view holds t and no other tuple of its "
                f"exclusion set), against γ = {g}; Theorem 6.3's stated sufficient condition "
                f"β ≥ 2(d/γ)(1−γ)/(1−d) is {'met' if thm_6_3 else 'not met'}, the bound comes "
                "from its proof (needs α + β = 1/2). Negative leakage is not excluded "
                "(Example 6.4).",
                "Theorem 6.3 (App. D.2.1)"))
        if self.n is not None:
            r = theorem_4_3_r(a, self.beta_max, self.n, m)
            bound = self.error_bound()
            rho = bound / math.sqrt(self.n)
            text = (f"r = βm/(α²n) = {r:.6g}: for every counting query, |Q̃(V) − Q(I)| < "
                    f"ρ√n = {rho:.6g}·√{self.n} = {bound:,.1f} with probability ≥ "
                    f"{1 - self.epsilon:g} (ρ = √(2(r+1) ln(2/ε)), ε = {self.epsilon}).")
            if self.d is not None and self.gamma is not None:
                k = self.d * m / self.n
                closed = rho_alphabeta_sec42(k, self.gamma, self.epsilon)
                text += (f"\nSec. 4.2 closed form for α+β = 1/2, β = d/γ: "
                         f"ρ = 2√(k(1−γ)/γ·ln(2/ε)) = {closed:.6g} with k = {k:.6g}.")
            claims.append(Claim("(ρ, ε)-usefulness", True, text,
                                "Theorem 4.3 (App. C.1), Sec. 4.2"))
        return Guarantee(f"αβ (α = {a:.6g}, β = {b:.6g}, m = {m:,})", tuple(claims))

    def error_bound(self) -> float | None:
        """ρ√n of Theorem 4.3, when n is known (with a source, for β = max β(t),
        which bounds Σ_{Q(D)} β(t) ≤ max β(t)·n_D in the theorem's proof)."""
        if self.n is None:
            return None
        r = theorem_4_3_r(self.alpha, self.beta_max, self.n, self.schema.size)
        return rho_theorem_4_3(r, self.epsilon) * math.sqrt(self.n)

    def parameters(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "beta": self.beta, "n": self.n, "d": self.d,
                "gamma": self.gamma, "epsilon": self.epsilon, "error_bound": self.error_bound(),
                "source": None if self.source is None else self.source.to_dict()}

    # ---- estimation ------------------------------------------------------------------
    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """Algorithm 3: Q̃ = (n_V − β n_D)/α; with a source (Algorithm 8, DESIGN.md's
        correction) Q̃ = (n_V − Σ_{t ∈ Q(D)} β(t))/α. Variance: Σ_t p_t(1 − p_t)/α²
        with p_t = α + β(t) for the Q̃ matching records (β(t) at its mean over
        Q(D)) and β(t) for the other tuples of Q(D)."""
        a, b = self.alpha, self.beta
        if self.source is None:
            w_sum = w2_sum = c.n_domain
        else:
            w_sum = c.domain_sum(self.source.weights)
            w2_sum = c.domain_sum([w * w for w in self.source.weights])
        noise, noise_sq = b * np.asarray(w_sum, dtype=float), b * b * np.asarray(w2_sum,
                                                                                 dtype=float)
        value = (c.n_view - noise) / a
        q = np.clip(value, 0.0, c.n_domain)
        b_mean = np.divide(noise, c.n_domain, out=np.full_like(noise, b),
                           where=np.asarray(c.n_domain) > 0)
        variance = (q * (a + b_mean) * (1 - a - b_mean) + (noise - noise_sq)
                    - q * b_mean * (1 - b_mean)) / (a * a)
        return value, variance

    # ---- publishing --------------------------------------------------------------------
    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None,
                max_noise_rows: int = MAX_NOISE_ROWS) -> PublishedView:
        """Run Algorithm 1 on ``data`` and return the published view.

        ``data`` is a table with exactly the schema's columns (pandas, Arrow,
        polars or a Parquet/CSV path), or an array of codes. ``seed`` is None
        for a real release (OS CSPRNG), or an int / numpy Generator for a
        reproducible run. Refuses when the expected
        number of noise tuples β·m exceeds ``max_noise_rows``.
        """
        max_noise_rows = validate.real("max_noise_rows", max_noise_rows)
        codes = records_as_codes(self.schema, data)
        # With a source, candidates come at the largest rate β_max and are
        # thinned to β(t) (exact); the candidate count is what costs.
        expected_noise = self.beta_max * self.schema.size
        if expected_noise > max_noise_rows:
            raise ParameterError(f"max β(t)·m = {expected_noise:.4g} expected noise candidates "
                                 f"exceeds max_noise_rows = {max_noise_rows:,}")
        rand = resolve_seed(seed)
        records = sorted_rows(codes)
        first = self.alpha + self.beta * (np.ones(1) if self.source is None
                                          else self.source.weight_of(records))
        keep = _core.keep_records(rand.derive("alpha-step").key, records, first, self.alpha)
        distinct = distinct_sorted(records)
        noise = _core.beta_step(rand.derive("beta-step").key, self.schema.size, self.beta_max,
                                distinct)
        if self.source is not None:
            accept = _core.thin_product(rand.derive("thinning").key, noise,
                                        list(self.schema.radices), self.source.ratios())
            noise = np.ascontiguousarray(noise[accept])
        view = _core.merge_sorted(np.ascontiguousarray(records[keep]), noise)
        # The release states n (and the bound it gives) for the records published.
        released = AlphaBeta(self.schema, self.alpha, self.beta, n=len(records), d=self.d,
                             gamma=self.gamma, epsilon=self.epsilon, source=self.source)
        parameters = released.parameters() | {"repeated_records": len(records) - len(distinct)}
        return PublishedView(as_schema_codes(self.schema, view), self.schema, self.name,
                             parameters, rand.policy)
