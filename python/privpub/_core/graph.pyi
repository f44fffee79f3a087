"""``privpub._core.graph``: the graph kernels (rust/src/bindings/graph.rs over graph/):
build a CSR relation, count CQ(≠) queries and patterns over it. Every kernel
after :func:`build` takes the relation as one argument (``Graph.relation``) and
checks it before any lookup."""

import numpy as np
import numpy.typing as npt

def build(src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], m: int,
          symmetric: bool) -> tuple[tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                                          npt.NDArray[np.uint64], npt.NDArray[np.uint32]],
                                    int]:
    """CSR of the relation {(src[i], dst[i])} (plus reversed pairs when ``symmetric``) over
    nodes [0, m): ((out_offsets, out_targets, in_offsets, in_sources), repeated tuples
    merged). DomainError(attribute_index 0 = src / 1 = dst, row) for an id outside [0, m)."""

#: (m, out_offsets, out_targets, in_offsets, in_sources), as build returns them with m.
_Relation = tuple[int, npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint64],
                  npt.NDArray[np.uint32]]

def count(relation: _Relation, n_vars: int, n_head: int, atoms: list[tuple[int, int]],
          neq: list[tuple[int, int]], less: list[tuple[int, int]],
          first: tuple[int, int]) -> int:
    """Distinct assignments of the head variables 0..n_head of a CQ(≠) query over R by a
    generic join (parallel over the first variable), counting only those whose first-bound
    variable is a node in [first[0], first[1]): over a partition of [0, m) the parts sum to
    the count (a query without head variables: the count is the largest part). Terms:
    variable index ≥ 0, or node c as −(c + 1); ``atoms`` are subgoals R(a, b), ``neq`` the
    disequalities a ≠ b, ``less`` order constraints (a, b): variable a's node ranks below
    b's in the (degree, id) order (with any, ``first`` is a range of ranks)."""

def cliques(relation: _Relation, k: int) -> int:
    """k! × the number of k-cliques of a symmetric relation (degree-ordered orientation)."""

#: A scipy CSR matrix: (indptr, indices, data) as int64 arrays and the number of columns.
_Sparse = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], int]

def masked_product(left: _Sparse, right: _Sparse, mask: _Sparse) -> npt.NDArray[np.int64]:
    """(left @ right)[x, z] at each stored entry (x, z) of ``mask``, in its order, without
    forming the product (Gustavson's product masked as it goes, parallel over rows); values
    non-negative, sums exact (an entry past 2^63 − 1 is a PrivpubError)."""

def two_paths(relation: _Relation) -> int:
    """Assignments of x → y → z with x, y, z pairwise distinct (from degrees)."""

def four_cycles(relation: _Relation) -> int:
    """Assignments of x1 → x2 → x3 → x4 → x1 with pairwise distinct nodes (two-path
    counters per start node)."""

def triangle_pairs(relation: _Relation) -> npt.NDArray[np.int64]:
    """For a symmetric relation: best[a] = the largest b_ij (nodes other than i, j adjacent
    to exactly one of them) over pairs i ≠ j with a_ij = a common neighbours, −1 where no
    pair has a_ij = a; length max a_ij + 1 (empty when m < 2). Self-loops ignored."""

def local_sensitivity(relation: _Relation, n_vars: int, goals: list[tuple[int, int]]
                      ) -> tuple[int, tuple[int, int], int, tuple[int, int]]:
    """Exact local sensitivity of the pattern query with n_vars pairwise distinct variables
    and subgoals R(x, y) ``goals`` (variable indices): (largest gain from adding an absent
    tuple, that tuple, largest loss from removing a present tuple, that tuple); a tuple is
    (-1, -1) when its change is 0."""
