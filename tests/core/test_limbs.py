"""Exact ints ↔ u64 limb rows (privpub.core.limbs), at the edges and past two limbs."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privpub.core.errors import CodeError, ParameterError
from privpub.core.limbs import ints_from_limbs, limbs_from_ints

EDGES = [0, 1, 2**64 - 1, 2**64, 2**64 + 1, 2**128 - 1, 2**128 + 5, 2**191 + 2**64 + 3]


def test_edges_round_trip_in_three_limbs_with_the_words_written_out():
    rows = limbs_from_ints(EDGES, 3)
    assert rows.dtype == np.uint64 and rows.shape == (len(EDGES), 3)
    assert rows.flags.c_contiguous
    top = 2**64 - 1
    assert rows.tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, top], [0, 1, 0], [0, 1, 1],
                             [0, top, top], [1, 0, 5], [2**63, 1, 3]]
    assert ints_from_limbs(rows) == EDGES


def test_one_limb_and_one_dimensional_codes():
    assert limbs_from_ints([0, 2**64 - 1], 1).tolist() == [[0], [2**64 - 1]]
    assert ints_from_limbs(np.array([0, 2**64 - 1], dtype=np.uint64)) == [0, 2**64 - 1]
    assert ints_from_limbs(np.array([[0], [2**64 - 1]], dtype=np.uint64)) == [0, 2**64 - 1]


def test_empty():
    assert limbs_from_ints([], 4).shape == (0, 4)
    assert ints_from_limbs(np.zeros((0, 4), dtype=np.uint64)) == []


@given(st.integers(1, 9).flatmap(
    lambda limbs: st.tuples(st.just(limbs),
                            st.lists(st.integers(0, 2**(64 * limbs) - 1), max_size=20))))
def test_any_number_of_limbs_round_trips(case):
    limbs, values = case
    rows = limbs_from_ints(values, limbs)
    assert rows.shape == (len(values), limbs)
    assert ints_from_limbs(rows) == values
    # Rows compare lexicographically as their ints do (what sorting codes relies on).
    assert sorted(map(tuple, rows.tolist())) == [tuple(r) for r in
                                                limbs_from_ints(sorted(values), limbs).tolist()]


def test_numpy_integers_are_ints():
    assert ints_from_limbs(limbs_from_ints(np.array([3, 2**63], dtype=np.uint64), 2)) \
        == [3, 2**63]


@pytest.mark.parametrize("value", [-1, 2**128, 1.0, "1", True, None])
def test_a_value_that_does_not_fit_is_named(value):
    with pytest.raises(CodeError, match=r"value #1 = .* is not an int in \[0, 2\^128\)"):
        limbs_from_ints([5, value], 2)


@pytest.mark.parametrize("limbs", [0, -1, 1.0, True])
def test_limbs_must_be_a_positive_int(limbs):
    with pytest.raises(ParameterError, match="limbs must be an int >= 1"):
        limbs_from_ints([1], limbs)


@pytest.mark.parametrize("rows", [np.array([[1.0, 2.0]]), np.zeros((1, 1, 1), dtype=np.uint64),
                                  np.array([[1, -2]])])
def test_bad_limb_rows_are_refused(rows):
    with pytest.raises(CodeError, match="limb"):
        ints_from_limbs(rows)


def test_dask_code_sample_reads_three_limb_codes():
    """The Dask range partitioning samples codes as ints: past two limbs too
    (it assumed at most two before the limb module)."""
    dd = pytest.importorskip("dask.dataframe")
    from privpub.tables.distributed import code_sample

    values = [2**130 + 7, 5, 2**64, 2**129]
    rows = limbs_from_ints(values, 3)
    frame = pd.DataFrame({f"code{j}": rows[:, j] for j in range(3)})
    sample = code_sample(dd.from_pandas(frame, npartitions=2), 3)
    assert sample.codes == sorted(values) and sample.total == 4
