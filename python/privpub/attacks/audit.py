"""Audit a published table with Dinur–Nissim reconstruction.

Two adversaries, each asking random subset queries that the release answers
through its own estimator (the mechanism's ``estimate(Counts)``, as
:meth:`PublishedView.estimate` does, for all queries at once), decoding them,
and scored against the data:

- :func:`audit` — attribute inference. It knows, for n target people, that
  they are in the table and their quasi-identifier (every published
  attribute except the secret one), and wants their secret bit
  d_i = [secret = secret_value]. Targets are records whose quasi-identifier
  no other record shares, so the counting query

      select count(*) from I where (quasi-identifier, secret) ∈ {(qi_i, secret_value) : i ∈ S}

  is exactly the subset sum Σ_{i∈S} d_i. The fraction recovered comes with a
  Clopper–Pearson interval next to the best guess without the release (every
  target gets the majority value). This adversary's prior on a target's
  tuple is the secret's base rate, not the d = k·n/m a (d, γ)-private release
  is calibrated against, so a release can meet its stated guarantee and still
  fail this audit: the audit measures what the guarantee does not cover.
- :func:`audit_presence` — Theorem 2.6 of the αβ paper, the adversary the
  guarantee is about. It holds N candidate tuples, each in the table with
  prior p ≤ d independently, and wants to know which are: the secret bits are
  d_i = [t_i ∈ I] and the query "tuple ∈ {t_i : i ∈ S}" counts Σ_{i∈S} d_i.
  Theorem 2.6 calls a release broken when some tuple with prior ≤ n/m gets a
  posterior ≥ 2/3; the audit measures the posterior of the tuples the
  decoder names present (the fraction of them that are), with its interval,
  beside p, the release's γ, and 2/3, and calls it a breach in the theorem's
  sense only when p ≤ n/m (at a larger p, the release's d = k·n/m included,
  it says the posterior is above 2/3 outside the theorem's range).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any

import numpy as np

from privpub.attacks.database import as_bound
from privpub.attacks.decoders import (
    default_queries,
    lp_fit,
    lstsq_fit,
    random_queries,
)
from privpub.core import validate
from privpub.core.capabilities import (
    CountEstimator,
    RefusesPresenceAudit,
    SubsetSumAuditor,
    hidden_attributes,
)
from privpub.core.errors import ParameterError
from privpub.core.seeding import RandomSource, SeedLike, resolve_seed
from privpub.tables.published import Counts, PublishedView
from privpub.tables.records import KeyCounts, rows_as_keys

DECODERS = ("lstsq", "lp")


@dataclass(frozen=True)
class AuditResult:
    """What a reconstruction audit found.

    ``recovered`` is the fraction of the targets' secret bits the decoder got
    right, ``interval`` its Clopper–Pearson interval at ``confidence``;
    ``baseline`` is the fraction a guess of the majority value gets without
    the release. ``eligible`` counts records with a unique quasi-identifier.
    """

    secret_column: str
    secret_value: Any
    decoder: str
    n_targets: int
    n_queries: int
    eligible: int
    recovered: float
    interval: tuple[float, float]
    confidence: float
    baseline: float

    @property
    def advantage(self) -> float:
        """recovered − baseline: what the release adds to a guess from the base rate."""
        return self.recovered - self.baseline

    def __str__(self) -> str:
        lo, hi = self.interval
        return (f"{self.decoder} recovered {self.recovered:.1%} of {self.n_targets} secret bits "
                f"({self.secret_column} = {self.secret_value!r}) from {self.n_queries} queries; "
                f"{self.confidence:.0%} interval [{lo:.1%}, {hi:.1%}]; majority guess "
                f"{self.baseline:.1%}")


class _ViewIndex:
    """A release's rows (and context sets) as sorted keys, to answer many subset queries."""

    def __init__(self, release: PublishedView):
        self.release = release
        self.schema = release.schema
        self.view = KeyCounts(rows_as_keys(self.schema.digits(release.codes)))
        self._contexts: dict[str, KeyCounts] = {}
        self._mechanism = release.mechanism_object()
        if not isinstance(self._mechanism, CountEstimator):
            raise ParameterError(f"a {release.mechanism} release is not estimated from counts "
                                 "(its mechanism declares no CountEstimator), so the audit's "
                                 "subset queries have no estimator to ask")

    def context(self, name: str) -> KeyCounts:
        if name not in self._contexts:
            codes = self.release.context[name]
            self._contexts[name] = KeyCounts(rows_as_keys(self.schema.digits(codes)))
        return self._contexts[name]

    def subset_sums(self, tuple_digits: list[np.ndarray],
                    Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The release's estimates (and their variances) of "tuple ∈ {t_i : i ∈ q_j}" for
        each row q_j of Q, the tuples t_i given by their digits (distinct tuples)."""
        keys = rows_as_keys(tuple_digits)
        in_view = self.view.of(keys).astype(np.float64)
        Qf = Q.astype(np.float64)

        def domain_sum(weights):
            per = np.ones(len(keys))
            for w, d in zip(weights, tuple_digits, strict=True):
                per *= np.asarray(w, dtype=np.float64)[d]
            return Qf @ per

        def context(name: str):
            inside = (self.context(name).of(keys) > 0).astype(np.float64)
            return Qf @ (in_view * inside), Qf @ inside

        counts = Counts(Qf @ in_view, Qf.sum(axis=1), domain_sum, context)
        answers, variance = self._mechanism.estimate(counts)
        return (np.asarray(answers, dtype=np.float64),
                np.broadcast_to(np.asarray(variance, dtype=np.float64), (len(Q),)))


def _check_decoder(decoder: str) -> None:
    if decoder not in DECODERS:
        raise ParameterError(f"decoder must be one of {DECODERS}, got {decoder!r}")


def _check_bound(decoder: str, bound) -> float | None:
    """The LP's bound (finite, ≥ 0), or None; least squares takes none."""
    if bound is None:
        return None
    if decoder != "lp":
        raise ParameterError(f"bound is the LP decoder's (Theorem 3's E); decoder = "
                             f"{decoder!r} takes none, got bound = {bound!r}")
    return as_bound(bound)


def _query_count(n: int, n_queries: int | None) -> int:
    return default_queries(n) if n_queries is None else validate.count("n_queries", n_queries,
                                                                       minimum=1)


def _decode(decoder: str, Q: np.ndarray, answers: np.ndarray, variance: np.ndarray,
            bound: float | None) -> np.ndarray:
    """Fractional fits (n × R) of R columns of answers to the same queries Q.

    Least squares solves all columns with one factorisation. The LP's bound is
    ``bound``, else the root-mean-square standard error the estimator reports
    for that column's queries (answers off by more make the LP infeasible and
    :func:`~privpub.attacks.decoders.lp_fit` then minimises the total excess,
    an ℓ1 fit robust to the few large errors).
    """
    if decoder == "lstsq":
        return lstsq_fit(Q, answers).reshape(Q.shape[1], -1)
    variance = variance.reshape(len(Q), -1)
    fits = []
    for r in range(answers.shape[1]):
        E = float(np.sqrt(np.mean(variance[:, r]))) if bound is None else bound
        fits.append(lp_fit(Q, answers[:, r], E)[0])
    return np.stack(fits, axis=1)


def _interval(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson interval of k successes in n trials (nan, nan when n = 0)."""
    if n == 0:
        return (math.nan, math.nan)
    from scipy import stats  # imported on use: scipy costs ~0.4 s at `import privpub`
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence)
    return (float(ci.low), float(ci.high))


def audit(release: PublishedView, secret_column: str, records, *, secret_value: Any = None,
          n_targets: int = 256, n_queries: int | None = None, decoder: str = "lstsq",
          bound: float | None = None, confidence: float = 0.95,
          seed: SeedLike = None) -> AuditResult:
    """Reconstruct targets' secret bits from ``release`` by random subset queries.

    Parameters
    ----------
    release : PublishedView
        The published table: αβ, FRAPP (through the mechanism's estimator) or
        SPLU-Gen.
    secret_column : str
        An attribute of the release's schema: binary, or any with ``secret_value``
        (bit 1 is then secret = secret_value). For a SPLU-Gen release the
        quasi-identifier is the non-sensitive attributes (the sensitive ones are
        randomised), and a sensitive secret's counts come from the release's own
        reconstruction (Eq. 13/14).
    records : table
        The data the release was made from (to pick targets and score the attack).
    secret_value : optional
        The value that counts as bit 1 (default: the attribute's second value).
    n_targets : int
        How many records with a unique quasi-identifier to attack (all of them if fewer).
    n_queries : int, optional
        Random subset queries (default ⌈n (ln n)²⌉ for n targets).
    decoder : {"lstsq", "lp"}
        Least squares, or Theorem 3's LP with ``bound`` (default: the root-mean-square
        standard error the estimator reports over the queries; answers off by more
        make the LP infeasible and :func:`~privpub.attacks.decoders.lp_fit` then
        minimises the total excess, an ℓ1 fit robust to the few large errors).
    bound : float, optional
        The LP's bound: finite, ≥ 0, for ``decoder="lp"`` only (least squares takes none).
    confidence : float
        Level of the Clopper–Pearson interval.
    seed : optional
        Draws the targets and the queries.
    """
    if not isinstance(release, PublishedView):
        raise ParameterError(f"release must be a PublishedView, got {type(release).__name__}")
    schema = release.schema
    attr = schema[secret_column]  # names an unknown column
    if attr.size != 2 and secret_value is None:
        raise ParameterError(f"secret column {secret_column!r} is not binary (its domain has "
                             f"{attr.size} values, {attr.describe()}); name the value that "
                             f"counts as bit 1 with secret_value=")
    _check_decoder(decoder)
    confidence = validate.probability("confidence", confidence, open_low=True, open_high=True)
    n_targets = validate.count("n_targets", n_targets, minimum=2)
    bound = _check_bound(decoder, bound)
    j = schema.names.index(secret_column)
    one = _secret_index(schema, secret_column, secret_value)
    # Attributes the mechanism randomises (SPLU-Gen's sensitive ones) identify no record.
    mechanism = release.mechanism_object()
    hidden = set(hidden_attributes(mechanism))
    qi_columns = [i for i, a in enumerate(schema.names) if i != j and a not in hidden]
    if not qi_columns:
        raise ParameterError(f"no attribute besides {secret_column!r} identifies a record, so "
                             f"no quasi-identifier selects the targets")

    digits = schema.digits(schema.encode(records))
    qi_keys = rows_as_keys([digits[i] for i in qi_columns])
    unique = np.flatnonzero(KeyCounts(qi_keys).of(qi_keys) == 1)
    if unique.size < 2:
        raise ParameterError(f"only {unique.size} record(s) have a quasi-identifier "
                             f"({', '.join(schema.names[i] for i in qi_columns)}) no other "
                             f"record shares; the audit needs at least 2 targets")
    source = resolve_seed(seed)
    order = np.argsort(source.derive("targets").uniform(unique.size), kind="stable")
    targets = np.sort(unique[order[:n_targets]])
    n = targets.size
    bits = digits[j][targets] == one
    # Each target's tuple with the secret set to bit 1: its subset sums are the secret's.
    tuple_digits = [d[targets].astype(np.int64) for d in digits]
    tuple_digits[j] = np.full(n, one, dtype=np.int64)
    t = _query_count(n, n_queries)
    Q = random_queries(n, t, source.derive("queries"))
    if isinstance(mechanism, SubsetSumAuditor):  # the family's own estimator answers
        answers, variance = mechanism.audit_subset_sums(release, qi_columns, j, one,
                                                        tuple_digits, Q)
    else:
        answers, variance = _ViewIndex(release).subset_sums(tuple_digits, Q)
    fit = _decode(decoder, Q, answers[:, None], variance, bound)[:, 0]
    right = int(np.sum((fit > 0.5) == bits))
    return AuditResult(secret_column, attribute_value(schema, secret_column, one), decoder, n, t,
                       int(unique.size), right / n, _interval(right, n, confidence),
                       confidence, float(max(bits.mean(), 1 - bits.mean())))


#: Candidates in the table, expected over all rounds, that the default number of rounds aims at.
PRESENT_TARGET = 200
#: Theorem 2.6's breach: a tuple with prior ≤ n/m whose posterior reaches this.
BREACH_POSTERIOR = 2 / 3

#: What a presence audit found (:attr:`PresenceAuditResult.verdict`).
BREACH = "breach"
ABOVE_OUTSIDE_RANGE = "above-2/3-outside-range"
NOT_SHOWN = "not-shown"


def _floor_text(num: int, den: int, digits: int = 4) -> str:
    """num/den to ``digits`` significant digits, rounded down (a prior typed from it stays
    within num/den)."""
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = digits, ROUND_FLOOR
        return f"{Decimal(num) / Decimal(den):e}"


@dataclass(frozen=True)
class PresenceAuditResult:
    """What a presence audit (Theorem 2.6's adversary) found.

    Over ``rounds`` candidate sets of ``n_candidates`` tuples, each in the
    table with probability ``prior``: ``present`` were, the decoder named
    ``named`` present, and ``correct`` of those were. ``posterior`` =
    correct / named is the adversary's posterior on a tuple it names, with
    its Clopper–Pearson ``interval``; ``gamma`` and ``d`` are what the release
    promises (None when its parameters state none). ``tuples`` is the number
    of distinct tuples in the data (the theorem's n = |I|) and ``domain`` the
    domain size m: Theorem 2.6's range of priors is ≤ n/m (see :attr:`verdict`).
    """

    decoder: str
    prior: float
    n_candidates: int
    rounds: int
    n_queries: int
    present: int
    named: int
    correct: int
    interval: tuple[float, float]
    confidence: float
    gamma: float | None
    d: float | None
    tuples: int
    domain: int

    @property
    def posterior(self) -> float:
        """Fraction of the named tuples that are in the table (nan if none was named)."""
        return self.correct / self.named if self.named else math.nan

    @property
    def recall(self) -> float:
        """Fraction of the candidates in the table that the decoder named."""
        return self.correct / self.present if self.present else math.nan

    @property
    def theorem_prior(self) -> float:
        """n/m (distinct tuples of the data over the domain size, as the float nearest it):
        the largest prior Theorem 2.6's breach is about."""
        return self.tuples / self.domain  # int / int: correctly rounded, however large m is

    @property
    def within_theorem_range(self) -> bool:
        """Whether ``prior`` ≤ n/m (:attr:`theorem_prior`): Theorem 2.6's range of priors."""
        return self.prior <= self.theorem_prior

    @property
    def above_two_thirds(self) -> bool:
        """The posterior's interval lies at or above 2/3 (shown at ``confidence``)."""
        return self.named > 0 and self.interval[0] >= BREACH_POSTERIOR

    @property
    def breaks_promise(self) -> bool:
        """The release's own promise broken, shown at ``confidence``: the posterior's
        interval lies above γ at a prior ≤ d (False when the release states no γ or d)."""
        return (self.named > 0 and self.gamma is not None and self.d is not None
                and self.prior <= self.d and self.interval[0] > self.gamma)

    @property
    def breach(self) -> bool:
        """Theorem 2.6's breach, shown at ``confidence``: the posterior's interval lies at
        or above 2/3 at a prior within the theorem's range, prior ≤ n/m."""
        return self.above_two_thirds and self.within_theorem_range

    @property
    def verdict(self) -> str:
        """:data:`BREACH` (posterior above 2/3 at a prior ≤ n/m), :data:`ABOVE_OUTSIDE_RANGE`
        (posterior above 2/3 at a prior > n/m, outside the theorem's range: not its
        breach) or :data:`NOT_SHOWN` (no posterior above 2/3 shown)."""
        if not self.above_two_thirds:
            return NOT_SHOWN
        return BREACH if self.within_theorem_range else ABOVE_OUTSIDE_RANGE

    def __str__(self) -> str:
        lo, hi = self.interval
        found = (f"posterior {self.posterior:.1%}, {self.confidence:.0%} interval "
                 f"[{lo:.1%}, {hi:.1%}]" if self.named else "no posterior to measure")
        if self.gamma is None:
            promise = ""
        elif self.d is None:
            promise = f"; the release states γ = {self.gamma:.1%} but no prior bound d"
        elif self.prior <= self.d:
            promise = f"; the release promises ≤ {self.gamma:.1%} at priors ≤ d = {self.d:.3g}"
        else:
            promise = (f"; the release promises ≤ {self.gamma:.1%} only at priors ≤ "
                       f"d = {self.d:.3g}, not at this one")
        p = f"{self.prior:.3g}"
        # Rounded down, so a prior copied from the text stays within the range.
        ratio = (f"n/m = {self.tuples:,}/{self.domain:,} ≈ "
                 f"{_floor_text(self.tuples, self.domain)}")
        verdict = {
            BREACH: f"A breach in Theorem 2.6's sense: posterior above 2/3 at prior {p} "
                    f"≤ {ratio}.",
            ABOVE_OUTSIDE_RANGE: f"Posterior above 2/3 at prior {p} (outside the theorem's "
                                 f"range): Theorem 2.6's breach is at priors ≤ {ratio}, so "
                                 f"this is not one.",
            NOT_SHOWN: (f"No posterior above 2/3 shown at prior {p}, within Theorem 2.6's "
                        f"range, priors ≤ {ratio}: no breach in its sense shown."
                        if self.within_theorem_range else
                        f"No posterior above 2/3 shown at prior {p}, outside Theorem 2.6's "
                        f"range, priors ≤ {ratio}: the audit did not test the theorem's "
                        f"breach."),
        }[self.verdict]
        return (f"{self.decoder} named {self.named:,} of {self.rounds * self.n_candidates:,} "
                f"candidate tuples present (prior {p} each, "
                f"{self.n_queries:,} queries per {self.n_candidates}); {self.correct:,} were: "
                f"{found}{promise}; it found {self.correct:,} of the {self.present:,} present. "
                f"{verdict}")


def audit_presence(release: PublishedView | Sequence[PublishedView], records, *,
                   prior: float | None = None, n_candidates: int = 256, rounds: int | None = None,
                   n_queries: int | None = None, decoder: str = "lstsq",
                   bound: float | None = None, confidence: float = 0.95,
                   seed: SeedLike = None, progress: bool = False) -> PresenceAuditResult:
    """Theorem 2.6's adversary: which of its candidate tuples are in the table?

    Each round draws ``n_candidates`` tuples, each independently a record of
    ``records`` (one whose tuple no other record repeats) with probability
    ``prior`` and otherwise a uniform domain tuple that is not in the data, so
    the adversary's prior on every candidate is exactly ``prior``. The release
    answers the random subset queries "tuple ∈ {t_i : i ∈ S}" (the same queries
    each round), the decoder rounds its fit at 1/2, and the candidates it names
    present are scored against the data: the fraction that are is the
    posterior an adversary with this prior gets from the release.

    What it calls a breach. Theorem 2.6 (αβ paper, Sec. 2.4): "there exists
    a tuple t such that Pr₁[t] is small (≤ n/m) but Pr₁[t|V] is large
    (≥ 2/3)". The result is a breach in that sense (``verdict ==
    "breach"``) only when the posterior's interval lies at or above 2/3 *and*
    ``prior`` ≤ n/m (the float nearest it), with n the number of distinct tuples
    in ``records`` (the theorem's I is a set of tuples, so its base rate is
    |I|/m) and m the domain size. The release's d is not the theorem's
    range: Sec. 2.4 takes "d = kn/m, for some k > 1", so the default prior d
    lies k times above it, and a posterior above 2/3 there is reported as
    ``"above-2/3-outside-range"`` (for the same evidence the posterior grows
    with the prior, so one above 2/3 at a larger prior does not imply one at
    n/m). Nor is a
    measured posterior above γ at a prior ≤ d labelled: that is the
    release's own promise (Definition 2.3), printed beside the result.

    Several views of the same data (independent releases, or the views of
    an Algorithm 7 sequence, :class:`~privpub.alphabeta.MultiViewPublisher`):
    the adversary averages every view's unbiased estimate of each query, so
    a tuple that several views show counts for more (Sec. 4.4.1's breach for
    independent views). The prior bound d and γ printed are the last view's.

    Parameters
    ----------
    release : PublishedView or sequence of PublishedView
        The published table (any table mechanism with an estimator), or
        several views of the same data.
    records : table
        The data the release was made from.
    prior : float, optional
        The adversary's prior per candidate (default: the release's d, the
        largest prior its guarantee covers; required if it states none).
        Theorem 2.6's range is prior ≤ n/m (``result.theorem_prior``).
    n_candidates : int
        Candidates per round (the n of the reconstruction).
    rounds : int, optional
        Candidate sets (default: enough for about 200 candidates in the table).
    n_queries : int, optional
        Random subset queries per round (default ⌈n (ln n)²⌉).
    decoder : {"lstsq", "lp"}
        As in :func:`audit`.
    bound : float, optional
        The LP's bound (``decoder="lp"`` only), as in :func:`audit`.
    confidence : float
        Level of the posterior's Clopper–Pearson interval.
    seed : optional
        Draws the candidates and the queries.
    progress : bool
        A tqdm bar over the rounds.
    """
    views = _views(release)
    release = views[-1]
    for v in views:
        refusing = v.mechanism_object()
        if isinstance(refusing, RefusesPresenceAudit):
            raise ParameterError(refusing.presence_refusal)
    _check_decoder(decoder)
    params = release.parameters
    d = params.get("d")
    gamma = params.get("gamma")
    if prior is None:
        if d is None:
            raise ParameterError(f"the {release.mechanism} release states no prior bound d; "
                                 f"pass prior= (the adversary's prior per candidate)")
        prior = d
    prior = validate.probability("prior", prior, open_low=True, open_high=True)
    n = validate.count("n_candidates", n_candidates, minimum=2)
    confidence = validate.probability("confidence", confidence, open_low=True, open_high=True)
    bound = _check_bound(decoder, bound)
    rounds = (math.ceil(PRESENT_TARGET / (n * prior)) if rounds is None
              else validate.count("rounds", rounds, minimum=1))
    schema = release.schema
    digits = [dg.astype(np.int64) for dg in schema.digits(schema.encode(records))]
    keys = rows_as_keys(digits)
    data = KeyCounts(keys)
    pool = np.flatnonzero(data.of(keys) == 1)
    if pool.size == 0:
        raise ParameterError("every record's tuple is repeated in the data; the presence "
                             "audit draws its candidates in the table from unrepeated tuples")
    outside = schema.size - len(data.values)
    if outside < n:
        raise ParameterError(f"n_candidates = {n} but only {outside} domain tuples are not in "
                             f"the data")

    source = resolve_seed(seed)
    t = _query_count(n, n_queries)
    Q = random_queries(n, t, source.derive("queries"))
    indexes = [_ViewIndex(v) for v in views]
    sizes = [a.size for a in schema.attributes]
    draws = source.derive("candidates")
    answers, variances, present = np.empty((t, rounds)), np.empty((t, rounds)), []
    from tqdm import tqdm

    bar = tqdm(range(rounds), desc="presence audit", unit="round",
               disable=None if progress else True)  # None: silent off a terminal
    for r in bar:
        draw = draws.derive(f"round {r}")  # a source's stream is fixed: one per round and use
        member = draw.derive("member").uniform(n) < prior
        k = int(member.sum())
        if k > pool.size:
            raise ParameterError(f"a round drew {k} candidates in the table but only "
                                 f"{pool.size} records have an unrepeated tuple; lower "
                                 f"n_candidates or prior")
        inside = pool[np.argsort(draw.derive("inside").uniform(pool.size), kind="stable")[:k]]
        absent = _absent_tuples(n - k, sizes, data, draw.derive("absent"))
        cand = [np.empty(n, dtype=np.int64) for _ in sizes]
        for j, col in enumerate(cand):
            col[member] = digits[j][inside]
            col[~member] = absent[j]
        sums = [index.subset_sums(cand, Q) for index in indexes]
        # The mean of the views' unbiased estimates; its variance as if independent
        # (a plug-in for the LP's bound; least squares does not use it).
        answers[:, r] = np.mean([a for a, _ in sums], axis=0)
        variances[:, r] = np.mean([v for _, v in sums], axis=0) / len(sums)
        present.append(member)
    named = _decode(decoder, Q, answers, variances, bound) > 0.5
    member = np.stack(present, axis=1)
    correct, n_named = int(np.sum(named & member)), int(named.sum())
    return PresenceAuditResult(decoder, prior, n, rounds, t, int(member.sum()), n_named,
                               correct, _interval(correct, n_named, confidence), confidence,
                               gamma, d, tuples=len(data.values), domain=schema.size)


def _views(release: PublishedView | Sequence[PublishedView]) -> list[PublishedView]:
    """The views an audit reads: one release, or several of the same schema."""
    views = [release] if isinstance(release, PublishedView) else list(release) \
        if isinstance(release, Sequence) and not isinstance(release, str) else None
    if not views or not all(isinstance(v, PublishedView) for v in views):
        raise ParameterError(f"release must be a PublishedView or a non-empty sequence of "
                             f"them, got {type(release).__name__}")
    if any(v.schema != views[0].schema for v in views):
        raise ParameterError("the views of a sequence must share one schema")
    return views


def _absent_tuples(count: int, sizes: list[int], data: KeyCounts,
                   draws: RandomSource) -> list[np.ndarray]:
    """``count`` distinct uniform domain tuples not in the data, as digit columns.

    Uniform digits per attribute give a uniform tuple; those in the data or
    repeated are redrawn (rejection keeps the rest uniform over the tuples
    outside the data).
    """
    cols = [np.empty(0, dtype=np.int64) for _ in sizes]
    attempt = 0
    while len(cols[0]) < count:
        want = 2 * (count - len(cols[0])) + 8
        u = draws.derive(f"attempt {attempt}").uniform(want * len(sizes)).reshape(len(sizes), -1)
        attempt += 1
        fresh = [np.minimum((u[j] * s).astype(np.int64), s - 1) for j, s in enumerate(sizes)]
        cols = [np.concatenate([c, f]) for c, f in zip(cols, fresh, strict=True)]
        keys = rows_as_keys(cols)
        _, first = np.unique(keys, return_index=True)
        keep = np.sort(first[data.of(keys[first]) == 0])
        cols = [c[keep] for c in cols]
    return [c[:count] for c in cols]


def attribute_value(schema, column: str, index: int) -> Any:
    """The value at domain ``index`` of an attribute."""
    attr = schema[column]
    return schema.frame_of([attr], [np.array([index], dtype=np.int64)], rows=1)[column][0]


def _secret_index(schema, column: str, value: Any) -> int:
    """The domain index of ``value`` in ``column`` (default: index 1)."""
    if value is None:
        return 1
    index = schema.index_of(column, value)
    if index is None:
        raise ParameterError(f"secret_value {value!r} is not in the domain of {column!r} "
                             f"({schema[column].describe()})")
    return index
