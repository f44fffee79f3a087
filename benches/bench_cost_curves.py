"""Cost curves (issue 36): every call a user makes at growing n, beside non-private work.

The calls, their baselines and how each is timed are in ``cost_curves.py`` (beside
this file), which also draws the plot and rewrites README's block. This suite runs
it as a benchmark:

- benchmarks disabled (``pytest benches``, CI): n = 3,000 and 10,000, every call,
  a smoke run that the curves and their exponents come out;
- ``--benchmark-enable``: n = 10^5 and 10^6 for every call, and 10^7 for the calls
  that open the file (publish, the estimates, the batch, the card; the 10^7-record
  view is about 0.5 GB in the temporary directory, removed after). ``write`` and
  ``read`` are not run at 10^7 (they hold the 3.5×10^8-row view in memory;
  ``to_parquet`` of a view read back built its whole Arrow columns at once until
  d1f618e, 2.9 GB at 10^6 and past 18 GB at 10^7, and is not re-measured). Under load 20 on this
  machine the 10^7 publish took 266 s and the 10^6 batch's DuckDB side minutes;
  expect an hour or more for the whole suite.
- ``PRIVPUB_BENCH_CURVES_1E8=1`` adds n = 10^8 for the same calls (read and write
  would hold 3.5×10^9 rows of 8 one-byte indices, 28 GB, more than this machine has).
  Not run here: the publish alone is expected to take 10× the 10^7 one.

``PRIVPUB_BENCH_CURVES_JSON=FILE`` keeps the results (``cost_curves.py --json FILE
--plot …`` draws them). Nothing asserts on timing; both sides' counts are asserted
equal.

Run: ``pytest benches/bench_cost_curves.py --benchmark-enable -s``.
"""

from __future__ import annotations

import json
import os

from conftest import full_size  # noqa: I001 (benches/conftest.py, not a package)
from cost_curves import CALLS, exponents, run, table

FULL = [100_000, 1_000_000]
SMALL = [3_000, 10_000]
#: The calls measured past 10^6 records: those that do not hold the view in memory.
OPENED = [c for c in CALLS if c not in ("write", "read")]


def test_cost_curves(request, bench_report, tmp_path):
    full = full_size(request.config)
    result = run(FULL if full else SMALL)
    if full:
        large = [10_000_000] + ([100_000_000] if os.environ.get("PRIVPUB_BENCH_CURVES_1E8")
                                else [])
        result = run(large, OPENED, result)
    keep = os.environ.get("PRIVPUB_BENCH_CURVES_JSON") or str(tmp_path / "cost_curves.json")
    with open(keep, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    fits = exponents(result)
    assert set(fits) == set(CALLS)
    bench_report.append(f"cost curves (results in {keep}):")
    bench_report.extend(table(result).splitlines())
