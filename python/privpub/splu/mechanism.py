"""SPLU-Gen: small-sum privacy, large-sum utility (Wong et al., Sec. 3).

For each sensitive attribute S (several are randomised independently):

1. (eligibility) every value of S has frequency ≤ N/γ;
2. the records are partitioned into decoy groups of γ records with distinct
   values of S (:mod:`privpub.splu.partition`, deterministic, not published);
3. each record publishes, as its value of S, the value of a uniformly drawn
   member of its group (p = q = 1/γ: its own value or any decoy equally);
4. the non-sensitive attributes are published unchanged, the rows in a
   canonical order (sorted by tuple code): the order is a function of the
   published multiset, so, like the paper's random shuffle, it says nothing
   about record ids or groups.

The records in no group (N mod γ of them, Sec. 3 deletes them) are not
published; :meth:`SPLUGen.publish` warns with their count and row ids, the
release stores the count, and :meth:`SPLUGen.partition` gives the ids again.
With several sensitive attributes a record is published only if it is in a
group of every attribute: the first attribute's N mod γ residue is left out
and the partitions recomputed on the rest, a multiple of γ, where eligible
values leave no residue (so N mod γ records are left out in all, as with one
attribute; each estimator then sees complete groups). With one sensitive
attribute this is the paper's partition with its residue deleted.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

import privpub._core as _core
from privpub.core import validate
from privpub.core.capabilities import FloatArray, SumCells
from privpub.core.errors import ParameterError
from privpub.core.estimate import Estimate, Estimates, PointLaw, check_level
from privpub.core.guarantee import PRIVACY_PARAMETERS, Guarantee
from privpub.core.inputs import TableLike
from privpub.core.release import register_mechanism
from privpub.core.renamed import renamed_keywords
from privpub.core.seeding import RandomSource, SeedLike, resolve_seed
from privpub.counting.query import Condition
from privpub.domain.schema import Schema
from privpub.splu.claims import domain_claims, epsilon_claims, residue_claims, splu_claims
from privpub.splu.partition import DecoyGroups, check_eligible, decoy_groups
from privpub.splu.predicates import split
from privpub.tables.distributed import DaskRelease, is_dask
from privpub.tables.published import PublishedView
from privpub.tables.records import as_schema_codes, records_as_codes, sorted_rows
from privpub.viewfile.columns import codes_of

#: How an estimate of a count the release publishes unchanged is made, and its interval's kind.
EXACT, POINT = "exact: published unchanged", "point"


@dataclass
class ExactLaw:
    """A figure the release publishes unchanged: the point, at every level."""

    value: float
    method: str = POINT

    def interval(self, level: float) -> tuple[float, float]:
        check_level(level)
        return self.value, self.value


@dataclass(frozen=True)
class Partition:
    """What :meth:`SPLUGen.partition` returns: each sensitive attribute's decoy
    groups (record ids are row positions of the data) and the rows in none."""

    groups: dict[str, DecoyGroups]
    residue: np.ndarray


@register_mechanism
class SPLUGen:
    """SPLU-Gen over a schema, with decoy groups of ``group_size`` records.

    Parameters
    ----------
    group_size : int
        The paper's γ ≥ 2: records per decoy group; each record keeps its
        sensitive value with probability 1/γ. (Earlier versions called it
        ``gamma``, which now means only a posterior bound, as in αβ and FRAPP.)
    sensitive : str or sequence of str
        The sensitive attribute(s); every other attribute is published as is.
    schema : Schema, optional
        The domain; without it, ``publish`` derives one from the data (and the
        guarantee says the domain was derived).
    n, records_given, residue : int, optional
        Set on a release: rows published, rows given, rows in no group.

    Examples
    --------
    >>> import privpub
    >>> df, schema = privpub.datasets.load_adult()
    >>> mech = privpub.splu.SPLUGen(5, "occupation", schema=schema)
    >>> view = mech.publish(df, seed=1)  # doctest: +SKIP
    """

    name: ClassVar[str] = "splu"
    #: Parameter names that files written by earlier versions store, and their names now.
    renamed_parameters: ClassVar[dict[str, str]] = {"gamma": "group_size"}
    #: What each parameter means (:class:`~privpub.core.capabilities.DescribesParameters`).
    parameter_meanings: ClassVar[Mapping[str, tuple[str, str]]] = {
        "n": PRIVACY_PARAMETERS["n"],
        "group_size": ("γ", "SPLU-Gen's decoy group size: records per group, each with a "
                            "distinct sensitive value"),
        "sensitive": ("S", "the sensitive attribute(s), randomised within decoy groups"),
        "records_given": ("N", "records given to the mechanism"),
        "residue": ("N mod γ", "records left in no decoy group (not published)"),
    }
    #: Why the presence audit has nothing to test
    #: (:class:`~privpub.core.capabilities.RefusesPresenceAudit`).
    presence_refusal: ClassVar[str] = (
        "a SPLU-Gen release publishes every grouped record's non-sensitive attributes as "
        "they are and makes no claim about presence; audit a sensitive attribute instead "
        "(audit(), or privpub attack --secret)")

    @renamed_keywords(gamma="group_size")
    def __init__(self, group_size: int, sensitive: str | Sequence[str], *,
                 schema: Schema | None = None, n: int | None = None,
                 records_given: int | None = None, residue: int | None = None):
        self.group_size = validate.integer("group_size", group_size, minimum=2)
        names = [sensitive] if isinstance(sensitive, str) else sensitive
        if not isinstance(names, Sequence) or not names or \
                not all(isinstance(s, str) for s in names):
            raise ParameterError(f"sensitive must be an attribute name or a non-empty list of "
                                 f"names, got {sensitive!r}")
        if len(set(names)) != len(names):
            raise ParameterError(f"sensitive attributes repeat: {list(names)}")
        self.sensitive = list(names)
        if schema is not None:
            self._check_schema(schema)
        self.schema = schema
        self.n = validate.optional(validate.integer, "n", n, minimum=1)
        self.records_given = validate.optional(validate.integer, "records_given", records_given)
        self.residue = validate.optional(validate.integer, "residue", residue)
        if None not in (self.n, self.records_given, self.residue) and \
                self.n + self.residue != self.records_given:
            raise ParameterError(f"n + residue = {self.n} + {self.residue} must equal "
                                 f"records_given = {self.records_given}")
        if self.n is not None and self.n % self.group_size:
            raise ParameterError(f"n = {self.n} published rows is not a multiple of group_size = "
                                 f"{self.group_size}: rows come in whole decoy groups")

    def _check_schema(self, schema: Schema) -> None:
        if not isinstance(schema, Schema):
            raise ParameterError(f"schema must be a privpub.Schema, got {type(schema).__name__}")
        missing = [s for s in self.sensitive if s not in schema.names]
        if missing:
            raise ParameterError(f"sensitive attribute(s) {missing} are not in the schema "
                                 f"(attributes: {list(schema.names)})")
        for s in self.sensitive:
            if schema[s].size < self.group_size:
                raise ParameterError(f"sensitive attribute {s!r} has {schema[s].size} values; "
                                     f"a decoy group needs group_size = {self.group_size} "
                                     "distinct ones")

    @classmethod
    def from_parameters(cls, schema: Schema, parameters: Mapping[str, Any]) -> SPLUGen:
        """The mechanism of a release's parameters, checked as by the constructor."""
        p = parameters
        return cls(validate.field(p, "group_size"), validate.field(p, "sensitive"), schema=schema,
                   n=validate.field(p, "n"), records_given=validate.field(p, "records_given"),
                   residue=validate.field(p, "residue"))

    def parameters(self) -> dict[str, Any]:
        return {"group_size": self.group_size, "sensitive": list(self.sensitive), "n": self.n,
                "records_given": self.records_given, "residue": self.residue}

    def guarantee(self) -> Guarantee:
        """The claims of :mod:`privpub.splu.claims` for these parameters."""
        derived = self.schema.derived if self.schema is not None else ()
        claims = (domain_claims(derived) + epsilon_claims()
                  + splu_claims(self.group_size, self.sensitive)
                  + residue_claims(self.residue, self.records_given))
        return Guarantee(f"SPLU-Gen (γ = {self.group_size}, sensitive: "
                         f"{', '.join(self.sensitive)})", tuple(claims))

    def estimate_release_many(self, view: PublishedView,
                              conditions: Sequence[Condition]) -> Estimates:
        """Each condition's count from a release of this mechanism
        (:meth:`PublishedView.estimate_many <privpub.PublishedView.estimate_many>`
        calls this): a condition on non-sensitive attributes alone is published
        exactly (an exact estimate: stderr 0, interval the point); one with
        sensitive equalities, ``P AND s = 'v' AND …``, is count(P ∧ s …) by
        :func:`~privpub.splu.reconstruction.reconstruct_many` (the paper's
        method, the count stopping rule), and ``s = 'v'`` alone the value's
        published count, the MLE
        (:func:`~privpub.splu.reconstruction.sensitive_count`). What none of these
        answers is a QueryError naming the part (:mod:`privpub.splu.predicates`)."""
        from privpub.splu.reconstruction import reconstruct_many, sensitive_count

        asked = [split(c, self.sensitive) for c in conditions]
        # One value over all records: its published count, the MLE (Theorem 2).
        alone = {i: sensitive_count(view, *next(iter(values.items())))
                 for i, (where, values) in enumerate(asked) if where is None and len(values) == 1}
        sensitive = [i for i, (_, values) in enumerate(asked) if values and i not in alone]
        found = alone | dict(zip(sensitive, reconstruct_many(view, [asked[i] for i in sensitive])
                                 if sensitive else [], strict=True))
        # Each estimate shows its query as written (the reconstruction's P is rebuilt
        # from the atoms, with the missing markers' guards and IS NULL spelled out).
        return Estimates.of([replace(found[i], query=c.text) if i in found
                             else self._exact(view, c) for i, c in enumerate(conditions)])

    def _exact(self, view: PublishedView, cond: Condition) -> Estimate:
        """A count the release publishes unchanged (non-sensitive attributes)."""
        n = view.count(cond)
        notes = (f"{self.residue} record(s) in no decoy group are not in the release; this "
                 "counts the published ones",) if self.residue else ()
        return Estimate(float(n), 0.0, "records", EXACT, POINT, PointLaw(n), query=cond.text,
                        notes=notes)

    def estimate_sum(self, cells: SumCells, cell_weights: FloatArray) -> tuple[float, float]:
        """A sum over attributes published unchanged (the floor refuses one that reads
        a sensitive attribute): the published records' own sum, exact."""
        return float(np.dot(cell_weights, np.asarray(cells.n_view, dtype=float))), 0.0

    def sum_law(self, cells: SumCells, cell_weights: FloatArray, value_range: tuple[float, float]
                ) -> ExactLaw:
        """The published sum, a point at every level."""
        return ExactLaw(self.estimate_sum(cells, cell_weights)[0])

    def hidden_attributes(self) -> list[str]:
        """The sensitive attributes: randomised within decoy groups, so none identifies
        a record (:class:`~privpub.core.capabilities.HidesAttributes`)."""
        return list(self.sensitive)

    def audit_subset_sums(self, view: PublishedView, qi_columns: Sequence[int], secret: int,
                          one: int, tuple_digits: Sequence[np.ndarray],
                          queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The attribute audit's subset sums from this release's own reconstruction
        (:func:`privpub.splu.audit.subset_sums`)."""
        from privpub.splu.audit import subset_sums

        return subset_sums(self, view, qi_columns, secret, one, tuple_digits, queries)

    def count_from_states(self, y: np.ndarray) -> np.ndarray:
        """count(P ∧ s) for a batch of published state counts y (Q, 4) of one sensitive
        value, states ordered (¬P ¬s, ¬P s, P ¬s, P s): the paper's Eq. 13/14, as
        :func:`~privpub.splu.reconstruction.reconstruct_many` runs it. For callers that
        hold a release, not this package (the attack audits)."""
        from privpub.splu.em import paper_em

        return paper_em(np.asarray(y, dtype=np.float64), self.group_size)[0][:, -1]

    # ---- publishing -------------------------------------------------------------------
    def _digits(self, data: TableLike | np.ndarray, schema: Schema | None
                ) -> tuple[Schema, list[np.ndarray]]:
        schema = schema or self.schema
        if schema is None:
            schema = Schema.from_frame(data)
        self._check_schema(schema)
        codes = records_as_codes(schema, data)
        if len(codes) == 0:
            raise ParameterError("the data hold no records; there is nothing to publish")
        return schema, schema.digits(codes)

    def partition(self, data: TableLike | np.ndarray, schema: Schema | None = None
                  ) -> Partition:
        """The decoy groups of ``data`` (deterministic) and the rows in none, for the
        data owner: the same partition :meth:`publish` uses; never published."""
        schema, digits = self._digits(data, schema)
        return self._partition(schema, self._sensitive_of(schema, digits))

    def _sensitive_of(self, schema: Schema, digits: list[np.ndarray]) -> dict[str, np.ndarray]:
        return {s: digits[schema.names.index(s)] for s in self.sensitive}

    def _partition(self, schema: Schema, sensitive: Mapping[str, np.ndarray]) -> Partition:
        rows = np.arange(len(sensitive[self.sensitive[0]]), dtype=np.int64)
        dropped: list[np.ndarray] = []
        while True:
            groups = {}
            for s in self.sensitive:
                attr = schema[s]
                note = "" if not dropped else (
                    f" after {sum(map(len, dropped))} records in no group of another sensitive "
                    "attribute were left out")
                check_eligible(s, sensitive[s][rows], attr.values, self.group_size, note)
                part = decoy_groups(sensitive[s][rows], attr.size, self.group_size)
                groups[s] = DecoyGroups(rows[part.members], rows[part.residue])
            residue = np.unique(np.concatenate([g.residue for g in groups.values()]))
            # Done when no group holds a record left out by another attribute (always
            # so with one sensitive attribute: the paper's partition, residue deleted).
            if not any(np.isin(g.members, residue).any() for g in groups.values()):
                dropped.append(residue)
                break
            # Leave out the first attribute's residue alone: the N − (N mod γ) rows left
            # are a multiple of γ, so greedy groups over eligible values leave none
            # (Anatomy, Lemma 3) and every attribute covers the same rows. Leaving out
            # the union of the residues instead changes N mod γ again, and repeating
            # that dropped 7,438 of 20,000 records (occupation and age bands, γ = 3).
            first = groups[self.sensitive[0]].residue
            drop = first if len(first) else residue
            dropped.append(drop)
            rows = np.setdiff1d(rows, drop, assume_unique=True)
            if len(rows) == 0:
                raise ParameterError("no records are left in complete decoy groups")
        return Partition(groups, np.sort(np.concatenate(dropped)))

    def randomise(self, schema: Schema, sensitive: Mapping[str, np.ndarray],
                  source: RandomSource) -> tuple[dict[str, np.ndarray], np.ndarray, Partition]:
        """Steps 2–3 on the sensitive columns alone (domain indices, in row
        order): each one's published indices, which rows are published (those
        in a group) and the partition. One machine and Dask both call this."""
        part = self._partition(schema, sensitive)
        keep = np.ones(len(sensitive[self.sensitive[0]]), dtype=bool)
        keep[part.residue] = False
        published = {}
        for s, groups in part.groups.items():
            values = np.ascontiguousarray(sensitive[s], dtype=np.uint32)
            members = np.ascontiguousarray(groups.members.reshape(-1), dtype=np.uint32)
            drawn = _core.splu.decoy_draw(source.derive(f"splu:{s}").key, members, values,
                                          self.group_size)
            published[s] = sensitive[s].copy()
            published[s][members] = drawn.astype(published[s].dtype)
        return published, keep, part

    def publish(self, data: TableLike | np.ndarray, seed: SeedLike = None, *,
                schema: Schema | None = None,
                npartitions: int | None = None) -> PublishedView | DaskRelease:
        """Randomise every sensitive attribute over each record's decoy group and
        return the release (rows sorted by code; see the module docstring).
        Warns with the count and row ids of records in no group.

        A dask DataFrame (with a declared schema) gives a lazy
        :class:`~privpub.tables.distributed.DaskRelease`
        (:func:`privpub.splu.distributed.publish_dask`) equal to this release
        for the same seed and row order; its residue count is in the release's
        parameters and guarantee."""
        if is_dask(data):
            from privpub.splu.distributed import publish_dask
            return publish_dask(self, data, schema or self.schema, resolve_seed(seed),
                                npartitions)
        schema, digits = self._digits(data, schema)
        source = resolve_seed(seed)
        published, keep, part = self.randomise(schema, self._sensitive_of(schema, digits),
                                               source)
        if len(part.residue):
            shown = ", ".join(map(str, part.residue[:20])) + (
                ", …" if len(part.residue) > 20 else "")
            warnings.warn(f"SPLU-Gen: {len(part.residue)} of {len(keep):,} records are in no "
                          f"decoy group (N mod γ = {len(keep) % self.group_size}) and are not "
                          f"published; row positions: {shown} (SPLUGen.partition lists them)",
                          UserWarning, stacklevel=2)
        rows = {n: published.get(n, d)[keep] for n, d in zip(schema.names, digits, strict=True)}
        codes = sorted_rows(codes_of(schema, rows).reshape(int(keep.sum()), -1))
        return PublishedView(as_schema_codes(schema, codes), schema, self.name,
                             self.released(schema, len(keep), len(part.residue)).parameters(),
                             source.policy)

    def released(self, schema: Schema, records_given: int, residue: int) -> SPLUGen:
        """This mechanism as stated for a release of ``records_given`` rows less
        the ``residue``."""
        return SPLUGen(self.group_size, self.sensitive, schema=schema, n=records_given - residue,
                       records_given=records_given, residue=residue)
