"""``privpub attack``: a Dinur–Nissim reconstruction audit of a published view."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import ExampleFormatter


def _attack(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from privpub import PublishedView
    from privpub.attacks import audit
    from privpub.attacks.audit import binary_values
    from privpub.core.errors import ParameterError
    from privpub.tables.inputs import read_table_file

    view = PublishedView.open(args.view)
    secret_value = None
    if args.secret_value is not None:  # the command line gives text: match it to a value
        values = binary_values(view.schema, args.secret)
        named = [v for v in values if str(v) == args.secret_value]
        if not named:
            raise ParameterError(f"--secret-value {args.secret_value!r} is not a value of "
                                 f"{args.secret!r} (its values: {values})")
        secret_value = named[0]
    result = audit(view, args.secret, read_table_file(args.data),
                   secret_value=secret_value, n_targets=args.targets,
                   n_queries=args.queries, decoder=args.decoder, seed=args.seed)
    if args.format == "table":
        print(result)
    print(json.dumps({**asdict(result), "advantage": result.advantage}, indent=2, default=str))
    return 0


def add_parser(sub: Any) -> None:
    att = sub.add_parser(
        "attack", help="audit a published view by reconstructing a binary secret column",
        description="Dinur–Nissim reconstruction against a published view: targets are "
                    "records of the original data whose other attributes (the "
                    "quasi-identifier) no other record shares; random subsets of them are "
                    "counted through the view's own estimator and decoded. Prints the "
                    "fraction of secret bits recovered with a 95%% interval and the "
                    "majority-guess baseline.",
        epilog="examples:\n"
               "  privpub publish alphabeta --input adult.csv --output view.parquet "
               "--duplicates records\n"
               "  privpub attack view.parquet --data adult.csv --secret salary "
               "--secret-value '>50K' --seed 1\n"
               "  privpub attack view.parquet --data adult.csv --secret sex --decoder lp "
               "--targets 128",
        formatter_class=ExampleFormatter)
    att.add_argument("view", help="the view's Parquet file")
    att.add_argument("--data", required=True, metavar="PATH",
                     help="the original table (.csv, .csv.gz or .parquet), to pick targets "
                          "and score the attack")
    att.add_argument("--secret", required=True, help="a binary column of the view")
    att.add_argument("--secret-value", default=None,
                     help="the value counted as bit 1 (default: the column's second value)")
    att.add_argument("--targets", type=int, default=256,
                     help="how many records to attack (default 256)")
    att.add_argument("--queries", type=int, default=None,
                     help="random subset queries (default n (ln n)^2 for n targets)")
    att.add_argument("--decoder", choices=["lstsq", "lp"], default="lstsq",
                     help="least squares (default) or Theorem 3's LP")
    att.add_argument("--seed", type=int, default=None,
                     help="seed for the targets and queries (default: OS randomness)")
    att.add_argument("--format", choices=("table", "json"), default="table",
                     help="output: the summary and its JSON (default) or JSON alone")
    att.set_defaults(run=_attack)
