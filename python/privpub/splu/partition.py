"""SPLU-Gen Step 2: eligibility and the deterministic decoy-group partition.

Decoy groups hold γ records with pairwise distinct sensitive values. They
are built by Anatomy's group creation (Sec. 6 of the paper): each round takes
one record from each of the γ value buckets with the most records left
(ties to the smaller value index), from each bucket its smallest record id.
The partition depends only on the sensitive column, so it is a deterministic
function of the data (the paper requires this); it is never published.

Eligibility (Sec. 3): every sensitive value has frequency ≤ N/γ. Then the
rounds leave exactly N mod γ records (Anatomy, Lemma 3), which the paper
deletes; privpub reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import privpub._core as _core
from privpub.core.errors import ParameterError


@dataclass(frozen=True)
class DecoyGroups:
    """One sensitive attribute's partition: ``members`` (groups × γ record
    ids, row r is group r) and ``residue`` (record ids in no group, ascending)."""

    members: np.ndarray
    residue: np.ndarray

    @property
    def group_size(self) -> int:
        return self.members.shape[1]


def check_eligible(name: str, digits: np.ndarray, labels, group_size: int,
                   note: str = "") -> np.ndarray:
    """The value frequencies of attribute ``name``; a ParameterError naming the
    most frequent value, its frequency and the largest eligible γ when some
    frequency exceeds N/γ. ``labels[v]`` is value v as the user wrote it."""
    freq = np.bincount(digits, minlength=len(labels))
    n = len(digits)
    top = int(np.argmax(freq)) if n else 0
    if n and group_size * int(freq[top]) > n:
        best = n // int(freq[top])
        advice = (f"the largest eligible γ is {best}" if best >= 2 else
                  "no γ ≥ 2 is eligible (that value fills more than half the records)")
        raise ParameterError(
            f"group_size = {group_size} is not eligible for sensitive attribute {name!r}{note}: "
            "value "
            f"{labels[top]!r} has frequency {int(freq[top]):,} > N/γ = {n:,}/{group_size} = "
            f"{n / group_size:,.2f}; {advice}")
    return freq


def decoy_groups(digits: np.ndarray, n_values: int, group_size: int) -> DecoyGroups:
    """The partition of records (positions in ``digits``) into decoy groups (Rust)."""
    if len(digits) >= 2**32:
        raise ParameterError(f"{len(digits):,} records; SPLU-Gen handles fewer than 2^32")
    members, residue = _core.splu.decoy_groups(np.ascontiguousarray(digits, dtype=np.uint32),
                                               int(n_values), int(group_size))
    return DecoyGroups(members.reshape(-1, group_size), residue)


def cooccurrence(freq: np.ndarray, group_size: int) -> np.ndarray:
    """C[s', s]: how many decoy groups hold both s' and s (C[s, s] = groups
    holding s) under the partition of any table with these frequencies (the
    partition depends on nothing else). Built by partitioning a synthetic
    column with these frequencies."""
    freq = np.asarray(freq, dtype=np.int64)
    values = np.repeat(np.arange(len(freq), dtype=np.uint32), freq)
    groups = decoy_groups(values, len(freq), group_size)
    vals = values[groups.members]  # groups × γ values
    pairs = (vals[:, :, None].astype(np.int64) * len(freq) + vals[:, None, :]).reshape(-1)
    return np.bincount(pairs, minlength=len(freq) ** 2).reshape(len(freq), len(freq))
