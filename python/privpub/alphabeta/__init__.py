"""The αβ algorithm (Rastogi, Suciu, Hong, VLDB 2007) and its variants.

- :class:`AlphaBeta` — Algorithm 1 and its parameter choice; its guarantee in
  :mod:`privpub.alphabeta.claims`, its estimator and interval laws in
  :mod:`privpub.alphabeta.estimator`, its publish paths in
  :mod:`privpub.alphabeta.publishing` and :mod:`privpub.alphabeta.draw`;
- :class:`MultiViewPublisher` — several views of changing data (Algorithm 7);
- :class:`SourceDistribution` — noise from a product source distribution (Algorithm 8);
- :mod:`privpub.alphabeta.accounting` — the privacy and utility calculators;
- :mod:`privpub.alphabeta.sequence` — the exact privacy of several views and
  their calibration; :mod:`privpub.alphabeta.sequence_claims`, their claims.
"""

from privpub.alphabeta import (  # planning: registers αβ's planner
    accounting,
    planning,  # noqa: F401
    sequence,
    sequence_claims,
)
from privpub.alphabeta.mechanism import AlphaBeta
from privpub.alphabeta.multiview import MultiViewPublisher, MultiViewStep
from privpub.alphabeta.source import SourceDistribution

__all__ = ["AlphaBeta", "MultiViewPublisher", "MultiViewStep", "SourceDistribution",
           "accounting", "sequence", "sequence_claims"]
