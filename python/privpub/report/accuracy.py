"""The card's third section: how accurate the release's answers are.

A seeded sample of counting queries (each an AND of equalities on one to
three attributes) is estimated by the release's own ``estimate_many``; with
the data, each estimate sits beside the true count the release estimates
(records, or distinct tuples under set semantics) and the sample's measured
coverage. The plot shows the stated error bound, each estimate's stderr and
its interval's half-width against the query's true count (against the
estimate, labelled so, without the data).

The sampling rule: query i takes r ∈ {1, 2, 3} attributes drawn uniformly
without replacement (on a release that hides attributes, SPLU-Gen's
sensitive ones, one of them hidden, as only those are estimated rather than
counted exactly) and the values of one record drawn uniformly from the data,
or of a domain tuple drawn uniformly without the data; a query drawn twice is
drawn again; the generator is seeded by the card's ``seed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privpub.attacks.audit import attribute_value
from privpub.core.capabilities import hidden_attributes, stated_bound
from privpub.core.errors import PrivpubError
from privpub.core.estimate import LEVEL
from privpub.core.ranges import clamp
from privpub.core.release import Release
from privpub.domain.schema import Schema
from privpub.report import html, plots, protected
from privpub.report.sums import sums_block
from privpub.tables.published import PublishedView

#: Most attributes in a sampled query.
MOST_ATTRIBUTES = 3
#: Draws per query before giving up on finding distinct ones (a tiny domain may
#: hold fewer distinct queries than asked for; the card then shows fewer).
DRAWS_PER_QUERY = 20


def sample_queries(schema: Schema, digits: list[np.ndarray] | None, sensitive: list[str],
                   n_queries: int, seed: Any) -> list[dict[str, Any]]:
    """The module docstring's rule: ``n_queries`` distinct dicts {attribute: value}
    (fewer if that many distinct ones are not found in 20 draws each)."""
    rng = np.random.default_rng(int.from_bytes(seed.derive("card-queries").key, "little"))
    names = list(schema.names)
    plain = [a for a in names if a not in sensitive]
    queries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for _ in range(n_queries * DRAWS_PER_QUERY):
        if len(queries) == n_queries:
            break
        r = int(rng.integers(1, min(MOST_ATTRIBUTES, len(names)) + 1))
        if sensitive:
            chosen = [str(rng.choice(sensitive))]
            chosen += [str(a) for a in rng.choice(plain, min(r - 1, len(plain)), replace=False)]
        else:
            chosen = [str(a) for a in rng.choice(names, r, replace=False)]
        if digits is not None:
            row = int(rng.integers(len(digits[0])))
            index = {a: int(digits[names.index(a)][row]) for a in chosen}
        else:
            index = {a: int(rng.integers(schema[a].size)) for a in chosen}
        key = repr(sorted(index.items()))
        if key in seen:  # a query asked twice tells the reader nothing new
            continue
        seen.add(key)
        values = {a: attribute_value(schema, a, i) for a, i in index.items()}
        queries.append({a: v.item() if isinstance(v, np.generic) else v
                        for a, v in values.items()})
    return queries


def true_counts(schema: Schema, codes: np.ndarray, digits: list[np.ndarray],
                queries: list[dict[str, Any]], counts: str) -> list[int]:
    """Each query's count in the data: records, or distinct tuples."""
    out = []
    for query in queries:
        mask = np.ones(len(digits[0]), dtype=bool)
        for name, value in query.items():
            mask &= digits[schema.names.index(name)] == schema.index_of(name, value)
        if counts == "distinct tuples":
            out.append(len(np.unique(codes[mask], axis=0)))
        else:
            out.append(int(mask.sum()))
    return out


def accuracy_plot(x: np.ndarray, rows: list[dict[str, Any]], bound: float | None,
                  with_truth: bool) -> str:
    order = np.argsort(x, kind="stable")
    xs = x[order]
    half = np.array([(r["hi"] - r["lo"]) / 2 for r in rows], dtype=float)[order]
    stderr = np.array([r["stderr"] for r in rows], dtype=float)[order]
    with plots.figure() as (fig, ax):
        # Points, not a line: a query's error depends on more than its count.
        ax.plot(xs, half, marker=plots.MARKERS[0], color=plots.PALETTE[0],
                linestyle="none", label=f"{html.percent(LEVEL)} interval half-width")
        ax.plot(xs, stderr, marker=plots.MARKERS[1], color=plots.PALETTE[1],
                linestyle="none", label="standard error")
        if bound is not None:
            ax.axhline(bound, color=plots.PALETTE[5], linestyle=plots.DASHES[2],
                       label=f"stated error bound ±{html.number(bound)}")
        ax.set_xlabel("true count of the query (records or tuples)" if with_truth else
                      "estimated count of the query (no data given: not the truth)")
        ax.set_ylabel("error scale (count)")
        ax.set_ylim(bottom=0)
        ax.set_title("Error of the release's estimates against the query's count")
        ax.legend(loc="best", frameon=True)
        uri = plots.svg_uri(fig)
    return html.figure(uri, "interval half-width, stderr and error bound against count",
                       "Each point is one sampled query (its interval's half-width, and its "
                       "standard error)" + ("; the line is the bound the guarantee states."
                                            if bound is not None else
                                            "; the release states no error bound."))


