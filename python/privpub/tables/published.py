"""Published views: a table mechanism's release, and estimation from it.

A :class:`PublishedView` is a :class:`~privpub.core.release.Release` whose
payload is a :class:`~privpub.viewfile.rows.TableView` (the released rows,
columnar) plus public *context sets* of codes some estimators need (for the
i-th of several αβ views, the union of the views before it). It is written
as one Parquet file (:meth:`PublishedView.to_parquet`) and comes back either
in memory (:meth:`PublishedView.read_parquet`) or backed by the file
(:meth:`PublishedView.open`), in which case every count streams the file's
row groups in bounded memory. The file itself (its document, digest, writer,
reader and pruned scan) is :mod:`privpub.viewfile`'s.

Reopening re-validates: the metadata is parsed within bounds, the mechanism
is rebuilt from the stored parameters by its own constructor checks, stored
derived values must follow from them, the columns must be the schema's, the
row groups must hold the stored row count, and the rows, when read in full,
must match the stored digest (:class:`~privpub.viewfile.digest.Digest`: per part
file and column, SHA-256 of the domain indices in file order). That refuses
a file whose values were edited, reordered, dropped, added or mixed up with
another file's; it is not a signature (someone who rewrites rows and digest
consistently writes a new release), and docs/design.md says what it proves.

Estimation asks the mechanism (``estimate(counts)``), handing it a
:class:`Counts`: Q(V), Q(D), weighted domain sums and context counts, for
one query or for a batch (every cell of a marginal) at once.
"""

from __future__ import annotations

import copy
import functools
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privpub.core.capabilities import (
    CountEstimator,
    ReleaseEstimator,
    StatedBound,
    record_facts_of,
    stated_bound,
)
from privpub.core.errors import ArtifactError, ParameterError
from privpub.core.estimate import LEVEL, Estimate, Estimates, check_level
from privpub.core.release import Release
from privpub.core.version import LIBRARY_VERSION
from privpub.counting.domaincount import count
from privpub.counting.query import Condition, QueryLike
from privpub.domain.schema import Schema
from privpub.tables.batchcount import count_many
from privpub.tables.marginals import (
    MarginalEstimates,
    check_subsets,
    covered_histograms,
    labelled_frames,
    product_sums,
)
from privpub.tables.records import counted, isin_sorted
from privpub.viewfile.columns import Digits, codes_of
from privpub.viewfile.digest import digest_document
from privpub.viewfile.document import KIND, view_document
from privpub.viewfile.fileview import FileView
from privpub.viewfile.reader import open_view, read_digits
from privpub.viewfile.rows import MemoryView, TableView
from privpub.viewfile.writer import write_view


@dataclass(frozen=True)
class Counts:
    """What an estimator reads, for one query (scalars) or a batch (arrays).

    ``domain_sum(weights)`` is Σ_{t ∈ Q(D)} Π_j weights[j][t_j];
    ``context(name)`` is (Q(V ∩ C), Q(C)) for the release's context set C.
    """

    n_view: Any
    n_domain: Any
    domain_sum: Callable[[Sequence[np.ndarray]], Any]
    context: Callable[[str], tuple[Any, Any]]


