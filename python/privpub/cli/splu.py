"""``privpub splu estimate``: counts from a SPLU-Gen release."""

from __future__ import annotations

import argparse
from typing import Any

from privpub.cli.common import ExampleFormatter


def _splu_estimate(args: argparse.Namespace) -> int:
    from privpub import PublishedView
    from privpub.core.errors import ParameterError
    from privpub.splu import reconstruct_many, sensitive_counts

    view = PublishedView.open(args.view)
    values = {}
    for spec in args.value or []:
        name, sep, value = spec.partition("=")
        if not sep or not name:
            raise ParameterError(f"--value takes ATTRIBUTE=VALUE, got {spec!r}")
        # The domain value written as this text (so "2" finds an integer 2).
        attr = view.schema[name] if name in view.schema.names else None
        domain = [] if attr is None else getattr(attr, "values", None) or range(
            attr.offset, attr.offset + attr.size)
        values[name] = next((v for v in domain if str(v) == value), value)
    if not values:
        raise ParameterError("give at least one --value ATTRIBUTE=VALUE (a sensitive value)")
    if args.where is None and len(values) == 1:
        (name, value), = values.items()
        frame = sensitive_counts(view, name)
        row = frame[frame[name] == value]
        if row.empty:
            raise ParameterError(f"value {value!r} is not in the domain of {name!r}")
        print(f"count({name} = {value!r}) ≈ {row['estimate'].iloc[0]:,.0f} ± "
              f"{row['stderr'].iloc[0]:,.1f} (stderr; f' is the MLE)")
        return 0
    r = reconstruct_many(view, [(args.where, values)], method=args.method)
    note = "" if r.converged[0] else f" (stopped at {r.iterations[0]} iterations)"
    print(f"count({args.where or 'TRUE'} and {values}) ≈ {r.estimate[0]:,.1f} "
          f"[{args.method}; published {r.observed[0]:,.0f}]{note}")
    return 0


EXAMPLES = """examples:
  privpub publish splu --input adult.csv --gamma 5 --sensitive occupation \\
      --output adult-splu.parquet
  privpub splu estimate adult-splu.parquet --value occupation=Sales
  privpub splu estimate adult-splu.parquet --where "sex = 'Male'" --value occupation=Adm-clerical
"""


def add_parser(sub: Any) -> None:
    splu = sub.add_parser(
        "splu", help="estimate counts from a SPLU-Gen release",
        description="Counts from a SPLU-Gen release (small-sum privacy, large-sum utility); "
                    "publish one with `privpub publish splu`.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    splu_sub = splu.add_subparsers(dest="splu_command", metavar="ACTION", required=True)
    se = splu_sub.add_parser(
        "estimate", help="estimate a count from a SPLU-Gen release",
        description="Estimate a count of records with given sensitive values (and, with "
                    "--where, given other attributes) from a SPLU-Gen release: the MLE for one "
                    "value over all records, else the chosen reconstruction.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    se.add_argument("view", help="the release's Parquet file")
    se.add_argument("--where", default=None,
                    help="SQL WHERE text on non-sensitive attributes (default: all records)")
    se.add_argument("--value", action="append", metavar="ATTRIBUTE=VALUE",
                    help="a sensitive attribute's value (repeatable)")
    se.add_argument("--method", choices=["paper", "exact-rate", "partition"], default="paper",
                    help="reconstruction (see privpub.splu.reconstruction; default: paper)")
    se.set_defaults(run=_splu_estimate)
