"""What a table may arrive as, turned into pandas or Arrow without copying rows.

Everywhere privpub accepts a table it accepts a pandas DataFrame, a pyarrow
Table, RecordBatch or RecordBatchReader, a polars DataFrame (through its
zero-copy Arrow export), or a path to a Parquet or CSV file (read with
pyarrow). Dictionary and categorical columns stay dictionary-encoded, so
they become codes without per-row Python objects.
"""

from __future__ import annotations

import codecs
import copy
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from privpub.core.errors import DataTypeError, ParameterError, SchemaError, printable

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
    if isinstance(data, (pa.RecordBatchReader, TableFile)):
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
    name, codec, sep = checked_file(path, delimiter, quote_char, encoding)
    lower = name.lower()
    try:
        if lower.endswith(PARQUET_SUFFIXES):
            table = pq.read_table(name)
        else:
            table = _read_csv(name, sep, quote_char, na_values, dict(column_types or {}),
                              codec)
        table.column_names  # noqa: B018 (names that are not UTF-8 fail here, not later)
    except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
        if lower.endswith(CSV_SUFFIXES):
            check_decodes(name, codec)
        # Arrow quotes the offending row as it is: escaped, so no cell acts on a terminal.
        raise ParameterError(f"cannot read {name!r}: "
                             f"{printable(str(exc).splitlines()[0])}") from None
    if lower.endswith(CSV_SUFFIXES) and any(pa.types.is_binary(t) or pa.types.is_large_binary(t)
                                            for t in table.schema.types):
        # Arrow reads cells that are not UTF-8 as bytes rather than failing.
        check_decodes(name, codec)
    if lower.endswith(CSV_SUFFIXES) and delimiter is None and table.num_columns == 1:
        column = table.column(0).drop_null()
        check_one_column(name, table.column_names[0],
                         str(column[0].as_py()) if len(column) else None, sep)
    return table


def checked_file(path: str | os.PathLike, delimiter: str | None, quote_char: str | None,
                 encoding: str | None) -> tuple[str, str, str]:
    """A table file's name, codec and CSV field separator (a tab for .tsv files, a
    comma otherwise, unless given), once its options are checked: every failure
    is a ParameterError naming the path or the option."""
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
    if delimiter is None:
        delimiter = "\t" if lower.endswith((".tsv", ".tsv.gz", ".tsv.bz2")) else ","
    return name, codec, delimiter


def check_one_column(name: str, header: str, first: str | None, delimiter: str) -> None:
    """A CSV file read as one column (no separator given) whose header holds ``;``,
    a tab or ``|`` is an error naming the separator to pass. The first value
    (``first``, None when there is none) must hold it too: a one-column table
    whose name holds '|' (or ';') and whose values do not is read as it is."""
    found = next((sep for sep in OTHER_SEPARATORS
                  if sep in header and (first is None or sep in first)), None)
    if found is not None:
        shown = "'\\t'" if found == "\t" else repr(found)
        raise ParameterError(
            f"{name!r} was read as one column named {header[:60]!r}, which holds "
            f"{shown}: its fields are separated by {shown}, not {delimiter!r}; pass "
            f"--sep {shown} (delimiter={shown} in the API)")


def check_decodes(name: str, encoding: str) -> None:
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


def csv_options(delimiter: str, quote_char: str | None, na_values: Sequence[str],
                column_types: Mapping[str, pa.DataType], encoding: str,
                ) -> tuple[pa_csv.ReadOptions, pa_csv.ParseOptions, pa_csv.ConvertOptions]:
    """How privpub reads a CSV file (whole, or in batches: :mod:`privpub.core.tablefile`):
    a cell equal to one of ``na_values`` is missing in every column, text ones too."""
    parse = pa_csv.ParseOptions(delimiter=delimiter, quote_char=quote_char or False)
    # Arrow skips a UTF-8 byte-order mark; other codecs it decodes in Python.
    options = pa_csv.ReadOptions(encoding=encoding)
    convert = pa_csv.ConvertOptions(null_values=list(na_values), strings_can_be_null=True,
                                    quoted_strings_can_be_null=True,
                                    column_types=dict(column_types))
    return options, parse, convert


