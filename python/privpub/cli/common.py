"""What several subcommands share: reading tables and schemas, output formats,
progress bars, the seeded-release warning."""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from privpub.core.optional import progress_bar

FORMATS = ("table", "json", "csv")
#: The prior bound's k of d = k·n/m when none is asked for (the paper's).
DEFAULT_K = 10.0


class ExampleFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and ``examples:`` epilogs printed as written."""


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """--input and the CSV reading options."""
    parser.add_argument("--input", required=True, metavar="FILE",
                        help="the table: .csv, .tsv (optionally .gz) or .parquet; '-' reads "
                             "CSV from standard input")
    add_csv_arguments(parser)
    parser.add_argument("--columns", metavar="A,B,…",
                        help="comma-separated columns to publish (default: all)")
    parser.add_argument("--missing", metavar="[COLUMN=]LABEL", action="append",
                        help="without --schema: the value a missing cell stands for in the "
                             "inferred domains, for every column with missing cells or for "
                             "COLUMN (repeatable; a numeric column's label is a number) "
                             "(default: a missing cell is an error naming its column and row); "
                             "with --schema, declare it there ('missing: LABEL')")
    parser.add_argument("--schema", metavar="FILE",
                        help="the schema (public domains) as JSON or YAML, as written by "
                             "Schema.to_dict (default: inferred from the data, which reveals "
                             "the values that occur; the command says so)")
    parser.add_argument("--exact-domain", metavar="A,B,…", action="append",
                        help="without --schema: columns whose values are published as they "
                             "are although they are non-integer numbers or most records hold a "
                             "value of their own (an identifier), which are refused otherwise "
                             "(repeatable)")


def add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    """How a CSV table file is read: --sep, --quote, --no-quoting, --na-values, --no-na,
    --encoding."""
    parser.add_argument("--sep", default=None, metavar="CHAR",
                        help="CSV field separator: one character, or '\\t' / tab (default ',', "
                             "or a tab for .tsv)")
    parser.add_argument("--quote", default='"', metavar="CHAR",
                        help="CSV quote character (default '\"')")
    parser.add_argument("--no-quoting", action="store_true",
                        help="CSV fields are never quoted (quote characters are data)")
    parser.add_argument("--na-values", metavar="V,W,…",
                        help="CSV cells that are missing, in every column (default: pandas' "
                             "markers: empty, NA, N/A, NULL, NaN, None, …)")
    parser.add_argument("--no-na", action="store_true",
                        help="no CSV cell is missing: empty cells and 'NA' are values")
    parser.add_argument("--encoding", default=None, metavar="CODEC",
                        help="the CSV file's text encoding, any codec Python knows, e.g. "
                             "latin-1 or cp1252 (default UTF-8, a byte-order mark skipped; "
                             "text that does not decode is an error naming its byte)")


def add_privacy_arguments(parser: argparse.ArgumentParser, epsilon: bool = False) -> None:
    """--k, --gamma, --failure-probability: the (d, γ)-privacy request and the error
    bound's failure probability (the paper's ε); with ``epsilon``, also --epsilon, a
    privacy loss that gives d instead of --k (read the two by :func:`prior_request`)."""
    parser.add_argument("--k", type=float, default=None if epsilon else DEFAULT_K,
                        help=f"the adversary's prior bound d = k·n/m (default {DEFAULT_K:g}, "
                             "as in the paper" + (", unless --epsilon is given)" if epsilon
                                                  else ")"))
    parser.add_argument("--gamma", type=float, default=0.2,
                        help="the posterior bound γ (default 0.2, as in the paper)")
    if epsilon:
        parser.add_argument("--epsilon", type=float, default=None, metavar="ε",
                            help="the privacy loss ε (differential privacy, one tuple "
                                 "replaced) to calibrate for, instead of --k: the release "
                                 "states the d it gives at --gamma (with --k, the two must "
                                 "agree)")
    add_failure_probability_argument(parser, renamed_epsilon=not epsilon)


def prior_request(args: argparse.Namespace) -> dict[str, float | None]:
    """The k and ε keywords of ``for_privacy`` from --k and --epsilon: k's default
    only when neither is given."""
    epsilon = getattr(args, "epsilon", None)
    k = DEFAULT_K if args.k is None and epsilon is None else args.k
    return {"k": k, "epsilon": epsilon}


def add_failure_probability_argument(parser: argparse.ArgumentParser,
                                     renamed_epsilon: bool = True) -> None:
    parser.add_argument("--failure-probability", type=float, default=0.05,
                        help="the probability that an error bound fails, the paper's ε of "
                             "(ρ, ε)-usefulness (default 0.05)")
    if renamed_epsilon:
        add_renamed_flag(parser, "--epsilon", "--failure-probability",
                         "here it was the error bound's failure probability; --epsilon now "
                         "means only a privacy loss")


class _RenamedFlag(argparse.Action):
    """A flag that was renamed: using it is an error naming the new flag."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", why: str = "",
                 **kwargs: Any):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.new, self.why = new, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.error(f"{option_string} is now {self.new} ({self.why})")


