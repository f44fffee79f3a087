"""Hostile Parquet pages and footers (issue 34): each ends in the right count or a
named privpub error within 5 s and bounded memory, never a hang, panic, abort or
traceback, through ``PublishedView.open(f).estimate(...)``,
``PublishedView.read_parquet(f)`` and ``privpub estimate``.

The page reader (rust/src/pages.rs, on the ``polars-parquet-format`` crate) is
tested field by field in Rust; here the hostile files go through the whole
library in a worker process (a hang or an abort fails the test, not the run):
unknown header fields of every Thrift type, lists claiming 2^62 elements, a list
of 2^31 − 1 booleans (a byte each in the compact protocol), huge strings, deep
nesting, a map of bool → bool, sizes past the file, a dictionary page claiming
2^31 − 1 bytes, codec 99 in the footer. The slow run adds a grammar-aware fuzz of
page headers, dictionary pages, data pages and footers."""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from parquet_edit import (
    BINARY,
    BOOL_ELEMENT,
    CODEC,
    COMPRESSED,
    DICT_OFFSET,
    I32,
    I64,
    LIST,
    STRUCT,
    Layout,
    encode,
    field,
    unknown_field,
    varint,
    with_field,
)

from privpub import AlphaBeta, Categorical, IntRange, PrivpubError, PublishedView, Schema, _core

CITIES = [f"c{i:04d}" for i in range(300)]
SCHEMA = Schema([Categorical("sex", ["F", "M"]), IntRange("age", 0, 99),
                 Categorical("city", CITIES)])
QUERY = "sex = 'F' AND city IN ('c0001', 'c0002')"  # reads sex and city
SECONDS = 5.0  # CPU seconds, each read of a hostile file (a hang: the 30 s wall guard)
MAX_RSS_KB = 1_500_000  # the worker's peak: the interpreter and libraries take ~300 MB

pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning",
                                        "ignore::privpub.PrivacyWarning")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A view file written by privpub (columns sex, age, city: a dictionary page
    and a data page each, Snappy) and the estimate of QUERY on it."""
    rng = np.random.default_rng(0)
    n = 500
    records = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(0, 100, n),
                            "city": rng.choice(CITIES[:50], n)})
    view = AlphaBeta.for_privacy(SCHEMA, n=n, gamma=0.2, k=10).publish(
        records, seed=1, duplicates="records")
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "view.parquet"
    view.to_parquet(path)
    return path, PublishedView.open(path).estimate(QUERY).value, folder


# ---- the worker: every read of every case, each timed, in its own process ------------------------

_WORKER = textwrap.dedent("""
    import contextlib, io, json, os, sys, warnings
    warnings.simplefilter("ignore")
    from privpub import PrivpubError, PublishedView
    from privpub.cli import main

    query = sys.argv[1]

    def cli(path):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["estimate", path, query, "--format", "json"])
        if rc == 0:
            return "count", json.loads(out.getvalue())[0]["value"]
        message = err.getvalue().strip()
        if rc == 1 and message.startswith("privpub: error: ") and "Traceback" not in message:
            return "error", message
        return "failure", f"exit {rc}: {message}"

    actions = {
        "open": lambda p: ("count", PublishedView.open(p).estimate(query).value),
        "read_parquet": lambda p: ("count", PublishedView.read_parquet(p).estimate(query).value),
        "cli": cli,
    }
    def peak_kb():  # this process's own peak (VmHWM): ru_maxrss keeps the peak of the
        with open("/proc/self/status") as fh:  # process it was forked from (an xdist worker)
            return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))

    def cpu():  # CPU seconds of this worker and its finished children (the CLI's):
        t = os.times()  # bounded work, whatever else the shared machine is running
        return t.user + t.system + t.children_user + t.children_system

    for line in sys.stdin:
        name, path = json.loads(line)
        for action, run in actions.items():
            print(json.dumps({"case": name, "action": action, "start": True}), flush=True)
            start = cpu()
            try:
                outcome, detail = run(path)
            except PrivpubError as exc:
                outcome, detail = "error", f"{type(exc).__name__}: {exc}"[:300]
            except BaseException as exc:  # noqa: BLE001 (any other is the failure reported)
                outcome, detail = "failure", f"{type(exc).__name__}: {exc}"[:300]
            print(json.dumps({"case": name, "action": action, "outcome": outcome,
                              "detail": detail, "seconds": cpu() - start,
                              "rss_kb": peak_kb()}),
                  flush=True)
