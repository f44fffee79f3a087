"""SIGINT and SIGTERM: held where a step must run whole, never lost elsewhere.

A command stops on SIGINT (Ctrl-C) or SIGTERM by an exception raised where
it is (``KeyboardInterrupt``; :class:`Terminated` for SIGTERM), so that it
unwinds: a file being written is discarded and the old one kept.

Python runs a signal's handler at its next check between bytecodes, in the
main thread, and that can be inside code whose exceptions are ignored: a
``__del__``, a weakref callback, a Python callback that C code (numpy's,
say) reports as "Exception ignored in: dtype('int32')" and goes on. There
the exception is printed and dropped, and a command would run to the end.
:func:`stopping` makes such a signal take effect after that code: an
ignored interrupt (``sys.unraisablehook`` sees it) is handed back to Python
as the same signal a moment later, whose handler then raises again at its
next check; and a signal whose exception never left the command's work
(cleared by C code that reports nothing) is raised when the work returns.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

STOPPING = (signal.SIGINT, signal.SIGTERM)
#: How long after an ignored interrupt its signal is handed back to Python.
HAND_BACK_SECONDS = 0.005


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that it unwinds as Ctrl-C does
    (a file being written is discarded, the previous one left as it was)."""


def interrupt(signum: int) -> KeyboardInterrupt:
    """The exception a stopping signal raises."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextlib.contextmanager
def stopping(exiting: bool = False) -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM raising :func:`interrupt` in the
    main thread, neither lost where Python ignores exceptions (see the
    module's notes); the previous handlers come back afterwards, or, when
    the process exits after the block (``exiting``), the two are ignored
    from then on: one landing while the interpreter exits would otherwise
    kill a command whose work is done, its output still unflushed (Python
    restores the default action, not an ignored one, as it exits). A signal
    the process was started ignoring (``nohup``, a shell's background job)
    stays ignored. Outside the main thread, where handlers cannot be set,
    the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopper = _Stopper(sys.unraisablehook)
    previous = {number: signal.signal(number, stopper.handler) for number in STOPPING
                if signal.getsignal(number) is not signal.SIG_IGN}
    sys.unraisablehook = stopper.hook
    try:
        yield
    except KeyboardInterrupt:
        stopper.received.clear()
        raise
    finally:
        with stopper.lock:  # no handing back from here on: the handler only records
            stopper.active = False
        sys.unraisablehook = stopper.previous_hook
        for number, handler in previous.items():  # None: set outside Python
            signal.signal(number, signal.SIG_IGN if exiting
                          else signal.SIG_DFL if handler is None else handler)
    if stopper.received:  # cleared where nothing reports it: the work went on to its end
        raise interrupt(stopper.received[-1])


class _Stopper:
    """The handler and unraisable hook of :func:`stopping`. ``received`` holds
    the signals whose exception has not yet left the block."""

    def __init__(self, previous_hook: Any):
        self.previous_hook = previous_hook
        self.received: list[int] = []
        self.active = True
        self.lock = threading.Lock()

    def handler(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        if not self.active:
            return
        if _inside(frame, _Stopper.hook.__code__):  # raised there, it would be ignored again
            self.hand_back(signum)
            return
        raise interrupt(signum)

    def hook(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and self.received:
            self.hand_back(self.received[-1])
            return
        self.previous_hook(unraisable)

    def hand_back(self, signum: int) -> None:
        """Have the handler run again for ``signum`` once the code that ignored
        its exception has returned: from a thread, a moment later (handing it
        back at once would run the handler inside this hook)."""
        timer = threading.Timer(HAND_BACK_SECONDS, self._trip, (signum,))
        timer.daemon = True
        timer.start()

    def _trip(self, signum: int) -> None:
        with self.lock:
            if self.active:
                _thread.interrupt_main(signum)


def _inside(frame: Any, code: Any) -> bool:
    """Whether ``frame`` runs ``code`` or was called from a frame that does."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs, then deliver them: the
    block (a rename and its clean-up) runs whole. Outside the main thread,
    where handlers cannot be set, the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for number in STOPPING:
        previous[number] = signal.signal(number, lambda sig, frame: caught.append(sig))
    try:
        yield
    finally:
        for number, handler in previous.items():  # None: a handler set outside Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if caught:
            signal.raise_signal(caught[0])
