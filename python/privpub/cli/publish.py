"""``privpub publish alphabeta|frapp|splu``: a table file in, a release file out."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from privpub.alphabeta.accounting import CALIBRATIONS
from privpub.cli.common import (
    ExampleFormatter,
    add_force_argument,
    add_input_arguments,
    add_privacy_arguments,
    add_renamed_flag,
    add_seed_argument,
    add_sign_argument,
    check_output,
    confirm,
    note,
    prior_request,
    progress,
    read_input,
    table_schema,
    warn_if_seeded,
)
from privpub.cli.plan import report_weak_usefulness
from privpub.core.errors import UsefulnessWarning
from privpub.core.signing import fingerprint, public_key_path, signing_key

CALIBRATION_HELP = ("how α, β are chosen for (d, γ): 'exclusive' (default) also stops "
                    "positive leakage to d-exclusive (link-attack) adversaries; 'independent' "
                    "gives smaller errors against d-independent adversaries only; 'sec4.2' "
                    "and 'half' reproduce the paper's choices")
DUPLICATES_HELP = ("required when the table repeats a tuple: 'set' publishes distinct tuples "
                   "with the full guarantee (d = k·n/m is calibrated for every record given, "
                   "as the library's for_privacy(n=len(table)) is: a larger d, the more "
                   "cautious choice; the release states n as the tuples it publishes), "
                   "'records' keeps every record (the guarantee then leaves the repeated tuples "
                   "out)")
WRITES = ("The release is written beside --output with no name (Linux; elsewhere a hidden "
          "temporary name), checked, and put in place only when whole: an interrupted or "
          "killed run (Ctrl-C, SIGTERM, SIGKILL) leaves an earlier file as it was. An "
          "existing --output is refused unless --force; an input is never overwritten. "
          "--output - writes the Parquet bytes to standard "
          "output once the release is whole (built in $TMPDIR), and everything else to "
          "standard error.")
#: Views expected past this many rows are written only after a yes.
CONFIRM_ROWS = 10_000_000

ALPHABETA_EXAMPLES = """examples:
  privpub publish alphabeta --input adult.csv --output view.parquet --duplicates records
  privpub publish alphabeta --input adult.parquet --output view.parquet --k 10 --gamma 0.2 \\
      --schema adult-schema.yaml --duplicates set
  privpub publish alphabeta --input people.tsv --sep '\\t' --columns age,sex,zip --output v.parquet
  privpub publish alphabeta --input people-latin1.csv --encoding latin-1 --output v.parquet \\
      --duplicates set
  privpub publish alphabeta --input adult.csv --output view.parquet --duplicates set --force
  privpub publish alphabeta --input adult.csv --output view.parquet --duplicates set \\
      --epsilon 4 --gamma 0.2
  cat adult.csv | privpub publish alphabeta --input - --output view.parquet --duplicates set
  privpub publish alphabeta --input adult.csv --output - --duplicates set | aws s3 cp - s3://b/v
"""
FRAPP_EXAMPLES = """examples:
  privpub publish frapp --input adult.csv --output frapp.parquet --duplicates records
  privpub publish frapp --input adult.parquet --output frapp.parquet --k 5 --gamma 0.5 \\
      --duplicates set --seed 1
  privpub estimate frapp.parquet "age > 50" --format json
"""
SPLU_EXAMPLES = """examples:
  privpub publish splu --input adult.csv --output splu.parquet --group-size 5 \\
      --sensitive occupation
  privpub publish splu --input adult.csv --output splu.parquet --group-size 3 \\
      --sensitive occupation,salary --force
  privpub estimate splu.parquet "sex = 'Male' AND occupation = 'Sales'" --format json
