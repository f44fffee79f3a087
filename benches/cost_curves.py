"""Cost curves: each call a user makes, against n, beside the non-private work (issue 36).

For each n (records of ``privpub.datasets.synthetic_census``, 8 attributes), every
call below runs in a fresh process, privpub's side and the baseline's side in turn;
the child times the call alone (imports, the input's load and any set-up are before
the clock starts) ``repeats`` times and reports each time, its RSS after the set-up
(the floor) and at the end (the peak, ``ru_maxrss``; ``/usr/bin/time -v`` when
present, as bench_view_io.py's ``run_child``). Reported: the median time.

=========  ==========================================  =========================================
call       privpub                                     baseline (non-private, same machine)
=========  ==========================================  =========================================
publish    ``privpub publish alphabeta --input         pyarrow: ``pq.read_table`` of the input,
           census.parquet --output view.parquet        ``pc.dictionary_encode`` of each column,
           --schema census.json --duplicates records   ``pq.write_table``: what a steward does to
           --yes --seed 1`` (the CLI's default         release the table without privacy (the
           calibration, k = 10, γ = 0.2,               same input and the same kind of output,
           ``exclusive``; public domains, as a         n rows where the view holds ~35 n)
           steward declares them; in-process through
           ``privpub.cli.main``)
write      ``view.to_parquet`` of the view read back   ``pq.write_table`` of the same columns
           (``PublishedView.read_parquet``)            (dictionary<int8, int64>: the view's
                                                       domain indices over its values), privpub's
                                                       row groups, 65,536 values a step
read       ``PublishedView.read_parquet(view)``        ``pq.read_table`` of the file the write
                                                       baseline wrote (the same dictionary
                                                       columns; a dense read of privpub's file
                                                       is int64, 22 GB at 10^7 records)
estimate   ``PublishedView.open(view).estimate(q)``    DuckDB ``count(*)`` with the same WHERE
           for a leading (gender), a middle            over the same file (``threads = 2``)
           (workclass) and a trailing (occupation)
           attribute query, each its own call
batch      ``open(view).estimate_many`` of 1,000       DuckDB: one ``GROUP BY`` over the file per
           distinct 1–3-attribute WHERE texts          attribute set the batch reads (92 sets),
                                                       then each count summed from its marginal
                                                       (0.6x the time of 1,000 counts one by one
                                                       and 0.17x one statement of 1,000
                                                       ``count(*) FILTER (WHERE q)``, measured on
                                                       the 10^5-record view)
card       ``open(view).report()`` (the release        DuckDB ``SUMMARIZE`` of the same file:
           card, no data, no audit)                    the non-private table's summary page
=========  ==========================================  =========================================

Both sides' counts are checked equal (the estimate's ``n_view`` against DuckDB's
count). One command, from a checkout::

    python benches/cost_curves.py --sizes 1e5,1e6,1e7 --json docs/cost_curves.json \\
        --plot docs/cost_curves.png --readme README.md

measures (``--json`` without ``--sizes`` re-reads a saved run), writes the JSON,
draws the log-log plot (time and peak RSS against n, privpub and baseline per call),
prints each call's growth exponent (the least-squares slope of log time against
log n) and rewrites README's block between the ``cost-curves`` markers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERIES = {"leading": "gender = 1", "middle": "workclass = 3", "trailing": "occupation = 7"}
CALLS = ["publish", "write", "read", *(f"estimate {k}" for k in QUERIES), "batch", "card"]
BATCH = 1_000
SEED = 1

_HEAD = """
import json, resource, sys, time, warnings
args = json.loads(sys.argv[1])
def report(run, repeats):
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t0)
    print("cost-curves:", json.dumps({"times": times, "floor_kib": floor, "result": out,
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

#: Each (call, side): a child script run with one JSON argument (paths, queries, repeats).
CHILDREN = {
    ("publish", "privpub"): """
from privpub.cli import main
argv = ["publish", "alphabeta", "--input", args["input"], "--schema", args["schema"],
        "--output", args["view"], "--duplicates", "records", "--yes", "--seed", "1", "--force"]
warnings.simplefilter("ignore")  # the CLI's notes on a seeded, weakly useful release
report(lambda: main(argv), args["repeats"])
""",
    ("publish", "baseline"): """
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
def run():
    table = pq.read_table(args["input"])
    table = pa.table({n: pc.dictionary_encode(c) for n, c in zip(table.column_names,
                                                                  table.columns)})
    pq.write_table(table, args["plain"])
    return table.num_rows
report(run, args["repeats"])
""",
    ("write", "privpub"): """
from privpub import PublishedView
view = PublishedView.read_parquet(args["view"])
report(lambda: view.to_parquet(args["scratch"], overwrite=True) or len(view), args["repeats"])
""",
    ("write", "baseline"): """
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
from privpub import PublishedView
from privpub.viewfile.layout import CHUNK_ROWS
view = PublishedView.read_parquet(args["view"])
names = list(view.schema.names)
dictionaries = [pa.array(np.asarray(a.values, dtype=np.int64)) for a in view.schema]
batches = [pa.record_batch([pa.DictionaryArray.from_arrays(b[n].astype(np.int8), d)
                            for n, d in zip(names, dictionaries)], names=names)
           for b in view.rows.batches()]
table = pa.Table.from_batches(batches)
del view, batches
def run():
    pq.write_table(table, args["copy"], row_group_size=CHUNK_ROWS, write_batch_size=65_536)
    return table.num_rows
report(run, args["repeats"])
""",
    ("read", "privpub"): """
from privpub import PublishedView
report(lambda: len(PublishedView.read_parquet(args["view"])), args["repeats"])
""",
    ("read", "baseline"): """
import pyarrow.parquet as pq
report(lambda: pq.read_table(args["copy"]).num_rows, args["repeats"])
""",
    ("estimate", "privpub"): """
from privpub import PublishedView
report(lambda: int(PublishedView.open(args["view"]).estimate(args["query"]).n_view),
       args["repeats"])
""",
    ("estimate", "baseline"): """
import duckdb
con = duckdb.connect()
con.execute("SET threads = 2")
sql = f"SELECT count(*) FROM read_parquet(?) WHERE {args['query']}"
report(lambda: con.execute(sql, [args["view"]]).fetchone()[0], args["repeats"])
""",
    ("batch", "privpub"): """
from privpub import PublishedView
def run():
    batch = PublishedView.open(args["view"]).estimate_many(args["queries"])
    return [int(e.n_view) for e in batch]
report(run, args["repeats"])
""",
    ("batch", "baseline"): """
import re, duckdb
con = duckdb.connect()
con.execute("SET threads = 2")
names = args["names"]
def attributes(q):
    return tuple(n for n in names if re.search(rf"\\b{n}\\b", q))
def run():
    marginals = {}
    for attrs in sorted({attributes(q) for q in args["queries"]}):
        cols = ", ".join(attrs)
        marginals[attrs] = table = "m_" + "_".join(attrs)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {cols}, count(*) AS c "
                    f"FROM read_parquet(?) GROUP BY {cols}", [args["view"]])
    return [int(con.execute(f"SELECT coalesce(sum(c), 0) FROM {marginals[attributes(q)]} "
                            f"WHERE {q}").fetchone()[0]) for q in args["queries"]]
report(run, args["repeats"])
""",
    ("card", "privpub"): """
from privpub import PublishedView
report(lambda: len(PublishedView.open(args["view"]).report().html), args["repeats"])
""",
    ("card", "baseline"): """
import duckdb
con = duckdb.connect()
con.execute("SET threads = 2")
sql = "SUMMARIZE SELECT * FROM read_parquet(?)"
report(lambda: len(con.execute(sql, [args["view"]]).fetchall()), args["repeats"])
""",
}


def batch_queries(count: int = BATCH, seed: int = SEED) -> list[str]:
    """``count`` distinct WHERE texts over the census attributes: 1–3 attributes
    each, an equality, a range or an IN list per attribute, values drawn from the
    domains with a fixed seed."""
    from privpub.datasets.census import AGE_MIN, CENSUS_CARDINALITIES

    names = list(CENSUS_CARDINALITIES)
    rng = np.random.default_rng(seed)
    found: dict[str, None] = {}
    while len(found) < count:
        picked = rng.choice(len(names), size=rng.integers(1, 4), replace=False)
        parts = []
        for j in sorted(picked):
            name, size = names[j], CENSUS_CARDINALITIES[names[j]]
            low = AGE_MIN if name == "age" else 0
            a, b = sorted(int(v) + low for v in rng.integers(0, size, size=2))
            kind = rng.integers(3)
            parts.append(f"{name} = {a}" if kind == 0 else f"{name} BETWEEN {a} AND {b}"
                         if kind == 1 else f"{name} IN ({a}, {b})")
        found[" AND ".join(parts)] = None
    return list(found)


def _gnu_time() -> str | None:
    return "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_child(call: str, side: str, args: dict) -> dict:
    """One child: its times, result, and peak / floor RSS in MiB."""
    script = _HEAD + CHILDREN[(call.split()[0], side)]
    command = [sys.executable, "-c", script, json.dumps(args)]
    gnu_time = _gnu_time()
    done = subprocess.run([gnu_time, "-v", *command] if gnu_time else command,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{call} ({side}) failed:\n{done.stderr[-3000:]}")
    # the child's marked result: the CLI prints lines of its own, and DuckDB's progress
    # bar ends its lines with a carriage return, so the mark need not start a line
    marked = done.stdout.rsplit("cost-curves: ", 1)
    if len(marked) < 2:
        raise RuntimeError(f"{call} ({side}) printed no result:\n{done.stdout[-3000:]}")
    result = json.loads(marked[1].splitlines()[0])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return {"seconds": statistics.median(result["times"]), "times": result["times"],
            "peak_mib": (int(peak.group(1)) if peak else result["peak_kib"]) / 1024,
            "floor_mib": result["floor_kib"] / 1024, "result": result["result"]}


def repeats_at(n: int, call: str) -> int:
    """Runs of a call in its child: 3, down to 1 past 10^5 records for the calls (and
    baselines) that take minutes there; the estimates always 3."""
    return 1 if n > 100_000 and not call.startswith("estimate") else 3


def measure(n: int, workdir: Path, calls=None, log=print) -> dict:
    """Every call (of ``calls``, default all) at ``n`` records, both sides; the input
    written first (untimed), the view published even when ``calls`` omits it."""
    from privpub.datasets import synthetic_census
    from privpub.datasets.census import CENSUS_CARDINALITIES, census_schema

    df, _ = synthetic_census(n, seed=0)
    paths = {k: str(workdir / f"{k}.parquet") for k in ("input", "view", "plain", "scratch",
                                                         "copy")}
    df.to_parquet(paths["input"])
    del df
    paths["schema"] = str(workdir / "schema.json")
    census_schema().write(paths["schema"], overwrite=True)
    queries = batch_queries()
    out: dict[str, dict] = {"uptime": _uptime()}
    if calls is not None:  # the view file every other call reads; read's baseline, write's file
        calls = {"publish"} | set(calls) | ({"write"} if "read" in calls else set())
    for call in CALLS:
        if calls is not None and call not in calls:
            continue
        args = {**paths, "repeats": repeats_at(n, call), "queries": queries,
                "names": list(CENSUS_CARDINALITIES),
                "query": QUERIES.get(call.removeprefix("estimate "))}
        sides = {side: run_child(call, side, args) for side in ("privpub", "baseline")}
        if call.startswith("estimate") or call == "batch":
            assert sides["privpub"]["result"] == sides["baseline"]["result"], call
        for side in sides.values():
            side.pop("result")
        out[call] = sides
        log(f"n = {n:,} {call}: privpub {sides['privpub']['seconds']:.3g} s "
            f"{sides['privpub']['peak_mib']:,.0f} MiB; baseline "
            f"{sides['baseline']['seconds']:.3g} s {sides['baseline']['peak_mib']:,.0f} MiB")
    out["view rows"] = {"rows": _rows(paths["view"]),
                        "view MiB": os.path.getsize(paths["view"]) / 2**20}
    for path in paths.values():
        Path(path).unlink(missing_ok=True)
    return out


def _rows(path: str) -> int:
    import pyarrow.parquet as pq
    return pq.ParquetFile(path).metadata.num_rows


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(sizes: list[int], calls=None, result: dict | None = None, log=print,
        save: Path | None = None) -> dict:
    """Measure every size (in a temporary directory, removed after), added to
    ``result`` (an earlier run's, or a new one) and written to ``save`` after each
    size; each size keeps the load (``uptime``) at its start and the commit."""
    result = result or {"machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                                   f"{platform.system()}", "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="cost-curves-") as tmp:
        for n in sizes:
            found = measure(n, Path(tmp), calls, log)
            found |= {"commit": _commit(), "python": platform.python_version(),
                      "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
            result["sizes"][str(n)] = result["sizes"].get(str(n), {}) | found
            if save is not None:
                save.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short",
                           "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def growth_exponent(ns, seconds) -> float:
    """The least-squares slope of log(seconds) against log(n)."""
    x, y = np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(seconds, dtype=float))
    if len(x) < 2 or np.ptp(x) == 0:
        raise ValueError("a growth exponent needs at least two distinct n")
    return float(np.polyfit(x, y, 1)[0])


def curve(result: dict, call: str, side: str, key: str = "seconds") -> tuple[list, list]:
    """(n, value) of one call and side at every size that measured it, by n."""
    ns = sorted(int(n) for n, found in result["sizes"].items() if call in found)
    return ns, [result["sizes"][str(n)][call][side][key] for n in ns]


def exponents(result: dict) -> dict[str, dict[str, float]]:
    """Each call's growth exponent of time, per side (calls measured at two sizes or more)."""
    return {call: {side: growth_exponent(*curve(result, call, side))
                   for side in ("privpub", "baseline")}
            for call in CALLS if len(curve(result, call, "privpub")[0]) >= 2}


def table(result: dict) -> str:
    """The README's block: per call, the exponents (and the sizes they span) and, at
    the largest n measured, both times, their ratio and both peak RSS."""
    fits = exponents(result)
    lines = ["| call | n fitted | exponent privpub | exponent baseline | largest n | "
             "privpub | baseline | privpub / baseline | peak RSS privpub | peak RSS baseline |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for call in CALLS:
        ns, _ = curve(result, call, "privpub")
        if not ns:
            continue
        top = result["sizes"][str(ns[-1])][call]
        ours, theirs = top["privpub"], top["baseline"]
        fit = fits.get(call)
        lines.append(
            f"| {call} | {'–'.join(dict.fromkeys([_n(ns[0]), _n(ns[-1])]))} | "
            + (f"{fit['privpub']:.2f} | {fit['baseline']:.2f}" if fit else "– | –")
            + f" | {_n(ns[-1])} | {_s(ours['seconds'])} | {_s(theirs['seconds'])} | "
            f"{ours['seconds'] / theirs['seconds']:.2f}× | {ours['peak_mib']:,.0f} MiB | "
            f"{theirs['peak_mib']:,.0f} MiB |")
    return "\n".join(lines)


def _n(n: int) -> str:
    exponent = math.log10(n)
    return f"10^{exponent:.0f}" if exponent == round(exponent) else f"{n:.1e}"


def _s(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.3g} s"


def plot(result: dict, path: str) -> None:
    """Time and peak RSS against n, log-log: privpub solid, baseline dashed, one
    colour per call."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    colours = plt.get_cmap("tab10")
    for i, call in enumerate(CALLS):
        for side, style in (("privpub", "-o"), ("baseline", "--x")):
            ns, seconds = curve(result, call, side)
            if ns:
                left.plot(ns, seconds, style, color=colours(i), label=f"{call} ({side})")
                right.plot(ns, curve(result, call, side, "peak_mib")[1], style,
                           color=colours(i))
    for ax, what in ((left, "median time of the call (s)"),
                     (right, "peak RSS of the process (MiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records n (synthetic census, 8 attributes)")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    fig.legend(*left.get_legend_handles_labels(), loc="center right", fontsize=7)
    fig.suptitle(f"privpub (solid) beside non-private work (dashed) on {result['machine']}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.83, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


BEGIN, END = "<!-- cost-curves: begin -->", "<!-- cost-curves: end -->"


def write_readme(result: dict, readme: str) -> None:
    """Replace the text between the README's cost-curves markers with the table
    and, per size, when it was measured, at which commit, and the load."""
    text = Path(readme).read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ValueError(f"{readme} has no {BEGIN} … {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    runs = [f"- n = {_n(int(n))}: {found['started']}, commit {found['commit']}, "
            f"`{found['uptime']}`" for n, found in sorted(result["sizes"].items(),
                                                          key=lambda item: int(item[0]))]
    block = "\n".join([BEGIN, table(result), "", f"On {result['machine']}:", *runs, END])
    Path(readme).write_text(head + block + tail, encoding="utf-8")


def _sizes(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",")]


def _calls(text: str) -> list[str]:
    calls = text.split(",")
    unknown = [c for c in calls if c not in CALLS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown calls {unknown}; calls: {', '.join(CALLS)}")
    return calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, help="n to measure, e.g. 1e5,1e6,1e7 "
                        "(omitted: only read --json); added to --json's sizes if it exists")
    parser.add_argument("--calls", type=_calls, help="calls to measure (default all; publish "
                        "always runs, and write with read: the others read their files)")
    parser.add_argument("--json", required=True, help="the results file")
    parser.add_argument("--plot", help="the PNG to draw")
    parser.add_argument("--readme", help="a file whose cost-curves block to rewrite")
    args = parser.parse_args(argv)
    saved = Path(args.json)
    result = json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else None
    if args.sizes:
        result = run(args.sizes, args.calls, result,
                     log=lambda line: print(line, flush=True), save=saved)
    if result is None:
        parser.error(f"{saved} does not exist: measure with --sizes")
    for call, fit in exponents(result).items():
        print(f"{call}: time ~ n^{fit['privpub']:.2f} (baseline n^{fit['baseline']:.2f})")
    print(table(result))
    if args.plot:
        plot(result, args.plot)
    if args.readme:
        write_readme(result, args.readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
