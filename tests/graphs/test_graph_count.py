"""Graph construction and exact CQ(≠) counts: against brute force on random
small graphs and random queries, and against networkx on the real graphs."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.sparse as sp
from graph_brute import brute_count

from privpub import datasets
from privpub.core.errors import DataTypeError, DomainError, ParameterError, QueryError
from privpub.graphs import CQ, Graph, clique, count, cycle, path_from, pattern, triangle, two_path
from privpub.graphs.exact import special_path, true_answers


def relation(g: Graph) -> set[tuple[int, int]]:
    return {(int(u), int(v)) for u, v in g.edges()}


def test_undirected_edges_become_a_symmetric_relation():
    g = Graph.from_edges([["a", "b"], ["b", "c"], ["c", "c"]], directed=False)
    assert g.m == 3 and list(g.labels) == ["a", "b", "c"]
    assert relation(g) == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 2)}
    assert g.symmetric and g.tuples == 5 and g.m_derived


def test_frames_arrow_and_networkx_give_the_same_relation():
    edges = np.array([[10, 20], [20, 30], [30, 10], [30, 40]])
    base = Graph.from_edges(edges, directed=True)
    frame = pd.DataFrame({"source": edges[:, 0], "target": edges[:, 1]})
    assert relation(Graph.from_frame(frame, directed=True)) == relation(base)
    assert relation(Graph.from_arrow(pa.Table.from_pandas(frame), directed=True)) == \
        relation(base)
    dg = nx.DiGraph()
    dg.add_edges_from(edges.tolist())
    assert relation(Graph.from_networkx(dg)) == relation(base)
    ug = nx.Graph(edges.tolist())
    ug.add_node(99)  # isolated nodes count towards m
    assert Graph.from_networkx(ug).m == 5 and Graph.from_networkx(ug).symmetric


def test_m_can_be_declared_larger_not_smaller():
    g = Graph.from_edges([[0, 1]], m=10)
    assert g.m == 10 and not g.m_derived
    with pytest.raises(ParameterError, match="m = 1 is below the 2 distinct"):
        Graph.from_edges([[0, 1]], m=1)


def test_bad_edges_are_named():
    with pytest.raises(DomainError, match=r"edge row 2 \(1, 0\) repeats"):
        Graph.from_edges([[0, 1], [1, 2], [1, 0]], directed=False)
    g = Graph.from_edges([[0, 1], [1, 2], [1, 0]], directed=False, duplicates="merge")
    assert g.merged == 2 and g.tuples == 4
    assert Graph.from_edges([[0, 1], [1, 0]], directed=True).tuples == 2
    with pytest.raises(DataTypeError, match="shape"):
        Graph.from_edges(np.zeros((3, 3)))
    with pytest.raises(DataTypeError, match="no column 'dst'"):
        Graph.from_frame(pd.DataFrame({"source": [1], "target": [2]}), target="dst")
    with pytest.raises(DomainError, match="missing target"):
        Graph.from_edges(np.array([[1.0, np.nan]]))


def random_query(rng: np.random.Generator, m: int) -> CQ:
    """Up to 5 variables, 1–4 binary subgoals, constants and disequalities."""
    n = int(rng.integers(1, 6))
    xs = [f"x{i}" for i in range(n)]
    terms = xs + [str(int(c)) for c in rng.integers(0, m, size=2)]
    atoms = [f"R({rng.choice(terms)}, {rng.choice(terms)})" for _ in range(rng.integers(1, 5))]
    atoms += [f"R({x}, {rng.choice(terms)})" for x in xs]  # every variable in a subgoal
    pairs = list(itertools.combinations(terms, 2))
    neq = [f"{a} != {b}" for a, b in pairs if rng.random() < 0.3 and a != b]
    used = sorted({x for x in xs if any(x in a for a in atoms)})
    head = list(rng.permutation(used)[: rng.integers(0, len(used) + 1)])
    return CQ.parse(f"q({', '.join(head)}) :- {', '.join(atoms + neq)}")


@pytest.mark.parametrize("directed", [True, False])
def test_random_queries_agree_with_brute_force(directed):
    rng = np.random.default_rng(5 if directed else 6)
    checked = 0
    for _ in range(120):
        m = int(rng.integers(2, 6))
        edges = rng.integers(0, m, size=(int(rng.integers(1, 3 * m)), 2))
        g = Graph.from_edges(edges, directed=directed, m=m, duplicates="merge")
        # Constants are original ids; an id on no edge is not a node of the graph.
        q = random_query(rng, m)
        if any(c.value not in set(g.labels.tolist()) for c in q.constants):
            with pytest.raises(DomainError, match="is not in the graph"):
                count(g, q)
            continue
        as_labels = {(int(g.labels[u]), int(g.labels[v])) for u, v in relation(g)}
        assert count(g, q) == brute_count(q, as_labels, m), str(q)
        checked += 1
    assert checked > 60


def full_head_query(rng: np.random.Generator, m: int) -> CQ:
    """Every variable in the head (so the join counts the last variable's candidates
    instead of visiting them), with constants, ≠ against variables and constants
    (several of which may take one value), and now and then a self-loop R(x, x)."""
    n = int(rng.integers(2, 5))
    xs = [f"x{i}" for i in range(n)]
    terms = xs + [str(int(c)) for c in rng.integers(0, m, size=2)]
    atoms = [f"R({rng.choice(terms)}, {rng.choice(terms)})" for _ in range(rng.integers(1, 5))]
    atoms += [f"R({x}, {rng.choice(terms)})" if rng.random() < 0.5 else
              f"R({rng.choice(terms)}, {x})" for x in xs]
    neq = [f"{a} != {b}" for a, b in itertools.combinations(terms, 2)
           if a != b and rng.random() < 0.4]
    return CQ.parse(f"q({', '.join(xs)}) :- {', '.join(atoms + neq)}")


@pytest.mark.parametrize("directed", [True, False])
def test_counting_the_last_variable_agrees_with_brute_force(directed):
    rng = np.random.default_rng(15 if directed else 16)
    checked = 0
    for _ in range(200):
        m = int(rng.integers(3, 6))
        edges = rng.integers(0, m, size=(int(rng.integers(m, 4 * m)), 2))
        g = Graph.from_edges(edges, directed=directed, m=m, duplicates="merge")
        q = full_head_query(rng, m)
        if any(c.value not in set(g.labels.tolist()) for c in q.constants):
            continue
        as_labels = {(int(g.labels[u]), int(g.labels[v])) for u, v in relation(g)}
        assert count(g, q, method="join") == brute_count(q, as_labels, m), str(q)
        checked += 1
    assert checked > 100


def test_counting_the_last_variable_from_many_lists():
    # Five lists into x5 (past the four kept on the stack), ≠ terms that share values.
    g = Graph.from_edges(np.array([[a, b] for a in range(5) for b in range(5)
                                   if (a * 3 + b) % 4 != 0]), directed=True, m=5)
    labels = {(int(g.labels[u]), int(g.labels[v])) for u, v in relation(g)}
    for text in ["q(x0, x1, x2, x3, x4, x5) :- R(x0, x5), R(x1, x5), R(x2, x5), R(x3, x5), "
                 "R(x4, x5), x5 != x0, x5 != x1, x5 != 2",
                 "q(x, y, z) :- R(x, y), R(y, z), R(z, x), z != 1, z != x, y != 1"]:
        q = CQ.parse(text)
        assert count(g, q, method="join") == brute_count(q, labels, 5), text


@pytest.mark.parametrize("query", [triangle(), two_path(), cycle(3), cycle(4), clique(3),
                                   clique(4), path_from(0, 2), path_from(1, 3),
                                   pattern([(0, 1), (1, 2), (2, 3), (3, 1)])])
def test_catalog_queries_and_special_paths_agree_with_brute_force(query):
    rng = np.random.default_rng(11)
    for trial in range(8):
        m = 6
        edges = rng.integers(0, m, size=(14, 2))
        g = Graph.from_edges(edges, directed=trial % 2 == 0, m=m, duplicates="merge")
        labels = {(int(g.labels[u]), int(g.labels[v])) for u, v in relation(g)}
        if any(c.value not in set(g.labels.tolist()) for c in query.constants):
            continue
        want = brute_count(query, labels, m)
        assert count(g, query) == want
        assert count(g, query, method="join") == want


def test_special_paths_are_taken_where_they_apply():
    sym = Graph.from_edges([[0, 1], [1, 2], [2, 0]], directed=False)
    directed = Graph.from_edges([[0, 1], [1, 2], [2, 0]], directed=True)
    assert special_path(sym, triangle()) == "cliques"
    assert special_path(directed, triangle()) is None
    assert special_path(sym, clique(4)) == "cliques"
    assert special_path(directed, two_path()) == "two_paths"
    assert special_path(sym, cycle(4)) == "four_cycles"
    assert special_path(sym, pattern([(0, 1), (1, 0), (2, 3), (3, 2)])) is None
    assert count(directed, triangle()) == 3 and count(sym, triangle()) == 6


def test_real_graphs_agree_with_networkx():
    for name in ("facebook", "ca-grqc"):
        edges = datasets.load_graph(name)
        g = Graph.from_edges(edges, directed=False, duplicates="merge")
        nxg = nx.Graph(edges.tolist())
        nxg.remove_edges_from(nx.selfloop_edges(nxg))
        triangles = sum(nx.triangles(nxg).values()) // 3
        assert count(g, triangle()) == 6 * triangles  # 3! ordered assignments each
        assert count(g, triangle(), method="join") == 6 * triangles
        wedges = sum(d * (d - 1) for _, d in nxg.degree())
        assert count(g, two_path()) == wedges
        if name == "ca-grqc":  # the K_4 and c_4 cross-checks on the smaller graph
            k4 = four_cliques(nxg)
            assert count(g, clique(4)) == 24 * k4
            assert count(g, clique(4), method="join") == 24 * k4
            # c_4: 8 automorphisms of the 4-cycle (4 rotations × 2 directions).
            assert count(g, cycle(4)) == 8 * four_cycles(nxg)
            assert count(g, cycle(4), method="join") == 8 * four_cycles(nxg)


def four_cliques(g: nx.Graph) -> int:
    """K_4 sets: over each edge, the edges among its common neighbours; 6 edges per K_4."""
    adj = {u: set(g[u]) for u in g}
    total = 0
    for u, v in g.edges:
        common = adj[u] & adj[v]
        total += sum(len(adj[w] & common) for w in common) // 2
    return total // 6


def four_cycles(g: nx.Graph) -> int:
    """Undirected 4-cycles: Σ over unordered pairs {a, c} of C(common neighbours, 2), halved
    (each cycle has two diagonals), with the common counts from a sparse A²."""
    a = nx.to_scipy_sparse_array(g, format="csr", dtype=np.int64)
    common = sp.triu(a @ a, k=1).data
    return int((common * (common - 1) // 2).sum()) // 2


def test_query_errors_reach_the_caller():
    g = Graph.from_edges([[0, 1]])
    with pytest.raises(QueryError, match="arity 3"):
        count(g, "q(x) :- R(x, y, z)")
    with pytest.raises(QueryError, match="relations"):
        count(g, "q(x) :- R(x, y), S(y, x)")
    with pytest.raises(DomainError, match="node 7 is not in the graph"):
        count(g, "q(x) :- R(x, 7)")
    with pytest.raises(ParameterError, match="method"):
        count(g, triangle(), method="fast")


@pytest.mark.slow
def test_counts_do_not_depend_on_the_thread_count():
    script = ("from privpub import datasets; from privpub.graphs import *; "
              "g = Graph.from_edges(datasets.load_graph('ca-grqc'), directed=False); "
              "print([count(g, q, method=m) for q in (triangle(), cycle(4), clique(4), "
              "path_from(21012, 3)) for m in ('auto', 'join')])")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True)
        outs.append(run.stdout)
    assert outs[0] == outs[1] and outs[0].startswith("[289560, 289560")


def test_a_graph_and_a_query_are_checked_by_name():
    from privpub.graphs import RelationshipMechanism, local_sensitivity
    g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4], [4, 5]]),
                         directed=False)
    for call in (lambda x: count(x, triangle()), lambda x: local_sensitivity(x, triangle()),
                 lambda x: RelationshipMechanism.for_graph(1.0, 0.5, triangle(), g).answer(x)):
        with pytest.raises(ParameterError, match="graph must be a privpub.graphs.Graph, got list"):
            call([[0, 1]])
    for call in (lambda q: count(g, q), lambda q: local_sensitivity(g, q)):
        with pytest.raises(ParameterError, match="query must be a CQ or its text, got int"):
            call(5)
    assert count(g, "q(x,y) :- R(x,y)") == 12  # text is parsed


def test_counting_in_parts_with_progress_gives_the_same_count(capsys):
    rng = np.random.default_rng(21)
    seen = 0
    for trial in range(60):
        m = int(rng.integers(2, 6))
        edges = rng.integers(0, m, size=(int(rng.integers(1, 3 * m)), 2))
        g = Graph.from_edges(edges, directed=trial % 2 == 0, m=m, duplicates="merge")
        q = random_query(rng, m)  # head of any size, Boolean queries included
        if any(c.value not in set(g.labels.tolist()) for c in q.constants):
            continue
        calls: list[tuple[int, int]] = []
        got = count(g, q, method="join",
                    progress=lambda done, total, calls=calls: calls.append((done, total)))
        assert got == count(g, q, method="join"), str(q)
        assert [d for d, _ in calls] == list(range(1, m + 1)) and {t for _, t in calls} == {m}
        assert count(g, q, method="join", progress=True) == got
        seen += 1
    assert seen > 30
    # A constants-only query has no variable to split on: every part is the whole answer.
    g = Graph.from_edges(np.array([[0, 1], [1, 2]]), directed=True, m=3)
    assert count(g, "q() :- R(0, 1)", progress=True) == 1
    assert count(g, "q() :- R(1, 0)", progress=True) == 0
    # The bar is silent off a terminal (pytest captures stderr).
    assert capsys.readouterr().err == ""
    fb = Graph.from_edges(datasets.load_graph("ca-grqc"), directed=False)
    parts: list[int] = []
    assert (count(fb, cycle(4), method="join", progress=lambda d, t: parts.append(d))
            == count(fb, cycle(4)))
    assert len(parts) == 64 and parts[-1] == fb.m
    with pytest.raises(ParameterError, match="progress must be True, False or a callable"):
        count(g, triangle(), progress="yes")


def test_true_answers_count_on_the_graph_and_refuse_anything_else():
    g = Graph.from_edges([["a", "b"], ["b", "c"], ["c", "a"]], directed=False)
    assert true_answers(g, [str(triangle()), str(two_path())]) == [
        count(g, triangle()), count(g, two_path())]
    with pytest.raises(ParameterError, match="must be the privpub.Graph it answered on, "
                                             "got DataFrame"):
        true_answers(pd.DataFrame({"a": [1]}), [str(triangle())])
