"""Dask DataFrames in, Dask releases out: the parts of distributed publishing
every table mechanism shares (dask is an optional extra, imported here only
inside functions).

A family publishes a dask DataFrame in these steps (docs/scaling.md):

1. :func:`encoded`: each partition to tuple codes (the schema's checks, the
   same errors as one machine);
2. :func:`code_sample` and :func:`split_points`: one pass reads a sample of
   each partition's codes and the driver cuts code space into ranges of
   about equal work, each boundary on a multiple of ``align`` (the αβ
   β-step's segment length, so no segment is split);
3. :func:`by_range`: a Dask shuffle sends every code to its range's task and
   sorts it there, so range i holds the i-th slice of the globally sorted
   records and every copy of a tuple lands in one task;
4. :func:`ranged_records`: the record facts one machine computes
   (:func:`~privpub.tables.records.record_stats` sums over ranges) and each
   range's global start position, the only values that cross ranges;
5. the family's own per-range work, and a :class:`DaskRelease` that writes the
   ranges as the part files of one release (:meth:`DaskRelease.to_parquet`).

:func:`open_dask` reopens such a release (or any view file) with counts
computed by Dask, one task per part file.
"""

from __future__ import annotations

import bisect
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.estimate import Estimate, Estimates
from privpub.core.files import PARQUET, atomic_output
from privpub.core.guarantee import Guarantee
from privpub.core.limbs import ints_from_limbs, limbs_from_ints
from privpub.core.release import Release
from privpub.core.signing import signing_key
from privpub.core.version import LIBRARY_VERSION
from privpub.counting.query import QueryLike
from privpub.domain.schema import Schema
from privpub.tables.partsview import PartsView
from privpub.tables.published import PublishedView
from privpub.tables.records import (
    as_schema_codes,
    check_duplicates,
    comparable,
    distinct_sorted,
    record_facts,
    record_stats,
    sorted_rows,
)
from privpub.viewfile.digest import Digest, PartDigest, digest_document
from privpub.viewfile.document import KIND
from privpub.viewfile.fileview import FileView
from privpub.viewfile.layout import METADATA_FILE, PART_FILES
from privpub.viewfile.pages import PageReader
from privpub.viewfile.reader import open_view
from privpub.viewfile.rows import MemoryView
from privpub.viewfile.scan import Part, PrunedFileView, count_parts
from privpub.viewfile.writer import write_metadata_file, write_part

#: Codes each partition contributes to the sample that places range boundaries.
SAMPLE_PER_PARTITION = 1024
#: The column a shuffle routes rows by (the index of their range).
RANGE_COLUMN = "__privpub_range"
#: What a release directory holds; ``overwrite=True`` replaces nothing else.
RELEASE_FILES = (METADATA_FILE, PART_FILES)
#: distributed's scheduler logs the start and end of every P2P shuffle at WARNING
#: ("Shuffle … initialized by task …", "… deactivated due to stimulus …"): routine
#: events, not problems, which reach the console of anyone whose scheduler runs in
#: their own process (a LocalCluster), on every publish and first estimate.
SHUFFLE_LOGGER = "distributed.shuffle._scheduler_plugin"


@contextmanager
def quiet_shuffle_logs() -> Iterator[None]:
    """Keep the shuffle's routine messages off the console while privpub computes
    a shuffle, unless the user set that logger's level (dask's ``logging`` config
    or ``logging.getLogger(SHUFFLE_LOGGER).setLevel``): then they asked for them.
    Errors still show."""
    logger = logging.getLogger(SHUFFLE_LOGGER)
    if logger.level != logging.NOTSET:
        yield
        return
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(logging.NOTSET)


def is_dask(data: Any) -> bool:
    """Whether ``data`` is a dask DataFrame (checked without importing dask)."""
    return (type(data).__module__.split(".")[0] == "dask"
            and hasattr(data, "map_partitions") and hasattr(data, "npartitions"))


def _names(limbs: int) -> list[str]:
    return [f"code{j}" for j in range(limbs)]


def _frame(rows: np.ndarray) -> pd.DataFrame:
    """(n, limbs) code rows as a frame of uint64 columns, most significant first."""
    return pd.DataFrame({name: rows[:, j] for j, name in enumerate(_names(rows.shape[1]))})


