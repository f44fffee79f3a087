"""Each mechanism family's planning knowledge, registered under the mechanism's name.

:func:`privpub.plan` holds the grid, the search and the (k, γ) grid's explanation; what a
family knows about itself — which requests its constructor accepts, how many
rows and bytes its view holds, the rows it adds to a plan — sits in the
family's own ``planning`` module behind the small interface below, registered
with :func:`register_planner` as mechanisms are with
:func:`~privpub.core.release.register_mechanism`. The plan looks a family up
by name (:func:`planner`) and never switches on it; each family's planner also
writes its own paragraph of the plan's explanation.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable


class Planner(Protocol):
    """What a family tells the plan.

    ``name`` is the mechanism's name and ``label`` how the explanation names it.
    ``privacy_grid`` says whether the family plans on the (k, γ) grid with a
    stated error bound (the grid a release card and a weak release's warning
    compare against); ``main_variant`` is the variant (αβ's calibration) the
    explanation and the terminal summary lead with (None: the family has one).
    ``plan_rows`` returns the family's rows and regions of the plan for the
    table's facts and the request (``search`` is the plan's grid and search,
    which a family with a (k, γ) grid hands its build step to), and ``explain``
    its paragraph of the plan's explanation (``search.explain_grid`` for such a
    family). ``check_request`` refuses options of the request the family
    reads (before any row is planned). When ``needs_table`` is None,
    ``expected_rows`` and ``view_bytes`` size a view of a mechanism built for n
    records before it is published; otherwise it says why the view's size
    needs the table. A family on the (k, γ) grid hands ``search.privacy_grid``
    its ``variants``, ``refused_by``, ``build``, ``released`` and
    ``grid_parameters`` (the plan's columns its mechanism fills: αβ's ``alpha``
    and ``beta``, FRAPP's ``gamma_frapp``). A family that may serve a table too
    dense for the grid also declares :class:`SuggestsForDenseTables`.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    privacy_grid: ClassVar[bool]
    main_variant: ClassVar[str | None]
    needs_table: ClassVar[str | None]

    def check_request(self, request: Any) -> None: ...

    def plan_rows(self, facts: Any, request: Any, search: Any
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...

    def explain(self, plan: Any, search: Any) -> str: ...

    def expected_rows(self, mech: Any, n: int, distinct: int) -> tuple[float, float]: ...

    def view_bytes(self, mech: Any, rows: float) -> int: ...


@runtime_checkable
class SuggestsForDenseTables(Protocol):
    """A family the plan suggests where a table is too dense for a (k, γ)-grid family to
    protect any prior at the base rate (SPLU-Gen, which bounds no prior)."""

    def dense_suggestion(self, plan: Any) -> str:
        """The clause of the explanation's "Consider: …" that names it, ending "; "
        (from its own rows and regions of ``plan``)."""
        ...


_PLANNERS: dict[str, Any] = {}


def register_planner(cls: type) -> type:
    """Class decorator: the plan asks an instance of ``cls`` about ``cls.name``.
    Families register in the order the package imports them, which is the order
    a plan lists them in."""
    if cls.name in _PLANNERS and type(_PLANNERS[cls.name]) is not cls:
        raise ValueError(f"a planner for {cls.name!r} is registered twice")
    _PLANNERS[cls.name] = cls()
    return cls


def planner(name: Any) -> Any:
    """The registered planner of mechanism ``name`` (None when none is)."""
    return _PLANNERS.get(name)


def planners() -> list[Any]:
    """Every registered planner, in registration order."""
    return list(_PLANNERS.values())


def view_size_text(rows: float, size: int) -> str:
    """A view's expected rows and bytes as an explanation says them."""
    return f"≈ {rows:,.0f} rows, ≈ {size / 1e6:,.3g} MB"
