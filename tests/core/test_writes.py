"""Writes that cannot lose data (privpub.core.files and every writer using it).

A file privpub writes appears whole or not at all: an exception, Ctrl-C or
SIGTERM in the middle of a write leaves the previous file as it was and
nothing else; an existing output is refused unless asked for; an input is
never an output; the suffix names the format; of two writers racing to one
new name exactly one succeeds, and the file is the one it reports. Both
kinds of temporary are tested: unnamed (O_TMPFILE, Linux) and a hidden name
(elsewhere, or a filesystem that refuses O_TMPFILE). Real processes, signals
and full disks: test_writes_processes.py.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import hashlib
import json
import os
import signal
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import OutputExistsError, ParameterError, PrivpubError, PublishedView, cli
from privpub.core import temporaries
from privpub.core.files import atomic_output, save_figure, write_text
from privpub.core.temporaries import TEMP_MARK


def digest(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def named_temporaries(folder, name="") -> list[str]:
    return sorted(e for e in os.listdir(folder) if e.startswith(f".{name}") and TEMP_MARK in e)


@pytest.fixture(params=["unnamed", "named"])
def temp_kind(request, monkeypatch):
    """Each kind of temporary: unnamed where the platform has O_TMPFILE, and a
    hidden name, as on a platform without it."""
    if request.param == "named":
        monkeypatch.setattr(temporaries, "O_TMPFILE", 0)
    elif not temporaries.O_TMPFILE:
        pytest.skip("no O_TMPFILE on this platform")
    return request.param


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
        adult, view, tmp_path, interrupt, temp_kind):
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


def test_an_existing_output_is_refused_unless_overwrite(adult, view, tmp_path, temp_kind):
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


def test_temporaries_are_hidden_never_parquet_and_stale_ones_are_removed(view, tmp_path,
                                                                         monkeypatch):
    """Named temporaries (no O_TMPFILE): hidden, never *.parquet, and those a
    killed writer left (lock free) removed by the next write; a live one not."""
    monkeypatch.setattr(temporaries, "O_TMPFILE", 0)
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
    assert named_temporaries(tmp_path) == sorted([live.name, other.name])


def unnamed_open(folder) -> list[str]:
    """Unnamed files in ``folder`` this process holds open."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile (another thread's)
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [link for link in links if link.startswith(f"{folder}/#")]


@pytest.mark.skipif(not temporaries.O_TMPFILE, reason="no O_TMPFILE on this platform")
def test_an_unnamed_temporary_is_nowhere_in_the_directory(view, tmp_path):
    """On Linux the file is written with no name: the directory holds only
    what was there until the file is whole, an exception leaves nothing to
    remove, and no descriptor stays open."""
    (tmp_path / "view.parquet").write_bytes(b"the old release")
    with pytest.raises(RuntimeError, match="stopped"), \
            atomic_output(tmp_path / "view.parquet", suffix=".parquet", overwrite=True) as temp:
        assert temp.startswith("/proc/self/fd/")
        assert os.readlink(temp).endswith(" (deleted)")  # an inode without a name
        pq.write_table(view.to_arrow(), temp)
        assert os.listdir(tmp_path) == ["view.parquet"] and len(unnamed_open(tmp_path)) == 1
        raise RuntimeError("stopped")
    assert os.listdir(tmp_path) == ["view.parquet"] and unnamed_open(tmp_path) == []
    assert (tmp_path / "view.parquet").read_bytes() == b"the old release"
    view.to_parquet(tmp_path / "new.parquet")
    assert sorted(os.listdir(tmp_path)) == ["new.parquet", "view.parquet"]
    assert unnamed_open(tmp_path) == []
    assert len(PublishedView.read_parquet(tmp_path / "new.parquet")) == len(view)


@pytest.mark.skipif(not temporaries.O_TMPFILE, reason="no O_TMPFILE on this platform")
def test_a_replacement_is_named_only_under_its_writers_lock(view, tmp_path, monkeypatch):
    """Replacing a file, the unnamed temporary is linked under a hidden name
    and renamed over the target (no call replaces a name with an unnamed
    file): in between, the hidden name is locked by its writer, so another
    writer's sweep of stale temporaries leaves it alone."""
    path = tmp_path / "view.parquet"
    path.write_bytes(b"the old release")
    seen = []
    replace = os.replace

    def checked(source, target):
        seen.append(os.path.basename(source))
        assert os.path.basename(source).startswith(f".view.parquet{TEMP_MARK}")
        assert temporaries.remove_stale(str(tmp_path), "view.parquet") == []
        replace(source, target)

    monkeypatch.setattr(temporaries.os, "replace", checked)
    view.to_parquet(path, overwrite=True)
    assert len(seen) == 1 and os.listdir(tmp_path) == ["view.parquet"]
    assert len(PublishedView.read_parquet(path)) == len(view)


def test_a_filesystem_that_refuses_unnamed_files_gets_a_hidden_name(view, tmp_path,
                                                                    monkeypatch):
    """EOPNOTSUPP (a filesystem without O_TMPFILE) or EISDIR (a kernel without
    it): a hidden name instead; any other refusal (EROFS, EACCES) is the
    write's error."""
    real = os.open

    def refusing(path, flags, *args, **kwargs):
        if temporaries.O_TMPFILE and flags & temporaries.O_TMPFILE == temporaries.O_TMPFILE:
            raise OSError(code, os.strerror(code), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(temporaries.os, "open", refusing)
    for code in (errno.EOPNOTSUPP, errno.EISDIR):
        path = tmp_path / f"{code}.parquet"
        with atomic_output(path, suffix=".parquet") as temp:
            assert os.path.basename(temp).startswith(f".{path.name}{TEMP_MARK}")
            pq.write_table(view.to_arrow(), temp)
        assert len(pq.read_table(path)) == len(view)
    if temporaries.O_TMPFILE:
        code = errno.EROFS
        with pytest.raises(OSError, match="Read-only file system"):
            view.to_parquet(tmp_path / "ro.parquet")
    assert sorted(os.listdir(tmp_path)) == [f"{errno.EISDIR}.parquet",
                                            f"{errno.EOPNOTSUPP}.parquet"]


def test_a_lost_race_is_refused_and_the_winner_stays(view, tmp_path, temp_kind):
    """Another writer puts a file at the name while this one writes: this one
    fails with a named error, the other's file stays, nothing else is left."""
    path = tmp_path / "view.parquet"
    with pytest.raises(OutputExistsError, match="exists \\(written meanwhile"), \
            atomic_output(path, suffix=".parquet") as temp:
        with open(temp, "w") as fh:
            fh.write("the loser's")
        path.write_text("the winner's")
    assert path.read_text() == "the winner's" and os.listdir(tmp_path) == ["view.parquet"]


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


def test_figures_and_text_follow_the_same_rules(tmp_path, temp_kind):
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
