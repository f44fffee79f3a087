"""Writes in real processes: signals at random moments, SIGKILL, racing
writers, a full disk, a read-only mount, a file-size limit, a closed pipe.

Whatever stops `privpub publish --force`, the directory afterwards holds the
old release byte for byte or the new one whole, and nothing else: on Linux
the release is written with no name (O_TMPFILE), so even SIGKILL leaves
nothing, save in the two system calls that put a replacement in place
(privpub.core.temporaries says why), where it leaves a hidden name holding
the whole new release, removed by the next write.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pyarrow.parquet as pq
import pytest

import privpub
from privpub import PublishedView
from privpub.core import temporaries
from privpub.core.temporaries import TEMP_MARK

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [os.path.dirname(os.path.dirname(privpub.__file__)), os.environ.get("PYTHONPATH", "")]))
#: Adult at k = 40: a view of about 4.7M rows, a second or more to draw and write.
BIG = ["--duplicates", "set", "--k", "40", "--yes"]
#: Adult at k = 1, γ = 0.5: a release of about 40,000 rows, written in a few tenths of a second.
SMALL = ["--k", "1", "--gamma", "0.5"]
UNNAMED = pytest.mark.skipif(not temporaries.O_TMPFILE, reason="no O_TMPFILE on this platform")


def digest(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _default_sigint() -> None:
    """In the child before exec: SIGINT as a terminal's Ctrl-C finds it (a
    background job of a non-interactive shell starts with it ignored, and
    privpub keeps an ignored signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def privpub_cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "privpub.cli", *args], env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint)


def leftovers(folder, name: str) -> list[str]:
    """What is in ``folder`` besides ``name``."""
    return sorted(e for e in os.listdir(folder) if e != name)


@pytest.fixture(scope="module")
def adult():
    return privpub.datasets.load_adult()


@pytest.fixture(scope="module")
def adult_file(adult, tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "adult.parquet"
    adult[0].to_parquet(path)
    return path


def _writing(proc: subprocess.Popen, folder) -> bool:
    """Poll until ``proc`` holds a temporary open in ``folder`` (True: an
    unnamed file there, or a hidden name) or ends (False)."""
    fds = f"/proc/{proc.pid}/fd"
    while proc.poll() is None:
        try:
            links = [os.readlink(os.path.join(fds, fd)) for fd in os.listdir(fds)]
        except OSError:  # ended meanwhile, or an fd closed between listdir and readlink
            links = []
        if any(link.startswith(f"{folder}/#") or f"{folder}/." in link and TEMP_MARK in link
               for link in links):
            return True
        time.sleep(0.002)
    return False


def _check_release(path, old_digest: str, rows: int) -> str:
    """The file at ``path`` is the old release, byte for byte, or a whole new one
    (of more than ``rows`` rows); returns its digest."""
    now = digest(path)
    if now != old_digest:
        back = PublishedView.read_parquet(path)  # row groups, row count and every column's digest
        assert len(back) == len(PublishedView.open(path)) > rows
    return now


@pytest.mark.slow
@UNNAMED
def test_signals_at_random_moments_never_lose_the_release(adult_file, tmp_path):
    """`privpub publish alphabeta --force` over an existing release, sent SIGINT,
    SIGTERM or SIGKILL at seeded random moments (while starting, or while the
    view is drawn and written). Afterwards the old release is intact or the new
    one is whole, and nothing else is in the directory."""
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "release.parquet"
    base = ["publish", "alphabeta", "--input", str(adult_file), "--output", str(out), *BIG]
    start = time.monotonic()
    first = privpub_cli(*base, "--seed", "0")
    assert _writing(first, folder)
    writing = time.monotonic()
    stdout, stderr = first.communicate(timeout=600)
    # Scales for the moments: the time to the write, and the time from there to exit.
    startup, write = writing - start, time.monotonic() - writing
    assert first.returncode == 0, stderr
    current = _check_release(out, "", 4_000_000)

    rng = np.random.default_rng(21)
    allowed = {signal.SIGINT: {0, 130}, signal.SIGTERM: {0, 143},
               signal.SIGKILL: {0, -signal.SIGKILL}}
    seen = {"interrupted while writing": 0, "finished": 0}
    seed = 1
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        # One moment early in the write and one anywhere in it: under load a moment
        # drawn from the whole life can fall after the rename every time.
        for phase, share in (("starting", 0), ("writing", 0.25), ("writing", 0.8)):
            seed += 1
            proc = privpub_cli(*base, "--force", "--seed", str(seed))
            if phase == "starting":
                time.sleep(rng.uniform(0, startup))
                was_writing = False
            else:
                was_writing = _writing(proc, folder)
                time.sleep(rng.uniform(0, share * write))
            if proc.poll() is None:
                proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=600)
            if phase == "starting" and proc.returncode == -sig:
                continue  # stopped while Python started, before privpub's handlers
            assert proc.returncode in allowed[sig], (sig, phase, proc.returncode, stderr)
            if proc.returncode == 0:
                seen["finished"] += 1
                assert "published" in stdout
            elif proc.returncode in (130, 143):
                assert stderr.endswith("interrupted\n" if sig == signal.SIGINT
                                       else "terminated\n"), stderr
            current = _check_release(out, current, 4_000_000)
            assert leftovers(folder, out.name) == [], (sig, phase, proc.returncode)
            seen["interrupted while writing"] += was_writing and proc.returncode != 0
    # The moments reached the write: the test has power.
    assert seen["interrupted while writing"] >= 3, seen


