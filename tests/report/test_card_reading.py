"""The card as a steward reads it (issue 37): numbers written one way, values by
their labels, parameters as a table, each note beside its query, and the papers'
wording one click deeper. These read the HTML text; test_browser.py opens the
pages in chromium."""

from __future__ import annotations

import html as htmllib
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privpub
from privpub.report import html
from privpub.report.accuracy import sample_queries
from privpub.report.card import summary
from privpub.report.protected import claims_table

REPORT = Path(privpub.__file__).parent / "report"
#: A number written by a format of its own (an f-string spec or %-format), not by
#: html.number or html.percent.
AD_HOC = re.compile(r"\{[^{}]*:[,+]?\.?\d*[gfe%]\}|\{[^{}]*:,\}|%[.\d]*[gfe]\b")
#: A number in exponent notation, as Python's g/e formats write it.
EXPONENT = re.compile(r"\d(?:\.\d+)?e[-+]?\d")


def cells(page: str) -> list[str]:
    """The text of every table cell of the page's own tables: claims' statements
    (in details elements) and plan's explanation (its own words) left out."""
    page = re.sub(r"<details>.*?</details>", "", page, flags=re.S)
    return [htmllib.unescape(re.sub(r"<[^>]+>", "", c))
            for c in re.findall(r"<td>(.*?)</td>", page, flags=re.S)]


