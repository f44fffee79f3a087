"""The card's fifth section: what ``plan`` says about other calibrations and
mechanisms for the same table, so the steward sees the trade-off signed.

The grid is :func:`privpub.plan`'s own at this release's k = d·m/n (or the
paper's k = 10 where the release states no d), over plan's default γ values,
for αβ (each calibration) and FRAPP; with the data, SPLU-Gen's group sizes
too (SPLU-Gen's eligibility needs the value frequencies).
"""

from __future__ import annotations

from typing import Any

from privpub.core.capabilities import (
    hidden_attributes,
    privacy_request,
    record_facts_of,
    stated_bound,
)
from privpub.core.planners import planner, planners
from privpub.planning import plan
from privpub.report import html, plots
from privpub.tables.published import PublishedView

#: k where the release states no prior bound: the paper's Adult setting.
PAPER_K = 10


def records_of(release: PublishedView) -> int:
    """The records the release was made from (before set semantics merged
    repeats): what plan counts n as, and so what its k is relative to; the rows
    published where the mechanism states neither."""
    mechanism = release.mechanism_object()
    return (record_facts_of(mechanism).get("records_given")
            or privacy_request(mechanism).records or len(release))


def release_k(release: PublishedView) -> float | None:
    """k = d·m/n of the release's request, n as plan counts it (:func:`records_of`)."""
    d = privacy_request(release.mechanism_object()).d
    return None if d is None else d * release.schema.size / records_of(release)


def series_name(row: dict[str, Any]) -> str:
    name = planner(row["mechanism"]).label
    return name if row["calibration"] is None else f"{name} ({row['calibration']})"


def tradeoff_plot(rows: list[dict[str, Any]], mine: tuple[float, float] | None, k: float) -> str:
    series: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        if row["feasible"] and row["error_bound"] is not None:
            series.setdefault(series_name(row), []).append((row["gamma"], row["error_bound"]))
    with plots.figure() as (fig, ax):
        for i, (name, points) in enumerate(series.items()):
            xs, ys = zip(*sorted(points), strict=True)
            ax.plot(xs, ys, marker=plots.MARKERS[i], color=plots.PALETTE[i],
                    linestyle=plots.DASHES[i], label=name)
        if mine is not None:
            ax.plot([mine[0]], [mine[1]], marker="*", markersize=14, color="#000000",
                    linestyle="none", label="this release")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("posterior bound γ (smaller is more private)")
        ax.set_ylabel("error bound ρ√n (count, per query)")
        ax.set_title(f"Error against privacy at k = {html.number(k)} (d = k·n/m)")
        if series or mine is not None:  # (nothing to name: matplotlib would warn the user)
            ax.legend(loc="best", frameon=True)
        uri = plots.svg_uri(fig)
    return html.figure(uri, "error bound against γ for each mechanism and calibration",
                       "Only the requests each mechanism accepts are drawn; a missing point "
                       "is a refusal (see plan's explanation).")


def grid_table(rows: list[dict[str, Any]], mine: tuple[str, str | None, float] | None) -> str:
    out = []
    for row in rows:
        this = mine is not None and (row["mechanism"], row["calibration"], row["gamma"]) == mine
        bound = ("refused" if not row["feasible"] else html.number(row["error_bound"])
                 + (" (weak)" if row.get("weak_usefulness") else ""))
        out.append((html.text(series_name(row)) + (" — <strong>this release</strong>"
                                                   if this else ""),
                    html.number(row["gamma"]), bound,
                    html.number(int(round(row["rows"]))) if row["feasible"] else "—"))
    return html.table(("mechanism", "γ", "error bound", "expected rows"), out,
                      caption="Each request of the grid")


def splu_table(rows: list[dict[str, Any]]) -> str:
    """The eligible (sensitive, group size) requests, then the attributes with none."""
    def name(row: dict[str, Any]) -> str:
        s = row["sensitive"]
        return ", ".join(s) if isinstance(s, list) else str(s)

    never = [n for n in dict.fromkeys(name(r) for r in rows)
             if not any(r["feasible"] for r in rows if name(r) == n)]
    out = [(html.text(name(row)), html.number(row["group_size"]),
            html.number(row.get("splu_small_sum_privacy")),
            html.number(row.get("splu_utility_threshold")))
           for row in rows if row["feasible"]]
    text = html.table(("sensitive", "group size γ", "small-sum privacy T_P",
                       "large-sum utility threshold f_s"), out,
                      caption="SPLU-Gen: the eligible requests")
    if never:
        text += (f"<p>Not eligible at any group size planned: {html.text(', '.join(never))} "
                 "(a value fills more than N/γ of the records).</p>")
    return text


def section(release: PublishedView, data: Any) -> str:
    k = release_k(release)
    grid_k = PAPER_K if k is None else k
    mechanism = release.mechanism_object()
    request = privacy_request(mechanism)
    declared = stated_bound(mechanism)
    # The (k, γ)-grid families always. The others (SPLU-Gen) need the value frequencies
    # (the data) and protect named attributes: planned for the attributes this release
    # hides (every attribute alone would be a grid of its own).
    sensitive = hidden_attributes(mechanism) or None
    # As the release treated repeats; "none" (the data repeat no tuple) plans as a set,
    # which is the same when nothing repeats (plan takes "set" or "records").
    duplicates = "records" if record_facts_of(mechanism).get("duplicates") == "records" else "set"
    mechanisms = [family.name for family in planners()
                  if family.privacy_grid or (data is not None and sensitive)]
    found = plan(data if data is not None else release.schema, schema=release.schema,
                 n=None if data is not None else records_of(release), mechanisms=mechanisms,
                 ks=[grid_k],
                 failure_probability=0.05 if declared is None else declared.failure_probability,
                 sensitive=sensitive,
                 duplicates=duplicates)
    table_rows = [r for r in found.rows if planner(r["mechanism"]).privacy_grid]
    mine = None
    point = None
    if k is not None and request.gamma is not None:
        mine = (release.mechanism, request.calibration, request.gamma)
        if declared is not None and declared.bound is not None:
            point = (request.gamma, declared.bound)
    feasible = sum(r["feasible"] for r in table_rows)
    gammas = ", ".join(html.number(g) for g in sorted({r["gamma"] for r in table_rows}))
    intro = (f"<p>privpub.plan over γ ∈ {{{gammas}}} at "
             f"k = {html.number(grid_k)}" + (" (this release's)" if k is not None else
                                     " (the paper's; this release states no d)")
             + f": {html.headline('alternatives-feasible', feasible, html.number(feasible))} of "
               f"{len(table_rows)} requests accepted.</p>")
    body = intro + tradeoff_plot(table_rows, point, grid_k) + grid_table(table_rows, mine)
    splu = [r for r in found.rows if not planner(r["mechanism"]).privacy_grid]
    if splu:
        body += splu_table(splu)
    body += html.block("note", "plan's explanation:", html.paragraphs(found.explain()))
    return html.section("alternatives", "Alternatives", body)


def not_planned(reason: str) -> str:
    return html.section("alternatives", "Alternatives", html.block("note", "Not planned:",
                                                                   html.paragraphs(reason)))
