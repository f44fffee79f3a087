"""Smooth sensitivity of the triangle count and SmoothTriangleMechanism:
LS^(s) against its definition (every graph on 5 nodes, sampled graphs on 6),
the Rust pair frontier against a pure-Python pairwise formula, the exact
rounded-Laplace sampler and the release's output distribution tested
statistically with power, the release contract and the guarantee."""

from __future__ import annotations

import doctest
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.seeding import resolve_seed
from privpub.datasets import load_graph
from privpub.graphs import (
    Graph,
    GraphAnswer,
    SmoothTriangleMechanism,
    count,
    smooth,
    smooth_sensitivity,
    triangle,
)
from privpub.graphs.noise import Bits
from privpub.graphs.smooth import local_sensitivity_at, pair_frontier

ALPHA = 1e-6


def all_graphs(m: int):
    """Edge list, triangles (as edge-index triples) and every graph as a bitmask."""
    pairs = list(itertools.combinations(range(m), 2))
    index = {p: i for i, p in enumerate(pairs)}
    tris = [(index[(a, b)], index[(a, c)], index[(b, c)])
            for a, b, c in itertools.combinations(range(m), 3)]
    masks = np.arange(2 ** len(pairs), dtype=np.int64)
    bits = (masks[:, None] >> np.arange(len(pairs))) & 1
    t = sum(bits[:, i] & bits[:, j] & bits[:, k] for i, j, k in tris)
    # LS(G) by definition: the largest change of T from toggling one edge.
    ls = np.max([np.abs(t[masks ^ (1 << e)] - t) for e in range(len(pairs))], axis=0)
    return pairs, masks, ls


def ls_at_distance_by_definition(g: int, masks, ls, s_max: int) -> list[int]:
    distance = np.array([bin(x).count("1") for x in (masks ^ g).tolist()])
    return [int(ls[distance <= s].max()) for s in range(s_max + 1)]


def graph_of(mask: int, pairs, m: int) -> Graph:
    edges = np.array([p for i, p in enumerate(pairs) if mask >> i & 1], dtype=np.int64)
    return Graph.from_edges(edges.reshape(-1, 2), directed=False, m=m)


def test_ls_at_distance_is_the_definition_on_every_graph_with_5_nodes():
    pairs, masks, ls = all_graphs(5)
    for g in masks.tolist():
        want = ls_at_distance_by_definition(g, masks, ls, 8)
        got = local_sensitivity_at(pair_frontier(graph_of(g, pairs, 5)), 5, np.arange(9))
        assert got.tolist() == want, g


def test_ls_at_distance_is_the_definition_on_sampled_graphs_with_6_nodes():
    pairs, masks, ls = all_graphs(6)
    rng = np.random.default_rng(7)
    for g in rng.choice(masks, 40, replace=False).tolist():
        want = ls_at_distance_by_definition(g, masks, ls, 10)
        got = local_sensitivity_at(pair_frontier(graph_of(g, pairs, 6)), 6, np.arange(11))
        assert got.tolist() == want, g


