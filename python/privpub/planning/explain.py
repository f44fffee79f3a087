"""The plan's explanation: the table's paragraph and the paragraph of a family on
the (k, γ) grid (its feasible region, why the rest is refused, in terms of n, m
and n/m, and what to try instead). Each family's planner writes its own
paragraph, calling :func:`explain_grid` for a (k, γ) grid."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from privpub.core.planners import SuggestsForDenseTables, planner, planners, view_size_text

if TYPE_CHECKING:
    from privpub.planning import Plan


def explain_table(p: Plan) -> str:
    text = (f"The table: n = {p.n:,} records over a domain of m = {p.m:,} tuples, "
            f"n/m = {p.density:.4g}.")
    if p.distinct is None:
        text += " Planned from the schema alone: the records are taken as n distinct tuples."
    elif p.distinct < p.n:
        text += (f" It repeats tuples ({p.distinct:,} distinct); views are planned for "
                 f"duplicates={p.duplicates!r}.")
    if p.derived:
        text += (f" The domains of {', '.join(p.derived)} were derived from the data (only "
                 "the values that occur): declared domains make m larger and n/m smaller, "
                 "and keep the domain from revealing the data.")
    return text


def explain_grid(p: Plan, mechanism: str) -> str:
    label = planner(mechanism).label
    regions = [r for r in p.regions if r["mechanism"] == mechanism]
    calibrations = list(dict.fromkeys(r["calibration"] for r in regions))
    lead = planner(mechanism).main_variant
    main = lead if lead in calibrations else calibrations[0]
    region = [r for r in regions if r["calibration"] == main]
    name = label if main is None else f"{label} (calibration {main!r})"
    floor = "k ≥ 1" if all(r["largest_k"] is None or r["largest_k"] >= 1 for r in region) \
        else "k"
    useful, leads = _useful_lead(p, name, mechanism, main, region)
    lines = [f"{name}: {useful}"] if leads else []
    lines += [("For privacy alone" if leads else name) + f": the largest feasible {floor} by "
              "γ: " + "; ".join(
        f"γ = {r['gamma']:g}: " + ("none" if r["largest_k"] is None else f"{r['largest_k']:.4g}")
        for r in region) + "."]
    # Dense: no k ≥ 1 at some γ (whether or not smaller k were allowed).
    refused = [r for r in region if r["largest_k_any"] is None or r["largest_k_any"] < 1]
    if refused:
        lines.append(_dense(p, label, mechanism, max(refused, key=lambda r: r["gamma"]),
                            [r["gamma"] for r in refused]))
    feasible = [r for r in p.rows if r["mechanism"] == mechanism
                and r["calibration"] == main and r["feasible"]]
    if feasible:
        big = max(feasible, key=lambda r: r["rows"])
        tight = min(feasible, key=lambda r: r["error_bound"])
        lines.append(f"Largest view in the grid: {view_size_text(big['rows'], big['bytes'])} at "
                     f"k = {big['k']:g}, γ = {big['gamma']:g}; smallest error bound "
                     f"{tight['error_bound']:,.1f} (each query, w.p. ≥ "
                     f"{1 - p.failure_probability:g}) at "
                     f"k = {tight['k']:g}, γ = {tight['gamma']:g}.")
        weak = [r for r in feasible if r["weak_usefulness"]]
        if weak:
            lines.append(f"At {len(weak)} of these {len(feasible)} points the bound is at least "
                         f"the typical count {weak[0]['typical_count']:,.1f} (n/|D| for the "
                         "attribute with the fewest values), so the release could not tell "
                         "typical counts from zero: usefulness only weak (weak_usefulness).")
            if not leads:
                lines.append(useful[0].upper() + useful[1:])
    for other in calibrations:
        if other != main:
            lines.append(f"Calibration {other!r}: largest feasible k by γ: " + "; ".join(
                f"γ = {r['gamma']:g}: "
                + ("none" if r["largest_k"] is None else f"{r['largest_k']:.4g}")
                for r in regions if r["calibration"] == other) + ".")
    return " ".join(lines)


def _useful_lead(p: Plan, name: str, mechanism: str, main: str | None,
                 region: list[dict[str, Any]]) -> tuple[str, bool]:
    """Where some accepted request cannot tell the typical count from zero (most of the
    grid on an office-size table): by γ, the largest k whose bound can, with its prior
    bound and ε (said once when every γ's is the same, as αβ's exclusive calibration
    makes it), and what that costs in privacy against the accepted request nearest the
    default k = 10, γ = 0.2; and whether that request is weak (then the paragraph leads
    with this). ("", False) when every accepted request is useful."""
    feasible = [r for r in p.rows if r["mechanism"] == mechanism and r["calibration"] == main
                and r["feasible"]]
    weak = [r for r in feasible if r["weak_usefulness"]]
    if not weak:
        return "", False
    near = min(feasible, key=lambda r: (abs(math.log(r["k"] / 10)), abs(r["gamma"] - 0.2)))
    useful = [r for r in region if r.get("largest_useful_k") is not None]
    losses = [r["useful_epsilon"] for r in useful]
    one = (bool(losses) and None not in losses
           and max(losses) - min(losses) <= 1e-3 * max(losses))
    said = []
    for r in region:
        k = r.get("largest_useful_k")
        if k is None:
            said.append(f"γ = {r['gamma']:g}: none")
            continue
        loss = "" if one else ", " + _loss(r["useful_epsilon"])
        said.append(f"γ = {r['gamma']:g}: k ≤ {k:.3g} (d = {k * p.density:.3g}{loss})")
    text = (f"to tell the typical count {weak[0]['typical_count']:,.1f} (n/|D| for the "
            "attribute with the fewest values) from zero, ask for ")
    if one:
        text += (f"ε ≥ {losses[0]:.3g} (for_privacy(gamma=γ, epsilon={losses[0]:.4g})); by γ, "
                 "that is: ")
    text += "; ".join(said) + "."
    if not useful:
        text += (" No k does at any γ planned: try a larger γ, coarser domains or another "
                 "mechanism.")
    elif near["weak_usefulness"]:
        text += (f" The cost in privacy: adversaries whose prior exceeds that d are no "
                 f"longer protected, and {_loss(losses[0] if one else None)} against the "
                 f"{_loss(near['epsilon'])} of k = {near['k']:g}, γ = {near['gamma']:g}, "
                 "which cannot.")
    else:
        text += f" (k = {near['k']:g}, γ = {near['gamma']:g} does, at {_loss(near['epsilon'])}.)"
    return text, bool(near["weak_usefulness"])


def _loss(epsilon: float | None) -> str:
    return "no finite ε" if epsilon is None else f"ε = {epsilon:.3g}"


def _dense(p: Plan, label: str, mechanism: str, worst: dict[str, Any],
           refused: list[float]) -> str:
    """Why no k ≥ 1 is accepted at some γ, in the table's numbers, and what to try."""
    g, k_any = worst["gamma"], worst["largest_k_any"]
    if k_any is None:
        return (f"n/m = {p.density:.4g}: at γ = {g:g} the library accepts no prior at all for "
                f"{label}.")
    d_max = k_any * p.density
    others = [x for x in refused if x != g]
    text = (f"n/m = {p.density:.4g}: this table is too dense for {label} to hide a tuple from "
            f"an adversary with prior above {d_max:.4g} at γ = {g:g}"
            + (f" (and less at γ = {', '.join(f'{x:g}' for x in others)})" if others else "")
            + f", yet every adversary the paper protects against (k ≥ 1) may have prior "
              f"n/m = {p.density:.4g}: no k ≥ 1 is accepted (k < {k_any:.4g} would be). "
              "Consider: ")
    text += "".join(family.dense_suggestion(p) for family in planners()
                    if isinstance(family, SuggestsForDenseTables))
    top_k = max((r["k"] for r in p.rows if r["k"] is not None), default=1.0)
    needs = ", ".join(f"k = {k:g} needs m ≥ {math.ceil(k * p.n / d_max):,} "
                      f"(×{k * p.density / d_max:.3g} the current m)"
                      for k in sorted({1.0, float(top_k)}))
    text += (f"more attributes or larger domains (at γ = {g:g}, {needs}); or a smaller k, "
             f"below {k_any:.4g}, which protects no adversary whose prior is at the base rate")
    return text + planner(mechanism).below_base_rate + "."
