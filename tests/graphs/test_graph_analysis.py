"""The CQ(≠) parser and the analysis of Sec. 3.1 (density, homomorphisms,
dense queries, derivatives, stability), and global sensitivity checked by
exhaustive search over every instance of R on tiny domains."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from graph_brute import exhaustive_global_sensitivity

from privpub.core.errors import QueryError
from privpub.graphs import (
    CQ,
    Var,
    clique,
    cycle,
    dense,
    density,
    global_sensitivity,
    is_stable,
    path_from,
    pattern,
    stability,
    triangle,
    two_path,
)
from privpub.graphs.analysis import derivatives, homomorphic_images


def test_parse_round_trip_and_facts():
    q = CQ.parse("q(x,y,z) :- R(x,y), R(y,z), R(z,x), x != y, y != z, z != x")
    assert q == CQ.parse(str(q)) and q.g == 3 and q.v == 3
    assert CQ.parse(str(triangle())).goals == triangle().goals
    c = CQ.parse("d(x) :- R('alice', y), R(y, x), x ≠ 7")
    assert {k.value for k in c.constants} == {"alice", 7}
    assert CQ.parse(str(c)) == c


@pytest.mark.parametrize("text, message, column", [
    ("q(x) :- R(x, y", "expected ',' or ')', found end of query", 14),
    ("q(x) :- R(x, y), x = y", "unexpected character '='", 19),
    ("q(3) :- R(x, y)", "head term 3 is a constant", 2),
    ("q(z) :- R(x, y)", "head variable z appears in no subgoal", 2),
    ("q(x) :- R(x, y), x != x", "can never hold", 17),
    ("q(x) :- R(x, y), w != x", "variable w of a disequality appears in no subgoal", 17),
    ("q(x) R(x, y)", "expected ':-'", 5),
    ("q(x) :- R(x, y), R(x)", "arities 2 and 1", 8),
])
def test_parse_errors_point_at_the_token(text, message, column):
    with pytest.raises(QueryError, match=re.escape(message)) as err:
        CQ.parse(text)
    assert f"position {column}" in str(err.value)
    caret = str(err.value).splitlines()[-1]
    assert caret.index("^") - 2 == column  # the caret sits under the token


def test_paper_density_examples():
    assert density(triangle()) == 1 and dense(triangle()).dense
    assert density(two_path()) == Fraction(2, 3) and not dense(two_path()).dense
    q = CQ.parse("q(x, y, z) :- R(x, y, z), R(x, z, y), R(x, y, y)")
    assert density(q) == 1
    check = dense(q)
    assert not check.dense  # its image R(x, z, z) (y ↦ z) has density 1/2
    _, image = check.witness
    assert len(image.goals) == 1 and density(image) == Fraction(1, 2)
    assert "density 1/2 < 1" in check.explain()


def test_homomorphic_images_keep_disequalities():
    images = [image for _, image in homomorphic_images(triangle())]
    # Δ's variables are pairwise distinct: only renamings and constants (none here).
    assert len(images) == 1
    free = CQ.parse("q(x, y) :- R(x, y)")
    assert len(list(homomorphic_images(free))) == 2  # identity and x, y merged
    const = CQ.parse("q(x, y) :- R(x, y), R(y, 1), x != 1")
    maps = [h for h, _ in homomorphic_images(const)]
    # x ↦ y, y ↦ 1 are allowed; x ↦ 1 breaks x ≠ 1.
    assert {str(h[Var("y")]) for h in maps} == {"x", "y", "1"}
    assert all(str(h[Var("x")]) != "1" for h in maps)


def test_derivative_of_triangle_is_the_paper_example():
    d = {str(q) for g, a, q in derivatives(triangle()) if str(g) == "R(x, y)"}
    # ∂Δ/∂(R(x,y),(a,b)) = R(b,z), R(z,a) with z distinct from a and b.
    assert "dtriangle(z) :- R('#2', z), R(z, '#1'), z != '#1', z != '#2'" in d


@pytest.mark.parametrize("query", [triangle(), two_path(), cycle(4), path_from(0, 2),
                                   path_from(0, 3), clique(3),
                                   pattern([(0, 1), (1, 2), (1, 3)])])
def test_paper_stable_queries_by_exhaustive_derivatives(query):
    result = stability(query, use_proposition=False)
    assert result.stable is True and result.examined > 0, result.reason


def test_prop_2_5_applies_to_connected_patterns_only():
    assert "Prop. 2.5" in stability(pattern([(0, 1), (1, 2), (2, 3)])).reason
    assert "Prop. 2.5" not in stability(path_from(0, 2)).reason
    disconnected = pattern([(0, 1), (2, 3)])
    result = stability(disconnected)
    assert result.stable is False and "order-1 derivative" in result.reason
    assert "density 1/2 < 1" in result.reason and not is_stable(disconnected)


def test_budget_leaves_the_answer_undecided():
    result = stability(clique(4), use_proposition=False, budget=50)
    assert result.stable is None and "undecided" in result.reason


@pytest.mark.parametrize("query, m", [
    (triangle(), 3), (triangle(), 4), (two_path(), 3), (two_path(), 4), (cycle(4), 4),
    (clique(2), 3), (clique(3), 4), (path_from(0, 1), 3), (path_from(0, 2), 3),
    (pattern([(0, 1), (1, 2), (1, 3)]), 4),
])
def test_global_sensitivity_matches_exhaustive_search(query, m):
    gs = global_sensitivity(query, m)
    assert gs.exact
    assert gs.value == exhaustive_global_sensitivity(query, m)


def test_general_bound_is_an_upper_bound():
    q = CQ.parse("q(x, y) :- R(x, y), R(y, x), R(x, 1)")
    gs = global_sensitivity(q, 3)
    assert not gs.exact and gs.value >= exhaustive_global_sensitivity(q, 3)


def test_exhaustive_search_has_power():
    """The exhaustive search tells Δ's 3(m−2) from the paper's m−2 for sets."""
    assert exhaustive_global_sensitivity(triangle(), 4) == 6 != 4 - 2
    assert np.isfinite(float(density(triangle())))
