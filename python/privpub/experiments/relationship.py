"""Table 1 of the relationship-privacy paper, measured (Rastogi et al., PODS 2009).

For each embedded graph (facebook, ca-GrQc; undirected, so R is symmetric
and m is the number of nodes) and each query of Figure 1(c) — Δ, ∨, c_4,
K_4, d_{2,v}, d_{3,v} (v = the node of highest degree) and h_{4,4} (a
triangle with a tail) — this records the exact count, Algorithm 2.1's λ,
the global sensitivity GS_q, the graph's local sensitivity LS_q(I)
(pattern queries) under adding or removing one tuple — an upper bound on
Def. 3.1's LS_q(I), which replaces one tuple by another (for a monotone query
a replacement changes q by at most the larger of an addition and a
removal) — and the median and
95th-percentile absolute error over ``runs`` answers of Algorithm 2.1, of
its min(λ, GS) form (Sec. 5) and of the Laplace (DMNS) mechanism at the same
ε. All are calibrated from the same request (ε, and γ for Algorithm 2.1);
none is tuned. For Δ it adds what a user wanting private triangle counts
would pick today, the smooth-sensitivity mechanism
(:class:`~privpub.graphs.SmoothTriangleMechanism`, (ε, δ)-differential
privacy per edge) at the same ε with δ = 1/m², stated in the output, not
tuned. Its privacy notion differs from the others': ε per friendship (edge)
with δ > 0, where Laplace's ε per tuple is 2ε per friendship and Algorithm
2.1's is adversarial privacy.

Where Laplace beats Algorithm 2.1 (λ > GS_q: the paper's asymptotics need m
far larger than these graphs for queries with many subgoals) the table says
so, and ``crossover_m`` gives the least m from which λ(m) < GS_q(m) for that
query, i.e. from which Algorithm 2.1's Laplace branch is the narrower one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from privpub.core.errors import QueryError
from privpub.core.files import check_outputs, save_figure, write_text
from privpub.core.seeding import SeedLike, resolve_seed
from privpub.datasets import load_graph
from privpub.graphs import (
    Graph,
    LaplaceMechanism,
    RelationshipMechanism,
    SmoothTriangleMechanism,
    count,
    cycle,
    global_sensitivity,
    local_sensitivity,
    path_from,
    pattern,
    triangle,
    two_path,
)
from privpub.graphs.noise import Bits

GRAPHS = ("facebook", "ca-grqc")


def queries(graph: Graph) -> list[tuple[str, Any]]:
    """Figure 1(c)'s queries for this graph (d_{i,v} from its highest-degree node)."""
    from privpub.graphs import clique

    hub = graph.labels[int(np.argmax(graph.out_degrees()))].item()
    return [("Δ", triangle()), ("∨", two_path()), ("c_4", cycle(4)), ("K_4", clique(4)),
            (f"d_2,v (v={hub})", path_from(hub, 2)), (f"d_3,v (v={hub})", path_from(hub, 3)),
            ("h_4,4 (tailed triangle)", pattern([(0, 1), (1, 2), (2, 0), (2, 3)], "h44"))]


def log_lambda(g: int, v: int, m: float) -> float:
    return (g - 1) * math.log(8 * (v + 1) * g**2 * math.log(m))


