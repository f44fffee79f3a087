"""Eq. 13/14 for a batch, written out in numpy: the reference the Rust kernel
(``_core.splu.em_batch``, called by :func:`privpub.splu.em.paper_em`) is held to.

This was the library's EM until the iteration moved to Rust (issue 36: 0.68 s of
CPU on the benchmark's 2,905 queries, 63 of them over 1,000 steps). It reads as
the docstring of :func:`~privpub.splu.em.paper_em` states the rules: the batch
shrinks to the queries still moving; each step is x ∘ M (y ⊘ Mᵀx) with the
library's :func:`~privpub.splu.em.transition_matrix` as a dense (Q, K, K) stack.

Its sums have a fixed order, which the kernel follows: numpy's pairwise sum for Σx
and f_j (plain C, the same on every machine) and index order for the two products
with M, written as loops here because ``einsum``'s order depends on the CPU's vector
width. The library's loop used ``einsum``; the two differ by rounding alone (the
benchmark's batch: the same iterations, counts equal to 10⁻⁹), but a rule on the
edge of firing can fire one step apart with another summation order, so the tests
compare the kernel with this loop for equality to the bit.
"""

from __future__ import annotations

import numpy as np

from privpub.splu.em import COUNT_TOL, PAPER_TOL, em_start, transition_matrix


def reference_em(y: np.ndarray, group_size: int, tol: float | None = None,
                 max_iter: int = 10_000, exact_rate: bool = False, stopping: str = "count"
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, iterations, converged) as :func:`privpub.splu.em.paper_em` returns them."""
    tol = (PAPER_TOL if stopping == "paper" else COUNT_TOL) if tol is None else tol
    y = np.asarray(y, dtype=np.float64)
    q, k = y.shape
    n = y.sum(axis=1)
    x = y.copy() if stopping == "paper" else em_start(y, group_size, exact_rate)
    iterations = np.zeros(q, dtype=np.int64)
    converged = n == 0
    step = np.full(q, np.nan)   # the requested count's last change
    limit = np.full(q, np.nan)  # its Aitken extrapolation
    result = x[:, -1].copy()
    active = np.flatnonzero(~converged)
    for _ in range(max_iter):
        if len(active) == 0:
            break
        xa, ya = x[active], y[active]
        m = transition_matrix(xa, group_size, exact_rate)
        denom = np.zeros_like(xa)  # Mᵀx, summed in index order
        for i in range(k):
            denom += m[:, i, :] * xa[:, i, None]
        ratio = np.divide(ya, denom, out=np.zeros_like(denom), where=denom > 0)
        back = np.zeros_like(xa)  # M (y ⊘ Mᵀx), likewise
        for c in range(k):
            back += m[:, :, c] * ratio[:, c, None]
        new = xa * back
        iterations[active] += 1
        if stopping == "paper":
            done = np.all(np.abs(new - xa) <= tol * xa, axis=1)
            result[active] = new[:, -1]
        else:
            change = new[:, -1] - xa[:, -1]
            with np.errstate(invalid="ignore", divide="ignore"):
                rate = change / step[active]
                ahead = np.where((rate >= 0) & (rate < 1), new[:, -1] + change * rate / (1 - rate),
                                 np.nan)
            scale = np.maximum(np.abs(new[:, -1]), 1.0)
            still = np.abs(change) <= 1e-10 * scale
            settled = np.abs(ahead - limit[active]) <= tol * np.maximum(np.abs(ahead), 1.0)
            done = still | settled
            result[active] = np.where(still | ~settled, new[:, -1],
                                      np.clip(ahead, 0.0, new.sum(axis=1)))
            step[active], limit[active] = change, ahead
        x[active] = new
        converged[active[done]] = True
        active = active[~done]
    x[:, -1] = result
    return x, iterations, converged


