"""``privpub._core.codes``: tuple codes and domain digits (rust/src/bindings/codes.rs
over encode.rs: mixed-radix codes of columns and back; columns.rs: each column's
domain indices)."""

import numpy as np
import numpy.typing as npt

def encode_u64(cols: list[npt.NDArray[np.integer]], offsets: list[int],
               remaps: list[npt.NDArray[np.int64] | None],
               radices: list[int]) -> npt.NDArray[np.uint64]:
    """Mixed-radix codes (first column most significant). Column j's domain index is
    remaps[j][value] when a remap table is given, else value − offsets[j]; columns keep
    their integer width (int8 … uint64). DomainError(attribute_index, row) if outside."""

def encode_wide(cols: list[npt.NDArray[np.integer]], offsets: list[int],
                remaps: list[npt.NDArray[np.int64] | None], radices: list[int],
                limbs: int) -> npt.NDArray[np.uint64]:
    """As encode_u64, as an (n, limbs) array, most significant word first."""

def decode_u64(codes: npt.NDArray[np.uint64], offsets: list[int],
               radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """One array of n values (digit + offset) per attribute, each in the narrowest
    signed integer type that holds them; CodeError for a code ≥ m."""

def decode_wide(codes: npt.NDArray[np.uint64], offsets: list[int],
                radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """As decode_u64, from (n, limbs) codes."""

def limbs_for(radices: list[int]) -> int:
    """64-bit words needed for codes below the product of the radices."""

def to_digits(cols: list[npt.NDArray[np.integer]], offsets: list[int],
              remaps: list[npt.NDArray[np.int64] | None],
              radices: list[int]) -> list[npt.NDArray[np.signedinteger]]:
    """Each column's domain indices (remaps[j][value], or value − offsets[j]), checked
    against radices[j], in the narrowest signed type; DomainError(attribute_index, row)."""
