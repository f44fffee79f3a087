"""Published views: a table mechanism's release, and estimation from it.

A :class:`PublishedView` is a :class:`~privpub.core.release.Release` whose
payload is a :class:`~privpub.viewfile.rows.TableView` (the released rows,
columnar) plus public *context sets* of codes some estimators need (for the
i-th of several αβ views, the union of the views before it). It is written
as one Parquet file (:meth:`PublishedView.to_parquet`) and comes back either
in memory (:meth:`PublishedView.read_parquet`) or backed by the file
(:meth:`PublishedView.open`), in which case every count streams the file's
row groups in bounded memory. The file itself (its document, digest, writer,
reader and pruned scan, and how a view is written and reopened:
:class:`~privpub.viewfile.stored.StoredView`) is :mod:`privpub.viewfile`'s.

Estimation asks the mechanism (``estimate(counts)``), handing it a
:class:`Counts`: Q(V), Q(D), weighted domain sums and context counts, for
one query or for a batch (every cell of a marginal) at once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from privpub.core.capabilities import (
    CountEstimator,
    ReleaseEstimator,
    privacy_request,
    record_facts_of,
    stated_bound,
)
from privpub.core.errors import ParameterError
from privpub.core.estimate import LEVEL, Estimate, Estimates, check_level
from privpub.core.release import Release
from privpub.core.version import LIBRARY_VERSION
from privpub.counting.query import Condition, QueryLike
from privpub.counting.querytext import COUNT
from privpub.domain.schema import Schema
from privpub.tables.batchcount import count_many
from privpub.tables.batchestimates import estimate_conditions
from privpub.tables.marginals import MarginalEstimates, labelled_frames, marginal_estimates
from privpub.tables.records import counted
from privpub.tables.sums import cell_counts, sum_estimate, summed_column
from privpub.tables.viewcounts import count_rows
from privpub.viewfile.document import KIND
from privpub.viewfile.fileview import FileView
from privpub.viewfile.rows import MemoryView, TableView
from privpub.viewfile.stored import StoredView


class PublishedView(StoredView, Release):
    """The rows a table mechanism published, with what is needed to use them alone.

    Parameters
    ----------
    rows : TableView or numpy.ndarray
        The view's rows (a code array is held in memory, see Schema).
    schema : Schema
    mechanism : str
        Name of a registered mechanism, e.g. ``"alphabeta"``.
    parameters : dict
        JSON-ready parameters; the mechanism is rebuilt from them (and so
        checked) by its ``from_parameters``.
    seed_policy : str
        ``"os-csprng"`` for real releases, or the seeded note.
    context : dict of str → codes, optional
        Public code sets the estimator needs besides the view itself.
    """

    kind = KIND

    def __init__(self, rows: TableView | np.ndarray, schema: Schema, mechanism: str,
                 parameters: Mapping[str, Any], seed_policy: str,
                 context: Mapping[str, np.ndarray] | None = None,
                 library_version: str = LIBRARY_VERSION):
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        self.schema = schema
        super().__init__(mechanism, parameters, seed_policy, library_version, schema=schema)
        self.rows = rows if isinstance(rows, TableView) else MemoryView(schema, rows)
        self.context = dict(context or {})

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def counts(self) -> str:
        """What this release's estimates count: ``"records"``, or ``"distinct
        tuples"`` when it published the distinct tuples (``duplicates="set"``, as its
        mechanism's record facts say: :class:`~privpub.core.capabilities.PublishesRecords`)."""
        return counted(record_facts_of(self.mechanism_object()))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in self.parameters.items())
        where = f" on {self.rows.path}" if isinstance(self.rows, FileView) else ""
        return (f"PublishedView({self.mechanism}: {len(self):,} rows over m = "
                f"{self.schema.size:,}{where}; {params}; randomness: {self.seed_policy})")

    # ---- the rows, in every form -------------------------------------------------------
    @property
    def codes(self) -> np.ndarray:
        """The rows' tuple codes (read into memory for a file-backed view)."""
        return self.rows.codes()

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """The rows as pandas (categorical columns keep their declared categories
        and order; integers stay integers). Computed once, then cached."""
        return self.rows.to_pandas()

    def to_arrow(self) -> pa.Table:
        """The rows as an Arrow table (dictionary-encoded columns, values as in the input)."""
        return self.rows.to_arrow()

    def to_polars(self) -> Any:
        """The rows as a polars DataFrame (needs polars)."""
        return self.rows.to_polars()

    def iter_frames(self) -> Iterator[pd.DataFrame]:
        """The rows as pandas frames, batch by batch (bounded memory)."""
        return self.rows.iter_frames()

    # ---- estimation ------------------------------------------------------------------------
    def condition(self, where: QueryLike, tables: Mapping[str, Any] | None = None
                  ) -> Condition:
        """``where`` parsed against this view's schema (a Condition is reused)."""
        if isinstance(where, Condition) and where.schema == self.schema and not tables:
            return where
        return Condition(self.schema, where, tables, aggregates=True)

    def estimate(self, where: QueryLike = None,
                 tables: Mapping[str, Any] | None = None) -> Estimate:
        """Estimate Q(I) = select count(*) from I where C.

        ``where`` is SQL WHERE text (``"age > 50 and sex = 'Male'"``; quote
        names with hyphens: ``"marital-status"``), a ``privpub.col``
        expression, or {attribute: value}; ``None`` counts all records.
        ``tables`` registers auxiliary tables for IN-subqueries. On a
        file-backed view (:meth:`open`) Q(V) streams the file.

        Returns the core :class:`~privpub.core.estimate.Estimate`: ``value``
        unbiased, ``stderr`` a *plug-in* standard error (the binomial variances
        with the estimate put in for the unknown Q(I); it describes the spread,
        is not a guarantee, and is far off at small counts), ``bound`` the
        mechanism's (ρ, ε) error bound ρ√n (holds with probability ≥
        ``bound_confidence`` = 1 − ε for each fixed query), ``counts``
        ``"records"`` or ``"distinct tuples"`` (``duplicates="set"``: a record
        repeated in the data counts once), and ``details`` ``n_view`` = Q(V),
        ``n_domain`` = Q(D) (exact) and ``failure_probability`` (ε). ``interval(level)`` holds
        Q(I) with probability ≥ ``level`` whatever Q(I) is; ``interval_method``
        (:mod:`privpub.tables.confidence` has the proofs): ``"exact"`` (αβ under
        ``duplicates="set"`` or without repeats, FRAPP), ``"conservative:
        records"`` (αβ under ``duplicates="records"`` with repeats),
        ``"conservative: source"`` (a source distribution; Hoeffding) or
        ``"conservative: views"`` (a later view of several; Bonferroni).

        ``SELECT sum(col) FROM <name> WHERE …`` and ``avg(col)`` estimate the
        sum and the average of a numeric column over the rows ``where``
        selects, in the same :class:`Estimate` (:mod:`privpub.tables.sums`:
        the sum unbiased, the average a ratio estimator; intervals
        conservative, by Bernstein's inequality).
        """
        return self.estimate_many([where], tables)[0]

    def estimate_many(self, queries: Sequence[QueryLike],
                      tables: Mapping[str, Any] | None = None) -> Estimates:
        """:meth:`estimate` for each query, as one batch
        (:class:`~privpub.core.estimate.Estimates`; ``batch[i]`` is query i's).

        A mechanism whose releases are not estimated from Q(V) alone (SPLU-Gen:
        its sensitive values are randomised over decoy groups) estimates them
        itself: it offers ``estimate_release_many(view, conditions)``
        (:class:`~privpub.core.capabilities.ReleaseEstimator`); any other
        estimates from counts (:class:`~privpub.core.capabilities.CountEstimator`)."""
        conditions = [self.condition(q, tables) for q in queries]
        mech = self.mechanism_object()
        summing = [c for c in conditions if c.aggregate != COUNT]
        if summing:  # sums and averages (tables.sums), the counts as a batch beside them
            counting = [c for c in conditions if c.aggregate == COUNT]
            found = dict(zip(map(id, summing), self._sums(summing), strict=True))
            if counting:
                found |= dict(zip(map(id, counting), self.estimate_many(counting), strict=True))
            return Estimates.of([found[id(c)] for c in conditions])
        if isinstance(mech, ReleaseEstimator):
            return mech.estimate_release_many(self, conditions)
        if not isinstance(mech, CountEstimator):
            raise ParameterError(f"mechanism {self.mechanism!r} declares no estimator "
                                 "(CountEstimator or ReleaseEstimator): its releases cannot "
                                 "be estimated")
        # Q(V) of the whole batch in one pass (tables.batchcount), then every
        # estimate at once (tables.batchestimates).
        reading = [c for c in conditions if c.attributes]
        n_view = dict(zip(map(id, reading),
                          count_many(self.schema, self.rows, reading) if reading else [],
                          strict=True))
        counted = [n_view[id(c)] if id(c) in n_view else count_rows(self.rows, c)
                   for c in conditions]
        return estimate_conditions(self.rows, self.context, mech, conditions, counted,
                                   self.counts, stated_bound(mech), _count_range(mech))

    def _sums(self, conditions: Sequence[Condition]) -> list[Estimate]:
        """Each condition's ``sum(col)`` or ``avg(col)`` (:mod:`privpub.tables.sums`),
        the view read in one histogram pass for the batch."""
        mech = self.mechanism_object()
        columns = [summed_column(self.schema, cast(str, c.aggregate[1]), c.text)
                   for c in conditions]
        all_cells = cell_counts(self.schema, self.rows, self.context,
                                [(c, s.column) for c, s in zip(conditions, columns, strict=True)])
        distinct = self.counts == "distinct tuples"
        return [sum_estimate(mech, c, s, cells, self.counts, distinct)
                for c, s, cells in zip(conditions, columns, all_cells, strict=True)]

    def count(self, where: QueryLike = None, tables: Mapping[str, Any] | None = None) -> int:
        """Q(V): the rows of this view that satisfy ``where``, counted exactly
        (on file, streamed)."""
        return count_rows(self.rows, self.condition(where, tables))

    def estimate_marginals(self, attributes: Sequence[str],
                           level: float | None = LEVEL) -> pd.DataFrame:
        """Every equality query over ``attributes`` at once: one row per value
        combination (first attribute slowest) with ``n_view``, ``n_domain``,
        ``estimate``, ``stderr`` (plug-in) and the confidence interval ``lo``,
        ``hi`` at ``level`` (as :class:`Estimate`'s; ``level=None`` leaves them
        out) — one histogram pass over the view, the intervals vectorised over
        the cells. What the estimates count (:attr:`counts`) is in the frame's
        ``attrs["counts"]``; the interval's level and method in
        ``attrs["level"]`` and ``attrs["interval_method"]``."""
        return self.estimate_marginals_many([attributes], level)[0]

    def estimate_marginals_many(self, subsets: Sequence[Sequence[str]],
                                level: float | None = LEVEL) -> list[pd.DataFrame]:
        """:meth:`estimate_marginals` for several attribute subsets, one frame
        each (see :meth:`estimate_marginals_arrays` for the same as arrays).

        The value columns are labelled from codes, as :attr:`frame`'s are: a
        string (or ``"category"``) attribute is a pandas Categorical with the
        declared categories and order (``pd.Categorical.from_codes``, no
        per-cell strings), an integer attribute its integer dtype; every
        other column is a slice of the flat arrays, not a copy."""
        if level is not None:
            level = check_level(level)  # before the work, not after it
        bulk = self.estimate_marginals_arrays(subsets)
        return labelled_frames(self.schema, bulk, level)

    def estimate_marginals_arrays(self, subsets: Sequence[Sequence[str]]) -> MarginalEstimates:
        """Every equality query over each attribute subset, as flat arrays.

        Cells of subset s are ``offsets[s]:offsets[s+1]`` (first attribute
        slowest). The view is histogrammed only over the maximal subsets
        (:mod:`privpub.tables.cover`), in one Rust pass in parallel, and every
        other subset's counts are summed down from one of them exactly; the
        estimator then runs once over all cells. Confidence intervals are
        computed when asked (:meth:`MarginalEstimates.interval`)."""
        return marginal_estimates(self.rows, self.context, self.mechanism_object(), self.counts,
                                  subsets)


def _count_range(mechanism: Any) -> tuple[int, int] | None:
    """[0, n]: the counts a release allows, n the records it was published from
    (its privacy request's ``records``:
    :class:`~privpub.core.capabilities.StatesPrivacyRequest`); None where it
    states none."""
    n = privacy_request(mechanism).records
    return None if n is None else (0, int(n))