def rows_of(frame: pd.DataFrame, limbs: int) -> np.ndarray:
    """The (n, limbs) code rows of a frame of code columns."""
    if len(frame) == 0:
        return np.zeros((0, limbs), dtype=np.uint64)
    return np.ascontiguousarray(np.stack([frame[n].to_numpy(dtype=np.uint64)
                                          for n in _names(limbs)], axis=1))


def aligned(rows: np.ndarray) -> np.ndarray:
    """An array received from another task as the kernels take it: C-contiguous
    and aligned (a deserialised buffer may be neither), copied only if needed."""
    return np.require(rows, requirements=["C", "A"])


# ---- 1. codes -----------------------------------------------------------------------------------


def _encode_part(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    codes = schema.encode(frame)
    return _frame(codes.reshape(len(frame), schema.limbs))


def encoded(schema: Schema, data: Any) -> Any:
    """The dask frame of ``data``'s tuple codes (columns code0[, code1], uint64,
    most significant first). A column not in the schema is refused now, as
    one machine refuses it; the columns and dtypes are checked now against the
    frame's metadata, each value when its partition is encoded."""
    extra = [str(c) for c in data.columns if c not in schema.names]
    if extra:
        raise ParameterError(f"the table has columns not in the schema: {extra}; publishing "
                             "would drop them, select the schema's columns explicitly")
    schema.encode(data._meta)  # missing columns and wrong kinds, before any work
    empty = np.zeros((0, schema.limbs), dtype=np.uint64)
    return data.map_partitions(_encode_part, schema, meta=_frame(empty))


# ---- 2. ranges of code space ------------------------------------------------------------------


@dataclass(frozen=True)
class CodeSample:
    """Sampled codes (sorted Python ints), the records each stands for, and the
    exact number of records."""

    codes: list[int]
    cumulative: list[int]
    total: int

    def below(self, x: int) -> int:
        """About how many records have a code below ``x``."""
        i = bisect.bisect_left(self.codes, x)
        return self.cumulative[i - 1] if i else 0


def _sample_part(frame: pd.DataFrame, limbs: int) -> pd.DataFrame:
    """Evenly spaced rows of a partition, each with the records it stands for
    (shares summing to the partition's length exactly)."""
    n = len(frame)
    k = min(n, SAMPLE_PER_PARTITION)
    if k == 0:
        return frame.assign(records=np.zeros(0, dtype=np.int64))
    cuts = np.arange(k + 1, dtype=np.int64) * n // k
    picked = frame.iloc[cuts[:-1]]
    return picked.assign(records=np.diff(cuts))


def code_sample(codes: Any, limbs: int) -> CodeSample:
    """One pass over the encoded partitions (computed now): a sample of codes
    for :func:`split_points` and the number of records."""
    meta = _frame(np.zeros((0, limbs), dtype=np.uint64)).assign(
        records=np.zeros(0, dtype=np.int64))
    sample = codes.map_partitions(_sample_part, limbs, meta=meta).compute()
    pairs = sorted(zip(ints_from_limbs(rows_of(sample, limbs)), sample["records"].tolist(),
                       strict=True))
    cumulative = np.cumsum([r for _, r in pairs], dtype=np.int64).tolist()
    return CodeSample([c for c, _ in pairs], cumulative, cumulative[-1] if cumulative else 0)


def split_points(sample: CodeSample, m: int, parts: int, align: int = 1,
                 record_weight: float = 1.0, rate: float = 0.0) -> list[int]:
    """Boundaries cutting [0, m) into at most ``parts`` ranges of about equal
    work, each a multiple of ``align``. The work below x is
    ``record_weight`` × (records below x) + ``rate`` × x (noise drawn per code).
    Where the boundaries fall changes only the balance, never the result."""
    if not isinstance(parts, int) or parts < 1:
        raise ParameterError(f"npartitions must be a positive int, got {parts!r}")
    segments = -(-m // align)

    def work(x: int) -> float:
        return record_weight * sample.below(x) + rate * x

    total = work(m)
    bounds: list[int] = []
    for j in range(1, parts):
        target = total * j / parts
        lo, hi = 1, segments  # the least s with work(s·align) ≥ target
        while lo < hi:
            mid = (lo + hi) // 2
            if work(mid * align) >= target:
                hi = mid
            else:
                lo = mid + 1
        edge = lo * align
        if edge < m and (not bounds or edge > bounds[-1]):
            bounds.append(edge)
    return bounds


def _tag(frame: pd.DataFrame, edges: np.ndarray, limbs: int) -> pd.DataFrame:
    keys = comparable(rows_of(frame, limbs))
    return frame.assign(**{RANGE_COLUMN: np.searchsorted(comparable(edges), keys,
                                                         side="right").astype(np.int64)})


def _sorted(frames: Sequence[pd.DataFrame], limbs: int) -> np.ndarray:
    return sorted_rows(np.concatenate([rows_of(f, limbs) for f in frames]))


def by_range(codes: Any, bounds: Sequence[int], limbs: int) -> list[Any]:
    """The codes of each range [bounds[i−1], bounds[i]) (with 0 and ∞ at the
    ends), sorted, as one Dask Delayed (n_i, limbs) array per range: a shuffle
    (``set_index`` on the range index with fixed divisions, so range i is
    partition i even when it is empty)."""
    import dask

    if not bounds:
        return [dask.delayed(_sorted)(codes.to_delayed(), limbs)]
    tagged = codes.map_partitions(_tag, limbs_from_ints(bounds, limbs), limbs,
                                  meta=codes._meta.assign(**{RANGE_COLUMN: np.int64(0)}))
    ranges = tagged.set_index(RANGE_COLUMN, divisions=list(range(len(bounds) + 2)))
    return [dask.delayed(_sorted)([part], limbs) for part in ranges.to_delayed()]


def rows_frame(rows: Sequence[Any], limbs: int) -> Any:
    """A dask frame of code columns from Delayed (n_i, limbs) arrays (to shuffle
    a mechanism's output back into sorted ranges with :func:`by_range`)."""
    import dask
    import dask.dataframe as dd

    empty = _frame(np.zeros((0, limbs), dtype=np.uint64))
    return dd.from_delayed([dask.delayed(_frame)(r) for r in rows], meta=empty,
                           verify_meta=False)


# ---- 4. the records of each range ---------------------------------------------------------------


@dataclass(frozen=True)
class RangedRecords:
    """The records to publish, by range of code space (all Dask Delayed):
    ``records[i]`` sorted (distinct under duplicates="set"); ``plan`` is
    (facts, starts): :func:`~privpub.tables.records.prepare_records`' facts
    plus ``distinct_tuples``, checked as one machine checks them, and each
    range's first position in the globally sorted records."""

    records: list[Any]
    plan: Any
    sample: CodeSample
    bounds: list[int]


def _plan(stats: Sequence[dict[str, int]], n: int | None,
          duplicates: str | None) -> tuple[dict[str, Any], list[int]]:
    totals = {k: sum(s[k] for s in stats) for k in ("records", "distinct", "repeated")}
    facts = record_facts(totals, n, duplicates)
    kept = [s["distinct" if facts["duplicates"] == "set" else "records"] for s in stats]
    starts = np.concatenate([[0], np.cumsum(kept[:-1], dtype=np.int64)]).tolist()
    return facts | {"distinct_tuples": totals["distinct"]}, starts


def _published(rows: np.ndarray, plan: tuple[dict[str, Any], list[int]]) -> np.ndarray:
    rows = aligned(rows)
    return distinct_sorted(rows) if plan[0]["duplicates"] == "set" else rows


def ranged_records(schema: Schema, data: Any, n: int | None, duplicates: str | None,
                   parts: int | None = None, align: int = 1, record_weight: float = 1.0,
                   rate: float = 0.0) -> RangedRecords:
    """``data`` (a dask DataFrame) as sorted records by range of code space
    (steps 1–4 of the module docstring; the sample pass runs now, the rest is
    lazy). ``parts`` defaults to the frame's partition count."""
    import dask

    check_duplicates(duplicates)
    codes = encoded(schema, data)
    sample = code_sample(codes, schema.limbs)
    bounds = split_points(sample, schema.size, parts or data.npartitions, align,
                          record_weight, rate)
    ranges = by_range(codes, bounds, schema.limbs)
    plan = dask.delayed(_plan, nout=2)([dask.delayed(record_stats)(r) for r in ranges], n,
                                       duplicates)
    records = [dask.delayed(_published)(r, plan) for r in ranges]
    return RangedRecords(records, plan, sample, bounds)


# ---- 5. the release ---------------------------------------------------------------------------


def _write_part(schema: Schema, rows: np.ndarray, path: str) -> PartDigest:
    """One part file of a release (:func:`~privpub.viewfile.writer.write_part`);
    its rows' digest, taken in the write pass."""
    view = MemoryView(schema, as_schema_codes(schema, aligned(rows)))
    return write_part(path, schema, view.batches())


def _decoded(schema: Schema, rows: np.ndarray) -> pd.DataFrame:
    return schema.decode(as_schema_codes(schema, aligned(rows)))


class DaskRelease(Release):
    """A table release computed by Dask: the view's rows as sorted ranges of
    code space (``rows``, Dask Delayed (n_i, limbs) arrays in code order) and
    its parameters (``lazy_parameters``, Delayed: some, such as how many tuples
    the view shows twice, are known only once the rows are). Nothing runs until
    :meth:`to_parquet`, :meth:`compute`, or a use of the release itself
    (:meth:`guarantee`, :meth:`estimate`, :meth:`estimate_many`,
    :attr:`parameters`), which persists the parts where Dask keeps them and
    rebuilds the mechanism from the computed parameters, as any release is.
    Counts then run one Dask task per part (:class:`~privpub.tables.partsview.PartsView`).
    """

    kind = KIND

    def __init__(self, schema: Schema, mechanism: str, rows: Sequence[Any], parameters: Any,
                 seed_policy: str):
        # Release.__init__ runs once the parameters are computed (view()).
        self.schema, self.mechanism = schema, mechanism
        self.rows, self.lazy_parameters, self.seed_policy = list(rows), parameters, seed_policy
        self.library_version = LIBRARY_VERSION
        self._view: PublishedView | None = None

    def __repr__(self) -> str:
        return (f"DaskRelease({self.mechanism}: {len(self.rows)} ranges over m = "
                f"{self.schema.size:,}; randomness: {self.seed_policy})")

    def view(self) -> PublishedView:
        """The release as a :class:`~privpub.tables.published.PublishedView` over
        its persisted parts (computed on first use, then kept)."""
        if self._view is None:
            import dask

            with quiet_shuffle_logs():
                rows, parameters = dask.persist(self.rows, self.lazy_parameters)
                (parameters,) = dask.compute(parameters)
            self._view = PublishedView(PartsView(self.schema, rows), self.schema,
                                       self.mechanism, parameters, self.seed_policy)
        return self._view

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        """The release's parameters (computed: see :meth:`view`)."""
        return self.view().parameters

    def mechanism_object(self) -> Any:
        return self.view().mechanism_object()

    def estimate(self, where: QueryLike = None,
                 tables: Mapping[str, Any] | None = None) -> Estimate:
        """:meth:`PublishedView.estimate <privpub.PublishedView.estimate>`, counted
        over the parts."""
        return self.view().estimate(where, tables)

    def estimate_many(self, queries: Sequence[QueryLike],
                      tables: Mapping[str, Any] | None = None) -> Estimates:
        """:meth:`PublishedView.estimate_many <privpub.PublishedView.estimate_many>`,
        counted over the parts."""
        return self.view().estimate_many(queries, tables)

    def to_parquet(self, path: str | os.PathLike, *, overwrite: bool = False,
                   sign: Any = None) -> PublishedView:
        """Compute the release and write it as a directory: one part file per
        range (written by the worker that computed it) and ``_common_metadata``
        holding the metadata one machine's file holds, with a digest per part
        file, in part order). The parts are written into a temporary directory beside
        ``path`` (which must be visible to every worker), reopened there, then
        renamed into place (:func:`privpub.core.files.atomic_output`): the
        directory must be new or empty, unless ``overwrite=True`` replaces a
        release directory (one holding only what a release writes). ``sign``
        signs its document, as :meth:`PublishedView.to_parquet`'s. Returns the
        release opened from the directory (re-validated)."""
        import dask

        key = signing_key(sign)
        trust = None if key is None else key.public_key()

        with atomic_output(path, overwrite=overwrite, suffix=PARQUET, directory=True,
                           replaces=RELEASE_FILES) as temp:
            files = [os.path.join(temp, f"part.{i}.parquet") for i in range(len(self.rows))]
            written = [dask.delayed(_write_part)(self.schema, r, f)
                       for r, f in zip(self.rows, files, strict=True)]
            with quiet_shuffle_logs():
                parts, parameters = dask.compute(written, self.lazy_parameters)
            rows = FileView(self.schema, temp, sum(p.rows for p in parts), parts)
            view = PublishedView(rows, self.schema, self.mechanism, parameters, self.seed_policy)
            write_metadata_file(temp, self.schema, view.metadata(digest_document(parts)), key)
            open_view(temp, trust)
        return PublishedView.open(path, trust=trust)

    def compute(self) -> PublishedView:
        """The release in memory (the ranges concatenated: they are in code order)."""
        import dask

        with quiet_shuffle_logs():
            rows, parameters = dask.compute(self.rows, self.lazy_parameters)
        codes = np.concatenate([aligned(r) for r in rows])
        return PublishedView(as_schema_codes(self.schema, codes), self.schema, self.mechanism,
                             parameters, self.seed_policy)

    def to_dask(self) -> Any:
        """The view's rows as a lazy dask DataFrame of the schema's values (one
        partition per range, in code order)."""
        import dask
        import dask.dataframe as dd

        empty = self.schema.decode(np.zeros((0, self.schema.limbs) if self.schema.is_wide
                                            else 0, dtype=np.uint64))
        return dd.from_delayed([dask.delayed(_decoded)(self.schema, r) for r in self.rows],
                               meta=empty, verify_meta=False)

    def guarantee(self) -> Guarantee:
        """The release's guarantee (computes its parameters, and so its rows)."""
        return self.view().guarantee()


# ---- reading a view with Dask -----------------------------------------------------------------


def _count_file(schema: Schema, path: str, condition: Any) -> tuple[int, PartDigest]:
    names = list(condition.attributes)
    found, total = Digest(schema, names), 0
    for batch in FileView(schema, path, 0, None).batches(names):
        total += condition.count_digits(found.add(batch), len(batch[names[0]]))
    return total, found.result()


def _count_part(schema: Schema, part: Part, conditions: Sequence[Any]) -> list[int]:
    return count_parts(PageReader(schema), [part], conditions)


class DaskView(PrunedFileView):
    """A view file, or a Dask release's directory, whose counts run as Dask
    tasks (one per part file; the client in use, if any, schedules them).
    Where the parts have row-group statistics, each task counts its part by
    row group (:mod:`privpub.viewfile.scan`: skip, count whole, or read and
    check the group), for the whole batch of conditions at once. Otherwise each
    task digests the columns it read in its part; each part's rows and
    digests must match the part's stored ones, as a full pass of a
    :class:`FileView` must."""

    def count_many(self, conditions: Sequence[Any]) -> list[int]:
        parts = self.scan_parts()
        if parts is None:
            return [self.count(c) for c in conditions]
        import dask

        found = dask.compute(*[dask.delayed(_count_part)(self.schema, p, list(conditions))
                               for p in parts])
        return [sum(counts) for counts in zip(*found, strict=True)]

    def count(self, condition: Any) -> int:
        if self.scan_parts() is not None:
            return self.count_many([condition])[0]
        import dask

        found = dask.compute(*[dask.delayed(_count_file)(self.schema, f, condition)
                               for f in self.files])
        if self.expected is not None:
            for index, (_, part) in enumerate(found):
                self.expected[index].check(part, self.where(index))
            if sum(part.rows for _, part in found) != self.rows:
                raise ArtifactError(f"{self.path!r}: {sum(p.rows for _, p in found):,} rows "
                                    f"read, its metadata says {self.rows:,}")
        return sum(count for count, _ in found)

    def to_dask(self) -> Any:
        """The rows as a lazy dask DataFrame of the schema's values, one
        partition per part file."""
        import dask.dataframe as dd

        return dd.from_map(lambda f: FileView(self.schema, f, 0, None).to_pandas(),
                           self.files, meta=self.schema.decode(
                               np.zeros((0, self.schema.limbs) if self.schema.is_wide else 0,
                                        dtype=np.uint64)))


def open_dask(path: str | os.PathLike) -> PublishedView:
    """:meth:`PublishedView.open` with counts (and so ``estimate``) computed by
    Dask over the part files; ``view.rows.to_dask()`` gives the rows."""
    view = PublishedView.open(path)
    if view.context:
        raise ParameterError(f"{os.fspath(path)!r} holds context sets (a later view of "
                             "several); open it with PublishedView.open")
    stored = view.rows
    view.rows = DaskView(view.schema, stored.path, len(stored), stored.expected)
    return view

