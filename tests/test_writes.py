"""Writes that cannot lose data (privpub.core.files and every writer using it).

A file privpub writes appears whole or not at all: an exception, Ctrl-C,
SIGTERM or SIGKILL in the middle of a write leaves the previous file as it
was (after SIGKILL a hidden temporary may remain, removed by the next write
to the name); an existing output is refused unless asked for; an input is
never an output; the suffix names the format; of two writers racing to one
new name exactly one succeeds, and the file is the one it reports.
"""

from __future__ import annotations

import fcntl
import glob
import os

import pyarrow.parquet as pq
import pytest

import privpub
from privpub import OutputExistsError
from privpub.core.files import TEMP_MARK, atomic_output


def temporaries(folder, name="") -> list[str]:
    return sorted(e for e in os.listdir(folder) if e.startswith(f".{name}") and TEMP_MARK in e)


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


@pytest.fixture(scope="module")
def view(adult):
    df, schema = adult
    return privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="set")


# ---- the library ----------------------------------------------------------------------------


def test_temporaries_are_hidden_never_parquet_and_stale_ones_are_removed(view, tmp_path):
    stale = tmp_path / f".view.parquet{TEMP_MARK}0123abcd"
    stale.write_bytes(b"left by a killed writer")
    live = tmp_path / f".view.parquet{TEMP_MARK}feedbeef"
    live.write_bytes(b"a writer still at work")
    other = tmp_path / f".other.parquet{TEMP_MARK}00000000"
    other.write_bytes(b"another name's")
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        with atomic_output(tmp_path / "view.parquet", suffix=".parquet") as temp:
            name = os.path.basename(temp)
            assert name.startswith(f".view.parquet{TEMP_MARK}") and not name.endswith(".parquet")
            assert not stale.exists() and live.exists() and other.exists()
            view.to_parquet(tmp_path / "elsewhere.parquet")
            pq.write_table(view.to_arrow(), temp)
            assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "*.parquet"))) \
                == ["elsewhere.parquet"]  # a glob never picks up a temporary
    finally:
        os.close(held)
    assert len(pq.read_table(tmp_path / "view.parquet")) == len(view)
    assert temporaries(tmp_path) == sorted([live.name, other.name])


def test_a_lost_race_is_refused_and_the_winner_stays(view, tmp_path):
    """Another writer puts a file at the name while this one writes: this one
    fails with a named error, the other's file stays, nothing else is left."""
    path = tmp_path / "view.parquet"
    with pytest.raises(OutputExistsError, match="exists \\(written meanwhile"), \
            atomic_output(path, suffix=".parquet") as temp:
        with open(temp, "w") as fh:
            fh.write("the loser's")
        path.write_text("the winner's")
    assert path.read_text() == "the winner's" and os.listdir(tmp_path) == ["view.parquet"]
