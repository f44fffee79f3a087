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