""")


def _reads(cases: list[tuple[str, Path]]) -> list[dict]:
    """Each case read three ways by one worker process; a read that prints nothing
    for 30 s (a hang) or a worker that dies (an abort) fails, naming the case."""
    worker = subprocess.Popen([sys.executable, "-c", _WORKER, QUERY], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "RAYON_NUM_THREADS": "1"})
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in worker.stdout] + [lines.put(None)],
                     daemon=True).start()
    worker.stdin.write("".join(json.dumps([n, str(p)]) + "\n" for n, p in cases))
    worker.stdin.close()
    results, current = [], None
    try:
        while True:
            try:
                line = lines.get(timeout=30)
            except queue.Empty:
                pytest.fail(f"{current}: no answer within 30 s (a hang)")
            if line is None:
                break
            record = json.loads(line)
            if record.get("start"):
                current = (record["case"], record["action"])
            else:
                results.append(record)
                current = None
        worker.wait(timeout=30)
    finally:
        worker.kill()
    with worker.stdout, worker.stderr:  # closed here, not left to the collector
        assert current is None and worker.returncode == 0, \
            f"{current}: the worker died (exit {worker.returncode}): {worker.stderr.read()[-2000:]}"
    return results


def _check(results: list[dict], expected: float) -> dict[str, set[str]]:
    """Every read a right count or a named error, within SECONDS and MAX_RSS_KB;
    per case, the outcomes seen."""
    seen: dict[str, set[str]] = {}
    for r in results:
        where = f"{r['case']} through {r['action']}: {r['detail']}"
        assert r["outcome"] in ("count", "error"), where
        if r["outcome"] == "count":
            assert r["detail"] == expected, f"{where} (a wrong count; {expected} expected)"
        assert r["seconds"] < SECONDS, f"{where}: {r['seconds']:.1f} s"
        assert r["rss_kb"] < MAX_RSS_KB, f"{where}: {r['rss_kb'] / 1e6:.1f} GB"
        seen.setdefault(r["case"], set()).add(r["outcome"])
    return seen


# ---- the hostile cases --------------------------------------------------------------------------

SEX, AGE, CITY = 0, 1, 2  # the chunks of the one row group


def _header_field(path: Path, out: Path, chunk: int, page: int, extra: bytes) -> Path:
    """The file with ``extra`` (raw field bytes) added to a page header."""
    layout = Layout(path.read_bytes())
    pages = layout.chunks[chunk]
    pages[page][1] = with_field(pages[page][1], extra)
    out.write_bytes(layout.bytes())
    return out


def _header_value(path: Path, out: Path, chunk: int, page: int, fid: int, value: int) -> Path:
    layout = Layout(path.read_bytes())
    fields = layout.chunks[chunk][page][0]
    field(fields, fid)[2] = value
    layout.chunks[chunk][page][1] = encode(STRUCT, fields)
    out.write_bytes(layout.bytes())
    return out


def _footer(path: Path, out: Path, edit=None, tail: bytes = b"") -> Path:
    layout = Layout(path.read_bytes())
    layout.tail = tail
    out.write_bytes(layout.bytes(edit))
    return out


def _set_column(chunk: int, fid: int, value: int):
    def edit(meta):
        columns = [c for g in field(meta, 4)[2][1] for c in field(g, 1)[2][1]]
        fields = field(columns[chunk], 3)[2]
        if any(f[0] == fid for f in fields):
            field(fields, fid)[2] = value
        else:
            fields.append([fid, I64, value])
            fields.sort(key=lambda f: f[0])
    return edit


def _every_type() -> list[tuple[str, bytes]]:
    """An unknown field of each Thrift type, well formed (to be passed over).
    Booleans in a list or map are a byte each, 1 or 2 (true, false), under element
    type 1: what Thrift's Java and C++ writers put (the compact-protocol spec says
    type 2 and false 0; the page reader's crate refuses those, and pyarrow reads
    such a chunk instead)."""
    return [(f"unknown {name}", unknown_field(kind, value)) for name, kind, value in [
        ("true", 1, b""), ("false", 2, b""), ("i8", 3, b"\x07"), ("i16", 4, b"\x80\x01"),
        ("i32", 5, b"\x81\x01"), ("i64", 6, b"\xff\xff\x01"), ("double", 7, b"\x00" * 8),
        ("binary", 8, b"\x03abc"), ("list<i32>", 9, b"\x35\x02\x04\x06"),
        ("set<i8>", 10, b"\x23\x01\x02"), ("map<i32,i32>", 11, b"\x02\x55\x02\x04\x06\x08"),
        ("struct", 12, b"\x15\x04\x18\x01x\x00"), ("list<bool>", 9, b"\x31\x01\x02\x01"),
        ("map<bool,bool>", 11, b"\x02\x11\x01\x02\x02\x01")]]


def _hostile_fields() -> list[tuple[str, bytes]]:
    return [
        ("list of 2^62 bools", unknown_field(LIST, bytes([0xF0 | BOOL_ELEMENT]) + varint(2**62)
                                             + b"\x01" * 8)),
        ("list of 2^62 i64", unknown_field(LIST, b"\xf6" + varint(2**62) + b"\x01" * 8)),
        ("list of 2^31-1 bools", unknown_field(LIST, bytes([0xF0 | BOOL_ELEMENT])
                                               + varint(2**31 - 1) + b"\x01" * 8)),
        ("set of 2^31-1 bools (type 2)", unknown_field(10, b"\xf2" + varint(2**31 - 1)
                                                       + b"\x01" * 8)),
        ("map of 2^31-1 bool->bool", unknown_field(11, varint(2**31 - 1) + b"\x11" + b"\x01" * 8)),
        ("string of 2^40 bytes", unknown_field(BINARY, varint(2**40) + b"abc")),
        ("structs 10,000 deep", unknown_field(STRUCT, b"\x1c" * 10_000)),
        ("lists 10,000 deep", unknown_field(LIST, b"\x19" * 10_000)),
        ("a varint without end", unknown_field(I32, b"\xff" * 64)),
        ("an unknown type", unknown_field(14, b"\x00\x00")),
    ]


def _cases(path: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    """Each hostile file and what it must give: "count" (every read right),
    "error" (every read a named error), or "either" (each read one or the other)."""
    cases: dict[str, tuple[Path, str]] = {}

    def add(name, made, want):
        cases[name] = (made, want)

    n = 0
    for name, extra in _every_type():
        for chunk, page in [(SEX, 0), (CITY, 0), (CITY, 1)]:
            n += 1
            add(f"{name} in page {page} of chunk {chunk}",
                _header_field(path, folder / f"h{n}.parquet", chunk, page, extra), "count")
    for name, extra in _hostile_fields():
        for chunk, page in [(CITY, 0), (CITY, 1)]:
            n += 1
            add(f"{name} in page {page} of chunk {chunk}",
                _header_field(path, folder / f"h{n}.parquet", chunk, page, extra), "either")
        n += 1
        add(f"{name} in the footer", _footer(path, folder / f"h{n}.parquet", tail=extra),
            "either")
    add("a page size past the file",
        _header_value(path, folder / "size.parquet", CITY, 1, 3, 2**30), "either")
    add("a dictionary page claiming 2^31-1 bytes",
        _header_value(path, folder / "dict.parquet", CITY, 0, 2, 2**31 - 1), "either")
    add("codec 99 in the footer",
        _footer(path, folder / "codec.parquet", _set_column(CITY, CODEC, 99)), "either")
    add("a chunk size past the file",
        _footer(path, folder / "chunk.parquet", _set_column(CITY, COMPRESSED, 2**40)), "either")
    add("a dictionary offset past the file",
        _footer(path, folder / "offset.parquet", _set_column(CITY, DICT_OFFSET, 2**40)),
        "either")
    return cases


def test_the_layout_helper_writes_the_same_file(release):
    """(The cases' files are laid out again: an untouched one reads as the original.)"""
    path, expected, folder = release
    same = folder / "same.parquet"
    same.write_bytes(Layout(path.read_bytes()).bytes())
    assert PublishedView.open(same).estimate(QUERY).value == expected


def test_hostile_pages_and_footers_are_counts_or_named_errors(release):
    path, expected, folder = release
    cases = _cases(path, folder)
    seen = _check(_reads([(name, made) for name, (made, _) in cases.items()]), expected)
    assert set(seen) == set(cases)
    for name, (_, want) in cases.items():
        if want != "either":
            assert seen[name] == {want}, name
    codec = cases["codec 99 in the footer"][0]
    with pytest.raises(PrivpubError):
        PublishedView.read_parquet(codec).estimate(QUERY)


def test_codec_99_is_refused_by_the_privpub_command(release):
    """The real command, in its own process: pyarrow's ``.compression`` used to
    abort it (SIGABRT, exit 134) on this footer."""
    path, _, folder = release
    bad = _footer(path, folder / "codec99.parquet", _set_column(CITY, CODEC, 99))
    done = subprocess.run([sys.executable, "-m", "privpub", "estimate", str(bad), QUERY],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("privpub: error: ") and "Traceback" not in done.stderr


# ---- the extension's entry points, directly -----------------------------------------------------

def _dictionary_chunk(extra: bytes = b"") -> bytes:
    """A dictionary page of 2 strings (PLAIN, uncompressed), ``extra`` raw fields
    added to its header."""
    body = b"".join(len(s).to_bytes(4, "little") + s for s in (b"F", b"M"))
    size = varint(2 * len(body))
    header = b"\x15\x04\x15" + size + b"\x15" + size + b"\x4c\x15\x04\x15\x00\x00\x00"
    return with_field(header, extra) + body


def test_a_plain_dictionary_page_reads():
    end, values = _core.parquet.dictionary_page(_dictionary_chunk(), False, "BYTE_ARRAY")
    assert values == ["F", "M"] and end == len(_dictionary_chunk())
    for _, extra in _every_type():
        assert _core.parquet.dictionary_page(_dictionary_chunk(extra), False, "BYTE_ARRAY")[1] == \
            ["F", "M"]


@pytest.mark.parametrize("name,extra", _hostile_fields(), ids=[n for n, _ in _hostile_fields()])
def test_a_hostile_header_field_is_a_named_error_at_once(name, extra):
    with pytest.raises(PrivpubError, match="malformed Parquet column chunk: page header"):
        _core.parquet.dictionary_page(_dictionary_chunk(extra), False, "BYTE_ARRAY")


def test_a_footer_the_reader_refuses_is_named():
    tail = encode(STRUCT, [[1, I32, 1]])
    for extra in (b"", *(e for _, e in _hostile_fields())):
        footer = with_field(tail, extra)
        data = b"PAR1" + footer + len(footer).to_bytes(4, "little") + b"PAR1"
        with pytest.raises(PrivpubError, match="unreadable Parquet footer"):
            _core.parquet.footer(data, len(data))
    with pytest.raises(PrivpubError, match="does not end in PAR1"):
        _core.parquet.footer(b"PAR1xxxx", 8)


# ---- the fuzz (slow) ----------------------------------------------------------------------------

_INTS = (I32, I64)  # (page headers' integer fields are I32)
_INTERESTING = [0, 1, -1, 2, 3, 7, 8, 127, 128, 2**15, 2**31 - 1, -2**31, 2**40, 2**62]


def _mutant(layout_bytes: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One grammar-aware mutation: of a page header (a field's value or type, a
    field dropped, a hostile unknown field, truncated), of a dictionary or data
    page's body (a length, the bit width, run headers, bytes flipped, truncated),
    or of the footer (a chunk's codec, offsets, sizes, types, row counts, a
    hostile unknown field)."""
    layout = Layout(layout_bytes)
    kind = rng.choice(["header", "header", "dictionary", "data", "footer", "footer"])
    chunk = rng.randrange(len(layout.chunks))
    pages = layout.chunks[chunk]
    if kind == "header":
        page = rng.randrange(len(pages))
        fields, raw, _ = pages[page]
        how = rng.choice(["value", "nested value", "type", "drop", "field", "truncate"])
        if how == "value":
            target = rng.choice([f for f in fields if f[1] in _INTS])
            target[2] = rng.choice(_INTERESTING)
            pages[page][1] = encode(STRUCT, fields)
        elif how == "nested value":
            inner = next((f[2] for f in fields if f[1] == STRUCT), None)
            ints = [f for f in inner or [] if f[1] in _INTS]
            if ints:
                rng.choice(ints)[2] = rng.choice(_INTERESTING)
            pages[page][1] = encode(STRUCT, fields)
        elif how == "type":
            raw = bytearray(raw)
            raw[0] = (raw[0] & 0xF0) | rng.randrange(16)
            pages[page][1] = bytes(raw)
        elif how == "drop" and len(fields) > 1:
            fields.remove(rng.choice(fields))
            pages[page][1] = encode(STRUCT, fields)
        elif how == "truncate":
            pages[page][1] = raw[:rng.randrange(len(raw))]
        else:
            pages[page][1] = with_field(raw, rng.choice(_hostile_fields() + _every_type())[1])
        what = f"{how} in the header of page {page} of chunk {chunk}"
    elif kind in ("dictionary", "data"):
        page = 0 if kind == "dictionary" else len(pages) - 1
        body = bytearray(pages[page][2])
        how = rng.choice(["flip", "flip", "truncate", "extend", "head"])
        if how == "flip" and body:
            for _ in range(rng.randint(1, 4)):
                body[rng.randrange(len(body))] = rng.randrange(256)
        elif how == "truncate":
            del body[rng.randrange(len(body) + 1):]
        elif how == "extend":
            body += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        else:  # the first bytes: a length prefix, the levels' length, a bit width
            at = rng.randrange(min(8, len(body) or 1))
            if body:
                body[at] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, 33, 64])
        pages[page][2] = bytes(body)
        what = f"{how} in the {kind} page of chunk {chunk}"
    else:
        how = rng.choice(["column", "column", "group", "field", "schema"])
        if how == "column":
            fid = rng.choice([1, 4, 5, 6, 7, 9, 11])
            value = rng.choice(_INTERESTING + [99, 5, 6])
            edit = _set_column(chunk, fid, value)
            what = f"column field {fid} = {value} of chunk {chunk}"
        elif how == "group":
            value = rng.choice(_INTERESTING)

            def edit(meta, value=value):
                field(field(meta, 4)[2][1][0], 3)[2] = value
            what = f"row group rows = {value}"
        elif how == "schema":
            value = rng.choice([0, 1, 2, 3, -1])
            leaf = rng.randrange(1, 4)

            def edit(meta, value=value, leaf=leaf):
                element = field(meta, 2)[2][1][leaf]
                found = [f for f in element if f[0] == 3]
                if found:
                    found[0][2] = value
            what = f"schema element {leaf} repetition = {value}"
        else:
            layout.tail = rng.choice(_hostile_fields() + _every_type())[1]
            edit, what = None, "an unknown field in the footer"
        return f"footer: {what}", layout.bytes(edit)
    return what, layout.bytes()


@pytest.mark.slow
@pytest.mark.parametrize("batch", range(8))
def test_fuzzed_pages_and_footers_are_counts_or_named_errors(release, batch):
    """2,048 grammar-aware mutations (8 batches of 256), each read three ways."""
    path, expected, folder = release
    rng = random.Random(34_000 + batch)
    original = path.read_bytes()
    cases = []
    for i in range(256):
        what, data = _mutant(original, rng)
        made = folder / f"fuzz{batch}-{i}.parquet"
        made.write_bytes(data)
        cases.append((f"#{batch}-{i} {what}", made))
    results = _reads(cases)
    seen = _check(results, expected)
    assert len(seen) == 256
    # The mutations reach both ends (measured: about half the reads count).
    outcomes = [r["outcome"] for r in results]
    assert outcomes.count("count") > len(outcomes) / 5
    assert outcomes.count("error") > len(outcomes) / 5
    for _, made in cases:
        made.unlink()