#: A process that imports privpub once and forks a child per run (a run of the
#: command without its interpreter's start). Given a delay, it kills the child
#: with SIGKILL then (from the fork, or from the moment the child first holds an
#: unnamed temporary in the folder, for "write"), and says whether the child held
#: one at the kill; given none (negative), it says when the child first held one
#: and when last. It prints the exit code, then the flag or the two times
#: (seconds from the fork).
FORKING = textwrap.dedent("""
    import os, signal, sys, time
    from privpub import cli
    errors, folder, args = sys.argv[1], sys.argv[2], sys.argv[3:]

    def writing(pid):
        fds = f"/proc/{pid}/fd"
        try:
            return any(os.readlink(f"{fds}/{fd}").startswith(folder + "/#")
                       for fd in os.listdir(fds))
        except OSError:  # ended, or a descriptor closed meanwhile
            return False

    def running(pid):  # (not reaped: the pid stays the child's until waitpid)
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None

    def wait_for_write(pid):
        while running(pid) and not writing(pid):
            time.sleep(0.0005)

    for line in sys.stdin:
        start_at, delay, seed = line.split()
        pid = os.fork()
        if pid == 0:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            os._exit(cli.main([*args, "--seed", seed]))
        start, said = time.monotonic(), []
        if float(delay) >= 0:
            if start_at == "write":
                wait_for_write(pid)
            time.sleep(float(delay))
            said.append(float(writing(pid)))
            os.kill(pid, signal.SIGKILL)  # (a zombie, if it ended: not another's)
        else:
            first = last = -1.0
            while running(pid):
                if writing(pid):
                    last = time.monotonic() - start
                    first = last if first < 0 else first
                time.sleep(0.001)
            said = [first, last]
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), *said, flush=True)
""")


@pytest.mark.slow
@UNNAMED
def test_sigkill_at_random_moments_leaves_the_old_release_or_the_new_whole(adult_file,
                                                                           tmp_path):
    """`privpub publish alphabeta --force` (a release of 40,000 rows) SIGKILLed
    at 200 seeded random moments of its run: afterwards the file is the old
    release byte for byte or a whole new one, and nothing else is in the
    directory (but for the two system calls of a replacement, counted, whose
    hidden name holds the new release whole and is removed by the next write)."""
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "release.parquet"
    errors = tmp_path / "stderr.txt"
    args = ["publish", "alphabeta", "--input", str(adult_file), "--output", str(out),
            "--duplicates", "set", *SMALL, "--force"]
    forking = subprocess.Popen([sys.executable, "-c", FORKING, str(errors), str(folder), *args],
                               env=ENV, text=True, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)

    def run(delay: float, seed: int, start_at: str = "fork") -> tuple[int, list[float]]:
        forking.stdin.write(f"{start_at} {delay} {seed}\n")
        forking.stdin.flush()
        code, *said = forking.stdout.readline().split()
        assert int(code) in (0, -signal.SIGKILL), (code, errors.read_text())
        return int(code), [float(x) for x in said]

    try:
        took = []
        for seed in range(3):  # whole runs: when the write begins and ends, and the run's
            begun = time.monotonic()
            took.append((*run(-1, seed)[1], time.monotonic() - begun))
        first, last, ends = (sorted(t)[1] for t in zip(*took, strict=True))
        assert 0 < first <= last < ends, took  # the write was seen
        current = _check_release(out, "", 30_000)
        rng = np.random.default_rng(35)
        seen = {"killed": 0, "killed writing": 0, "finished": 0, "linked": 0}
        seed = 100
        while seen["killed"] < 200:
            seed += 1
            assert seed < 1000, seen  # a hang guard: kills must land
            # Every other moment in the write (most of a run is before and after it).
            code, (writing,) = (run(rng.uniform(0, 1.2 * (last - first)), seed, "write")
                                if seed % 2 else run(rng.uniform(0, 1.2 * ends), seed))
            seen["killed"] += code == -signal.SIGKILL
            seen["killed writing"] += code == -signal.SIGKILL and writing == 1
            seen["finished"] += code == 0
            current = _check_release(out, current, 30_000)
            for name in leftovers(folder, out.name):
                # Killed between linking the whole new release and renaming it.
                assert name.startswith(f".{out.name}{TEMP_MARK}"), name
                assert len(PublishedView.read_parquet(folder / name)) > 30_000
                seen["linked"] += 1
                os.rename(folder / name, tmp_path / f"linked-{seen['linked']}")  # seen: aside
        run(-1, 999)
        _check_release(out, current, 30_000)
        assert leftovers(folder, out.name) == []
    finally:
        forking.stdin.close()
        forking.wait(timeout=600)
    # Many kills landed while the release was written (the test has power), and
    # some runs finished first; the replacement's window is rarely hit.
    assert seen["killed writing"] >= 50 and seen["finished"] >= 1 and seen["linked"] <= 2, seen


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


