"""The view-size model (privpub.tables.viewsize) against files the library writes.

The model's constants were fitted by benches/calibrate_viewsize.py to αβ views
of Adult and corpus tables; the files here are others (FRAPP views, αβ views
under duplicates="records", corpus tables it did not see, one to two row
groups) and each modelled size is within MODEL_TOLERANCE of the file's bytes.
The model errs high (Snappy shortens pages of runs of a few rows, which it
counts at their bit width), so the tolerance is wider above than below.
"""

from __future__ import annotations

import os
import warnings

import corpus
import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.stats import poisson

import privpub
from privpub.domain.attributes import Categorical
from privpub.tables import viewsize
from privpub.tables.viewsize import view_bytes

#: (below, above): modelled / written − 1 lies in [−below, +above].
MODEL_TOLERANCE = (0.10, 0.15)


def frame_and_schema(name: str):
    if name == "adult":
        return privpub.datasets.load_adult()
    table = corpus.TABLES[name]()
    return corpus.filled(table), table.schema


def written_bytes(view, path) -> int:
    view.to_parquet(path)
    return os.path.getsize(path)


QUICK = [("adult", "FRAPP", 10, 0.2, "set"),       # 19,502 rows over m = 6.5e8
         ("adult", "AlphaBeta", 1, 0.5, "set"),    # 40,137 rows
         ("fair", "FRAPP", 1, 0.5, "set"),         # IntRange and Categorical columns
         ("co2", "AlphaBeta", 1, 0.5, "set"),      # dates as year/month/day IntRanges
         ("fertility", "AlphaBeta", 0.5, 0.5, "set"),  # dense: n/m = 0.14
         ("airports", "FRAPP", 10, 0.2, "set"),    # long labels: the document and dictionaries
         ("iris", "AlphaBeta", 1, 0.5, "set")]     # 173 rows: fixed bytes only
SLOW = [("adult", "AlphaBeta", 10, 0.2, "records"),   # 1.2M rows, two row groups
        ("randhie", "AlphaBeta", 10, 0.2, "set"),     # 760,000 rows, a 619-value float column
        ("flights", "AlphaBeta", 10, 0.2, "set")]     # m = 1.5e13, 4,044-value column


@pytest.mark.parametrize("case", QUICK + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW],
                         ids=lambda c: "-".join(map(str, c)))
def test_modelled_bytes_are_within_tolerance_of_written_files(case, tmp_path):
    name, family, k, gamma, duplicates = case
    frame, schema = frame_and_schema(name)
    mech = getattr(privpub, family).for_privacy(
        schema, n=len(frame), gamma=gamma, k=k, allow_prior_below_base_rate=k < 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = mech.publish(frame, seed=3, duplicates=duplicates)
    size = written_bytes(view, tmp_path / "view.parquet")
    error = view_bytes(mech, len(view)) / size - 1
    below, above = MODEL_TOLERANCE
    assert -below <= error <= above, (case, len(view), size, f"{error:+.1%}")


# The airports table at k = 10: FRAPP's view says its bound is weak
# (UsefulnessWarning); this test checks the dictionary page's bytes.
@pytest.mark.filterwarnings("ignore::privpub.UsefulnessWarning")
def test_a_dictionary_page_is_the_written_one(tmp_path):
    """A Categorical's dictionary page as modelled (its labels plain-encoded and
    Snappy-compressed in memory) is the page the writer writes, to the bytes of
    the page header (the dictionary page's offset to the data page's)."""
    frame, schema = frame_and_schema("airports")
    mech = privpub.FRAPP.for_privacy(schema, n=len(frame), gamma=0.2, k=10)
    view = mech.publish(frame, seed=0)
    written_bytes(view, tmp_path / "view.parquet")
    meta = pq.ParquetFile(tmp_path / "view.parquet").metadata
    for j, attr in enumerate(schema):
        assert isinstance(attr, Categorical)
        column = meta.row_group(0).column(j)
        page = column.data_page_offset - column.dictionary_page_offset
        modelled, _ = viewsize._dictionary_page(attr)
        assert 0 < page - modelled <= 32, (attr.name, page, modelled)  # the page header


def test_run_law_is_a_law_and_matches_simulated_runs():
    """The run-length law of a column (prefixes holding zero-truncated Poisson
    rows, a run continuing into the next prefix with chance q) against runs
    drawn directly, for a few (λ, q): each P(n = s) within 4 standard errors."""
    rng = np.random.default_rng(7)
    for lam, q in [(0.3, 0.1), (2.0, 0.0), (5.0, 0.2), (0.01, 0.5)]:
        law = viewsize._run_law(lam, q)
        assert law[0] == 0 and 0 < sum(law) <= 1 + 1e-12
        draws = 200_000
        prefixes = rng.geometric(1 - q, size=draws)
        ends = np.cumsum(prefixes)
        # Zero-truncated Poisson counts, by the inverse of the law above zero.
        counts = poisson.ppf(rng.uniform(np.exp(-lam), 1, size=ends[-1]), lam).astype(int)
        runs = np.add.reduceat(counts, np.r_[0, ends[:-1]])
        for s in range(1, viewsize.SHORT):
            p = np.mean(runs == s)
            se = np.sqrt(law[s] * (1 - law[s]) / len(runs)) + 1e-9
            assert abs(p - law[s]) <= 4 * se + 1e-6, (lam, q, s, p, law[s])


def test_plan_writes_no_file(monkeypatch):
    """plan's αβ and FRAPP sizes come from the model: no Parquet writer is opened."""
    def refuse(*args, **kwargs):
        raise AssertionError("plan opened a Parquet writer")

    monkeypatch.setattr(pq, "ParquetWriter", refuse)
    frame, schema = frame_and_schema("adult")
    found = privpub.plan(frame, schema=schema, mechanisms=["alphabeta", "frapp"], ks=[1, 10],
                         gammas=[0.2, 0.5])
    assert all(r["bytes"] > 0 for r in found.rows if r["feasible"])
