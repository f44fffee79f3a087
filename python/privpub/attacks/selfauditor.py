"""Appendix B's remedy (Dinur–Nissim 2003, "Self auditing"): :class:`SelfAuditor`
decides whether to answer from what the attacker already knows (the prior,
the perturbation's noise law, the answered queries and their answers, the
new query) and never from the new query's true answer, so anyone can
compute the decision and a refusal tells nothing. It refuses a query when
the probability, under the attacker's posterior predictive, that the answer
pushes some entry's log-odds past δ′ = ln((1/2 + δ)/(1/2 − δ)) would
overdraw a risk budget. The answer-dependent auditor it replaces is
:class:`~privpub.attacks.auditor.AnswerAuditor`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privpub.attacks.database import SubsetSumDatabase
from privpub.attacks.enumeration import (
    MAX_AUDIT_BITS,
    Decision,
    as_query,
    check_n,
    popcount,
    query_mask,
)
from privpub.attacks.perturbations import BinomialNoise, CoinNoise, Exact, LaplaceNoise
from privpub.attacks.walk import delta_prime
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.renamed import renamed_keywords

#: Noise mass a :class:`SelfAuditor` leaves out of its sum over answers (counted as a breach).
TAIL = 1e-12


@dataclass(frozen=True)
class _NoiseLaw:
    """An integer-valued noise law: noise = k − shift with k an integer.

    ``k``/``logpmf`` tabulate k where the sum over answers runs, ``tail`` is
    the mass left out, ``min_size`` the size below which a query is answered 0
    whatever the database (BinomialNoise's small-query rule: no information).
    """

    kind: str
    k: np.ndarray
    logpmf: np.ndarray
    shift: float
    tail: float
    min_size: float
    R: int = 0
    log_r: float = 0.0

    @classmethod
    def of(cls, mechanism, n: int) -> _NoiseLaw:
        if type(mechanism) is Exact:
            return cls("exact", np.zeros(1, np.int64), np.zeros(1), 0.0, 0.0, 0.0)
        if isinstance(mechanism, (BinomialNoise, CoinNoise)):
            from scipy import stats  # imported on use: scipy is slow to import

            if isinstance(mechanism, CoinNoise):
                R, min_size = mechanism.R, 0.0
            else:
                R, min_size = mechanism.coins(n), mechanism.small_size(n)
            lo = int(stats.binom.ppf(TAIL / 4, R, 0.5))
            hi = int(stats.binom.isf(TAIL / 4, R, 0.5))
            k = np.arange(lo, hi + 1, dtype=np.int64)
            tail = float(stats.binom.cdf(lo - 1, R, 0.5) + stats.binom.sf(hi, R, 0.5))
            return cls("binomial", k, stats.binom.logpmf(k, R, 0.5), R / 2.0, tail,
                       min_size, R=R)
        if isinstance(mechanism, LaplaceNoise):
            # P(e = k) = (1 − r)/(1 + r) · r^|k|, r = e^{−1/scale}; P(|e| > K) = 2 r^{K+1}/(1 + r).
            log_r = -1.0 / mechanism.scale
            r = math.exp(log_r)
            K = max(0, math.ceil(math.log(TAIL * (1 + r) / 2) / log_r - 1))
            k = np.arange(-K, K + 1, dtype=np.int64)
            logpmf = math.log((1 - r) / (1 + r)) + np.abs(k) * log_r
            return cls("laplace", k, logpmf, 0.0, 2 * r ** (K + 1) / (1 + r), 0.0,
                       log_r=log_r)
        raise ParameterError("SelfAuditor sums over the answers of an integer-valued noise law: "
                             "mechanism must be Exact, CoinNoise, BinomialNoise or LaplaceNoise, "
                             "got "
                             f"{mechanism!r}")

    @property
    def variance(self) -> float:
        """The noise's variance: R/4 for the coins, 2r/(1 − r)² for discrete Laplace."""
        if self.kind == "binomial":
            return self.R / 4.0
        if self.kind == "laplace":
            r = math.exp(self.log_r)
            return 2 * r / (1 - r) ** 2
        return 0.0

    def logf(self, k: np.ndarray) -> np.ndarray:
        """log P(noise = k − shift) at any integers k (not only the tabulated ones)."""
        if self.kind == "exact":
            return np.where(k == 0, 0.0, -np.inf)
        if self.kind == "binomial":
            from scipy import stats

            return stats.binom.logpmf(k, self.R, 0.5)
        r = math.exp(self.log_r)
        return math.log((1 - r) / (1 + r)) + np.abs(k) * self.log_r


class _GaussianPosterior:
    """The attacker's posterior in the Gaussian linear model (SelfAuditor's method for n > 20).

    The prior Bernoulli(p) entries become N(p, p(1 − p)) and the noise a
    Gaussian of the law's variance, so the posterior is N(m, Σ), updated by
    one rank-one (Kalman) step per answer. Entry i's log-odds are read from
    the Gaussian evidence on x_i (posterior marginal divided by the prior):
    L_i = logit p + (m_i/v_i − p/v₀) − (1/v_i − 1/v₀)/2, exact for one entry
    queried alone under Gaussian noise. After an answer A to q, with
    z = A − q·m ~ N(0, s²), s² = qᵀΣq + σ², every L_i is affine in z, so the
    answers that keep all |L_i| < δ′ form one interval of z and β(q) is one
    difference of normal CDFs. O(n²) memory and time per query.
    """

    def __init__(self, n: int, p: float, noise_variance: float):
        self.p, self.v0, self.noise = p, p * (1 - p), noise_variance
        self.logit_p = math.log(p / (1 - p))
        self.m = np.full(n, p)
        self.S = np.eye(n) * self.v0

    def _log_odds(self, m: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.logit_p + (m / v - self.p / self.v0) - (1 / v - 1 / self.v0) / 2

    def confidences(self) -> np.ndarray:
        return self._log_odds(self.m, np.diag(self.S).copy())

    def _step(self, q: np.ndarray) -> tuple[np.ndarray, float]:
        Sq = self.S[:, q].sum(axis=1)
        return Sq, float(Sq[q].sum()) + self.noise

    def beta(self, q: np.ndarray, dp: float) -> float:
        from scipy.special import ndtr  # imported on use: scipy is slow to import

        Sq, s2 = self._step(q)
        v = np.diag(self.S) - Sq ** 2 / s2
        c = self._log_odds(self.m, v)             # L_i at z = 0
        b = Sq / (s2 * v)                         # dL_i / dz
        moving = np.abs(b) > 1e-300
        if np.any(np.abs(c[~moving]) >= dp):
            return 1.0
        if not moving.any():      # e.g. the empty query: the answer moves no log-odds
            return 0.0
        ends = np.stack([(-dp - c[moving]) / b[moving], (dp - c[moving]) / b[moving]])
        lo, hi = np.max(np.min(ends, axis=0)), np.min(np.max(ends, axis=0))
        if lo >= hi:
            return 1.0
        s = math.sqrt(s2)
        return float(min(1.0, max(0.0, 1.0 - (ndtr(hi / s) - ndtr(lo / s)))))

    def update(self, q: np.ndarray, answer: float) -> None:
        Sq, s2 = self._step(q)
        self.m = self.m + Sq * (answer - float(self.m[q].sum())) / s2
        self.S = self.S - np.outer(Sq, Sq) / s2


METHODS = ("auto", "exact", "gaussian")


class SelfAuditor:
    """Appendix B's self-auditor in front of a perturbed database.

    ``advantage`` is Dinur–Nissim's δ (the auditor refuses what would let the attacker's
    log-odds reach δ′ = :func:`~privpub.attacks.walk.delta_prime`), ``breach_budget`` the
    total breach probability it may spend, ``prior`` the p below.

    The attacker modelled: knows that the entries are iid Bernoulli(p), the
    perturbation's noise law, every answered query and its answer, and this
    auditor's rule. The auditor keeps that attacker's posterior and its
    log-odds L_i = ln P(d_i = 1 | transcript) / P(d_i = 0 | transcript).

    ``method="exact"`` (the default up to n = :data:`MAX_AUDIT_BITS`): the
    posterior over all 2^n candidates. For a new query q it sums over every
    answer the mechanism can give (the posterior predictive
    P(A = a) = Σ_x post(x) f(a − q·x), grouped by q·x) and computes
    β(q) = P(max_i |L_i after a| ≥ δ′), δ′ = delta_prime(δ), exactly: the
    supported noise laws are integer-valued, so the answers form a finite
    grid once a tail of mass ≤ :data:`TAIL` is cut off, and that tail is
    counted as breaching. Supported: ``Exact``, ``CoinNoise`` (Theorem 5's
    Σ e_i − R/2, the Gaussian-like law with variance R/4), ``BinomialNoise``
    (the same law; queries below its small-query size are answered 0 and
    carry nothing) and ``LaplaceNoise`` (discrete Laplace). Continuous noise
    (a Gaussian on doubles) is not: its answers form no grid to sum over, and
    CoinNoise is the Gaussian law's integer counterpart.

    ``method="gaussian"`` (the default beyond): an approximation — the
    Gaussian linear model of :class:`_GaussianPosterior` (prior and noise
    replaced by Gaussians of the same variances; β in closed form), for
    ``CoinNoise`` and ``BinomialNoise`` only. Against the exact method at
    n = 12 under CoinNoise(24) (tests/attacks/test_auditor.py): log-odds within 0.25
    and the decision β ≤ 0.05 the same on ≥ 95% of queries; run as the
    auditor, the attacker's exact posterior reached δ′ in a share of trials
    within the breach budget (measured, not proved).

    Rule: answer q iff spent + β(q) ≤ ``breach_budget``, then spent += β(q); a
    query with β(q) = 0 is always answered. β depends on the transcript and
    q only, never on q's true answer, so a refusal says nothing the attacker
    could not compute. Guarantee (exact method; union bound over the
    answered queries, whose conditional breach probabilities sum to at most
    ``breach_budget``): for any adaptive sequence of queries, with d drawn from the
    prior and the noise from its law, the attacker's log-odds reach δ′ on
    some entry during the session with probability at most ``breach_budget``.

    What it does not cover: the Sec. 4 adversary who is also handed every
    other entry d_j, j ≠ i (its confidence depends on d, not on public
    information), and a d that is not drawn from the stated prior.

    Examples
    --------
    >>> from privpub.attacks import SelfAuditor, SubsetSumDatabase, Exact
    >>> aud = SelfAuditor(SubsetSumDatabase([1, 1, 0, 1, 0, 0], Exact()), advantage=0.4)
    >>> aud.ask([1, 1, 0, 0, 0, 0]) is None        # 0 or 2 (probability 1/2) would expose both
    True
    >>> aud.ask([1, 1, 1, 1, 1, 1])                # only 0 or 6 expose (probability 1/32)
    3.0
    """

    @renamed_keywords(delta="advantage", level="breach_budget", p="prior")
    def __init__(self, db: SubsetSumDatabase, advantage: float, breach_budget: float = 0.05,
                 prior: float = 0.5, method: str = "auto"):
        if not isinstance(db, SubsetSumDatabase):
            raise ParameterError(f"db must be a SubsetSumDatabase, got {type(db).__name__}")
        if method not in METHODS:
            raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
        n = db.n
        if method == "auto":
            method = "exact" if n <= MAX_AUDIT_BITS else "gaussian"
        if method == "exact":
            check_n("SelfAuditor's exact method", n)
        self.method = method
        self.delta_prime = delta_prime(advantage)
        self.breach_budget = validate.probability("breach_budget", breach_budget,
                                                  open_low=True, open_high=True)
        self.prior = validate.probability("prior", prior, open_low=True, open_high=True)
        if abs(math.log(self.prior / (1 - self.prior))) >= self.delta_prime:
            raise ParameterError(f"the prior alone breaches: |ln(p/(1 − p))| = "
                                 f"{abs(math.log(self.prior / (1 - self.prior))):.4g} ≥ δ′ = "
                                 f"{self.delta_prime:.4g} at prior p = {self.prior}, "
                                 f"advantage δ = {advantage}")
        self._db = db
        self._law = _NoiseLaw.of(db.mechanism, n)
        if method == "gaussian":
            if self._law.kind != "binomial":
                # Exact answers have no variance to work with; discrete Laplace moves a
                # log-odds by at most 1/scale per answer, which a Gaussian model misses
                # (measured: log-odds off by up to 1.2 at n = 12, scale 2).
                raise ParameterError("SelfAuditor's gaussian method models CoinNoise or "
                                     f"BinomialNoise, got {db.mechanism!r} (use method="
                                     f"'exact', n ≤ {MAX_AUDIT_BITS})")
            self._gauss = _GaussianPosterior(n, self.prior, self._law.variance)
        else:
            self._masks = np.arange(1 << n, dtype=np.uint32)
            ones = popcount(self._masks)
            self._logw = ones * math.log(self.prior) + (n - ones) * math.log1p(-self.prior)
        self.spent = 0.0
        # The largest max_i |L_i| after any answer (the prior's to start).
        self.peak = float(np.max(np.abs(self.confidences())))
        self.log: list[Decision] = []

    @property
    def n(self) -> int:
        return self._db.n

    def _weights(self) -> np.ndarray:
        return np.exp(self._logw - np.max(self._logw))

    def _bit(self, i: int) -> np.ndarray:
        return ((self._masks >> np.uint32(i)) & 1).astype(bool)

    def confidences(self) -> np.ndarray:
        """The attacker's log-odds ln P(d_i = 1 | transcript)/P(d_i = 0 | transcript), per i."""
        if self.method == "gaussian":
            return self._gauss.confidences()
        w = self._weights()
        m1 = np.array([w[self._bit(i)].sum() for i in range(self.n)])
        m0 = np.array([w[~self._bit(i)].sum() for i in range(self.n)])
        with np.errstate(divide="ignore"):
            return np.log(m1) - np.log(m0)

    def predictive(self, query) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The answers q can get, their posterior predictive probabilities, and which breach.

        Exact method only. Returns (answers, probabilities, breaches); the
        probabilities sum to 1 − (the law's cut tail). Public: depends on the
        transcript and q only.
        """
        if self.method != "exact":
            raise ParameterError(f"predictive is the exact method's; this auditor's method is "
                                 f"{self.method!r}")
        q = as_query(query, self.n)
        return self._predictive(query_mask(q), int(q.sum()))

    def _predictive(self, qm: int, size: int):
        law = self._law
        w = self._weights()
        s = popcount(self._masks & np.uint32(qm))
        W = np.bincount(s, w, minlength=size + 1)
        # Posterior mass with d_i = 1 (M1) and d_i = 0 (M0) for each value of q·x:
        # computed apart, not as W − M1, so a tiny M0 is not lost to cancellation.
        M1 = np.stack([np.bincount(s, w * self._bit(i), minlength=size + 1)
                       for i in range(self.n)], axis=1)
        M0 = np.stack([np.bincount(s, w * ~self._bit(i), minlength=size + 1)
                       for i in range(self.n)], axis=1)
        # Answer grid u = q·x + k (noise k − shift): F[u, s] = f(u − s).
        u = np.arange(law.k[0], law.k[-1] + size + 1)
        idx = u[:, None] - np.arange(size + 1)[None, :] - law.k[0]
        ok = (idx >= 0) & (idx < law.k.size)
        F = np.where(ok, np.exp(law.logpmf[np.clip(idx, 0, law.k.size - 1)]), 0.0)
        P, N1, N0 = F @ W, F @ M1, F @ M0
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.log(N1) - np.log(N0)
        breach = np.any(np.abs(L) >= self.delta_prime, axis=1) & (P > 0)
        return u - law.shift, P / W.sum(), breach

    def breach_probability(self, query) -> float:
        """β(q): the probability that answering q takes some |L_i| to δ′ or beyond."""
        return self._beta(as_query(query, self.n))

    def _beta(self, q: np.ndarray) -> float:
        size = int(q.sum())
        if size < self._law.min_size:
            return 0.0   # answered 0 whatever d is: the answer carries nothing
        if self.method == "gaussian":
            return self._gauss.beta(q, self.delta_prime)
        _, P, breach = self._predictive(query_mask(q), size)
        return float(min(1.0, P[breach].sum() + self._law.tail))

    def ask(self, query) -> float | None:
        """The perturbed answer to ``query``, or None when its breach risk would overdraw."""
        q = as_query(query, self.n)
        beta = self._beta(q)                  # decided before the database is touched
        if beta > 0 and self.spent + beta > self.breach_budget:
            self.log.append(Decision(q, None, beta))
            return None
        answer = float(self._db.query(q)[0])
        self.spent += beta
        if q.sum() >= self._law.min_size:
            if self.method == "gaussian":
                self._gauss.update(q, answer)
            else:
                k = np.rint(answer + self._law.shift).astype(np.int64)
                s = popcount(self._masks & np.uint32(query_mask(q)))
                self._logw = self._logw + self._law.logf(k - s)
                self._logw -= np.max(self._logw)
        self.peak = max(self.peak, float(np.max(np.abs(self.confidences()))))
        self.log.append(Decision(q, answer, beta))
        return answer

    def agreement(self, candidate) -> float:
        """Fraction of bits on which ``candidate`` agrees with the database (for evaluation)."""
        return self._db.agreement(candidate)

    def __repr__(self) -> str:
        answered = sum(d.answered for d in self.log)
        return (f"SelfAuditor(n={self.n}, mechanism={self._db.mechanism!r}, "
                f"method={self.method!r}, delta_prime={self.delta_prime:.4g}, "
                f"breach_budget={self.breach_budget}, prior={self.prior}, answered={answered}, "
                f"refused={len(self.log) - answered}, spent={self.spent:.3g})")