def add_renamed_flag(parser: argparse.ArgumentParser, old: str, new: str, why: str) -> None:
    """Refuse ``old`` with an error that names ``new``; hidden from --help."""
    parser.add_argument(old, action=_RenamedFlag, new=new, why=why,
                        dest=f"renamed_{old.strip('-').replace('-', '_')}")


def add_seed_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=None,
                        help="seed for a reproducible run; anyone who knows it can undo the "
                             "randomisation, so never use it for a real release (default: OS "
                             "randomness)")


#: What --input, --data and --table name for standard input (CSV text).
STDIN = "-"


def read_table_arg(path: str, option: str, **options: Any) -> Any:
    """The table a table option names (an Arrow table): a file, or, for '-',
    CSV text from standard input (read whole; --sep and the other CSV options
    apply). A failure names ``option``."""
    from privpub.core.errors import ParameterError
    from privpub.core.inputs import read_table_file
    from privpub.core.temporaries import temporary_directory

    try:
        if path != STDIN:
            return read_table_file(path, **options)
        # The CSV reader takes a path: the text goes to a private file first.
        with temporary_directory() as folder:
            staged = os.path.join(folder, "stdin.csv")
            with open(staged, "wb") as fh:
                shutil.copyfileobj(sys.stdin.buffer, fh)
            return read_table_file(staged, **options)
    except ParameterError as exc:
        raise ParameterError(f"{option} {exc}") from None


def read_input(args: argparse.Namespace, batched: bool = False) -> Any:
    """The --input table (Arrow), restricted to --columns; with --schema, each
    CSV column is read as its attribute's kind (a text domain keeps '02134').
    ``batched``: a file is returned as a :class:`~privpub.core.inputs.TableFile`,
    read in batches by what takes it (standard input is still read whole)."""
    from privpub.core.errors import ParameterError, SchemaError
    from privpub.core.inputs import TableFile

    types = read_schema(args.schema).csv_types() if args.schema else None
    if batched and args.input != STDIN:
        try:
            table = TableFile(args.input, column_types=types, **csv_options(args))
        except ParameterError as exc:
            raise ParameterError(f"--input {exc}") from None
    else:
        table = read_table_arg(args.input, "--input", column_types=types, **csv_options(args))
    if args.columns:
        wanted = args.columns.split(",")
        missing = [c for c in wanted if c not in table.column_names]
        if missing:
            raise SchemaError(f"--columns names {missing}, not in {args.input!r} (columns: "
                              f"{', '.join(table.column_names)})")
        table = table.select(wanted)
    return table


def add_force_argument(parser: argparse.ArgumentParser, what: str = "--output") -> None:
    parser.add_argument("--force", action="store_true",
                        help=f"replace {what} if already there (an input is never replaced); "
                             "each file is written beside its name and renamed into place "
                             "only once complete, so an interrupted run leaves the old one "
                             "intact")


def add_sign_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sign", metavar="NAME.key", default=None,
                        help="sign the release with this Ed25519 private key (privpub keygen, "
                             "or ssh-keygen -t ed25519): readers check it with --trust NAME.pub")


def add_trust_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trust", metavar="NAME.pub", default=None,
                        help="the publisher's Ed25519 public key: refuse the release unless it "
                             "is signed by that key and unedited in what the signature covers "
                             "(without it, a signature is checked against the key it names, "
                             "which proves the file is as that key's holder signed it, not who "
                             "they are)")


