"""SIGINT and SIGTERM are never lost (privpub.core.signals).

A handler's exception raised inside code whose exceptions Python ignores (a
``__del__``, a callback numpy reports as "Exception ignored in: dtype(...)")
or that C code clears without a word would let the command run on and exit
0: both take effect afterwards. A rename runs whole, its signals delivered
after it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from privpub import cli
from privpub.cli import publish
from privpub.core.signals import Terminated, deferred_signals, stopping


def wait_for_handler() -> None:
    """Python code after a signal was sent: its handler runs at a check in here."""
    for _ in range(200):
        time.sleep(0.001)


class SignalledWhileFinalised:
    """Sends ``signum`` to this process from ``__del__`` and waits there for the
    handler: the interrupt it raises is one Python prints and ignores."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        wait_for_handler()


class SignalledWhileLookedUp:
    """Sends SIGINT from ``__getattr__``, called by the C function
    PyObject_HasAttr, which clears any exception without reporting it."""

    def __getattr__(self, name):
        os.kill(os.getpid(), signal.SIGINT)
        wait_for_handler()
        raise AttributeError(name)


def has_attribute_in_c(obj: object) -> bool:
    has = ctypes.pythonapi.PyObject_HasAttr
    has.argtypes, has.restype = [ctypes.py_object, ctypes.py_object], ctypes.c_int
    return bool(has(obj, "anything"))


@pytest.mark.parametrize("signum, raised", [(signal.SIGINT, KeyboardInterrupt),
                                            (signal.SIGTERM, Terminated)])
def test_an_interrupt_python_ignores_takes_effect_after_the_ignoring_code(signum, raised,
                                                                          capsys):
    done = []
    with pytest.raises(raised), stopping():
        SignalledWhileFinalised(signum)  # dropped at once: __del__ runs here
        done.append("the finaliser returned")
        wait_for_handler()  # the interrupt, handed back, is raised in here
        done.append("went on")
    assert done == ["the finaliser returned"]
    assert "Exception ignored" not in capsys.readouterr().err  # handed back, not reported


def test_an_interrupt_cleared_silently_is_raised_when_the_work_returns():
    done = []
    with pytest.raises(KeyboardInterrupt), stopping():
        assert not has_attribute_in_c(SignalledWhileLookedUp())
        done.append("went on")
    assert done == ["went on"]  # nothing could stop it earlier; the exit does


def test_other_ignored_exceptions_go_to_the_hook_before(monkeypatch):
    class Failing:
        def __del__(self):
            raise ValueError("a finaliser's own error")

    seen = []
    monkeypatch.setattr("sys.unraisablehook", lambda unraisable: seen.append(unraisable.exc_value))
    with stopping():
        Failing()
    assert [str(e) for e in seen] == ["a finaliser's own error"]


def test_handlers_come_back_and_an_ignored_signal_stays_ignored():
    before = signal.getsignal(signal.SIGTERM)
    original = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stopping():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not before
        assert signal.getsignal(signal.SIGTERM) is before
    finally:
        signal.signal(signal.SIGINT, original)
    with stopping():
        pass
    assert signal.getsignal(signal.SIGINT) is original


@pytest.mark.parametrize("exiting, code", [(True, 0), (False, -signal.SIGTERM)])
def test_a_signal_after_the_work_of_an_exiting_process_is_ignored(exiting, code):
    """A process that exits after the block (the command) ignores SIGTERM from
    then on, through the interpreter's exit, so a command whose work is done
    ends with its own status and its output whole; otherwise the default
    action comes back, as before the block (the check that the test can fail)."""
    program = ("import os, signal, sys, time\n"
               "from privpub.core.signals import stopping\n"
               f"with stopping(exiting={exiting}):\n"
               "    pass\n"
               "print('done')\n"
               "os.kill(os.getpid(), signal.SIGTERM)\n"
               "time.sleep(0.05)\n")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == code, run.stderr
    if exiting:
        assert run.stdout == "done\n"


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


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated")])
def test_the_command_stops_on_a_signal_python_ignored(monkeypatch, capsys, signum, code, said):
    """The command (here publish splu, replaced) meets the signal inside a
    finaliser: it stops with 130 or 143, not 0."""
    def run(args):
        SignalledWhileFinalised(signum)
        wait_for_handler()
        return 0

    monkeypatch.setattr(publish, "_splu", run)
    assert cli.main(["publish", "splu", "--input", "x.csv", "--output", "y.parquet",
                     "--group-size", "2", "--sensitive", "a"]) == code
    assert capsys.readouterr().err.endswith(f"privpub: {said}\n")


@pytest.fixture(scope="module")
def adult_file(tmp_path_factory):
    import privpub

    path = tmp_path_factory.mktemp("input") / "adult.parquet"
    privpub.datasets.load_adult()[0].to_parquet(path)
    return path


def test_an_interrupt_as_a_temporary_directory_is_removed_is_no_bad_file_descriptor(
        adult_file, monkeypatch, capsys):
    """The intermittent `OSError: [Errno 9] Bad file descriptor` of `privpub
    publish alphabeta --force` under SIGINT: shutil.rmtree (Python 3.11)
    closes a directory's descriptor, then notes it closed; an interrupt
    raised between the two makes its `finally` close it again, EBADF (or,
    had another thread opened a file meanwhile, that file). The publish no
    longer removes a temporary directory (view sizes are modelled, not
    measured); `privpub plan` does (SPLU-Gen's view size: one real release
    written and removed), so a SIGINT is placed there, just after the close
    returns. The removal runs whole with the signal held, then the command
    stops as interrupted."""
    real_close, sent = os.close, []

    def close_then_interrupted(fd):
        real_close(fd)
        if not sent and sys._getframe(1).f_code is shutil.rmtree.__code__:
            sent.append(fd)
            os.kill(os.getpid(), signal.SIGINT)
            wait_for_handler()  # Python's check after the close: the handler runs here

    monkeypatch.setattr(os, "close", close_then_interrupted)
    code = cli.main(["plan", "--input", str(adult_file), "--mechanism", "splu",
                     "--sensitive", "occupation"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert sent, "no temporary directory was removed"
    assert code == 130 and err.endswith("privpub: interrupted\n"), err
