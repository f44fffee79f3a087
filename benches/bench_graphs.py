"""Subgraph counting (privpub.graphs.count, Rust) against the best numpy /
scipy / networkx versions a capable user would write, same run.

- Δ: scipy's masked sparse product on the strictly upper triangle L of the
  adjacency: T = sum((L @ L) ∘ L), one product, no trace; Δ = 6T ordered
  assignments. Also networkx's ``triangles``.
- c_4: the closed formula from a sparse A² (for each unordered pair the
  common neighbours k, Σ C(k, 2) / 2 cycles), Δ-style ×8 for assignments;
  and privpub's generic join (``method="join"``) against its own closed
  formula (two-path counters, the special path).
- K_4: degree-ordered orientation and, per vertex, the triangles of its
  out-neighbourhood by one dense numpy product (``numpy_four_cliques``);
  networkx has no k-clique count (``enumerate_all_cliques`` lists every
  clique of every size, so no networkx K_4 baseline).
- LS_Δ (local sensitivity, privpub.graphs.local_sensitivity): on a symmetric
  R the tuple (a, b) fills one subgoal of 3·(A²)[b, a] assignments, so the
  scipy version is 3 × the largest off-diagonal entry of the sparse A².
- igraph (C core): Δ by ``list_triangles()`` (its fastest triangle count;
  ``motifs_randesu(size=3)`` is ~6× slower), K_4 by ``cliques(4, 4)``
  (``motifs_randesu(size=4)`` did not finish in 5 minutes on facebook).
- python-graphblas (SuiteSparse:GraphBLAS): Δ by the masked product
  C⟨L⟩ = L·L over the plus_pair semiring on the strictly lower triangle L
  (Sandia's LL), one reduction; L is built outside the timing, as privpub's
  Graph is.
- S*_β of Δ (privpub.graphs.smooth_sensitivity, δ = 1/m² at ε = 1) against
  scipy's A² with the same frontier taken in numpy (max b_ij per a_ij over
  the nonzero pairs; the pairs with a_ij = 0 are not in A², so this
  baseline covers only a_ij ≥ 1 and is a lower bound on the work needed).

Graphs: the embedded facebook (88k edges) and, at full size, a seeded random
graph with 300k edges and skewed degrees (Chung–Lu-like: both ends drawn
with probability ∝ rank^−0.6 over 100,000 nodes, numpy seed 0; no download).
With benchmarks disabled the smaller ca-GrQc stands in, so the file runs as a
quick test.
"""

import igraph as ig
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)

from privpub.datasets import load_graph
from privpub.graphs import (
    Graph,
    SmoothTriangleMechanism,
    clique,
    count,
    cycle,
    local_sensitivity,
    smooth_sensitivity,
    triangle,
)
from privpub.graphs.smooth import pair_frontier

_CACHE: dict[str, np.ndarray] = {}


def edges_for(name: str, request) -> np.ndarray:
    if not full_size(request.config):
        name = "ca-grqc"
    if name not in _CACHE:
        if name == "random-300k":
            rng = np.random.default_rng(0)
            weights = 1.0 / np.arange(1, 100_001) ** 0.6
            p = weights / weights.sum()
            raw = rng.choice(100_000, size=(340_000, 2), p=p)
            raw = raw[raw[:, 0] != raw[:, 1]]
            raw = np.unique(np.sort(raw, axis=1), axis=0)[:300_000]
            _CACHE[name] = raw
        else:
            e = load_graph(name)
            e = e[e[:, 0] != e[:, 1]]
            _CACHE[name] = np.unique(np.sort(e, axis=1), axis=0)
    return _CACHE[name]


def upper(edges: np.ndarray) -> sp.csr_array:
    n = int(edges.max()) + 1
    ones = np.ones(len(edges), dtype=np.int64)
    return sp.csr_array((ones, (edges[:, 0], edges[:, 1])), shape=(n, n))


def scipy_triangles(edges: np.ndarray) -> int:
    low = upper(edges)
    return 6 * int((low @ low).multiply(low).sum())