def csv_options(args: argparse.Namespace) -> dict[str, Any]:
    """add_csv_arguments' options as read_table_file's keyword arguments."""
    from privpub.core.errors import ParameterError
    from privpub.core.inputs import NA_VALUES

    # A shell passes '\t' as two characters: read it as the tab it means.
    sep = "\t" if args.sep in ("\\t", "tab") else args.sep
    for option, value in (("--sep", sep), ("--quote", args.quote)):
        if value is not None and len(value) != 1:
            raise ParameterError(f"{option} must be one character, got {value!r}")
    if args.no_na and args.na_values is not None:
        raise ParameterError("--no-na and --na-values are alternatives; give one")
    na_values = () if args.no_na else \
        NA_VALUES if args.na_values is None else tuple(args.na_values.split(","))
    return {"delimiter": sep, "quote_char": None if args.no_quoting else args.quote,
            "na_values": na_values, "encoding": args.encoding}


def check_output(path: str, force: bool, *, suffix: str | tuple[str, ...] | None = None,
                 inputs: Sequence[str | None] = (), option: str = "--output") -> None:
    """``option`` must name a new file (or, with --force, one to replace) in an
    existing directory, with the format's suffix (Parquet's unless given), and
    be none of the ``inputs``: checked before any work (and again when the file
    is put in place)."""
    from privpub.core.files import PARQUET
    from privpub.core.files import check_output as check

    check(path, overwrite=force, suffix=PARQUET if suffix is None else suffix,
          inputs=[i for i in inputs if i], what=option, how="--force")


def read_schema(path: str) -> Any:
    """--schema FILE: :meth:`Schema.read` (JSON or YAML by its suffix)."""
    from privpub.domain.schema import Schema

    return Schema.read(path)


def table_schema(args: argparse.Namespace, table: Any) -> Any:
    """--schema if given (every column of the table must be in it), else the
    active domains of the table, with a note on stderr saying what that reveals."""
    from privpub.core.errors import PrivacyWarning, SchemaError
    from privpub.domain.schema import Schema

    if args.schema:
        if getattr(args, "missing", None) is not None:
            raise SchemaError("--missing is for inferred domains; with --schema declare the "
                              "missing value in the schema ('missing: LABEL' on the attribute)")
        if exact_columns(args):
            raise SchemaError("--exact-domain is for inferred domains; with --schema the "
                              "schema declares every domain")
        schema = read_schema(args.schema)
        extra = [c for c in table.column_names if c not in schema.names]
        if extra:
            raise SchemaError(f"{args.input!r} has columns the schema does not list: {extra}; "
                              "publishing would drop them: choose columns with --columns")
        absent = [c for c in schema.names if c not in table.column_names]
        if absent:
            fix = "add it to --columns" if args.columns else "give the table that holds it"
            raise SchemaError(f"{args.input!r} has no column {absent[0]!r}, which --schema "
                              f"{args.schema!r} lists (columns: "
                              f"{', '.join(table.column_names)}); {fix}, or leave it out of "
                              "the schema")
        return schema
    with warnings.catch_warnings():  # said here, on one line, and in the guarantee
        warnings.simplefilter("ignore", PrivacyWarning)
        schema = Schema.from_frame(table, missing=missing_labels(args, table),
                                   exact_domain=exact_columns(args))
    note("the domains were inferred from the data (active domains), which reveals which "
         "values occur; pass --schema for public domains")
    return schema


def exact_columns(args: argparse.Namespace) -> list[str]:
    """--exact-domain as Schema.from_frame's ``exact``."""
    given = getattr(args, "exact_domain", None) or []
    return [name.strip() for text in given for name in text.split(",") if name.strip()]


def missing_labels(args: argparse.Namespace, table: Any) -> dict[str, Any] | None:
    """--missing as Schema.from_frame's ``missing``: {column: label} for the columns
    with missing cells (or named), each label read as its column's kind."""
    from privpub.core.errors import ParameterError

    given = getattr(args, "missing", None)
    if not given:
        return None
    named: dict[str, str] = {}
    default = None
    for spec in given:
        column, sep, label = spec.partition("=")
        if sep and column in table.column_names:
            named[column] = label
        else:
            default = spec
    labels = {}
    for name in table.column_names:
        if name not in named and (default is None or not _has_missing(table, name)):
            continue
        text = named.get(name, default)
        kind = _column_type(table, name)
        kind = kind.value_type if hasattr(kind, "value_type") else kind
        try:
            labels[name] = int(text) if pa_kind(kind) == "integer" else \
                float(text) if pa_kind(kind) == "float" else text
        except ValueError:
            raise ParameterError(f"--missing {text!r}: column {name!r} holds numbers, so its "
                                 f"label must be one; give it as --missing {name}=NUMBER"
                                 ) from None
    return labels


