"""From a parsed condition to its atoms: each atom checked and given its meaning
(:func:`resolve_atom`), and query text's atoms resolved once per schema (issue 36).

A condition is atoms (comparisons, IN, BETWEEN, LIKE, IS NULL, TRUE / FALSE)
joined by AND / OR / NOT. :func:`resolve_atom` holds the one sequence that
makes an atom of the tree: refused or accepted by
:mod:`~privpub.counting.queryatoms`, its missing cells placed, an ordered
attribute's values ranked and literals past int64 folded by
:mod:`~privpub.counting.queryorder`. An atom's outcome depends on the schema
and the atom alone, so for query text it is kept by the parser's tuple of
the atom (:func:`split_text`): the bench's 5,000 texts over Adult hold 475
distinct atoms among 12,149, and a text whose atoms are all known costs its
parse and a walk over its AND / OR / NOT. The sqlglot tree of the whole
condition is built from the same tuples only when something asks for it
(:func:`build_tree`: its SQL for DuckDB, a row mask), equal to the tree the
whole-text path builds.

Any refusal on this path is given by the whole-text path instead
(:class:`~privpub.counting.query.Condition` parses the text again), so a text
with several faults names the same one whichever path reads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from privpub.core.errors import QueryError
from privpub.counting import queryatoms, queryorder, querytext, querytree
from privpub.counting.querytree import Formula

if TYPE_CHECKING:
    from privpub.domain.schema import Schema


@dataclass(frozen=True, eq=False)
class ConditionAtom:
    """One atomic predicate: the attributes it reads (schema order), its tree
    and its SQL text as evaluated. :attr:`written` is the atom as a query
    states it, where ``node`` differs (an ordered attribute's values become
    domain indices, which do not parse as a query again): :attr:`text` parses
    back to this atom, and whatever reads the atom's values (SPLU-Gen's
    equalities, a message) reads them from :attr:`written`. The tree is never
    changed once built (atoms of query text are shared by every condition
    that holds them), so its SQL is generated when first asked for."""

    attributes: tuple[str, ...]
    node: exp.Expression = field(repr=False)
    #: The atom as written, with its values as labels (None: the same as ``node``).
    written_node: exp.Expression | None = field(default=None, repr=False)

    @cached_property
    def sql(self) -> str:
        """The atom as the SQL that is evaluated (an ordered attribute's values as indices)."""
        return querytree.to_sql(self.node)

    @property
    def written(self) -> exp.Expression:
        """The atom with the values the query states (an ordered attribute's
        labels, not the domain indices ``node`` compares)."""
        return self.node if self.written_node is None else self.written_node

    @property
    def text(self) -> str:
        """The atom as query text (what a Condition over the schema reads)."""
        return self.sql if self.written_node is None else querytree.to_sql(self.written_node)


#: Replaces a node of the tree being resolved by another (the root included).
Replace = Callable[[exp.Expression, exp.Expression], None]


def resolve_atom(schema: Schema, node: exp.Expression, replace: Replace,
                 ranks: dict[str, dict[object, int]]
                 ) -> tuple[Formula, list[ConditionAtom]]:
    """The formula of one atom of a tree (its atoms numbered from 0) and those
    atoms; ``node`` is replaced in its tree (by ``replace``) by what it means:
    ``c IS NULL`` by an equality, an order comparison on a column with a
    missing label by ``(atom AND c <> label)``, ranked and folded values.
    ``ranks`` caches each ordered attribute's value → index map."""
    if not isinstance(node, queryatoms.ATOMS):
        raise QueryError(f"unsupported SQL in a condition: {queryatoms.text(node)!r} "
                         f"({type(node).__name__}); use comparisons, IN, BETWEEN, LIKE, "
                         "arithmetic, AND, OR, NOT")
    atoms: list[ConditionAtom] = []

    def atom(node: exp.Expression, parts: list[exp.Expression] | None = None) -> Formula:
        checked = queryatoms.check_values(schema, node)
        if checked is not node or parts is None:
            parts = querytree.nodes(checked)
        # (check_values may give an IN atom a new list node: its columns and literals stay.)
        columns = set(queryatoms.column_names(checked, parts))
        written = None
        if any(schema[c].ordered for c in columns):
            written = checked.copy()  # ranking rewrites the atom in place: keep it as written
            checked = queryorder.rank_ordered(schema, checked, ranks)
            parts = querytree.nodes(checked)
        checked = queryorder.fold_wide(schema, checked, parts)
        if checked is not node:
            replace(node, checked)
        atoms.append(ConditionAtom(tuple(n for n in schema.names if n in columns), checked,
                                   written))
        return ("atom", len(atoms) - 1)

    parts = querytree.nodes(node)  # (one walk serves every check)
    if not isinstance(node, exp.Is):  # (IS NULL is checked as it is placed)
        queryatoms.check_atom(schema, node, parts)
        queryorder.check_order(schema, node, parts)
    placed = queryorder.place_missing(schema, node, parts)
    if placed is node:
        return atom(node, parts), atoms
    replace(node, placed)
    if isinstance(placed, exp.Not):  # NOT LIKE as NOT of the guarded LIKE
        return ("not", ("and", [atom(p) for p in querytree.chain(placed.this.this)])), atoms
    if not isinstance(placed, exp.Paren):  # IS NULL as an equality or FALSE
        return atom(placed), atoms
    return ("and", [atom(part) for part in querytree.chain(placed.this)]), atoms


def shifted(formula: Formula, offset: int) -> Formula:
    """``formula`` with its atoms renumbered from ``offset``."""
    kind, inner = formula
    if isinstance(inner, int):
        return (kind, inner + offset)
    if isinstance(inner, tuple):
        return (kind, shifted(inner, offset))
    return (kind, [shifted(f, offset) for f in inner])


# ---- query text: atoms kept by the parser's tuple ---------------------------------------------


class NotTabled(Exception):
    """The text holds what the whole-text path alone handles (an IN subquery)."""


@dataclass(frozen=True)
class _Resolved:
    """One atom of query text, resolved: what stands in the tree in its place
    (never changed: copied into a tree), its formula and atoms."""

    node: exp.Expression
    formula: Formula
    atoms: tuple[ConditionAtom, ...]


#: Atoms kept per schema (a text's atoms repeat across a batch); the schemas
#: are held by identity (hashing one hashes every value of its domains).
ATOMS_KEPT = 1 << 16
SCHEMAS_KEPT = 8
_kept: OrderedDict[int, tuple[Schema, OrderedDict[Hashable, _Resolved]]] = OrderedDict()
_lock = threading.Lock()


def _atoms_of(schema: Schema) -> OrderedDict[Hashable, _Resolved]:
    with _lock:
        found = _kept.get(id(schema))
        if found is None or found[0] is not schema:
            found = _kept[id(schema)] = (schema, OrderedDict())
            while len(_kept) > SCHEMAS_KEPT:
                _kept.popitem(last=False)
        _kept.move_to_end(id(schema))
        return found[1]


def forget() -> None:
    """Drop every kept atom (tests; a bench that times resolving from scratch)."""
    with _lock:
        _kept.clear()


#: The Rust reader's tree of a condition (``_core.query.parse_query``): nested
#: tuples whose first item names the node ("and", "not", "bin", "col", …).
Parsed = tuple[object, ...]


def split_text(schema: Schema, tree: Parsed, names: frozenset[str]
               ) -> tuple[Formula, list[ConditionAtom], list[_Resolved]]:
    """The formula and atoms of the parser's ``tree`` (``names``: the counted
    table's name and alias, which qualify columns), each atom resolved once
    per schema, and the resolved atoms in the order the tree holds them (for
    :func:`build_tree`). Raises :class:`NotTabled` for a tree holding an IN
    subquery, and a refusal as :func:`resolve_atom` does."""
    kept = _atoms_of(schema)
    atoms: list[ConditionAtom] = []
    leaves: list[_Resolved] = []

    def split(node: Parsed) -> Formula:
        # As Condition._split over the sqlglot tree: parentheses dropped,
        # a chain of one connective flattened, recursion only as deep as the nesting.
        while node[0] == "paren":
            node = cast(Parsed, node[1])
        kind = cast(str, node[0])
        if kind == "not":
            return ("not", split(cast(Parsed, node[1])))
        if kind == "and" or kind == "or":
            parts: list[Formula] = []
            for child in cast(list[Parsed], node[1]):
                sub = split(child)
                parts.extend(cast(list[Formula], sub[1]) if sub[0] == kind else [sub])
            return (kind, parts)
        resolved = _resolve_leaf(schema, kept, node, names)
        leaves.append(resolved)
        offset = len(atoms)
        atoms.extend(resolved.atoms)
        return shifted(resolved.formula, offset) if offset else resolved.formula

    return split(tree), atoms, leaves


def _resolve_leaf(schema: Schema, kept: OrderedDict[Hashable, _Resolved], node: Parsed,
                  names: frozenset[str]) -> _Resolved:
    key = (names, _key(node))
    with _lock:
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
            return found
    tree = querytext.build(node)
    if names:
        querytext.unqualify(tree, set(names))
    holder = exp.Paren(this=tree)  # the tree's root, so the atom itself can be replaced
    # NOT IN, NOT BETWEEN, NOT LIKE, IS NOT NULL are one tuple and NOT of the
    # atom in the tree: NOT (and parentheses) as Condition._split reads them.
    atom, negations = tree, 0
    while isinstance(atom, (exp.Not, exp.Paren)):
        negations += isinstance(atom, exp.Not)
        atom = atom.this

    def replace(old: exp.Expression, new: exp.Expression) -> None:
        old.replace(new)

    formula, atoms = resolve_atom(schema, atom, replace, {})
    for _ in range(negations):
        formula = ("not", formula)
    found = _Resolved(holder.this, formula, tuple(atoms))
    with _lock:
        kept[key] = found
        while len(kept) > ATOMS_KEPT:
            kept.popitem(last=False)
    return found


#: The parser's nodes that hold only strings, bools and None (no list, no subquery).
_SCALARS = frozenset({"col", "num", "str", "bool", "null"})


def _key(node: object) -> Hashable:
    """A hashable key of a parser tuple: a literal list's values (an int64
    array) stand by the list's text, which the parser derives them from.
    Raises :class:`NotTabled` for an IN subquery (its values depend on the
    registered tables)."""
    if type(node) is tuple and node[0] == "bin" and node[2][0] in _SCALARS \
            and node[3][0] in _SCALARS:  # (most atoms: column against a literal)
        return node  # (its items are strings, bools and None: it is its own key)
    if type(node) is tuple:
        if node and node[0] == "list":
            _, x, negated, _values, sql = node
            return ("list", _key(x), cast(bool, negated), cast(str, sql))
        if node and node[0] == "sub":
            raise NotTabled
        return tuple(_key(n) for n in node)
    if type(node) is list:
        return tuple(_key(n) for n in node)
    return node  # (a str, number, bool or None)


def build_tree(tree: Parsed, leaves: list[_Resolved]) -> exp.Expression:
    """The condition's sqlglot tree: the parser's AND / OR / NOT and
    parentheses around a copy of each resolved atom (``leaves``, in the order
    :func:`split_text` met them), as the whole-text path builds it."""
    given = iter(leaves)

    def build(node: Parsed) -> exp.Expression:
        kind = node[0]
        if kind == "paren":
            return exp.Paren(this=build(cast(Parsed, node[1])))
        if kind == "not":
            return exp.Not(this=build(cast(Parsed, node[1])))
        if kind == "and" or kind == "or":
            cls: type[exp.And | exp.Or] = exp.And if kind == "and" else exp.Or
            items = cast(list[Parsed], node[1])
            out: exp.Expression = build(items[0])
            for item in items[1:]:
                out = cls(this=out, expression=build(item))
            return out
        return next(given).node.copy()

    return build(tree)
