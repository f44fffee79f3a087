"""``privpub plan``: which parameters each mechanism can take for a table, before publishing."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import warnings
from typing import TYPE_CHECKING, Any

from privpub.cli.common import (
    ExampleFormatter,
    add_failure_probability_argument,
    add_input_arguments,
    exact_columns,
    missing_labels,
    read_input,
    read_schema,
)

EXAMPLES = """examples:
  privpub plan --input adult.csv
  privpub plan --input adult.csv --sensitive occupation --format json > plan.json
  privpub plan --n 98000 --schema people.yaml --mechanism alphabeta,frapp
  privpub plan --input people-latin1.csv --encoding latin-1
"""

if TYPE_CHECKING:  # (the commands import what they run when they run)
    from privpub.domain.schema import Schema


def add_parser(sub: Any) -> None:
    plan = sub.add_parser(
        "plan", help="the feasible (k, γ) region of each mechanism for a table, with sizes",
        description="For a table (or just n and a schema) list, for each mechanism, the "
                    "(k, γ) choices it accepts with the error bound, the expected view rows and "
                    "bytes, and explain each refusal in terms of the table (its n, m and n/m). "
                    "Nothing is published.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    add_input_arguments(plan)
    plan.set_defaults(input=None)
    for action in plan._actions:  # --input is optional here: --n and --schema do instead
        if action.dest == "input":
            action.required = False
    plan.add_argument("--n", type=int, default=None,
                      help="the number of records, when planning from a schema alone")
    plan.add_argument("--mechanism", default=None, metavar="NAME[,NAME]",
                      help="mechanisms to plan (default: every one that plans: "
                           "alphabeta,frapp,splu)")
    plan.add_argument("--sensitive", metavar="A[,B]",
                      help="SPLU-Gen's sensitive attribute(s) (default: each attribute in "
                           "turn)")
    add_failure_probability_argument(plan)
    plan.add_argument("--duplicates", choices=["set", "records"], default="set",
                      help="how repeated tuples would be published (default 'set', the full "
                           "guarantee; see `privpub publish alphabeta --help`)")
    plan.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="output: the explanation and a summary table (default), or every "
                           "grid point with every column as JSON or CSV")
    plan.set_defaults(run=_plan)


def _plan(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError, PrivacyWarning
    from privpub.domain.schema import Schema
    from privpub.planning import plan

    mechanisms = None if args.mechanism is None else tuple(args.mechanism.split(","))
    sensitive = args.sensitive.split(",") if args.sensitive else None
    options = {"mechanisms": mechanisms, "sensitive": sensitive,
               "failure_probability": args.failure_probability,
               "duplicates": args.duplicates}
    schema = read_schema(args.schema) if args.schema else None
    if args.input is not None:
        if args.n is not None:
            raise ParameterError("--n is for planning from a schema alone; with --input the "
                                 "table's own record count is used")
        table = read_input(args)
        if schema is None and (args.missing or exact_columns(args)):
            with warnings.catch_warnings():  # the plan says so itself
                warnings.simplefilter("ignore", PrivacyWarning)
                schema = Schema.from_frame(table, missing=missing_labels(args, table),
                                           exact_domain=exact_columns(args))
        result = plan(table, schema=schema, **options)
    elif schema is not None and args.n is not None:
        result = plan(schema, n=args.n, **options)
    else:
        raise ParameterError("give --input FILE, or --n N with --schema FILE")
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2, default=str))
    elif args.format == "csv":
        print(result.to_frame().to_csv(index=False), end="")
    else:
        for paragraph in result.explain().split("\n\n"):
            print(textwrap.fill(paragraph, width=100), end="\n\n")
        print(_summary(result.to_frame()).to_string(index=False))
    return 0


def _summary(frame: Any) -> Any:
    """The grid for a terminal: the default calibration's αβ rows, FRAPP's, and
    SPLU-Gen's, with the columns that decide (all of them: --format csv|json)."""
    import pandas as pd

    from privpub.core.planners import planner

    # Each family's leading variant (αβ's default calibration); a family with one keeps all.
    lead = frame["mechanism"].map(lambda name: planner(name).main_variant)
    keep = frame[lead.isna() | (frame["calibration"] == lead)].copy()
    # (all None when nothing is feasible: an object column that cannot round)
    number = {c: pd.to_numeric(keep[c], errors="coerce") for c in ("bytes", "rows", "error_bound")}
    keep["MB"] = (number["bytes"] / 1e6).round(2)
    keep["rows"] = number["rows"].round()
    keep["error_bound"] = number["error_bound"].round(1)
    keep["epsilon"] = pd.to_numeric(keep["epsilon"], errors="coerce").round(2)
    keep["reason"] = keep["reason"].fillna("").str.slice(0, 60)
    columns = ["mechanism", "sensitive", "k", "gamma", "group_size", "feasible", "alpha",
               "beta", "error_bound", "epsilon", "rows", "MB", "reason"]
    shown = keep[[c for c in columns if c in keep]]
    # Blank cells for the terminal: object columns, as numbers cannot hold "".
    return shown.dropna(axis=1, how="all").astype(object).fillna("")


def report_weak_usefulness(view: Any, table: Any, schema: Schema, args: argparse.Namespace,
                           calibration: str | None = None) -> None:
    """For `privpub publish`: when the release cannot tell its typical counts from
    zero, say so on stderr as one block (the library's UsefulnessWarning), with
    the requests `privpub plan` finds for this table whose bound would."""
    from privpub.core.planners import planners
    from privpub.planning import DEFAULT_GAMMAS, DEFAULT_KS, plan

    stated = view.mechanism_object()
    resolution = stated.resolution()
    if resolution is None or not resolution.weak:
        return
    found = plan(table.select(list(schema.names)), schema=schema,
                 mechanisms=[family.name for family in planners() if family.privacy_grid],
                 ks=sorted({*DEFAULT_KS, args.k}),
                 gammas=sorted({*DEFAULT_GAMMAS, args.gamma}),
                 failure_probability=args.failure_probability,
                 duplicates=args.duplicates or "set")
    lines = found.alternatives(view.mechanism, calibration, args.k, args.gamma)
    print(f"warning: {resolution.warning(stated.usefulness_remedy())}", file=sys.stderr)
    print(f"  `privpub plan` finds {'these' if lines else 'no'} requests for this table with a "
          f"bound below {resolution.typical:,.1f}" + (":" if lines else " in its grid"),
          file=sys.stderr)
    for line in lines:
        print(f"    {line}", file=sys.stderr)
