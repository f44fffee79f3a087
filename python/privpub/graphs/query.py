"""CQ(≠) queries: conjunctive queries with disequalities, in datalog syntax.

    q(x, y, z) :- R(x, y), R(y, z), R(z, x), x != y, y != z, z != x

A query's value is the number of distinct assignments of its head
variables satisfying the body (Rastogi et al., PODS 2009, Sec. 2.1). Terms
are variables (names starting with a letter or ``_``) or constants (integers,
or quoted strings ``'alice'``), which name nodes by their original ids.
Subgoals may use any relation name and arity (the analysis of Sec. 3.1 is
general); counting over a :class:`~privpub.graphs.Graph` needs binary
subgoals of one relation, named as the graph names it (``R`` unless the
graph declares other names).

The catalog builds the queries of the paper's Figure 1(c) (docs/design.md,
"Figure 1(c) did not survive", restates them): :func:`triangle`, :func:`two_path`,
:func:`cycle`, :func:`path_from`, :func:`clique`, :func:`pattern`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from privpub.core import validate
from privpub.core.errors import ParameterError, QueryError

#: What a relation name may be: the parser's name token.
RELATION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def relation_name(value: Any, what: str = "relation") -> str:
    """A relation name as queries spell it (``R``, ``Friends``), or a
    ParameterError naming the value."""
    if not isinstance(value, str) or not RELATION_NAME.fullmatch(value):
        raise ParameterError(f"{what} must be a relation name (a letter or _ then letters, "
                             f"digits, _), got {value!r}")
    return value


@dataclass(frozen=True, order=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    value: Any

    def __post_init__(self) -> None:
        try:
            hash(self.value)
        except TypeError:
            raise QueryError(f"constant {self.value!r} is a {type(self.value).__name__}; a "
                             "constant names a node by its id, which is hashable") from None

    def __str__(self) -> str:
        return repr(self.value) if isinstance(self.value, str) else str(self.value)


Term = Var | Const


@dataclass(frozen=True)
class Atom:
    """A subgoal ``relation(terms...)``."""

    relation: str
    terms: tuple[Term, ...]

    def variables(self) -> set[Var]:
        return {t for t in self.terms if isinstance(t, Var)}

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.terms))})"


def term_key(t: Term) -> tuple:
    """An order on terms (variables, then constants by type and value) for
    canonical forms: sorting never compares values of different types."""
    return (0, t.name) if isinstance(t, Var) else (1, str(type(t.value)), str(t.value))


@dataclass(frozen=True)
class CQ:
    """A CQ(≠) query: head variables, subgoals, disequalities (as a set of
    unordered pairs)."""

    name: str
    head: tuple[Var, ...]
    atoms: tuple[Atom, ...]
    neq: frozenset[frozenset[Term]]

    # ------------------------------------------------------------------ facts
    @property
    def goals(self) -> frozenset[Atom]:
        """goals(q): the set of subgoals (repeats collapse)."""
        return frozenset(self.atoms)

    @property
    def variables(self) -> frozenset[Var]:
        """vars(q): the variables of the subgoals."""
        return frozenset(v for a in self.atoms for v in a.variables())

    @property
    def constants(self) -> frozenset[Const]:
        """const(q): constants of the subgoals and disequalities."""
        terms = [t for a in self.atoms for t in a.terms]
        terms += [t for pair in self.neq for t in pair]
        return frozenset(t for t in terms if isinstance(t, Const))

    @property
    def g(self) -> int:
        """Number of subgoals (as Algorithm 2.1 counts them)."""
        return len(self.goals)

    @property
    def v(self) -> int:
        """Number of variables."""
        return len(self.variables)

    def neq_pairs(self) -> list[tuple[Term, Term]]:
        """The disequalities as ordered pairs, in a fixed order."""
        pairs = [tuple(sorted(p, key=term_key)) for p in self.neq]
        return sorted(pairs, key=lambda p: (term_key(p[0]), term_key(p[1])))

    def __str__(self) -> str:
        body = [str(a) for a in self.atoms]
        body += [f"{a} != {b}" for a, b in self.neq_pairs()]
        return f"{self.name}({', '.join(map(str, self.head))}) :- {', '.join(body)}"

    # ---------------------------------------------------------------- parsing
    @classmethod
    def parse(cls, text: str) -> CQ:
        """Parse ``name(head) :- subgoal, ..., t != t, ...``.

        Raises
        ------
        QueryError
            With the position of the offending token and a caret under it.
        """
        if not isinstance(text, str):
            raise QueryError(f"a query must be a string, got {type(text).__name__}")
        return _Parser(text).query()

    @classmethod
    def build(cls, name: str, head: Sequence[str], atoms: Iterable[tuple[str, Sequence[Any]]],
              neq: Iterable[tuple[Any, Any]] = ()) -> CQ:
        """A query from Python values: strings are variables, other values constants
        (use ``Const('alice')`` for a string constant)."""
        def term(x: Any) -> Term:
            if isinstance(x, (Var, Const)):
                return x
            return Var(x) if isinstance(x, str) else Const(x)
        q = CQ(name, tuple(Var(h) for h in head),
               tuple(Atom(r, tuple(term(t) for t in ts)) for r, ts in atoms),
               frozenset(frozenset((term(a), term(b))) for a, b in neq))
        q.check()
        return q

    def check(self) -> None:
        """Safety: head variables and disequality variables appear in a subgoal;
        a disequality compares two different terms."""
        if not self.atoms:
            raise QueryError(f"query {self.name} has no subgoal")
        body = self.variables
        if len(set(self.head)) != len(self.head):
            raise QueryError(f"head of {self.name} repeats a variable")
        for h in self.head:
            if h not in body:
                raise QueryError(f"head variable {h} appears in no subgoal")
        for pair in self.neq:
            if len(pair) != 2:
                (t,) = tuple(pair)
                raise QueryError(f"disequality {t} != {t} can never hold")
            for t in pair:
                if isinstance(t, Var) and t not in body:
                    raise QueryError(f"variable {t} of a disequality appears in no subgoal")


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<arrow>:-)
  | (?P<neq>!=|≠|<>)
  | (?P<num>-?\d+)
  | (?P<str>'[^']*'|"[^"]*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[(),])
""", re.VERBOSE)


