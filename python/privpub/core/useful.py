"""The request that makes a weakly useful release useful, and what it costs in privacy.

A release's usefulness is weak when its per-query error bound is at least its
typical count (:class:`~privpub.core.guarantee.Resolution`). A (k, γ) family's
``for_privacy`` takes a prior bound d = k·n/m and a posterior bound γ: the
bound falls as k falls or γ rises, and the privacy each buys weakens with it
(adversaries with a prior between the new d and the old are no longer
protected, or the posterior may reach the larger γ; the pure-DP ε rises).
:func:`useful_requests` finds, for a release's own request, the largest k at
its γ and the least γ at its k whose bound is below the typical count, each by
bisection over the family's own constructor (``build``); :func:`remedy` says
them, with their cost, for a warning; :func:`edge` is the bisection, shared
with the plan's search (:mod:`privpub.planning.search`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from privpub.core.errors import ParameterError
from privpub.core.guarantee import INDISTINGUISHABILITY, Guarantee, Resolution

#: Bisection steps of a region's edge (γ over (0, 1): 80 halvings leave a relative gap
#: far below the digits shown).
STEPS = 80
#: Bisection steps of a useful request's edge: k over [1, 10^5] in log scale, or γ over
#: (0, 1), to a relative 10^-5 or better, the 3 digits a warning shows.
USEFUL_STEPS = 24
#: The largest posterior bound a useful request may ask (γ must stay below 1).
TOP_GAMMA = 1 - 1e-9


class BuiltRelease(Protocol):
    """What the search reads of a release a (k, γ) family builds for a request."""

    @property
    def d(self) -> float | None: ...

    def error_bound(self) -> float | None: ...

    def guarantee(self) -> Guarantee: ...


class Domain(Protocol):
    @property
    def size(self) -> int: ...


class StatedRequest(BuiltRelease, Protocol):
    """What :func:`release_remedy` reads of a release: its request and how it was built."""

    @property
    def schema(self) -> Domain: ...
    @property
    def gamma(self) -> float | None: ...
    @property
    def n(self) -> int | None: ...
    @property
    def records(self) -> Mapping[str, object] | None: ...
    @property
    def failure_probability(self) -> float: ...
    @property
    def allow_prior_below_base_rate(self) -> bool: ...

    def resolution(self) -> Resolution | None: ...

    def with_records(self, n: int, records: Mapping[str, object]) -> StatedRequest: ...


#: A family's release for a request (k, γ), or its ParameterError.
Build = Callable[[float, float], BuiltRelease]


def edge(ok: Callable[[float], bool], good: float, bad: float, scale: str,
         steps: int = STEPS) -> float:
    """The last accepted value between ``good`` (accepted) and ``bad`` (refused),
    by bisection (``scale``: "linear", "log" or "integer"; with "integer" and
    integer ends, every value tried, and the one returned, is an integer): a
    region's edge as the library draws it, not a formula."""
    for _ in range(steps):
        if scale == "integer":
            mid = (good + bad) // 2
        else:
            mid = math.sqrt(good * bad) if scale == "log" else (good + bad) / 2
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if ok(mid) else (good, mid)
    return good


@dataclass(frozen=True)
class UsefulRequest:
    """A (k, γ) request: its prior bound d, its error bound and its pure-DP ε
    (``math.inf`` when no finite ε is stated)."""

    k: float
    gamma: float
    d: float
    bound: float
    epsilon: float


def request(build: Build, k: float, gamma: float) -> UsefulRequest:
    """The release ``build(k, γ)`` gives (its ParameterError passes through), as a request."""
    mech = build(k, gamma)
    d, bound = mech.d, mech.error_bound()
    if d is None or bound is None:
        raise ParameterError(f"a release for k = {k:g}, γ = {gamma:g} states no prior bound d "
                             "or no error bound (it has no n)")
    return UsefulRequest(k, gamma, d, bound, computed_epsilon(mech.guarantee()))


def computed_epsilon(guarantee: Guarantee) -> float:
    """The ε its replacement claim computes for a mechanism's parameters (``math.inf``:
    none), whether or not the claim holds for the data: a request's cost in privacy
    is its parameters' ε; where the claim fails for the data (domains derived from
    it, repeated tuples) the guarantee and the plan say so on their own."""
    for claim in guarantee.claims:
        if claim.name == INDISTINGUISHABILITY and claim.epsilon is not None:
            return claim.epsilon
    return math.inf


def _useful(build: Build, k: float, gamma: float,
            typical: float) -> bool:
    try:
        bound = build(k, gamma).error_bound()
    except ParameterError:
        return False
    return bound is not None and bound < typical


