"""``privpub estimate`` and ``privpub inspect``: reading a release file."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from typing import Any

from privpub.cli.common import FORMATS, ExampleFormatter, emit

ESTIMATE_EXAMPLES = """examples:
  privpub estimate view.parquet "age > 50" "sex = 'Female' and salary = '>50K'"
  privpub estimate view.parquet "\\"marital-status\\" = 'Divorced'" --format json
  privpub estimate view.parquet "age > 50" --level 0.99
  privpub estimate view.parquet "zip IN (SELECT zip FROM regions)" --table regions=regions.csv \\
      --format csv > estimates.csv
"""
INSPECT_EXAMPLES = """examples:
  privpub inspect view.parquet
  privpub inspect view.parquet --format json | jq .guarantee
"""


def add_parsers(sub: Any) -> None:
    est = sub.add_parser(
        "estimate", help="estimate counting queries from a published view",
        description="Estimate select count(*) from I where C from a release written by "
                    "`privpub publish alphabeta|frapp` (or PublishedView.to_parquet). The file "
                    "is re-validated and streamed row group by row group, so views larger than "
                    "memory work. Quote attribute names with hyphens: "
                    "\"marital-status\" = 'Divorced'. Each row has the estimate, its "
                    "plug-in stderr, and lo, hi: a confidence interval at --level that holds "
                    "for every true count (interval_method: exact, or conservative where only "
                    "a conservative one is known). For SPLU-Gen releases use "
                    "`privpub splu estimate`.\n\n" + ESTIMATE_EXAMPLES,
        formatter_class=ExampleFormatter)
    est.add_argument("release", metavar="RELEASE", help="the release's Parquet file")
    est.add_argument("query", nargs="+", help="SQL WHERE conditions, e.g. \"age > 50\"")
    est.add_argument("--table", action="append", metavar="NAME=PATH",
                     help="register an auxiliary table for IN-subqueries (repeatable)")
    est.add_argument("--level", type=float, default=0.95, metavar="L",
                     help="confidence level of the interval columns lo, hi (default 0.95)")
    est.add_argument("--format", choices=FORMATS, default="table",
                     help="output: an aligned table (default), JSON or CSV")
    est.set_defaults(run=_estimate)

    ins = sub.add_parser(
        "inspect", help="show a release's mechanism, parameters, guarantee and size",
        description="Open a release file (re-validating its metadata) and show what it is: "
                    "the mechanism and its parameters, the guarantee for the data it "
                    "published, how its randomness was drawn, its schema and its size.\n\n"
                    + INSPECT_EXAMPLES, formatter_class=ExampleFormatter)
    ins.add_argument("release", metavar="RELEASE", help="the release's Parquet file")
    ins.add_argument("--format", choices=("table", "json"), default="table",
                     help="output: text (default) or JSON")
    ins.set_defaults(run=_inspect)


def _open(path: str) -> Any:
    from privpub import PublishedView

    return PublishedView.open(path)  # streams the file: views larger than memory


def _estimate(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError
    from privpub.core.inputs import read_table_file
    from privpub.tables.confidence import check_level

    level = check_level(args.level)
    view = _open(args.release)
    if view.mechanism == "splu":
        raise ParameterError(f"{args.release!r} is a SPLU-Gen release: estimate its counts "
                             "with `privpub splu estimate`")
    tables = {}
    for spec in args.table or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ParameterError(f"--table takes NAME=PATH (the name the subquery uses), "
                                 f"got {spec!r}")
        tables[name] = read_table_file(path)
    rows = []
    for query in args.query:
        est = view.estimate(query, tables=tables)
        lo, hi = est.interval(level)
        rows.append({"query": query, "estimate": round(est.value, 2), "counts": est.counts,
                     "stderr": round(est.stderr, 2), "lo": lo, "hi": hi, "level": level,
                     "interval_method": est.interval_method, "n_view": est.n_view,
                     "n_domain": est.n_domain,
                     "bound": None if est.bound is None else round(est.bound, 1),
                     "failure_probability": est.failure_probability})
    emit(rows, args.format)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    view = _open(args.release)
    guarantee = view.guarantee()
    info = {"file": args.release, "bytes": os.path.getsize(args.release),
            "mechanism": view.mechanism, "rows": len(view),
            "domain_size": str(view.schema.size), "seed_policy": view.seed_policy,
            "library_version": view.library_version, "parameters": view.parameters,
            "schema": view.schema.to_dict(),
            "guarantee": {"mechanism": guarantee.mechanism,
                          "claims": [asdict(c) for c in guarantee.claims]}}
    if args.format == "json":
        print(json.dumps(info, indent=2, default=str))
        return 0
    print(f"{args.release}: {view.mechanism} release, {len(view):,} rows, "
          f"{info['bytes']:,} bytes")
    print(f"randomness: {view.seed_policy}")
    print(f"written by privpub {view.library_version}")
    print()
    print(view.schema)
    print()
    print("parameters:")
    for name, value in view.parameters.items():
        shown = json.dumps(value, default=str) if isinstance(value, dict | list) else value
        print(f"  {name}: {shown}")
    print()
    print(guarantee)
    return 0
