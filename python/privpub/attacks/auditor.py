"""Query auditors for a statistical database (Dinur–Nissim 2003, Appendix B "Self auditing").

- :class:`AnswerAuditor` — the classic auditor Appendix B criticises (the
  notion of [14]): it computes the exact answer to a query and refuses when
  answering would fully determine some entry given the queries already
  answered. Its refusals depend on the answer, so they leak.
- :func:`pair_attack` — the appendix's attack on it: ask {i, i+1} for i < n
  and read only approvals (d_i ≠ d_{i+1}) and refusals (d_i = d_{i+1});
  two complementary candidates remain, one of them d.
- :class:`SelfAuditor` — the appendix's remedy: the decision to answer is a
  function of what the attacker already knows (the prior, the perturbation's
  noise law, the answered queries and their answers, the new query) and
  never of the new query's true answer, so anyone can compute it and a
  refusal tells nothing. It refuses a query when the probability, under the
  attacker's posterior predictive, that the answer pushes some entry's
  log-odds past δ′ = ln((1/2 + δ)/(1/2 − δ)) would overdraw a risk budget.
- :func:`run_attack` — an attack (the pair attack, or random subsets
  decoded by least squares) through either auditor, measured.

Both auditors decide exactly by enumerating the 2^n candidate databases
(bit masks, vectorised, :mod:`privpub.attacks.enumeration`), so
n ≤ :data:`~privpub.attacks.enumeration.MAX_AUDIT_BITS`; the self-auditor
is in :mod:`privpub.attacks.selfauditor`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privpub.attacks.database import SubsetSumDatabase
from privpub.attacks.decoders import lstsq_fit, random_queries
from privpub.attacks.enumeration import Decision, as_query, check_n, popcount, query_mask
from privpub.attacks.perturbations import Exact
from privpub.attacks.selfauditor import SelfAuditor
from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.seeding import SeedLike, resolve_seed

ATTACKS = ("pair", "random")


def _determined(masks: np.ndarray, full: int) -> bool:
    """Whether every candidate in ``masks`` (non-empty) agrees on some bit."""
    both = np.bitwise_and.reduce(masks) | (~np.bitwise_or.reduce(masks) & np.uint32(full))
    return bool(both)


class AnswerAuditor:
    """The answer-dependent auditor of [14] over an exact n-bit database.

    For a query q it computes the exact answer a_q and refuses when the
    candidates consistent with the answered queries *and* a_q agree on some
    bit (that entry would be fully determined); otherwise it answers a_q.
    Decided exactly over all 2^n candidates
    (n ≤ :data:`~privpub.attacks.enumeration.MAX_AUDIT_BITS`).

    It also keeps what an attacker who knows this rule can infer: a refusal
    of q says a_q is one of the answers that would determine an entry, so
    :meth:`candidates` are the databases consistent with both the answers
    and the refusals — after :func:`pair_attack` just d and its complement.

    Examples
    --------
    >>> from privpub.attacks import AnswerAuditor
    >>> aud = AnswerAuditor([1, 1, 0, 1])
    >>> aud.ask([1, 1, 0, 0]) is None, aud.ask([0, 1, 1, 0])   # 2 would determine both
    (True, 1.0)
    """

    def __init__(self, bits):
        self._db = SubsetSumDatabase(bits, Exact())
        n = self._db.n
        check_n("AnswerAuditor", n)
        self._full = (1 << n) - 1
        self._d = query_mask(self._db._bits)
        all_masks = np.arange(1 << n, dtype=np.uint32)
        self._consistent = all_masks          # consistent with the answered queries
        self._known = all_masks.copy()        # ... and with the refusals (the attacker's view)
        self.log: list[Decision] = []

    @property
    def n(self) -> int:
        return self._db.n

    def ask(self, query) -> float | None:
        """The exact answer to ``query``, or None if it would determine some entry."""
        q = as_query(query, self.n)
        qm = query_mask(q)
        s = popcount(self._consistent & np.uint32(qm))
        a = popcount(np.array([self._d & qm], dtype=np.uint32))[0]   # the true answer
        if _determined(self._consistent[s == a], self._full):
            # What the refusal tells a rule-aware attacker: a_q lies among the answers
            # that would determine an entry (one loop over ≤ n + 1 values, not candidates).
            leaking = [b for b in range(int(q.sum()) + 1)
                       if np.any(s == b) and _determined(self._consistent[s == b], self._full)]
            sk = popcount(self._known & np.uint32(qm))
            self._known = self._known[np.isin(sk, leaking)]
            self.log.append(Decision(q, None))
            return None
        self._consistent = self._consistent[s == a]
        self._known = self._known[popcount(self._known & np.uint32(qm)) == a]
        answer = float(self._db.query(q)[0])
        self.log.append(Decision(q, answer))
        return answer

    def candidates(self) -> np.ndarray:
        """The databases consistent with every answer and refusal so far, as (k, n) bools."""
        return ((self._known[:, None] >> np.arange(self.n, dtype=np.uint32)) & 1).astype(bool)

    def confidences(self) -> np.ndarray:
        """A rule-aware attacker's log-odds that d_i = 1 under a uniform prior (±inf: known)."""
        c = self.candidates()
        with np.errstate(divide="ignore"):
            return np.log(c.sum(axis=0)) - np.log((~c).sum(axis=0))

    def agreement(self, candidate) -> float:
        """Fraction of bits on which ``candidate`` agrees with the database (for evaluation)."""
        return self._db.agreement(candidate)

    def __repr__(self) -> str:
        answered = sum(d.answered for d in self.log)
        return f"AnswerAuditor(n={self.n}, answered={answered}, refused={len(self.log) - answered})"


