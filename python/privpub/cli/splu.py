"""``privpub splu estimate``: counts from a SPLU-Gen release, with their uncertainty.

Deprecated: ``privpub estimate`` serves every release kind (on SPLU-Gen, a
condition ``P AND s = 'value'``); this alias stays for its reconstruction
options (``--method``, ``--stopping``) and prints a one-line notice."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import FORMATS, ExampleFormatter, add_trust_argument, emit, notes_in_rows
from privpub.core.estimate import LEVEL, check_level


def _splu_estimate(args: argparse.Namespace) -> int:
    import sys

    from privpub import PublishedView
    from privpub.core.errors import ParameterError
    from privpub.splu import ReconstructionWarning

    print("privpub: note: `privpub splu estimate` is deprecated; use `privpub estimate RELEASE "
          "\"P AND s = 'value'\"` (the same estimates, every release kind)", file=sys.stderr)
    level = check_level(args.level)
    view = PublishedView.open(args.view, trust=args.trust)
    values = {}
    for spec in args.value or []:
        name, sep, value = spec.partition("=")
        if not sep or not name:
            raise ParameterError(f"--value takes ATTRIBUTE=VALUE, got {spec!r}")
        # The domain value written as this text (so "2" finds an integer 2).
        attr = view.schema[name] if name in view.schema.names else None
        domain = [] if attr is None else attr.values
        values[name] = next((v for v in domain if str(v) == value), value)
    if not values:
        raise ParameterError("give at least one --value ATTRIBUTE=VALUE (a sensitive value)")
    with notes_in_rows(ReconstructionWarning):
        rows = _rows(view, args, values, level)
    if args.format == "table":
        for row in rows:
            print(f"{row['query']} ≈ {_show(row['value'])} ± {_show(row['stderr'])} (stderr, "
                  f"{row['method']}); {level:.0%} interval [{row['lo']:,.0f}, "
                  f"{row['hi']:,.0f}] (what the release determines, for any data); "
                  f"published {row['observed']:,.0f}")
            if row["method"] != "mle":
                print(f"  value ± z·stderr = [{_show(row['model_lo'])}, "
                      f"{_show(row['model_hi'])}] holds only if {row['assumption']}")
                state = "converged" if row["converged"] else "stopped at the cap"
                print(f"  EM: {state} after {row['iterations']:,} iterations "
                      f"(--stopping {args.stopping})")
            for note in row["notes"]:
                print(f"  note: {note}")
        return 0
    if args.format == "csv":  # one cell per field: the notes joined
        rows = [{**row, "notes": " | ".join(row["notes"])} for row in rows]
    emit(rows, args.format)
    return 0


def _rows(view: Any, args: argparse.Namespace, values: dict, level: float) -> list[dict]:
    from privpub.core.errors import ParameterError
    from privpub.splu import reconstruct_many, sensitive_counts

    if args.where is None and len(values) == 1 and args.method is None:
        (name, value), = values.items()
        batch = sensitive_counts(view, name)
        rows = [r for r, v in zip(batch.to_records(level), batch.details["values"],
                                  strict=True) if v[name] == value]
        if not rows:
            raise ParameterError(f"value {value!r} is not in the domain of {name!r}")
    else:
        rows = reconstruct_many(view, [(args.where, values)], method=args.method or "paper",
                                stopping=args.stopping).to_records(level)
    return rows


def _show(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.1f}"


EXAMPLES = """examples:
  privpub publish splu --input adult.csv --group-size 5 --sensitive occupation \\
      --output adult-splu.parquet
  privpub splu estimate adult-splu.parquet --value occupation=Sales
  privpub splu estimate adult-splu.parquet --where "sex = 'Male'" --value occupation=Adm-clerical
  privpub splu estimate adult-splu.parquet --where "sex = 'Male'" --value occupation=Sales \\
      --format json
"""


def add_parser(sub: Any) -> None:
    splu = sub.add_parser(
        "splu", help="(deprecated: use `privpub estimate`) SPLU-Gen reconstruction options",
        description="Counts from a SPLU-Gen release (small-sum privacy, large-sum utility); "
                    "publish one with `privpub publish splu`.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    splu_sub = splu.add_subparsers(dest="splu_command", metavar="ACTION", required=True)
    se = splu_sub.add_parser(
        "estimate", help="estimate a count from a SPLU-Gen release",
        description="Estimate a count of records with given sensitive values (and, with "
                    "--where, given other attributes) from a SPLU-Gen release: the MLE for one "
                    "value over all records, else the chosen reconstruction. Each estimate "
                    "comes with its standard error, the interval the release determines "
                    "(covers the true count for any data at --level; wide for counts with a "
                    "predicate) and notes when it needs care.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    se.add_argument("view", help="the release's Parquet file")
    add_trust_argument(se)
    se.add_argument("--where", default=None,
                    help="SQL WHERE text on non-sensitive attributes (default: all records)")
    se.add_argument("--value", action="append", metavar="ATTRIBUTE=VALUE",
                    help="a sensitive attribute's value (repeatable)")
    se.add_argument("--method", choices=["paper", "exact-rate", "partition"], default=None,
                    help="reconstruction (see privpub.splu.reconstruction; default: paper, and "
                         "for one value over all records its published count, the MLE)")
    se.add_argument("--stopping", choices=["count", "paper"], default="count",
                    help="the EM's stopping rule: the requested count's fixed point (count, "
                         "default) or the paper's 1%% rule, for reproductions")
    se.add_argument("--level", type=float, default=LEVEL,
                    help="confidence level of the intervals (default %(default)s)")
    se.add_argument("--format", choices=FORMATS, default="table",
                    help="output: an aligned text block, JSON or CSV (default: table)")
    se.set_defaults(run=_splu_estimate)
