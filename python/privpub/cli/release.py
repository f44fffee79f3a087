"""``privpub estimate`` and ``privpub inspect``: reading a release file."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from typing import Any

from privpub.cli.common import (
    ExampleFormatter,
    add_csv_arguments,
    add_output_options,
    add_trust_argument,
    csv_options,
    emit_to,
    notes_in_rows,
    read_table_arg,
)
from privpub.core.estimate import LEVEL, check_level

#: What inspect says of an unsigned release.
SIGNATURE_NOTE = ("unsigned: its digests show the file agrees with itself, not who published "
                  "it (a publisher signs with privpub publish --sign)")
#: The columns of `privpub estimate --format table` (json and csv give every field).
SHOWN = ("query", "value", "stderr", "lo", "hi", "level", "inconsistent", "counts", "method",
         "interval_method")

ESTIMATE_EXAMPLES = """examples:
  privpub estimate view.parquet "age > 50" "sex = 'Female' and salary = '>50K'"
  privpub estimate view.parquet "\\"marital-status\\" = 'Divorced'" --format json
  privpub estimate view.parquet "age > 50" --level 0.99
  privpub estimate view.parquet "SELECT sum(age) FROM adult WHERE sex = 'Female'"
  privpub estimate view.parquet "SELECT avg(\\"hours-per-week\\") FROM adult WHERE age > 50"
  privpub estimate view.parquet "age > 50" --clamped      # into [0, n]: post-processing
  privpub estimate view.parquet "age > 50" --trust steward.pub   # only if steward signed it
  privpub estimate splu.parquet "sex = 'Male' AND occupation = 'Sales'" --format json
  privpub estimate dask-release/ "age > 50" --format csv --output estimates.csv
  privpub estimate triangles.json --format json       # a graph answer (answer.to_dict())
  privpub estimate view.parquet "zip IN (SELECT zip FROM regions)" --table regions=regions.csv \\
      --format csv > estimates.csv
  privpub estimate view.parquet "city IN (SELECT city FROM c)" --table c=cities.csv \\
      --encoding latin-1
"""
INSPECT_EXAMPLES = """examples:
  privpub inspect view.parquet
  privpub inspect view.parquet --format json | jq .guarantee
  privpub inspect dask-release/          # a Dask release's directory
  privpub inspect view.parquet --trust steward.pub
