"""The ``privpub`` command: one module per subcommand (or family of them),
each adding its parser and a function from parsed arguments to an exit code.
Errors the library raises for bad input, and a feature's missing extra, are one
line on stderr and exit 1."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
import warnings
from typing import Any

from privpub import __version__
from privpub.cli import (
    attack,
    bench,
    demo,
    experiments,
    keygen,
    plan,
    publish,
    release,
    report,
    splu,
)

EXAMPLES = """examples:
  privpub demo
  privpub plan --input adult.csv
  privpub publish alphabeta --input adult.csv --output view.parquet --duplicates records
  privpub inspect view.parquet
  privpub report view.parquet --data adult.csv --output card.html
  privpub estimate view.parquet "age > 50" --format json
  privpub attack view.parquet --data adult.csv --secret sex
  privpub experiments adult-alphabeta --out exp
  privpub bench --quick

`privpub COMMAND --help` shows each command's options and examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privpub",
        description="Privacy-preserving data publishing and query answering "
                    "(alpha-beta, relationship privacy, SPLU, reconstruction attacks).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"privpub {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.add_parser(sub)
    plan.add_parser(sub)
    publish.add_parser(sub)
    release.add_parsers(sub)
    report.add_parser(sub)
    splu.add_parser(sub)
    attack.add_parser(sub)
    experiments.add_parser(sub)
    bench.add_parser(sub)
    keygen.add_parser(sub)
    return parser


def _origin(exc: OSError) -> str:
    """Where an OSError that names no file was raised (" at module.py:line in
    function"), so that a report of, say, a bad file descriptor says whose it was."""
    if exc.filename is not None or exc.__traceback__ is None:
        return ""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f" (at {os.path.basename(frame.filename)}:{frame.lineno} in {frame.name})"


def _one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
              file: Any = None, line: str | None = None) -> None:
    """A warning the command did not say itself, as one line on stderr."""
    from privpub.core.errors import printable

    text = " ".join(printable(str(message)).split())
    print(f"privpub: warning: {text}", file=sys.stderr if file is None else file)


def console() -> int:
    """The ``privpub`` command (and ``python -m privpub``): :func:`main`, in a
    process that exits when it returns."""
    return main(exiting=True)


def main(argv: list[str] | None = None, exiting: bool = False) -> int:
    """Run the command line ``argv``; its exit status. ``exiting``: the
    process exits next, so a stopping signal after the command's work is
    ignored (see :func:`privpub.core.signals.stopping`)."""
    parser = build_parser()
    # Queries may follow options (estimate R --format csv "a > 1"): argparse gives the
    # positionals after an option back as unknown, so they join the command's queries.
    args, extra = parser.parse_known_args(argv)
    if extra and isinstance(getattr(args, "query", None), list) \
            and not any(e.startswith("-") for e in extra):
        args.query += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 2
    from privpub.core.errors import PrivpubError, printable
    from privpub.core.optional import MissingExtraError
    from privpub.core.signals import Terminated, stopping

    shown = warnings.showwarning
    warnings.showwarning = _one_line  # a user reads the warning, not a source line of ours
    try:
        with stopping(exiting):
            return args.run(args)
    except BrokenPipeError:  # the reader went away (`privpub inspect … | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (PrivpubError, MissingExtraError) as exc:  # the latter names the extra to install
        print(f"privpub: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"privpub: error: {type(exc).__name__}: {printable(str(exc))}{_origin(exc)}",
              file=sys.stderr)
        return 1
    except Terminated:
        print("privpub: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("privpub: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = shown
