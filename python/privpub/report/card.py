"""A release card: one self-contained HTML page a data steward reads before
signing off a release (issue 25).

:func:`build` assembles the sections (what was released, who is protected,
how accurate, what an attacker gets, alternatives) for any release: a table
view (αβ, FRAPP, SPLU-Gen, a multi-view step, a Dask release or directory)
or a graph answer. ``Release.report`` calls it.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

from privpub.core import validate
from privpub.core.capabilities import stated_bound
from privpub.core.errors import ParameterError, UsefulnessWarning
from privpub.core.figures import figures
from privpub.core.files import write_text
from privpub.core.release import Release
from privpub.core.seeding import resolve_seed
from privpub.core.version import LIBRARY_VERSION
from privpub.report import accuracy, alternatives, attacker, html, protected, released
from privpub.report.verdict import verdict
from privpub.tables.distributed import DaskRelease

#: The accuracy section's sampling rule, as the footer states it.
SAMPLING_RULE = ("Sampled queries: each an AND of equalities on 1–3 attributes drawn "
                 "uniformly (on SPLU-Gen one of them sensitive), with the values of a record "
                 "drawn uniformly from the data, or of a uniform domain tuple without it.")
#: Suffixes a card's file may have.
HTML_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class Card:
    """A release's card: ``html`` is the whole page (no network, no script)."""

    html: str

    def write(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """Write the page to ``path`` (ending in .html; whole or not at all; an
        existing file only with ``overwrite=True``)."""
        write_text(path, self.html, overwrite=overwrite, suffix=HTML_SUFFIXES)

    def _repr_html_(self) -> str:  # shown inline by Jupyter
        return self.html

    def __str__(self) -> str:
        return self.html


def summary(release: Release, facts: dict[str, Any]) -> str:
    guarantee = release.guarantee()
    held = sum(c.holds for c in guarantee.claims)
    declared = stated_bound(release.mechanism_object())
    bound = None if declared is None else declared.bound
    cells = [("mechanism", html.text(figures(guarantee.mechanism))),
             ("published", f"{html.number(facts['rows'])} " + released.unit(facts)),
             ("guarantee", f"{html.number(held)} of {html.number(len(guarantee.claims))} "
                           "claims hold"),
             ("error bound",
              "none stated" if bound is None else f"±{html.number(bound)} per query")]
    return ('<div class="summary">' + "".join(
        f'<div><span class="label">{k}</span>{v}</div>' for k, v in cells) + "</div>")


def build(release: Release, data: Any = None, audit: bool = False, *, n_queries: int,
          n_targets: int, rounds: int, seed: Any) -> Card:
    """The card of ``release`` (see ``Release.report`` for the arguments)."""
    if not isinstance(audit, bool):
        raise ParameterError(f"audit must be True or False, got {audit!r}")
    n_queries = validate.integer("n_queries", n_queries, minimum=1)
    n_targets = validate.integer("n_targets", n_targets, minimum=2)
    rounds = validate.integer("rounds", rounds, minimum=1)
    if audit and data is None:
        raise ParameterError("audit=True needs data= (the table the release was made from): "
                             "the audits score the attack against it")
    source = resolve_seed(seed)
    if isinstance(release, DaskRelease):
        release = release.view()  # computes the release, as its guarantee() does
    graph = release.answers_own_query
    # A query answer's exact answers on its data (refused if the data are not its kind).
    truth = release.true_answers(data) if graph and data is not None else None
    facts = {"graph": graph, "kind": release.kind,
             "rows": len(release.estimate_many()) if graph else len(release),
             "digest": released.content_digest(release)}
    with warnings.catch_warnings():
        # The card's own queries (its sample, sums, audits, alternatives) warn as any
        # estimate does when it needs care (SPLU-Gen's reconstructions); the card says
        # each in the notes beside its query, and its caller asked for a card, not them.
        warnings.simplefilter("ignore", UsefulnessWarning)
        sections = [released.section(release, facts), protected.section(release)]
        if graph:
            sections.append(accuracy.graph_section(release, truth))
            sections.append(attacker.not_run(
                "privpub's audits attack published tables; a graph answer is one noisy number "
                "per query, whose noise law and interval are above.") if audit else "")
            sections.append(alternatives.not_planned(
                "privpub.plan covers the table mechanisms (αβ, FRAPP, SPLU-Gen); for a graph "
                "query compare mechanisms by their noise scale at the same ε."))
        else:
            sections.append(accuracy.table_section(release, data, n_queries, source))
            if audit:
                sections.append(attacker.section(release, data, n_targets, rounds, source))
            sections.append(alternatives.section(release, data))
    seed_text = ("seed " + str(seed) if source.seeded else "fresh OS randomness")
    footer = (f"Made by privpub {html.text(LIBRARY_VERSION)} with release.report(data="
              f"{'given' if data is not None else 'None'}, audit={audit}), drawing with "
              f"{html.text(seed_text)}. {html.text(SAMPLING_RULE)} Every statement about "
              "privacy is the release's own guarantee(); nothing here adds to it.")
    title = f"Release card: {release.mechanism} release"
    return Card(html.page(title, verdict(release) + summary(release, facts),
                          [s for s in sections if s],
                          footer, LIBRARY_VERSION))

