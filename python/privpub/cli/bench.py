"""``privpub bench``: every hot loop against its baseline, as a markdown table.

The benchmarks live in the source tree's ``benches/`` (pytest-benchmark
suites, each privpub kernel beside the best numpy/pandas/pyarrow version we
could write, timed in the same run); this command runs them and writes the
table of medians and ratios that ``benches/conftest.py`` assembles. They are
not installed with the wheel, so the command needs a checkout (or --benches).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from privpub.cli.common import ExampleFormatter, add_force_argument, check_output, note

#: Suites run only when --only names them (benches/bench_cost_curves.py: an hour or more).
SEPARATE = ("cost_curves",)

EXAMPLES = """examples:
  privpub bench --quick                      # small sizes, a minute or two: a smoke run
  privpub bench --output bench.md               # full sizes (10^8 noise tuples, 10M rows …)
  privpub bench --quick --output bench.md --force  # replace an existing table
  privpub bench --only beta_step,encode --output bench.md
"""


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(
        "bench", help="time each hot loop against its numpy/pandas baseline",
        description="Run the benchmark suites in benches/ (pytest-benchmark; needs the test "
                    "extra: pip install '.[test]'), each privpub kernel next to the best "
                    "baseline a capable numpy/pandas/pyarrow user would write, in the same run, "
                    "and write a markdown table of medians and ratios (baseline / privpub: "
                    "above 1× privpub is faster). Timings on a loaded machine are noisy; the "
                    "ratios less so, as both sides run in turn.\n\n" + EXAMPLES,
        formatter_class=ExampleFormatter)
    bench.add_argument("--quick", action="store_true",
                       help="the small problem sizes the test suite uses, few rounds")
    bench.add_argument("--output", "--out", dest="output", metavar="FILE.md", default="bench.md",
                       help="where to write the table (default bench.md; new unless --force)")
    add_force_argument(bench)
    bench.add_argument("--only", metavar="NAME[,NAME]",
                       help="suites to run, by the part of their file name after bench_ "
                            "(default: all but the cost curves, an hour of their own: "
                            "--only cost_curves, or benches/cost_curves.py)")
    bench.add_argument("--benches", metavar="DIR",
                       help="the benches/ directory (default: ./benches, else the one beside "
                            "the installed package's source)")
    bench.set_defaults(run=_bench)


def _benches_dir(given: str | None) -> Path:
    from privpub.core.errors import ParameterError

    candidates = [Path(given)] if given else [
        Path("benches"), Path(__file__).resolve().parents[3] / "benches"]
    for path in candidates:
        if (path / "conftest.py").is_file():
            return path
    raise ParameterError("no benches/ directory (with its conftest.py) at "
                         f"{', '.join(map(str, candidates))}: the benchmarks ship with the "
                         "source, not the wheel; run from a checkout or pass --benches DIR")


def _bench(args: argparse.Namespace) -> int:
    from privpub.core.errors import ParameterError

    try:
        import pytest_benchmark  # noqa: F401 (only its presence is checked)
    except ImportError:
        raise ParameterError("privpub bench needs pytest-benchmark: pip install "
                             "'privpub[test]' (or '.[test]' in a checkout)") from None
    benches = _benches_dir(args.benches)
    files = sorted(benches.glob("bench_*.py"))
    if not args.only:  # the cost curves run each call up to 10^7 records: asked for by name
        files = [f for f in files if f.stem.removeprefix("bench_") not in SEPARATE]
    else:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if not (benches / f"bench_{w}.py").is_file()]
        if unknown:
            known = ", ".join(f.stem.removeprefix("bench_") for f in files)
            raise ParameterError(f"--only names {unknown}, not suites in {benches} "
                                 f"(suites: {known})")
        files = [benches / f"bench_{w}.py" for w in wanted]
    check_output(args.output, args.force, suffix=".md", option="--output")
    out = Path(args.output).resolve()
    # The suites' conftest writes the table (through privpub.core.files, as --force says).
    # A session of its own: run from a pytest-xdist worker (the test suite), the
    # inherited PYTEST_XDIST_* variables would make pytest-benchmark time nothing.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env |= {"PRIVPUB_BENCH_REPORT": str(out),
            "PRIVPUB_BENCH_OVERWRITE": "1" if args.force else ""}
    command = [sys.executable, "-m", "pytest", *map(str, files), "-q", "-p", "no:cacheprovider",
               "--benchmark-enable", "--benchmark-columns=median,rounds",
               f"--rootdir={benches.parent}",
               # The suites time weak releases and stopped iterations on purpose: their
               # warnings are shown, not raised (the test run makes them errors), as CI does.
               "-W", "default"]
    if args.quick:
        env["PRIVPUB_BENCH_QUICK"] = "1"
        command += ["--benchmark-min-rounds=3", "--benchmark-max-time=0.1",
                    "--benchmark-warmup=off"]
    note(f"running {len(files)} suite(s) from {benches}" + (" at small sizes" if args.quick
                                                              else " at full size"))
    done = subprocess.run(command, env=env, check=False)
    if done.returncode != 0:
        raise ParameterError(f"the benchmarks failed (pytest exit code {done.returncode}); "
                             "see the output above")
    if not out.is_file():
        raise ParameterError(f"the benchmarks ran but wrote no table to {out}")
    print(out.read_text(encoding="utf-8"), end="")
    note(f"table written to {out}")
    return 0
