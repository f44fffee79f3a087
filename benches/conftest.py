"""Shared set-up for the pytest-benchmark suites in benches/.

- Collects ``bench_*.py`` (pytest's default pattern only finds ``test_*.py``), so a
  plain ``pytest`` run executes every benchmark once as a test (benchmarks are
  disabled by default in pyproject.toml) and ``--benchmark-enable`` times them.
- ``full_size(config)`` (importable: ``from conftest import full_size``) is True when
  benchmarks are enabled, unless ``PRIVPUB_BENCH_QUICK`` is set (``privpub bench
  --quick``: timed, at the small sizes).
- The ``bench_rows(full, small)`` fixture gives a problem size: ``PRIVPUB_BENCH_ROWS``
  if set, else ``full`` when benchmarks are enabled and ``small`` otherwise.
- ``bench_report`` collects lines (ratios of privpub to its baseline) printed in
  the terminal summary at the end of the session; benchmarks tagged with
  ``benchmark.extra_info["role"] = "privpub" | "baseline"`` get a row of a
  markdown table there: each side's median and the ratio baseline / privpub
  (above 1: privpub is faster). With ``PRIVPUB_BENCH_REPORT=FILE`` the table and
  the lines are also written to FILE (the README's performance section is one):
  a new file, or one replaced with ``PRIVPUB_BENCH_OVERWRITE=1``.
- The suites run in one process whatever ``-n`` says (the tests' configuration
  runs them on every core with pytest-xdist, under which pytest-benchmark
  times nothing).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from privpub.core.files import write_text

_REPORT: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """No pytest-xdist workers (before xdist reads ``-n``): one process times."""
    if hasattr(config.option, "numprocesses"):
        config.option.numprocesses = 0


def pytest_collect_file(file_path, parent):
    if (file_path.suffix == ".py" and file_path.name.startswith("bench_")
            and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def benchmarks_enabled(config: pytest.Config) -> bool:
    """True when pytest-benchmark times (--benchmark-enable, or no --benchmark-disable)."""
    return bool(config.getoption("benchmark_enable", False)
                or not config.getoption("benchmark_disable", False))


def full_size(config: pytest.Config) -> bool:
    """Whether a benchmark should run at full size: when benchmarks are enabled
    and not asked to be quick."""
    return benchmarks_enabled(config) and not os.environ.get("PRIVPUB_BENCH_QUICK")


def best_of_interleaved(sides: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Each side's best time in seconds over ``rounds`` rounds that run every
    side in turn, so machine noise hits all alike. A side's result is freed
    before the next side runs (outputs of 800 MB must not overlap)."""
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(rounds):
        for label, run in sides.items():
            t0 = time.perf_counter()
            out = run()
            best[label] = min(best[label], time.perf_counter() - t0)
            del out
    return best


def interleaved_rounds(config) -> int:
    """Rounds of :func:`best_of_interleaved`: 7 at full size, 1 in a smoke run."""
    return 7 if full_size(config) else 1


def against_baseline(sides: dict[str, Callable[[], object]], baseline: str,
                     config) -> tuple[int, float, str]:
    """The sides timed interleaved: (rounds, the baseline's best time in
    seconds, each other side as "label N ms (baseline / side x)")."""
    rounds = interleaved_rounds(config)
    best = best_of_interleaved(sides, rounds)
    base = best[baseline]
    parts = "; ".join(f"{label} {best[label] * 1e3:.0f} ms ({base / best[label]:.2f}x)"
                      for label in sides if label != baseline)
    return rounds, base, parts


@pytest.fixture(scope="session")
def bench_rows(request):
    def rows(full: int, small: int) -> int:
        env = os.environ.get("PRIVPUB_BENCH_ROWS")
        if env:
            return int(env.replace("_", ""))
        return full if full_size(request.config) else small
    return rows


@pytest.fixture(scope="session")
def bench_report():
    return _REPORT


def _role_table(config: pytest.Config) -> list[str]:
    """A markdown table: for each group whose benchmarks are tagged
    ``benchmark.extra_info["role"] = "privpub" | "baseline"``, both medians and
    the ratio baseline / privpub."""
    session = getattr(config, "_benchmarksession", None)
    if session is None or session.disabled:
        return []
    groups: dict[str, dict[str, float]] = {}
    for bench in session.benchmarks:
        role = bench.extra_info.get("role")
        if role:
            groups.setdefault(bench.group, {})[role] = bench.stats.median
    rows = [f"| {group} | {_ms(r['privpub'])} | {_ms(r['baseline'])} | "
            f"{r['baseline'] / r['privpub']:.3g}× |"
            for group, r in sorted(groups.items()) if {"privpub", "baseline"} <= r.keys()]
    if not rows:
        return []
    return ["| operation | privpub (median) | baseline (median) | baseline / privpub |",
            "|---|---|---|---|", *rows]


def _ms(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.0f} µs"
    return f"{seconds * 1e3:,.1f} ms" if seconds < 10 else f"{seconds:,.2f} s"


def pytest_terminal_summary(terminalreporter, config):
    lines = _role_table(config) + ([""] if _REPORT else []) + _REPORT
    if lines:
        terminalreporter.section("privpub benchmarks: privpub vs baseline")
        for line in lines:
            terminalreporter.write_line(line)
        path = os.environ.get("PRIVPUB_BENCH_REPORT")
        if path:  # whole or not at all; replaced only when `privpub bench --force` said so
            write_text(path, "\n".join(lines) + "\n",
                       overwrite=bool(os.environ.get("PRIVPUB_BENCH_OVERWRITE")))
