"""SPLU: small-sum privacy, large-sum utility (Wong et al.).

SPLU-Gen publishing (:class:`SPLUGen`), count reconstruction from its
releases with each estimate's uncertainty (:mod:`privpub.splu.reconstruction`,
:mod:`privpub.splu.estimates`, :mod:`privpub.splu.uncertainty`), the paper's calculators
(:mod:`privpub.splu.calculators`) and the Anatomy, DBR and Laplace baselines
(:mod:`privpub.splu.baselines`).
"""

from privpub.splu import planning  # noqa: F401  (registers SPLU-Gen's planner)
from privpub.splu.baselines import AnatomyRelease, DBRRelease, anatomy, dbr, laplace_counts
from privpub.splu.calculators import (
    privacy_guarantee,
    relative_error_probability,
    utility_threshold,
    utility_threshold_chebyshev,
)
from privpub.splu.estimates import ReconstructionWarning
from privpub.splu.mechanism import Partition, SPLUGen
from privpub.splu.reconstruction import reconstruct, reconstruct_many, sensitive_counts

__all__ = ["AnatomyRelease", "DBRRelease", "Partition",
           "ReconstructionWarning", "SPLUGen", "anatomy", "dbr",
           "laplace_counts", "privacy_guarantee", "reconstruct", "reconstruct_many",
           "relative_error_probability", "sensitive_counts", "utility_threshold",
           "utility_threshold_chebyshev"]
