"""The ``privpub`` command.

Subcommands arrive with the features they run; each one is a small function
taking parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import sys
import time

from privpub import __version__


def _demo(args: argparse.Namespace) -> int:
    from privpub.datasets import load_adult

    start = time.perf_counter()
    df, schema = load_adult(args.split)
    print(f"Adult ({args.split}): {len(df):,} records without missing values "
          f"({df.attrs['dropped_missing']:,} left out)")
    print(schema)
    codes = schema.encode(df)
    distinct = len(set(codes.tolist()))
    print(f"domain size m = {schema.size:,}; {distinct:,} distinct tuples; "
          f"n/m = {len(df) / schema.size:.3g}")
    print(f"loaded and encoded in {time.perf_counter() - start:.2f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privpub",
        description="Privacy-preserving data publishing and query answering "
                    "(alpha-beta, relationship privacy, SPLU, reconstruction attacks).",
    )
    parser.add_argument("--version", action="version", version=f"privpub {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run the main demo on the embedded Adult census data",
                          description="Load the embedded UCI Adult data (30,162 records, "
                                      "9 attributes) and show its schema and domain size.")
    demo.add_argument("--split", choices=["train", "test"], default="train",
                      help="which Adult file to use (default: train = adult.data)")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from privpub.errors import PrivpubError

    try:
        return args.run(args)
    except PrivpubError as exc:
        print(f"privpub: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
