"""Writes that cannot lose data (privpub.core.files and every writer using it).

A file privpub writes appears whole or not at all: an exception, Ctrl-C,
SIGTERM or SIGKILL in the middle of a write leaves the previous file as it
was (after SIGKILL a hidden temporary may remain, removed by the next write
to the name); an existing output is refused unless asked for; an input is
never an output; the suffix names the format; of two writers racing to one
new name exactly one succeeds, and the file is the one it reports.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import OutputExistsError, ParameterError, PrivpubError, PublishedView, cli
from privpub.core.files import (
    TEMP_MARK,
    atomic_output,
    deferred_signals,
    save_figure,
    write_text,
)

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [os.path.dirname(os.path.dirname(privpub.__file__)), os.environ.get("PYTHONPATH", "")]))
#: Adult at k = 40: a view of about 4.7M rows, a second or more to draw and write.
BIG = ["--duplicates", "set", "--k", "40", "--yes"]


def digest(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def temporaries(folder, name="") -> list[str]:
    return sorted(e for e in os.listdir(folder) if e.startswith(f".{name}") and TEMP_MARK in e)


def privpub_cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "privpub.cli", *args], env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


@pytest.fixture(scope="module")
def view(adult):
    df, schema = adult
    return privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10).publish(
        df, seed=1, duplicates="set")


@pytest.fixture(scope="module")
def adult_file(adult, tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "adult.parquet"
    adult[0].to_parquet(path)
    return path


# ---- the library ----------------------------------------------------------------------------


@pytest.mark.parametrize("interrupt", [RuntimeError, KeyboardInterrupt])
def test_a_write_that_fails_midway_leaves_the_old_release_and_no_temporary(
        adult, view, tmp_path, interrupt):
    """publish_to_parquet over an existing release, stopped after the rows are
    drawn and written but before the file is closed (main wrote a well-formed
    Parquet file of the partial rows over the old release)."""
    df, schema = adult
    path = tmp_path / "view.parquet"
    view.to_parquet(path)
    before = digest(path)

    def stop(done, total):
        raise interrupt("stopped")

    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    with pytest.raises(interrupt, match="stopped"):
        mech.publish_to_parquet(df, path, seed=2, duplicates="set", progress=stop,
                                overwrite=True)
    assert digest(path) == before and os.listdir(tmp_path) == ["view.parquet"]
    assert len(PublishedView.read_parquet(path)) == len(view)


def test_an_existing_output_is_refused_unless_overwrite(adult, view, tmp_path):
    df, schema = adult
    path = tmp_path / "view.parquet"
    view.to_parquet(path)
    before = digest(path)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    artifact = privpub.Artifact(df.head(), "example", {})
    for write in (lambda **kw: view.to_parquet(path, **kw),
                  lambda **kw: mech.publish_to_parquet(df, path, seed=3, duplicates="set", **kw),
                  lambda **kw: artifact.to_parquet(path, **kw),
                  lambda **kw: write_text(path, "text", **kw)):
        with pytest.raises(OutputExistsError, match="view.parquet' exists; overwrite=True"):
            write()
        assert digest(path) == before and os.listdir(tmp_path) == ["view.parquet"]
    err = OutputExistsError("x")
    assert isinstance(err, PrivpubError) and isinstance(err, FileExistsError)
    mech.publish_to_parquet(df, path, seed=3, duplicates="set", overwrite=True)
    assert digest(path) != before and len(PublishedView.open(path)) > 0
    view.to_parquet(path, overwrite=True)
    assert digest(path) == before  # the same view, the same bytes
    artifact.to_parquet(path, overwrite=True)
    assert privpub.Artifact.read_parquet(path).frame.equals(artifact.frame)


def test_an_input_is_never_the_output(adult, view, tmp_path):
    """The data file, a hard link or a symlink to it, or a file-backed view's
    own file: refused, with or without overwrite."""
    df, schema = adult
    data = tmp_path / "adult.parquet"
    df.to_parquet(data)
    os.link(data, tmp_path / "hard.parquet")
    os.symlink(data, tmp_path / "soft.parquet")
    before = digest(data)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    for output in ("adult.parquet", "hard.parquet", "soft.parquet"):
        for overwrite in (False, True):
            with pytest.raises(ParameterError, match=f"'{tmp_path / output}' is the input"):
                mech.publish_to_parquet(str(data), tmp_path / output, seed=1,
                                        duplicates="set", overwrite=overwrite)
    assert digest(data) == before
    view.to_parquet(tmp_path / "view.parquet")
    opened = PublishedView.open(tmp_path / "view.parquet")
    with pytest.raises(ParameterError, match="is the input"):
        opened.to_parquet(tmp_path / "view.parquet", overwrite=True)
    assert len(PublishedView.read_parquet(tmp_path / "view.parquet")) == len(view)


def test_the_suffix_names_the_format(view, tmp_path):
    for name in ("o.csv", "o", "o.parquet.tmp"):
        with pytest.raises(ParameterError, match=f"'{tmp_path / name}' must end in '.parquet'"):
            view.to_parquet(tmp_path / name)
    view.to_parquet(tmp_path / "O.PARQUET")
    assert os.listdir(tmp_path) == ["O.PARQUET"]


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


def test_an_interrupt_during_a_rename_is_delivered_after_it():
    """deferred_signals (around a rename and its clean-up): SIGINT and SIGTERM
    sent inside the block are held until it ends, then raised."""
    done = []
    with pytest.raises(KeyboardInterrupt), deferred_signals():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # Python runs a handler here: the held one only records it
        done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_outputs_of_runs_are_refused_before_the_run(tmp_path, capsys, monkeypatch):
    from privpub.experiments import relationship

    def never(name):
        raise AssertionError("the run started")

    monkeypatch.setattr(relationship, "load_graph", never)
    (tmp_path / "table1.md").write_text("an earlier run's table")
    with pytest.raises(OutputExistsError, match="table1.md' exists"):
        relationship.run(tmp_path, seed=1, runs=10, graphs=("ca-grqc",))
    assert cli.main(["experiments", "relationship", "--out", str(tmp_path), "--runs", "10",
                     "--graphs", "ca-grqc"]) == 1
    err = capsys.readouterr().err
    assert "table1.md' exists" in err and "--force" in err and err.count("\n") == 1
    assert (tmp_path / "table1.md").read_text() == "an earlier run's table"
    assert os.listdir(tmp_path) == ["table1.md"]


def test_figures_and_text_follow_the_same_rules(tmp_path):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 2))
    figure.subplots().plot([0, 1], [1, 0])
    save_figure(figure, tmp_path / "f.png", dpi=50)  # the format from the name, not the temporary's
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    write_text(tmp_path / "s.json", "{}")
    for write in (lambda **kw: save_figure(figure, tmp_path / "f.png", **kw),
                  lambda **kw: write_text(tmp_path / "s.json", "[]", **kw)):
        with pytest.raises(OutputExistsError, match="exists; overwrite=True"):
            write()
        write(overwrite=True)
    assert (tmp_path / "s.json").read_text() == "[]"
    assert sorted(os.listdir(tmp_path)) == ["f.png", "s.json"]


# ---- a Dask release (a directory) -------------------------------------------------------------


def test_a_directory_release_is_replaced_whole_or_not_at_all(adult, tmp_path, monkeypatch):
    pytest.importorskip("dask.dataframe")
    import dask
    import dask.dataframe as dd

    from privpub.tables import distributed

    df, schema = adult
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    frame = dd.from_pandas(df, npartitions=2)
    path = tmp_path / "release"
    with dask.config.set(scheduler="synchronous"):
        first = mech.publish(frame, seed=1, duplicates="set").to_parquet(path)
        names = sorted(os.listdir(path))
        before = {n: digest(path / n) for n in names}
        with pytest.raises(OutputExistsError, match="not an empty directory"):
            mech.publish(frame, seed=2, duplicates="set").to_parquet(path)
        with pytest.raises(ParameterError, match="must end in '.parquet'"):
            mech.publish(frame, seed=2, duplicates="set").to_parquet(tmp_path / "r.csv")

        real = distributed._write_part
        calls = []

        def fail_second(*args):
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt("stopped")
            return real(*args)

        monkeypatch.setattr(distributed, "_write_part", fail_second)
        with pytest.raises(KeyboardInterrupt):
            mech.publish(frame, seed=2, duplicates="set").to_parquet(path, overwrite=True)
        monkeypatch.setattr(distributed, "_write_part", real)
        assert {n: digest(path / n) for n in os.listdir(path)} == before
        assert sorted(os.listdir(tmp_path)) == ["release"]

        second = mech.publish(frame, seed=2, duplicates="set").to_parquet(path, overwrite=True)
        assert sorted(os.listdir(tmp_path)) == ["release"]
        assert len(second) != len(first) or not np.array_equal(second.codes, first.codes)
        assert np.array_equal(PublishedView.read_parquet(path).codes, second.codes)

        (path / "notes.txt").write_text("not a release's")
        with pytest.raises(ParameterError, match="holds 'notes.txt', which a release does not"):
            mech.publish(frame, seed=3, duplicates="set").to_parquet(path, overwrite=True)
        assert (path / "notes.txt").exists() and sorted(os.listdir(tmp_path)) == ["release"]


# ---- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize("force", [False, True])
def test_the_command_line_never_writes_over_an_input(adult, tmp_path, capsys, force):
    """--output equal to --input (main overwrote the CSV with exit 0) or --schema."""
    df, schema = adult
    data = tmp_path / "adult.csv"
    df.to_csv(data, index=False)
    spec = tmp_path / "schema.parquet"  # a JSON schema, oddly named
    spec.write_text(json.dumps(schema.to_dict()))
    before = {p: digest(p) for p in (data, spec)}
    for output, extra in ((data, []), (spec, ["--schema", str(spec)])):
        assert cli.main(["publish", "alphabeta", "--input", str(data), "--output", str(output),
                         "--duplicates", "set", "--seed", "1", *extra,
                         *(["--force"] if force else [])]) == 1
        err = capsys.readouterr().err
        assert f"--output '{output}' is the input" in err and err.count("\n") == 1
    assert {p: digest(p) for p in before} == before


def test_the_command_line_refuses_a_wrong_suffix_and_an_existing_output(adult_file, tmp_path,
                                                                         capsys):
    base = ["--input", str(adult_file), "--duplicates", "set", "--seed", "1"]
    for kind in ("alphabeta", "frapp"):
        assert cli.main(["publish", kind, *base, "--output", str(tmp_path / "o.csv")]) == 1
        err = capsys.readouterr().err
        assert f"--output '{tmp_path / 'o.csv'}' must end in '.parquet'" in err
    assert cli.main(["publish", "splu", "--input", str(adult_file), "--group-size", "5",
                     "--sensitive", "occupation", "--output", str(tmp_path / "o.csv")]) == 1
    assert "must end in '.parquet'" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []

    out = tmp_path / "v.parquet"
    assert cli.main(["publish", "alphabeta", *base, "--output", str(out)]) == 0
    capsys.readouterr()
    before = digest(out)
    for kind in ("alphabeta", "frapp"):
        assert cli.main(["publish", kind, *base, "--output", str(out)]) == 1
        err = capsys.readouterr().err
        assert err == f"privpub: error: --output '{out}' exists; --force replaces it\n"
    assert cli.main(["demo", "--out", str(out)]) == 1  # the old spelling of --output
    assert f"--output '{out}' exists; --force replaces it" in capsys.readouterr().err
    assert digest(out) == before
    assert cli.main(["publish", "frapp", *base, "--output", str(out), "--force"]) == 0
    assert "published 19,502 rows" in capsys.readouterr().out
    assert PublishedView.open(out).mechanism == "frapp" and os.listdir(tmp_path) == ["v.parquet"]

    table = tmp_path / "bench.md"
    table.write_text("an earlier table")
    assert cli.main(["bench", "--quick", "--only", "cond", "--output", str(table)]) == 1
    assert f"--output '{table}' exists; --force replaces it" in capsys.readouterr().err
    assert cli.main(["bench", "--quick", "--only", "cond", "--out", str(tmp_path / "b.txt")]) \
        == 1
    assert "must end in '.md'" in capsys.readouterr().err
    assert table.read_text() == "an earlier table"


@pytest.mark.slow  # a process killed mid-write: seconds of waiting
def test_sigterm_unwinds_as_an_interrupt(adult_file, tmp_path, capsys, monkeypatch):
    """In the command, SIGTERM raises where the program is: here while the view
    is written (the write in progress is removed, the old file kept); exit 143,
    and the handler is restored afterwards."""
    from privpub.cli import publish

    @contextlib.contextmanager
    def terminating(desc, unit):
        def update(done, total):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
            raise AssertionError("SIGTERM did not interrupt")

        yield update

    def unhandled(signum, frame):  # what SIGTERM meets if the command sets no handler
        raise AssertionError("SIGTERM reached the test's handler, not the command's")

    monkeypatch.setattr(publish, "progress", terminating)
    out = tmp_path / "v.parquet"
    out.write_bytes(b"the old release")
    original = signal.signal(signal.SIGTERM, unhandled)
    try:
        assert cli.main(["publish", "alphabeta", "--input", str(adult_file), "--output",
                         str(out), "--duplicates", "set", "--force"]) == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is unhandled
    finally:
        signal.signal(signal.SIGTERM, original)
    assert capsys.readouterr().err.endswith("privpub: terminated\n")
    assert out.read_bytes() == b"the old release" and os.listdir(tmp_path) == ["v.parquet"]


# ---- signals and races, in real processes ------------------------------------------------------


def _wait_for_temporary(proc: subprocess.Popen, folder, name: str) -> bool:
    """Poll until a new temporary of ``name`` appears (True; one left by a killed
    run does not count) or the process ends."""
    before = set(temporaries(folder, name))
    while proc.poll() is None:
        if set(temporaries(folder, name)) - before:
            return True
        time.sleep(0.005)
    return False


def _check_release(path, old_digest: str) -> str:
    """The file at ``path`` is the old release, byte for byte, or a whole new one."""
    now = digest(path)
    if now != old_digest:
        back = PublishedView.read_parquet(path)  # row groups, row count and every column's digest
        assert len(back) == len(PublishedView.open(path)) > 4_000_000
    return now


@pytest.mark.slow
def test_signals_at_random_moments_never_lose_the_release(adult_file, tmp_path):
    """`privpub publish alphabeta --force` over an existing release, sent SIGINT,
    SIGTERM or SIGKILL at seeded random moments (while starting, or while the
    view is drawn and written). Afterwards the old release is intact or the new
    one is whole; nothing else is in the directory, except after SIGKILL a
    hidden temporary, which the next write removes."""
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "release.parquet"
    base = ["publish", "alphabeta", "--input", str(adult_file), "--output", str(out), *BIG]
    start = time.monotonic()
    first = privpub_cli(*base, "--seed", "0")
    assert _wait_for_temporary(first, folder, out.name)
    writing = time.monotonic()
    while temporaries(folder, out.name):  # the temporary lives until its rename
        time.sleep(0.005)
    # Scales for the moments: the time to the temporary, and the temporary's life
    # (not the time to exit, whose teardown after the rename leaves nothing to kill).
    startup, write = writing - start, time.monotonic() - writing
    stdout, stderr = first.communicate(timeout=600)
    assert first.returncode == 0, stderr
    current = _check_release(out, "")

    rng = np.random.default_rng(21)
    allowed = {signal.SIGINT: {0, 130, -signal.SIGINT}, signal.SIGTERM: {0, 143, -signal.SIGTERM},
               signal.SIGKILL: {0, -signal.SIGKILL}}
    seen = {"interrupted while writing": 0, "temporary left by SIGKILL": 0, "finished": 0}
    seed = 1
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        # One moment early in the write and one anywhere in it: under load a moment
        # drawn from the whole life can fall after the rename every time.
        for phase, share in (("starting", 0), ("writing", 0.25), ("writing", 0.8)):
            seed += 1
            left_before = set(temporaries(folder, out.name))
            proc = privpub_cli(*base, "--force", "--seed", str(seed))
            if phase == "starting":
                time.sleep(rng.uniform(0, startup))
                was_writing = bool(set(temporaries(folder, out.name)) - left_before)
            else:
                was_writing = _wait_for_temporary(proc, folder, out.name)
                time.sleep(rng.uniform(0, share * write))
            if proc.poll() is None:
                proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=600)
            assert proc.returncode in allowed[sig], (sig, phase, proc.returncode, stderr)
            if proc.returncode == 0:
                seen["finished"] += 1
                assert "published" in stdout
            elif proc.returncode in (130, 143):
                assert stderr.endswith("interrupted\n" if sig == signal.SIGINT
                                       else "terminated\n"), stderr
            current = _check_release(out, current)
            left = temporaries(folder, out.name)
            assert sorted(os.listdir(folder)) == sorted([out.name, *left])
            if sig == signal.SIGKILL:
                seen["temporary left by SIGKILL"] += bool(left)
            else:
                assert left == [], (sig, phase)
                seen["interrupted while writing"] += was_writing and proc.returncode != 0
    # The moments reached the write (the test has power), and a killed writer's
    # temporary is removed by the next write.
    assert seen["interrupted while writing"] >= 2 and seen["temporary left by SIGKILL"] >= 1, seen
    last = privpub_cli(*base, "--force", "--seed", "99")
    stdout, stderr = last.communicate(timeout=600)
    assert last.returncode == 0, stderr
    _check_release(out, current)
    assert os.listdir(folder) == [out.name]


@pytest.mark.slow
def test_two_writers_racing_to_one_new_path(adult_file, tmp_path):
    """Without --force, of two `privpub publish` runs writing one new path at
    once exactly one succeeds; the other fails with a one-line named error;
    the file is the release the winner reported (its seed's rows)."""
    out = tmp_path / "v.parquet"
    base = ["publish", "alphabeta", "--input", str(adult_file), "--output", str(out), *BIG]
    procs = {seed: privpub_cli(*base, "--seed", str(seed)) for seed in (1, 2)}
    results = {seed: (*p.communicate(timeout=600), p.returncode) for seed, p in procs.items()}
    winners = [s for s, (_, _, rc) in results.items() if rc == 0]
    assert len(winners) == 1, results
    (winner,) = winners
    (loser,) = set(results) - {winner}
    err = results[loser][1]
    last = err.splitlines()[-1]  # after the notes: one line naming the file
    assert results[loser][2] == 1 and last.startswith("privpub: error: output '") and \
        "v.parquet' exists" in last, err
    last = results[winner][0].splitlines()[-1]  # "published N rows to PATH"
    reported = int(last.removeprefix("published ").split(" rows")[0].replace(",", ""))
    on_disk = PublishedView.read_parquet(out)
    assert len(on_disk) == reported and os.listdir(tmp_path) == ["v.parquet"]
    table = pq.read_table(adult_file)
    with warnings.catch_warnings():  # the domains are inferred, as the command infers them
        warnings.simplefilter("ignore", privpub.PrivacyWarning)
        schema = privpub.Schema.from_frame(table)
    mech = privpub.AlphaBeta.for_privacy(schema, n=table.num_rows, gamma=0.2, k=40)
    assert np.array_equal(on_disk.codes, mech.publish(table, seed=winner, duplicates="set").codes)
