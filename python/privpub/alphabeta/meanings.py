"""What each parameter of an αβ release means, for the release card
(:class:`~privpub.core.capabilities.DescribesParameters`): the single view's
(Algorithms 1 and 8) and a view of an Algorithm 7 sequence's."""

from __future__ import annotations

from privpub.core.guarantee import PRIVACY_PARAMETERS

#: A single view's parameters: (the paper's letter, "—" for none; meaning).
ALPHABETA_PARAMETERS = PRIVACY_PARAMETERS | {
    "alpha": ("α", "retention probability: each record of I stays in V with probability α (+β)"),
    "beta": ("β", "insertion probability: each domain tuple not in I enters V with "
                  "probability β"),
    "source": ("w(t)", "source distribution of the β-step (Algorithm 8)"),
    "calibration": ("—", "which (α, β) choice met the (d, γ) request"),
}
#: A view of an Algorithm 7 sequence: the single view's and the sequence's.
MULTIVIEW_PARAMETERS = ALPHABETA_PARAMETERS | {
    "view_index": ("i", "which view of a multi-view release (Algorithm 7)"),
    "max_views": ("—", "the most views the analysis covers"),
    "previous_rows": ("|V_1 ∪ … ∪ V_{i−1}|", "rows of the earlier views"),
    "p_previous": ("p'", "probability a tuple of an earlier view reappears"),
    "p_fresh": ("p_i", "probability a tuple in no earlier view is inserted"),
}
