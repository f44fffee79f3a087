"""Homomorphism counts of small patterns by variable elimination.

A homomorphism of a pattern into R assigns nodes to its variables (not
necessarily distinct) so that every subgoal holds. Their number is a sum of
products of 0/1 factors, one per subgoal: R(x, y) a matrix on (x, y) (A or
Aᵀ), R(x, x) the loop indicator on x, R(c, x) row c of A (constants fixed).
Summing the variables out one at a time turns it into sparse products
(Dechter, "Bucket elimination", 1996): a variable with factors to two
others x, y leaves M_xv·diag(u_v)·M_vy on (x, y), one with a factor to one
leaves a vector M·u, and so on. Every pattern of treewidth ≤ 2 (paths,
cycles, trees, diamonds, series–parallel shapes) reduces this way with no
factor on more than two variables (:func:`eliminable` tells). The last three
variables, when they form a triangle, are one trace: W = T₃ ∘ (T₁·D·T₂), the
product taken only at the entries of the third factor (the masked product
C⟨T₃⟩ = T₁·T₂ of GraphBLAS, in Rust: rust/src/graph/masked.rs), then
u_xᵀ W u_z. A 5-cycle is thus Σ A² ∘ (A²·A), the trace formula a GraphBLAS
user writes; a plain triangle of a symmetric R is the clique path's count.

Exact integers throughout: every factor is non-negative, so every partial
sum scipy forms while multiplying is at most the entry it ends in; before
each product or reduction an upper bound on its entries (max entries and
row counts, in Python ints) is checked against 2^63, and past it
:class:`Overflow` is raised (the caller counts by the generic join instead,
in 128 bits). Sums of whole arrays are taken in two 32-bit halves.

Products are memoised by what they compute (a structural key), so patterns
that share sub-products (the terms of an inclusion–exclusion) compute each
once, and each new product's multiplications (Gustavson's count,
Σ_v colnnz(M₁)_v·rownnz(M₂)_v) are charged to a budget; past it
:class:`TooCostly` is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

import privpub._core as _core
from privpub.graphs.graph import Graph

LIMIT = 2**63  # int64 entries must stay below this


class Overflow(Exception):
    """An intermediate could exceed int64 (the caller uses the 128-bit join)."""


class TooCostly(Exception):
    """The products would exceed the budget (the caller uses the join)."""


class Unsupported(Exception):
    """The pattern has treewidth > 2: some factor would span three variables."""


def eliminable(atoms: set[tuple[int, int]]) -> bool:
    """Whether the pattern has treewidth ≤ 2 (variables ≥ 0; constants and
    self-loops add no edge): removing a variable of degree ≤ 2 and linking
    its two neighbours always reaches the empty graph then, and never
    otherwise (series–parallel reduction)."""
    nbrs: dict[int, set[int]] = {}
    for s, t in atoms:
        for x in (s, t):
            if x >= 0:
                nbrs.setdefault(x, set())
        if s >= 0 and t >= 0 and s != t:
            nbrs[s].add(t)
            nbrs[t].add(s)
    while nbrs:
        v = next((x for x in nbrs if len(nbrs[x]) <= 2), None)
        if v is None:
            return False
        ns = nbrs.pop(v)
        for x in ns:
            nbrs[x].discard(v)
            nbrs[x].update(ns - {x})
    return True


@dataclass
class Mat:
    """A non-negative int64 sparse matrix with a bound on its entries."""

    csr: object  # scipy.sparse.csr_array
    top: int

    @cached_property
    def rows(self) -> np.ndarray:
        """Entries per row."""
        return np.diff(self.csr.indptr)

    @cached_property
    def cols(self) -> np.ndarray:
        """Entries per column (the cost model asks often: computed once)."""
        return np.bincount(self.csr.indices, minlength=self.csr.shape[1])


@dataclass
class Vec:
    """A non-negative int64 vector with a bound on its entries."""

    arr: np.ndarray
    top: int


def _check(bound: int) -> None:
    if bound >= LIMIT:
        raise Overflow(f"an intermediate count could reach {bound}, past 2^63")


def exact_sum(values: np.ndarray) -> int:
    """Σ values (non-negative int64) exactly: in two 32-bit halves, each
    sum at most len · 2^32 < 2^63 for fewer than 2^31 values."""
    if values.size >= 2**31:  # pragma: no cover - beyond any graph this holds in memory
        return sum(int(v) for v in values)
    return (int(np.sum(values >> 32)) << 32) + int(np.sum(values & 0xFFFFFFFF))


class Eliminator:
    """Homomorphism counts over one graph's relation, sharing a memo of
    products across calls and charging new products to ``budget``
    multiplications (None: no limit)."""

    def __init__(self, graph: Graph, budget: float | None = None):
        import scipy.sparse as sp  # on use: scipy costs `import privpub` ~0.3 s

        self.sp, self.m, self.budget, self.spent = sp, graph.m, budget, 0
        out_off, out_tgt, in_off, in_src = graph.csr
        m = graph.m

        def matrix(offsets, targets) -> Mat:
            data = np.ones(targets.size, dtype=np.int64)
            csr = sp.csr_array((data, targets.astype(np.int64), offsets.astype(np.int64)),
                               shape=(m, m))
            return Mat(csr, 1)

        self.memo: dict[tuple, Mat | Vec] = {("R",): matrix(out_off, out_tgt)}
        self.memo[("R'",)] = (self.memo[("R",)] if graph.symmetric
                              else matrix(in_off, in_src))
        self.symmetric, self.relation = graph.symmetric, graph.relation
        a = self.memo[("R",)].csr
        self.loops = int(a.diagonal().sum())

    # ----------------------------------------------------------- factor values
    def mat(self, key: tuple) -> Mat:
        if key not in self.memo:
            self.memo[key] = self._compute_mat(key)
        return self.memo[key]  # type: ignore[return-value]

    def vec(self, key: tuple) -> Vec | None:
        """None for the all-ones vector (no factor)."""
        if key == ("1",):
            return None
        if key not in self.memo:
            self.memo[key] = self._compute_vec(key)
        return self.memo[key]  # type: ignore[return-value]

    def transpose(self, key: tuple) -> tuple:
        """The key of the transposed matrix, in a canonical form."""
        if key in (("R",), ("R'",)):
            return key if self.symmetric else (("R'",) if key == ("R",) else ("R",))
        if key[0] == "T":
            return key[1]
        if key[0] == "*":
            return _product([self.transpose(k) for k in key[1:]])
        if key[0] == "@":  # (M₁ D M₂)ᵀ = M₂ᵀ D M₁ᵀ
            return ("@", self.transpose(key[3]), key[2], self.transpose(key[1]))
        return ("T", key)

    def _compute_mat(self, key: tuple) -> Mat:
        kind = key[0]
        if kind == "masked":
            return self._masked(key)
        if kind == "T":
            inner = self.mat(key[1])
            return Mat(inner.csr.T.tocsr(), inner.top)
        if kind == "*":
            out = self.mat(key[1])
            for k in key[2:]:
                other = self.mat(k)
                _check(out.top * other.top)
                a, b = out.csr, other.csr
                if a.nnz == b.nnz and np.array_equal(a.indptr, b.indptr) and \
                        np.array_equal(a.indices, b.indices):
                    # One pattern (a product masked by its own mask): multiply values.
                    both = self.sp.csr_array((a.data * b.data, a.indices, a.indptr),
                                             shape=a.shape)
                else:
                    both = a.multiply(b).tocsr()
                out = Mat(both, out.top * other.top)
            return out
        _, left, mid, right = key  # "@": left · diag(mid) · right
        m1, u, m2 = self.mat(left), self.vec(mid), self.mat(right)
        if u is not None:
            m2 = self._scale_rows(m2, u)
        flops = int(np.dot(m1.cols.astype(np.float64), m2.rows.astype(np.float64)))
        self.charge(flops)
        _check(int(m1.rows.max(initial=0)) * m1.top * m2.top)
        product = (m1.csr @ m2.csr).tocsr()
        product.eliminate_zeros()
        product.sort_indices()  # canonical: scipy's elementwise products take their fast path
        return Mat(product, int(m1.rows.max(initial=0)) * m1.top * m2.top)

    def _compute_vec(self, key: tuple) -> Vec:
        kind = key[0]
        a = self.mat(("R",)).csr
        if kind == "loop":
            return Vec(a.diagonal().astype(np.int64), 1)
        if kind in ("out", "in"):  # R(c, x): x in out(c); R(x, c): x in in(c)
            row = a[[key[1]], :] if kind == "out" else a[:, [key[1]]].T
            v = np.zeros(self.m, dtype=np.int64)
            v[self.sp.csr_array(row).indices] = 1
            return Vec(v, 1)
        if kind == "*":
            vs = [self.vec(k) for k in key[1:]]
            top = 1
            for v in vs:
                top *= v.top
            _check(top)
            out = vs[0].arr.copy()
            for v in vs[1:]:
                out *= v.arr
            return Vec(out, top)
        _, mkey, ukey = key  # "mv": M · u
        mat, u = self.mat(mkey), self.vec(ukey)
        top = int(mat.rows.max(initial=0)) * mat.top * (1 if u is None else u.top)
        _check(top)
        if u is None:
            arr = np.asarray(mat.csr.sum(axis=1)).ravel().astype(np.int64)
        else:
            arr = np.asarray(mat.csr @ u.arr).ravel().astype(np.int64)
        return Vec(arr, top)

    def _scale_rows(self, mat: Mat, u: Vec) -> Mat:
        _check(mat.top * u.top)
        scaled = mat.csr.copy()
        scaled.data = scaled.data * np.repeat(u.arr, mat.rows)
        scaled.eliminate_zeros()
        return Mat(scaled, mat.top * u.top)

    def charge(self, flops: int) -> None:
        self.spent += flops
        if self.budget is not None and self.spent > self.budget:
            raise TooCostly(f"products past {self.budget:.3g} multiplications")

    def flops(self, left: tuple, mid: tuple, right: tuple) -> int:
        """Multiplications of left·diag(mid)·right (0 when memoised)."""
        if ("@", left, mid, right) in self.memo:
            return 0
        return int(np.dot(self.mat(left).cols.astype(np.float64),
                          self.mat(right).rows.astype(np.float64)))

    # ------------------------------------------------------------- elimination
    def hom(self, atoms: set[tuple[int, int]]) -> int:
        """Homomorphisms of the pattern ``atoms``: pairs of terms, variable
        index ≥ 0 or constant node c as −(c + 1)."""
        a = self.mat(("R",)).csr
        unary: dict[int, list[tuple]] = {}
        binary: dict[tuple[int, int], list[tuple]] = {}
        variables: set[int] = set()
        for s, t in atoms:
            variables.update(x for x in (s, t) if x >= 0)
            if s < 0 and t < 0:
                if a[-s - 1, -t - 1] == 0:
                    return 0
            elif s == t:
                if not self.loops:
                    return 0
                unary.setdefault(s, []).append(("loop",))
            elif s < 0:
                unary.setdefault(t, []).append(("out", -s - 1))
            elif t < 0:
                unary.setdefault(s, []).append(("in", -t - 1))
            else:  # on a symmetric relation R'(= Aᵀ) is R: one key, one memo entry
                flipped = ("R",) if self.symmetric else ("R'",)
                pair, key = ((s, t), ("R",)) if s < t else ((t, s), flipped)
                binary.setdefault(pair, []).append(key)
        # Subgoals are 0/1 factors: a repeat (R(x, y) twice on a symmetric R) is one.
        units = {x: _product(list(set(unary.get(x, [])))) for x in variables}
        pairs = {p: _product(list(set(ks))) for p, ks in binary.items()}
        return self._eliminate(variables, units, pairs)

    def _oriented(self, pairs: dict, x: int, y: int) -> tuple:
        """The key of the factor on (x, y) with rows x."""
        return pairs[(x, y)] if (x, y) in pairs else self.transpose(pairs[(y, x)])

    def _eliminate(self, variables: set[int], units: dict, pairs: dict) -> int:
        total = 1
        while variables:
            nbrs = {x: set() for x in variables}
            for x, y in pairs:
                nbrs[x].add(y)
                nbrs[y].add(x)
            if len(variables) == 3 and len(pairs) == 3:
                return total * self._triangle(sorted(variables), units, pairs)
            small = [x for x in variables if len(nbrs[x]) <= 2]
            if not small:
                raise Unsupported("every variable has factors to three others")
            v = min(small, key=lambda x: (self._cost(x, nbrs[x], units, pairs), x))
            variables.discard(v)
            u = units.pop(v)
            if not nbrs[v]:
                total *= self.m if u == ("1",) else exact_sum(self.vec(u).arr)
                if total == 0:
                    return 0
                continue
            if len(nbrs[v]) == 1:
                (x,) = nbrs[v]
                key = ("mv", self._oriented(pairs, x, v), u)
                pairs.pop((min(x, v), max(x, v)))
                units[x] = _product([units[x], key])
                continue
            x, y = sorted(nbrs[v])
            left, right = self._oriented(pairs, x, v), self._oriented(pairs, v, y)
            # With a factor F on (x, y) already, only F's entries of the product
            # count: F ∘ (left·D·right) by the masked product (GraphBLAS's
            # C⟨F⟩ = A·A for a diamond), no full product formed.
            if (x, y) in pairs:
                mask = ("masked", left, u, right, self._support(pairs[(x, y)]))
                key = _product([pairs[(x, y)], mask])
            else:
                key = ("@", left, u, right)
            self.mat(key)
            pairs.pop((min(x, v), max(x, v)))
            pairs.pop((min(y, v), max(y, v)))
            pairs[(x, y)] = key
        return total

    def _cost(self, v: int, nbrs: set[int], units: dict, pairs: dict) -> tuple[int, int]:
        """(factors v spans, multiplications) of eliminating v: vectors first,
        then the cheapest product."""
        if len(nbrs) < 2:
            return (len(nbrs), 0)
        x, y = sorted(nbrs)
        return (2, self.flops(self._oriented(pairs, x, v), units[v], self._oriented(pairs, v, y)))

    def _triangle(self, xs: list[int], units: dict, pairs: dict) -> int:
        """Σ over three variables, each pair with a factor: u_xᵀ W u_z with
        W = T_xz ∘ (T_xy · diag(u_y) · T_yz) for the rotation whose W is
        memoised or cheapest. W has the pattern of one factor: it is the
        memoised product times the third elementwise, or the product masked
        by the third as it is summed (Rust, ``_core.graph.masked_product``: no
        product formed), and memoised, so that the triangles the merged
        patterns leave (the same three factors, other unaries) are two
        matrix–vector steps each."""
        plain = ("1",) == units[xs[0]] == units[xs[1]] == units[xs[2]]
        if plain and self.symmetric and not self.loops and \
                all(key == ("R",) for key in pairs.values()):
            # tr(A³) of a symmetric loopless R: 3! × its triangles, by the clique path.
            if ("triangles",) not in self.memo:
                self.memo[("triangles",)] = int(_core.graph.cliques(self.relation, 3))
            return self.memo[("triangles",)]  # type: ignore[return-value]
        rotations = []
        for x, y, z in ((xs[0], xs[1], xs[2]), (xs[1], xs[2], xs[0]), (xs[2], xs[0], xs[1])):
            left, right = self._oriented(pairs, x, y), self._oriented(pairs, y, z)
            third = self._oriented(pairs, x, z)
            product = ("@", left, units[y], right)
            mask = ("masked", left, units[y], right, self._support(third))
            fresh = product not in self.memo and mask not in self.memo
            key = _product([product if product in self.memo else mask, third])
            rotations.append((fresh, self.flops(left, units[y], right), x, z, key))
        *_, x, z, key = min(rotations, key=lambda r: r[:2])
        weights, ux, uz = self.mat(key), self.vec(units[x]), self.vec(units[z])
        if uz is not None:
            weights = self._scale_cols(weights, uz)
        if ux is None:
            return exact_sum(weights.csr.data)
        _check(int(weights.rows.max(initial=0)) * weights.top * ux.top)
        rows = np.asarray(weights.csr.sum(axis=1)).ravel().astype(np.int64)
        return exact_sum(rows * ux.arr)

    def _masked(self, key: tuple) -> Mat:
        """left · diag(mid) · right at the entries of ``mask`` only."""
        _, left, mid, right, mask = key
        m1, u, m2, pattern = self.mat(left), self.vec(mid), self.mat(right), self.mat(mask)
        if u is not None:
            m2 = self._scale_rows(m2, u)
        self.charge(int(np.dot(m1.cols.astype(np.float64), m2.rows.astype(np.float64))))
        top = int(m1.rows.max(initial=0)) * m1.top * m2.top
        _check(top)  # so the kernel's entries stay below 2^63
        values = _core.graph.masked_product(_arrays(m1), _arrays(m2), _arrays(pattern))
        # The mask's own index arrays (explicit zeros kept): an elementwise
        # product with the mask, or anything of its pattern, is one of values.
        p = pattern.csr
        return Mat(self.sp.csr_array((values, p.indices, p.indptr), shape=p.shape), top)

    def _support(self, key: tuple) -> tuple:
        """A key whose pattern holds ``key``'s (its zeros are the key's zeros
        or more), so that a product masked by it serves every factor it
        bounds (the diamond's second tip reuses its first's A·A at A):
        an elementwise product is bounded by each part (a leaf preferred),
        a masked product by its mask."""
        if key[0] == "*":
            return min((self._support(k) for k in key[1:]),
                       key=lambda k: (k not in (("R",), ("R'",)), repr(k)))
        if key[0] == "masked":
            return key[4]
        if key[0] == "T":
            return self.transpose(self._support(key[1]))
        return key

    def _scale_cols(self, mat: Mat, u: Vec) -> Mat:
        _check(mat.top * u.top)
        scaled = mat.csr.copy()
        scaled.data = scaled.data * u.arr[scaled.indices]
        return Mat(scaled, mat.top * u.top)


def _arrays(mat: Mat) -> tuple:
    """A matrix as ``_core.graph.masked_product`` takes it: int64 CSR arrays, columns."""
    c = mat.csr
    return (np.asarray(c.indptr, dtype=np.int64), np.asarray(c.indices, dtype=np.int64),
            np.asarray(c.data, dtype=np.int64), c.shape[1])


def _product(keys: list[tuple]) -> tuple:
    """The key of the elementwise product of factors (all-ones when none).
    Repeats stay: a factor twice is its square (degrees are not 0/1)."""
    keys = sorted((k for k in keys if k != ("1",)), key=repr)  # keys mix str, int, tuple
    if not keys:
        return ("1",)
    return keys[0] if len(keys) == 1 else ("*", *keys)
