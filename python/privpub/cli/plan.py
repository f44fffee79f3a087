"""``privpub plan``: which parameters each mechanism can take for a table, before publishing."""

from __future__ import annotations

import argparse
import json
from typing import Any

from privpub.cli.common import ExampleFormatter, add_input_arguments, read_input, read_schema

EXAMPLES = """examples:
  privpub plan --input adult.csv
  privpub plan --input adult.csv --sensitive occupation --format json > plan.json
  privpub plan --n 98000 --schema people.yaml --mechanism alphabeta,frapp
"""


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
    plan.add_argument("--mechanism", default="alphabeta,frapp,splu", metavar="NAME[,NAME]",
                      help="mechanisms to plan (default: alphabeta,frapp,splu)")
    plan.add_argument("--sensitive", metavar="A[,B]",
                      help="SPLU-Gen's sensitive attribute(s) (default: SPLU is planned only "
                           "when given)")
    plan.add_argument("--epsilon", type=float, default=0.05, help="ε of (ρ, ε) (default 0.05)")
    plan.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="output: the explanation and the table (default), JSON or CSV")
    plan.set_defaults(run=_plan)


def _plan(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError
    from privpub.planning import plan

    mechanisms = tuple(args.mechanism.split(","))
    sensitive = args.sensitive.split(",") if args.sensitive else None
    if args.input is not None:
        table = read_input(args)
        subject = read_schema(args.schema) if args.schema else table
        result = plan(subject if args.schema is None else table, mechanisms=mechanisms,
                      sensitive=sensitive, epsilon=args.epsilon,
                      **({"schema": subject} if args.schema else {}))
    elif args.schema and args.n:
        result = plan(read_schema(args.schema), n=args.n, mechanisms=mechanisms,
                      sensitive=sensitive, epsilon=args.epsilon)
    else:
        raise ParameterError("give --input FILE, or --n N with --schema FILE")
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2, default=str))
    elif args.format == "csv":
        print(result.to_frame().to_csv(index=False), end="")
    else:
        print(result.explain())
        print()
        print(result.to_frame().to_string(index=False))
    return 0
