"""What SPLU-Gen gives the attribute audit (:func:`privpub.attacks.audit.audit`):
the subset sums of a secret, answered by the release's own reconstruction
(:class:`~privpub.core.capabilities.SubsetSumAuditor`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from privpub.tables.records import KeyCounts, rows_as_keys

if TYPE_CHECKING:
    from privpub.splu.mechanism import SPLUGen
    from privpub.tables.published import PublishedView


def subset_sums(mechanism: SPLUGen, release: PublishedView, qi_columns: Sequence[int], j: int,
                one: int, tuple_digits: Sequence[np.ndarray],
                Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A SPLU-Gen release's estimates of count(qi ∈ {qi_i : i ∈ q} ∧ secret = value), and
    their variances, for each row q of Q.

    The quasi-identifier is published as it is, so a query selects the
    targets' published rows, and the release's own estimator (Eq. 13/14, as
    :func:`~privpub.splu.reconstruction.reconstruct_many` runs it) turns their
    published state counts into the count (the mechanism's
    :meth:`~privpub.splu.SPLUGen.count_from_states`). A non-sensitive secret is
    published as it is: its count is observed, with variance 0. The variance is
    that of the two-state inversion x = (y − r·n_P)/(1/γ − r), r = f/N.
    """
    schema = release.schema
    view = schema.digits(release.codes)
    rows = len(view[0])
    shown = KeyCounts(rows_as_keys([view[i] for i in qi_columns])).of(
        rows_as_keys([tuple_digits[i] for i in qi_columns])).astype(np.float64)
    with_value = KeyCounts(rows_as_keys([view[i] for i in [*qi_columns, j]])).of(
        rows_as_keys([tuple_digits[i] for i in [*qi_columns, j]])).astype(np.float64)
    Qf = Q.astype(np.float64)
    n_p, y_s = Qf @ shown, Qf @ with_value
    if schema.names[j] not in mechanism.sensitive:
        return y_s, np.zeros(len(Q))
    group_size = mechanism.group_size
    total_s = float(np.sum(view[j] == one))
    # States in reconstruct_many's order: P slowest, then the value (bit 1 = it).
    y = np.stack([rows - n_p - (total_s - y_s), total_s - y_s, n_p - y_s, y_s], axis=1)
    x = mechanism.count_from_states(y)
    r = total_s / rows
    held = np.clip(x, 0.0, n_p)
    spread = held / group_size * (1 - 1 / group_size) + (n_p - held) * r * (1 - r)
    return x, spread / (1 / group_size - r) ** 2
