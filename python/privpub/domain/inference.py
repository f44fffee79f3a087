"""Domains read off the data (:meth:`Schema.from_frame`): the values that occur,
sorted, or a categorical column's declared categories in their order, with a
declared missing label appended; refused where they would publish every
record's own value (non-integer numbers, identifiers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from privpub.core.errors import SchemaError
from privpub.core.inputs import TableFile
from privpub.domain.attributes import Categorical, value_kind
from privpub.domain.columns import (
    arrow_column,
    arrow_count_of,
    arrow_kind,
    check_no_missing,
    collision_error,
    column_kind,
    frame_column,
    missing_error,
)

#: An inferred domain of more values than this, held by more than half the rows,
#: is refused as an identifier's (Schema.from_frame).
NEAR_UNIQUE = 100


def _check_inferred_domain(attr: Categorical, rows: int) -> None:
    """Values read off the data are a domain only when a release may show them
    all and a query can name them: not non-integer numbers (every exact float
    would be published, and ``wt82 = 68.946`` would name none of them), not an
    identifier (each record's own value, published for all to see)."""
    coarser = (f"bin it into an ordered categorical first (pd.cut(df[{attr.name!r}], "
               "bins=[...], labels=[...]): privpub keeps the order)"
               if attr.kind in ("integer", "float") else
               "map it to coarser groups first (a prefix, a region, a band)")
    fix = (f"{coarser}, drop it, or declare its domain; to publish its values as they are, "
           f"pass exact_domain=[{attr.name!r}] (command line: --exact-domain {attr.name})")
    if attr.kind == "float":
        fractional = [v for v in attr.values if not float(v).is_integer()]
        if fractional:
            raise SchemaError(f"column {attr.name!r} holds {len(fractional):,} distinct "
                              f"non-integer numbers (e.g. {fractional[0]!r}), which are no "
                              f"domain: a release would publish each exact value and a query "
                              f"would have to name it to the last digit; {fix}")
    if attr.size > NEAR_UNIQUE and 2 * attr.size > rows:
        raise SchemaError(f"column {attr.name!r} holds {attr.size:,} distinct values in "
                          f"{rows:,} rows: most records have a value of their own (an "
                          f"identifier?), which a release would publish for all to see; {fix}")



def _label_of_kind(label: Any, kind: str) -> Any:
    """An integral label given for a float column as the float it names (-1 is
    -1.0, as ``--missing mass=-1`` reads it); any other label as given."""
    if kind == "float" and value_kind(label) == "integer" and float(label) == label:
        return float(label)
    return label


def _with_missing(name: str, kind: str, values: list, label: Any, dtype: str, ordered: bool,
                  collisions: int = 0) -> Categorical:
    """The inferred attribute, its declared missing label appended to the domain
    (``collisions``: the cells that hold the label while others are missing)."""
    if label is None:
        return Categorical(name, values, dtype=dtype, ordered=ordered)
    if value_kind(label) != kind:
        raise SchemaError(f"column {name!r} holds {kind} values; its missing label {label!r} "
                          f"must be one too")
    if collisions:
        raise collision_error(name, label, collisions)
    if label not in values:  # (a label that occurs where no cell is missing: a release read back)
        values = [*values, label]
    return Categorical(name, values, dtype=dtype, ordered=ordered, missing=label)


def _infer_pandas(name: str, values: pd.Series, label: Any = None,
                  declared: bool = False) -> Categorical:
    present = values.dropna()
    kind = column_kind(name, present)
    collisions = 0
    if label is None or not values.hasnans:
        check_no_missing(name, values)
        label = label if declared else None
    else:
        label = _label_of_kind(label, kind)
        collisions = int((values == label).sum())
    if kind == "empty":
        raise SchemaError(f"column {name!r} is empty: cannot infer a domain")
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = list(dtype.categories)
        return _with_missing(name, kind, categories if dtype.ordered else sorted(categories),
                             label, "category", bool(dtype.ordered), collisions)
    if label is not None and pd.api.types.is_integer_dtype(dtype):
        dtype = np.dtype(np.int64)  # a nullable Int64 column: its values, then the label
    return _with_missing(name, kind, sorted(pd.unique(present)), label, str(dtype), False,
                         collisions)


@dataclass(frozen=True)
class Observed:
    """What inferring a column's domain reads of it, from the whole column or summed
    over its batches (:meth:`merge`): its type, its distinct present values (a
    dictionary column's dictionary, in its order), its rows, its missing cells
    (NaN too) and the first one's row, and how many cells hold ``label`` (the
    missing label asked for, read as the column's kind)."""

    type: pa.DataType
    values: pa.Array
    rows: int
    missing: int
    first_missing: int | None
    label_cells: int

    @classmethod
    def of(cls, name: str, array: pa.Array, label: object = None, first_row: int = 0) -> Observed:
        kind = arrow_kind(name, array.type)
        value_type = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
        missing, first = 0, None
        if array.null_count or pa.types.is_floating(value_type):
            mask = pc.is_null(array, nan_is_null=True)
            missing = pc.sum(mask).as_py() or 0
            first = first_row + pc.index(mask, True).as_py() if missing else None
        cells = 0
        if label is not None and value_kind(_label_of_kind(label, kind)) == kind:
            cells = arrow_count_of(array, _label_of_kind(label, kind))
        if pa.types.is_dictionary(array.type):
            values = array.dictionary
        else:
            values = pc.unique(pc.drop_null(pc.if_else(pc.is_nan(array), None, array)
                                            if pa.types.is_floating(array.type) else array))
        return cls(array.type, values, len(array), missing, first, cells)

    def merge(self, later: Observed) -> Observed:
        """This column's rows followed by ``later``'s: a dictionary column's
        dictionaries unified in order of first appearance, as Arrow unifies a
        whole column's chunks."""
        values = pc.unique(pa.concat_arrays([self.values, later.values]))
        return Observed(self.type, values, self.rows + later.rows,
                        self.missing + later.missing,
                        self.first_missing if self.missing else later.first_missing,
                        self.label_cells + later.label_cells)


def _infer_arrow(name: str, seen: Observed, label: Any = None,
                 declared: bool = False) -> Categorical:
    kind = arrow_kind(name, seen.type)
    collisions = 0
    if label is None or seen.missing == 0:
        if seen.missing:
            raise missing_error(name, seen.missing, seen.first_missing)
        label = label if declared else None
    else:
        label = _label_of_kind(label, kind)
        if value_kind(label) == kind:  # (another kind is refused by _with_missing)
            collisions = seen.label_cells
    if kind == "empty" or seen.rows == 0:
        raise SchemaError(f"column {name!r} is empty: cannot infer a domain")
    if pa.types.is_dictionary(seen.type):
        categories = seen.values.to_pylist()
        ordered = bool(seen.type.ordered)
        return _with_missing(name, kind, categories if ordered else sorted(categories), label,
                             "category", ordered, collisions)
    return _with_missing(name, kind, sorted(seen.values.to_pylist()), label,
                         _pandas_dtype(seen.type), False, collisions)


def _observed_batches(table: TableFile, names: Sequence[str],
                      labels: dict[str, Any]) -> dict[str, Observed]:
    """:class:`Observed` of each named column of a table file, read batch by batch."""
    seen = {name: Observed.of(name, pa.array([], table.field_type(name)), labels.get(name))
            for name in names}
    at = 0
    for batch in table.batches(names):
        for name in names:
            seen[name] = seen[name].merge(Observed.of(name, arrow_column(batch, name),
                                                      labels.get(name), at))
        at += batch.num_rows
    return seen


def _pandas_dtype(arrow_type: pa.DataType) -> str:
    """The dtype pandas gives such a column by default (strings: 'str' or object)."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_string_view(arrow_type):
        return str(pd.Series(["x"]).dtype)
    return str(np.dtype(arrow_type.to_pandas_dtype()))


def infer_attributes(table: pd.DataFrame | pa.Table | TableFile, names: Sequence[str],
                     labels: dict[str, Any], declared: bool,
                     exact_domain: Sequence[str]) -> list[Categorical]:
    """Each named column's inferred attribute (see :meth:`Schema.from_frame`)."""
    if isinstance(table, pd.DataFrame):
        attributes = [_infer_pandas(name, frame_column(table, name), labels.get(name), declared)
                      for name in names]
    elif isinstance(table, TableFile):  # read in batches: what the whole column shows
        seen = _observed_batches(table, names, labels)
        attributes = [_infer_arrow(name, seen[name], labels.get(name), declared)
                      for name in names]
    else:
        attributes = [_infer_arrow(name, Observed.of(name, arrow_column(table, name),
                                                     labels.get(name)),
                                   labels.get(name), declared) for name in names]
    rows = len(table) if isinstance(table, pd.DataFrame) else table.num_rows
    for attr in attributes:
        if attr.name not in exact_domain and attr.dtype != "category":
            _check_inferred_domain(attr, rows)
    return attributes
