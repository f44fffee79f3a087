"""Stated guarantees: each claim with the result it comes from and whether it holds.

Every mechanism's ``guarantee()`` returns a :class:`Guarantee`; a claim says
"holds" only for what holds for these parameters and the data published, and
its statement says for whom it does not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """One statement: its name, whether it holds, the text, and its source."""

    name: str
    holds: bool
    statement: str
    source: str


@dataclass(frozen=True)
class Guarantee:
    """The privacy and utility statement a mechanism meets for its parameters."""

    mechanism: str
    claims: tuple[Claim, ...]

    def __getitem__(self, name: str) -> Claim:
        for claim in self.claims:
            if claim.name == name:
                return claim
        raise KeyError(f"no claim {name!r}; claims: {[c.name for c in self.claims]}")

    def __str__(self) -> str:
        lines = [f"Guarantee of {self.mechanism}:"]
        for c in self.claims:
            mark = "holds" if c.holds else "does NOT hold"
            lines.append(f"  - {c.name}: {mark} [{c.source}]")
            lines.extend(f"      {part}" for part in c.statement.split("\n"))
        return "\n".join(lines)