def crossover_m(query, m_now: int) -> int | None:
    """Least m ≥ 3 with λ(m) < GS_q(m) beyond which it stays so (bisection on
    log m; both sides are monotone in the regime searched); None if λ < GS at
    every m up to 10^300."""
    def alg_wins(m: int) -> bool:
        gs = global_sensitivity(query, m).value
        return log_lambda(query.g, query.v, m) < math.log(gs)

    hi = max(m_now, 16)
    while not alg_wins(hi):
        hi *= 2
        if hi > 10**300:
            return None
    lo = 3
    if alg_wins(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if not alg_wins(mid) else (lo, mid)
    return hi


def errors(draw, truth: int, runs: int) -> np.ndarray:
    return np.array([float(abs(draw() - truth)) for _ in range(runs)])


#: What the LS_q(I) column holds, as table1.md and relationship.json say it.
LS_NOTE = ("LS_q(I) is the local sensitivity under adding or removing one tuple (computed "
           "for pattern queries only; — for d_{i,v}), an upper bound on Def. 3.1's, which "
           "replaces one tuple by another: for a monotone query a replacement changes q by at "
           "most the larger of an addition and a removal.")

#: The files :func:`run` writes in its output directory.
OUTPUTS = ("table1.md", "relationship.json", "relationship.png")


def run(out: str | Path, seed: SeedLike = None, epsilon: float = 1.0, gamma: float = 0.2,
        runs: int = 1000, graphs: tuple[str, ...] = GRAPHS,
        overwrite: bool = False) -> dict[str, Any]:
    """Measure every row, write table1.md, relationship.json and relationship.png
    (existing files are refused unless ``overwrite``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(out, OUTPUTS, overwrite=overwrite)  # refused now, not after the run
    source = resolve_seed(seed)
    rows = []
    loaded = {name: Graph.from_edges(load_graph(name), directed=False) for name in graphs}
    work = [(name, label, q) for name, g in loaded.items() for label, q in queries(g)]
    for name, label, q in tqdm(work, desc="relationship", unit="query", disable=None):
        g = loaded[name]
        truth = count(g, q)
        alg = RelationshipMechanism.for_graph(epsilon, gamma, q, g)
        capped = RelationshipMechanism.for_graph(epsilon, gamma, q, g, min_with_gs=True)
        lap = LaplaceMechanism.for_graph(epsilon, q, g)
        bits_a = Bits(source.derive(f"{name}/{q.name}/alg2.1"))
        bits_c = Bits(source.derive(f"{name}/{q.name}/alg2.1-min"))
        bits_l = Bits(source.derive(f"{name}/{q.name}/laplace"))
        err_a = errors(lambda alg=alg, b=bits_a, t=truth: alg.draw(t, b)[1], truth, runs)
        err_c = errors(lambda alg=capped, b=bits_c, t=truth: alg.draw(t, b)[1], truth, runs)
        err_l = errors(lambda lap=lap, b=bits_l, t=truth: lap.draw(t, b), truth, runs)
        gs = global_sensitivity(q, g.m)
        try:
            ls: int | None = local_sensitivity(g, q).value
        except QueryError:  # exact LS is computed for pattern queries only (not d_{i,v})
            ls = None
        smooth = {"smooth_median": None, "smooth_p95": None, "smooth_delta": None}
        if label == "Δ":
            sm = SmoothTriangleMechanism.for_graph(epsilon, 1 / g.m**2, g)
            bits_s = Bits(source.derive(f"{name}/{q.name}/smooth"))
            scale = sm.noise_scale(g)
            err_s = errors(lambda sm=sm, b=bits_s, t=truth, c=scale: sm.draw(t, c, b), truth,
                           runs)
            smooth = {"smooth_median": float(np.median(err_s)),
                      "smooth_p95": float(np.quantile(err_s, 0.95)), "smooth_delta": sm.delta}
        rows.append({
            "graph": name, "m": g.m, "query": label, "text": str(q), "g": q.g, "v": q.v,
            "count": truth, "lambda": alg.lam, "gs": gs.value, "gs_exact": gs.exact,
            "ls": ls,
            "alg21_median": float(np.median(err_a)),
            "alg21_p95": float(np.quantile(err_a, 0.95)),
            "min_branch": capped.branch,
            "alg21_min_median": float(np.median(err_c)),
            "alg21_min_p95": float(np.quantile(err_c, 0.95)),
            "laplace_median": float(np.median(err_l)),
            "laplace_p95": float(np.quantile(err_l, 0.95)),
            **smooth,
            "better": "Algorithm 2.1" if alg.lam < gs.value else "Laplace",
            "crossover_m": crossover_m(q, g.m),
        })
    summary = {"epsilon": epsilon, "gamma": gamma, "runs": runs, "smooth_delta": "1/m^2",
               "ls": LS_NOTE,
               "seed_policy": source.policy, "m_derived_from_data": True, "rows": rows}
    write_text(out / "relationship.json", json.dumps(summary, indent=2), overwrite=overwrite)
    write_text(out / "table1.md", markdown(summary), overwrite=overwrite)
    save_figure(_plot(rows), out / "relationship.png", overwrite=overwrite, dpi=120)
    return summary


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"Table 1 measured: ε = {summary['epsilon']}, γ = {summary['gamma']}, "
             f"{summary['runs']} runs per cell, absolute errors (median / 95th percentile). "
             "m is the number of nodes of each graph (derived from the data). "
             f"{LS_NOTE} Smooth sensitivity (Δ only): (ε, δ)-DP per edge (add or remove one "
             "edge) with δ = 1/m², a different notion; (2ε, (1 + e^ε)δ) when one edge "
             "replaces another.", "",
             "| graph | m | query | q(I) | λ | GS_q | LS_q(I) (add/remove) | "
             "Alg. 2.1 median / p95 | "
             "min(λ, GS) median / p95 | Laplace median / p95 | "
             "smooth sens. (ε, δ) median / p95 | narrower noise | Alg. 2.1 wins from m = |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        cross = "never (≤ 1e300)" if r["crossover_m"] is None else f"{r['crossover_m']:.3g}"
        smooth = ("—" if r["smooth_median"] is None else
                  f"{r['smooth_median']:.3g} / {r['smooth_p95']:.3g} "
                  f"(δ = {r['smooth_delta']:.2g})")
        lines.append(
            f"| {r['graph']} | {r['m']:,} | {r['query']} | {r['count']:,} | {r['lambda']:.3g} | "
            f"{r['gs']:.3g}{'' if r['gs_exact'] else ' (bound)'} | "
            f"{'—' if r['ls'] is None else format(r['ls'], ',')} | "
            f"{r['alg21_median']:.3g} / {r['alg21_p95']:.3g} | "
            f"{r['alg21_min_median']:.3g} / {r['alg21_min_p95']:.3g} | "
            f"{r['laplace_median']:.3g} / {r['laplace_p95']:.3g} | {smooth} | {r['better']} | "
            f"{cross} |")
    return "\n".join(lines) + "\n"


def _plot(rows: list[dict[str, Any]]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({r["graph"] for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(6.5 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        sub = [r for r in rows if r["graph"] == name]
        x = np.arange(len(sub))
        w = 0.21
        ax.bar(x - 1.5 * w, [max(r["count"], 1) for r in sub], w, label="true count q(I)",
               color="0.75")
        ax.bar(x - 0.5 * w, [max(r["alg21_median"], 1) for r in sub], w,
               label="Alg. 2.1 median error")
        ax.bar(x + 0.5 * w, [max(r["laplace_median"], 1) for r in sub], w,
               label="Laplace (GS) median error")
        has = [i for i, r in enumerate(sub) if r["smooth_median"] is not None]
        ax.bar(x[has] + 1.5 * w, [max(sub[i]["smooth_median"], 1) for i in has], w,
               label="smooth sensitivity (ε, δ = 1/m²) median error, Δ only")
        ax.set_yscale("log")
        ax.set_xticks(x, [r["query"].split(" (")[0] for r in sub], rotation=30)
        ax.set_title(f"{name} (m = {sub[0]['m']:,})")
        ax.set_ylabel("absolute error / count")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig
    plt.close(fig)
