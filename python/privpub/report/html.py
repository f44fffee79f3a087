"""HTML pieces of the card: escaping, tables, figures, and the page.

Every string that may come from data (column names, values, queries,
statements quoting them) goes through :func:`text`; the few numbers the page
marks as headline figures carry their exact value in ``data-value`` so a test
(or a reader's script) compares the page to the API without parsing prose.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from string import Template
from typing import Any

from privpub.core.figures import trimmed, written
from privpub.counting.querytree import render


def text(value: Any) -> str:
    """``value`` as escaped HTML text (quotes too: it may land in an attribute)."""
    return html.escape(str(value), quote=True)


def number(value: Any) -> str:
    """The card's one way of writing a number, escaped
    (:func:`privpub.core.figures.written`)."""
    return text(written(value))


def percent(share: float, signed: bool = False) -> str:
    """A share in [0, 1] as a percentage, the card's one way: to one decimal place,
    a trailing .0 dropped (95%, 71.9%), below 0.1% as :func:`number` writes it
    (``signed``: a leading + on a positive change)."""
    points = 100 * share
    shown = (trimmed(f"{points:,.1f}") if points == 0 or abs(points) >= 0.1 else
             number(points))
    return ("+" if signed and share > 0 else "") + shown + "%"


def quoted(name: str) -> str:
    """An attribute's name as SQL text quotes it (plain text: escape it to show it)."""
    return '"' + name.replace('"', '""') + '"'


def condition(name: str, value: object) -> str:
    """``"name" = value`` as the card's queries write it (plain SQL text: escape it to
    show it): the value as the schema's label (a category's text, a band's label),
    never a domain index."""
    return f"{quoted(name)} = {render(value)}"


def headline(key: str, value: float | int | str, shown: str) -> str:
    """A headline figure: ``shown`` (already HTML) in an element whose
    ``data-headline`` names it and whose ``data-value`` is the exact value."""
    return (f'<span class="headline" data-headline="{text(key)}" '
            f'data-value="{text(repr(value) if isinstance(value, float) else value)}">'
            f"{shown}</span>")


def table(header: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "",
          cls: str = "", widths: Sequence[int] = ()) -> str:
    """A real HTML table; cells are HTML already (escape data with :func:`text`);
    ``widths``: each column's share of the page in percent (default: equal)."""
    cols = ("<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths)
            + "</colgroup>") if widths else ""
    head = "".join(f"<th scope=\"col\">{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (f'<table class="{cls}">{cap}{cols}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def pairs(rows: Iterable[tuple[str, str]]) -> str:
    """A two-column table of (name, value) rows, both HTML already."""
    body = "".join(f'<tr><th scope="row">{k}</th><td>{v}</td></tr>' for k, v in rows)
    return f'<table class="pairs"><tbody>{body}</tbody></table>'


def notes(items: Iterable[str]) -> str:
    """An estimate's notes as a list to sit beside its query ("" for none)."""
    listed = "".join(f"<li>{text(n)}</li>" for n in items)
    return f'<ul class="notes">{listed}</ul>' if listed else ""


def figure(uri: str, alt: str, caption: str) -> str:
    """An inline image (a data URI) with its caption."""
    return (f'<figure><img src="{uri}" alt="{text(alt)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def paragraphs(statement: str) -> str:
    """A multi-line statement as escaped paragraphs."""
    return "".join(f"<p>{text(line)}</p>" for line in statement.split("\n") if line)


def block(kind: str, title: str, body: str) -> str:
    """A highlighted block: ``kind`` is "warning" or "note"."""
    return f'<div class="{kind}" role="note"><strong>{text(title)}</strong>{body}</div>'


def section(ident: str, title: str, body: str) -> str:
    return f'<section id="{ident}"><h2>{text(title)}</h2>{body}</section>'


CSS = """
@page { size: A4; margin: 14mm; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       font-size: 10pt; line-height: 1.4; color: #111; margin: 0 auto; padding: 8mm;
       max-width: 190mm; overflow-wrap: anywhere; }
h1 { font-size: 16pt; margin: 0 0 2mm; }
h2 { font-size: 13pt; border-bottom: 1px solid #999; margin: 7mm 0 2mm; }
h3 { font-size: 11pt; margin: 4mm 0 1mm; }
p { margin: 1mm 0; }
table { border-collapse: collapse; width: 100%; margin: 2mm 0; table-layout: fixed;
        font-size: 9pt; page-break-inside: auto; }
tr { page-break-inside: avoid; }
th, td { border: 1px solid #bbb; padding: 1mm 1.5mm; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
thead th { background: #eee; }
table.pairs th { width: 32%; background: #f6f6f6; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-style: italic; padding-bottom: 1mm; }
figure { margin: 3mm 0; page-break-inside: avoid; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 8.5pt; color: #333; }
.verdict { font-size: 11pt; margin: 2mm 0 3mm; }
.summary { display: flex; flex-wrap: wrap; gap: 2mm; margin: 3mm 0; }
.summary div { border: 1px solid #bbb; border-radius: 2mm; padding: 1.5mm 3mm; flex: 1 1 40mm; }
.summary .label { display: block; font-size: 8pt; color: #444; }
.headline { font-weight: 700; }
.holds { color: #005a8c; font-weight: 700; }
.weak { color: #8a5a00; font-weight: 700; }
.fails { color: #b03000; font-weight: 700; }
.warning { border: 2px solid #D55E00; background: #fff3ea; padding: 2mm 3mm; margin: 3mm 0; }
.note { border: 1px solid #0072B2; background: #eef6fb; padding: 2mm 3mm; margin: 3mm 0; }
.warning strong, .note strong { display: block; }
details { margin: 1mm 0; }
details summary { cursor: pointer; color: #0072B2; font-size: 8.5pt; }
ul.notes { margin: 1mm 0 0; padding-left: 4mm; font-size: 8.5pt; color: #333; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 8.5pt; }
footer { margin-top: 8mm; font-size: 8pt; color: #444; }
@media print { body { padding: 0; max-width: none; } h2 { page-break-after: avoid; } }
"""

PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="privpub $version">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header><h1>$title</h1>$summary</header>
$sections
<footer>$footer</footer>
</body>
</html>
""")


def page(title: str, summary: str, sections: Sequence[str], footer: str, version: str) -> str:
    """The whole card: one self-contained document (no script, no external resource)."""
    return PAGE.substitute(title=text(title), summary=summary, sections="\n".join(sections),
                           footer=footer, version=text(version), css=CSS)
