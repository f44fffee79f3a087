"""The plan's search: a request accepted exactly when the family's own constructor
accepts it, the feasible region's edges by bisection over those same calls, and
the (k, γ) grid of a family that builds a mechanism per request, each refusal
named in the table's terms (:class:`Search` is what each family's
``plan_rows`` is handed)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from privpub.core.errors import ParameterError
from privpub.core.useful import computed_epsilon, edge, largest_useful_k
from privpub.planning.explain import explain_grid
from privpub.planning.facts import TableFacts

if TYPE_CHECKING:
    from privpub.planning import Plan

#: Smallest k searched when priors below the base rate are allowed.
TINY_K = 1e-9


def _accepts(build: Callable[[], Any]) -> bool:
    try:
        build()
    except ParameterError:
        return False
    return True


def _largest_k(family: Any, variant: str | None, facts: TableFacts, gamma: float,
               failure_probability: float) -> float | None:
    """The largest k the library accepts at γ, priors below the base rate allowed
    (None: not even k = TINY_K is). Feasibility falls with k (a larger prior is
    harder to hide), so k ≥ 1 is feasible exactly when this is ≥ 1; d = 1 is
    always refused, so k = m/n bounds the search."""
    def ok(k: float) -> bool:
        return _accepts(lambda: family.build(facts, variant, k, gamma, failure_probability,
                                             True))
    top = facts.m / facts.n
    if top <= TINY_K or not ok(TINY_K):
        return None
    return edge(ok, TINY_K, top, "log")


def _least_gamma(family: Any, variant: str | None, facts: TableFacts, k: float,
                 failure_probability: float, allow: bool) -> float | None:
    """The least γ in (0, 1) the library accepts at k (None: none is).
    Feasibility grows with γ (a looser posterior bound)."""
    def ok(gamma: float) -> bool:
        return _accepts(lambda: family.build(facts, variant, k, gamma, failure_probability,
                                             allow))
    top, bottom = 1 - 1e-12, 1e-12
    if not ok(top):
        return None
    return bottom if ok(bottom) else edge(ok, top, bottom, "linear")


# ---- the grid ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What :func:`plan` was asked, as the families read it."""

    ks: list[float]
    gammas: list[float]
    failure_probability: float
    allow: bool
    calibrations: Sequence[str] | None   # αβ's; None: every one
    sensitive: str | Sequence[str] | None
    group_sizes: Sequence[int]