def _has_missing(table: Any, name: str) -> bool:
    """Whether column ``name`` of an Arrow table or a table file (read in batches)
    holds a missing cell (NaN too)."""
    import pyarrow.compute as pc

    from privpub.core.inputs import TableFile

    parts = (b.column(name) for b in table.batches([name])) if isinstance(table, TableFile) \
        else (table.column(name),)
    return any(pc.any(pc.is_null(part, nan_is_null=True)).as_py() for part in parts)


def _column_type(table: Any, name: str) -> Any:
    from privpub.core.inputs import TableFile

    return table.field_type(name) if isinstance(table, TableFile) else table.column(name).type


def pa_kind(arrow_type: Any) -> str:
    import pyarrow as pa

    return "integer" if pa.types.is_integer(arrow_type) else \
        "float" if pa.types.is_floating(arrow_type) else "other"


def note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def warn_if_seeded(seed: int | None) -> None:
    if seed is not None:
        print(f"warning: --seed {seed} makes this release reproducible by anyone who knows "
              "the seed, who can then undo its randomisation: for tests and reproductions "
              "only, not for real releases", file=sys.stderr)


#: What --output names for standard output.
STDOUT = "-"


def add_output_options(parser: argparse.ArgumentParser, what: str,
                       formats: Sequence[str] = FORMATS) -> None:
    """--format, --output (``-``: standard output, the default) and --force, as
    every subcommand that prints rows takes them."""
    parser.add_argument("--format", choices=formats, default="table",
                        help=f"{what} as an aligned table (default), "
                             + ", ".join(f.upper() for f in formats if f != "table"))
    parser.add_argument("--output", "-o", default=STDOUT, metavar="FILE",
                        help=f"write {what} to FILE (new unless --force; '-', the default, is "
                             "standard output)")
    add_force_argument(parser)


def _cell(value: Any) -> Any:
    """A CSV or table cell: lists and objects as JSON text, the rest as is."""
    return json.dumps(value, default=str) if isinstance(value, (list, dict)) else value


def render(rows: Sequence[dict[str, Any]], fmt: str) -> str:
    """Rows as an aligned table, JSON (a list of objects) or CSV text."""
    import io

    if fmt == "json":
        return json.dumps(list(rows), indent=2, default=str) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        if rows:
            # Rows of different kinds (a SPLU-Gen release's exact and reconstructed
            # counts) have different fields: every field, in first-seen order; a row
            # without one has an empty cell.
            fields = list(dict.fromkeys(field for row in rows for field in row))
            writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
        return out.getvalue()
    import pandas as pd

    return pd.DataFrame([{k: _cell(v) for k, v in row.items()} for row in rows]
                        ).to_string(index=False) + "\n"


def emit(rows: Sequence[dict[str, Any]], fmt: str) -> None:
    """Rows to stdout as an aligned table, JSON (a list of objects) or CSV."""
    sys.stdout.write(render(rows, fmt))


def emit_to(args: argparse.Namespace, rows: Sequence[dict[str, Any]], fmt: str) -> None:
    """Rows in ``fmt`` to --output: standard output for '-', else a new file (or,
    with --force, a replaced one), written whole or not at all."""
    text = render(rows, fmt)
    if args.output == STDOUT:
        sys.stdout.write(text)
        return
    from privpub.core.files import atomic_output

    with atomic_output(args.output, overwrite=args.force) as temp, \
            open(temp, "w", encoding="utf-8") as fh:
        fh.write(text)


@contextmanager
def notes_in_rows(category: type[Warning]) -> Any:
    """Run an estimate with its ``category`` warnings caught: each estimate's
    notes say them in full in every output format, so stderr gets one line;
    other warnings pass through as raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", category)
        yield
    for w in caught:
        if issubclass(w.category, category):
            print("privpub: warning: an estimate needs care (see its notes)", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


@contextmanager
def progress(desc: str, unit: str) -> Any:
    """A tqdm bar on stderr (silent when stderr is not a terminal, absent where
    tqdm is not installed), as a ``(done, total)`` callback."""
    with progress_bar(desc=desc, unit=unit) as bar:
        def update(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        yield update


def confirm(question: str, yes: bool) -> bool:
    """True when --yes was given, or the user answers y on a terminal. Off a
    terminal (a pipeline) without --yes, the answer is no: nothing large is
    written that nobody agreed to."""
    if yes:
        return True
    if not sys.stdin.isatty():
        return False
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)  # stdout may be a file
    return sys.stdin.readline().strip().lower() in ("y", "yes")

