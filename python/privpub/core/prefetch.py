"""Producing a stream's next item while the caller uses the current one.

Writing a view is two kinds of work: making each batch (drawing the β-step,
decoding codes to digits: Rust, the GIL released) and encoding it to Parquet
(pyarrow, the GIL released). :func:`prefetched` runs the first on a thread so
that both cores work, holding at most ``depth`` finished items besides the
one the caller has and the one being made: memory stays bounded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")

_DONE = object()
#: How often a producer blocked on a full queue looks whether the caller left.
_POLL_SECONDS = 0.1


def prefetched(items: Iterable[T], depth: int = 1,
               then: Callable[[T], U] | None = None) -> Iterator[T] | Iterator[U]:
    """``items``, in order, each made on a background thread while the caller
    holds the previous one (and passed through ``then`` there, when given). An
    exception raised while making an item is raised here, at that item; when
    the caller stops early (an error of its own, or closing this generator), or
    an item fails, the thread stops after the item it is making and ``items``
    is closed on it."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        source = iter(items)
        try:
            for item in source:
                if not offer((item if then is None else then(item), None)):
                    return
            offer((_DONE, None))
        except BaseException as exc:  # handed to the caller, raised there
            offer((None, exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="privpub-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, error = ready.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        thread.join()
