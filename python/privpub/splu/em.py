"""The estimators of count(P ∧ s …) from a query's published state counts y
(:mod:`privpub.splu.reconstruction` reads y off the release and states each
estimate's uncertainty): the paper's iterative Bayesian reconstruction
(Eq. 13/14) and its transition matrix, with the paper's average ¬s → s rate or
the partition's exact one, and the rates of the ``partition`` method.

**Stopping** (:func:`paper_em`). ``stopping="paper"`` is Sec. 5's rule: x⁰ =
y, stop when every state changed by at most 1% of itself. Where a state's
count decays geometrically to 0 its relative change never falls to 1%, so the
EM runs to ``max_iter`` (flagged: ``converged`` is False); and where the EM
converges slowly (ρ ≈ 0.998 on Adult) a 1% step is far from the fixed point:
on Adult (γ = 5) the rule stops after one step on most queries, so the
paper's "reconstruction" is then the published count moved one step.
``stopping="count"`` (default) starts at the interior fixed point, which has a
closed form (:func:`~privpub.splu.uncertainty.closed_form`: f̂_j from the
published marginal, x̂ = M(f̂)⁻ᵀ y), and stops on the requested count alone,
when it stops moving or when its Aitken-extrapolated limit moves by ≤ tol
(10⁻⁶) relative, reporting that limit. Measured on the large-count pools of
``privpub experiments splu`` (γ = 5) and the benchmark's 5,000 synthetic
queries, against the EM run 200,000 steps
(``python -m privpub.experiments.splu_uncertainty``):

==============================  ===============================  ===============================
queries                         paper rule: iterations median /  count rule: iterations median /
                                mean / at the 10,000 cap; gap    mean / at the cap; gap to the
                                to the fixed point median, max   fixed point median, max
==============================  ===============================  ===============================
Adult (671)                     1 / 264 / 17; 131, 1,681         1 / 110 / 3; 0.00, 0.38
synthetic census 100K (413)     10 / 428 / 17; 93, 462           1 / 4 / 0; 0.00, 0.30
benchmark synthetic 500K (5K)   8 / 74 / 31; 30, 381             1 / 28 / 0; 0.00, 0.001
==============================  ===============================  ===============================

(records; the 3 Adult queries left at the cap have a requested count creeping
to 0 at a rate within 10⁻⁵ of 1, and are flagged.) ``privpub experiments
splu`` keeps the paper's rule: its figures reproduce the paper's.
"""

from __future__ import annotations

import functools

import numpy as np

import privpub._core as _core
from privpub.core.errors import ParameterError, ShapeError
from privpub.splu.partition import cooccurrence
from privpub.splu.uncertainty import closed_form

#: The paper's stopping rule: every state's relative change at most 1%.
PAPER_TOL = 0.01
#: The default rule's tolerance: the requested count's projected remaining change,
#: relative to the count (at least 1 record).
COUNT_TOL = 1e-6
#: The EM's stopping rules (:func:`paper_em`).
STOPPING = ("count", "paper")


@functools.cache
def _bits(w: int) -> np.ndarray:
    """(K, w+1) state bits: column 0 is P, column j is s_j (cached: the EM asks
    for them every iteration; read-only)."""
    k = np.arange(2 ** (w + 1))
    out = np.stack([(k >> (w - j)) & 1 for j in range(w + 1)], axis=1)
    out.flags.writeable = False
    return out


def _factors(x: np.ndarray, group_size: int, bits: np.ndarray, exact_rate: bool) -> np.ndarray:
    """M_1 … M_w for each row of x: (Q, w, 2, 2), rows original, columns published."""
    q, w = len(x), bits.shape[1] - 1
    n = x.sum(axis=1)
    out = np.empty((q, w, 2, 2))
    out[:, :, 1, 0], out[:, :, 1, 1] = (group_size - 1) / group_size, 1 / group_size
    for j in range(w):
        # A row sum over all K states (the others masked to 0): numpy's pairwise sum
        # over a row, the order the Rust EM follows (x[:, mask] would sum in an order
        # that depends on the batch's size).
        fj = (x * bits[:, j + 1]).sum(axis=1)
        if exact_rate:
            rate = np.divide(fj * (group_size - 1), group_size * (n - fj), out=np.zeros(q),
                             where=n > fj)
        else:
            rate = np.divide(fj, n, out=np.zeros(q), where=n > 0)
        out[:, j, 0, 0], out[:, j, 0, 1] = 1 - rate, rate
    return out


def transition_matrix(x: np.ndarray, group_size: int, exact_rate: bool = False) -> np.ndarray:
    """M = I_2 ⊗ M_1 ⊗ … ⊗ M_w for each row of x (Q, K): (Q, K, K), rows the
    original state, columns the published one, M_j = [[1 − f_j/N, f_j/N],
    [(γ−1)/γ, 1/γ]] with f_j = Σ x over the states where s_j holds, N = Σ x.
    With ``exact_rate`` the ¬s_j → s_j entry is the partition's average rate
    f_j(γ−1)/(γ(N − f_j)) instead of the paper's f_j/N (module docstring)."""
    bits = _bits(int(np.log2(x.shape[1])) - 1)
    factors = _factors(x, group_size, bits, exact_rate)
    m = np.empty((len(x), len(bits), len(bits)))
    m[:] = bits[:, None, 0] == bits[None, :, 0]
    for j in range(factors.shape[1]):
        m *= factors[:, j][:, bits[:, j + 1][:, None], bits[:, j + 1][None, :]]
    return m


