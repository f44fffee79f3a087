"""Stated guarantees: each claim with the result it comes from and whether it holds.

Every mechanism's ``guarantee()`` returns a :class:`Guarantee`; a claim says
"holds" only for what holds for these parameters and the data published, and
its statement says for whom it does not. A claim that holds but does not give
what its name promises (an error bound too large to tell typical counts from
zero, :class:`Resolution`) is marked ``weak`` and printed "holds only weakly".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from privpub.core.errors import UsefulnessWarning

#: The names of the two pure differential-privacy claims, the same in every family:
#: neighbours of the same size, one tuple (or record) replaced by another (the
#: αβ paper's ε-indistinguishability, Def. A.1; the relationship paper's Def. 2.7),
#: and neighbours one tuple apart (Dwork, McSherry, Nissim, Smith 2006).
INDISTINGUISHABILITY = "ε-indistinguishability (replace one tuple)"
DIFFERENTIAL_PRIVACY = "ε-differential privacy (add or remove one tuple)"


@dataclass(frozen=True)
class Claim:
    """One statement: its name, whether it holds, the text, and its source;
    ``weak`` when it holds only in the weaker sense its statement explains."""

    name: str
    holds: bool
    statement: str
    source: str
    weak: bool = False
    #: The privacy loss a pure differential-privacy claim computes (None: none is
    #: finite, or the claim is of another kind); ``holds`` says whether it is met.
    epsilon: float | None = None


@dataclass(frozen=True)
class Guarantee:
    """The privacy and utility statement a mechanism meets for its parameters."""

    mechanism: str
    claims: tuple[Claim, ...]

    def __getitem__(self, name: str) -> Claim:
        for claim in self.claims:
            if claim.name == name:
                return claim
        raise KeyError(f"no claim {name!r}; claims: {[c.name for c in self.claims]}")

    @property
    def epsilon(self) -> float:
        """The ε of the replacement claim (:data:`INDISTINGUISHABILITY`) when it
        holds; ``math.inf`` when it does not or none is stated."""
        for claim in self.claims:
            if claim.name == INDISTINGUISHABILITY and claim.holds and claim.epsilon is not None:
                return claim.epsilon
        return math.inf

    def __str__(self) -> str:
        lines = [f"Guarantee of {self.mechanism}:"]
        for c in self.claims:
            mark = ("does NOT hold" if not c.holds else
                    "holds only weakly" if c.weak else "holds")
            lines.append(f"  - {c.name}: {mark} [{c.source}]")
            lines.extend(f"      {part}" for part in c.statement.split("\n"))
        return "\n".join(lines)


#: Attributes named one by one in a usefulness statement; the rest are counted.
NAMED_ATTRIBUTES = 6


@dataclass(frozen=True)
class Resolution:
    """Which counts a per-query error bound tells from zero: the usefulness rule.

    A count c is *within the bound of zero* when c ≤ B, the mechanism's
    per-query (ρ, ε) bound: an estimate equal to c is then within B of 0 as
    well, so the bound cannot tell that count from an empty query's. The
    *typical count* of a release is n/|D_j| for the attribute j with the fewest
    values: the mean count of an equality query on that attribute (exact for
    any data: the counts of its |D_j| values sum to n), the largest such mean
    over the attributes. Usefulness is *weak* when B ≥ n/min_j |D_j|: then, on
    every attribute, the average single-attribute equality count is within the
    bound of zero (B ≥ n, where no count at all is, is the extreme case).

    Why this count: (1) it follows from what a release publishes (n and the
    domains), so a reopened release gives the same verdict and no statistic
    of the data enters its metadata; (2) it is exact whatever the data, not a
    guess at their distribution; (3) the coarsest attribute makes a warning
    mean that even the broadest equality queries are lost. The finer means fire
    on releases that do their job: over all single-attribute equality queries
    the mean count is n/mean_j |D_j| = 1,635 on Adult and the median
    attribute's n/|D_j| is 4,309, both below the ±6,001 bound of the paper's own
    setting (k = 10, γ = 0.2), which resolves the queries on sex and salary
    (15,081 per value on average) the paper evaluates. :meth:`statement` names
    the attributes whose average equality count is within the bound, so that
    finer information is stated without a warning.

    ``n`` is what the release counts (``counts``: records, or distinct tuples
    under duplicates="set"); ``domains`` holds (attribute, |D_j|) pairs.
    """

    mechanism: str
    bound: float
    failure_probability: float
    n: int
    counts: str
    domains: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, mechanism: str, bound: float, failure_probability: float, n: int, counts: str,
           attributes: Iterable[Any]) -> Resolution:
        """The rule for a schema's attributes (each with ``name`` and ``size``)."""
        return cls(mechanism, float(bound), float(failure_probability), int(n), counts,
                   tuple((a.name, int(a.size)) for a in attributes))

    @property
    def coarsest(self) -> tuple[str, int]:
        """The attribute with the fewest values (the first such), and its |D|."""
        return min(self.domains, key=lambda d: d[1])

    @property
    def typical(self) -> float:
        """n/|D| for the coarsest attribute: the release's typical count."""
        return self.n / self.coarsest[1]

    def within(self, size: int) -> bool:
        """Whether n/size, the mean equality count over size values, is ≤ the bound."""
        return self.bound * size >= self.n

    @property
    def weak(self) -> bool:
        """Whether the bound is ≥ the typical count (usefulness only weak)."""
        return self.within(self.coarsest[1])

    @property
    def most_values(self) -> int:
        """The most values an attribute may have for its mean equality count
        n/|D| to exceed the bound (0: none, the bound is ≥ n)."""
        return math.ceil(self.n / self.bound) - 1 if self.bound > 0 else self.n

    def _domain_advice(self) -> str:
        if self.most_values < 2:
            return (f"coarser domains cannot do it, as even a two-valued attribute's mean "
                    f"equality count n/2 = {self.n / 2:,.1f} is within the bound")
        return (f"or coarser domains: an attribute's equality counts exceed ±{self.bound:,.1f} "
                f"on average only with at most {self.most_values:,} values (fewer than "
                f"n/bound = {self.n / self.bound:,.2f})")

    def _failure(self) -> str:
        name, size = self.coarsest
        if self.bound >= self.n:
            return (f"is ≥ n = {self.n:,} {self.counts} itself: it cannot tell any count, not "
                    "even the whole table's, from zero")
        return (f"is ≥ {self.typical:,.1f} = n/|D| for {name} ({size:,} values; n = "
                f"{self.n:,} {self.counts}), the mean count of an equality query on the "
                "attribute with the fewest values: even an estimate equal to such a count "
                "is within the bound of zero, so the release cannot tell typical counts "
                "from zero")

    def statement(self) -> str:
        """What the bound resolves, for a usefulness claim's statement."""
        if self.weak:
            return (f"Usefulness holds only in a weak sense: the bound holds but "
                    f"{self._failure()}. A bound below {self.typical:,.1f} would resolve "
                    f"them; {self._domain_advice()}.")
        lost = [(name, self.n / size) for name, size in self.domains if self.within(size)]
        kept = [name for name, size in self.domains if not self.within(size)]
        if not lost:
            name, size = max(self.domains, key=lambda d: d[1])
            return (f"Every attribute's mean equality count n/|D| exceeds the bound (the "
                    f"least: {name}, {self.n / size:,.1f}).")
        shown = ", ".join(f"{name} ({mean:,.1f})" for name, mean in lost[:NAMED_ATTRIBUTES])
        more = len(lost) - NAMED_ATTRIBUTES
        shown += f" and {more} more" if more > 0 else ""
        return (f"Counts no larger than the bound are within it of zero. The mean equality "
                f"count n/|D| is within the bound for {shown}; it exceeds the bound for "
                f"{', '.join(kept)}.")

    def warning(self, remedy: str | None = None) -> str:
        """The text of the :class:`UsefulnessWarning` of a weak release. ``remedy``
        (:func:`privpub.core.useful.remedy`: the requests that make the release
        useful and their cost in privacy) leads it when given."""
        figures = (f"the error bound ±{self.bound:,.1f} (each query, w.p. ≥ "
                   f"{1 - self.failure_probability:g}) {self._failure()}; the guarantee says "
                   "usefulness holds only weakly")
        if remedy is not None:
            return (f"{self.mechanism}: to tell typical counts ({self.typical:,.1f}) from "
                    f"zero, ask for {remedy}. As published, {figures}. Other routes: another "
                    "mechanism or αβ calibration (privpub.plan(table) and `privpub plan "
                    f"--input FILE` give each one's bound); {self._domain_advice()}.")
        return (f"{self.mechanism}: {figures}. A bound below {self.typical:,.1f} would "
                "resolve them: a smaller k or a larger γ, or another mechanism or αβ "
                "calibration (privpub.plan(table) and `privpub plan --input FILE` give "
                f"each one's bound); {self._domain_advice()}.")


