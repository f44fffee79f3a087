"""A graph as the paper's database: one binary relation R(u, v) over m nodes.

Rastogi et al. (PODS 2009, Sec. 2.1) model a social network as a relation
R over a domain of m nodes; a *tuple* of R is what the privacy guarantees
protect. A directed graph is R itself; an undirected graph is the symmetric
R holding both (u, v) and (v, u) for each edge, so one friendship is two
tuples (the guarantees say what that means for it).

An edge list is read as an undirected graph unless ``directed=True`` is
passed (:meth:`Graph.from_edges`, :meth:`Graph.from_frame`). That is
networkx's convention (``from_edgelist``, ``read_edgelist``,
``from_pandas_edgelist`` all build an undirected ``Graph`` by default; so
does igraph) and what edge-list files such as SNAP's social networks hold:
each friendship once, in an arbitrary orientation. Read as directed, such a
list counts only the triangles its orientations happen to make directed
cycles: Δ counted 0 on Les Misérables instead of 2,802 (467 triangles × 3!),
and every mechanism answered noise around 0. A list whose rows are one-way
tuples (followers, citations) asks for ``directed=True``.
:meth:`Graph.from_networkx` follows the networkx graph's own type.

Node ids may be any hashable values: they are mapped to dense ints 0..n−1 in
sorted order (first-appearance order when they do not sort), kept in
``Graph.labels``. Ids are labels, not positions, so negative or huge ints
are ids like any other; what is refused, with the edge row named, is a
missing id, a bool (True would merge with 1), a float that is not a whole
number, and an unhashable value. A Python list of pairs is read as objects,
so no id changes kind (numpy would turn ``[[1, "a"]]`` into strings). The
domain is bounded by the Rust core: node ids are 32-bit (m ≤ 2^32 − 1) and
the CSR's offsets (16(m + 1) bytes) must fit in memory; past either, m is a
named error. The CSR adjacency is built by the Rust core; data stays in
numpy arrays throughout.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

import privpub._core as _core
from privpub.core import validate
from privpub.core.errors import DataTypeError, DomainError, MissingValueError, ParameterError
from privpub.graphs.query import relation_name

DUPLICATE_POLICIES = ("error", "merge")
#: The largest domain the Rust core holds: node ids are 32-bit (rust/src/graph/csr.rs).
MAX_NODES = 2**32 - 1


def _side(i: int, k: int) -> tuple[int, str]:
    """(edge row, "source" or "target") of position i of the two id columns stacked."""
    return (i, "source") if i < k else (i - k, "target")


def _show(x: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return x.item() if isinstance(x, np.generic) else x


def _check_ids(both: pd.Series, k: int) -> pd.Series:
    """The stacked id columns, checked: no missing, bool, unhashable or
    non-integral numeric id (each a named error with its edge row); an object
    column of one kind (all ints, all strings, all floats) takes that kind's
    dtype, nothing converted across kinds."""
    missing = both.isna().to_numpy()
    if missing.any():
        row, side = _side(int(np.flatnonzero(missing)[0]), k)
        raise MissingValueError(f"edge row {row} has a missing {side} node id; "
                                "privpub never drops edges silently")
    values = both.to_numpy()
    kind = values.dtype.kind
    if kind == "b":
        raise DataTypeError(f"node id {_show(values[0])!r} (source of edge row 0) is a bool; a "
                            "bool is not a node id: pass ints or strings")
    if kind == "f":
        bad = ~np.isfinite(values) | (values != np.floor(values))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            row, side = _side(i, k)
            raise DomainError(f"node id {_show(values[i])!r} ({side} of edge row {row}) is not "
                              "an integer; a numeric node id must be a whole number")
    if kind == "c":
        raise DataTypeError(f"node id {_show(values[0])!r} (source of edge row 0) is a complex "
                            "number; pass ints or strings")
    if kind != "O":
        return both
    inferred = pd.api.types.infer_dtype(values, skipna=False)
    if inferred in ("integer", "string", "floating"):
        return _check_ids(both.infer_objects(), k) if inferred == "floating" else \
            both.infer_objects()
    for i, x in enumerate(values):  # mixed kinds (rare): find the offending id
        row, side = _side(i, k)
        if isinstance(x, (bool, np.bool_)):
            raise DataTypeError(f"node id {x!r} ({side} of edge row {row}) is a bool; a bool "
                                "is not a node id (True would merge with 1)")
        if isinstance(x, (float, np.floating)) and not float(x).is_integer():
            raise DomainError(f"node id {_show(x)!r} ({side} of edge row {row}) is not an "
                              "integer; a numeric node id must be a whole number")
        try:
            hash(x)
        except TypeError:
            raise DataTypeError(f"node id {x!r} ({side} of edge row {row}) is a "
                                f"{type(x).__name__}, which cannot be a node id (ids must be "
                                "hashable: ints, strings, …)") from None
    return both


def _dense_ids(src: Any, dst: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src codes, dst codes, labels): one label table shared by both columns."""
    both = _check_ids(pd.concat([pd.Series(src), pd.Series(dst)], ignore_index=True), len(src))
    try:
        codes, labels = pd.factorize(both, sort=True)
    except TypeError:  # ids of mixed types that do not sort
        codes, labels = pd.factorize(both, sort=False)
    codes = codes.astype(np.int64)
    return codes[: len(src)], codes[len(src):], np.asarray(labels)


