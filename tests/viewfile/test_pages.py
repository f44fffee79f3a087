"""The footers a view's page reader keeps (privpub.viewfile.pages.FooterCache):
bounded, keyed by file identity, owned by one view (no module-wide cache)."""

from __future__ import annotations

import os
import pickle
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

from privpub import AlphaBeta, Categorical, PublishedView, Schema
from privpub.viewfile import pages
from privpub.viewfile.pages import FooterCache, PageReader

pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")

SCHEMA = Schema([Categorical("sex", ["F", "M"]), Categorical("city", ["a", "b", "c"])])


def _file(path, rows: int, seed: int) -> str:
    frame = pd.DataFrame({"sex": ["F", "M"] * (rows // 2), "city": ["a", "b"] * (rows // 2)})
    AlphaBeta(SCHEMA, 1.0, 0.0).publish(frame, seed=seed, duplicates="records").to_parquet(path)
    return str(path)


def test_the_cache_is_bounded_and_drops_the_least_recently_used():
    cache, reads = FooterCache(kept=2), []

    def read(key):
        return lambda: reads.append(key) or key.upper()

    assert cache.get(("a",), read("a")) == "A"
    cache.get(("b",), read("b"))
    cache.get(("a",), read("a"))      # kept: not read again, and now the most recent
    cache.get(("c",), read("c"))      # drops b, the least recently used
    assert len(cache) == 2 and reads == ["a", "b", "c"]
    cache.get(("a",), read("a"))
    cache.get(("b",), read("b"))      # read again: it was dropped
    assert reads == ["a", "b", "c", "b"] and len(cache) == 2


def test_a_replaced_or_rewritten_file_is_a_new_key(tmp_path):
    """The footer of a file replaced under the same path (a new inode) or rewritten
    in place (a new size) is read afresh, never the one kept for the old file."""
    small, large = _file(tmp_path / "s.parquet", 4, 0), _file(tmp_path / "l.parquet", 40, 0)
    path = str(tmp_path / "v.parquet")
    shutil.copy(small, path)
    reader = PageReader(SCHEMA)
    assert reader.metadata(path).num_rows == 4
    os.replace(shutil.copy(large, tmp_path / "tmp.parquet"), path)
    assert reader.metadata(path).num_rows == 40
    with open(small, "rb") as src, open(path, "r+b") as dst:  # same inode, new size
        data = src.read()
        dst.write(data)
        dst.truncate(len(data))
    assert reader.metadata(path).num_rows == 4
    fd = os.open(path, os.O_RDONLY)
    try:
        assert sum(rows for rows, _ in reader.layout(fd)) == 4
    finally:
        os.close(fd)
    assert len(reader.footers) == 4  # three identities of pyarrow's, one of the page layout


def test_each_view_owns_its_footers(tmp_path):
    """Two opens of a file keep their own footers (dropped with the view); the
    module holds none."""
    path = _file(tmp_path / "v.parquet", 40, 1)
    first, second = PublishedView.open(path), PublishedView.open(path)
    assert first.rows.pages.footers is not second.rows.pages.footers
    assert len(first.rows.pages.footers) == len(second.rows.pages.footers) == 1  # the open's
    assert first.estimate("sex = 'F'").n_view == 20
    assert len(first.rows.pages.footers) > 1 and len(second.rows.pages.footers) == 1
    assert not [name for name, value in vars(pages).items()
                if isinstance(value, (dict, list, FooterCache)) and not name.startswith("__")]
    assert pq.read_metadata(path).num_rows == 40


def test_a_view_pickles_with_an_empty_cache(tmp_path):
    """A view sent to a Dask task (pickled, as ``to_dask``'s partitions are) takes
    no footers and no lock with it: the copy reads its own."""
    path = _file(tmp_path / "v.parquet", 40, 2)
    opened = PublishedView.open(path)
    opened.estimate("sex = 'F'")
    copy = pickle.loads(pickle.dumps(opened.rows))
    assert len(opened.rows.pages.footers) > 0 and len(copy.pages.footers) == 0
    assert copy.count_many([opened.condition("sex = 'F'")]) == [20]
    assert len(copy.pages.footers) > 0


def test_a_fresh_open_reads_each_footer_once(tmp_path, monkeypatch):
    """The footer the open read to check the part file is the one the first count
    uses: pyarrow reads no footer again (the page reader's own layout is its own)."""
    path = _file(tmp_path / "v.parquet", 40, 3)
    reads = []
    read_metadata = pq.read_metadata
    monkeypatch.setattr(pq, "read_metadata", lambda *a, **k: reads.append(a) or
                        read_metadata(*a, **k))
    opened = PublishedView.open(path)
    assert opened.estimate("sex = 'F'").n_view == 20
    assert opened.estimate_many(["city = 'a'", "sex = 'M'"]).n_view.tolist() == [20, 20]
    assert reads == []
    # Power: a view whose open kept nothing reads the footer at its first count.
    opened = PublishedView.open(path)
    opened.rows.pages.footers = FooterCache()
    assert opened.estimate("sex = 'F'").n_view == 20
    assert len(reads) == 1
