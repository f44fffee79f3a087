"""The card's first section: what was released.

The mechanism, each parameter with its paper name and meaning (as the family
declares them), the seed policy, the library version, the size and schema,
and a content digest: a
SHA-256 over the release's own stored digest (table views: per column, the
rows' domain indices in order; graph answers: the answer document), so two
cards of the same release show the same digest and any edit changes it; and
who signed the file it was opened from (:mod:`privpub.core.signing`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from privpub.core.capabilities import parameter_meanings
from privpub.core.release import DocumentRelease
from privpub.core.seeding import OS_CSPRNG
from privpub.domain.schema import Schema
from privpub.report import html
from privpub.tables.published import PublishedView

#: Plain meanings of the parts of a parameter that is a mapping (the families' own
#: words cover the parameter as a whole): the record facts every table release states
#: (:func:`privpub.tables.records.check_record_facts`) and a graph answer's public facts.
PART_MEANINGS = {
    ("records", "duplicates"): "how repeated records were published: 'set' once per distinct "
                               "tuple, 'records' each record, 'none' the data repeat none",
    ("records", "records_given"): "records in the table the release was made from",
    ("records", "repeated_tuples"): "tuples published as often as they occur (repeats the "
                                    "guarantee does not cover)",
    ("records", "distinct_tuples"): "distinct tuples in that table",
    ("records", "revealed_in_view"): "tuples the view shows more than once (each is certainly "
                                     "in the table)",
    ("graph", "m"): "nodes of the graph's domain",
    ("graph", "m_derived"): "whether that number was read from the graph's node ids (so it "
                            "reveals them) rather than declared",
    ("graph", "directed"): "whether the edges have a direction",
}


def parameter_rows(parameters: dict[str, Any], mechanism: Any) -> list[tuple[str, str, str, str]]:
    """(name, paper name, value, meaning) per parameter, all escaped; the letters and
    meanings are the ones ``mechanism`` declares
    (:class:`~privpub.core.capabilities.DescribesParameters`). A mapping is a row of its
    own followed by a row per part (never its JSON); a list is its items, in words."""
    known = parameter_meanings(mechanism)
    rows = []
    for name, value in parameters.items():
        letter, meaning = known.get(name, ("—", "(no description in this version)"))
        if isinstance(value, dict):
            rows.append((f"<code>{html.text(name)}</code>", html.text(letter),
                         f"{html.number(len(value))} parts, below", html.text(meaning)))
            rows += [(f"<code>{html.text(name)}</code> → <code>{html.text(part)}</code>", "—",
                      shown(item), html.text(PART_MEANINGS.get((name, part), f"part of {name}")))
                     for part, item in value.items()]
            continue
        rows.append((f"<code>{html.text(name)}</code>", html.text(letter), shown(value),
                     html.text(meaning)))
    return rows


def shown(value: object) -> str:
    """A parameter's value as the card writes it: numbers as every figure, a list as
    its items joined in words, text as it is."""
    if isinstance(value, list | tuple):
        return ", ".join(shown(v) for v in value) if value else "none"
    if isinstance(value, dict):  # (a mapping inside a part: its items, in words)
        return "; ".join(f"{html.text(k)}: {shown(v)}" for k, v in value.items())
    return html.number(value)


def content_digest(release: PublishedView | DocumentRelease) -> str:
    """SHA-256 (hex) of the release's stored digest document or answer document."""
    document = (release.to_dict() if isinstance(release, DocumentRelease)
                else release.metadata()["digest"])
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def signature_text(signed: Any) -> str:
    """Who signed the release, and what was checked (``signed``: its Signed, or None)."""
    if signed is None:
        return ("unsigned (or not opened from a file): the digest shows the release agrees "
                "with itself, not who published it")
    return str(signed)


def schema_table(schema: Schema) -> str:
    rows = [(html.text(a.name), html.text(a.kind),
             f'<span class="num">{html.number(a.size)}</span>',
             html.text(a.describe()), "derived from the data" if a.name in schema.derived
             else "declared") for a in schema.attributes]
    return html.table(("attribute", "type", "|D|", "values", "domain"), rows,
                      caption=f"Schema: {html.number(len(rows))} attributes, "
                      f"m = {html.number(schema.size)} tuples",
                      widths=(20, 10, 8, 44, 18))


def unit(facts: dict[str, Any]) -> str:
    """What the release's size counts: rows, or a graph's answers."""
    name = "answer" if facts["graph"] else "row"
    return name if facts["rows"] == 1 else name + "s"


def section(release: PublishedView | DocumentRelease, facts: dict[str, Any]) -> str:
    """What was released (``facts`` from the card: kind, rows, digest)."""
    seed = release.seed_policy
    policy = ("drawn from the operating system's CSPRNG: not reproducible, as a real release "
              "must be" if seed == OS_CSPRNG else
              "from a user seed: reproducible, so anyone with the seed can rerun the noise")
    rows = [("mechanism", html.text(release.mechanism)),
            ("release kind", html.text(facts["kind"])),
            ("randomness (seed policy)", f"{html.text(seed)} — {html.text(policy)}"),
            ("written by", f"privpub {html.text(release.library_version)}"),
            ("size", html.headline("rows", facts["rows"], html.number(facts["rows"]))
             + f" published {unit(facts)}"),
            ("content digest (SHA-256)", f"<code>{facts['digest']}</code>"),
            ("signature", html.text(signature_text(release.signed)))]
    body = html.pairs(rows)
    body += html.table(("parameter", "paper", "value", "meaning"),
                       parameter_rows(release.parameters, release.mechanism_object()),
                       caption="Parameters",
                       widths=(24, 10, 30, 36))
    if isinstance(release, PublishedView):  # (a graph answer has no schema)
        body += schema_table(release.schema)
    return html.section("released", "What was released", body)