def largest_useful_k(build: Build, gamma: float, typical: float,
                     least_k: float, top: float) -> UsefulRequest | None:
    """The largest k in [``least_k``, ``top``] at γ whose release (``build(k, γ)``)
    has a bound below ``typical`` (``top`` itself when its bound is), as a request
    with k rounded down to the 3 digits shown; None when even ``least_k``'s is not.
    The bound falls as k falls."""
    if least_k > top or not _useful(build, least_k, gamma, typical):
        return None
    if _useful(build, top, gamma, typical):
        return request(build, top, gamma)
    found = edge(lambda x: _useful(build, x, gamma, typical), least_k, top, "log", USEFUL_STEPS)
    shown = _rounded(found, math.floor)          # as said, and still useful
    return request(build, shown if shown >= least_k else found, gamma)


def useful_requests(build: Build, k: float, gamma: float,
                    typical: float, least_k: float
                    ) -> tuple[UsefulRequest | None, UsefulRequest | None]:
    """For the request (k, γ), whose bound does not tell ``typical`` from zero: the
    largest k' in [``least_k``, k) at γ (:func:`largest_useful_k`), and the least
    γ' in (γ, 1) at k, whose release (``build(k', γ)``, ``build(k, γ')``) has a
    bound below ``typical`` (None where there is none). The bound falls as γ rises."""
    by_k = largest_useful_k(build, gamma, typical, least_k, k) if least_k < k else None
    by_gamma = None
    if _useful(build, k, TOP_GAMMA, typical):
        found = edge(lambda g: _useful(build, k, g, typical), TOP_GAMMA, gamma, "linear",
                     USEFUL_STEPS)
        shown = _rounded(found, math.ceil)       # as said, and still useful
        by_gamma = request(build, k, shown if shown < 1 else found)
    return by_k, by_gamma


def _rounded(value: float, direction: Callable[[float], float]) -> float:
    """``value`` to the 3 significant digits a warning shows, rounded by ``direction``
    (down for k, up for γ: towards the useful side of the edge)."""
    scale = 10.0 ** (math.floor(math.log10(value)) - 2)
    return direction(value / scale) * scale


def _epsilon(value: float) -> str:
    return "no finite ε" if math.isinf(value) else f"ε = {value:.3g}"


def _epsilon_change(asked: UsefulRequest, current: UsefulRequest) -> str:
    """", and ε = … instead of ε = …", or nothing when neither states a finite ε."""
    if math.isinf(asked.epsilon) and math.isinf(current.epsilon):
        return ""
    return f", and {_epsilon(asked.epsilon)} instead of {_epsilon(current.epsilon)}"


def remedy(current: UsefulRequest, by_k: UsefulRequest | None,
           by_gamma: UsefulRequest | None) -> str | None:
    """The useful requests of :func:`useful_requests` as a warning leads with them
    (None when there is none): each as the ``for_privacy`` call that asks for it,
    then its cost in privacy against ``current``."""
    said = []
    if by_k is not None:
        asks = f"for_privacy(gamma={by_k.gamma:g}, k={by_k.k:.3g})" + (
            "" if math.isinf(by_k.epsilon) else
            f" or for_privacy(gamma={by_k.gamma:g}, epsilon={by_k.epsilon:.4g})")
        said.append(
            f"k = {by_k.k:.3g} instead of {current.k:.3g} at γ = {by_k.gamma:g}, error bound "
            f"±{by_k.bound:,.1f} ({asks}); its cost in privacy: adversaries whose prior is "
            f"between d = {by_k.d:.3g} and {current.d:.3g} are no longer protected"
            + _epsilon_change(by_k, current))
    if by_gamma is not None:
        said.append(
            f"γ = {by_gamma.gamma:.3g} instead of {current.gamma:g} at k = {current.k:.3g}, "
            f"error bound ±{by_gamma.bound:,.1f}; its cost: the posterior may reach "
            f"{by_gamma.gamma:.3g}" + _epsilon_change(by_gamma, current))
    return "; or ".join(said) if said else None


def release_remedy(mech: StatedRequest, for_privacy: Callable[..., StatedRequest]
                   ) -> str | None:
    """:func:`remedy` for a release ``mech`` of a (k, γ) family whose usefulness is weak,
    searched over ``for_privacy`` (the family's constructor, with any option of its
    own bound, e.g. αβ's calibration) at the release's n, records, failure
    probability and prior floor. None when usefulness is not weak, when the release
    states no (d, γ) request, or when no k or γ makes it useful."""
    resolution = mech.resolution()
    if (resolution is None or not resolution.weak or mech.n is None or mech.d is None
            or mech.gamma is None):
        return None
    n, stated = mech.n, (mech.records or {}).get("records_given")
    given = stated if isinstance(stated, int) else n  # the records for_privacy was given

    def build(k: float, gamma: float) -> StatedRequest:
        built = for_privacy(mech.schema, n=given, gamma=gamma, k=k,
                            failure_probability=mech.failure_probability,
                            allow_prior_below_base_rate=mech.allow_prior_below_base_rate)
        return built.with_records(n, mech.records) if mech.records else built

    k = mech.d * mech.schema.size / given
    least_k = 1e-9 if mech.allow_prior_below_base_rate else 1.0
    return remedy(request(build, k, mech.gamma),
                  *useful_requests(build, k, mech.gamma, resolution.typical, least_k))
