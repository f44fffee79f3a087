"""``privpub report``: a release's card, one self-contained HTML page."""

from __future__ import annotations

import argparse
import time
from typing import Any

from privpub.cli.common import (
    ExampleFormatter,
    add_csv_arguments,
    add_force_argument,
    add_trust_argument,
    check_output,
    csv_options,
    read_table_arg,
)
from privpub.core.release import CARD_QUERIES, CARD_ROUNDS, CARD_TARGETS

EXAMPLES = """examples:
  privpub report view.parquet --output card.html
  privpub report view.parquet --data adult.csv --output card.html
  privpub report view.parquet --data adult.csv --audit --targets 64 --output card.html
  privpub report view.parquet --data people-latin1.csv --encoding latin-1 --output card.html
  privpub report dask-release/ --output card.html --force
  privpub report view.parquet --trust steward.pub --output card.html
  privpub report triangles.json --output card.html      # a graph answer (answer.to_dict())
"""


def _report(args: argparse.Namespace) -> int:
    from privpub.cli.release import open_any
    from privpub.core.errors import ParameterError
    from privpub.report.card import HTML_SUFFIXES

    if args.audit and args.data is None:
        raise ParameterError("--audit needs --data TABLE (the table the release was made "
                             "from): the audits score the attack against it")
    check_output(args.output, args.force, suffix=HTML_SUFFIXES,
                 inputs=[args.release, args.data])
    started = time.perf_counter()
    release = open_any(args.release, args.trust)
    data = None
    if args.data is not None:
        if release.answers_own_query:
            raise ParameterError("--data is for table releases; for a graph answer's card "
                                 "pass the Graph in Python: answer.report(data=graph)")
        # The release's schema types a CSV's columns, as every command that reads
        # data for a release does ('02134' stays the text a text domain holds).
        data = read_table_arg(args.data, "--data", column_types=release.schema.csv_types(),
                              **csv_options(args))
    card = release.report(data, audit=args.audit, n_queries=args.queries,
                          n_targets=args.targets, rounds=args.rounds, seed=args.seed)
    card.write(args.output, overwrite=args.force)
    print(f"card written to {args.output} in {time.perf_counter() - started:.1f} s")
    return 0


def add_card_size_arguments(parser: argparse.ArgumentParser) -> None:
    """The card's sizes: sampled queries and the audits' targets and rounds."""
    parser.add_argument("--queries", type=int, default=CARD_QUERIES, metavar="N",
                        help=f"queries sampled for the accuracy section (default {CARD_QUERIES})")
    parser.add_argument("--targets", type=int, default=CARD_TARGETS, metavar="N",
                        help="--audit: records the attribute audit attacks, and candidates "
                             f"per presence-audit round (default {CARD_TARGETS})")
    parser.add_argument("--rounds", type=int, default=CARD_ROUNDS, metavar="R",
                        help=f"--audit: presence-audit rounds (default {CARD_ROUNDS})")


def add_parser(sub: Any) -> None:
    rep = sub.add_parser(
        "report", help="write a release's card: one HTML page to read before signing it off",
        description="Write a release's card: one self-contained HTML page (no network, no "
                    "script; plots inline) with what was released (mechanism, parameters "
                    "with their paper names, seed policy, schema, content digest), who is "
                    "protected (each guarantee claim, and for αβ and FRAPP each adversary's "
                    "posterior over priors), how accurate the estimates are (with --data: "
                    "sampled queries beside their true counts), what an attacker gets "
                    "(--audit) and what `privpub plan` offers instead. It prints on A4.\n\n"
                    + EXAMPLES, formatter_class=ExampleFormatter)
    rep.add_argument("release", metavar="RELEASE",
                     help="the release: a Parquet file, a Dask release's directory, or a graph "
                          "answer's JSON file")
    rep.add_argument("--data", metavar="TABLE", default=None,
                     help="the table the release was made from (CSV, Parquet, …; '-' reads "
                          "CSV from standard input): adds true counts and coverage")
    add_csv_arguments(rep)
    rep.add_argument("--audit", action="store_true",
                     help="run the attribute and presence audits (needs --data)")
    add_card_size_arguments(rep)
    rep.add_argument("--seed", type=int, default=0,
                     help="seed of the sampled queries and the audits (default 0: the same "
                          "card each time)")
    rep.add_argument("--output", "--out", dest="output", metavar="FILE.html", required=True,
                     help="the card's file (new unless --force)")
    add_force_argument(rep)
    add_trust_argument(rep)
    rep.set_defaults(run=_report)