def scipy_four_cycles(edges: np.ndarray) -> int:
    a = upper(edges)
    a = a + a.T
    common = sp.triu(a @ a, k=1).data
    return 8 * (int((common * (common - 1) // 2).sum()) // 2)


def numpy_four_cliques(edges: np.ndarray) -> int:
    """K_4 assignments (24 per clique) as a numpy user counts them: orient each edge
    from the lower to the higher (degree, id) rank, so out-degrees stay small, and
    count the triangles of each vertex's out-neighbourhood with one dense product
    ((S @ S) ∘ S summed) on the rows of a dense oriented adjacency (facebook's 4k
    nodes: 65 MB, built inside the timing). Each K_4 is counted once, at its
    lowest-ranked vertex. (A per-edge set intersection in Python was 250× slower.)"""
    n = int(edges.max()) + 1
    u, v = edges[:, 0], edges[:, 1]
    degree = np.bincount(edges.ravel(), minlength=n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), degree))] = np.arange(n)
    up = rank[u] < rank[v]
    out = sp.csr_array((np.ones(len(edges), dtype=np.float32),
                        (np.where(up, u, v), np.where(up, v, u))), shape=(n, n))
    dense = out.toarray()
    total = 0.0
    for a in np.flatnonzero(np.diff(out.indptr) >= 3):
        idx = out.indices[out.indptr[a]:out.indptr[a + 1]]
        s = dense[np.ix_(idx, idx)]
        total += float(((s @ s) * s).sum())
    return 24 * round(total)


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
@pytest.mark.benchmark(group="triangles vs scipy masked product")
def test_triangles_privpub(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs scipy masked product: {name}"
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    assert benchmark(lambda: count(g, triangle())) == scipy_triangles(edges)


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
@pytest.mark.benchmark(group="triangles vs scipy masked product")
def test_triangles_scipy(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs scipy masked product: {name}"
    benchmark.extra_info["role"] = "baseline"
    assert benchmark(lambda: scipy_triangles(edges)) > 0


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_privpub_vs_networkx(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs networkx: {name}"
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, triangle()))


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_networkx(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs networkx: {name}"
    benchmark.extra_info["role"] = "baseline"
    nxg = nx.Graph(edges.tolist())
    n = benchmark(lambda: sum(nx.triangles(nxg).values()) // 3)
    assert 6 * n == scipy_triangles(edges)


@pytest.mark.benchmark(group="c_4 vs scipy A² formula: facebook")
def test_four_cycles_privpub(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    assert benchmark(lambda: count(g, cycle(4))) == scipy_four_cycles(edges)


@pytest.mark.benchmark(group="c_4 vs scipy A² formula: facebook")
def test_four_cycles_scipy(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "baseline"
    benchmark(lambda: scipy_four_cycles(edges))


@pytest.mark.benchmark(group="c_4 generic join vs closed formula (two-path counters): facebook")
def test_four_cycles_generic_join(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    assert benchmark(lambda: count(g, cycle(4), method="join")) == count(g, cycle(4))


@pytest.mark.benchmark(group="c_4 generic join vs closed formula (two-path counters): facebook")
def test_four_cycles_closed_formula(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "baseline"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, cycle(4)))


@pytest.mark.benchmark(group="K_4 vs numpy oriented out-neighbourhood triangles: facebook")
def test_four_cliques_privpub(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, clique(4)))


@pytest.mark.benchmark(group="K_4 vs numpy oriented out-neighbourhood triangles: facebook")
def test_four_cliques_numpy(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "baseline"
    g = Graph.from_edges(edges, directed=False)
    assert benchmark(lambda: numpy_four_cliques(edges)) == count(g, clique(4))


def igraph_of(edges: np.ndarray) -> ig.Graph:
    return ig.Graph(n=int(edges.max()) + 1, edges=edges.tolist())


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_privpub_vs_igraph(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs igraph list_triangles: {name}"
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, triangle()))


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_igraph(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs igraph list_triangles: {name}"
    benchmark.extra_info["role"] = "baseline"
    ig_graph = igraph_of(edges)
    n = benchmark(lambda: len(ig_graph.list_triangles()))
    assert 6 * n == scipy_triangles(edges)


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_four_cliques_privpub_vs_igraph(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"K_4 vs igraph cliques(4, 4): {name}"
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, clique(4)))


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_four_cliques_igraph(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"K_4 vs igraph cliques(4, 4): {name}"
    benchmark.extra_info["role"] = "baseline"
    ig_graph = igraph_of(edges)
    n = benchmark.pedantic(lambda: len(ig_graph.cliques(4, 4)), rounds=1)
    assert 24 * n == count(Graph.from_edges(edges, directed=False), clique(4))


def graphblas_lower(edges: np.ndarray):
    gb = pytest.importorskip("graphblas", reason="python-graphblas is not installed "
                             "(pip install python-graphblas, or the test extra)")
    n = int(edges.max()) + 1
    return gb, n, gb.Matrix.from_coo(edges[:, 1], edges[:, 0], True, nrows=n, ncols=n)


def graphblas_triangles(gb, n: int, low) -> int:
    c = gb.Matrix(int, n, n)
    c(low.S) << low.mxm(low, gb.semiring.plus_pair)
    return 6 * int(c.reduce_scalar().new().value)


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_privpub_vs_graphblas(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs python-graphblas masked plus_pair: {name}"
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    benchmark(lambda: count(g, triangle()))


@pytest.mark.parametrize("name", ["facebook", "random-300k"])
def test_triangles_graphblas(benchmark, request, name):
    edges = edges_for(name, request)
    benchmark.group = f"triangles vs python-graphblas masked plus_pair: {name}"
    benchmark.extra_info["role"] = "baseline"
    gb, n, low = graphblas_lower(edges)
    assert benchmark(lambda: graphblas_triangles(gb, n, low)) == scipy_triangles(edges)


def scipy_triangle_local_sensitivity(edges: np.ndarray) -> int:
    a = upper(edges)
    square = ((a + a.T) @ (a + a.T)).tocoo()
    return 3 * int(square.data[square.row != square.col].max())


@pytest.mark.benchmark(group="LS of Δ vs scipy A²: facebook")
def test_triangle_local_sensitivity_privpub(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    got = benchmark(lambda: local_sensitivity(g, triangle()).value)
    assert got == scipy_triangle_local_sensitivity(edges)


@pytest.mark.benchmark(group="LS of Δ vs scipy A²: facebook")
def test_triangle_local_sensitivity_scipy(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "baseline"
    benchmark(lambda: scipy_triangle_local_sensitivity(edges))


def scipy_frontier(edges: np.ndarray) -> np.ndarray:
    """max b_ij per a_ij ≥ 1 from the sparse A² (b_ij = d_i + d_j − 2a_ij − 2·[i ~ j])."""
    a = upper(edges)
    a = a + a.T
    deg = np.asarray(a.sum(axis=1)).ravel()
    sq = sp.triu(a @ a, k=1).tocoo()
    adjacent = np.asarray(a[sq.row, sq.col]).ravel()
    b = deg[sq.row] + deg[sq.col] - 2 * sq.data - 2 * adjacent
    best = np.full(int(sq.data.max()) + 1, -1)
    np.maximum.at(best, sq.data, b)
    return best


@pytest.mark.benchmark(group="S* of Δ (smooth sensitivity) vs scipy A² frontier: facebook")
def test_smooth_sensitivity_privpub(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "privpub"
    g = Graph.from_edges(edges, directed=False)
    beta = SmoothTriangleMechanism(1.0, 1 / g.m**2, g.m).beta
    s = benchmark(lambda: smooth_sensitivity(g, beta))
    want = scipy_frontier(edges)
    assert s.local == len(want) - 1
    assert np.array_equal(pair_frontier(g)[1:], want[1:])


@pytest.mark.benchmark(group="S* of Δ (smooth sensitivity) vs scipy A² frontier: facebook")
def test_smooth_sensitivity_scipy(benchmark, request):
    edges = edges_for("facebook", request)
    benchmark.extra_info["role"] = "baseline"
    benchmark(lambda: scipy_frontier(edges))