"""
EXAMPLES = "\n".join((ALPHABETA_EXAMPLES, FRAPP_EXAMPLES.replace("examples:\n", ""),
                      SPLU_EXAMPLES.replace("examples:\n", "")))


def add_parser(sub: Any) -> None:
    pub = sub.add_parser(
        "publish", help="publish a table file with αβ, FRAPP or SPLU-Gen",
        description="Publish a CSV/TSV or Parquet table and write the release (rows plus "
                    "everything needed to estimate from it and to check it) to Parquet. "
                    "The guarantee is printed for the data actually published. " + WRITES
                    + "\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    kinds = pub.add_subparsers(dest="mechanism", metavar="MECHANISM", required=True)

    ab = kinds.add_parser(
        "alphabeta", help="the αβ algorithm at (k·n/m, γ)-privacy",
        description="Publish with the αβ algorithm (Rastogi, Suciu, Hong) at (d, γ)-privacy, "
                    "d = k·n/m. The view is drawn and written in bounded memory, with a "
                    "progress bar on a terminal. Views expected past "
                    f"{CONFIRM_ROWS:,} rows are written only after a yes (--yes). "
                    + WRITES + "\n\n" + ALPHABETA_EXAMPLES, formatter_class=ExampleFormatter)
    _common(ab, privacy=True)
    ab.add_argument("--calibration", choices=CALIBRATIONS, default="exclusive",
                    help=CALIBRATION_HELP)
    ab.add_argument("--yes", action="store_true",
                    help=f"write views expected past {CONFIRM_ROWS:,} rows without asking")
    ab.set_defaults(run=_alphabeta)

    fr = kinds.add_parser(
        "frapp", help="the FRAPP baseline at the same (k·n/m, γ)-privacy",
        description="Publish with FRAPP (gamma-diagonal perturbation), calibrated at "
                    "Definition 2.3's posterior for the same (d, γ) as αβ. " + WRITES
                    + "\n\n" + FRAPP_EXAMPLES,
        formatter_class=ExampleFormatter)
    _common(fr, privacy=True)
    fr.set_defaults(run=_frapp)

    sp = kinds.add_parser(
        "splu", help="SPLU-Gen: sensitive values randomised over decoy groups",
        description="Publish with SPLU-Gen (small-sum privacy, large-sum utility): each "
                    "record's sensitive value is redrawn over its decoy group of γ values. "
                    "Estimate from it with `privpub estimate`. " + WRITES + "\n\n"
                    + SPLU_EXAMPLES,
        formatter_class=ExampleFormatter)
    _common(sp)
    sp.add_argument("--group-size", type=int, required=True,
                    help="records per decoy group, the paper's γ ≥ 2")
    add_renamed_flag(sp, "--gamma", "--group-size",
                     "SPLU-Gen's decoy group size; --gamma is αβ's and FRAPP's posterior bound")
    sp.add_argument("--sensitive", required=True, metavar="A[,B]",
                    help="the sensitive attribute(s), comma-separated")
    sp.set_defaults(run=_splu)


def _common(parser: argparse.ArgumentParser, privacy: bool = False) -> None:
    """Input, output and seed; with ``privacy``, the (k, γ) request, the failure probability
    and --duplicates."""
    add_input_arguments(parser)
    parser.add_argument("--output", required=True, metavar="FILE.parquet",
                        help="the release's Parquet file (new unless --force; never the "
                             "input or the schema), or - for standard output")
    add_force_argument(parser)
    add_seed_argument(parser)
    add_sign_argument(parser)
    if privacy:
        add_privacy_arguments(parser, epsilon=True)
        parser.add_argument("--duplicates", choices=["set", "records"], default=None,
                            help=DUPLICATES_HELP)


def _alphabeta(args: argparse.Namespace) -> int:
    from privpub import AlphaBeta
    from privpub.core.errors import ParameterError
    from privpub.planning import expected_view_size

    destination = _destination(args)
    key = signing_key(args.sign)
    table = read_input(args, batched=True)
    schema = table_schema(args, table)
    mech = _calibrated(args, lambda: AlphaBeta.for_privacy(
        schema, n=table.num_rows, gamma=args.gamma, **prior_request(args),
        failure_probability=args.failure_probability, calibration=args.calibration))
    rows, size = expected_view_size(mech)
    note(f"α = {mech.alpha:.6g}, β = {mech.beta:.6g}: the view will hold about {rows:,.0f} "
         f"rows, about {_bytes(size)} of Parquet")
    if rows > CONFIRM_ROWS and not confirm(f"write about {rows:,.0f} rows to {_shown(args)}?",
                                           args.yes):
        raise ParameterError(f"the view would hold about {rows:,.0f} rows ({_bytes(size)}), "
                             f"past {CONFIRM_ROWS:,}: pass --yes to write it, or see "
                             "`privpub plan` for smaller choices (a larger γ or a smaller k)")
    warn_if_seeded(args.seed)
    with destination as path, progress("publish", "segment") as update, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", UsefulnessWarning)  # said below, as one block
        try:
            view = mech.publish_to_parquet(table.select(list(schema.names)), path,
                                           seed=args.seed, duplicates=args.duplicates,
                                           progress=update, overwrite=args.force,
                                           sign=key)
        except ParameterError as exc:
            raise ParameterError(str(exc).replace("duplicates='", "--duplicates '")) from None
    report_weak_usefulness(view, table, schema, args, args.calibration)
    return _done(view, args, key)


def _frapp(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError
    from privpub.frapp import FRAPP

    destination = _destination(args)
    key = signing_key(args.sign)
    table = read_input(args, batched=True)
    schema = table_schema(args, table)
    mech = _calibrated(args, lambda: FRAPP.for_privacy(
        schema, n=table.num_rows, gamma=args.gamma, **prior_request(args),
        failure_probability=args.failure_probability))
    warn_if_seeded(args.seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UsefulnessWarning)  # said below, as one block
            view = mech.publish(table.select(list(schema.names)), seed=args.seed,
                                duplicates=args.duplicates)
    except ParameterError as exc:
        raise ParameterError(str(exc).replace("duplicates='", "--duplicates '")) from None
    report_weak_usefulness(view, table, schema, args)
    with destination as path:
        view.to_parquet(path, overwrite=args.force, sign=key)
    return _done(view, args, key)


def _splu(args: argparse.Namespace) -> int:
    from privpub.core.errors import PrivacyWarning
    from privpub.splu import SPLUGen

    destination = _destination(args)
    key = signing_key(args.sign)
    table = read_input(args, batched=True)
    schema = table_schema(args, table)
    mech = SPLUGen(args.group_size, args.sensitive.split(","), schema=schema)
    warn_if_seeded(args.seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        view = mech.publish(table, seed=args.seed)
    for w in caught:
        if issubclass(w.category, UserWarning) and not issubclass(w.category, PrivacyWarning):
            note(str(w.message))
    with destination as path:
        view.to_parquet(path, overwrite=args.force, sign=key)
    return _done(view, args, key)


def _calibrated(args: argparse.Namespace, build: Callable[[], Any]) -> Any:
    """The mechanism for the request; a refusal points to `privpub plan`. With
    --epsilon, the k its d gives is kept in ``args.k`` (the alternatives a weak
    release's warning lists are near it)."""
    from privpub.core.errors import ParameterError

    request = ", ".join(f"--{name} {value:g}" for name, value in prior_request(args).items()
                        if value is not None)
    try:
        mech = build()
    except ParameterError as exc:
        raise ParameterError(f"{exc} ({request}, --gamma {args.gamma:g}); `privpub plan "
                             f"--input {args.input}` lists the choices this table "
                             "allows") from None
    if args.k is None:
        args.k = prior_request(args)["k"] or mech.d * mech.schema.size / mech.n
    if args.epsilon is not None:
        note(f"ε = {args.epsilon:g} at γ = {args.gamma:g} gives d = {mech.d:.6g} "
             f"(k = {args.k:.4g})")
    return mech


def _destination(args: argparse.Namespace) -> contextlib.AbstractContextManager[str]:
    """Where the release is written, checked before any work: --output itself,
    or for ``-`` a temporary file copied to standard output (:func:`_to_stdout`)."""
    from privpub.core.errors import ParameterError

    if args.output != "-":
        check_output(args.output, args.force, inputs=[args.input, args.schema])
        return contextlib.nullcontext(args.output)
    if sys.stdout.isatty():
        raise ParameterError("--output -: standard output is a terminal; redirect it "
                             "(> view.parquet) or pipe it to a program that reads Parquet")
    return _to_stdout()


@contextlib.contextmanager
def _to_stdout() -> Iterator[str]:
    """A file in a new temporary directory whose bytes are copied to standard
    output once the release in it is whole and checked (a reader of the pipe
    gets a release, or nothing if publishing fails); the directory is removed
    either way."""
    from privpub.core.temporaries import temporary_directory

    with temporary_directory(prefix="privpub-publish-") as work:
        path = os.path.join(work, "release.parquet")
        yield path
        sys.stdout.flush()
        with open(path, "rb") as release:
            shutil.copyfileobj(release, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()


def _shown(args: argparse.Namespace) -> str:
    return "standard output" if args.output == "-" else args.output


def _done(view: Any, args: argparse.Namespace, key: Any) -> int:
    """The guarantee, where the release went and who signed it (``key``): on
    standard output, unless the release itself went there."""
    out = sys.stderr if args.output == "-" else sys.stdout
    print(view.guarantee(), file=out)
    print(f"published {len(view):,} rows to {_shown(args)}", file=out)
    if key is not None:
        print(f"signed by {fingerprint(key)}", file=out)
    if args.output != "-":
        trust = "" if args.sign is None else \
            f" --trust {public_key_path(args.sign) or 'PUBLIC-KEY'}"
        print(f"check it with: privpub inspect {args.output}{trust}", file=sys.stderr)
    return 0


def _bytes(size: float) -> str:
    units, i = ("bytes", "KB", "MB", "GB", "TB"), 0
    while size >= 1000 and i < len(units) - 1:
        size, i = size / 1000, i + 1
    return f"{size:,.0f} bytes" if i == 0 else f"{size:,.1f} {units[i]}"