def em_start(y: np.ndarray, group_size: int, exact_rate: bool) -> np.ndarray:
    """The ``count`` rule's x⁰: the interior fixed point (:func:`closed_form`) with
    negative states raised to a small positive count (so that the EM can still
    move them), or y where it has no fixed point in closed form."""
    x = closed_form(y, group_size, exact_rate)
    floor = np.minimum(0.5, y.sum(axis=1, keepdims=True) / (2 * y.shape[1]))
    half = y.shape[1] // 2  # a block of P with no records keeps its states at 0
    empty = np.repeat(y.reshape(len(y), 2, half).sum(axis=2) == 0, half, axis=1)
    start = np.where(empty, 0.0, np.maximum(x, floor))
    return np.where(np.isfinite(x).all(axis=1)[:, None], start, y)


def paper_em(y: np.ndarray, group_size: int, tol: float | None = None, max_iter: int = 10_000,
             exact_rate: bool = False, stopping: str = "count"
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. 13/14 for a batch: y is (Q, K) published state counts; returns x
    (Q, K), iterations and converged (its stopping rule fired before
    ``max_iter``), each query stopped on its own. One step is
    x ← x ∘ M (y ⊘ Mᵀx) with M = :func:`transition_matrix` of the current x.
    The iteration runs in the Rust core (``_core.splu.em_batch``: one call for
    the batch, the queries spread over the threads); ``tests/splu/em_reference.py``
    is the same loop in numpy, which the tests hold it to.

    Stopping rules (module docstring):

    - ``"count"`` (default): start at the interior fixed point x̂ = M(f̂)⁻ᵀ y
      (:func:`~privpub.splu.uncertainty.closed_form`; negative states raised to
      ½ record so that the EM can still move them) and stop on the *requested*
      count x_{K−1} alone: when it no longer moves (|Δ_t| ≤ 10⁻¹⁰·max(|x|, 1):
      an interior fixed point stops at once), or when its limit is settled.
      The EM converges linearly, Δ_t ≈ ρ·Δ_{t−1}, so the limit is
      L_t = x_t + Δ_t·ρ_t/(1 − ρ_t) with ρ_t = Δ_t/Δ_{t−1} ∈ [0, 1) (Aitken's
      Δ²); stop when |L_t − L_{t−1}| ≤ tol·max(|L_t|, 1) and report L_t
      (clipped to [0, N]). tol defaults to 10⁻⁶. Where the requested count
      decays geometrically to 0 this stops as soon as the rate settles (L = 0)
      instead of after thousands of steps, and another state decaying to 0
      does not hold it up.
    - ``"paper"``: x⁰ = y, stop when every state's |Δx_i| ≤ tol·x_i (Sec. 5,
      tol = 0.01). It stops after one step on most Adult queries (γ = 5), far
      from the fixed point, and never where a state decays to 0.

    A query whose y sums to 0 is not iterated (converged after 0 steps). Negative
    or non-finite counts are a ParameterError naming the row and state.
    """
    if stopping not in STOPPING:
        raise ParameterError(f"stopping must be one of {list(STOPPING)}, got {stopping!r}")
    tol = (PAPER_TOL if stopping == "paper" else COUNT_TOL) if tol is None else tol
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] < 4 or y.shape[1] & (y.shape[1] - 1):
        raise ShapeError(f"y must be (queries, states) with 2^(w+1) states (a power of two "
                         f"≥ 4), got shape {y.shape}")
    start = y if stopping == "paper" else np.ascontiguousarray(
        em_start(y, group_size, exact_rate))
    return _core.splu.em_batch(y, start, group_size, exact_rate, stopping, float(tol),
                               int(max_iter))


def sharing_rates(freq: np.ndarray, group_size: int) -> np.ndarray:
    """t[s', s]: the share of the groups holding an s'-record in which it publishes
    s (from the partition rebuilt from the published frequencies; 0 on the
    diagonal). It depends on the release alone: built once per attribute."""
    c = cooccurrence(freq, group_size).astype(float)
    grouped = np.diag(c).copy()
    t = np.divide(c, group_size * grouped[:, None], out=np.zeros_like(c),
                  where=grouped[:, None] > 0)
    np.fill_diagonal(t, 0.0)
    return t


def partition_estimates(hist: np.ndarray, t: np.ndarray, group_size: int, rounds: int
                         ) -> np.ndarray:
    """count(P ∧ s) for every value s of one sensitive attribute (module docstring),
    from the sharing rates ``t`` (:func:`sharing_rates`)."""
    y = hist[1].astype(float)
    n_p = y.sum()
    weights = y.copy()
    x = y.copy()
    for _ in range(rounds):
        others = weights.sum() - weights  # Σ_{s' ≠ s} w(s')
        rate = np.divide(weights @ t, others, out=np.zeros_like(y), where=others > 0)
        x = np.clip((y - rate * n_p) / (1 / group_size - rate), 0.0, n_p)
        weights = x
    return x
