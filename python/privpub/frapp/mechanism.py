"""FRAPP, the randomised-response baseline of the αβ paper (Sec. 4.3).

Agrawal & Haritsa's optimal FRAPP matrix keeps each record with probability
γ_frapp and otherwise replaces it by one of the other m − 1 tuples
uniformly: y = A x with A = γ_f on the diagonal and o = (1 − γ_f)/(m − 1)
elsewhere. The published view is the multiset of perturbed records.

Estimator: a record matching Q is published matching Q with probability
γ_f + o(n_D − 1), a record not matching with probability o·n_D, so
E[n_V] = Q(I)(γ_f − o) + n·o·n_D and Q̃ = (n_V − n·o·n_D)/(γ_f − o).

Privacy is per record (FRAPP's γ-amplification): see
:func:`privpub.frapp.accounting.frapp_gamma_for_privacy` for the derivation of
γ_frapp from the same (d, γ) as αβ. FRAPP publishes exactly one row per
record, so |V| = |I|; against the paper's tuple-independent adversaries who
may know every other tuple (prior 0 or 1) that alone reveals whether t ∈ I,
and :meth:`FRAPP.guarantee` says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from privpub import _core
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.guarantee import Claim, Guarantee
from privpub.core.release import register_mechanism
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.frapp.accounting import (
    frapp_amplification,
    frapp_gamma_for_privacy,
    frapp_off_diagonal,
    frapp_record_leakage,
    rho_frapp,
)
from privpub.tables.inputs import TableLike
from privpub.tables.published import Counts, PublishedView
from privpub.tables.records import as_schema_codes, records_as_codes, sorted_rows
from privpub.tables.schema import Schema

#: How a tuple prior bound d becomes a record prior bound (see FRAPP.for_privacy).
ADVERSARIES = ("targeted", "spread")


@register_mechanism
class FRAPP:
    """FRAPP over a schema: keep a record with probability ``gamma_frapp``.

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> f = privpub.FRAPP.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    >>> f"{f.gamma_frapp:.3e}"
    '6.631e-07'
    """

    name = "frapp"

    def __init__(self, schema: Schema, gamma_frapp: float, *, n: int | None = None,
                 d: float | None = None, gamma: float | None = None, epsilon: float = 0.05,
                 adversary: str = "targeted"):
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        if not 2 <= schema.size < 2**128:
            raise ParameterError(f"FRAPP needs 2 ≤ m < 2^128, got m = {schema.size:,}")
        gamma_frapp = validate.probability("gamma_frapp", gamma_frapp, open_low=True,
                                           open_high=True)
        epsilon = validate.probability("epsilon", epsilon, open_low=True, open_high=True)
        n = validate.optional(validate.count, "n", n, minimum=1)
        d = validate.optional(validate.probability, "d", d, open_low=True, open_high=True)
        gamma = validate.optional(validate.probability, "gamma", gamma, open_low=True,
                                  open_high=True)
        if gamma_frapp <= frapp_off_diagonal(gamma_frapp, schema.size):
            raise ParameterError(f"gamma_frapp = {gamma_frapp:.6g} must exceed the off-diagonal "
                                 f"(1 − γ_frapp)/(m − 1), or the estimator is undefined")
        if not 0 < epsilon < 1:
            raise ParameterError(f"epsilon must be in (0, 1), got {epsilon}")
        if adversary not in ADVERSARIES:
            raise ParameterError(f"adversary must be one of {sorted(ADVERSARIES)}, "
                                 f"got {adversary!r}")
        self.schema, self.gamma_frapp = schema, float(gamma_frapp)
        self.n, self.d, self.gamma, self.epsilon = n, d, gamma, float(epsilon)
        self.adversary = adversary

    @classmethod
    def from_parameters(cls, schema: Schema, parameters: Mapping[str, Any]) -> FRAPP:
        """The mechanism of a release's parameters, checked as by the constructor."""
        p = parameters
        mech = cls(schema, validate.field(p, "gamma_frapp"), n=validate.field(p, "n"),
                   d=validate.field(p, "d"), gamma=validate.field(p, "gamma"),
                   epsilon=validate.field(p, "epsilon"),
                   adversary=validate.field(p, "adversary"))
        validate.same("error_bound", validate.field(p, "error_bound"), mech.error_bound())
        return mech

    @property
    def record_prior(self) -> float | None:
        """The bound on a record's prior Pr[record = t] that the privacy claim uses."""
        if self.d is None:
            return None
        if self.adversary == "targeted":
            return self.d
        return None if self.n is None else self.d / self.n

    @classmethod
    def for_privacy(cls, schema: Schema, n: int, gamma: float, k: float | None = None,
                    d: float | None = None, epsilon: float = 0.05,
                    adversary: str = "targeted") -> FRAPP:
        """γ_frapp meeting the same (d, γ) as αβ, per record (derivation in
        :func:`privpub.frapp.accounting.frapp_gamma_for_privacy`: R = γ/d_record).

        FRAPP randomises records, so the tuple prior Pr[t ∈ I] ≤ d must become a
        bound on a record's prior Pr[record = t]; ``adversary`` says how:

        - ``"targeted"`` (default): d_record = d. The adversary knows which
          record is the target's (Joe is in the data; is his record t?) and puts
          all of t's prior on it — the worst case.
        - ``"spread"``: d_record = d/n. Pr[t ∈ I] ≈ Σ_records Pr[record = t] ≤ d
          spread evenly: the adversary does not know which record is the
          target's. A weaker adversary; n times larger R.
        """
        if (k is None) == (d is None):
            raise ParameterError("give exactly one of k (d = k·n/m) or d")
        n = validate.count("n (records in I)", n, minimum=1)
        k = validate.optional(validate.real, "k", k)
        d = validate.optional(validate.real, "d", d)
        if adversary not in ADVERSARIES:
            raise ParameterError(f"adversary must be one of {sorted(ADVERSARIES)}, "
                                 f"got {adversary!r}")
        d = k * n / schema.size if k is not None else d
        d_record = d if adversary == "targeted" else d / n
        return cls(schema, frapp_gamma_for_privacy(d_record, gamma, schema.size), n=int(n),
                   d=d, gamma=gamma, epsilon=epsilon, adversary=adversary)

    @property
    def off_diagonal(self) -> float:
        return frapp_off_diagonal(self.gamma_frapp, self.schema.size)

    def error_bound(self, n: int | None = None) -> float | None:
        """Hoeffding bound on |Q̃ − Q(I)| at confidence 1 − ε: n_V is a sum of n
        independent indicators, so |n_V − E n_V| < √(n ln(2/ε)/2) w.p. ≥ 1 − ε,
        divided by γ_f − o."""
        n = self.n if n is None else n
        if n is None:
            return None
        spread = math.sqrt(n * math.log(2 / self.epsilon) / 2)
        return spread / (self.gamma_frapp - self.off_diagonal)

    def parameters(self) -> dict[str, Any]:
        return {"gamma_frapp": self.gamma_frapp, "n": self.n, "d": self.d, "gamma": self.gamma,
                "epsilon": self.epsilon, "adversary": self.adversary,
                "error_bound": self.error_bound()}

    def guarantee(self) -> Guarantee:
        m, claims = self.schema.size, []
        r = frapp_amplification(self.gamma_frapp, m)
        if self.record_prior is not None and self.gamma is not None:
            d, g = self.record_prior, self.gamma
            post, ratio = frapp_record_leakage(self.gamma_frapp, m, d)
            private = post <= g * (1 + 1e-12) and ratio >= d / g * (1 - 1e-12)
            claims.append(Claim(
                "(d, γ)-privacy per record", private,
                f"{self.adversary} adversary: a record believed to be t with probability ≤ "
                f"{d:.6g} (d = {self.d:.6g}{'' if self.adversary == 'targeted' else ' / n'}), "
                f"γ = {g}: amplification R = γ_f(m−1)/(1−γ_f) = {r:.6g}; posterior ≤ "
                f"{post:.6g} and posterior/prior ≥ {ratio:.6g} (≥ {d / g:.6g} needed).",
                "FRAPP γ-amplification; αβ paper Sec. 4.3"))
            claims.append(Claim(
                "(d, γ)-privacy against d-independent adversaries (set model)", False,
                "FRAPP publishes one row per record, so |V| = |I|: an adversary who knows every "
                "other tuple's presence (prior 0 or 1) learns whether t ∈ I from the count "
                "alone (privpub.frapp.accounting.frapp_posterior computes the exact posterior).",
                "Def. 2.3"))
        if self.n is not None:
            text = (f"|Q̃(V) − Q(I)| < {self.error_bound():,.4g} with probability ≥ "
                    f"{1 - self.epsilon:g} (Hoeffding over the n = {self.n} records, divided by "
                    f"γ_f − o = {self.gamma_frapp - self.off_diagonal:.6g}).")
            if self.d is not None and self.gamma is not None:
                k = self.d * m / self.n
                text += (f"\nSec. 5's bound ρ = 2k(1−γ)/γ·√ln(2/ε) = "
                         f"{rho_frapp(k, self.gamma, self.epsilon):.6g} (ρ√n = "
                         f"{rho_frapp(k, self.gamma, self.epsilon) * math.sqrt(self.n):,.1f}) "
                         "assumes a different parametrisation; shown for comparison only.")
            claims.append(Claim("(ρ, ε)-usefulness", True, text, "Hoeffding; αβ paper Sec. 5"))
        return Guarantee(f"FRAPP (γ_frapp = {self.gamma_frapp:.6g}, m = {m:,})", tuple(claims))

    def estimate(self, c: Counts) -> tuple[Any, Any]:
        """Q̃ = (n_V − n·o·n_D)/(γ_f − o); variance from the two per-record probabilities."""
        g, n, o = self.gamma_frapp, self.n, self.off_diagonal
        if n is None:
            raise ParameterError("FRAPP estimates need n, the number of records published")
        value = (c.n_view - n * o * c.n_domain) / (g - o)
        q = np.clip(value, 0.0, float(n))
        p_in, p_out = g + o * (c.n_domain - 1), o * c.n_domain
        variance = (q * p_in * (1 - p_in) + (n - q) * p_out * (1 - p_out)) / (g - o) ** 2
        return value, variance

    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None) -> PublishedView:
        """Perturb every record; the view holds the n perturbed records, sorted."""
        codes = sorted_rows(records_as_codes(self.schema, data))
        source = resolve_seed(seed)
        out = _core.frapp_perturb(source.derive("frapp").key, codes, self.schema.size,
                                  self.gamma_frapp)
        view = sorted_rows(as_schema_codes(self.schema, out))
        params = self.parameters() | {"n": len(codes), "error_bound": self.error_bound(len(codes))}
        return PublishedView(as_schema_codes(self.schema, view), self.schema, self.name,
                             params, source.policy)
