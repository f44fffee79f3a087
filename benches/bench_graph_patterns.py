"""Patterns as a user writes them, ``count(g, natural_query)``, beside the
best specialised method, same run (issue 24). The ratio the summary reports
is baseline / privpub (above 1: privpub is faster).

- K_4 written one atom per pair (6 atoms and 6 disequalities) against the
  clique path (``count(g, clique(4))``, degree-ordered clique listing): the
  6-atom form is recognised by its meaning on a symmetric relation.
- K_4 forced through the generic join (``method="join"``: symmetry broken
  over the 24 automorphisms, degree-ranked cuts) against the clique path.
- A 5-cycle, a diamond and a 4-path, which no special path knows (privpub
  counts them by inclusion–exclusion over homomorphism counts or by the
  generic join, whichever its cost estimate prefers), against
  python-graphblas (SuiteSparse:GraphBLAS):
  5-cycle assignments = tr(A⁵) − 5·tr(A³) − 5·Σ_i (d_i − 2)·(A³)_ii
  (Harary & Manvel; 10 per 5-cycle), tr(A⁵) = Σ A² ∘ A³ with A³ formed only
  on A²'s pattern (the masked product C⟨A²⟩ = A²·A, ~1.5× faster than the
  unmasked A³) and (A³)_ii = Σ_j (A ∘ A²)_ij; diamonds from C⟨A⟩ = A·A over
  plus_pair, Σ c(c − 1) over ordered edges; 4-paths from degrees,
  Σ_(b,c) (d_b − 1)(d_c − 1) over ordered edges less 6·(triangles), the
  triangles by the masked product on the lower triangle (Sandia's LL).
  A is built outside the timing, as privpub's Graph is.
- Triangles against igraph's fastest exact count: ``transitivity_local_undirected``
  (C core; triangles at v = t_v·d_v(d_v − 1)/2), ~24× faster than
  ``list_triangles``.

Every pattern is timed on the full facebook graph (the generic join alone
took ~100 s on its 5-cycle, enumerating ~10⁹ three-edge paths). With
benchmarks disabled, ca-GrQc stands in for facebook, so the file runs as a
quick test.
"""

import numpy as np
from bench_graphs import edges_for, graphblas_lower, graphblas_triangles, igraph_of

from privpub.graphs import CQ, Graph, clique, count, triangle

DISTINCT4 = "a != b, a != c, a != d, b != c, b != d, c != d"
K4_SIX_ATOMS = CQ.parse("k4(a, b, c, d) :- R(a, b), R(a, c), R(a, d), R(b, c), R(b, d), "
                        f"R(c, d), {DISTINCT4}")
FIVE_CYCLE = CQ.parse("c5(a, b, c, d, e) :- R(a, b), R(b, c), R(c, d), R(d, e), R(e, a), "
                      f"{DISTINCT4}, a != e, b != e, c != e, d != e")
DIAMOND = CQ.parse("diamond(a, b, c, d) :- R(a, b), R(a, c), R(b, c), R(b, d), R(c, d), "
                   f"{DISTINCT4}")
FOUR_PATH = CQ.parse(f"path4(a, b, c, d) :- R(a, b), R(b, c), R(c, d), {DISTINCT4}")
_GRAPHS: dict[str, Graph] = {}


def graph_for(name: str, request) -> tuple[np.ndarray, Graph]:
    edges = edges_for(name, request)
    key = f"{name}:{len(edges)}"
    if key not in _GRAPHS:
        _GRAPHS[key] = Graph.from_edges(edges, directed=False)
    return edges, _GRAPHS[key]


def symmetric(edges: np.ndarray):
    """python-graphblas and the full symmetric adjacency A (bool)."""
    gb, n, _ = graphblas_lower(edges)
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    return gb, gb.Matrix.from_coo(rows, cols, True, nrows=n, ncols=n)


def graphblas_five_cycles(gb, a) -> int:
    a = a.dup(dtype=int)
    a2 = a.mxm(a, gb.semiring.plus_times).new()
    a3 = gb.Matrix(int, a.nrows, a.ncols)
    a3(a2.S) << a2.mxm(a, gb.semiring.plus_times)  # only where A² is nonzero: all tr(A²A³) reads
    trace5 = a2.ewise_mult(a3, gb.binary.times).new().reduce_scalar().new().value
    diag3 = a.ewise_mult(a2, gb.binary.times).new().reduce_rowwise(gb.monoid.plus).new()
    degree = a.reduce_rowwise(gb.monoid.plus).new()
    weighted = diag3.ewise_mult(degree, gb.binary.times).new().reduce().new().value
    trace3 = diag3.reduce().new().value
    return int(trace5 - 5 * trace3 - 5 * (weighted - 2 * trace3))


