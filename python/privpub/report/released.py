"""The card's first section: what was released.

The mechanism, each parameter with its paper name and meaning, the seed
policy, the library version, the size and schema, and a content digest: a
SHA-256 over the release's own stored digest (table views: per column, the
rows' domain indices in order; graph answers: the answer document), so two
cards of the same release show the same digest and any edit changes it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from privpub.core.seeding import OS_CSPRNG
from privpub.report import html

#: Table families: parameter → (paper name, meaning). "—": no paper letter.
TABLE_PARAMETERS = {
    "alpha": ("α", "retention probability: each record of I stays in V with probability α (+β)"),
    "beta": ("β", "insertion probability: each domain tuple not in I enters V with "
                  "probability β"),
    "gamma_frapp": ("γ_frapp", "FRAPP's retention probability: a record stays as it is, else "
                               "is replaced by a uniform other tuple"),
    "n": ("n", "records (or distinct tuples) published from"),
    "d": ("d", "prior bound of (d, γ)-privacy: the adversaries protected believe Pr[t] ≤ d"),
    "gamma": ("γ", "posterior bound of (d, γ)-privacy: Pr[t | V] ≤ γ"),
    "failure_probability": ("ε", "probability that the (ρ, ε) error bound fails, per query"),
    "error_bound": ("ρ√n", "the per-query error bound, holding with probability ≥ 1 − ε"),
    "source": ("w(t)", "source distribution of the β-step (Algorithm 8)"),
    "calibration": ("—", "which (α, β) choice met the (d, γ) request"),
    "allow_prior_below_base_rate": ("—", "whether d below the base rate n/m was allowed"),
    "records": ("—", "how repeated tuples were published, and how many repeat"),
    "view_index": ("i", "which view of a multi-view release (Algorithm 7)"),
    "max_views": ("—", "the most views the analysis covers"),
    "previous_rows": ("|V_1 ∪ … ∪ V_{i−1}|", "rows of the earlier views"),
    "p_previous": ("p'", "probability a tuple of an earlier view reappears"),
    "p_fresh": ("p_i", "probability a tuple in no earlier view is inserted"),
    "group_size": ("γ", "SPLU-Gen's decoy group size: records per group, each with a "
                        "distinct sensitive value"),
    "sensitive": ("S", "the sensitive attribute(s), randomised within decoy groups"),
    "records_given": ("N", "records given to the mechanism"),
    "residue": ("N mod γ", "records left in no decoy group (not published)"),
}
#: Graph mechanisms: the relationship-privacy paper's letters.
GRAPH_PARAMETERS = {
    "epsilon": ("ε", "privacy loss"),
    "delta": ("δ", "δ of (ε, δ)-differential privacy"),
    "gamma": ("γ", "the uniform branch's bound of Algorithm 2.1"),
    "query": ("q", "the CQ(≠) query answered"),
    "queries": ("q_1 … q_k", "the CQ(≠) queries answered"),
    "m": ("m", "nodes of the graph's domain"),
    "lambda": ("λ", "the noise multiplier (scale λ/ε)"),
    "lambdas": ("λ_i", "each query's noise multiplier"),
    "p": ("p", "probability of the uniform branch"),
    "min_with_gs": ("—", "whether λ is capped by the global sensitivity"),
    "branch": ("—", "which branch of the mechanism answered"),
    "sensitivity": ("GS", "the query's global sensitivity"),
    "beta": ("β", "β of β-smooth sensitivity"),
    "graph": ("—", "public facts of the graph (size, directedness)"),
}


def parameter_rows(parameters: dict[str, Any], graph: bool) -> list[tuple[str, str, str, str]]:
    """(name, paper name, value, meaning) per parameter, all escaped."""
    known = GRAPH_PARAMETERS if graph else TABLE_PARAMETERS
    rows = []
    for name, value in parameters.items():
        letter, meaning = known.get(name, ("—", "(no description in this version)"))
        shown = (html.text(json.dumps(value, default=str, ensure_ascii=False))
                 if isinstance(value, dict | list) else html.number(value, 6))
        rows.append((f"<code>{html.text(name)}</code>", html.text(letter), shown,
                     html.text(meaning)))
    return rows


def content_digest(release: Any) -> str:
    """SHA-256 (hex) of the release's stored digest document or answer document."""
    document = (release.to_dict() if release.answers_own_query
                else release.metadata()["digest"])
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def schema_table(schema: Any) -> str:
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


def section(release: Any, facts: dict[str, Any]) -> str:
    """What was released (``facts`` from the card: kind, rows, digest)."""
    graph = facts["graph"]
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
            ("content digest (SHA-256)", f"<code>{facts['digest']}</code>")]
    body = html.pairs(rows)
    body += html.table(("parameter", "paper", "value", "meaning"),
                       parameter_rows(release.parameters, graph), caption="Parameters",
                       widths=(24, 10, 30, 36))
    if not graph:
        body += schema_table(release.schema)
    return html.section("released", "What was released", body)
