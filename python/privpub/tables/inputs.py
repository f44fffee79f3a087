"""What a table may arrive as, turned into pandas or Arrow without copying rows.

Everywhere privpub accepts a table it accepts a pandas DataFrame, a pyarrow
Table, RecordBatch or RecordBatchReader, a polars DataFrame (through its
zero-copy Arrow export), or a path to a Parquet or CSV file (read with
pyarrow). Dictionary and categorical columns stay dictionary-encoded, so
they become codes without per-row Python objects.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from privpub.core.errors import DataTypeError, ParameterError

#: What the library accepts wherever a table is expected (a polars DataFrame
#: too, typed as Any so polars stays optional).
TableLike = pd.DataFrame | pa.Table | pa.RecordBatch | pa.RecordBatchReader | str | os.PathLike \
    | Any

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".tsv.gz", ".tsv.bz2")


def tabular(data: Any) -> pd.DataFrame | pa.Table:
    """``data`` as a pandas DataFrame (left as is) or a pyarrow Table."""
    if isinstance(data, (pd.DataFrame, pa.Table)):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if isinstance(data, (str, os.PathLike)):
        return read_table_file(data)
    if type(data).__module__.split(".")[0] == "polars" and hasattr(data, "to_arrow"):
        if not hasattr(data, "columns"):  # a LazyFrame: collecting it is the caller's call
            raise DataTypeError(f"got a polars {type(data).__name__}; collect() it first")
        return data.to_arrow()
    raise DataTypeError(f"expected a table (pandas or polars DataFrame, pyarrow Table, "
                        f"RecordBatch or RecordBatchReader, or a .parquet/.csv path), got "
                        f"{type(data).__module__}.{type(data).__name__}")


def read_table_file(path: str | os.PathLike, *, delimiter: str | None = None,
                    quote_char: str | None = '"') -> pa.Table:
    """A Parquet or CSV file as an Arrow table (CSV strings stay strings).

    ``delimiter`` defaults to a tab for .tsv files and a comma otherwise;
    ``quote_char=None`` reads quote characters as data."""
    name = os.fspath(path)
    lower = name.lower()
    for option, value in (("delimiter", delimiter), ("quote_char", quote_char)):
        if value is not None and len(value) != 1:
            raise ParameterError(f"{option} must be one character, got {value!r}")
    if delimiter is None:
        delimiter = "\t" if lower.endswith((".tsv", ".tsv.gz", ".tsv.bz2")) else ","
    try:
        if lower.endswith(PARQUET_SUFFIXES):
            table = pq.read_table(name)
        elif lower.endswith(CSV_SUFFIXES):
            options = pa_csv.ParseOptions(delimiter=delimiter,
                                          quote_char=quote_char or False)
            table = pa_csv.read_csv(name, parse_options=options)
        else:
            table = None
        if table is not None:
            table.column_names  # noqa: B018 (names that are not UTF-8 fail here, not later)
            return table
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise ParameterError(f"cannot read {name!r}: {str(exc).splitlines()[0]}") from None
    raise ParameterError(f"a table file must end in {', '.join(PARQUET_SUFFIXES + CSV_SUFFIXES)}"
                         f"; got {name!r}")


def column_names(table: pd.DataFrame | pa.Table) -> list[str]:
    return [str(c) for c in table.columns] if isinstance(table, pd.DataFrame) \
        else list(table.column_names)
