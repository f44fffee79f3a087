"""The card's sums and averages, beside its counts (issue 37).

The first numeric column the release publishes as it is (an integer range or
numeric labels, not a hidden attribute) is summed and averaged over every
record and over the first sampled counting query that reads no hidden
attribute, by the release's own ``estimate_many``
(:mod:`privpub.tables.sums`); with the data, each sits beside its true value
over the rows the release's estimates count (records, or distinct tuples).
A release without such a column, or one that estimates no sums, shows none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from privpub.core.errors import PrivpubError
from privpub.core.estimate import LEVEL
from privpub.counting.query import Condition
from privpub.report import html
from privpub.tables.sums import summed_column

if TYPE_CHECKING:
    from privpub.tables.published import PublishedView


def sums_block(release: PublishedView, codes: np.ndarray | None,
               queries: Sequence[Mapping[str, object]], hidden: Sequence[str]) -> str:
    """The block (empty when there is nothing to show); ``codes`` the data's
    tuple codes (None without the data), ``queries`` the card's sampled counts."""
    schema = release.schema
    column = next((a.name for a in schema if a.kind in ("integer", "float")
                   and a.name not in hidden), None)
    if column is None:
        return ""
    plain = [q for q in queries if not set(q) & set(hidden)]
    wheres = ["TRUE"] + ([" AND ".join(html.condition(a, v) for a, v in plain[0].items())]
                         if plain else [])
    # The count each average divides by stands beside it, with its notes (SPLU-Gen's
    # count says which records no decoy group held, and so what the sums cover).
    texts = [f"SELECT {kind}({'*' if kind == 'count' else html.quoted(column)}) FROM I WHERE {w}"
             for w in wheres for kind in ("count", "sum", "avg")]
    try:
        rows = release.estimate_many(texts).to_records(LEVEL)
    except PrivpubError:  # a release that estimates no sums shows none
        return ""
    header = ["query", "estimate", "stderr", f"{html.percent(LEVEL)} interval"]
    truth = None if codes is None else _truths(release, codes, column, texts)
    if truth is not None:
        header.append("true value")
    cells = []
    for i, row in enumerate(rows):
        kind, where = ("count", "sum", "avg")[i % 3], wheres[i // 3]
        named = {"count": "records", "sum": f"sum of {column}",
                 "avg": f"average of {column}"}[kind]
        over = "all records" if where == "TRUE" else f"the records where {where}"
        line = [f"{html.text(named)} over {html.text(over)}<br><code>{html.text(row['query'])}"
                f"</code>" + html.notes(row["notes"]), html.number(row["value"]),
                html.number(row["stderr"]),
                f"[{html.number(row['lo'])}, {html.number(row['hi'])}]"]
        if truth is not None:
            line.append(html.number(truth[i]))
        cells.append(line)
    return html.block("note", f"Sums and averages of {column}", html.table(
        header, cells, caption=f"Sums: {rows[1]['method']}; averages: {rows[2]['method']}; "
        f"intervals {rows[1]['interval_method']} and {rows[2]['interval_method']}"))


def _truths(release: PublishedView, codes: np.ndarray, column: str, texts: list[str]
            ) -> list[float]:
    """Each text's sum or average over the data's rows (distinct tuples when the
    release counts those), computed from the codes."""
    schema = release.schema
    if release.counts == "distinct tuples":
        codes = np.unique(codes, axis=0)
    summed = summed_column(schema, column, texts[1])
    digits = schema.digits(codes)[schema.names.index(column)]
    out = []
    for text in texts:
        mask = Condition(schema, text, aggregates=True).mask_codes(codes)
        values, present = summed.values[digits][mask], summed.present[digits][mask]
        total = float(values.sum())
        out.append(float(mask.sum()) if "count(*)" in text else total if " sum(" in text else
                   (total / present.sum() if present.sum() else float("nan")))
    return out