def _read_csv(name: str, delimiter: str, quote_char: str | None, na_values: Sequence[str],
              column_types: dict[str, pa.DataType], encoding: str) -> pa.Table:
    def read(types: dict[str, pa.DataType]) -> pa.Table:
        options, parse, convert = csv_options(delimiter, quote_char, na_values, types,
                                              encoding)
        return pa_csv.read_csv(name, read_options=options, parse_options=parse,
                               convert_options=convert)

    table = read(column_types)
    dated = {f.name: pa.string() for f in table.schema
             if f.name not in column_types and pa.types.is_temporal(f.type)}
    return read(column_types | dated) if dated else table


def column_names(table: pd.DataFrame | pa.Table | TableFile) -> list[str]:
    return [str(c) for c in table.columns] if isinstance(table, pd.DataFrame) \
        else list(table.column_names)


#: Rows per record batch when a table file is read in batches (:class:`TableFile`):
#: with the encoder's own arrays, a few hundred bytes per row at most, so tens of
#: MiB per batch whatever the file's length.
BATCH_ROWS = 1 << 18


class TableFile:
    """A Parquet or CSV file read as record batches (:meth:`batches`), pass after
    pass, in memory that does not grow with its rows: what
    :meth:`Schema.from_frame <privpub.Schema.from_frame>` and
    :meth:`Schema.encode <privpub.Schema.encode>` stream when given a path.

    Each column has the type :func:`read_table_file` gives it, so a batch's values
    are that table's. Parquet files store their types. A CSV reader infers a
    column's type from all its values (a whole read) or from its first block (a
    streamed one), so a CSV file is read first with every column as text, each
    column's distinct values kept; the type Arrow infers for those values
    (:func:`_inferred_type`, which depends on the set of values alone) is the type
    the whole read infers, and every later pass reads the file with those types.
    Options as for :func:`read_table_file`; every failure is a ParameterError
    naming the path.
    """

    def __init__(self, path: str | os.PathLike, *, delimiter: str | None = None,
                 quote_char: str | None = '"', na_values: Sequence[str] = NA_VALUES,
                 column_types: Mapping[str, pa.DataType] | None = None,
                 encoding: str | None = None, columns: Sequence[str] | None = None):
        self.name, codec, sep = checked_file(path, delimiter, quote_char, encoding)
        self.is_parquet = self.name.lower().endswith(PARQUET_SUFFIXES)
        self._csv = (sep, quote_char, tuple(na_values), codec)
        with self._reading():
            if self.is_parquet:
                found = pq.ParquetFile(self.name)
                types, self.num_rows = found.schema_arrow, found.metadata.num_rows
            else:
                types, self.num_rows = self._csv_types(dict(column_types or {}),
                                                       check_sep=delimiter is None)
        doubled = sorted({n for n in types.names if types.names.count(n) > 1})
        if doubled:  # (Arrow's readers would fail on its name with a bare KeyError)
            raise SchemaError(f"{self.name!r} has more than one column named {doubled[0]!r}")
        self._types = types
        self.column_names = list(types.names if columns is None else columns)

    def select(self, columns: Sequence[str]) -> TableFile:
        """The same file, read for ``columns`` only (in that order)."""
        chosen = copy.copy(self)
        chosen.column_names = list(columns)
        return chosen

    def field_type(self, name: str) -> pa.DataType:
        return self._types.field(name).type

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
        """The rows in order, :data:`BATCH_ROWS` (Parquet) or a block of text (CSV)
        at a time, each batch a table of ``columns`` (default: all selected)."""
        names = list(self.column_names if columns is None else columns)
        with self._reading():
            if self.is_parquet:
                for batch in pq.ParquetFile(self.name).iter_batches(BATCH_ROWS, columns=names):
                    yield pa.Table.from_batches([batch])
                return
            types = {name: self._types.field(name).type for name in self._types.names}
            for batch in self._csv_batches(types, names):
                yield pa.Table.from_batches([batch])

    def read_all(self) -> pa.Table:
        """The selected columns whole, as :func:`read_table_file` reads them."""
        parts = list(self.batches())
        return pa.Table.from_batches([b for t in parts for b in t.to_batches()],
                                     schema=pa.schema([self._types.field(n)
                                                       for n in self.column_names]))

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
            if not self.is_parquet:
                check_decodes(self.name, self._csv[3])
            raise ParameterError(f"cannot read {self.name!r}: "
                                 f"{printable(str(exc).splitlines()[0])}") from None

    def _csv_batches(self, types: Mapping[str, pa.DataType],
                     names: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
        sep, quote_char, na_values, codec = self._csv
        options, parse, convert = csv_options(sep, quote_char, na_values, types, codec)
        options.block_size = CSV_BLOCK_BYTES
        if names is not None:
            convert.include_columns = list(names)
        with pa_csv.open_csv(self.name, read_options=options, parse_options=parse,
                             convert_options=convert) as reader:
            yield from reader

    def _csv_types(self, fixed: dict[str, pa.DataType], check_sep: bool
                   ) -> tuple[pa.Schema, int]:
        """Each column's type as a whole read infers it (the class docstring), and the
        number of rows: one pass with every column read as text."""
        sep, quote_char, na_values, codec = self._csv
        options, parse, convert = csv_options(sep, quote_char, na_values, {}, codec)
        options.block_size = CSV_BLOCK_BYTES
        with pa_csv.open_csv(self.name, read_options=options, parse_options=parse,
                             convert_options=convert) as first:
            names = first.schema.names  # (its types are the first block's: not used)
        if len(set(names)) < len(names):  # named as the constructor names it
            return pa.schema([pa.field(n, pa.string()) for n in names]), 0
        as_text = {n: fixed.get(n, pa.string()) for n in names}
        distinct: dict[str, list[pa.Array]] = {n: [] for n in names if n not in fixed}
        rows, first_value = 0, None
        for batch in self._csv_batches(as_text):
            rows += batch.num_rows
            for n in distinct:
                distinct[n].append(pc.unique(batch.column(n)))
            if first_value is None and len(names) == 1:
                present = batch.column(0).drop_null()
                first_value = str(present[0].as_py()) if len(present) else None
        if check_sep and len(names) == 1:
            check_one_column(self.name, names[0], first_value, sep)
        types = dict(fixed)
        for n, parts in distinct.items():
            values = pc.unique(pa.concat_arrays(parts)).drop_null() if parts \
                else pa.array([], pa.string())
            found = _inferred_type(values)
            # As read_table_file: dates and times stay the text of the file.
            types[n] = pa.string() if pa.types.is_temporal(found) else found
        return pa.schema([pa.field(n, types[n]) for n in names]), rows


#: Bytes of CSV text per block read (a batch) when a CSV file is read in batches.
CSV_BLOCK_BYTES = 1 << 24


def _inferred_type(values: pa.Array) -> pa.DataType:
    """The type Arrow's CSV reader infers for a column of these distinct texts (none
    missing): each is quoted (which does not change what Arrow infers from it) on a
    line of its own, and the lines are read by the same reader. Arrow tries one
    type after another until every value converts, so the type depends only on
    the set of values, not on how many times or where each occurs."""
    lines = ["v"] + ['"' + v.replace('"', '""') + '"' for v in values.to_pylist()]
    parse = pa_csv.ParseOptions(newlines_in_values=True)
    convert = pa_csv.ConvertOptions(null_values=[], strings_can_be_null=False,
                                    quoted_strings_can_be_null=False)
    text = io.BytesIO("".join(line + "\n" for line in lines).encode("utf-8"))
    return pa_csv.read_csv(text, parse_options=parse, convert_options=convert
                           ).schema.field(0).type