def pair_attack(auditor) -> tuple[np.ndarray, np.ndarray]:
    """Appendix B's attack: ask {i, i+1} for i < n and read only approvals and refusals.

    Against :class:`AnswerAuditor` an approval means d_i ≠ d_{i+1} and a
    refusal d_i = d_{i+1}, so the two returned complementary candidates
    (the first with bit 0 unset) include d exactly. Against a
    :class:`SelfAuditor` the decisions do not depend on the answers, so they
    carry nothing about d and the candidates are no better than a guess.

    Examples
    --------
    >>> from privpub.attacks import AnswerAuditor, pair_attack
    >>> c, c_bar = pair_attack(AnswerAuditor([0, 1, 1, 0, 1]))
    >>> c.astype(int).tolist()
    [0, 1, 1, 0, 1]
    """
    if not isinstance(auditor, (AnswerAuditor, SelfAuditor)):
        raise ParameterError(f"auditor must be an AnswerAuditor or a SelfAuditor, got "
                             f"{type(auditor).__name__}")
    n = auditor.n
    if n < 2:
        raise ParameterError(f"the pair attack needs n ≥ 2 entries, got n = {n}")
    approved = np.zeros(n - 1, dtype=bool)
    for i in range(n - 1):   # adaptive interface: one query at a time
        q = np.zeros(n, dtype=bool)
        q[i:i + 2] = True
        approved[i] = auditor.ask(q) is not None
    # c_{i+1} = c_i XOR approved_i: a running parity from c_0 = 0.
    c = np.concatenate([[False], np.bitwise_xor.accumulate(approved)])
    return c, ~c


@dataclass(frozen=True)
class AttackOutcome:
    """An attack run through an auditor.

    ``recovered``: the fraction of d the attack's output gets right — for
    the pair attack the better of its two complementary candidates (d up to
    complement), for ``random`` the least-squares fit of the answered
    queries rounded at 1/2. ``peak_confidence``: the attacker's largest
    |log-odds| on any entry (a SelfAuditor's session peak; an AnswerAuditor's
    rule-aware attacker at the end, under a uniform prior). ``candidates``:
    databases still consistent with what the attacker saw (AnswerAuditor
    only; None otherwise).
    """

    auditor: str
    attack: str
    n: int
    answered: int
    refused: int
    recovered: float
    peak_confidence: float
    candidates: int | None


def run_attack(auditor, attack: str = "pair", n_queries: int | None = None,
               seed: SeedLike = None) -> AttackOutcome:
    """Run ``attack`` ("pair", or "random": ``n_queries`` random subsets, default 4n,
    decoded by :func:`~privpub.attacks.decoders.lstsq_fit`) through ``auditor``.

    Examples
    --------
    >>> from privpub.attacks import AnswerAuditor, run_attack
    >>> run_attack(AnswerAuditor([1, 0, 0, 1, 1, 0, 1, 0])).recovered
    1.0
    """
    if not isinstance(auditor, (AnswerAuditor, SelfAuditor)):
        raise ParameterError(f"auditor must be an AnswerAuditor or a SelfAuditor, got "
                             f"{type(auditor).__name__}")
    if attack not in ATTACKS:
        raise ParameterError(f"attack must be one of {ATTACKS}, got {attack!r}")
    start = len(auditor.log)
    if attack == "pair":
        c, c_bar = pair_attack(auditor)
        recovered = max(auditor.agreement(c), auditor.agreement(c_bar))
    else:
        n = auditor.n
        t = 4 * n if n_queries is None else validate.integer("n_queries", n_queries, minimum=1)
        queries = random_queries(n, t, resolve_seed(seed).derive("auditor random attack"))
        answers = [auditor.ask(q) for q in queries]
        kept = np.array([a is not None for a in answers])
        if kept.any():
            fit = lstsq_fit(queries[kept], np.array([a for a in answers if a is not None]))
            guess = fit > 0.5
        else:   # nothing answered: the prior's most likely value for every bit
            guess = np.full(n, getattr(auditor, "prior", 0.5) > 0.5)
        recovered = auditor.agreement(guess)
    session = auditor.log[start:]
    answered = sum(d.answered for d in session)
    if isinstance(auditor, SelfAuditor):
        peak, candidates = auditor.peak, None
    else:
        peak = float(np.max(np.abs(auditor.confidences())))
        candidates = len(auditor._known)
    return AttackOutcome(type(auditor).__name__, attack, auditor.n, answered,
                         len(session) - answered, recovered, peak, candidates)
