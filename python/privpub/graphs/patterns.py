"""A query's pattern by its meaning, not its spelling: the special path it
takes, and the generic join's arguments with the pattern's symmetries broken.

On a symmetric relation R (an undirected graph) R(a, b) and R(b, a) hold
together, so a query means the same with either orientation of a subgoal:
its meaning is the undirected pattern (the symmetric closure). The six-atom
K_4 and the twelve-atom K_4 are one query there, and take one path.

When a query counts every assignment of pairwise distinct variables (every
variable in the head, a disequality between each two), the automorphisms of
its pattern act freely on the assignments: the count is |Aut| times the
number of assignments that satisfy order constraints picking one per orbit
(Grochow & Kellis, RECOMB 2007, symmetry breaking), which the join checks by
cutting sorted adjacency lists to a range of degree ranks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from privpub.graphs.graph import Graph
from privpub.graphs.query import CQ, Const, Term, Var, term_key

MAX_CLIQUE = 32  # the clique path's largest k (rust/src/graph/patterns.rs); the join does more


def _shape(query: CQ) -> tuple[int, set[tuple[int, int]]] | None:
    """(k, directed pattern edges over 0..k−1) when the query counts all
    assignments of k pairwise distinct variables without constants; else None."""
    xs = sorted(query.variables)
    if (query.constants or not injective(query)
            or any(len(a.terms) != 2 for a in query.atoms)):
        return None
    index = {x: i for i, x in enumerate(xs)}
    return len(xs), {(index[a.terms[0]], index[a.terms[1]]) for a in query.goals}


def injective(query: CQ) -> bool:
    """Whether the query counts every assignment (all variables in the head)
    of pairwise distinct variables: then its value is the number of
    embeddings of its pattern."""
    xs = query.variables
    return (set(query.head) == xs
            and all(frozenset(p) in query.neq for p in itertools.combinations(xs, 2)))


def _one_cycle(edges: set[tuple[int, int]], k: int) -> bool:
    """Whether the pattern is one directed cycle through all k nodes."""
    succ = dict(edges)
    if len(succ) != k or sorted(succ.values()) != list(range(k)):
        return False
    node, seen = 0, set()
    while node not in seen:
        seen.add(node)
        node = succ[node]
    return len(seen) == k


def _undirected_path(k: int, edges: set[tuple[int, int]]) -> str | None:
    """The special path for the undirected pattern ``edges`` (either
    orientation of a pair means the same): K_k, the 4-cycle or the two-path."""
    pairs = {frozenset(e) for e in edges}
    if any(len(p) != 2 for p in pairs):
        return None  # a self-loop subgoal R(x, x)
    degree = [sum(i in p for p in pairs) for i in range(k)]
    if 2 <= k <= MAX_CLIQUE and len(pairs) == k * (k - 1) // 2:
        return "cliques"
    if k == 4 and len(pairs) == 4 and degree == [2] * 4:
        return "four_cycles"  # 2-regular on 4 nodes: one 4-cycle
    if k == 3 and len(pairs) == 2:
        return "two_paths"  # two pairs over three nodes share one
    return None


def special_path(graph: Graph, query: CQ) -> str | None:
    """The special path :func:`~privpub.graphs.count` takes for this graph and
    query, if any: on a symmetric relation, by the undirected pattern."""
    shape = _shape(query)
    if shape is None:
        return None
    k, edges = shape
    if graph.symmetric:
        return _undirected_path(k, edges)
    if k == 4 and len(edges) == 4 and _one_cycle(edges, k):
        return "four_cycles"
    if k == 3 and len(edges) == 2:
        (a, b), (c, d) = sorted(edges)
        if b == c or d == a:  # x → y → z
            return "two_paths"
    return None


def _subgoals(graph: Graph, query: CQ) -> set[tuple[Term, Term]]:
    """The query's subgoals as term pairs; on a symmetric relation one
    orientation per pair (its meaning; fewer lists for the join to cut)."""
    pairs = {(a.terms[0], a.terms[1]) for a in query.goals}
    if graph.symmetric:
        pairs = {tuple(sorted(p, key=term_key)) for p in pairs}
    return pairs


def _automorphism_test(xs: list[Var], atoms: set[tuple[Term, Term]], neq: frozenset,
                       symmetric: bool) -> Callable[[dict[Var, Var]], bool]:
    """A test of whether a permutation of ``xs`` extending a partial map
    ``fixed`` maps the subgoals onto themselves and keeps each variable's
    disequalities with constants (constants fixed; on a symmetric relation,
    pairs unordered). Disequalities between variables are every pair (see
    :func:`injective`), which any permutation keeps. What the test needs of the
    pattern is computed once here, not for each map tried."""
    def key(p: tuple[Term, Term]):
        return frozenset(p) if symmetric else p
    goals = {key(p) for p in atoms}

    def signature(x: Var) -> tuple:
        # What an automorphism keeps at x; only for pruning, except the
        # disequalities with constants, which `consistent` does not check.
        marks = []
        for a, b in atoms:
            if x in (a, b):
                other = b if a == x else a
                side = "-" if symmetric else ("out" if a == x else "in")
                marks.append((a == b, side, term_key(other) if isinstance(other, Const) else ()))
        consts = sorted(term_key(t) for pair in neq if x in pair
                        for t in pair if isinstance(t, Const))
        return tuple(sorted(marks)), tuple(consts)

    sig = {x: signature(x) for x in xs}
    incident = {x: [p for p in atoms if x in p] for x in xs}

    def exists(fixed: dict[Var, Var]) -> bool:
        image = dict(fixed)

        def mapped(t: Term) -> Term:
            return image.get(t, t) if isinstance(t, Var) else t

        def consistent(pairs) -> bool:
            return all(key((mapped(a), mapped(b))) in goals for a, b in pairs
                       if all(not isinstance(t, Var) or t in image for t in (a, b)))

        def search(rest: list[Var]) -> bool:
            if not rest:
                return True
            x, used = rest[0], set(image.values())
            for y in xs:
                if y in used or sig[y] != sig[x]:
                    continue
                image[x] = y
                # Only x's subgoals can break with x mapped (the rest were
                # checked): a step costs x's degree, not the pattern's size.
                if consistent(incident[x]) and search(rest[1:]):
                    return True
                del image[x]
            return False

        if any(sig[x] != sig[y] for x, y in fixed.items()) or not consistent(atoms):
            return False
        return search([x for x in xs if x not in image])

    return exists


def symmetry_breaking(graph: Graph, query: CQ,
                      atoms: set[tuple[Term, Term]]) -> tuple[list[tuple[Var, Var]], int]:
    """Order constraints (v, w): v's node ranks below w's, and |Aut| of the
    pattern, such that |Aut| × (assignments meeting the constraints) is the
    count. Along a stabiliser chain, each variable v is constrained below the
    others of its orbit under the automorphisms fixing the variables before
    it; the orbit sizes multiply to |Aut|. Nothing to break (([], 1)) unless
    the query is :func:`injective`, where the automorphisms act freely."""
    if not injective(query):
        return [], 1
    # Variables in the most subgoals first: the join binds them first, so
    # their constraints cut the outer loops (a 4-path's middle edge, b < c,
    # not its ends).
    links = {x: sum(x in a.terms for a in query.goals) for x in query.variables}
    xs = sorted(query.variables, key=lambda x: (-links[x], x))
    less: list[tuple[Var, Var]] = []
    size, fixed = 1, {}
    extends = _automorphism_test(xs, atoms, query.neq, graph.symmetric)
    for v in xs:
        orbit = [w for w in xs if w not in fixed and extends({**fixed, v: w})]
        less += [(v, w) for w in orbit if w != v]
        size *= len(orbit)
        fixed[v] = v
    return less, size


def join_arguments(graph: Graph, query: CQ) -> tuple[tuple, int]:
    """The arguments of ``_core.graph.count`` after the relation (variables,
    head variables, subgoals, disequalities, order constraints; terms as
    codes: variable index, or −(node + 1) for a constant) and the factor to
    multiply its count by (the number of automorphisms broken)."""
    order = list(query.head) + sorted(query.variables - set(query.head))
    index = {x: i for i, x in enumerate(order)}

    def code(t: Term) -> int:
        if isinstance(t, Var):
            return index[t]
        assert isinstance(t, Const)
        return -(graph.node(t.value) + 1)

    subgoals = _subgoals(graph, query)
    less, factor = symmetry_breaking(graph, query, subgoals)
    atoms = [(code(a), code(b)) for a, b in sorted(subgoals, key=lambda p: tuple(
        map(term_key, p)))]
    neq = [(code(a), code(b)) for a, b in query.neq_pairs()]
    return (len(order), len(query.head), atoms, neq,
            [(index[v], index[w]) for v, w in less]), factor