class PublishedView(Release):
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

    # ---- persistence ---------------------------------------------------------------------
    def metadata(self, digest: dict[str, Any] | None = None,
                 rows: int | None = None) -> dict[str, Any]:
        """The JSON document stored beside the rows (``rows`` and ``digest`` given
        when a stream wrote the rows, not held by this object; otherwise the
        digest of the rows as one file holds them: :func:`digest_document`)."""
        if digest is None:
            digest = digest_document([self.rows.digest()], {
                k: MemoryView(self.schema, v).digest() for k, v in self.context.items()})
        return view_document(self.envelope(), self.schema, len(self) if rows is None else rows,
                             digest, {k: len(v) for k, v in self.context.items()})

    def to_parquet(self, path: str | os.PathLike, *, overwrite: bool = False,
                   sign: Any = None) -> None:
        """Write the rows (dictionary-encoded columns, streamed batch by batch),
        any context sets, and the metadata (in the file's footer, with the
        digest taken in the same pass) to one Parquet file.

        The file appears whole or not at all (:func:`privpub.core.files.atomic_output`):
        an existing ``path`` is an :class:`~privpub.OutputExistsError` unless
        ``overwrite=True``, ``path`` must end in ``.parquet``, and a file-backed
        view is never written over its own file. ``sign`` (an Ed25519 private key
        or its file, :func:`privpub.core.signing.private_key`) signs the document
        (:mod:`privpub.core.signing` says what that covers)."""
        inputs = self.rows.files if isinstance(self.rows, FileView) else ()
        write_view(path, self.schema, self.rows.batches(),
                   lambda rows, digest: self.metadata(digest), self.context,
                   overwrite=overwrite, inputs=inputs, sign=sign)

    @classmethod
    def read_parquet(cls, path: str | os.PathLike, *, trust: Any = None) -> PublishedView:
        """Reopen a view written by :meth:`to_parquet`, its rows in memory (as
        domain indices: dictionary indices mapped without Python objects), read
        in one full pass of :meth:`open`'s view, so every part's row groups,
        rows and digests are checked now.

        The check is the same whatever the speed-ups: each column is read on
        its own thread, its pages decoded straight into domain indices where
        privpub's page reader can, and hashed in file order as it is read
        (:mod:`privpub.viewfile.reader`; a file that also holds context sets
        is read by the view's batches); each column's digest is compared with
        the stored one before this returns. ``trust`` as for :meth:`open`."""
        view = cls.open(path, trust=trust)
        rows = MemoryView(view.schema, digits=read_digits(view.rows))
        release = cls(rows, view.schema, view.mechanism, view.parameters, view.seed_policy,
                      view.context, view.library_version)
        release.signed = view.signed
        return release

    @classmethod
    def open(cls, path: str | os.PathLike, *, trust: Any = None) -> PublishedView:
        """A view backed by its Parquet file: counts and estimates go row group by
        row group in bounded memory, skipping or counting whole the groups that
        privpub's own statistics decide (:mod:`privpub.viewfile.scan` says what
        that checks and trusts; context sets, small, are read).
        The metadata, the columns and the row groups' row counts are checked
        now; each column's rows and digest when first read in full.
        ``path`` may also be the directory a Dask release wrote (its metadata in
        ``_common_metadata``, its rows in the part files, read in order).

        A signed file's signature is checked now (:attr:`signed` says by whom);
        ``trust`` (the publisher's Ed25519 public key or its file) refuses, with a
        :class:`~privpub.core.errors.SignatureError`, a file that is unsigned or
        signed by another key."""
        opened = open_view(path, trust)
        stored = opened.document
        try:
            release = cls(opened.rows, stored.schema, **copy.deepcopy(stored.envelope))
        except ParameterError as exc:
            raise ArtifactError(f"{opened.where!r}: field 'parameters': {exc}") from exc
        release.context.update(opened.context_sets())
        release.signed = stored.signed
        return release

    # ---- estimation ------------------------------------------------------------------------
    def condition(self, where: QueryLike, tables: Mapping[str, Any] | None = None
                  ) -> Condition:
        """``where`` parsed against this view's schema (a Condition is reused)."""
        if isinstance(where, Condition) and where.schema == self.schema and not tables:
            return where
        return Condition(self.schema, where, tables)

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
        if isinstance(mech, ReleaseEstimator):
            return mech.estimate_release_many(self, conditions)
        if not isinstance(mech, CountEstimator):
            raise ParameterError(f"mechanism {self.mechanism!r} declares no estimator "
                                 "(CountEstimator or ReleaseEstimator): its releases cannot "
                                 "be estimated")
        # Q(V) of the whole batch in one pass (tables.batchcount).
        reading = [c for c in conditions if c.attributes]
        n_view = dict(zip(map(id, reading),
                          count_many(self.schema, self.rows, reading) if reading else [],
                          strict=True))
        stated = stated_bound(mech)
        return Estimates.of([self._estimate(cond, stated, n_view.get(id(cond)))
                             for cond in conditions])

    def count(self, where: QueryLike = None, tables: Mapping[str, Any] | None = None) -> int:
        """Q(V): the rows of this view that satisfy ``where``, counted exactly
        (on file, streamed)."""
        return self._count(self.condition(where, tables))

    def _estimate(self, cond: Condition, stated: StatedBound | None,
                  n_view: int | None = None) -> Estimate:
        """One estimate; ``stated`` is the bound the mechanism states
        (:class:`~privpub.core.capabilities.StatesErrorBound`), None when it states none."""
        n_domain = count(self.schema, cond).value
        n_view = self._count(cond) if n_view is None else n_view

        @_memo
        def context(name: str) -> tuple[int, int]:
            return self._count(cond, within=self._context(name)), cond.count_codes(
                self._context(name))

        counts = Counts(n_view, np.float64(n_domain),
                        _memo(lambda w: count(self.schema, cond, weights=w).value), context)
        mech = self.mechanism_object()
        value, variance = mech.estimate(counts)
        law = mech.interval_law(counts)
        failure = None if stated is None else stated.failure_probability
        return Estimate(float(value), math.sqrt(max(float(variance), 0.0)), self.counts,
                        "unbiased estimator (plug-in stderr)", law.method, law,
                        query=cond.text,
                        bound=None if stated is None else stated.bound,
                        bound_confidence=None if failure is None else 1 - failure,
                        details={"n_view": int(n_view), "n_domain": n_domain,
                                 "failure_probability": failure})

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
        subsets = check_subsets(self.schema, subsets)
        n_view = self._histograms(subsets)
        offsets = np.cumsum([0] + [len(h) for h in n_view])
        n_domain = [self.schema.size // len(h) for h in n_view]

        @_memo
        def context(name: str) -> tuple[np.ndarray, np.ndarray]:
            within = self._context(name)
            inside = self._histograms(subsets, within=within)
            known = covered_histograms(self.schema, subsets,
                                       lambda used: MemoryView(self.schema, within).batches())
            return np.concatenate(inside), np.concatenate(known)

        counts = Counts(np.concatenate(n_view),
                        np.repeat(np.array(n_domain, dtype=float), np.diff(offsets)),
                        _memo(lambda w: np.concatenate([product_sums(self.schema, a, w)
                                                        for a in subsets])),
                        context)
        mech = self.mechanism_object()
        value, variance = mech.estimate(counts)
        law = mech.interval_law(counts)
        return MarginalEstimates(subsets, offsets, counts.n_view, n_domain,
                                 np.asarray(value, dtype=float),
                                 np.sqrt(np.maximum(variance, 0.0)), self.counts,
                                 law.method, law)

    # ---- counting passes -----------------------------------------------------------------
    def _context(self, name: str) -> np.ndarray:
        if name not in self.context:
            raise ParameterError(f"this view has no context set {name!r} "
                                 f"(it has: {sorted(self.context) or 'none'})")
        return self.context[name]

    def _batches(self, attributes: Sequence[str], within: np.ndarray | None) -> Iterator[Digits]:
        """Batches of the view's rows; with ``within``, only rows whose code is in
        that sorted code set (all attributes are read to form the codes)."""
        if within is None:
            yield from self.rows.counting_batches(attributes)
            return
        for batch in self.rows.batches():
            codes = codes_of(self.schema, batch)
            keep = isin_sorted(_rows(codes), _rows(within))
            yield {n: batch[n][keep] for n in self.schema.names}

    def _count(self, cond: Condition, within: np.ndarray | None = None) -> int:
        if not cond.attributes:  # TRUE or FALSE: no column to read
            return int(cond.mask_digits({}, self._rows_in(within)).sum())
        if within is None:
            return self.rows.count(cond)
        total = 0
        for batch in self._batches(cond.attributes, within):
            total += cond.count_digits(batch, len(batch[cond.attributes[0]]))
        return total

    def _rows_in(self, within: np.ndarray | None) -> int:
        """Rows of the view (inside ``within``, when given): on file, counted in a
        pass over one column the first time (not the footer's word for it)."""
        if within is None:
            return self.rows.checked_len()
        return int(isin_sorted(_rows(self.codes), _rows(within)).sum())

    def _histograms(self, subsets: list[list[str]],
                    within: np.ndarray | None = None) -> list[np.ndarray]:
        """Each subset's histogram over the view's rows (within a code set)."""
        return covered_histograms(self.schema, subsets,
                                  lambda used: self._batches(used, within))


def _memo(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``function`` computed once per argument (by identity for arrays: the
    estimator and its interval law ask for the same context or weights)."""
    seen: dict[Any, Any] = {}

    def memoised(arg: Any) -> Any:
        key = arg if isinstance(arg, str) else id(arg)
        if key not in seen:
            seen[key] = (arg, function(arg))  # keep arg alive: its id stays unique
        return seen[key][1]

    return memoised


def _rows(codes: np.ndarray) -> np.ndarray:
    """Codes as (n, limbs) rows (what the record helpers take)."""
    return codes.reshape(-1, 1) if codes.ndim == 1 else codes
