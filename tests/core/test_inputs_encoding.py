"""CSV files in other codecs than UTF-8 (privpub.core.inputs, issue 33).

Without ``encoding``, a file that is not UTF-8 is one ParameterError naming the
file, the first byte that does not decode and the option that fixes it (Arrow
read such cells as bytes, refused later as "unsupported Arrow type binary",
and a header that is not UTF-8 gave the decoder's bare message). With
``encoding``, the file reads as its text. UTF-8 with a byte-order mark reads as
UTF-8 (the first column's name does not start with U+FEFF).
"""

from __future__ import annotations

import bz2
import gzip

import pandas as pd
import pyarrow as pa
import pytest

import privpub
from privpub import ParameterError
from privpub.core import inputs
from privpub.core.inputs import read_table_file, tabular

TEXT = "name,city\nJosé,Zürich\nAnna,Köln\n"
#: Where TEXT's first non-ASCII byte is ("name,city\nJos"), in Latin-1 and UTF-8 alike.
FIRST = len("name,city\nJos")
ROWS = {"name": ["José", "Anna"], "city": ["Zürich", "Köln"]}


@pytest.fixture
def latin1(tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(TEXT.encode("latin-1"))
    return path


def _refusal(call, *args, **kwargs) -> str:
    with pytest.raises(ParameterError) as ei:
        call(*args, **kwargs)
    message = str(ei.value)
    assert "\n" not in message
    return message


def test_latin1_without_encoding_names_the_file_the_byte_and_the_fix(latin1):
    message = _refusal(read_table_file, latin1)
    assert repr(str(latin1)) in message and "is not utf-8 text" in message
    assert f"byte {FIRST} (0xe9)" in message
    assert "pass --encoding latin-1 (or the file's codec" in message
    assert "encoding='latin-1' in the API" in message


@pytest.mark.parametrize("reader", [
    lambda path: privpub.Schema.from_frame(path),
    lambda path: tabular(path),
    lambda path: privpub.SPLUGen(2, "city").publish(path, seed=1),
    lambda path: read_table_file(path, column_types={"name": pa.string()}),  # a --schema's
], ids=["Schema.from_frame", "tabular", "publish", "typed"])
def test_every_path_that_reads_a_csv_path_says_the_same(latin1, reader):
    message = _refusal(reader, latin1)
    assert f"byte {FIRST} (0xe9)" in message and "--encoding latin-1" in message


def test_a_header_that_is_not_utf8(tmp_path):
    path = tmp_path / "header.csv"
    path.write_bytes("näme,city\nx,y\n".encode("latin-1"))
    assert "byte 1 (0xe4)" in _refusal(read_table_file, path)
    assert read_table_file(path, encoding="latin-1").column_names == ["näme", "city"]


@pytest.mark.parametrize("encoding", ["latin-1", "ISO-8859-1", "cp1252"])
def test_the_files_codec_reads_its_text(latin1, encoding):
    assert read_table_file(latin1, encoding=encoding).to_pydict() == ROWS
    assert tabular(latin1, encoding=encoding).to_pydict() == ROWS


@pytest.mark.parametrize(("suffix", "compress"), [(".csv.gz", gzip.compress),
                                                  (".csv.bz2", bz2.compress)])
def test_compressed_files_name_the_byte_of_their_text(tmp_path, suffix, compress):
    path = tmp_path / f"people{suffix}"
    path.write_bytes(compress(TEXT.encode("latin-1")))
    assert f"byte {FIRST} of its decompressed text (0xe9)" in _refusal(read_table_file, path)
    assert read_table_file(path, encoding="latin-1").to_pydict() == ROWS


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 64])
def test_the_byte_is_found_across_chunk_edges(tmp_path, monkeypatch, chunk):
    """Two-byte UTF-8 characters split by the edge of a read decode; the offset of the
    first bad byte is the whole file's."""
    monkeypatch.setattr(inputs, "DECODE_CHUNK", chunk)
    data = "a,b\néé,üü\n".encode() + "x,ñ\n".encode("latin-1")
    path = tmp_path / "mixed.csv"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8")
    assert f"byte {whole.value.start} (0xf1)" in _refusal(read_table_file, path)
    # A sequence cut short by the end of the file is named too.
    path.write_bytes(data[:whole.value.start] + b"\xc3")
    assert f"byte {whole.value.start} (0xc3)" in _refusal(read_table_file, path)


def test_another_codec_that_fails_is_named(latin1):
    message = _refusal(read_table_file, latin1, encoding="ascii")
    assert "is not ascii text" in message and f"byte {FIRST} (0xe9)" in message


@pytest.mark.parametrize(("call", "expected"), [
    (lambda csv, pq: read_table_file(csv, encoding="klingon"),
     "encoding='klingon' (--encoding) is not a codec Python knows"),
    (lambda csv, pq: read_table_file(pq, encoding="latin-1"),
     "encoding='latin-1' (--encoding) is for CSV files; Parquet stores text as UTF-8"),
    (lambda csv, pq: tabular(pd.DataFrame(ROWS), encoding="latin-1"),
     "encoding='latin-1' is for a CSV file's path; a DataFrame holds text already decoded"),
])
def test_an_encoding_that_cannot_apply_is_refused(latin1, tmp_path, call, expected):
    parquet = tmp_path / "people.parquet"
    pd.DataFrame(ROWS).to_parquet(parquet)
    assert expected in _refusal(call, latin1, parquet)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("encoding", [None, "utf-8", "utf-8-sig", "UTF8"])
def test_utf8_with_a_byte_order_mark(tmp_path, suffix, encoding):
    data = b"\xef\xbb\xbf" + TEXT.encode()
    path = tmp_path / f"bom{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    table = read_table_file(path, encoding=encoding)
    assert table.column_names == ["name", "city"] and table.to_pydict() == ROWS
    # Typed by a schema (names matched against the header), and through the public paths.
    schema = privpub.Schema([privpub.Categorical("name", ["Anna", "José"]),
                             privpub.Categorical("city", ["Köln", "Zürich"])])
    assert read_table_file(path, column_types=schema.csv_types(),
                           encoding=encoding).to_pydict() == ROWS
    view = privpub.SPLUGen(2, "city", schema=schema).publish(path, seed=1)
    assert view.estimate("name = 'José'").value == 1
