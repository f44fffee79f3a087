"""publish_to_parquet: the view drawn and written window by window equals
publish(...).to_parquet byte for byte, whatever the window, and holds one
window in memory, not the view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import privpub
from privpub.alphabeta import AlphaBeta, publishing
from privpub.alphabeta.source import SourceDistribution

# Small tables over wide domains: every view says its bound is wide (UsefulnessWarning);
# these tests check that a streamed publish equals one in memory.
pytestmark = pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")


def _same_file_rows(a, b) -> None:
    ta, tb = pq.read_table(a), pq.read_table(b)
    assert ta.equals(tb)
    meta = [privpub.PublishedView.open(p).metadata() for p in (a, b)]
    assert meta[0] == meta[1]


@pytest.mark.parametrize("window", [1, 3, 64])
def test_adult_streamed_equals_in_memory(tmp_path, monkeypatch, window):
    df, schema = privpub.datasets.load_adult()
    mech = AlphaBeta.for_privacy(schema, n=len(df), gamma=0.2, k=10)
    whole = mech.publish(df, seed=5, duplicates="records")
    whole.to_parquet(tmp_path / "whole.parquet")
    monkeypatch.setattr(publishing, "WINDOW_SEGMENTS", window)
    seen = []
    streamed = mech.publish_to_parquet(df, tmp_path / "streamed.parquet", seed=5,
                                       duplicates="records",
                                       progress=lambda done, total: seen.append((done, total)))
    _same_file_rows(tmp_path / "whole.parquet", tmp_path / "streamed.parquet")
    assert np.array_equal(streamed.codes, whole.codes)
    assert streamed.parameters == whole.parameters
    # Adult's β-step has 19 segments: one progress call per window, ending at the total.
    total = seen[-1][1]
    assert seen[-1] == (total, total) and len(seen) == -(-total // window) and total > 3


def test_streamed_wide_domain_and_source_equal_in_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(publishing, "WINDOW_SEGMENTS", 2)
    wide = privpub.Schema([privpub.IntRange(f"x{i}", 0, 9) for i in range(24)])  # m = 10^24
    frame = pd.DataFrame({f"x{i}": [i % 10, 3, 3] for i in range(24)})
    mech = AlphaBeta(wide, 0.4, 3e-19)  # ≈ 300,000 noise tuples in 5 segments
    whole = mech.publish(frame, duplicates="records", seed=2)
    streamed = mech.publish_to_parquet(frame, tmp_path / "w.parquet", duplicates="records",
                                       seed=2)
    assert whole.codes.shape[1] == 2 and len(whole) > 250_000
    assert np.array_equal(streamed.codes, whole.codes)

    # Algorithm 8: thinning continues its stream across windows.
    small = privpub.Schema([privpub.IntRange("a", 0, 999), privpub.IntRange("b", 0, 999)])
    source = SourceDistribution(small, {"a": np.linspace(1, 2, 1000) / 1500,
                                        "b": np.full(1000, 1e-3)})
    mech = AlphaBeta(small, 0.5, 0.2, source=source)
    data = np.array([3, 70_000, 70_000, 999_999], dtype=np.uint64)
    whole = mech.publish(data, duplicates="records", seed=9)
    streamed = mech.publish_to_parquet(data, tmp_path / "s.parquet", duplicates="records",
                                       seed=9)
    assert np.array_equal(streamed.codes, whole.codes)
    assert streamed.parameters == whole.parameters


def test_windows_split_records_at_segment_edges(tmp_path, monkeypatch):
    """Records sitting on both sides of every segment edge are kept exactly once."""
    monkeypatch.setattr(publishing, "WINDOW_SEGMENTS", 1)
    schema = privpub.Schema([privpub.IntRange("x", 0, 999_999)])
    beta = 0.5
    seg_len, segments = privpub._core.sampling.beta_step_layout(schema.size, beta)
    edges = np.arange(1, segments) * seg_len
    data = np.unique(np.concatenate([edges - 1, edges])).astype(np.uint64)
    mech = AlphaBeta(schema, 0.49, beta)
    whole = mech.publish(data, seed=4)
    streamed = mech.publish_to_parquet(data, tmp_path / "e.parquet", seed=4)
    assert np.array_equal(streamed.codes, whole.codes)
    assert len(np.unique(whole.codes)) == len(whole)  # set semantics: no repeats
