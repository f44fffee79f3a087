"""The Rust EM (``_core.splu.em_batch`` behind :func:`privpub.splu.em.paper_em`) against
the numpy reference (tests/splu/em_reference.py), the loop the library ran before.

Equal means equal to the bit: the same iterations and converged flags for every query
and the same x. The kernel sums in the reference's order (em_reference.py says why:
with another order a rule on the edge of firing fires a step apart, which moves the
reported count by up to its tolerance, 10⁻⁶).
"""

from __future__ import annotations

import numpy as np
import pytest
from em_reference import reference_em

import privpub._core as _core
from privpub.core.errors import ParameterError, ShapeError
from privpub.splu.em import paper_em, transition_matrix


def assert_same(got: tuple, want: tuple) -> None:
    (x, its, conv), (rx, rits, rconv) = got, want
    np.testing.assert_array_equal(its, rits)
    np.testing.assert_array_equal(conv, rconv)
    np.testing.assert_array_equal(x, rx)


def published(rng: np.random.Generator, q: int, w: int, group_size: int) -> np.ndarray:
    """State counts as a release publishes them: noise-free Mᵀx of a random x,
    Poisson-perturbed, with counts from a few records to thousands."""
    scale = rng.choice([3.0, 40.0, 2_000.0], size=(q, 1))
    x = rng.gamma(0.7, 1.0, size=(q, 2 ** (w + 1))) * scale
    y = np.einsum("qik,qi->qk", transition_matrix(x, group_size), x)
    return rng.poisson(y).astype(float)


@pytest.mark.parametrize("w", [1, 2])
@pytest.mark.parametrize("stopping", ["count", "paper"])
@pytest.mark.parametrize("exact_rate", [False, True])
def test_the_kernel_is_the_reference_on_seeded_batches(w, stopping, exact_rate):
    rng = np.random.default_rng(100 * w + 10 * (stopping == "paper") + exact_rate)
    for group_size in (2, 3, 5):
        y = published(rng, 150, w, group_size)
        args = (y, group_size, None, 3_000, exact_rate, stopping)
        assert_same(paper_em(*args), reference_em(*args))


def test_edge_cases_are_the_reference():
    """Zero rows (not iterated), an empty P block, every record in one state, one
    record, a state at 0, a count decaying towards 0, and queries each rule runs to
    its cap (10,000 steps), besides caps of 1 and 3."""
    y = np.array([
        [0, 0, 0, 0],            # no records
        [30, 10, 0, 0],          # P holds no records
        [0, 0, 0, 50],           # every record in P ∧ s
        [0, 0, 0, 1],            # one record
        [0, 0, 1, 0],
        [50, 0, 20, 7],          # a state at 0
        [800, 40, 150, 2],       # the requested count decays towards 0
        [400, 100, 95, 5],
        [764, 729, 846, 175],    # γ = 2: the paper rule runs to the cap
        [476, 380, 431, 429],    # γ = 2: so does the count rule
    ], dtype=float)
    for exact_rate in (False, True):
        for group_size in (2, 5):
            for stopping, max_iter in (("count", 10_000), ("paper", 10_000), ("paper", 3),
                                       ("count", 1)):
                args = (y, group_size, None, max_iter, exact_rate, stopping)
                got = paper_em(*args)
                assert_same(got, reference_em(*args))
                assert got[1][0] == 0 and got[2][0]  # no records: converged after 0 steps
    for stopping, capped in (("paper", 8), ("count", 9)):  # the cap is reached and said
        _, its, conv = paper_em(y, 2, max_iter=10_000, stopping=stopping)
        assert not conv[capped] and its[capped] == 10_000


def test_the_kernel_is_the_reference_with_three_attributes_and_tight_tolerances():
    rng = np.random.default_rng(5)
    y = published(rng, 60, 3, 4)
    for stopping, tol in (("count", 1e-12), ("paper", 1e-9)):
        args = (y, 4, tol, 20_000, False, stopping)
        assert_same(paper_em(*args), reference_em(*args))


def test_a_query_in_the_batch_does_not_depend_on_the_others():
    rng = np.random.default_rng(8)
    y = published(rng, 40, 2, 5)
    whole = paper_em(y, 5)
    for i in (0, 17, 39):
        one = paper_em(y[i:i + 1], 5)
        assert one[1][0] == whole[1][i] and np.array_equal(one[0][0], whole[0][i])


def test_bad_input_is_an_error_naming_it():
    y = np.array([[5.0, 1.0, -2.0, 3.0]])
    with pytest.raises(ParameterError, match=r"y\[0, 2\] = -2"):
        paper_em(y, 5, stopping="paper")
    with pytest.raises(ParameterError, match=r"y\[1, 3\] = NaN"):
        paper_em(np.array([[1.0, 1, 1, 1], [1, 1, 1, np.nan]]), 5, stopping="paper")
    with pytest.raises(ShapeError, match="power of two"):
        paper_em(np.ones((2, 6)), 5)
    with pytest.raises(ShapeError, match="queries, states"):
        paper_em(np.ones(4), 5)
    with pytest.raises(ShapeError, match="power of two"):
        _core.splu.em_batch(np.ones((2, 6)), np.ones((2, 6)), 5, False, "paper", 0.01, 10)
    with pytest.raises(ParameterError, match="stopping"):
        paper_em(np.ones((1, 4)), 5, stopping="aitken")
    ones = np.ones((1, 4))
    with pytest.raises(ParameterError, match="group_size"):
        _core.splu.em_batch(ones, ones, 1, False, "count", 1e-6, 10)
    with pytest.raises(ParameterError, match="tol"):
        _core.splu.em_batch(ones, ones, 5, False, "count", 0.0, 10)
    with pytest.raises(ParameterError, match="max_iter"):
        _core.splu.em_batch(ones, ones, 5, False, "count", 1e-6, -1)
    with pytest.raises(ParameterError, match="stopping"):
        _core.splu.em_batch(ones, ones, 5, False, "aitken", 1e-6, 10)
    with pytest.raises(ShapeError, match="start"):
        _core.splu.em_batch(ones, np.ones((2, 4)), 5, False, "count", 1e-6, 10)
    with pytest.raises(ParameterError, match=r"start\[0, 1\] = inf"):
        _core.splu.em_batch(ones, np.array([[1.0, np.inf, 1, 1]]), 5, False, "count", 1e-6, 10)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_kernel_is_the_reference_on_a_census_batch():
    """Every (one equality, occupation value) query on the 500K synthetic census the
    benchmark uses, each rule: the published counts of real predicates (most
    queries stop at once at the interior fixed point, some run thousands of steps)."""
    from privpub.datasets import synthetic_census
    from privpub.splu import SPLUGen, reconstruct_many

    df, schema = synthetic_census(500_000, seed=0)
    view = SPLUGen(5, "occupation", schema=schema).publish(df, seed=0)
    occupations = schema.projection(["occupation"])["occupation"].tolist()
    others = [a for a in schema.names if a != "occupation"]
    queries = [(f"{a} = {v}", {"occupation": s}) for a in others
               for v in schema.projection([a])[a].tolist()[:12] for s in occupations]
    y = np.stack(reconstruct_many(view, queries).states)
    for stopping in ("count", "paper"):
        got, want = paper_em(y, 5, stopping=stopping), reference_em(y, 5, stopping=stopping)
        assert_same(got, want)
        assert got[1].max() > 100  # the batch holds long runs, not only one-step stops
