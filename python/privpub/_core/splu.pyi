"""``privpub._core.splu``: SPLU-Gen's kernels (rust/src/bindings/splu.rs over splu.rs)."""

import numpy as np
import numpy.typing as npt

def decoy_groups(values: npt.NDArray[np.uint32], n_values: int,
                 gamma: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """SPLU-Gen's deterministic decoy groups (Anatomy's group creation: each round one
    record from each of the γ buckets with most records left, ties to the smaller value,
    smallest record id first). Returns (members: γ record ids per group, groups one after
    the other; residue: the record ids left, ascending). DomainError for a value ≥ n_values."""

def decoy_draw(key: bytes, members: npt.NDArray[np.uint32], values: npt.NDArray[np.uint32],
               gamma: int) -> npt.NDArray[np.uint32]:
    """Per position of ``members``: the value of a uniformly drawn member of its group
    (p = q = 1/γ); position j uses ChaCha stream j // BLOCK."""

def em_batch(y: npt.NDArray[np.float64], start: npt.NDArray[np.float64], group_size: int,
             exact_rate: bool, stopping: str, tol: float, max_iter: int
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Eq. 13/14 (privpub.splu.em.paper_em) for each row of y (Q, K published state counts,
    K = 2^{w+1}) from the same row of ``start`` (C-contiguous float64), each query to its
    own rule (``"count"`` or ``"paper"``) or ``max_iter`` steps, the queries spread over
    the threads (GIL released). Returns (x: (Q, K), the requested count's entry the
    reported one; iterations; converged). A row of y summing to 0 stays at its start,
    converged after 0 steps. ShapeError for K not a power of two ≥ 4 or shapes that differ;
    ParameterError naming group_size, tol, max_iter, stopping or the row and state of a
    negative or non-finite count in y or start."""