def estimates(release: PublishedView, queries: list[dict[str, Any]]
              ) -> tuple[list[dict[str, Any] | None], str]:
    """Each query's estimate record (None where the release refuses the query),
    and a warning block quoting each refusal: a card shows what the release
    does, including a query it cannot answer, rather than failing whole."""
    try:
        return release.estimate_many(queries).to_records(LEVEL), ""
    except PrivpubError:
        pass  # one query refused: estimate them one by one to say which
    rows: list[dict[str, Any] | None] = []
    refusals = []
    for query in queries:
        try:
            rows.append(release.estimate_many([query]).to_records(LEVEL)[0])
        except PrivpubError as exc:
            rows.append(None)
            shown = " AND ".join(html.condition(a, v) for a, v in query.items())
            refusals.append(f"{shown}: {type(exc).__name__}: {exc}")
    return rows, html.block("warning", f"{len(refusals)} of {len(queries)} sampled queries "
                            "were refused by the release's estimator:", "<ul>" + "".join(
                                f"<li>{html.text(r)}</li>" for r in refusals) + "</ul>")


def resolution_warnings(release: Release) -> str:
    """A warning block per claim that holds only weakly (the guarantee's words)."""
    return "".join(html.block("warning", f"{protected.plain(c)[0]}: the release cannot tell "
                              "typical counts from zero", protected.meaning(c))
                   for c in release.guarantee().claims if c.holds and c.weak)


def table_section(release: PublishedView, data: Any, n_queries: int, seed: Any) -> str:
    schema = release.schema
    codes = digits = None
    if data is not None:
        codes = schema.encode(data)
        digits = schema.digits(codes)
    sensitive = hidden_attributes(release.mechanism_object())
    queries = sample_queries(schema, digits, sensitive, n_queries, seed)
    rows, refused = estimates(release, queries)
    queries = [q for q, r in zip(queries, rows, strict=True) if r is not None]
    rows = [r for r in rows if r is not None]
    if not rows:
        return html.section("accuracy", "How accurate", refused)
    truth = (None if data is None else
             true_counts(schema, codes, digits, queries, rows[0]["counts"]))
    declared = stated_bound(release.mechanism_object())
    bound = None if declared is None else declared.bound
    body = resolution_warnings(release) + refused
    stated = ("none stated" if bound is None else
              html.headline("error-bound", bound, f"±{html.number(bound)}")
              + f" for each fixed query, with probability ≥ "
                f"{html.percent(1 - declared.failure_probability)}")
    body += html.pairs([("stated error bound", stated),
                        ("what estimates count", html.text(rows[0]["counts"]))])
    header = ["query", "estimate", "stderr", f"{html.percent(LEVEL)} interval"]
    widths = (44, 14, 12, 30) if truth is None else (31, 13, 10, 20, 13, 13)
    table_rows = []
    covered = 0
    for i, row in enumerate(rows):
        value, low, high = float(row["value"]), row["range_lo"], row["range_hi"]
        shown = html.number(value)
        if low is not None and not low <= value <= high:  # estimate.clamped()'s value
            shown += (f" (clamped into [{html.number(low)}, {html.number(high)}]: "
                      f"{html.number(clamp(value, low, high))})")
        interval = f"[{html.number(row['lo'])}, {html.number(row['hi'])}]"
        if row["inconsistent"]:
            interval = f"no count consistent at this level: {interval}"
        cells = [f"<code>{html.text(row['query'])}</code>" + html.notes(row["notes"]), shown,
                 html.number(float(row["stderr"])), interval]
        if truth is not None:
            inside = row["lo"] <= truth[i] <= row["hi"]
            covered += inside
            cells += [html.number(truth[i]), "yes" if inside else '<span class="fails">no</span>']
        table_rows.append(cells)
    if truth is not None:
        header += ["true count", "covered"]
    body += html.table(header, table_rows, widths=widths, caption=(
        f"{len(rows)} sampled queries (the seeded rule of the footer)"))
    if truth is not None:
        shown = html.headline("coverage", covered, html.number(covered))
        body += (f"<p>Measured coverage: {shown} of {len(rows)} intervals hold the true count "
                 f"(each is built to hold it with probability ≥ {html.percent(LEVEL)}; a sample "
                 "this small measures coverage only roughly).</p>")
    body += sums_block(release, codes, queries, sensitive)
    x = np.array(truth if truth is not None else [r["value"] for r in rows], dtype=float)
    body += accuracy_plot(x, rows, bound, truth is not None)
    return html.section("accuracy", "How accurate", body)


def graph_section(release: Release, truth: list[int] | None) -> str:
    """A query answer's estimates (the noise law does not depend on the true
    answer, so there is no curve to plot); with its data, the true answers
    (``truth``, from the release's ``true_answers``)."""
    rows = release.estimate_many().to_records(LEVEL)
    header = ["query", "released answer", "stderr", f"{html.percent(LEVEL)} interval",
              "method"]
    if truth is not None:
        header.append("true answer")
    table_rows = []
    for i, row in enumerate(rows):
        cells = [f"<code>{html.text(row['query'])}</code>" + html.notes(row["notes"]),
                 html.number(row["value"]),
                 html.number(float(row["stderr"])),
                 f"[{html.number(row['lo'])}, {html.number(row['hi'])}]",
                 html.text(row["interval_method"])]
        if truth is not None:
            cells.append(html.number(truth[i]))
        table_rows.append(cells)
    body = html.table(header, table_rows, caption="The released answers")
    stderr = float(rows[0]["stderr"])
    body += (f"<p>Standard error of the first answer: "
             f"{html.headline('stderr', stderr, html.number(stderr))}"
             "; the noise law is the same whatever the true answer, so the error does not "
             "vary with it.</p>")
    return html.section("accuracy", "How accurate", body)
