"""prefetched: a stream made one item ahead on a thread, in order, errors where they arose."""

from __future__ import annotations

import threading

import pytest

from privpub.core.prefetch import prefetched


def test_items_come_in_order_and_all_of_them():
    assert list(prefetched(range(1000))) == list(range(1000))
    assert list(prefetched([])) == []


def test_items_are_made_on_another_thread_one_ahead():
    made_on, taken = [], []

    def items():
        for i in range(5):
            made_on.append(threading.get_ident())
            yield i

    stream = prefetched(items(), depth=1)
    for i in stream:
        taken.append(i)
    assert taken == list(range(5))
    assert threading.get_ident() not in made_on


def test_an_error_while_making_an_item_is_raised_at_that_item():
    def items():
        yield 1
        yield 2
        raise ValueError("row 3 is bad")

    got = []
    with pytest.raises(ValueError, match="row 3 is bad"):
        for item in prefetched(items()):
            got.append(item)
    assert got == [1, 2]


def test_a_caller_that_stops_early_stops_the_thread_and_closes_the_source():
    closed = threading.Event()

    def items():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    stream = prefetched(items(), depth=2)
    assert next(stream) == 0
    stream.close()
    assert closed.is_set()  # closed on the producer thread before close() returned
    assert not any(t.name == "privpub-prefetch" and t.is_alive()
                   for t in threading.enumerate())


def test_then_runs_on_the_thread_and_its_error_closes_the_source():
    """``then`` converts each item on the producer thread; when it fails, the error
    is raised at that item and the source is closed at once (not left to the
    garbage collector, which the error's traceback would delay)."""
    threads, closed = [], []

    def source():
        try:
            yield from range(5)
        finally:
            closed.append(True)

    def then(item):
        threads.append(threading.current_thread())
        if item == 2:
            raise ValueError("item 2")
        return item * 10

    seen = []
    with pytest.raises(ValueError, match="item 2") as info:
        for item in prefetched(source(), then=then):
            seen.append(item)
    assert seen == [0, 10] and closed == [True]
    assert threading.current_thread() not in threads
    assert info.value is not None
