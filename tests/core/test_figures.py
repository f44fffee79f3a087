"""Figures in a sentence written one way (privpub.core.figures.figures)."""

import pytest

from privpub.core.figures import figures


@pytest.mark.parametrize("sentence, written", [
    ("n/m = 4.654e-05.", "n/m = 0.00004654."),
    ("γ = 0.8: 1.719e+04; β = 3.85791e-07", "γ = 0.8: 17,190; β = 3.858 × 10⁻⁷"),
    ("α = 0.497222, k = 10, m = 648,023,040", "α = 0.4972, k = 10, m = 648,023,040"),
    # Not figures: names, versions, a figure already written with separators.
    *[(kept, kept) for kept in ("x1.5 v3.1.2 and 3.1.2", "15,081.00 and [0,0.5]")],
])
def test_figures_in_a_sentence(sentence, written):
    assert figures(sentence) == written
