"""Histograms of many attribute subsets from a few: the maximal ones, summed down.

Asking for every equality query over up to three of Adult's nine attributes
means 129 histograms over the view. Each subset's histogram is exactly the
sum, over the other attributes, of the histogram of any superset, so only
the *maximal* asked subsets (84 three-attribute sets for Adult) need a pass
over the rows; the others are summed down from one of them, at a cost of its
cells, not the view's rows. (Growing the cover to fewer, wider sets, as a
numpy user with a slow per-pass bincount would, costs more here: the Rust
histogram of three attributes is ~15× cheaper per row than of four, whose
cells no longer fit in cache.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def maximal_cover(subsets: Sequence[Sequence[str]],
                  order: Sequence[str]) -> tuple[list[list[str]], list[int]]:
    """The maximal subsets among ``subsets`` (attributes in ``order``, the
    schema's) and, for each asked subset, the index of a maximal one holding it."""
    keys = [frozenset(s) for s in subsets]
    maximal = list(dict.fromkeys(k for k in keys if not any(k < other for other in keys)))
    where = [next(i for i, c in enumerate(maximal) if k <= c) for k in keys]
    return [[a for a in order if a in c] for c in maximal], where


def sum_down(hist: np.ndarray, cover: Sequence[str], subset: Sequence[str],
             sizes: dict[str, int]) -> np.ndarray:
    """The histogram over ``subset`` (first attribute slowest) of a histogram
    over ``cover`` (a superset, first attribute slowest): exact integer sums."""
    cube = hist.reshape([sizes[a] for a in cover])
    drop = tuple(i for i, a in enumerate(cover) if a not in subset)
    kept = [a for a in cover if a in subset]
    out = cube.sum(axis=drop) if drop else cube
    return np.transpose(out, [kept.index(a) for a in subset]).reshape(-1)
