"""What αβ tells :func:`privpub.plan` (registered by name, :mod:`privpub.core.planners`):
the mechanism ``for_privacy`` builds at (k, γ) for each calibration (or its
refusal), the release it states for the records published, and the expected
rows and Parquet bytes of its view. The grid and the search are the plan's."""

from __future__ import annotations

import math
from typing import Any

from privpub.alphabeta.accounting import CALIBRATIONS
from privpub.alphabeta.mechanism import AlphaBeta
from privpub.core.errors import ParameterError
from privpub.core.planners import register_planner
from privpub.tables.viewsize import view_bytes


@register_planner
class AlphaBetaPlanner:
    name = "alphabeta"
    label = "αβ"
    privacy_grid = True
    #: The calibration the explanation and the terminal summary lead with.
    main_variant = "exclusive"
    needs_table = None
    #: What the explanation adds when only k < 1 is accepted.
    below_base_rate = " and must be asked for with allow_prior_below_base_rate=True"

    def plan_rows(self, facts: Any, request: Any, search: Any
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return search.privacy_grid(self, facts, request)

    def check_request(self, request: Any) -> None:
        """The calibrations asked for (None: every one) are αβ's."""
        calibrations = request.calibrations
        if calibrations is None:
            return
        bad = [c for c in calibrations if c not in CALIBRATIONS]
        if bad or isinstance(calibrations, str) or not calibrations:
            raise ParameterError(f"calibrations must be a non-empty list drawn from "
                                 f"{list(CALIBRATIONS)}, got {calibrations!r}")

    def explain(self, plan: Any, search: Any) -> str:
        return search.explain_grid(plan, self.name)

    def variants(self, request: Any) -> list[str]:
        """One grid per calibration (every one unless the request names some)."""
        return list(CALIBRATIONS if request.calibrations is None else request.calibrations)

    def refused_by(self, calibration: str | None) -> str:
        return f"the {calibration!r} calibration"

    def build(self, facts: Any, calibration: str | None, k: float, gamma: float,
              failure_probability: float, allow: bool) -> AlphaBeta:
        """The mechanism for_privacy builds for this request (or its ParameterError)."""
        return AlphaBeta.for_privacy(facts.schema, n=facts.n, gamma=gamma, k=k,
                                     failure_probability=failure_probability,
                                     calibration=calibration, allow_prior_below_base_rate=allow)

    def released(self, mech: AlphaBeta, facts: Any, gamma: float, failure_probability: float,
                 allow: bool) -> AlphaBeta:
        """The mechanism as the release states it: n and the bound for the records published."""
        return mech.with_records(facts.published, facts.records_facts)

    def grid_parameters(self, mech: AlphaBeta) -> dict[str, Any]:
        """The plan's columns αβ's mechanism fills."""
        return {"alpha": mech.alpha, "beta": mech.beta}

    def expected_rows(self, mech: AlphaBeta, n: int, distinct: int) -> tuple[float, float]:
        """Expected view rows and their standard deviation for ``n`` records holding
        ``distinct`` tuples (n = distinct under duplicates='set').

        A tuple's first record is kept with α+β, each further record with α,
        every other tuple of D is inserted with β, all independently, so
        E|V| = (α+β)u + α(n−u) + β(m−u) = αn + βm. (The brief's α·n + β·(m − u)
        misses the β·u by which a first copy's α+β exceeds α; the test on the dense
        table tells the two apart.)
        """
        a, b, m, u = mech.alpha, mech.beta, mech.schema.size, distinct
        mean = a * n + b * m
        var = u * (a + b) * (1 - a - b) + (n - u) * a * (1 - a) + (m - u) * b * (1 - b)
        return mean, math.sqrt(var)

    def view_bytes(self, mech: AlphaBeta, rows: float) -> int:
        return view_bytes(mech, rows)
