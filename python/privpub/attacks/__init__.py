"""Reconstruction attacks (Dinur–Nissim, PODS 2003): statistical databases answering
subset sums through a perturbation, and the decoders that recover their bits.

Appendix B's auditors: the answer-dependent :class:`AnswerAuditor` with the
:func:`pair_attack` that reads d from its refusals (:mod:`privpub.attacks.auditor`), and
the :class:`SelfAuditor` whose decisions use only what the attacker already knows
(:mod:`privpub.attacks.selfauditor`)."""

from privpub.attacks.audit import AuditResult, audit
from privpub.attacks.auditor import AnswerAuditor, AttackOutcome, pair_attack, run_attack
from privpub.attacks.database import SubsetSumDatabase
from privpub.attacks.decoders import (
    DecodedBits,
    default_queries,
    exhaustive_reconstruct,
    lp_reconstruct,
    lstsq_reconstruct,
    random_queries,
)
from privpub.attacks.enumeration import Decision
from privpub.attacks.perturbations import (
    BinomialNoise,
    BoundedNoise,
    CDModel,
    CoinNoise,
    Exact,
    LaplaceNoise,
    Perturbation,
    Rounding,
)
from privpub.attacks.presence import PresenceAuditResult, audit_presence
from privpub.attacks.selfauditor import SelfAuditor
from privpub.attacks.walk import confidence_walk, delta_prime, stays_private

__all__ = [
    "AnswerAuditor", "AttackOutcome", "AuditResult", "Decision", "PresenceAuditResult",
    "SelfAuditor", "audit", "audit_presence", "pair_attack", "run_attack",
    "BinomialNoise", "BoundedNoise", "CDModel", "CoinNoise", "Exact", "LaplaceNoise",
    "Perturbation", "DecodedBits", "Rounding", "SubsetSumDatabase", "default_queries",
    "confidence_walk", "delta_prime", "exhaustive_reconstruct", "lp_reconstruct",
    "lstsq_reconstruct", "random_queries", "stays_private",
]
