"""Counting queries and exact domain counts: the query language (SQL WHERE
text, ``col`` expressions, mappings) parsed into a :class:`Condition` over a
schema, and Q(D), the number of domain tuples satisfying it, computed
exactly without enumerating D. Uses ``core`` only; the schema a condition is
built over is passed in, never imported at run time."""

from privpub.counting.domaincount import count_domain
from privpub.counting.expr import col
from privpub.counting.query import Condition

__all__ = ["Condition", "col", "count_domain"]
