"""``privpub attack``: a Dinur–Nissim reconstruction audit of a published view."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import (
    ExampleFormatter,
    add_csv_arguments,
    add_trust_argument,
    csv_options,
    read_table_arg,
)


def _attack(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from privpub import PublishedView
    from privpub.attacks import audit, audit_presence
    from privpub.core.errors import ParameterError

    view = PublishedView.open(args.view, trust=args.trust)
    data = read_table_arg(args.data, "--data", column_types=view.schema.csv_types(),
                          **csv_options(args))
    if args.presence:
        result = audit_presence(view, data, prior=args.prior, n_candidates=args.targets,
                                rounds=args.rounds, n_queries=args.queries,
                                decoder=args.decoder, seed=args.seed, progress=True)
        extra = {"posterior": result.posterior, "recall": result.recall,
                 "theorem_prior": result.theorem_prior,
                 "within_theorem_range": result.within_theorem_range,
                 "above_two_thirds": result.above_two_thirds, "breach": result.breach,
                 "verdict": result.verdict}
    else:
        for flag, value in (("--prior", args.prior), ("--rounds", args.rounds)):
            if value is not None:
                raise ParameterError(f"{flag} is for --presence audits")
        result = audit(view, args.secret, data, secret_value=_secret_value(view, args),
                       n_targets=args.targets, n_queries=args.queries, decoder=args.decoder,
                       seed=args.seed)
        extra = {"advantage": result.advantage}
    if args.format == "table":
        print(result)
    print(json.dumps({**asdict(result), **extra}, indent=2, default=str))
    return 0


def _secret_value(view, args: argparse.Namespace):
    """The command line gives text: the category it names, or an integer range's integer."""
    from privpub.core.errors import ParameterError
    from privpub.domain.attributes import Categorical

    if args.secret_value is None:
        return None
    attr = view.schema[args.secret]
    if not isinstance(attr, Categorical):
        try:
            return int(args.secret_value)
        except ValueError:
            raise ParameterError(f"--secret-value {args.secret_value!r} is not an integer, "
                                 f"and {args.secret!r} is {attr.describe()}") from None
    named = [v for v in attr.values if str(v) == args.secret_value]
    if not named:
        raise ParameterError(f"--secret-value {args.secret_value!r} is not a value of "
                             f"{args.secret!r} (its values: {list(attr.values)})")
    return named[0]


def add_parser(sub: Any) -> None:
    att = sub.add_parser(
        "attack", help="audit a published view by Dinur–Nissim reconstruction",
        description="Dinur–Nissim reconstruction against a published view, answered by the "
                    "view's own estimator and decoded. With --secret (attribute inference): "
                    "targets are records whose other attributes (the quasi-identifier) no "
                    "other record shares; prints the fraction of their secret bits "
                    "recovered with a 95% interval and the majority-guess baseline. With "
                    "--presence (the αβ paper's Theorem 2.6): candidate tuples each in the "
                    "data with prior d (the view's, or --prior); prints the posterior of "
                    "the tuples the decoder names present, beside the view's promised γ and "
                    "Theorem 2.6's 2/3; \"breach\" only at a prior within the theorem's "
                    "range, ≤ n/m (distinct tuples of the data over the domain size; the "
                    "JSON's theorem_prior), else \"above-2/3-outside-range\".",
        epilog="examples:\n"
               "  privpub publish alphabeta --input adult.csv --output view.parquet "
               "--duplicates set\n"
               "  privpub attack view.parquet --data adult.csv --secret salary "
               "--secret-value '>50K' --seed 1\n"
               "  privpub attack view.parquet --data adult.csv --secret sex --decoder lp "
               "--targets 128\n"
               "  privpub attack view.parquet --data adult.csv --presence --seed 1\n"
               "  privpub attack view.parquet --data people-latin1.csv --encoding latin-1 "
               "--secret sex\n"
               "  privpub attack view.parquet --data adult.csv --presence --prior 0.001 "
               "--rounds 2000 --format json",
        formatter_class=ExampleFormatter)
    att.add_argument("view", help="the view's Parquet file")
    add_trust_argument(att)
    att.add_argument("--data", required=True, metavar="PATH",
                     help="the original table (.csv, .csv.gz or .parquet; '-' reads CSV "
                          "from standard input), to pick targets and score the attack")
    add_csv_arguments(att)
    what = att.add_mutually_exclusive_group(required=True)
    what.add_argument("--secret", help="a column of the view (attribute inference): binary, "
                                       "or any with --secret-value")
    what.add_argument("--presence", action="store_true",
                      help="which candidate tuples are in the data (Theorem 2.6's adversary)")
    att.add_argument("--secret-value", default=None,
                     help="the value counted as bit 1 (default: the column's second value)")
    att.add_argument("--targets", type=int, default=256,
                     help="records to attack, or candidates per round with --presence "
                          "(default 256)")
    att.add_argument("--prior", type=float, default=None,
                     help="--presence: the prior per candidate (default: the view's d; "
                          "Theorem 2.6's breach is at priors ≤ n/m)")
    att.add_argument("--rounds", type=int, default=None,
                     help="--presence: candidate sets (default: about 200 candidates in the "
                          "data)")
    att.add_argument("--queries", type=int, default=None,
                     help="random subset queries (default n (ln n)^2 for n targets)")
    att.add_argument("--decoder", choices=["lstsq", "lp"], default="lstsq",
                     help="least squares (default) or Theorem 3's LP")
    att.add_argument("--seed", type=int, default=None,
                     help="seed for the targets and queries (default: OS randomness)")
    att.add_argument("--format", choices=("table", "json"), default="table",
                     help="output: the summary and its JSON (default) or JSON alone")
    att.set_defaults(run=_attack)
