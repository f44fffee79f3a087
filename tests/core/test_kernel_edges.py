"""No private kernel panics on bad input: each raises a PrivpubError naming the problem.

A Rust panic surfaces as ``pyo3_runtime.PanicException``, a BaseException that
``except Exception`` does not catch; every case here panicked, returned a wrong result
or raised a plain ValueError before the kernels validated their arguments.
"""

from __future__ import annotations

import numpy as np
import pytest

from privpub import (
    ArtifactError,
    CapacityError,
    CodeError,
    DomainError,
    ParameterError,
    PrivpubError,
    ShapeError,
    _core,
)

KEY = bytes(32)


def u64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def wide(rows: list[list[int]], limbs: int = 1) -> np.ndarray:
    return np.array(rows, dtype=np.uint64).reshape(len(rows), limbs)


def raises(call, *needles: str, cls: type[PrivpubError] = PrivpubError) -> PrivpubError:
    """``call()`` raises ``cls`` (not a panic) whose message contains every needle."""
    try:
        call()
    except PrivpubError as err:
        assert isinstance(err, cls), f"{type(err).__name__}: {err}"
        for needle in needles:
            assert needle in str(err), f"{needle!r} not in {str(err)!r}"
        return err
    except BaseException as err:  # PanicException derives from BaseException
        pytest.fail(f"{type(err).__module__}.{type(err).__name__} instead of "
                    f"{cls.__name__}: {err}")
    pytest.fail(f"no error; expected {cls.__name__} mentioning {needles}")


def test_each_kind_of_failure_raises_its_own_class():
    """KernelError's variants map once onto privpub.core.errors (bindings/mod.rs):
    each is a PrivpubError and a ValueError, and a row's error carries its row."""
    cases = [
        (lambda: _core.sampling.merge_sorted(wide([[1]]), wide([[0, 1]], 2)), ShapeError),
        (lambda: _core.sampling.uniform(b"short", 2, 0), ParameterError),
        (lambda: _core.sampling.beta_step_layout(10, 1.5), ParameterError),
        (lambda: _core.parquet.footer(b"PAR1xxxx", 8), ArtifactError),
        (lambda: _core.sampling.uniform(KEY, 2**62, 0), CapacityError),
        (lambda: _core.codes.decode_u64(u64(0, 6), [0], [3]), CodeError),
    ]
    for call, cls in cases:
        err = raises(call, cls=cls)
        assert isinstance(err, ValueError), type(err)
    err = raises(lambda: _core.codes.to_digits([np.array([1, 5])], [0], [None], [3]),
                 cls=DomainError)
    assert (err.attribute_index, err.row) == (0, 1)
    assert raises(lambda: _core.codes.decode_u64(u64(0, 6), [0], [3]), cls=CodeError).row == 1
    assert ShapeError.__mro__[1:3] == (PrivpubError, ValueError)


# ---------------------------------------------------------------------------------------------
# count_subsets (marginals.rs)
# ---------------------------------------------------------------------------------------------


def counted(digits: np.ndarray, radices: list[int], subsets: list[list[int]]) -> list:
    """count_subsets into fresh zero totals."""
    totals = [np.zeros(int(np.prod([radices[j] for j in s])), dtype=np.int64) for s in subsets]
    _core.counting.count_subsets(digits, radices, subsets, totals)
    return totals


def test_count_subsets_digit_not_below_its_radix():
    digits = np.array([[0, 1, 2], [0, 7, 1]], dtype=np.uint16)
    raises(lambda: counted(digits, [3, 4], [[1]]),
           "digit 7 of attribute 1 at row 1 is not below its radix 4")
    raises(lambda: counted(digits, [3, 4], [[0, 1]]), "digit 7 of attribute 1")
    # An attribute no subset reads is not checked (nor counted).
    assert counted(digits, [3, 4], [[0]])[0].tolist() == [1, 1, 1]


def test_count_subsets_cells_past_2_32_and_bad_shapes():
    digits = np.zeros((3, 1), dtype=np.uint16)
    one = [np.zeros(1, dtype=np.int64)]
    # Cell indices are u32 in the kernel: 2^33 cells are refused, as are 2^120.
    for radices in ([2**16, 2**16, 2], [2**40] * 3):
        raises(lambda r=radices: _core.counting.count_subsets(digits, r, [[0, 1, 2]], one),
               "subset 0", "more than 2^32 cells")
    raises(lambda: _core.counting.count_subsets(digits, [2, 2], [[0]], one),
           "3 attributes", "2 radices")
    raises(lambda: _core.counting.count_subsets(digits, [2, 2, 2], [[0, 3]], one),
           "attribute 3", "only 3 radices")
    # Totals that are not the subset's cells, or not one per subset.
    raises(lambda: _core.counting.count_subsets(digits, [2, 2, 2], [[0]], one),
           "subset 0 [0] has 2 cells but its totals hold 1")
    two = [*one, np.zeros(1, dtype=np.int64)]
    raises(lambda: _core.counting.count_subsets(digits, [2, 2, 2], [[]], two),
           "2 totals for 1 subsets")


