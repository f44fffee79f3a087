"""``privpub._core.counting``: counts over domain digits (rust/src/bindings/counting.rs
over marginals.rs: histograms over attribute subsets; columns.rs: rows in a
truth table; codecount.rs: tuple codes in a truth table, not decoded)."""

import numpy as np
import numpy.typing as npt

def count_subsets(digits: npt.NDArray[np.uint16], radices: list[int],
                  subsets: list[list[int]], totals: list[npt.NDArray[np.int64]]) -> None:
    """Histogram of the rows of (k, n) digits over each subset's value combinations
    (first attribute slowest), added into that subset's ``totals``; parallel over subsets."""

def sum_down(hist: npt.NDArray[np.int64], radices: list[int],
             keeps: list[list[int]]) -> list[npt.NDArray[np.int64]]:
    """A histogram over ``radices`` (first slowest) summed down to each target's
    kept axes (in the target's order, first slowest); parallel over targets."""

def count_in_table(cols: list[npt.NDArray[np.integer]], radices: list[int],
                   table: npt.NDArray[np.bool_]) -> int:
    """Rows whose digits (first column slowest) index a true cell of ``table``
    (Π radices cells); DomainError(attribute_index, row) for a digit ≥ its radix."""

def count_codes_in_table(codes: npt.NDArray[np.uint64], radices: list[int], read: list[int],
                         table: npt.NDArray[np.bool_]) -> int:
    """How many u64 tuple codes over ``radices`` (m ≤ 2^64) make ``table`` true;
    the table is over the attributes at positions ``read`` (increasing), first
    slowest. One parallel pass over the codes, GIL released; CodeError
    naming the row of a code at or above m."""
