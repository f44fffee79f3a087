"""``privpub._core.attacks``: the reconstruction attacks (rust/src/bindings/attacks.rs
over attacks.rs)."""

import numpy as np
import numpy.typing as npt

def weed(n: int, queries: npt.NDArray[np.uint64], answers: npt.NDArray[np.float64],
         bound: float) -> int | None:
    """Dinur–Nissim Theorem 2's weeding: the first candidate mask c < 2^n (n ≤ 40) with
    |popcount(c & q_j) − answers_j| ≤ bound for every query mask q_j, or None."""
