"""The expected Parquet size of a published view, from a model of the file (no write).

Used by the αβ and FRAPP planners (:mod:`privpub.alphabeta.planning`,
:mod:`privpub.frapp.planning`): both publish views of uniform-looking tuples at
a density rows/m, whatever produced them, sorted in code order and written by
:func:`privpub.viewfile.writer.write_view` (one dictionary-encoded column per
attribute, Snappy, row groups of ``CHUNK_ROWS``, the document in the footer).

The model follows the file's parts. A column's dictionary indices are written
with Parquet's RLE/bit-packing hybrid: a run of one value that fills an aligned
group of 8 is run-length encoded (a header and the value), every other value
costs its bit width. In a sorted view of uniform tuples attribute j's runs are
the distinct prefixes (attributes 0..j) present, each holding a
zero-truncated Poisson(λ = rows / |prefixes|) count of rows, and a run
continues into the next prefix when the value repeats across a change of the
parent prefix (chance 1/|D_j| when it changes). From that run-length law, the
expected literal values and runs of each column follow (:func:`_index_bytes`).
Dictionary pages, the document (the schema as JSON plus a fixed part) and
each column chunk's fixed bytes (its metadata, page headers, statistics, the
row-group statistics privpub keeps) complete the file.

Dictionary pages are the one part computed rather than modelled: a
Categorical's labels, plain-encoded and Snappy-compressed in memory, once per
attribute (no view is written). The fixed parts' constants
(:data:`FOOTER_BYTES`, :data:`COLUMN_BYTES`, :data:`CHUNK_BYTES`,
:data:`PAGE_BYTES_FIXED`) were fitted once to written files by
``benches/calibrate_viewsize.py`` (which prints them and the fit). The model
is tested against real writes of αβ and FRAPP views of Adult and of corpus
tables the fit did not see in ``tests/tables/test_viewsize.py``: within −10% …
+15% (it errs high: Snappy shortens pages of runs of a few rows, which the model
counts at their bit width).
"""

from __future__ import annotations

import functools
import json
import math
import operator
from typing import Any

import numpy as np
import pyarrow as pa

from privpub.domain.attributes import Categorical
from privpub.domain.schema import Schema
from privpub.viewfile.layout import CHUNK_ROWS

#: Footer bytes of every file (the Arrow schema's frame, the document's fixed entries).
FOOTER_BYTES = 846.0
#: Footer bytes per column (its Arrow field, its digest in the document).
COLUMN_BYTES = 229.0
#: Bytes per column per row group (chunk metadata with statistics, page headers,
#: the row group's statistics and SHA-256 in the document).
CHUNK_BYTES = 203.0
#: A data page ends at PAGE_ROWS rows or PAGE_BYTES bytes (the writer's defaults).
PAGE_ROWS = 20_000
PAGE_BYTES = 1 << 20
#: Bytes of each data page beyond its values and its statistics' two values: the
#: header, the index width, the run its first value restarts.
PAGE_BYTES_FIXED = 51.0
#: Values per literal (bit-packed) run header: 63 groups of 8.
LITERAL_RUN = 504
#: Run lengths whose probabilities are kept exactly; longer runs are all RLE.
SHORT = 16
#: Rows per prefix above which P(a prefix holds < SHORT rows) is below 1e-13.
LONG_GROUPS = 80.0


def view_bytes(mech: Any, rows: float) -> int:
    """Estimated bytes of ``PublishedView.to_parquet`` for a view of ``rows`` rows
    published by ``mech`` (any mechanism with a ``schema``): the model of the
    module docstring, evaluated without writing. Uniform tuples are what αβ's
    noise and FRAPP's replacements are; kept records cluster and compress a
    little better, and Snappy shortens pages of short runs and of long labels,
    so the estimate errs high rather than low."""
    schema: Schema = mech.schema
    rows = max(float(rows), 1.0)
    groups = math.ceil(rows / CHUNK_ROWS)
    per_group = rows / groups
    pages = groups * math.ceil(per_group / PAGE_ROWS)
    total = (FOOTER_BYTES + COLUMN_BYTES * len(schema) + _schema_text_bytes(schema)
             + CHUNK_BYTES * groups * len(schema))
    prefixes, parent_runs = 1.0, 1.0
    for attr in schema:
        prefixes *= attr.size
        lam = rows / prefixes
        runs = prefixes * -math.expm1(-lam)     # the prefixes present
        repeat = min(1.0, parent_runs / rows) / attr.size
        width, dictionary, plain, statistic = _encoding(attr, per_group, runs / groups)
        data = rows * plain if plain else _index_bytes(rows, lam, repeat, width)
        total += (groups * dictionary + data
                  + max(pages, data / PAGE_BYTES) * (PAGE_BYTES_FIXED + 2 * statistic))
        parent_runs = runs
    return round(total)


@functools.lru_cache(maxsize=16)
def _schema_text_bytes(schema: Schema) -> int:
    """The schema as the document holds it (JSON: every label of every domain)."""
    return len(json.dumps(schema.to_dict(), ensure_ascii=False).encode())


