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


def parameter_rows(parameters: dict[str, Any], mechanism: Any) -> list[tuple[str, str, str, str]]:
    """(name, paper name, value, meaning) per parameter, all escaped; the letters and
    meanings are the ones ``mechanism`` declares
    (:class:`~privpub.core.capabilities.DescribesParameters`)."""
    known = parameter_meanings(mechanism)
    rows = []
    for name, value in parameters.items():
        letter, meaning = known.get(name, ("—", "(no description in this version)"))
        shown = (html.text(json.dumps(value, default=str, ensure_ascii=False))
                 if isinstance(value, dict | list) else html.number(value, 6))
        rows.append((f"<code>{html.text(name)}</code>", html.text(letter), shown,
                     html.text(meaning)))
    return rows


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
    rows = [(html.text(a.name), html.text(a.kind), f'<span class="num">{a.size:,}</span>',
             html.text(a.describe()), "derived from the data" if a.name in schema.derived
             else "declared") for a in schema.attributes]
    return html.table(("attribute", "type", "|D|", "values", "domain"), rows,
                      caption=f"Schema: {len(rows)} attributes, m = {schema.size:,} tuples",
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
            ("size", html.headline("rows", facts["rows"], f"{facts['rows']:,}")
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