class _Parser:
    def __init__(self, text: str):
        self.text, self.tokens = text, []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                self.fail(pos, f"unexpected character {text[pos]!r}")
            if m.lastgroup != "ws":
                self.tokens.append((m.lastgroup, m.group(), pos))
            pos = m.end()
        self.i = 0

    def fail(self, pos: int, message: str):
        raise QueryError(f"{message} at position {pos}:\n  {self.text}\n  {' ' * pos}^")

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "", len(self.text))

    def take(self, kind: str, value: str | None = None, what: str = "") -> tuple[str, str, int]:
        tok = self.peek()
        if tok[0] != kind or (value is not None and tok[1] != value):
            found = "end of query" if tok[0] == "end" else repr(tok[1])
            self.fail(tok[2], f"expected {what or repr(value or kind)}, found {found}")
        self.i += 1
        return tok

    def term(self) -> Term:
        kind, value, pos = self.peek()
        if kind == "name":
            self.i += 1
            return Var(value)
        if kind == "num":
            self.i += 1
            return Const(int(value))
        if kind == "str":
            self.i += 1
            return Const(value[1:-1])
        found = "end of query" if kind == "end" else repr(value)
        self.fail(pos, f"expected a variable or constant, found {found}")

    def args(self) -> list[tuple[Term, int]]:
        self.take("punct", "(")
        out = []
        if self.peek()[1] != ")":
            while True:
                pos = self.peek()[2]
                out.append((self.term(), pos))
                if self.peek()[1] != ",":
                    break
                self.i += 1
        self.take("punct", ")", "',' or ')'")
        return out

    def query(self) -> CQ:
        _, name, _ = self.take("name", what="a query name")
        head = []
        for t, pos in self.args():
            if not isinstance(t, Var):
                self.fail(pos, f"head term {t} is a constant; the head lists variables")
            if t in head:
                self.fail(pos, f"head variable {t} is repeated")
            head.append(t)
        self.take("arrow", what="':-'")
        atoms, neq, positions = [], [], {}
        while True:
            kind, value, pos = self.peek()
            nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
            if kind == "name" and nxt is not None and nxt[1] == "(":
                self.i += 1
                terms = [t for t, _ in self.args()]
                if not terms:
                    self.fail(pos, f"subgoal {value}() has no arguments")
                atoms.append(Atom(value, tuple(terms)))
                for t in terms:
                    if isinstance(t, Var):
                        positions.setdefault(t, pos)
            else:
                left = self.term()
                self.take("neq", what="'!=' (a subgoal needs '(')")
                rpos = self.peek()[2]
                right = self.term()
                if left == right:
                    self.fail(pos, f"disequality {left} != {right} can never hold")
                neq.append((left, right, pos, rpos))
            if self.peek()[0] == "end":
                break
            self.take("punct", ",", "',' or end of query")
        if not atoms:
            self.fail(0, "the body has no subgoal")
        arity = {}
        for a in atoms:
            if arity.setdefault(a.relation, len(a.terms)) != len(a.terms):
                self.fail(self.text.find(a.relation + "("),
                          f"relation {a.relation} used with arities {arity[a.relation]} and "
                          f"{len(a.terms)}")
        body = {v for a in atoms for v in a.variables()}
        for h in head:
            if h not in body:
                self.fail(self.text.find(h.name), f"head variable {h} appears in no subgoal")
        for left, right, lpos, rpos in neq:
            for t, p in ((left, lpos), (right, rpos)):
                if isinstance(t, Var) and t not in body:
                    self.fail(p, f"variable {t} of a disequality appears in no subgoal")
        return CQ(name, tuple(head), tuple(atoms),
                  frozenset(frozenset((a, b)) for a, b, _, _ in neq))


