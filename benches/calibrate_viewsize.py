"""Fit the fixed-size constants of the view-size model to written files, and
show the model against every file.

:mod:`privpub.tables.viewsize` models a view file's size without writing it:
its columns' indices from the run-length law of a sorted view of uniform
tuples, its dictionary pages (the labels, Snappy-compressed in memory) and its
document's schema text exactly, and four constants for the parts that are
fixed bytes per file, per column, per column per row group and per data page.
This script publishes αβ views of Adult and of corpus tables (tests/corpus.py)
at several (k, γ), writes each with the library's writer, and fits

- FOOTER_BYTES, COLUMN_BYTES, CHUNK_BYTES by least squares to each file's
  footer (its bytes less the column chunks', the two magics and the schema
  text), against (1, columns, columns × row groups);
- PAGE_BYTES_FIXED from each file's leading column, whose runs span thousands
  of rows: its chunk less its dictionary pages, its runs and its pages'
  statistics, per data page.

It prints the fitted constants (copy them into viewsize.py) and each file's
relative error under the constants viewsize.py holds now. The test files of
tests/tables/test_viewsize.py are others (FRAPP, records, unseen tables).

Run from the repository root (a few minutes: it writes views of up to ~25M rows):

    PYTHONPATH=python python benches/calibrate_viewsize.py

Last run (pyarrow 26.0.1): FOOTER_BYTES = 846, COLUMN_BYTES = 229, CHUNK_BYTES
= 203, PAGE_BYTES_FIXED = 51; the eleven files within −0.2% … +9.0%.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import privpub
from privpub.tables import viewsize
from privpub.viewfile.layout import CHUNK_ROWS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import corpus  # noqa: E402

#: (table, k, γ) published and written: densities from ~1e-5 to ~4e-2 of m,
#: one to ~25 row groups, Categorical and IntRange columns, long labels.
REQUESTS = [("adult", 1, 0.5), ("adult", 10, 0.2), ("adult", 50, 0.05), ("adult", 5, 0.5),
            ("fair", 10, 0.2), ("fair", 1, 0.5), ("co2", 10, 0.2), ("airports", 10, 0.2),
            ("seattle_weather", 10, 0.2), ("penguins", 10, 0.3), ("anes96", 2, 0.5)]


def table(name: str):
    if name == "adult":
        return privpub.datasets.load_adult()
    found = corpus.TABLES[name]()
    return corpus.filled(found), found.schema


def written(name: str, k: float, gamma: float) -> tuple[object, int, int, list[int]]:
    """(the mechanism, the view's rows, its file's bytes, each column chunk's bytes
    summed over row groups)."""
    frame, schema = table(name)
    mech = privpub.AlphaBeta.for_privacy(schema, n=len(frame), gamma=gamma, k=k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = mech.publish(frame, seed=1, duplicates="set")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "view.parquet")
        view.to_parquet(path)
        meta = pq.ParquetFile(path).metadata
        chunks = [sum(meta.row_group(g).column(j).total_compressed_size
                      for g in range(meta.num_row_groups)) for j in range(meta.num_columns)]
        return mech, len(view), os.path.getsize(path), chunks


def main() -> None:
    footers, footer_terms, leading, leading_pages, seen = [], [], [], [], []
    for name, k, gamma in REQUESTS:
        mech, rows, size, chunks = written(name, k, gamma)
        schema = mech.schema
        columns, groups = len(schema), math.ceil(rows / CHUNK_ROWS)
        # The footer: what the column chunks and the two 4-byte magics leave.
        footers.append(size - sum(chunks) - 8 - viewsize._schema_text_bytes(schema))
        footer_terms.append([1.0, columns, columns * groups])
        # The leading column: runs of thousands of rows, so its chunk is its
        # dictionary pages and its pages' fixed bytes (a run each).
        attr = schema.attributes[0]
        pages = groups * math.ceil(rows / groups / viewsize.PAGE_ROWS)
        width, dictionary, _, statistic = viewsize._encoding(attr, rows / groups,
                                                             attr.size / groups)
        runs = min(rows, attr.size)
        leading.append(chunks[0] - groups * dictionary - runs * (3 + math.ceil(width / 8))
                       - pages * 2 * statistic)
        leading_pages.append(pages)
        seen.append((name, k, gamma, rows, size, viewsize.view_bytes(mech, rows)))
    fit, *_ = np.linalg.lstsq(np.array(footer_terms), np.array(footers), rcond=None)
    page = float(np.sum(leading) / np.sum(leading_pages))
    footer, column, chunk = fit
    print(f"fitted: FOOTER_BYTES = {footer:.0f}, COLUMN_BYTES = {column:.0f}, "
          f"CHUNK_BYTES = {chunk:.0f}, PAGE_BYTES_FIXED = {page:.0f}")
    print(f"{'table':>16} {'k':>4} {'gamma':>6} {'rows':>11} {'bytes':>11} {'model':>11} "
          f"{'error':>7}")
    for name, k, gamma, rows, size, modelled in seen:
        print(f"{name:>16} {k:>4g} {gamma:>6g} {rows:>11,} {size:>11,} {modelled:>11,} "
              f"{modelled / size - 1:>+7.1%}")


if __name__ == "__main__":
    main()