def stated_size_claim(unit: str, unstated: str) -> Claim:
    """The add/remove claim of a table release, which never holds: every
    release states n, the number of ``unit`` it was published from, exactly.
    ``unstated`` says what the mechanism alone would give were n not stated."""
    return Claim(
        DIFFERENTIAL_PRIVACY, False,
        f"the release states n, the number of {unit} published, exactly, so two tables one "
        f"{unit.removesuffix('s')} apart (one added or removed) are told apart with "
        f"certainty: no ε is finite under addition or removal. {unstated}",
        "Dwork, McSherry, Nissim, Smith 2006 (unbounded neighbours)")


def usefulness_claim(statement: str, source: str, resolution: Resolution) -> Claim:
    """The (ρ, ε)-usefulness claim: the bound's statement, then what it resolves
    (weak when :attr:`Resolution.weak`)."""
    return Claim("(ρ, ε)-usefulness", True, f"{statement}\n{resolution.statement()}", source,
                 weak=resolution.weak)


def warn_if_weak(resolution: Resolution | None, stacklevel: int = 2,
                 remedy: Callable[[], str | None] | None = None) -> None:
    """A :class:`UsefulnessWarning` when a release's usefulness is weak
    (``stacklevel`` as for :func:`warnings.warn`, counted from the caller),
    led by ``remedy()`` (asked only then) when given."""
    if resolution is not None and resolution.weak:
        warnings.warn(resolution.warning(None if remedy is None else remedy()),
                      UsefulnessWarning, stacklevel=stacklevel + 1)


#: The parameters of (d, γ)-privacy, (ρ, ε)-usefulness and record publication that the
#: table families state under these names: (the paper's letter, "—" for none; meaning).
#: Each family's ``parameter_meanings`` (:class:`~privpub.core.capabilities.DescribesParameters`)
#: takes those it states from here.
PRIVACY_PARAMETERS = {
    "n": ("n", "records (or distinct tuples) published from"),
    "d": ("d", "prior bound of (d, γ)-privacy: the adversaries protected believe Pr[t] ≤ d"),
    "gamma": ("γ", "posterior bound of (d, γ)-privacy: Pr[t | V] ≤ γ"),
    "failure_probability": ("ε", "probability that the (ρ, ε) error bound fails, per query"),
    "error_bound": ("ρ√n", "the per-query error bound, holding with probability ≥ 1 − ε"),
    "allow_prior_below_base_rate": ("—", "whether d below the base rate n/m was allowed"),
    "records": ("—", "how repeated tuples were published, and how many repeat"),
}