def pairwise(adj: np.ndarray, beta: float) -> tuple[list[int], float]:
    """LS^(s) for s = 0..2m and S* from every pair, by the formula, in plain Python."""
    m = len(adj)
    ls = []
    for s in range(2 * m + 1):
        best = 0
        for i in range(m):
            for j in range(i + 1, m):
                others = [k for k in range(m) if k not in (i, j)]
                a = sum(adj[i][k] and adj[j][k] for k in others)
                b = sum(adj[i][k] != adj[j][k] for k in others)
                best = max(best, min(a + (s + min(s, b)) // 2, m - 2))
        ls.append(best)
    return ls, max(math.exp(-beta * s) * x for s, x in enumerate(ls))


@pytest.mark.parametrize("m, p, loops", [(9, 0.3, False), (14, 0.5, True), (20, 0.15, False),
                                         (16, 0.9, False)])
def test_frontier_matches_the_pairwise_formula_on_random_graphs(m, p, loops):
    rng = np.random.default_rng(m)
    upper = np.triu(rng.random((m, m)) < p, 1)
    adj = (upper | upper.T).astype(int)
    edges = np.argwhere(upper)
    if loops:  # self-loops play no part in a triangle
        edges = np.vstack([edges, [[0, 0], [3, 3]]])
    g = Graph.from_edges(edges, directed=False, m=m)
    beta = 0.2
    want_ls, want_s = pairwise(adj.tolist(), beta)
    got_ls = local_sensitivity_at(pair_frontier(g), m, np.arange(2 * m + 1))
    assert got_ls.tolist() == want_ls
    got = smooth_sensitivity(g, beta)
    assert got.value == pytest.approx(want_s, rel=1e-12) and got.local == want_ls[0]


def test_facebook_local_sensitivity_is_the_largest_common_neighbourhood():
    edges = load_graph("facebook")
    g = Graph.from_edges(edges, directed=False)
    n = g.m
    a = sp.csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    a = ((a + a.T) > 0).astype(np.int64)
    square = (a @ a).tocoo()
    want = int(square.data[square.row != square.col].max())
    s = smooth_sensitivity(g, SmoothTriangleMechanism(1.0, 1 / n**2, n).beta)
    assert s.local == want == 293
    # LS^(s) grows by at most 1 per step and β ≈ 0.029 > 1/293, so S* = LS.
    assert s.value == 293 and s.at_distance == 0


def rounded_laplace_pmf(k: np.ndarray, b: float) -> np.ndarray:
    k = np.abs(k)
    tail = np.exp(-(np.maximum(k, 0.5) - 0.5) / b)  # Pr[|K| ≥ k], and 1 at k = 0
    nxt = np.exp(-(k + 0.5) / b)
    return np.where(k == 0, 1 - np.exp(-0.5 / b), (tail - nxt) / 2)


def chi2_pvalue(samples: np.ndarray, b: float, cut: int = 10) -> float:
    z = np.clip(samples, -cut, cut)
    support = np.arange(-cut, cut + 1)
    observed = np.array([(z == k).sum() for k in support])
    expected = rounded_laplace_pmf(support, b)
    expected[0] = expected[-1] = math.exp(-(cut - 0.5) / b) / 2
    return stats.chisquare(observed, expected / expected.sum() * len(samples)).pvalue


def test_rounded_laplace_sampler_has_the_stated_law_with_power():
    bits = Bits(resolve_seed(3).derive("rounded"))
    b = 2.5
    draws = np.array([bits.rounded_laplace(Fraction(b)) for _ in range(20_000)])
    assert chi2_pvalue(draws, b) > ALPHA
    # Power: the same 20,000 draws are rejected at α = 1e-6 against a scale 20% off
    # (and the discrete Laplace of the same scale is not mistaken for it).
    assert chi2_pvalue(draws, 1.2 * b) < ALPHA and chi2_pvalue(draws, b / 1.2) < ALPHA
    dlap = np.array([bits.discrete_laplace(Fraction(b)) for _ in range(20_000)])
    assert chi2_pvalue(dlap, b) < ALPHA


def small_graph(m: int = 12) -> Graph:
    return Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4], [4, 2]]),
                            directed=False, m=m)


@pytest.mark.slow
def test_answers_have_the_smooth_sensitivity_noise():
    g = small_graph()
    mech = SmoothTriangleMechanism.for_graph(2.0, 1e-3, g)
    s = smooth_sensitivity(g, mech.beta)
    assert mech.beta == pytest.approx(2.0 / (2 * math.log(2 / 1e-3)))
    assert mech.noise_scale(g) == pytest.approx(12 * s.value / 2.0)
    truth = count(g, triangle())
    assert truth == 12
    noise = np.array([mech.answer(g, seed=i).value - truth for i in range(4000)])
    scale = mech.noise_scale(g)
    # 4,000 answers: accepted at α = 1e-6, and rejected for a 6-times (not 12-times) scale,
    # i.e. the noise on Δ = 6T is 6× that on T.
    assert chi2_pvalue(noise, scale, cut=40) > ALPHA
    assert chi2_pvalue(noise, scale / 2, cut=40) < ALPHA