def _edge_array(edges: Any) -> np.ndarray:
    """A (k, 2) array of ids. An array (numpy, pandas, …) keeps its dtype; any
    other iterable of pairs is read as objects, so numpy never converts across
    kinds (``[[1, "a"]]`` would otherwise make the int 1 the string "1", and
    ``[[True, 2]]`` make True the node 1)."""
    if isinstance(edges, (str, bytes, dict)) or edges is None:
        raise DataTypeError(f"edges must be a (k, 2) array of (source, target) ids, got "
                            f"{type(edges).__name__}")
    try:
        if hasattr(edges, "__array__"):
            arr = np.asarray(edges)
        else:
            arr = np.asarray(list(edges), dtype=object)
    except (TypeError, ValueError) as exc:
        raise DataTypeError(f"edges must be a (k, 2) array of (source, target) ids; the "
                            f"{type(edges).__name__} given is not one ({exc})") from None
    if arr.shape == (0,):  # [] : no edges (m= gives the isolated nodes)
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise DataTypeError(f"edges must be a (k, 2) array of (source, target) ids, "
                            f"got shape {arr.shape}")
    return arr


def _relation_names(value: Any) -> tuple[str, ...]:
    """The names a query may give the graph's relation: one name or a list of
    aliases, each a relation name, none repeated."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names:
        raise ParameterError(f"relation must be a relation name or a non-empty list of names, "
                             f"got {value!r}")
    out = tuple(relation_name(n) for n in names)
    if len(set(out)) != len(out):
        raise ParameterError(f"relation lists a name twice: {list(out)!r}")
    return out


def _physical_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def _domain_size(m: Any, ids: int) -> tuple[int, bool]:
    """(m, m_derived): the declared m, checked, or the number of distinct ids;
    within what the Rust core holds either way: node ids are 32-bit, and the
    CSR's two offset arrays (16(m + 1) bytes) must fit in memory (the Rust
    allocator aborts the process otherwise, so this is checked first)."""
    if m is None:
        if ids > MAX_NODES:
            raise DomainError(f"the edges hold {ids:,} distinct node ids, beyond the supported "
                              f"range: node ids are 32-bit, so a graph has at most 2^32 − 1 = "
                              f"{MAX_NODES:,} nodes")
        m_derived, what = True, f"the {ids:,} distinct node ids"
        m = ids
    else:
        m = validate.integer("m", m)
        if m > MAX_NODES:
            raise ParameterError(f"m = {m} is beyond the supported range: node ids are 32-bit, "
                                 f"so m must be at most 2^32 − 1 = {MAX_NODES:,}")
        if m < ids:
            raise ParameterError(f"m = {m} is below the {ids} distinct node ids in the edges")
        m_derived, what = False, f"m = {m}"
    need, memory = 16 * (m + 1), _physical_memory()
    if memory is not None and need > memory:
        raise (DomainError if m_derived else ParameterError)(
            f"{what}: the CSR holds two offset arrays of m + 1 64-bit entries "
            f"({need / 2**30:.1f} GiB), more than this machine's {memory / 2**30:.1f} GiB of "
            "memory")
    return m, m_derived


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
        False when R was made symmetric from undirected edges (the default
        of :meth:`from_edges` and :meth:`from_frame`).
    labels : numpy.ndarray
        ``labels[i]`` is the original id of node ``i`` (length ≤ m).
    merged : int
        Repeated tuples of the input merged into one (0 unless
        ``duplicates="merge"``).
    m_derived : bool
        True when m was taken from the data (the ids seen) rather than given:
        publishing m then reveals the number of nodes, and guarantees say so.
    relation_names : tuple of str
        The names a query may call the relation by: ``("R",)`` unless the
        builder's ``relation=`` declared others (``"Friends"``, or aliases
        ``["Friends", "R"]``). A query over any other name is a QueryError
        wherever it meets the graph (:func:`~privpub.graphs.exact.checked_inputs`).

    Examples
    --------
    >>> import numpy as np
    >>> g = Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]))   # undirected
    >>> g.m, g.tuples
    (3, 6)
    >>> Graph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), directed=True).tuples
    3
    """

    def __init__(self, csr: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], m: int,
                 labels: np.ndarray, directed: bool, merged: int = 0, m_derived: bool = True,
                 relation_names: tuple[str, ...] = ("R",)):
        self._csr = csr
        self.m, self.labels, self.directed, self.merged = m, labels, directed, merged
        self.m_derived = m_derived
        self.relation_names = _relation_names(relation_names)

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_edges(cls, edges: Any, *, directed: bool = False, m: int | None = None,
                   duplicates: str = "error", relation: str | list[str] = "R") -> Graph:
        """R from a (k, 2) array of (source, target) node ids.

        Parameters
        ----------
        edges : array-like of shape (k, 2)
            Any hashable ids (ints, strings, …), mapped to dense ints.
        directed : bool, default False
            ``False`` (the default) reads each row as an undirected edge and
            stores it in both directions (symmetric R); ``True`` reads each
            row as the one tuple R(source, target). Undirected is the default
            because edge lists are (networkx's convention, SNAP's files; see
            the module notes): read as directed, an undirected list counts
            only the triangles its arbitrary orientations happen to cycle.
        m : int, optional
            Number of nodes of the domain; at least the number of distinct ids.
        duplicates : {"error", "merge"}
            A tuple listed twice (for undirected input, the same pair in
            either order) is an error naming the row by default; ``"merge"``
            keeps one copy and records how many were merged in ``merged``.
        relation : str or list of str
            The name queries use for this relation (default ``R``, as in the
            paper), or several aliases; see :attr:`relation_names`.
        """
        arr = _edge_array(edges)
        return cls._build(arr[:, 0], arr[:, 1], directed, m, duplicates, relation)

    @classmethod
    def from_frame(cls, frame: Any, source: str = "source", target: str = "target", *,
                   directed: bool = False, m: int | None = None,
                   duplicates: str = "error", relation: str | list[str] = "R") -> Graph:
        """R from two columns of a pandas DataFrame or a pyarrow Table; the
        other parameters are :meth:`from_edges`' (undirected by default, as
        there)."""
        if not isinstance(frame, pd.DataFrame):
            if hasattr(frame, "to_pandas"):
                frame = frame.to_pandas()
            else:
                raise DataTypeError(f"expected a pandas DataFrame or Arrow table, got "
                                    f"{type(frame).__name__}")
        for name in (source, target):
            if not isinstance(name, Hashable) or name not in frame.columns:
                raise DataTypeError(f"no column {name!r} in the edge table (columns: "
                                    f"{', '.join(map(str, frame.columns))})")
        return cls._build(frame[source].to_numpy(), frame[target].to_numpy(), directed, m,
                          duplicates, relation)

    from_arrow = from_frame

    @classmethod
    def from_networkx(cls, g: Any, *, m: int | None = None,
                      relation: str | list[str] = "R") -> Graph:
        """R from a networkx graph: directed for DiGraph, symmetric for Graph.
        Isolated nodes count towards m."""
        names = _relation_names(relation)
        try:
            import networkx as nx
        except ImportError as exc:  # pragma: no cover - networkx is a test dependency
            raise ParameterError("from_networkx needs networkx installed") from exc
        if not isinstance(g, nx.Graph):
            raise DataTypeError(f"from_networkx needs a networkx graph, got "
                                f"{type(g).__name__} (use from_edges for an edge list)")
        if g.is_multigraph():
            raise DataTypeError("a multigraph has repeated tuples; R is a set of tuples "
                                "(convert with networkx.Graph(g) or DiGraph(g) first)")
        nodes = list(g.nodes)
        m, m_derived = _domain_size(m, len(nodes))
        index = {v: i for i, v in enumerate(nodes)}
        edges = np.array([(index[u], index[v]) for u, v in g.edges], dtype=np.int64)
        edges = edges.reshape(-1, 2)
        csr, merged = _core.graph.build(edges[:, 0].copy(), edges[:, 1].copy(), m,
                                        not nx.is_directed(g))
        labels = np.empty(len(nodes), dtype=object)
        labels[:] = nodes
        return cls(csr, m, labels, nx.is_directed(g), merged, m_derived, names)

    @classmethod
    def _build(cls, src: Any, dst: Any, directed: bool, m: int | None,
               duplicates: str, relation: Any) -> Graph:
        names = _relation_names(relation)
        if not isinstance(directed, bool):
            raise ParameterError(f"directed must be True or False, got {directed!r}")
        if duplicates not in DUPLICATE_POLICIES:
            raise ParameterError(f"duplicates must be one of {DUPLICATE_POLICIES}, got "
                                 f"{duplicates!r}")
        s, d, labels = _dense_ids(src, dst)
        m, m_derived = _domain_size(m, len(labels))
        csr, repeated = _core.graph.build(s, d, m, not directed)
        if repeated and duplicates == "error":
            row = _first_repeat(s, d, directed)
            pair = tuple(_show(np.asarray(x)[row]) for x in (src, dst))
            same = "" if directed else " (undirected: (u, v) and (v, u) are one edge)"
            hint = "" if directed else (", or directed=True if its rows are one-way tuples "
                                        "(then (u, v) and (v, u) differ)")
            raise DomainError(f"edge row {row} {pair!r} repeats an "
                              f"earlier tuple of R{same} ({repeated} repeated tuples in all); "
                              f"R is a set: pass duplicates='merge' to keep one copy{hint}")
        return cls(csr, m, labels, directed, int(repeated), m_derived, names)

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
        """(m, *csr): the one argument the graph kernels of ``_core.graph`` take."""
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
        if isinstance(label, (bool, np.bool_)):  # True == 1 would find node 1
            raise DomainError(f"node {label!r} is a bool, not a node id")
        at = pd.Index(self.labels, tupleize_cols=False).get_indexer([label])[0]
        if at < 0:
            raise DomainError(f"node {label!r} is not in the graph")
        return int(at)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        names = "" if self.relation_names == ("R",) else \
            f", relation={'/'.join(self.relation_names)}"
        return f"Graph({kind}, m={self.m:,}, tuples={self.tuples:,}{names})"


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
