"""What FRAPP tells :func:`privpub.plan` (registered by name, :mod:`privpub.core.planners`):
the mechanism ``for_privacy`` builds at (k, γ) (or its refusal), the release it
states for the records published, and its view's rows (one per record) and
Parquet bytes. The grid and the search are the plan's."""

from __future__ import annotations

from typing import Any

from privpub.core.planners import register_planner
from privpub.frapp.mechanism import FRAPP
from privpub.tables.viewsize import view_bytes


@register_planner
class FRAPPPlanner:
    name = "frapp"
    label = "FRAPP"
    privacy_grid = True
    main_variant = None
    needs_table = None
    below_base_rate = ""

    def check_request(self, request: Any) -> None:
        """FRAPP reads no option of its own."""

    def explain(self, plan: Any, search: Any) -> str:
        return search.explain_grid(plan, self.name)

    def plan_rows(self, facts: Any, request: Any, search: Any
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return search.privacy_grid(self, facts, request)

    def variants(self, request: Any) -> list[None]:
        """One grid: FRAPP has no calibrations."""
        return [None]

    def refused_by(self, calibration: str | None) -> str:
        return "FRAPP"

    def build(self, facts: Any, calibration: str | None, k: float, gamma: float,
              failure_probability: float, allow: bool) -> FRAPP:
        """The mechanism for_privacy builds for this request (or its ParameterError)."""
        return FRAPP.for_privacy(facts.schema, n=facts.n, gamma=gamma, k=k,
                                 failure_probability=failure_probability,
                                 allow_prior_below_base_rate=allow)

    def released(self, mech: FRAPP, facts: Any, gamma: float, failure_probability: float,
                 allow: bool) -> FRAPP:
        """The mechanism as the release states it: n and the bound for the records published."""
        return FRAPP(facts.schema, mech.gamma_frapp, n=facts.published, d=mech.d,
                     gamma=gamma, failure_probability=failure_probability,
                     allow_prior_below_base_rate=allow, records=facts.records_facts)

    def grid_parameters(self, mech: FRAPP) -> dict[str, Any]:
        """The plan's columns FRAPP's mechanism fills."""
        return {"gamma_frapp": mech.gamma_frapp}

    def expected_rows(self, mech: FRAPP, n: int, distinct: int) -> tuple[float, float]:
        """One row per record, exactly."""
        return float(n), 0.0

    def view_bytes(self, mech: FRAPP, rows: float) -> int:
        return view_bytes(mech, rows)