# ------------------------------------------------------------------- catalog
def as_query(value: Any) -> CQ:
    """A CQ, or its datalog text parsed (errors point at the token)."""
    if isinstance(value, CQ):
        return value
    if isinstance(value, str):
        return CQ.parse(value)
    raise ParameterError(f"query must be a CQ or its text, got {type(value).__name__}")


def _distinct(names: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.combinations(names, 2))


# Each takes ``relation`` (default ``R``): the name the query reads, which must
# be one the graph declares (Graph.from_edges(..., relation=...)).
def triangle(relation: str = "R") -> CQ:
    """Δ(x,y,z) :- R(x,y), R(y,z), R(z,x), x≠y, y≠z, z≠x (6 per undirected triangle)."""
    r = relation_name(relation)
    return CQ.parse(f"triangle(x, y, z) :- {r}(x, y), {r}(y, z), {r}(z, x), "
                    "x != y, y != z, z != x")


def two_path(relation: str = "R") -> CQ:
    """∨(x,y,z) :- R(x,y), R(y,z), x≠y, y≠z, z≠x (two-length paths)."""
    r = relation_name(relation)
    return CQ.parse(f"two_path(x, y, z) :- {r}(x, y), {r}(y, z), x != y, y != z, z != x")


def cycle(i: int, relation: str = "R") -> CQ:
    """c_i: a directed cycle of length i ≥ 2 with pairwise distinct variables."""
    i = validate.integer("i (cycle length)", i, minimum=2)
    r = relation_name(relation)
    xs = [f"x{k}" for k in range(1, i + 1)]
    return CQ.build(f"cycle{i}", xs, [(r, (xs[k], xs[(k + 1) % i])) for k in range(i)],
                    _distinct(xs))


def path_from(v: Any, i: int, relation: str = "R") -> CQ:
    """d_{i,v}(x_i) :- R(v, x_1), R(x_1, x_2), …, R(x_{i−1}, x_i): the number of
    distinct nodes at the end of a walk of length i from the node ``v`` (its
    original id)."""
    i = validate.integer("i (path length)", i, minimum=1)
    r = relation_name(relation)
    if isinstance(v, (Var, Const)):
        raise QueryError("v is a node id (an int or a string), not a term")
    xs = [f"x{k}" for k in range(1, i + 1)]
    terms = [Const(v)] + xs
    return CQ.build(f"path_from_{v}_{i}", [xs[-1]],
                    [(r, (terms[k], terms[k + 1])) for k in range(i)])


def clique(i: int, relation: str = "R") -> CQ:
    """K_i: R on every ordered pair of i ≥ 2 pairwise distinct variables."""
    i = validate.integer("i (clique size)", i, minimum=2)
    r = relation_name(relation)
    xs = [f"x{k}" for k in range(1, i + 1)]
    return CQ.build(f"clique{i}", xs,
                    [(r, (a, b)) for a in xs for b in xs if a != b], _distinct(xs))


def pattern(edges: Iterable[tuple[Any, Any]], name: str = "pattern",
            relation: str = "R") -> CQ:
    """h_{i,j}: the pattern graph with the given j directed edges over i nodes,
    nodes as pairwise distinct variables. On a symmetric R (an undirected
    graph) one orientation per edge is enough; each undirected occurrence is
    then counted once per automorphism of the pattern."""
    r = relation_name(relation)
    edges = [tuple(e) for e in edges]
    if not edges or any(len(e) != 2 for e in edges):
        raise QueryError("a pattern is a non-empty list of (node, node) edges")
    nodes: list[Any] = []
    for e in edges:
        for x in e:
            try:
                hash(x)
            except TypeError:
                raise QueryError(f"pattern node {x!r} in edge {e} is a {type(x).__name__}; "
                                 "pattern nodes are labels (ints, strings, …)") from None
        if e[0] == e[1]:
            raise QueryError(f"pattern edge {e} is a self-loop; pattern nodes are distinct")
        for x in e:
            if x not in nodes:
                nodes.append(x)
    names = [f"x{k}" for k in range(1, len(nodes) + 1)]
    index = {x: names[k] for k, x in enumerate(nodes)}
    return CQ.build(name, names, [(r, (index[a], index[b])) for a, b in edges],
                    _distinct(names))
