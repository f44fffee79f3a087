"""A graph as the paper's database: one binary relation R(u, v) over m nodes.

Rastogi et al. (PODS 2009, Sec. 2.1) model a social network as a relation
R over a domain of m nodes; a *tuple* of R is what the privacy guarantees
protect. A directed graph is R itself; an undirected graph is the symmetric
R holding both (u, v) and (v, u) for each edge, so one friendship is two
tuples (the guarantees say what that means for it).

Node ids may be any hashable values: they are mapped to dense ints 0..n−1 in
sorted order (first-appearance order when they do not sort), kept in
``Graph.labels``. The CSR adjacency is built by the Rust core; data stays in
numpy arrays throughout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privpub import _core
from privpub.core import validate
from privpub.core.errors import DataTypeError, DomainError, MissingValueError, ParameterError

DUPLICATE_POLICIES = ("error", "merge")


def _dense_ids(src: Any, dst: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src codes, dst codes, labels): one label table shared by both columns."""
    both = pd.concat([pd.Series(src), pd.Series(dst)], ignore_index=True)
    if both.isna().any():
        row = int(np.flatnonzero(both.isna().to_numpy())[0])
        side, row = ("source", row) if row < len(src) else ("target", row - len(src))
        raise MissingValueError(f"edge row {row} has a missing {side} node id; "
                                "privpub never drops edges silently")
    try:
        codes, labels = pd.factorize(both, sort=True)
    except TypeError:  # ids of mixed types that do not sort
        codes, labels = pd.factorize(both, sort=False)
    codes = codes.astype(np.int64)
    return codes[: len(src)], codes[len(src):], np.asarray(labels)