@pytest.fixture(scope="module")
def coded():
    """A table whose labels are not their domain indices: a year (index 0 is 1990), a
    band with text labels, and a two-valued code whose label 'yes' is index 1 (a zone
    makes the domain large enough for αβ)."""
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame({"year": rng.integers(1990, 2000, n),
                       "band": rng.choice(["low", "mid", "high"], n),
                       "smoker": rng.choice(["no", "yes"], n), "zone": rng.integers(0, 200, n)})
    schema = privpub.Schema([privpub.IntRange("year", 1990, 1999),
                             privpub.Categorical("band", ["low", "mid", "high"]),
                             privpub.Categorical("smoker", ["no", "yes"]),
                             privpub.IntRange("zone", 0, 199)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", privpub.UsefulnessWarning)
        view = privpub.AlphaBeta.for_privacy(schema, n=len(df), gamma=0.5, k=1).publish(
            df, seed=4, duplicates="set")
    return df, view, view.report(df, audit=True, n_targets=16, rounds=2).html


@pytest.fixture(scope="module")
def splu():
    """A SPLU-Gen release whose records do not fill the last decoy group (601 = 5·120
    + 1), so its exact counts carry a note."""
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"age": rng.integers(20, 60, 601),
                       "job": rng.choice(["a", "b", "c", "d", "e", "f"], 601)})
    schema = privpub.Schema([privpub.IntRange("age", 20, 59),
                             privpub.Categorical("job", ["a", "b", "c", "d", "e", "f"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = privpub.SPLUGen(5, "job").publish(df, schema=schema, seed=1)
        page = view.report(df).html
    return df, view, page


@pytest.mark.parametrize("value, shown", [
    (4.4121e-05, "0.00004412"), (1519.2, "1,519"), (3173.0, "3,173"), (39.3434, "39.34"),
    (0.497222, "0.4972"), (-416.781, "-416.8"), (999.96, "1,000"), (2.0, "2"), (0.0, "0"),
    (3.85791e-07, "3.858 × 10⁻⁷"), (np.int64(30162), "30,162"), (np.float64(0.5), "0.5"),
    (None, "—"), (float("nan"), "—"), (float("inf"), "∞"), (True, "yes"), ("a<b", "a&lt;b")])
def test_one_way_of_writing_a_number(value, shown):
    assert html.number(value) == shown


def test_one_way_of_writing_a_percentage():
    assert html.percent(0.95) == "95%" and html.percent(0.71875) == "71.9%"
    assert html.percent(0.07812, signed=True) == "+7.8%" and html.percent(0) == "0%"
    assert html.percent(-0.02, signed=True) == "-2%"
    assert html.percent(0.0000123) == "0.00123%"


def test_report_writes_no_number_by_a_format_of_its_own():
    """Every figure of report/ goes through html.number or html.percent; the two
    write numbers themselves. (Power: the pattern finds the specs report/ used.)"""
    found = {path.name: AD_HOC.findall(path.read_text(encoding="utf-8"))
             for path in REPORT.glob("*.py") if path.name != "html.py"}
    assert {name: specs for name, specs in found.items() if specs} == {}
    for planted in ('f"{x:.3g}"', 'f"{x:,.0f}"', 'f"{x:,}"', 'f"{p:.1%}"', 'f"{x:+.1%}"',
                    '"%.2f" % x'):
        assert AD_HOC.search(planted), planted


def test_the_card_writes_no_exponent(coded, splu):
    """No 4.4121e-05 beside 1,519: every figure the card shows outside the papers'
    wording (details elements) is written one way: its tables, the summary box's
    mechanism (α, β as the family's title gives them) and plan's explanation."""
    for page in (coded[2], splu[2]):
        written = cells(page)
        assert written and not [c for c in written if EXPONENT.search(c)]
        shown = re.sub(r"<(details|style|script)\b.*?</\1>", "", page, flags=re.S)
        shown = htmllib.unescape(re.sub(r"<[^>]+>", " ", shown))
        assert "plan's explanation" in shown and "mechanism" in shown
        assert EXPONENT.findall(shown) == []


def test_tiny_parameters_are_written_one_way():
    """A β of 3.86e-07 and Adult's n/m of 4.65e-05: the summary box's mechanism
    and plan's explanation (shown on the card) write them as every other figure."""
    df, schema = privpub.datasets.load_adult()
    view = privpub.AlphaBeta(schema, alpha=0.5, beta=3.85791e-07).publish(
        df, seed=0, duplicates="set")
    assert EXPONENT.search(view.guarantee().mechanism)  # the family's own title
    box = htmllib.unescape(summary(view, {"rows": len(view), "graph": False}))
    assert "10⁻⁷" in box and not EXPONENT.search(box)
    explained = privpub.plan(df, schema=schema).explain()
    assert "n/m = 0.00004654" in explained and not EXPONENT.search(explained)


def test_a_card_says_its_own_queries_warnings_in_their_notes():
    """Adult's SPLU-Gen card samples queries whose reconstruction needs care
    (ReconstructionWarning from the estimator): the card shows the note beside
    the query and does not warn its caller, who asked for a card."""
    df, schema = privpub.datasets.load_adult()
    with pytest.warns(UserWarning, match="no decoy group"):  # 30,162 = 5·6,032 + 2
        view = privpub.SPLUGen(5, "occupation").publish(df, schema=schema, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = htmllib.unescape(view.report(df).html)
    assert "includes 0: even under the paper model the release does not tell" in page


def test_values_are_shown_by_their_labels(coded):
    """Every value a query or the audit shows is a label of its attribute's domain,
    not a domain index (year 1990 is index 0; 'yes' is index 1)."""
    df, view, page = coded
    text = htmllib.unescape(page)
    years = [int(y) for y in re.findall(r'"year" = (\d+)', text)]
    bands = re.findall(r"\"band\" = '([^']*)'", text)
    smoker = re.findall(r"\"smoker\" = '([^']*)'", text)
    assert years and set(years) <= set(range(1990, 2000))
    assert bands and set(bands) <= {"low", "mid", "high"}
    assert smoker and set(smoker) <= {"no", "yes"}
    assert """<code>"smoker" = 'yes'</code> (bit 1)""" in text  # the audit's secret
    assert "np.int64" not in text and "np.str_" not in text


def test_a_sum_and_an_average_name_their_column(coded):
    df, view, page = coded
    text = htmllib.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "sum of year over all records" in text
    assert "average of year over all records" in text
    assert "records over all records" in text  # the count an average divides by


def test_parameters_are_a_table_not_json(coded, splu):
    """A mapping parameter (the record facts) is a row per part with its meaning; a
    list (SPLU-Gen's sensitive attributes) is its items; no JSON anywhere."""
    page = coded[2]
    table = page[page.index("<caption>Parameters</caption>"):]
    table = table[:table.index("</table>")]
    assert "{" not in table and "&quot;" not in table
    facts = coded[1].parameters["records"]
    for part, value in facts.items():
        row = re.search(rf"<code>records</code> → <code>{part}</code></td><td>—</td>"
                        rf"<td>([^<]*)</td><td>([^<]*)</td>", table)
        assert row, part
        assert row.group(1) == html.number(value) and row.group(2)
        assert not row.group(2).startswith("part of")  # a meaning in words
    splu_table = splu[2][splu[2].index("<caption>Parameters</caption>"):]
    assert re.search(r"<code>sensitive</code></td><td>S</td><td>job</td>", splu_table)


def test_each_note_sits_beside_its_query(splu):
    """Each estimate's notes are in the table row of its query (SPLU-Gen's: the
    sampled counts' and the count its sums cover, with the no-decoy-group note),
    and nowhere in a list of their own."""
    df, view, page = splu
    rows = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)
    total = view.estimate_many(["SELECT count(*) FROM I WHERE TRUE"]).to_records()[0]
    assert total["notes"] and "no decoy group" in total["notes"][0]
    schema = view.schema
    sampled = sample_queries(schema, schema.digits(schema.encode(df)), ["job"], 12,
                             privpub.resolve_seed(0))  # the card's own (seed 0, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noted = [r for r in view.estimate_many(sampled).to_records() if r["notes"]]
    assert noted  # small counts the release cannot tell from 0
    noted.append(total)
    for record in noted:
        home = [r for r in rows if html.text(record["query"]) in r]
        assert home, record["query"]
        for note in record["notes"]:
            assert all(html.text(note) in r for r in home)
    assert "Notes the estimates carry" not in page
    # Every note on the page is in a row whose first cell is a query.
    for row in rows:
        if 'class="notes"' in row:
            assert row.startswith("<td><code>") or "<br><code>" in row.split("</td>")[0]


def test_the_papers_wording_is_one_click_deeper(coded):
    """Each claim is a plain title and line; its name, source and statement (the
    papers' wording: Bernstein's inequality, d-exclusive adversaries) are in a
    details element under it, and nowhere outside one."""
    df, view, page = coded
    outside = re.sub(r"<details>.*?</details>", "", page, flags=re.S)
    for word in ("Bernstein's inequality", "d-exclusive", "Theorem 4.3", "Pr[t|V]"):
        assert html.text(word) in page and html.text(word) not in outside, word
    for claim in view.guarantee().claims:
        assert (f"<summary>The papers' wording</summary><p><strong>{html.text(claim.name)}"
                f"</strong> ({html.text(claim.source)})</p>") in page
    table = claims_table(view.guarantee())
    assert table.count("<details>") == len(view.guarantee().claims)
    assert ">Link attacks<" in table and ">Accuracy of counts<" in table


def test_a_claim_of_a_kind_not_listed_keeps_its_name():
    made = privpub.Guarantee("m", (privpub.Claim("a new kind", True, "its <i>words</i>", "Thm"),))
    table = claims_table(made)
    assert "<td>a new kind</td>" in table
    assert "<details><summary>The papers' wording</summary><p><strong>a new kind" in table
    assert "its &lt;i&gt;words&lt;/i&gt;" in table


def test_the_presence_audit_has_a_plain_verdict_against_its_promise():
    """Above γ at a prior within d: the promise broken; below γ: none; across it: none
    found at this size; the audit's own account is one click deeper."""
    from privpub.attacks.presence import PresenceAuditResult
    from privpub.report.attacker import presence_verdict

    def result(interval, named=4, prior=0.01):
        return PresenceAuditResult("lstsq", prior, 10, 2, 30, 3, named, 2, interval, 0.95,
                                   0.2, 0.01, 5, 1000)

    assert presence_verdict(result((0.3, 0.9))).startswith("the release breaks its promise")
    assert presence_verdict(result((0.01, 0.15))).startswith("no leak found: the attack")
    assert presence_verdict(result((0.1, 0.6))).startswith("no breach found at this audit")
    assert presence_verdict(result((0.0, 1.0), named=0)).startswith("nothing to judge")
    assert presence_verdict(result((0.3, 0.9), prior=0.5)).startswith(
        "the release promises nothing at this prior")