"""


def add_parsers(sub: Any) -> None:
    est = sub.add_parser(
        "estimate", help="estimate counts (and sums, averages) from any release: table views, "
                         "SPLU-Gen, Dask, graphs",
        description="Estimate select count(*) from I where C from a release, with the numbers "
                    "release.estimate_many gives: a view file of `privpub publish "
                    "alphabeta|frapp|splu` (or PublishedView.to_parquet), a Dask release's "
                    "directory, or a graph answer saved as JSON (answer.to_dict(); it answers "
                    "its own query, so give no condition). A file is re-validated and "
                    "streamed row group by row group, so views larger than memory work. "
                    "Quote attribute names with hyphens: \"marital-status\" = 'Divorced'. "
                    "On a SPLU-Gen release a condition on non-sensitive attributes is counted "
                    "exactly, and P AND s = 'value' (s sensitive) is reconstructed. On a table "
                    "view, select sum(col) or avg(col) from I where C estimates a numeric "
                    "column's sum or average over the rows C selects. Each row "
                    "has the estimate (value), its stderr, lo, hi: an interval at --level that "
                    "holds for every true count (interval_method says how), what it counts, "
                    "the method and any notes; JSON and CSV add the family's details.\n\n"
                    + ESTIMATE_EXAMPLES, formatter_class=ExampleFormatter)
    est.add_argument("release", metavar="RELEASE",
                     help="the release: a Parquet file, a Dask release's directory, or a graph "
                          "answer's JSON file")
    est.add_argument("query", nargs="*", help="SQL WHERE conditions, e.g. \"age > 50\"")
    est.add_argument("--table", action="append", metavar="NAME=PATH",
                     help="register an auxiliary table for IN-subqueries (repeatable; PATH "
                          "'-' reads CSV from standard input; read as the CSV options below say)")
    add_csv_arguments(est)
    est.add_argument("--level", type=float, default=LEVEL, metavar="L",
                     help="confidence level of the interval columns lo, hi (default %(default)s)")
    est.add_argument("--clamped", action="store_true",
                     help="clamp each estimate and interval into the range its true count can "
                          "take ([0, n] for a table view, the query's range for a graph "
                          "answer): post-processing, no privacy cost; the method says so and "
                          "is_clamped is true (estimate.clamped())")
    add_trust_argument(est)
    add_output_options(est, "the estimates")
    est.set_defaults(run=_estimate)

    ins = sub.add_parser(
        "inspect", help="show a release's mechanism, parameters, guarantee and size",
        description="Open a release file (re-validating its metadata) and show what it is: "
                    "the mechanism and its parameters, the guarantee for the data it "
                    "published, how its randomness was drawn, its schema and its size (of a "
                    "directory: its part files and metadata file together).\n\n"
                    + INSPECT_EXAMPLES, formatter_class=ExampleFormatter)
    ins.add_argument("release", metavar="RELEASE",
                     help="the release's Parquet file, or a Dask release's directory")
    ins.add_argument("--format", choices=("table", "json"), default="table",
                     help="output: text (default) or JSON")
    add_trust_argument(ins)
    ins.set_defaults(run=_inspect)


def _open(path: str, trust: str | None) -> Any:
    from privpub import PublishedView

    return PublishedView.open(path, trust=trust)  # streams the file: views larger than memory


def open_any(path: str, trust: str | None) -> Any:
    """A release of any kind, by what its file holds (:func:`privpub.open`),
    signed by ``trust`` (a public key's file) if given."""
    from privpub.tables.opening import open_release

    return open_release(path, trust=trust)


def _estimates(release: Any, queries: list[str], tables: dict) -> Any:
    from privpub.core.errors import ParameterError

    if release.answers_own_query:
        if queries:
            raise ParameterError("a graph answer answers its own query; give no condition "
                                 f"(got {queries!r})")
        return release.estimate_many()
    if not queries:
        raise ParameterError("give at least one condition (\"TRUE\" counts every record)")
    return release.estimate_many(queries, tables=tables)


def _estimate(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError, UsefulnessWarning

    level = check_level(args.level)
    release = open_any(args.release, args.trust)
    tables = {}
    for spec in args.table or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ParameterError(f"--table takes NAME=PATH (the name the subquery uses), "
                                 f"got {spec!r}")
        tables[name] = read_table_arg(path, f"--table {name}", **csv_options(args))
    with notes_in_rows(UsefulnessWarning):
        batch = _estimates(release, args.query, tables)
        rows = (batch.clamped() if args.clamped else batch).to_records(level)
    if args.format == "table":
        emit_to(args, [{k: row[k] for k in SHOWN} for row in rows], "table")
        for i, row in enumerate(rows):
            for note in row["notes"]:
                print(f"note: #{i} {row['query']}: {note}")
        return 0
    emit_to(args, rows, args.format)
    return 0


def _release_bytes(path: str) -> int:
    """The bytes a release takes: its file, or a directory release's part files
    and metadata file (a directory's own size is that of its entry list)."""
    from privpub.viewfile.layout import metadata_file, part_files

    return sum(os.path.getsize(f) for f in {*part_files(path), metadata_file(path)})


def _inspect(args: argparse.Namespace) -> int:
    view = _open(args.release, args.trust)
    guarantee = view.guarantee()
    info = {"file": args.release, "bytes": _release_bytes(args.release),
            "mechanism": view.mechanism, "rows": len(view),
            "domain_size": str(view.schema.size), "seed_policy": view.seed_policy,
            "library_version": view.library_version, "parameters": view.parameters,
            "schema": view.schema.to_dict(),
            "signed": None if view.signed is None else asdict(view.signed),
            "guarantee": {"mechanism": guarantee.mechanism,
                          "claims": [asdict(c) for c in guarantee.claims]},
            "row_group_statistics": view.rows.statistics()}
    if args.format == "json":
        print(json.dumps(info, indent=2, default=str))
        return 0
    print(f"{args.release}: {view.mechanism} release, {len(view):,} rows, "
          f"{info['bytes']:,} bytes")
    print(f"randomness: {view.seed_policy}")
    print(f"written by privpub {view.library_version}")
    print(SIGNATURE_NOTE if view.signed is None else view.signed)
    print()
    print(view.schema)
    print()
    print("parameters:")
    for name, value in view.parameters.items():
        shown = json.dumps(value, default=str) if isinstance(value, dict | list) else value
        print(f"  {name}: {shown}")
    print()
    print(guarantee)
    print()
    print(f"row-group statistics: {info['row_group_statistics']}")
    return 0