def graphblas_diamonds(gb, a) -> int:
    n = a.nrows
    common = gb.Matrix(int, n, n)
    common(a.S) << a.mxm(a, gb.semiring.plus_pair)
    squares = common.ewise_mult(common, gb.binary.times).new().reduce_scalar().new().value
    return int(squares - common.reduce_scalar().new().value)


def graphblas_four_paths(gb, n: int, low, edges: np.ndarray) -> int:
    degree = np.bincount(edges.ravel(), minlength=n).astype(np.int64) - 1
    ends = 2 * int((degree[edges[:, 0]] * degree[edges[:, 1]]).sum())
    return ends - graphblas_triangles(gb, n, low)


def run(benchmark, group: str, role: str, fn):
    benchmark.group = group
    benchmark.extra_info["role"] = role
    return benchmark(fn)


def test_k4_six_atoms_privpub(benchmark, request):
    _, g = graph_for("facebook", request)
    got = run(benchmark, "K_4 six atoms vs the clique path", "privpub",
              lambda: count(g, K4_SIX_ATOMS))
    assert got == count(g, clique(4))


def test_k4_six_atoms_clique_path(benchmark, request):
    _, g = graph_for("facebook", request)
    run(benchmark, "K_4 six atoms vs the clique path", "baseline", lambda: count(g, clique(4)))


def test_k4_generic_join_privpub(benchmark, request):
    _, g = graph_for("facebook", request)
    got = run(benchmark, "K_4 by the generic join vs the clique path", "privpub",
              lambda: count(g, clique(4), method="join"))
    assert got == count(g, clique(4))


def test_k4_generic_join_clique_path(benchmark, request):
    _, g = graph_for("facebook", request)
    run(benchmark, "K_4 by the generic join vs the clique path", "baseline",
        lambda: count(g, clique(4)))


def test_five_cycles_privpub(benchmark, request):
    edges, g = graph_for("facebook", request)
    gb, a = symmetric(edges)
    got = run(benchmark, "5-cycle vs graphblas trace formula", "privpub",
              lambda: count(g, FIVE_CYCLE))
    assert got == graphblas_five_cycles(gb, a)


def test_five_cycles_graphblas(benchmark, request):
    edges, _ = graph_for("facebook", request)
    gb, a = symmetric(edges)
    run(benchmark, "5-cycle vs graphblas trace formula", "baseline",
        lambda: graphblas_five_cycles(gb, a))


def test_diamonds_privpub(benchmark, request):
    edges, g = graph_for("facebook", request)
    gb, a = symmetric(edges)
    got = run(benchmark, "diamond vs graphblas masked plus_pair", "privpub",
              lambda: count(g, DIAMOND))
    assert got == graphblas_diamonds(gb, a)


def test_diamonds_graphblas(benchmark, request):
    edges, _ = graph_for("facebook", request)
    gb, a = symmetric(edges)
    run(benchmark, "diamond vs graphblas masked plus_pair", "baseline",
        lambda: graphblas_diamonds(gb, a))


def test_four_paths_privpub(benchmark, request):
    edges, g = graph_for("facebook", request)
    gb, n, low = graphblas_lower(edges)
    got = run(benchmark, "4-path vs degrees + graphblas triangles", "privpub",
              lambda: count(g, FOUR_PATH))
    assert got == graphblas_four_paths(gb, n, low, edges)


def test_four_paths_graphblas(benchmark, request):
    edges, _ = graph_for("facebook", request)
    gb, n, low = graphblas_lower(edges)
    run(benchmark, "4-path vs degrees + graphblas triangles", "baseline",
        lambda: graphblas_four_paths(gb, n, low, edges))


def igraph_triangles(ig_graph) -> int:
    """6 × triangles (ordered assignments) from local transitivity: t_v·C(d_v, 2)
    triangles at v, each triangle at its three corners."""
    local = np.asarray(ig_graph.transitivity_local_undirected(mode="zero"))
    degree = np.asarray(ig_graph.degree(), dtype=np.float64)
    return 2 * round(float((local * degree * (degree - 1) / 2).sum()))


def test_triangles_privpub(benchmark, request):
    _, g = graph_for("facebook", request)
    run(benchmark, "triangles vs igraph transitivity_local_undirected", "privpub",
        lambda: count(g, triangle()))


def test_triangles_igraph(benchmark, request):
    edges, g = graph_for("facebook", request)
    ig_graph = igraph_of(edges)
    got = run(benchmark, "triangles vs igraph transitivity_local_undirected", "baseline",
              lambda: igraph_triangles(ig_graph))
    assert got == count(g, triangle())
