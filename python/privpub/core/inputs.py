"""What a table may arrive as, turned into pandas or Arrow without copying rows.

Everywhere privpub accepts a table it accepts a pandas DataFrame, a pyarrow
Table, RecordBatch or RecordBatchReader, a polars DataFrame (through its
zero-copy Arrow export), or a path to a Parquet or CSV file (read with
pyarrow). Dictionary and categorical columns stay dictionary-encoded, so
they become codes without per-row Python objects.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from privpub.core.errors import DataTypeError, ParameterError, printable

#: What the library accepts wherever a table is expected (a polars DataFrame
#: too, typed as Any so polars stays optional).
TableLike = pd.DataFrame | pa.Table | pa.RecordBatch | pa.RecordBatchReader | str | os.PathLike \
    | Any

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".tsv.gz", ".tsv.bz2")


def tabular(data: Any, column_types: Mapping[str, pa.DataType] | None = None, *,
            encoding: str | None = None) -> pd.DataFrame | pa.Table:
    """``data`` as a pandas DataFrame (left as is) or a pyarrow Table;
    ``column_types`` fixes the types of those columns of a CSV path and
    ``encoding`` names its codec (see :func:`read_table_file`)."""
    if encoding is not None and not isinstance(data, (str, os.PathLike)):
        raise ParameterError(f"encoding={encoding!r} is for a CSV file's path; a "
                             f"{type(data).__name__} holds text already decoded")
    if isinstance(data, (pd.DataFrame, pa.Table)):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if isinstance(data, (str, os.PathLike)):
        return read_table_file(data, column_types=column_types, encoding=encoding)
    if type(data).__module__.split(".")[0] == "polars" and hasattr(data, "to_arrow"):
        if not hasattr(data, "columns"):  # a LazyFrame: collecting it is the caller's call
            raise DataTypeError(f"got a polars {type(data).__name__}; collect() it first")
        return data.to_arrow()
    raise DataTypeError(f"expected a table (pandas or polars DataFrame, pyarrow Table, "
                        f"RecordBatch or RecordBatchReader, or a .parquet/.csv path), got "
                        f"{type(data).__module__}.{type(data).__name__}")


#: What marks a missing cell in a CSV file: pandas' default ``na_values`` (also in
#: text columns, as pandas reads them), so a file and the frame pandas reads from it
#: have the same missing cells.
NA_VALUES = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
             "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
#: Field separators a header read as one column gives away.
OTHER_SEPARATORS = (";", "\t", "|")
#: Bytes decoded at a time when finding the first byte a file's codec refuses.
DECODE_CHUNK = 1 << 20


def read_table_file(path: str | os.PathLike, *, delimiter: str | None = None,
                    quote_char: str | None = '"', na_values: Sequence[str] = NA_VALUES,
                    column_types: Mapping[str, pa.DataType] | None = None,
                    encoding: str | None = None) -> pa.Table:
    """A Parquet or CSV file as an Arrow table.

    CSV: ``delimiter`` defaults to a tab for .tsv files and a comma otherwise
    (a header read as one column that holds ``;``, a tab or ``|`` is an error
    naming the separator to pass); ``quote_char=None`` reads quote characters
    as data; a cell equal to one of ``na_values`` (pandas' conventions by
    default; ``()`` turns them off) is missing in every column, text columns
    included; ``column_types`` fixes the types of the named columns (a text
    domain reads ``02134`` as the text it is); ``encoding`` is the file's
    codec, any Python knows (``"latin-1"``, ``"cp1252"``, …; default UTF-8, a
    byte-order mark skipped), and text it cannot decode is an error naming the
    byte. Dates and times stay the text of the file: a date is a value of a
    declared domain, never a timestamp privpub would have to bin. Every failure
    is a ParameterError naming the path.
    """
    name = os.fspath(path)
    lower = name.lower()
    for option, value in (("delimiter", delimiter), ("quote_char", quote_char)):
        if value is not None and len(value) != 1:
            raise ParameterError(f"{option} must be one character, got {value!r}")
    if not os.path.isfile(name):
        what = "is a directory, not a table file" if os.path.isdir(name) else "no such file"
        raise ParameterError(f"{name!r}: {what}")
    if not lower.endswith(PARQUET_SUFFIXES + CSV_SUFFIXES):
        raise ParameterError(f"{name!r}: a table file must end in "
                             f"{', '.join(PARQUET_SUFFIXES + CSV_SUFFIXES)}")
    if encoding is not None and lower.endswith(PARQUET_SUFFIXES):
        raise ParameterError(f"{name!r}: encoding={encoding!r} (--encoding) is for CSV files; "
                             "Parquet stores text as UTF-8: leave it out")
    try:
        # One spelling per codec: Arrow decodes "utf-8" itself, any other in Python.
        codec = codecs.lookup("utf-8" if encoding is None else encoding).name
    except (LookupError, TypeError):
        raise ParameterError(f"encoding={encoding!r} (--encoding) is not a codec Python "
                             "knows; e.g. 'latin-1', 'cp1252', 'utf-16'") from None
    given = delimiter
    if delimiter is None:
        delimiter = "\t" if lower.endswith((".tsv", ".tsv.gz", ".tsv.bz2")) else ","
    try:
        if lower.endswith(PARQUET_SUFFIXES):
            table = pq.read_table(name)
        else:
            table = _read_csv(name, delimiter, quote_char, na_values, dict(column_types or {}),
                              codec)
        table.column_names  # noqa: B018 (names that are not UTF-8 fail here, not later)
    except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
        if lower.endswith(CSV_SUFFIXES):
            _check_decodes(name, codec)
        # Arrow quotes the offending row as it is: escaped, so no cell acts on a terminal.
        raise ParameterError(f"cannot read {name!r}: "
                             f"{printable(str(exc).splitlines()[0])}") from None
    if lower.endswith(CSV_SUFFIXES) and any(pa.types.is_binary(t) or pa.types.is_large_binary(t)
                                            for t in table.schema.types):
        # Arrow reads cells that are not UTF-8 as bytes rather than failing.
        _check_decodes(name, codec)
    if lower.endswith(CSV_SUFFIXES) and given is None and table.num_columns == 1:
        header = table.column_names[0]
        # The first row must hold the separator too: a one-column table whose name
        # holds '|' (or ';') and whose values do not is read as it is.
        column = table.column(0).drop_null()
        first = str(column[0].as_py()) if len(column) else None
        found = next((sep for sep in OTHER_SEPARATORS
                      if sep in header and (first is None or sep in first)), None)
        if found is not None:
            shown = "'\\t'" if found == "\t" else repr(found)
            raise ParameterError(
                f"{name!r} was read as one column named {header[:60]!r}, which holds "
                f"{shown}: its fields are separated by {shown}, not {delimiter!r}; pass "
                f"--sep {shown} (delimiter={shown} in the API)")
    return table


def _check_decodes(name: str, encoding: str) -> None:
    """Raise a ParameterError naming the first byte of file ``name`` (its text
    after decompression, for .gz and .bz2) that ``encoding`` cannot decode, and
    the option that fixes it; return if every byte decodes."""
    decoder = codecs.getincrementaldecoder(encoding)()
    offset = 0  # bytes fed to the decoder so far
    with pa.input_stream(name, compression="detect") as stream:
        while True:
            chunk = stream.read(DECODE_CHUNK)
            # Bytes of a sequence the last chunk left open come first in the error's
            # positions: ``pending`` of them.
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                at = offset - pending + exc.start
                byte = exc.object[exc.start]
                where = " of its decompressed text" if name.lower().endswith((".gz", ".bz2")) \
                    else ""
                raise ParameterError(
                    f"{name!r} is not {encoding} text: byte {at:,}{where} "
                    f"(0x{byte:02x}): {exc.reason}; pass --encoding latin-1 (or the file's "
                    "codec; encoding='latin-1' in the API)") from None
            if not chunk:
                return
            offset += len(chunk)


def _read_csv(name: str, delimiter: str, quote_char: str | None, na_values: Sequence[str],
              column_types: dict[str, pa.DataType], encoding: str) -> pa.Table:
    parse = pa_csv.ParseOptions(delimiter=delimiter, quote_char=quote_char or False)
    # Arrow skips a UTF-8 byte-order mark; other codecs it decodes in Python.
    options = pa_csv.ReadOptions(encoding=encoding)

    def read(types: dict[str, pa.DataType]) -> pa.Table:
        convert = pa_csv.ConvertOptions(null_values=list(na_values), strings_can_be_null=True,
                                        quoted_strings_can_be_null=True, column_types=types)
        return pa_csv.read_csv(name, read_options=options, parse_options=parse,
                               convert_options=convert)

    table = read(column_types)
    dated = {f.name: pa.string() for f in table.schema
             if f.name not in column_types and pa.types.is_temporal(f.type)}
    return read(column_types | dated) if dated else table


def column_names(table: pd.DataFrame | pa.Table) -> list[str]:
    return [str(c) for c in table.columns] if isinstance(table, pd.DataFrame) \
        else list(table.column_names)