def test_count_subsets_adds_into_the_totals():
    digits = np.array([[0, 1, 1, 0], [2, 0, 2, 2]], dtype=np.uint16)
    two = counted(digits, [2, 3], [[0, 1], []])
    assert two[0].tolist() == [0, 0, 2, 1, 0, 1]
    assert two[1].tolist() == [4]
    _core.counting.count_subsets(digits, [2, 3], [[0, 1], []], two)  # a second batch adds
    assert two[0].tolist() == [0, 0, 4, 2, 0, 2] and two[1].tolist() == [8]


def test_sum_down_bad_shapes():
    hist = np.arange(6, dtype=np.int64)
    raises(lambda: _core.counting.sum_down(hist, [2, 4], [[0]]), "6 cells over radices [2, 4]")
    raises(lambda: _core.counting.sum_down(hist, [2, 3], [[0, 0]]), "target 0 keeps axes [0, 0]")
    raises(lambda: _core.counting.sum_down(hist, [2, 3], [[2]]),
           "keeps axes [2] of a histogram over 2")
    assert [h.tolist() for h in _core.counting.sum_down(hist, [2, 3], [[1], [1, 0], []])] == \
        [[3, 5, 7], [0, 3, 1, 4, 2, 5], [15]]


# ---------------------------------------------------------------------------------------------
# decode_u64 / decode_wide / encode_u64 / encode_wide / to_digits / count_in_table (encode.rs,
# columns.rs)
# ---------------------------------------------------------------------------------------------


def test_decode_with_a_zero_radix():
    raises(lambda: _core.codes.decode_wide(np.zeros((2, 1), dtype=np.uint64), [0, 0], [3, 0]),
           "radix of attribute 1 is 0")
    raises(lambda: _core.codes.decode_u64(u64(), [0], [0]), "radix of attribute 0 is 0")
    raises(lambda: _core.codes.decode_u64(u64(), [0, 0], [2, 0]), "radix of attribute 1 is 0")


def test_decode_u64_of_a_domain_past_2_64():
    raises(lambda: _core.codes.decode_u64(u64(5), [0, 0, 0], [2**40] * 3), "exceeds 2^64",
           "decode_wide")


def test_decode_u64_of_a_domain_of_exactly_2_64_with_a_leading_radix_of_1():
    # stride of the first attribute is 2^64 (once truncated to a zero divisor).
    cols = _core.codes.decode_u64(u64(5, 2**64 - 1), [0, 0, 0], [1, 2**32, 2**32])
    assert [c.tolist() for c in cols] == [[0, 0], [0, 2**32 - 1], [5, 2**32 - 1]]


def test_decoded_values_past_int64():
    raises(lambda: _core.codes.decode_u64(u64(1), [2**63 - 1], [2]), "attribute 0", "offset",
           "largest int64")
    raises(lambda: _core.codes.decode_wide(wide([[1]]), [2**63 - 1], [2]), "attribute 0",
           "largest int64")
    # The extreme values that do fit decode exactly (no overflow on the way).
    low, = _core.codes.decode_u64(u64(0, 2**64 - 2), [-(2**63)], [2**64 - 1])
    assert low.tolist() == [-(2**63), 2**63 - 2]
    low, = _core.codes.decode_wide(wide([[0], [2**64 - 2]]), [-(2**63)], [2**64 - 1])
    assert low.tolist() == [-(2**63), 2**63 - 2]


def test_decode_length_mismatches():
    raises(lambda: _core.codes.decode_u64(u64(1), [0], [3, 2]), "1 offsets for 2 radices")
    raises(lambda: _core.codes.decode_wide(wide([[1]]), [0, 0], [3]), "2 offsets for 1 radices")
    # No attributes: the only code is 0.
    raises(lambda: _core.codes.decode_wide(wide([[0], [4]]), [], []), cls=CodeError)


def test_encode_argument_lengths_and_zero_radix():
    col = [np.zeros(2, dtype=np.int64)]
    raises(lambda: _core.codes.encode_u64(col, [0, 1], [None], [3]), "1 columns", "2 offsets")
    raises(lambda: _core.codes.encode_u64(col, [0], [None], [3, 4]), "1 columns but 2 radices")
    raises(lambda: _core.codes.encode_u64(col, [0], [None], [0]), "radix of attribute 0 is 0")
    raises(lambda: _core.codes.encode_wide(col, [0], [None], [0], 1), "radix of attribute 0 is 0")
    uneven = [np.zeros(2, dtype=np.int64), np.zeros(3, dtype=np.int8)]
    raises(lambda: _core.codes.encode_u64(uneven, [0, 0], [None, None], [3, 3]),
           "column 1 has 3 rows, column 0 has 2")
    raises(lambda: _core.codes.encode_u64(col, [0], [None], [2**40, 2**40]), "1 columns")
    raises(lambda: _core.codes.encode_u64(col * 2, [0, 0], [None, None], [2**40, 2**40]),
           "needs 2 u64 limbs", "encode_wide")


