"""Audit a published table for presence with Dinur–Nissim reconstruction: the
release answers random subset queries through its own estimator
(:mod:`privpub.attacks.subsets`, as for the attribute audit,
:func:`~privpub.attacks.audit.audit`).

:func:`audit_presence` — Theorem 2.6 of the αβ paper, the adversary the
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

import numpy as np

from privpub.attacks.decoders import random_queries
from privpub.attacks.subsets import (
    ViewIndex,
    check_bound,
    check_decoder,
    clopper_pearson,
    decode,
    query_count,
)
from privpub.core import validate
from privpub.core.capabilities import RefusesPresenceAudit, privacy_request
from privpub.core.errors import ParameterError
from privpub.core.optional import progress_bar
from privpub.core.seeding import RandomSource, SeedLike, resolve_seed
from privpub.tables.published import PublishedView
from privpub.tables.records import KeyCounts, rows_as_keys

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
        A tqdm bar over the rounds (where tqdm, ``privpub[progress]``, is installed).
    """
    views = _views(release)
    release = views[-1]
    for v in views:
        refusing = v.mechanism_object()
        if isinstance(refusing, RefusesPresenceAudit):
            raise ParameterError(refusing.presence_refusal)
    check_decoder(decoder)
    request = privacy_request(release.mechanism_object())
    d, gamma = request.d, request.gamma
    if prior is None:
        if d is None:
            raise ParameterError(f"the {release.mechanism} release states no prior bound d; "
                                 f"pass prior= (the adversary's prior per candidate)")
        prior = d
    prior = validate.probability("prior", prior, open_low=True, open_high=True)
    n = validate.integer("n_candidates", n_candidates, minimum=2)
    confidence = validate.probability("confidence", confidence, open_low=True, open_high=True)
    bound = check_bound(decoder, bound)
    rounds = (math.ceil(PRESENT_TARGET / (n * prior)) if rounds is None
              else validate.integer("rounds", rounds, minimum=1))
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
    t = query_count(n, n_queries)
    Q = random_queries(n, t, source.derive("queries"))
    indexes = [ViewIndex(v) for v in views]
    sizes = [a.size for a in schema.attributes]
    draws = source.derive("candidates")
    answers, variances, present = np.empty((t, rounds)), np.empty((t, rounds)), []
    bar = progress_bar(range(rounds), desc="presence audit", unit="round", show=progress)
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
    named = decode(decoder, Q, answers, variances, bound) > 0.5
    member = np.stack(present, axis=1)
    correct, n_named = int(np.sum(named & member)), int(named.sum())
    return PresenceAuditResult(decoder, prior, n, rounds, t, int(member.sum()), n_named,
                               correct, clopper_pearson(correct, n_named, confidence), confidence,
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
