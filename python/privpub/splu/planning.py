"""What SPLU-Gen tells :func:`privpub.plan` (registered by name,
:mod:`privpub.core.planners`): for each sensitive set and decoy group size γ,
whether the library's partition accepts the table (eligibility: every value at
most N/γ records), the largest eligible γ (by the plan's search), the rows
published (N − residue), their Parquet bytes (one real release, measured) and
the guarantee's thresholds. Its view's size needs the table: without one,
every point "needs the table"."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

from privpub.core import validate
from privpub.core.errors import ParameterError
from privpub.core.planners import register_planner, view_size_text
from privpub.core.temporaries import temporary_directory
from privpub.splu.calculators import privacy_guarantee, utility_threshold_chebyshev
from privpub.splu.claims import GUARANTEE_ALPHA, GUARANTEE_EPS, GUARANTEE_T_E
from privpub.splu.mechanism import SPLUGen

#: Why a plan from a schema alone cannot size a SPLU-Gen view.
NEEDS_TABLE = ("a SPLU-Gen view's size needs the table (N − (N mod γ) rows, eligibility from "
               "the sensitive values' frequencies): use privpub.plan(table)")


@register_planner
class SPLUPlanner:
    name = "splu"
    label = "SPLU-Gen"
    privacy_grid = False
    main_variant = None
    needs_table = NEEDS_TABLE

    def check_request(self, request: Any) -> None:
        """The group sizes are checked as the rows are planned."""

    def plan_rows(self, facts: Any, request: Any, search: Any
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        sizes = [validate.integer("group_size", g, minimum=2) for g in request.group_sizes]
        rows = _rows(facts, request.sensitive, sizes, search)
        regions = [{"mechanism": self.name, "sensitive": s, "largest_group_size": g}
                   for s, g in dict.fromkeys((r["sensitive"], r.get("largest_group_size"))
                                             for r in rows)]
        return rows, regions

    def explain(self, plan: Any, search: Any) -> str:
        """The plan's paragraph on SPLU-Gen: for each sensitive set, the largest
        eligible γ and the guarantee's thresholds at the largest γ planned."""
        rows = [r for r in plan.rows if r["mechanism"] == self.name]
        if plan.distinct is None:
            return ("SPLU-Gen: needs the table: which decoy group sizes γ are eligible "
                    "depends on the sensitive values' frequencies (every value at most N/γ "
                    "records).")
        lines = ["SPLU-Gen (no prior bound; small counts hidden, large counts kept):"]
        for region in (r for r in plan.regions if r["mechanism"] == self.name):
            s, top = region["sensitive"], region["largest_group_size"]
            mine = [r for r in rows if r["sensitive"] == s and r["feasible"]]
            if top is None:
                refusal = next(r["library_error"] for r in rows if r["sensitive"] == s)
                lines.append(f"sensitive {s!r}: not eligible for any γ ≥ 2 ({refusal}).")
                continue
            text = f"sensitive {s!r}: eligible up to γ = {top}"
            if mine:
                r = mine[-1]
                text += (f"; at γ = {r['group_size']}: "
                         f"{view_size_text(r['rows'], r['bytes'])}, counts ≥ "
                         f"{r['splu_utility_threshold']:,.0f} estimated within "
                         f"{GUARANTEE_EPS:g} of themselves w.p. ≥ {1 - GUARANTEE_T_E:g}, "
                         f"counts 1..{GUARANTEE_ALPHA} missed by more than that w.p. ≥ "
                         f"{r['splu_small_sum_privacy']:.3f}")
            lines.append(text + ".")
        return " ".join(lines)


    def dense_suggestion(self, plan: Any) -> str:
        """SPLU-Gen where a table is too dense for the (k, γ) grid
        (:class:`~privpub.core.planners.SuggestsForDenseTables`): the largest decoy
        group an attribute planned is eligible for, or why none is known."""
        regions = [r for r in plan.regions if r["mechanism"] == self.name]
        eligible = [r for r in regions if r["largest_group_size"] is not None]
        if eligible:
            best = max(eligible, key=lambda r: r["largest_group_size"])
            return (f"{self.label}, which bounds no prior (sensitive {best['sensitive']!r}: "
                    f"decoy groups up to γ = {best['largest_group_size']}); ")
        if not regions:
            return f"{self.label} (plan it with mechanisms=[..., {self.name!r}]); "
        if plan.distinct is None:
            return f"{self.label} (its eligibility needs the table); "
        return f"{self.label} (not eligible for the sensitive attributes planned; try others); "


def _rows(facts: Any, sensitive: str | Sequence[str] | None, group_sizes: Sequence[int],
          search: Any) -> list[dict[str, Any]]:
    """SPLU-Gen's rows: one per sensitive set (each attribute alone when none is
    given) and γ; eligibility and N are the library's partition of the table."""
    sets = ([[s] for s in facts.schema.names] if sensitive is None else
            [[sensitive] if isinstance(sensitive, str) else list(sensitive)])
    rows = []
    measured = None  # bytes per row of one real release, for every set (see _release_bytes)
    for names in sets:
        base = {"mechanism": "splu", "calibration": None, "sensitive": ",".join(names),
                "k": None, "gamma": None, "d": None}
        if facts.codes is None:
            rows.extend(base | {"group_size": g, "feasible": None,
                                "reason": "needs the table: eligibility depends on the "
                                          "sensitive values' frequencies"} for g in group_sizes)
            continue

        def partition(g: int, names: list[str] = names) -> Any:
            return SPLUGen(g, names, schema=facts.schema).partition(facts.codes)

        top = min(facts.schema[s].size for s in names)
        largest = (None if top < 2 or not search.accepts(lambda: partition(2)) else
                   search.edge(lambda g: search.accepts(lambda: partition(g)), 2, top + 1,
                               "integer"))
        for g in group_sizes:
            row = base | {"group_size": g, "largest_k": None, "least_gamma": None,
                          "largest_group_size": largest}
            try:
                part = partition(g)
            except ParameterError as exc:
                rows.append(row | {"feasible": False, "library_error": str(exc),
                                   "reason": f"{exc}; largest eligible γ for "
                                             f"{', '.join(names)}: {largest}"})
                continue
            published = facts.n - len(part.residue)
            if measured is None:
                measured = _release_bytes(facts, g, names) / published
            rows.append(row | {
                "feasible": True, "rows": float(published), "rows_stderr": 0.0,
                "bytes": round(measured * published), "error_bound": None,
                "splu_utility_threshold": utility_threshold_chebyshev(
                    g, GUARANTEE_EPS, GUARANTEE_T_E),
                "splu_small_sum_privacy": privacy_guarantee(
                    g, GUARANTEE_EPS, GUARANTEE_ALPHA)})
    return rows


def _release_bytes(facts: Any, group_size: int, names: list[str]) -> int:
    """Bytes of a real SPLU-Gen release of the table at γ, written by the library.
    Measured once per plan and scaled by rows for the other sensitive sets and
    γ: every view is the table itself with a sensitive column drawn within
    groups, and which column, or more decoys, change its compressed size by a
    few per cent (3% across the dense test table's six columns)."""
    with warnings.catch_warnings():  # the residue warning; the plan reports N
        warnings.simplefilter("ignore")
        view = SPLUGen(group_size, names, schema=facts.schema).publish(facts.codes, seed=0)
    with temporary_directory() as tmp:
        path = os.path.join(tmp, "splu.parquet")
        view.to_parquet(path)
        return os.path.getsize(path)