def test_answers_reopen_and_refuse_forgeries():
    g = small_graph()
    mech = SmoothTriangleMechanism.for_graph(1.0, 1e-4, g)
    a = mech.answer(g, seed=5)
    assert a.value == mech.answer(g, seed=5).value
    back = GraphAnswer.from_dict(a.to_dict())
    assert back.value == a.value and back.parameters == a.parameters
    assert isinstance(back.mechanism_object(), SmoothTriangleMechanism)
    assert "beta" in a.parameters and not any("smooth" in k for k in a.parameters)
    for field, value, match in [("beta", 0.5, "'beta'"), ("query", "q(x) :- R(x, x)", "'query'"),
                                ("delta", 1.5, "delta must be in")]:
        forged = a.to_dict()
        forged["parameters"] = dict(forged["parameters"], **{field: value})
        with pytest.raises((ArtifactError, ParameterError), match=match):
            GraphAnswer.from_dict(forged)


def test_refusals():
    directed = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True, m=5)
    with pytest.raises(ParameterError, match="undirected"):
        SmoothTriangleMechanism.for_graph(1.0, 1e-3, directed)
    with pytest.raises(ParameterError, match="undirected"):
        smooth_sensitivity(directed, 0.1)
    with pytest.raises(ParameterError, match="delta must be in"):
        SmoothTriangleMechanism(1.0, 0.0, m=10)
    with pytest.raises(ParameterError, match="epsilon must be positive"):
        SmoothTriangleMechanism(0.0, 0.1, m=10)
    with pytest.raises(ParameterError, match="smoothing must be positive"):
        smooth_sensitivity(small_graph(), 0.0)
    with pytest.raises(ParameterError, match="built for m = 10"):
        SmoothTriangleMechanism(1.0, 1e-3, m=10).answer(small_graph(12))


def test_guarantee_is_edge_level_dp_and_not_adversarial_privacy():
    g = small_graph()
    claims = {c.name: c for c in SmoothTriangleMechanism.for_graph(1.0, 1e-4, g)
              .guarantee().claims}
    dp = claims["(ε, δ)-differential privacy (add or remove one edge)"]
    assert dp.holds and "δ = 0.0001" in dp.statement and "one edge added or removed" in \
        dp.statement
    adversarial = claims["(ε, γ)-adversarial privacy (Algorithm 2.1's notion)"]
    assert not adversarial.holds and "different privacy notion" in adversarial.statement
    assert not claims["pure ε-indistinguishability"].holds
    # The usefulness bound holds for every graph: check it at the worst scale S* = m − 2.
    mech = SmoothTriangleMechanism(1.0, 1e-4, m=12)
    sigma, _ = mech.error_bound()
    b = 12 * 10 / 1.0
    assert math.exp(-(sigma - 0.5) / b) <= 1 / 12 < math.exp(-(sigma - 1.5) / b)


def test_module_examples():
    assert doctest.testmod(smooth).failed == 0


@pytest.mark.parametrize("m, beta", [(2000, 0.001), (100, 0.001), (3, 5.0)])
def test_smooth_sensitivity_searches_far_enough(m, beta):
    # The empty graph: every a_ij = b_ij = 0, so LS^(s) = min(⌊s/2⌋, m − 2). At β = 0.001
    # and m = 2000 the maximum is near s = 1/β = 1000; at m = 100 it is at the cap s = 196.
    g = Graph.from_edges(np.zeros((0, 2), dtype=np.int64), directed=False, m=m)
    s = np.arange(4 * m + 1)
    values = np.exp(-beta * s) * np.minimum(s // 2, m - 2)
    got = smooth_sensitivity(g, beta)
    assert got.value == pytest.approx(values.max(), rel=1e-12)
    assert got.at_distance == int(np.argmax(values)) and got.local == 0
