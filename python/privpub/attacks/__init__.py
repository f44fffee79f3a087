"""Reconstruction attacks (Dinur–Nissim, PODS 2003): statistical databases answering
subset sums through a perturbation, and the decoders that recover their bits."""

from privpub.attacks.audit import AuditResult, PresenceAuditResult, audit, audit_presence
from privpub.attacks.database import SubsetSumDatabase
from privpub.attacks.decoders import (
    Reconstruction,
    default_queries,
    exhaustive_reconstruct,
    lp_reconstruct,
    lstsq_reconstruct,
    random_queries,
)
from privpub.attacks.perturbations import (
    BinomialNoise,
    BoundedNoise,
    CDModel,
    Exact,
    LaplaceNoise,
    Perturbation,
    Rounding,
)
from privpub.attacks.walk import confidence_walk, delta_prime, stays_private

__all__ = [
    "AuditResult", "PresenceAuditResult", "audit", "audit_presence",
    "BinomialNoise", "BoundedNoise", "CDModel", "Exact", "LaplaceNoise", "Perturbation",
    "Reconstruction", "Rounding", "SubsetSumDatabase", "default_queries",
    "confidence_walk", "delta_prime", "exhaustive_reconstruct", "lp_reconstruct",
    "lstsq_reconstruct", "random_queries", "stays_private",
]
