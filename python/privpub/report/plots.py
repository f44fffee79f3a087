"""The card's plots: one style, a colour-blind-safe palette, inline SVG.

matplotlib is imported here, inside :func:`figure`, never at ``import privpub``
(tests/test_imports.py): a card is the only thing that draws. Each plot is a
standalone SVG in a data URI, so the page needs no file beside it and the
SVGs' internal ids cannot collide with each other.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from privpub.core.optional import require

#: Okabe & Ito (2008), distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
#: Line styles beside the colours, so a grey print still tells the series apart.
DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)), "-", "--")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Width and height in inches: 6.3 in = 160 mm, inside an A4 page's text width.
SIZE = (6.3, 3.4)

STYLE = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "lines.linewidth": 1.6,
    # Text as SVG text in a generic family the browser has (no font file to embed or
    # fetch; paths for each glyph made every figure several times slower); a fixed
    # salt makes the output reproducible.
    "svg.fonttype": "none", "font.family": "sans-serif", "svg.hashsalt": "privpub-card",
}


@contextmanager
def figure() -> Iterator[Any]:
    """A figure and axes in the card's style; closed on exit."""
    matplotlib = require("matplotlib", "the release card's figures")
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=SIZE, layout="constrained")
        ax.set_prop_cycle(color=PALETTE, linestyle=DASHES)
        try:
            yield fig, ax
        finally:
            plt.close(fig)


def svg_uri(fig: Any) -> str:
    """The figure as an ``image/svg+xml`` data URI."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
