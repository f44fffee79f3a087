"""``privpub._core.query``: query text (rust/src/bindings/query.rs over querytext/):
the parsed tree as nested tuples, refusals as ``QueryTextError(kind, …)`` for
Python to word."""

import numpy as np
import numpy.typing as npt

class QueryTextError(ValueError):
    """Query text refused: ``args`` are (kind, details…), worded by
    privpub.counting.querytext (kinds: character, syntax, unclosed, reserved,
    bitwise, depth, terms, values, clause, select, file, integer)."""

def parse_query(text: str, max_depth: int, max_terms: int, max_values: int
                ) -> tuple[tuple | None, str | None, str | None, tuple[str, str | None]]:
    """Query text (a condition, or SELECT count(*) | sum(col) | avg(col) FROM
    <name> [WHERE …]) read by sqlparser within the limits: (the condition's tree
    of tagged tuples or None, the SELECT form's table name, its alias, the
    aggregate as ("count", None), ("sum", column) or ("avg", column));
    QueryTextError if refused."""

def parse_subquery(text: str, max_depth: int, max_terms: int, max_values: int
                   ) -> tuple[str, list[str], list[tuple[str, str]], int, str | None]:
    """An IN subquery's text read: (its SQL, tables read, functions called as
    (lower-case name, call), columns selected, first source not a table name)."""

def int_list_text(values: npt.NDArray[np.int64]) -> str:
    """int64 values as an SQL list body, "1, 2, 3"."""
