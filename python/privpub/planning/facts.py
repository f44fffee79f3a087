"""The facts of a table a plan reads (n, m, distinct and repeated tuples, the
records' codes), from a table or from a schema and n; the families' planners
read them too (:mod:`privpub.core.planners`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.inputs import TableFile, tabular
from privpub.domain.schema import Schema
from privpub.tables.records import (
    as_schema_codes,
    distinct_sorted,
    records_as_codes,
    repeated_rows,
    sorted_rows,
)


@dataclass(frozen=True)
class TableFacts:
    schema: Schema
    n: int                      # records (for_privacy's n; d = k·n/m)
    distinct: int | None        # distinct tuples (None: schema only)
    repeated: int               # tuples with several records
    codes: np.ndarray | None    # the records' codes (None: schema only)
    duplicates: str

    @property
    def m(self) -> int:
        return self.schema.size

    @property
    def records_facts(self) -> dict[str, Any]:
        """The ``records`` facts a release of this table states (as ``publish`` sets them;
        no tuple is counted as shown twice, which is known only after publishing)."""
        mode = "none" if not self.repeated else self.duplicates
        return {"duplicates": mode, "records_given": self.n,
                "repeated_tuples": self.repeated if mode == "records" else 0,
                "distinct_tuples": self.distinct or self.n, "revealed_in_view": 0}

    @property
    def published(self) -> int:
        """Records the view starts from: the distinct tuples under duplicates='set'."""
        if self.duplicates == "set" and self.distinct is not None:
            return self.distinct
        return self.n


def table_facts(data: Any, n: int | None, schema: Schema | None, duplicates: str) -> TableFacts:
    if duplicates not in ("set", "records"):
        raise ParameterError(f"duplicates must be 'set' or 'records', got {duplicates!r}")
    if isinstance(data, Schema):
        if n is None:
            raise ParameterError("plan(schema) needs n, the number of records to publish")
        n = validate.integer("n", n, minimum=1)
        # Without the table its repeats are unknown: planned as n distinct tuples.
        return TableFacts(data, n, None, 0, None, duplicates)
    if n is not None:
        raise ParameterError("n is read from the table; give n only with a Schema")
    # A table file stays one, read in batches by the encoder.
    table = data if isinstance(data, TableFile) else \
        tabular(data, column_types=None if schema is None else schema.csv_types())
    if schema is None:
        with warnings.catch_warnings():  # the plan says the domains were derived
            warnings.simplefilter("ignore")
            schema = Schema.from_frame(table)
    rows = sorted_rows(records_as_codes(schema, table))
    if len(rows) == 0:
        raise ParameterError("the table holds no records; there is nothing to plan for")
    return TableFacts(schema, len(rows), len(distinct_sorted(rows)), repeated_rows(rows),
                  as_schema_codes(schema, rows), duplicates)
