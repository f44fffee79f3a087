"""A count over a SPLU-Gen release, read as what its estimators answer.

A release publishes its non-sensitive attributes unchanged and randomises
each sensitive one over decoy groups, so ``release.estimate(where)`` means:

- ``where`` reads no sensitive attribute: the count is published exactly;
- else ``where`` must be a conjunction of a predicate P on the non-sensitive
  attributes and equalities ``s = value`` on sensitive attributes (each at most
  once), which is the count(P ∧ s_1 ∧ …) that
  :func:`~privpub.splu.reconstruction.reconstruct` estimates. Anything else
  (an OR or NOT across a sensitive attribute, ``s <> v``, ``s IN (…)``, ``s > v``,
  two sensitive attributes compared) is a :class:`~privpub.QueryError` naming
  the part: the reconstruction has no estimator for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlglot import exp

from privpub.core.errors import QueryError
from privpub.counting import queryatoms
from privpub.counting.query import Condition


def _conjuncts(formula: tuple) -> Iterator[tuple]:
    if formula[0] == "and":
        for part in formula[1]:
            yield from _conjuncts(part)
    else:
        yield formula


def _atoms(formula: tuple) -> Iterator[int]:
    if formula[0] == "atom":
        yield formula[1]
    elif formula[0] == "not":
        yield from _atoms(formula[1])
    else:
        for part in formula[1]:
            yield from _atoms(part)


def _literal(node: exp.Expression, attribute: str, shown: str) -> Any:
    """The value a sensitive attribute is compared with: a literal, a negative
    number or TRUE/FALSE, read as every condition reads it."""
    if not queryatoms.is_constant(node):
        raise QueryError(f"{shown!r}: a sensitive attribute ({attribute!r}) is compared with "
                         "a value (s = 'value'), not with an expression")
    return queryatoms.constant(node)


def _equality(cond: Condition, atom: int, sensitive: Sequence[str]) -> tuple[str, Any]:
    """(attribute, value) of an atom ``s = value``, or a QueryError naming it."""
    found = cond.atoms[atom]
    node = found.written  # labels as the query states them, never domain indices
    if isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.EQ) or len(found.attributes) != 1:
        raise QueryError(f"{found.text!r} reads sensitive attribute(s) "
                         f"{[a for a in found.attributes if a in sensitive]}; a SPLU-Gen "
                         "release estimates counts of sensitive values only through equalities "
                         "(s = 'value') joined to the rest by AND")
    (attribute,) = found.attributes
    left, right = node.this, node.expression
    column, value = (left, right) if isinstance(left, exp.Column) else (right, left)
    if not isinstance(column, exp.Column):
        raise QueryError(f"{found.text!r}: expected {attribute} = 'value'")
    literal = _literal(value, attribute, found.text)
    if cond.schema.index_of(attribute, literal) is None:
        # The domain value written as this text (a categorical of numbers, "2" for 2).
        attr = cond.schema[attribute]
        literal = next((v for v in attr.values if str(v) == str(literal)), literal)
    return attribute, literal


def split(cond: Condition, sensitive: Sequence[str]) -> tuple[str | None, dict[str, Any]]:
    """(P as SQL text or None, {sensitive attribute: value}) of a condition over
    a SPLU-Gen release (module docstring); a QueryError names what the
    reconstruction cannot answer."""
    if cond.expression is None:
        return None, {}
    plain, values = [], {}
    for part in _conjuncts(cond.formula):
        read = {a for i in _atoms(part) for a in cond.atoms[i].attributes}
        if not read & set(sensitive):
            plain.append(part)
            continue
        if part[0] != "atom":
            shown = cond.written(part)
            raise QueryError(f"{shown!r} combines sensitive attribute(s) "
                             f"{sorted(read & set(sensitive))} with OR or NOT; a SPLU-Gen "
                             "release estimates count(P AND s = value AND …) only, P on the "
                             "non-sensitive attributes")
        attribute, value = _equality(cond, part[1], sensitive)
        if attribute in values:
            raise QueryError(f"sensitive attribute {attribute!r} is given twice "
                             f"({values[attribute]!r} and {value!r})")
        values[attribute] = value
    where = " AND ".join(cond.written(p) for p in plain) or None
    return where, values
