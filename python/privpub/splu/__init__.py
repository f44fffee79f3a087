"""SPLU: small-sum privacy, large-sum utility (Wong et al.).

SPLU-Gen publishing (:class:`SPLUGen`), count reconstruction from its
releases (:mod:`privpub.splu.reconstruction`) and the paper's calculators
(:mod:`privpub.splu.calculators`).
"""

from privpub.splu.calculators import (
    privacy_guarantee,
    relative_error_probability,
    utility_threshold,
    utility_threshold_chebyshev,
)
from privpub.splu.mechanism import Partition, SPLUGen
from privpub.splu.reconstruction import (
    Reconstruction,
    reconstruct,
    reconstruct_many,
    sensitive_counts,
)

__all__ = ["Partition", "Reconstruction", "SPLUGen", "reconstruct", "reconstruct_many",
           "sensitive_counts", "privacy_guarantee", "relative_error_probability",
           "utility_threshold", "utility_threshold_chebyshev"]
