"""`privpub publish alphabeta` reads its input file in batches: its peak memory grows
with the records by their codes and the arrays the draw keeps of them (the sorted
records, their distinct tuples, the kept ones), not by the table's columns. Measured
as the peak RSS of the command (``RUSAGE_CHILDREN`` of a process that runs only it),
never as time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from privpub.datasets import synthetic_census

SMALL, LARGE = 200_000, 2_000_000
#: Bytes of peak RSS per added record allowed. The arrays kept are the sorted codes
#: (8 bytes a record; sorting takes a second copy for a moment), their distinct tuples
#: (8), the α-step mask and the kept records (about 1 + 8·α); measured between these
#: sizes: 60 bytes a record, against 161 when the whole table was read at once (64
#: bytes a record for the census's eight int64 columns, as much again when its row
#: groups' chunks were joined for the encoder). At 10^7 records: 30 (docs/scaling.md).
BYTES_PER_RECORD = 100
#: Row groups of the input files: the same in both, so the reader's buffers (a row
#: group's column chunks) are the same size in both runs.
ROW_GROUP = 1 << 17

MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
if done.returncode:
    sys.exit(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_kib(folder: str, records: int) -> int:
    """The peak RSS (KiB) of publishing the first ``records`` synthetic census
    records from a Parquet file, in a process of its own."""
    df, _ = synthetic_census(LARGE, seed=0)
    source = os.path.join(folder, f"census{records}.parquet")
    df.iloc[:records].to_parquet(source, index=False, row_group_size=ROW_GROUP)
    del df
    command = [sys.executable, "-m", "privpub", "publish", "alphabeta", "--input", source,
               "--output", os.path.join(folder, f"view{records}.parquet"),
               "--duplicates", "records", "--yes", "--seed", "3"]
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True,
                          text=True, timeout=3_600)  # a hang guard, not a limit
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_cli_publish_memory_grows_by_the_records_codes(tmp_path):
    small, large = peak_kib(str(tmp_path), SMALL), peak_kib(str(tmp_path), LARGE)
    per_record = (large - small) * 1024 / (LARGE - SMALL)
    assert per_record < BYTES_PER_RECORD, (
        f"peak RSS {small / 1024:.0f} MiB at {SMALL:,} records, {large / 1024:.0f} MiB at "
        f"{LARGE:,}: {per_record:.0f} bytes per added record")