def test_encode_wide_limbs():
    col = [np.zeros(2, dtype=np.int64)]
    raises(lambda: _core.codes.encode_wide(col, [0], [None], [3], 0), "needs 1 limbs", "got 0")
    raises(lambda: _core.codes.encode_wide(col * 2, [0, 0], [None, None], [2**40, 2**40], 1),
           "needs 2 limbs", "got 1")
    raises(lambda: _core.codes.encode_wide(col, [0], [None], [3], 2**62), "cannot allocate")
    raises(lambda: _core.codes.encode_wide(col, [0], [None], [3], 2**63), "2 rows", "limbs")
    assert _core.codes.encode_wide(col, [0], [None], [3], 2).shape == (2, 2)  # padding is fine


def test_to_digits_and_count_in_table_arguments():
    col = [np.zeros(2, dtype=np.int64)]
    raises(lambda: _core.codes.to_digits(col, [0], [None], [0]), "radix of attribute 0 is 0")
    raises(lambda: _core.codes.to_digits(col, [0], [None], [3, 3]), "1 columns but 2 radices")
    raises(lambda: _core.codes.to_digits(col, [], [None], [3]), "1 columns", "0 offsets")
    raises(lambda: _core.counting.count_in_table(col, [3, 2], np.ones(6, dtype=bool)),
           "1 columns but 2 radices")
    raises(lambda: _core.counting.count_in_table(col, [3], np.ones(4, dtype=bool)),
           "table of 4 cells", "3 cells")


# ---------------------------------------------------------------------------------------------
# randomised kernels (sample.rs, frapp.rs, rng.rs)
# ---------------------------------------------------------------------------------------------


def test_thin_product_radices():
    codes = wide([[0]])
    raises(lambda: _core.sampling.thin_product(KEY, codes, [2, 0], np.ones(2)),
           "radix of attribute 1 is 0")
    raises(lambda: _core.sampling.thin_product(KEY, codes, [2**63, 2**63, 2], np.ones(2)),
           "sum past 2^64")
    raises(lambda: _core.sampling.thin_product(KEY, codes, [2, 3], np.ones(4)),
           "4 ratios for radices summing to 5")
    raises(lambda: _core.sampling.thin_product(KEY, wide([[1], [6]]), [2, 3], np.ones(5)),
           cls=CodeError)


def test_uniform_arguments():
    raises(lambda: _core.sampling.uniform(KEY, 2**62, 0), "cannot allocate")
    raises(lambda: _core.sampling.uniform(KEY, 2, 2**64 - 1), "exceeds 2^64")
    raises(lambda: _core.sampling.uniform(b"short", 2, 0), "5 bytes", "32")
    raises(lambda: _core.sampling.keep_records(b"", wide([[1]]), np.ones(1), 0.5), "0 bytes", "32")


def test_code_arrays_need_limbs():
    raises(lambda: _core.sampling.keep_records(KEY, np.zeros((3, 0), np.uint64), np.ones(1), 0.5),
           "(3, 0)", "at least one limb")
    raises(lambda: _core.sampling.merge_sorted(np.zeros((3, 0), np.uint64),
                                               np.zeros((3, 0), np.uint64)),
           "(3, 0)", "at least one limb")
    raises(lambda: _core.sampling.merge_sorted(np.zeros((0, 0), np.uint64),
                                               np.zeros((0, 0), np.uint64)),
           "0 limbs")
    raises(lambda: _core.sampling.merge_sorted(wide([[1]]), wide([[0, 1]], 2)), "1 and 2 limbs")
    raises(lambda: _core.sampling.frapp_perturb(KEY, wide([[0]]), 2**100, 0.5), "2 limbs", "have 1")
    raises(lambda: _core.sampling.beta_step(KEY, 2**70, 0.0, np.zeros((0, 1), np.uint64)),
           "2 limbs", "have 1")
    raises(lambda: _core.sampling.beta_step(KEY, 10, 0.5, np.zeros((0, 3), np.uint64)), "3 limbs")


def test_beta_step_reaches_the_top_of_a_domain_near_2_128():
    # Segments of 2^120 ranks; the last one once ended at 2^128, which wrapped to 0 (or
    # panicked in a debug build), and that segment's ~1024 codes were never drawn.
    m = 2**128 - 1
    out = _core.sampling.beta_step(KEY, m, 2.0**-110, np.zeros((0, 2), np.uint64))
    codes = [(int(hi) << 64) | int(lo) for hi, lo in out]
    assert codes == sorted(set(codes)) and codes[-1] < m
    top = sum(c >= 255 << 120 for c in codes)
    assert 800 < top < 1300, top

