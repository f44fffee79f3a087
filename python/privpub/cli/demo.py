"""``privpub demo``: the αβ algorithm on the embedded Adult census data."""

from __future__ import annotations

import argparse
import time
from typing import Any

from privpub.alphabeta.accounting import CALIBRATIONS
from privpub.cli.common import (
    ExampleFormatter,
    add_force_argument,
    add_privacy_arguments,
    add_seed_argument,
    check_output,
)
from privpub.cli.publish import CALIBRATION_HELP
from privpub.core.capabilities import record_facts_of
from privpub.core.optional import progress_bar
from privpub.report.card import HTML_SUFFIXES

DEMO_QUERIES = (
    {"sex": "Female"},
    {"salary": ">50K"},
    {"education": "Bachelors", "sex": "Male"},
    {"marital-status": "Never-married", "salary": "<=50K"},
    {"race": "White", "sex": "Female", "salary": ">50K"},
    {"occupation": "Exec-managerial", "education": "Masters", "salary": ">50K"},
)


def _demo(args: argparse.Namespace) -> int:
    import pandas as pd

    from privpub import AlphaBeta
    from privpub.datasets import load_adult

    if args.output:
        check_output(args.output, args.force, option="--output")
    if args.card:
        check_output(args.card, args.force, suffix=HTML_SUFFIXES, option="--card")
    if args.audit and not args.card:
        from privpub.core.errors import ParameterError

        raise ParameterError("--audit adds the audits to the card: give --card FILE.html")
    with progress_bar(total=3, desc="demo", unit="step") as bar:
        df, schema = load_adult(args.split)
        bar.update()
        mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=args.gamma, k=args.k,
                                     failure_probability=args.failure_probability,
                                     calibration=args.calibration)
        view = mech.publish(df, seed=args.seed, duplicates=args.duplicates)
        bar.update()
        # The truth counts what the release counts (view.counts): distinct tuples
        # under --duplicates set, records otherwise; records are shown beside them.
        distinct = view.counts == "distinct tuples"
        rows = []
        for where in DEMO_QUERIES:
            est = view.estimate(where)
            match = (df[list(where)] == pd.Series(where)).all(axis=1)
            row = {"query": " and ".join(f"{k} = {v!r}" for k, v in where.items()),
                   f"true Q(I), {est.counts}": int(df[match].drop_duplicates().shape[0]
                                                   if distinct else match.sum()),
                   "estimate": round(est.value, 1), "stderr": round(est.stderr, 1),
                   "n_V": est.n_view}
            if distinct:
                row["records (not estimated)"] = int(match.sum())
            rows.append(row)
        bar.update()
    print(f"Adult ({args.split}): n = {len(df):,} records without missing values "
          f"({df.attrs['dropped_missing']:,} left out), m = {schema.size:,}")
    print(schema)
    print()
    records = record_facts_of(view.mechanism_object())
    distinct = len(df.drop_duplicates())
    print(f"Adult repeats {len(df) - distinct:,} records beyond {distinct:,} distinct tuples; "
          f"--duplicates {args.duplicates}: " + (
              "published as a set, estimates count distinct tuples (--duplicates records "
              "counts records, and the guarantee then leaves the repeated tuples out)"
              if args.duplicates == "set" else
              f"every record kept, estimates count records; the {records['repeated_tuples']:,} "
              "repeated tuples are not protected (--duplicates set protects every tuple)"))
    print()
    print(view.guarantee())
    print()
    print(f"published view: {len(view):,} rows; randomness: {view.seed_policy}")
    print()
    print(f"estimated counts of {view.counts} (Algorithm 3: (n_V − β n_D)/α) next to the "
          f"true counts of {view.counts}" + (
              "; the records column is what df.query(...) counts, which a set release "
              "does not estimate:" if distinct else ":"))
    print(pd.DataFrame(rows).to_string(index=False))
    if args.output:
        view.to_parquet(args.output, overwrite=args.force)
        print(f"\nview written to {args.output}")
    if args.card:
        started = time.perf_counter()
        view.report(df, audit=args.audit, seed=0 if args.seed is None else args.seed
                    ).write(args.card, overwrite=args.force)
        print(f"\ncard written to {args.card} in {time.perf_counter() - started:.1f} s")
    return 0


def add_parser(sub: Any) -> None:
    demo = sub.add_parser(
        "demo", help="publish the embedded Adult census data with the αβ algorithm",
        description="Publish the embedded UCI Adult data (30,162 records, 9 attributes, "
                    "m = 648,023,040) with the αβ algorithm at (k·n/m, γ)-privacy, print the "
                    "guarantee, the view's size and a few estimated counts next to the truth."
                    "\n\nexamples:\n  privpub demo\n  privpub demo --seed 1 --duplicates records"
                    "\n  privpub demo --gamma 0.5 --k 5 --output adult-view.parquet"
                    "\n  privpub demo --seed 1 --card adult-card.html --audit",
        formatter_class=ExampleFormatter)
    demo.add_argument("--split", choices=["train", "test"], default="train",
                      help="which Adult file to use (default: train = adult.data)")
    add_privacy_arguments(demo)
    add_seed_argument(demo)
    demo.add_argument("--calibration", choices=CALIBRATIONS, default="exclusive",
                      help=CALIBRATION_HELP)
    demo.add_argument("--duplicates", choices=["set", "records"], default="set",
                      help="Adult repeats tuples: 'set' publishes distinct tuples with the "
                           "full guarantee (default), 'records' keeps every record (the "
                           "guarantee then leaves the repeated tuples out)")
    demo.add_argument("--output", "--out", dest="output", metavar="FILE.parquet", default=None,
                      help="also write the view to this Parquet file (new unless --force)")
    demo.add_argument("--card", metavar="FILE.html", default=None,
                      help="also write the view's card (privpub report) with the data's true "
                           "counts to this HTML file (new unless --force)")
    demo.add_argument("--audit", action="store_true",
                      help="--card: add the attribute and presence audits (bounded, seconds)")
    add_force_argument(demo)
    demo.set_defaults(run=_demo)
