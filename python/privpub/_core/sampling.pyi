"""``privpub._core.sampling``: the randomised kernels (rust/src/bindings/sampling.rs
over rng.rs: the uniform stream of a key; sample.rs: αβ's α-step, β-step,
thinning and merge; frapp.rs: FRAPP's perturbation)."""

import numpy as np
import numpy.typing as npt

#: Items per logical random block: block b draws from ChaCha20 stream b.
BLOCK: int

def uniform(key: bytes, n: int, start: int) -> npt.NDArray[np.float64]:
    """Elements [start, start + n) of the uniform [0, 1) stream of a 32-byte key."""

def keep_records(key: bytes, codes: npt.NDArray[np.uint64], p_first: npt.NDArray[np.float64],
                 p_rest: float, start: int = 0) -> npt.NDArray[np.bool_]:
    """α-step mask over sorted (n, limbs) codes: first copy of a code kept with
    probability p_first (one value, or one per record), further copies with p_rest;
    record i uses stream element start + i."""

def thin_product(key: bytes, codes: npt.NDArray[np.uint64], radices: list[int],
                 ratios: npt.NDArray[np.float64], start: int = 0) -> npt.NDArray[np.bool_]:
    """Algorithm 8's thinning: keep each (n, limbs) code with probability
    Π_j ratios[block j][digit j] (each attribute's ratios back to back); candidate i
    uses stream element start + i."""

def beta_step_layout(m: int, beta: float) -> tuple[int, int]:
    """(L, segments): the β-step draws code range [s·L, (s+1)·L) ∩ [0, m) from stream s."""

def beta_step(key: bytes, m: int, beta: float, excluded: npt.NDArray[np.uint64],
              segments: tuple[int, int] | None = None,
              kept: npt.NDArray[np.uint64] | None = None) -> npt.NDArray[np.uint64]:
    """Sorted codes in [0, m) outside the sorted distinct (n, limbs) ``excluded``, each
    selected independently with probability beta (exact geometric skipping; m ≤ 2^128);
    with ``segments=(a, b)`` only those of segments a..b, i.e. in [a·L, b·L): the
    pieces of any split concatenate to the whole draw. ``kept``: sorted (k, limbs)
    codes, each excluded and inside the segments' range, repeats allowed, written
    in order among the selected codes (the merge, without a second pass)."""

def merge_sorted(a: npt.NDArray[np.uint64],
                 b: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Merge two sorted (n, limbs) code arrays, keeping duplicates."""

def frapp_perturb(key: bytes, codes: npt.NDArray[np.uint64], m: int,
                  keep: float, start: int = 0) -> npt.NDArray[np.uint64]:
    """FRAPP: each (n, limbs) code kept with probability ``keep``, else replaced by a
    uniform other tuple of [0, m); record i is position start + i of the whole list and
    draws from stream (start + i) // BLOCK (a slice draws what the whole list would)."""