# ---- a full disk, a read-only mount, a file-size limit, a closed pipe ---------------------------


def _publish(source, out, *extra) -> list[str]:
    return [sys.executable, "-m", "privpub.cli", "publish", "alphabeta", "--input", str(source),
            "--output", str(out), "--duplicates", "set", "--seed", "1", *extra]


@pytest.fixture(scope="module")
def old_release(adult_file, tmp_path_factory):
    """A small release (k = 1, γ = 0.5: 40,000 rows), over which the tests below
    fail to put a larger one (the default k = 10: 1.2M rows, megabytes)."""
    path = tmp_path_factory.mktemp("old") / "release.parquet"
    subprocess.run(_publish(adult_file, path, *SMALL), env=ENV, check=True, capture_output=True)
    return path


def _in_a_mount_namespace(script: str, **variables: str) -> subprocess.CompletedProcess:
    """``script`` (sh) as root of a new user and mount namespace, where it can
    mount a small or read-only filesystem that nobody else sees."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no user namespaces here: {probe.stderr.decode().strip()}")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                          text=True, env={**ENV, **variables}, timeout=600)


LIMITED = """
    set -e
    mount -t tmpfs -o size="$SIZE" none "$DIR"
    cp "$OLD" "$DIR/release.parquet"
    {after_copy}
    set +e
    "$PYTHON" -m privpub.cli publish alphabeta --input "$INPUT" --output "$DIR/release.parquet" \\
        --duplicates set --seed 2 --force 2> "$DIR.err"
    echo "exit $?"
    sha256sum "$DIR/release.parquet" | cut -d' ' -f1
    ls -A "$DIR"
"""


@pytest.mark.slow
@pytest.mark.parametrize("limit", ["a full disk", "a read-only mount"])
def test_a_full_or_read_only_filesystem_leaves_the_old_release_and_nothing_else(
        old_release, adult_file, tmp_path, limit):
    after_copy = "mount -o remount,ro none \"$DIR\"" if limit == "a read-only mount" else ""
    mount = tmp_path / "mnt"
    mount.mkdir()
    size = os.path.getsize(old_release) + 256 * 1024  # the new release is megabytes
    done = _in_a_mount_namespace(textwrap.dedent(LIMITED.format(after_copy=after_copy)),
                                 SIZE=str(size), DIR=str(mount), OLD=str(old_release),
                                 INPUT=str(adult_file), PYTHON=sys.executable)
    assert done.returncode == 0, done.stderr
    code, sha, *listing = done.stdout.split("\n")[:-1]
    err = (tmp_path / "mnt.err").read_text()
    assert code == "exit 1", err
    assert ("No space left on device" if limit == "a full disk" else "Read-only file system") \
        in err.splitlines()[-1], err
    assert sha == digest(old_release) and listing == ["release.parquet"]


@pytest.mark.slow
def test_a_file_size_limit_leaves_the_old_release_and_nothing_else(old_release, adult_file,
                                                                    tmp_path):
    """RLIMIT_FSIZE (``ulimit -f``) below the new release's size: the write
    fails with EFBIG (Python ignores SIGXFSZ), the old release stays."""
    out = tmp_path / "release.parquet"
    shutil.copy(old_release, out)
    limit = os.path.getsize(old_release) + 256 * 1024

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(_publish(adult_file, out, "--force"), env=ENV, capture_output=True,
                          text=True, preexec_fn=limited, timeout=600)
    assert done.returncode == 1 and "File too large" in done.stderr.splitlines()[-1], \
        done.stderr
    assert digest(out) == digest(old_release) and os.listdir(tmp_path) == ["release.parquet"]


@pytest.mark.slow
def test_standard_output_closed_exits_141_and_leaves_nothing_in_tmpdir(adult_file, tmp_path):
    """`--output -` into a pipe whose reader has gone: exit 141 (as a shell
    reports SIGPIPE), one quiet stop, and the release built in $TMPDIR removed."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = subprocess.Popen(_publish(adult_file, "-", *SMALL), env={**ENV, "TMPDIR": str(tmpdir)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader goes away before a byte is written
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 141, stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    assert os.listdir(tmpdir) == []
