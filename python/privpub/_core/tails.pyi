"""``privpub._core.tails``: tails of sums of independent binomials for many
problems at once (rust/src/bindings/tails.rs over tails.rs), the ragged part of
``privpub.tables.confidence.sum_tails``."""

import numpy as np
import numpy.typing as npt

def window_tails(first: npt.NDArray[np.float64], length: npt.NDArray[np.int64],
                 log_first: npt.NDArray[np.float64], trials: npt.NDArray[np.float64],
                 prob: npt.NDArray[np.float64], top: npt.NDArray[np.float64],
                 last_trials: npt.NDArray[np.float64], last_prob: npt.NDArray[np.float64],
                 log_anchor: npt.NDArray[np.float64], tail: npt.NDArray[np.float64]
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(upper, above) per problem: Σ_j pmf(j)·P(B ≥ k − j) and Σ_j pmf(j)·P(B ≥ k + 1 − j),
    pmf the convolution of the (W, P) windows (first value, length, log-pmf at the
    first, trials, probability of each windowed summand), B the last summand (trials,
    probability, log-pmf at clip(top, 0, trials), tail = P(B ≥ top)), top = k minus
    the windows' first values. ParameterError names a window length, count or
    probability out of range, ShapeError arrays that disagree."""