class Search:
    """The plan's grid and search, handed to each family's ``plan_rows``."""

    accepts = staticmethod(_accepts)
    edge = staticmethod(edge)

    @staticmethod
    def explain_grid(p: Plan, mechanism: str) -> str:
        """The explanation of a (k, γ)-grid family's rows (its ``explain``)."""
        return explain_grid(p, mechanism)

    @staticmethod
    def privacy_grid(family: Any, facts: TableFacts, request: Request
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The (k, γ) grid of a family that ``build``s a mechanism per request, for each
        of its variants, and its region: by γ the largest accepted k."""
        rows: list[dict[str, Any]] = []
        regions: list[dict[str, Any]] = []
        for variant in family.variants(request):
            edges = {g: _largest_k(family, variant, facts, g, request.failure_probability)
                     for g in request.gammas}
            largest = {g: k if k is not None and (k >= 1 or request.allow) else None
                       for g, k in edges.items()}
            rows.extend(_grid_rows(family, variant, facts, request, largest))
            for g in request.gammas:
                useful = _largest_useful_k(family, variant, facts, g, request, largest[g])
                regions.append({"mechanism": family.name, "calibration": variant, "gamma": g,
                                "largest_k": largest[g], "largest_k_any": edges[g],
                                "largest_useful_k": None if useful is None else useful.k,
                                "useful_epsilon": None if useful is None else
                                _finite(useful.epsilon)})
        return rows, regions


def _largest_useful_k(family: Any, variant: str | None, facts: TableFacts, gamma: float,
                      request: Request, top: float | None) -> Any:
    """The largest accepted k at γ (``top``: the region's, k ≥ 1 unless allowed) whose
    release's bound tells the typical count from zero, as a
    :class:`~privpub.core.useful.UsefulRequest` with its ε (None: none is)."""
    fp, allow = request.failure_probability, request.allow
    least = TINY_K if allow else 1.0
    if top is None or top < least:
        return None

    def build(k: float, g: float) -> Any:
        return family.released(family.build(facts, variant, k, g, fp, allow), facts, g, fp,
                               allow)

    typical = build(top, gamma).resolution().typical
    return largest_useful_k(build, gamma, typical, least, top)


def _finite(value: float) -> float | None:
    """A privacy loss as a plan states it (None: no finite ε)."""
    return None if math.isinf(value) else value


def _refusal(family: Any, variant: str | None, facts: TableFacts, k: float, gamma: float,
             allow: bool) -> str:
    """Which of the library's conditions a refused request misses, in the table's terms
    (the verdict itself is the library's; this only names the cause)."""
    ratio = facts.n / facts.m
    d = k * ratio
    if k < 1 and not allow:
        return (f"k = {k:g} < 1: the prior d = k·n/m = {d:.4g} is below the base rate "
                f"n/m = {ratio:.4g}, an adversary the paper does not protect against "
                "(allow_prior_below_base_rate=True asks for it knowingly)")
    if d >= 1:
        return (f"d = k·n/m = {k:g} × {ratio:.4g} = {d:.4g} ≥ 1: with n/m = {ratio:.4g}, k "
                f"must stay below m/n = {1 / ratio:.4g}")
    if d >= gamma:
        return (f"d = k·n/m = {d:.4g} ≥ γ = {gamma:g}: with n/m = {ratio:.4g} a prior at "
                f"k = {k:g} is already above the posterior bound, which no parameters can meet")
    return (f"{family.refused_by(variant)} cannot meet d = k·n/m = {d:.4g} (n/m = {ratio:.4g}) "
            f"at γ = {gamma:g}")


def _grid_rows(family: Any, variant: str | None, facts: TableFacts, request: Request,
               largest: dict[float, float | None]) -> list[dict[str, Any]]:
    """The rows of one family (and variant: αβ's calibration); ``largest`` is the
    region's largest accepted k by γ (k ≥ 1 unless allowed)."""
    fp, allow = request.failure_probability, request.allow
    least = {k: _least_gamma(family, variant, facts, k, fp, allow) for k in request.ks}
    rows = []
    for gamma in request.gammas:
        for k in request.ks:
            row = {"mechanism": family.name, "calibration": variant, "sensitive": None,
                   "k": k, "gamma": gamma, "d": k * facts.n / facts.m, "group_size": None,
                   "largest_k": largest[gamma], "least_gamma": least[k]}
            try:
                mech = family.build(facts, variant, k, gamma, fp, allow)
            except ParameterError as exc:
                bounds = (f"; largest feasible k at γ = {gamma:g}: "
                          + (f"{largest[gamma]:.4g}" if largest[gamma] is not None else
                             "none" + ("" if allow else " ≥ 1"))
                          + f"; least γ at k = {k:g}: "
                          + (f"{least[k]:.4g}" if least[k] is not None else "none below 1"))
                rows.append(row | {"feasible": False, "library_error": str(exc),
                                   "reason": _refusal(family, variant, facts, k, gamma,
                                                      allow) + bounds})
                continue
            expected, stderr = family.expected_rows(mech, facts.published,
                                                    facts.distinct or facts.published)
            # The release states n, and the bound, for the records published.
            released = family.released(mech, facts, gamma, fp, allow)
            resolution, guarantee = released.resolution(), released.guarantee()
            rows.append(row | {
                "feasible": True, **family.grid_parameters(mech),
                "error_bound": released.error_bound(), "typical_count": resolution.typical,
                "weak_usefulness": resolution.weak, "rows": expected, "rows_stderr": stderr,
                "bytes": family.view_bytes(mech, expected),
                "epsilon": _finite(computed_epsilon(guarantee)),
                "claims_not_met": [c.name for c in guarantee.claims if not c.holds]})
    return rows
