"""The perturbations a statistical database answers through (Dinur–Nissim 2003).

A perturbation turns the exact subset sums a_q = Σ_{i∈q} d_i of a batch of
queries into answers. Each one states the magnitude E it is *within*
(Definition 2: |A(q) − a_q| ≤ E for every q), or ``None`` when no finite E
holds for every query.

Randomness: every query owns :data:`UNIFORMS_PER_QUERY` consecutive elements
of the database's seekable uniform stream (query j the elements
[2j, 2j + 2)), so an answer does not depend on how queries are batched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.renamed import renamed_keywords
from privpub.core.seeding import RandomSource

#: Uniforms each query may use (discrete Laplace needs two).
UNIFORMS_PER_QUERY = 2


class Perturbation:
    """Base class: exact answers; subclasses perturb them."""

    name = "exact"

    def bound(self, n: int) -> float | None:
        """The E this perturbation is within for a database of n bits (None: no such E)."""
        return 0.0

    def private_copy(self, bits: np.ndarray, source: RandomSource) -> np.ndarray:
        """The bits the answers are computed from (the database's own, except in the CD model)."""
        return bits

    def perturb(self, exact: np.ndarray, sizes: np.ndarray, n: int,
                uniforms: np.ndarray) -> np.ndarray:
        """Answers for exact sums ``exact`` of queries of sizes ``sizes``.

        ``uniforms`` is (len(exact), UNIFORMS_PER_QUERY) from the database's stream.
        """
        return exact.astype(np.float64)

    def parameters(self) -> dict[str, float]:
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({args})"


class Exact(Perturbation):
    """No perturbation: A(q) = a_q (within E = 0)."""


@dataclass(frozen=True, repr=False)
class BoundedNoise(Perturbation):
    """Additive noise within E (Definition 2).

    ``adversarial=False``: uniform on [−E, E], independently per query.
    ``adversarial=True``: every answer is moved towards |q|/2 (what a
    subset sum of random bits is expected to be) by as much of the band as
    it can: |q|/2 itself when |a_q − |q|/2| ≤ E, else a_q ∓ E. This is the
    least informative answer within E. (Noise of magnitude exactly E with a
    sign set by a_q was tried first and rejected: knowing E, an LP reads a_q
    back from it, recovering the database at any E.)
    """

    E: float
    adversarial: bool = False

    def __post_init__(self) -> None:
        E = validate.real("E", self.E)
        if E < 0:
            raise ParameterError(f"E must be non-negative, got {E}")
        if not isinstance(self.adversarial, bool):
            raise ParameterError(f"adversarial must be a bool, got {self.adversarial!r}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return "bounded-adversarial" if self.adversarial else "bounded"

    def bound(self, n: int) -> float:
        return float(self.E)

    def perturb(self, exact, sizes, n, uniforms):
        if not self.adversarial:
            return exact + self.E * (2.0 * uniforms[:, 0] - 1.0)
        return exact + np.clip(sizes / 2.0 - exact, -self.E, self.E)

    def parameters(self):
        return {"E": float(self.E), "adversarial": self.adversarial}


@dataclass(frozen=True, repr=False)
class Rounding(Perturbation):
    """Sec. 3.3's algorithm: answer |q|/2 when |a_q − |q|/2| < E, else a_q.

    Within E by construction. At the paper's E = √n (ln n)^{1+ε} (see
    :meth:`paper`) a polynomial adversary almost never sees a true answer.
    """

    E: float
    name = "rounding"

    def __post_init__(self) -> None:
        if validate.real("E", self.E) < 0:
            raise ParameterError(f"E must be non-negative, got {self.E}")

    @classmethod
    @renamed_keywords(epsilon="log_excess")
    def paper(cls, n: int, log_excess: float = 0.1) -> Rounding:
        """Sec. 3.3's magnitude E = √n · (ln n)^{1+ε} for an n-bit database;
        ``log_excess`` is the paper's ε > 0 there, how far the log's power exceeds
        1 (not a privacy loss, which is what ``epsilon`` means in privpub)."""
        n = validate.integer("n", n, minimum=2)
        if validate.real("log_excess", log_excess) <= 0:
            raise ParameterError(f"log_excess must be positive, got {log_excess}")
        return cls(math.sqrt(n) * math.log(n) ** (1 + log_excess))

    def bound(self, n):
        return float(self.E)

    def perturb(self, exact, sizes, n, uniforms):
        half = sizes / 2.0
        return np.where(np.abs(exact - half) < self.E, half, exact.astype(np.float64))

    def parameters(self):
        return {"E": float(self.E)}


@dataclass(frozen=True, repr=False)
class CDModel(Perturbation):
    """Sec. 3.4's CD model: a private copy d' with d'_i = d_i w.p. 1/2 + δ (else 1 − d_i),
    drawn once; every query is answered exactly from d'. ``advantage`` is that δ.

    Within no fixed E for all queries (a query over the flipped bits is off
    by their number); with high probability within Õ(√n) on random queries.
    """

    advantage: float
    name = "cd-model"

    def __post_init__(self) -> None:
        validate.probability("advantage", self.advantage)
        if self.advantage > 0.5:
            raise ParameterError(f"advantage (the paper's δ) must be in [0, 1/2], got "
                                 f"{self.advantage}")

    def bound(self, n):
        return None

    def private_copy(self, bits, source):
        flip = source.derive("cd-model flips").uniform(len(bits)) >= 0.5 + self.advantage
        return bits ^ flip

    def parameters(self):
        return {"advantage": float(self.advantage)}


@dataclass(frozen=True, repr=False)
class BinomialNoise(Perturbation):
    """Theorem 5's algorithm against T-time adversaries.

    R = T · (ln n)^μ coins (the paper: "taking μ = 9 will work"); a query
    with |q| < √R · (ln n)² is *small* and answered 0; any other query gets
    a_q + Σ_{i≤R} e_i − R/2 with e_i fair coins, noise of mean 0 and
    variance R/4 (docs/design.md, "Theorem 5's perturbation"; the paper's
    "variance √R" is a slip). The
    binomial is sampled exactly by inverting its CDF at the query's uniform.

    At μ = 9 the small-query threshold exceeds n for every n a computer can
    hold, so every query is answered 0; :attr:`small_size` says where it lies.
    """

    T: float
    mu: float = 9.0
    name = "binomial"

    def __post_init__(self) -> None:
        if validate.real("T", self.T) < 1:
            raise ParameterError(f"T must be at least 1, got {self.T}")
        if validate.real("mu", self.mu) < 0:
            raise ParameterError(f"mu must be non-negative, got {self.mu}")

    def coins(self, n: int) -> int:
        """R = ⌈T · (ln n)^μ⌉ for an n-bit database (refused where it is 0: n = 1, μ > 0)."""
        n = validate.integer("n", n, minimum=1)
        R = math.ceil(self.T * math.log(n) ** self.mu)
        if R < 1:
            raise ParameterError(f"BinomialNoise(T={self.T}, mu={self.mu}) has R = "
                                 f"⌈T (ln n)^μ⌉ = 0 coins at n = {n}: it would answer without "
                                 f"noise")
        return R

    def small_size(self, n: int) -> float:
        """Queries smaller than √R · (ln n)² are answered 0."""
        return math.sqrt(self.coins(n)) * math.log(n) ** 2

    def bound(self, n):
        return None

    def noise(self, n: int, u: np.ndarray) -> np.ndarray:
        """Σ e_i − R/2 at uniforms ``u`` (inverse binomial CDF)."""
        from scipy import stats  # imported on use: scipy costs ~0.4 s at import

        R = self.coins(n)
        return stats.binom.ppf(u, R, 0.5) - R / 2.0

    def perturb(self, exact, sizes, n, uniforms):
        answers = exact + self.noise(n, uniforms[:, 0])
        return np.where(sizes < self.small_size(n), 0.0, answers)

    def parameters(self):
        return {"T": float(self.T), "mu": float(self.mu)}


@dataclass(frozen=True, repr=False)
class CoinNoise(Perturbation):
    """Theorem 5's noise Σ_{i≤R} e_i − R/2 (fair coins e_i; mean 0, variance R/4) on
    every query, with R given directly and no small-query rule.

    :class:`BinomialNoise` answers every query smaller than √R (ln n)² with 0,
    which at small n is every query; this is its perturbation alone, the
    integer (for even R) Gaussian-like law a self-auditor can sum over.
    Sampled exactly by inverting the binomial CDF at the query's uniform.
    Within no fixed E below R/2.

    Examples
    --------
    >>> from privpub.attacks import CoinNoise, SubsetSumDatabase
    >>> a = SubsetSumDatabase([1, 0, 1, 1], CoinNoise(16), seed=1).query([1, 1, 1, 1])
    >>> bool(abs(a[0] - 3) <= 8)
    True
    """

    R: int
    name = "coins"

    def __post_init__(self) -> None:
        validate.integer("R", self.R, minimum=1)

    def bound(self, n):
        return self.R / 2.0

    def perturb(self, exact, sizes, n, uniforms):
        from scipy import stats  # imported on use: scipy costs ~0.4 s at import

        return exact + stats.binom.ppf(uniforms[:, 0], self.R, 0.5) - self.R / 2.0

    def parameters(self):
        return {"R": int(self.R)}


@dataclass(frozen=True, repr=False)
class LaplaceNoise(Perturbation):
    """Additive discrete Laplace noise: P(e = k) ∝ exp(−|k| / scale), k ∈ ℤ.

    Sampled as the difference of two geometric variables, each by inverting
    its CDF (G = ⌊−scale · ln(1 − u)⌋) at a 53-bit uniform. The noise is an
    integer, so the answer carries no low-order floating-point bits that
    depend on the true sum (the leak of Laplace on doubles, Mironov 2012);
    the inversion's rounding moves each probability by a relative ~1e-16.
    Within no finite E.
    """

    scale: float
    name = "laplace"

    def __post_init__(self) -> None:
        if validate.real("scale", self.scale) <= 0:
            raise ParameterError(f"scale must be positive, got {self.scale}")

    def bound(self, n):
        return None

    def noise(self, u: np.ndarray) -> np.ndarray:
        """Discrete Laplace at uniforms ``u`` of shape (k, 2)."""
        g = np.floor(-self.scale * np.log1p(-u))
        return g[:, 0] - g[:, 1]

    def perturb(self, exact, sizes, n, uniforms):
        return exact + self.noise(uniforms)

    def parameters(self):
        return {"scale": float(self.scale)}