def _encoding(attr: Any, per_group: float, runs_per_group: float
              ) -> tuple[int, float, float, float]:
    """(index bit width, dictionary page bytes per row group, plain bytes per value
    or 0, bytes of one value in a page's min/max statistics).

    A Categorical column's dictionary is its domain, written whole with each row
    group. An IntRange column is plain integers, which the writer
    dictionary-encodes over the values a row group holds, falling back to plain
    values when that dictionary passes a page (then each value costs its width)."""
    if isinstance(attr, Categorical):
        page, statistic = _dictionary_page(attr)
        return _bit_width(attr.size), page, 0.0, statistic
    width = 8 if np.dtype(attr.dtype).itemsize > 4 else 4  # Parquet's INT64 or INT32
    seen = max(1.0, min(attr.size * -math.expm1(-per_group / attr.size), runs_per_group))
    if seen * width > PAGE_BYTES:
        return 0, 0.0, float(width), width
    return _bit_width(math.ceil(seen)), seen * width, 0.0, width


@functools.lru_cache(maxsize=256)
def _dictionary_page(attr: Categorical) -> tuple[int, float]:
    """(bytes of a Categorical's dictionary page, mean bytes of one of its values).

    The page is the domain's labels in Parquet's plain encoding (text as a
    4-byte length and its bytes, numbers at their width), Snappy-compressed as
    the writer compresses it: compressed here, in memory, once per attribute."""
    values = attr.arrow_values
    if pa.types.is_string(values.type) or pa.types.is_binary(values.type):
        offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[
            values.offset:values.offset + len(values) + 1]
        data = values.buffers()[2]
        text = np.frombuffer(b"" if data is None else data, dtype=np.uint8)[
            offsets[0]:offsets[-1]]
        starts = offsets[:-1] - offsets[0] + 4 * np.arange(len(values))  # each length's place
        out = np.empty(len(text) + 4 * len(values), dtype=np.uint8)
        owner = np.repeat(np.arange(len(values)), np.diff(offsets))
        out[np.arange(len(text)) + 4 * (owner + 1)] = text
        length_bytes = np.diff(offsets).astype("<i4").view(np.uint8).reshape(-1, 4)
        out[starts[:, None] + np.arange(4)] = length_bytes
        plain = out.tobytes()
        statistic = len(text) / len(values)
    else:
        plain = values.buffers()[1].to_pybytes()
        statistic = len(plain) / len(values)
    return len(_SNAPPY.compress(plain, asbytes=True)), statistic


_SNAPPY = pa.Codec("snappy")


def _bit_width(entries: int) -> int:
    """Bits per dictionary index for a dictionary of ``entries`` values."""
    return (int(entries) - 1).bit_length()


def _index_bytes(rows: float, lam: float, repeat: float, width: int) -> float:
    """Expected bytes of a column's indices under the RLE/bit-packing hybrid.

    A run is made of a geometric number of prefixes (it continues into the next
    with chance ``repeat``), each holding a zero-truncated Poisson(``lam``) count
    of rows. The encoder cuts values into groups of 8 counted from the end of the
    last RLE run: a run that fills one such group is RLE from there on (the
    values before it are literal), so after an RLE run the next starts aligned
    and after a literal one at an offset taken uniform over 0..7. A literal run
    (up to 504 values) costs a header byte, an RLE run its header and value."""
    law = _run_law(lam, repeat)
    mean = (lam / -math.expm1(-lam) if lam > 0 else 1.0) / (1 - repeat)
    tail, below = [], []                         # P(n > t) and E[n; n ≤ t], t < SHORT
    up, part = 1.0, 0.0
    for t, p in enumerate(law):
        up -= p
        part += t * p
        tail.append(up)
        below.append(part)
    aligned_rle, aligned_literal = tail[7], below[7]
    unaligned_rle = sum(tail[7 + o] for o in range(8)) / 8
    unaligned_literal = sum(below[7 + o] + o * tail[7 + o] for o in range(8)) / 8
    # The chance that the run before was RLE (the stationary state of the alignment).
    after_rle = unaligned_rle / (1 - aligned_rle + unaligned_rle) if unaligned_rle > 0 else 0.0
    rle = after_rle * aligned_rle + (1 - after_rle) * unaligned_rle
    literal = after_rle * aligned_literal + (1 - after_rle) * unaligned_literal
    runs = rows / mean
    long = (mean - aligned_literal) / aligned_rle if aligned_rle > 0 else 8.0
    header = 1 + (long >= 64) + (long >= 8192) + (long >= 1 << 20)
    literal_runs = runs * rle * (1 - aligned_rle) + runs * literal / LITERAL_RUN
    return (runs * (literal * width / 8 + rle * (header + math.ceil(width / 8)))
            + literal_runs)


#: log(s!) for the run lengths whose probabilities are kept.
_LOG_FACTORIAL = [math.lgamma(s + 1) for s in range(SHORT)]


def _run_law(lam: float, repeat: float) -> list[float]:
    """P(run length = s) for s = 0 … SHORT − 1 (index 0 is 0)."""
    if lam > LONG_GROUPS:                       # every run is longer than SHORT
        return [0.0] * SHORT
    if lam <= 0:
        group = [0.0, 1.0] + [0.0] * (SHORT - 2)
    else:
        scale = -lam - math.log(-math.expm1(-lam))
        group = [0.0] + [math.exp(scale + s * math.log(lam) - _LOG_FACTORIAL[s])
                         for s in range(1, SHORT)]
    if repeat < 1e-12:                          # a run is one prefix
        return group
    law = [0.0] * SHORT
    for t in range(1, SHORT):                   # law = (1−q)·group + q·(group ∗ law)
        law[t] = (1 - repeat) * group[t] + repeat * math.fsum(
            map(operator.mul, group[1:t], law[t - 1:0:-1]))
    return law