class Graph:
    """The relation R(u, v) in CSR form (out- and in-adjacency, sorted).

    Build one with :meth:`from_edges`, :meth:`from_frame` (pandas, or Arrow
    via ``from_arrow``) or :meth:`from_networkx`.

    Attributes
    ----------
    m : int
        The domain size of the paper (number of nodes, isolated ones
        included). Defaults to the number of distinct ids seen; pass ``m`` to
        declare a larger public domain (the extra nodes are isolated).
    directed : bool
        False when R was made symmetric from undirected edges.
    labels : numpy.ndarray
        ``labels[i]`` is the original id of node ``i`` (length ≤ m).
    merged : int
        Repeated tuples of the input merged into one (0 unless
        ``duplicates="merge"``).
    m_derived : bool
        True when m was taken from the data (the ids seen) rather than given:
        publishing m then reveals the number of nodes, and guarantees say so.

    Examples
    --------
    >>> import numpy as np
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=False)
    >>> g.m, g.tuples
    (3, 6)
    """

    def __init__(self, csr: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], m: int,
                 labels: np.ndarray, directed: bool, merged: int = 0, m_derived: bool = True):
        self._csr = csr
        self.m, self.labels, self.directed, self.merged = m, labels, directed, merged
        self.m_derived = m_derived

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_edges(cls, edges: Any, *, directed: bool = True, m: int | None = None,
                   duplicates: str = "error") -> Graph:
        """R from a (k, 2) array of (source, target) node ids.

        Parameters
        ----------
        edges : array-like of shape (k, 2)
            Any hashable ids (ints, strings, …), mapped to dense ints.
        directed : bool
            ``False`` stores each edge in both directions (symmetric R).
        m : int, optional
            Number of nodes of the domain; at least the number of distinct ids.
        duplicates : {"error", "merge"}
            A tuple listed twice (for undirected input, the same pair in
            either order) is an error naming the row by default; ``"merge"``
            keeps one copy and records how many were merged in ``merged``.
        """
        arr = np.asarray(edges)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise DataTypeError(f"edges must be a (k, 2) array of (source, target) ids, "
                                f"got shape {arr.shape}")
        return cls._build(arr[:, 0], arr[:, 1], directed, m, duplicates)

    @classmethod
    def from_frame(cls, frame: Any, source: str = "source", target: str = "target", *,
                   directed: bool = True, m: int | None = None,
                   duplicates: str = "error") -> Graph:
        """R from two columns of a pandas DataFrame or a pyarrow Table."""
        if not isinstance(frame, pd.DataFrame):
            if hasattr(frame, "to_pandas"):
                frame = frame.to_pandas()
            else:
                raise DataTypeError(f"expected a pandas DataFrame or Arrow table, got "
                                    f"{type(frame).__name__}")
        for name in (source, target):
            if name not in frame.columns:
                raise DataTypeError(f"no column {name!r} in the edge table (columns: "
                                    f"{', '.join(map(str, frame.columns))})")
        return cls._build(frame[source].to_numpy(), frame[target].to_numpy(), directed, m,
                          duplicates)

    from_arrow = from_frame

    @classmethod
    def from_networkx(cls, g: Any, *, m: int | None = None) -> Graph:
        """R from a networkx graph: directed for DiGraph, symmetric for Graph.
        Isolated nodes count towards m."""
        try:
            import networkx as nx
        except ImportError as exc:  # pragma: no cover - networkx is a test dependency
            raise ParameterError("from_networkx needs networkx installed") from exc
        if g.is_multigraph():
            raise DataTypeError("a multigraph has repeated tuples; R is a set of tuples "
                                "(convert with networkx.Graph(g) or DiGraph(g) first)")
        m_derived = m is None
        nodes = list(g.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edges = np.array([(index[u], index[v]) for u, v in g.edges], dtype=np.int64)
        edges = edges.reshape(-1, 2)
        m = len(nodes) if m is None else validate.count("m", m)
        if m < len(nodes):
            raise ParameterError(f"m = {m} is below the {len(nodes)} nodes of the graph")
        csr, merged = _core.graph_build(edges[:, 0].copy(), edges[:, 1].copy(), m,
                                        not nx.is_directed(g))
        labels = np.empty(len(nodes), dtype=object)
        labels[:] = nodes
        return cls(csr, m, labels, nx.is_directed(g), merged, m_derived)

    @classmethod
    def _build(cls, src: Any, dst: Any, directed: bool, m: int | None,
               duplicates: str) -> Graph:
        if not isinstance(directed, bool):
            raise ParameterError(f"directed must be True or False, got {directed!r}")
        if duplicates not in DUPLICATE_POLICIES:
            raise ParameterError(f"duplicates must be one of {DUPLICATE_POLICIES}, got "
                                 f"{duplicates!r}")
        s, d, labels = _dense_ids(src, dst)
        m_derived = m is None
        m = len(labels) if m is None else validate.count("m", m)
        if m < len(labels):
            raise ParameterError(f"m = {m} is below the {len(labels)} distinct node ids "
                                 "in the edges")
        csr, repeated = _core.graph_build(s, d, m, not directed)
        if repeated and duplicates == "error":
            row = _first_repeat(s, d, directed)
            pair = tuple(np.asarray(x)[row].item() for x in (src, dst))
            raise DomainError(f"edge row {row} {pair!r} repeats an "
                              f"earlier tuple of R ({repeated} repeated tuples in all); R is "
                              "a set: pass duplicates='merge' to keep one copy")
        return cls(csr, m, labels, directed, int(repeated), m_derived)

    # ---------------------------------------------------------------- accessors
    @property
    def tuples(self) -> int:
        """Number of tuples of R (an undirected edge counts twice, a loop once)."""
        return int(self._csr[1].size)

    @property
    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(out_offsets, out_targets, in_offsets, in_sources)."""
        return self._csr

    @property
    def relation(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(m, *csr): the one argument the graph kernels of ``_core`` take."""
        return (self.m, *self._csr)

    def out_degrees(self) -> np.ndarray:
        return np.diff(self._csr[0]).astype(np.int64)

    def in_degrees(self) -> np.ndarray:
        return np.diff(self._csr[2]).astype(np.int64)

    @property
    def symmetric(self) -> bool:
        """Whether R(u, v) ⇔ R(v, u) (true for every undirected graph)."""
        o, t, i, s = self._csr
        return bool(np.array_equal(o, i) and np.array_equal(t, s))

    def edges(self) -> np.ndarray:
        """The tuples of R as a (tuples, 2) array of dense ids, sorted."""
        o, t = self._csr[0], self._csr[1]
        src = np.repeat(np.arange(self.m, dtype=np.int64), np.diff(o).astype(np.int64))
        return np.column_stack([src, t.astype(np.int64)])

    def node(self, label: Any) -> int:
        """The dense id of an original node id (for constants in queries)."""
        hits = np.flatnonzero(self.labels == label) if len(self.labels) else []
        if len(hits) == 0:
            raise DomainError(f"node {label!r} is not in the graph")
        return int(hits[0])

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Graph({kind}, m={self.m:,}, tuples={self.tuples:,})"


def _first_repeat(s: np.ndarray, d: np.ndarray, directed: bool) -> int:
    """Row of the first input tuple that repeats an earlier one (error path only)."""
    a, b = (s, d) if directed else (np.minimum(s, d), np.maximum(s, d))
    dup = pd.DataFrame({"a": a, "b": b}).duplicated(keep="first").to_numpy()
    return int(np.flatnonzero(dup)[0])


def check_graph(value: Any) -> Graph:
    """``value`` itself when it is a :class:`Graph`; a ParameterError otherwise."""
    if not isinstance(value, Graph):
        raise ParameterError(f"graph must be a privpub.graphs.Graph, got {type(value).__name__}")
    return value
