"""Cost curves (issue 36): every call a user makes at growing n, beside non-private work.

The calls, their baselines and how each is timed are in ``cost_curves.py`` (beside
this file), which also draws the plot and rewrites README's block. This suite runs
it as a benchmark:

- benchmarks disabled (``pytest benches``, CI): n = 3,000 and 10,000, every call,
  a smoke run that the curves and their exponents come out;
- ``--benchmark-enable``: n = 10^5, 10^6, 10^7 (about 25 minutes on this 2-core
  machine under load, most of it the 10^7 calls; the 10^7-record view is about
  0.5 GB in the temporary directory, removed after);
- ``PRIVPUB_BENCH_CURVES_1E8=1`` adds n = 10^8 for the calls that open the file
  (publish, the estimates, the batch, the card): ``read``/``write`` hold the view in
  memory, 3.5×10^9 rows of 8 one-byte indices (28 GB), more than this machine has.
  Not run here: the publish alone is expected to take 15–25 minutes (10× the
  10^7 one) and DuckDB's batch 10× its 10^7 time.

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

FULL = [100_000, 1_000_000, 10_000_000]
SMALL = [3_000, 10_000]
OPENED = [c for c in CALLS if c not in ("write", "read")]


def test_cost_curves(request, bench_report, tmp_path):
    full = full_size(request.config)
    result = run(FULL if full else SMALL)
    if full and os.environ.get("PRIVPUB_BENCH_CURVES_1E8"):
        result = run([100_000_000], OPENED, result)
    keep = os.environ.get("PRIVPUB_BENCH_CURVES_JSON") or str(tmp_path / "cost_curves.json")
    with open(keep, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    fits = exponents(result)
    assert set(fits) == set(CALLS)
    bench_report.append(f"cost curves (results in {keep}):")
    bench_report.extend(table(result).splitlines())
