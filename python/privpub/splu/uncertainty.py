"""What a SPLU-Gen release determines about a count, and how noisy an estimate is.

Everything here reads the published state counts y of a query (``(Q, K)``,
K = 2^{w+1} states ordered as in :mod:`privpub.splu.reconstruction`: the
predicate P slowest, then s_1 … s_w, bit 1 = the query's value) and γ.

**The release's exact law.** Each sensitive attribute j is randomised on its
own: a record publishes a value drawn uniformly from its decoy group, so it
publishes s_j with probability 1/γ when its group holds s_j and never
otherwise. Within P (and within ¬P), let n_b count the records whose groups
hold s_j exactly for the j with b_j = 1 (b ∈ {0,1}^w). Then the published
states within the block are a sum of independent categorical draws with
E y = A n and

    Cov y = diag(A n) − A diag(n) Aᵀ,   A = A_1 ⊗ … ⊗ A_1,   A_1 = [[1, 1 − 1/γ], [0, 1/γ]]

(rows: published bit, columns: b_j), whatever the data; the two blocks are
independent. In particular the published count of the full conjunction
within P is exactly Binomial(a, γ^{−w}), a = n_{1…1} the records of P whose
groups hold every s_j. :func:`state_covariance` plugs n̂ = A⁻¹y (clipped
at 0) into this.

**What it determines** (:func:`guaranteed_interval`). The release fixes a
(up to binomial noise) but not how many of those a records hold the values
themselves: records of P that lack s but share a group with an s-record
publish s at the same rate 1/γ as the s-records do, and nothing in the
release tells them apart. For one sensitive attribute let b count the
records of ¬P in s-groups (the published count of s within ¬P is
Binomial(b, 1/γ)); s-groups hold γ·f_s = a + b records, so

    (a − (γ − 1)·b)/γ  ≤  count(P ∧ s)  ≤  min(a, (a + b)/γ, |P|),

both ends attained by some data set with these a and b. With several
attributes, a − (γ − 1)·Σ_j f_j ≤ count ≤ min(a, |P|, min_j f_j), f_j the
count of s_j (its published count is Binomial(γ f_j, 1/γ)). The interval
replaces a, b, f_j by exact binomial confidence limits (Bonferroni over the
limits used), so it covers the true count with probability ≥ the level for
every data set, every predicate and every row order. With P = all records it
is the exact interval for f_s of Theorem 2's binomial law. It is wide for
counts with a predicate: that width is what the release leaves open, not
noise an estimator could remove.

**How noisy an estimate is** (:func:`delta_stderr`). The paper's estimators
(``paper``, ``exact-rate``) are smooth functions of y where the EM's fixed
point is interior: f̂_j solves the published marginal's equation (``exact-rate``:
f̂_j = f'_j; ``paper``: f'_j = f̂_j/γ + (f̂_j/N)(N − f̂_j), the smaller root), M
is the paper's matrix at f̂ and x̂ = M⁻ᵀ y (:func:`closed_form`). Its standard
error over the randomisation is √(gᵀ Cov(y) g), g = ∂x̂_{K−1}/∂y (central
differences), with Cov(y) above: the delta method with the release's own
law, not a multinomial's. It measures noise only; a model whose assumption
fails for P is biased by more than it (see :mod:`privpub.splu.reconstruction`).
Where the EM stops on the boundary (a state at 0, so x̂ is not the closed
form) it is the unconstrained fixed point's standard error: measured
conservative with one sensitive attribute (the estimate's sd 0.02–0.6 of it
on Adult and the census), and 90–100% coverage of the estimate's mean per
count with two (300 releases of a 3,000-record table, where nearly every fit
is on the boundary). A delta method on the boundary fit's free states was
tried and not used: its stderr matched the spread, but the estimate's
distribution there is a mixture of boundary and interior fits, and value ±
1.96·stderr covered its mean in as few as 82% of runs (census).
"""

from __future__ import annotations

import numpy as np

#: Two-sided level of the misfit check: |published − implied| beyond this many sd.
MISFIT_Z = 3.29


def _kron(mats: list[np.ndarray]) -> np.ndarray:
    """Kronecker product of (Q, 2, 2) stacks, first factor slowest: (Q, 2^w, 2^w)."""
    out = mats[0]
    for m in mats[1:]:
        q, r, c = out.shape
        out = (out[:, :, None, :, None] * m[:, None, :, None, :]).reshape(q, r * 2, c * 2)
    return out


def _bit_of(k: int, w: int) -> np.ndarray:
    """(K,) bool: state k has attribute j's value (j = 0 is P)."""
    states = np.arange(2 ** (w + 1))
    return ((states >> (w - k)) & 1).astype(bool)


def block_design(group_size: int, w: int) -> np.ndarray:
    """A = A_1 ⊗ … ⊗ A_1 (2^w × 2^w): published pattern given the groups' pattern."""
    a1 = np.array([[1.0, 1 - 1 / group_size], [0.0, 1 / group_size]])
    out = np.ones((1, 1))
    for _ in range(w):
        out = np.kron(out, a1)
    return out


def state_covariance(y: np.ndarray, group_size: int) -> np.ndarray:
    """Cov(y) under the release's exact law with n̂ = A⁻¹y clipped at 0 (module
    docstring): (Q, K, K), block-diagonal in P."""
    q, k = y.shape
    w = int(np.log2(k)) - 1
    a = block_design(group_size, w)
    inv = np.linalg.inv(a)
    cov = np.zeros((q, k, k))
    half = k // 2
    for p in (0, 1):
        block = y[:, p * half:(p + 1) * half]
        n = np.clip(_rows_dot(block, inv), 0.0, None)  # (Q, 2^w)
        mean = _rows_dot(n, a)
        sub = ((a[None, :, None, :] * n[:, None, None, :]) * a[None, None, :, :]).sum(axis=3)
        idx = slice(p * half, (p + 1) * half)
        cov[:, idx, idx] = -sub
        cov[:, np.arange(p * half, (p + 1) * half), np.arange(p * half, (p + 1) * half)] += mean
    return cov


def _rows_dot(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """rows @ matrix.T, each row's sums in one order whatever the number of rows
    (a matrix product's order depends on the shape: a query's figures moved in
    their last digit between a batch and the query alone); the sums of this
    module are so (contiguous last-axis sums)."""
    return (rows[:, None, :] * matrix[None, :, :]).sum(axis=2)


def _fitted_counts(y: np.ndarray, group_size: int, exact_rate: bool) -> np.ndarray:
    """f̂_j for each sensitive attribute: (Q, w); NaN where the paper's equation
    has no real root."""
    q, k = y.shape
    w = int(np.log2(k)) - 1
    n = y.sum(axis=1)
    out = np.empty((q, w))
    for j in range(w):
        published = y[:, _bit_of(j + 1, w)].sum(axis=1)
        if exact_rate:
            out[:, j] = published
            continue
        # f'_j = f/γ + (f/N)(N − f)  ⇔  f²/N − (1 + 1/γ) f + f'_j = 0: the smaller root.
        b = 1 + 1 / group_size
        with np.errstate(invalid="ignore", divide="ignore"):
            disc = b * b - 4 * published / n
            out[:, j] = np.where(disc >= 0, n * (b - np.sqrt(np.maximum(disc, 0))) / 2, np.nan)
    return out


def closed_form(y: np.ndarray, group_size: int, exact_rate: bool) -> np.ndarray:
    """The interior fixed point of Eq. 13/14 (module docstring): x̂ = M(f̂)⁻ᵀ y, (Q, K).
    It may hold negative counts (the EM then stops on the boundary instead) and
    is NaN where the paper's marginal equation has no root."""
    q, k = y.shape
    w = int(np.log2(k)) - 1
    n = y.sum(axis=1)
    f = _fitted_counts(y, group_size, exact_rate)
    factors = [np.broadcast_to(np.eye(2), (q, 2, 2))]
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(w):
            rate = f[:, j] * (group_size - 1) / (group_size * (n - f[:, j])) if exact_rate else \
                f[:, j] / n
            m = np.empty((q, 2, 2))
            m[:, 0, 0], m[:, 0, 1] = 1 - rate, rate
            m[:, 1, 0], m[:, 1, 1] = (group_size - 1) / group_size, 1 / group_size
            factors.append(m)
        m = _kron(factors)  # inf · 0 where a rate is infinite (N = f_j): NaN, refused below
    x = np.full((q, k), np.nan)
    # det M_j = (1 − γ·rate_j)/γ: singular where a rate reaches 1/γ.
    ok = np.isfinite(m).all(axis=(1, 2)) & np.all(
        [np.abs(1 - group_size * f[:, 0, 1]) > 1e-9 for f in factors[1:]], axis=0)
    if ok.any():
        x[ok] = np.linalg.solve(np.swapaxes(m[ok], 1, 2), y[ok][:, :, None])[:, :, 0]
    return x


def delta_stderr(y: np.ndarray, group_size: int, exact_rate: bool) -> np.ndarray:
    """Standard error of the requested count of :func:`closed_form` over the
    release's randomisation (delta method with :func:`state_covariance`), (Q,)."""
    y = np.asarray(y, dtype=np.float64)
    q, k = y.shape
    n = y.sum(axis=1)
    h = np.maximum(1e-4 * n, 1e-3)
    grad = np.empty((q, k))
    for i in range(k):
        up, down = y.copy(), y.copy()
        up[:, i] += h
        down[:, i] -= h
        grad[:, i] = (closed_form(up, group_size, exact_rate)[:, -1]
                      - closed_form(down, group_size, exact_rate)[:, -1]) / (2 * h)
    cov = state_covariance(y, group_size)
    var = ((grad[:, :, None] * cov) * grad[:, None, :]).reshape(q, k * k).sum(axis=1)
    return np.sqrt(np.maximum(var, 0.0))


def _binom_sf(y: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(Y ≥ y) for Y ~ Binomial(n, p), y ≤ n."""
    from scipy import special  # imported on use: scipy costs ~0.4 s at `import privpub`

    return np.where(y <= 0, 1.0, special.bdtrc(np.maximum(y - 1, 0), n, p))


def _binom_cdf(y: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """P(Y ≤ y) for Y ~ Binomial(n, p), y ≤ n."""
    from scipy import special

    return np.where(y >= n, 1.0, special.bdtr(y, n, p))


def trials_limits(y: np.ndarray, p: float, cap: np.ndarray, alpha_low: np.ndarray,
                  alpha_high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact confidence limits for the number of trials n of Y ~ Binomial(n, p)
    given Y = y, with y ≤ n ≤ cap known: the least n with P(Y ≥ y | n) ≥
    alpha_low and the largest with P(Y ≤ y | n) ≥ alpha_high (a side with alpha
    0 is not bounded: y, resp. cap). Each limit errs with probability ≤ its
    alpha (test inversion; both tails are monotone in n)."""
    y = np.asarray(y, dtype=np.int64)
    cap = np.maximum(np.asarray(cap, dtype=np.int64), y)
    alpha_low = np.broadcast_to(alpha_low, y.shape)
    alpha_high = np.broadcast_to(alpha_high, y.shape)
    # Lower: least n in [y, cap] with sf(n) ≥ alpha_low (sf rises with n). Each
    # bisection step tests only the searches still open (a narrow range closes early).
    lo, hi = y.copy(), cap.copy()
    while (open_ := np.flatnonzero(lo < hi)).size:
        mid = (lo[open_] + hi[open_]) // 2
        ok = _binom_sf(y[open_], mid, p) >= alpha_low[open_]
        hi[open_] = np.where(ok, mid, hi[open_])
        lo[open_] = np.where(ok, lo[open_], mid + 1)
    lower = np.where(alpha_low > 0, lo, y)
    # Upper: largest n in [y, cap] with cdf(n) ≥ alpha_high (cdf falls with n).
    lo, hi = y.copy(), cap.copy()
    while (open_ := np.flatnonzero(lo < hi)).size:
        mid = (lo[open_] + hi[open_] + 1) // 2
        ok = _binom_cdf(y[open_], mid, p) >= alpha_high[open_]
        lo[open_] = np.where(ok, mid, lo[open_])
        hi[open_] = np.where(ok, hi[open_], mid - 1)
    upper = np.where(alpha_high > 0, lo, cap)
    return lower, np.maximum(upper, lower)


def guaranteed_interval(y: np.ndarray, group_size: int, level: float
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The interval of the module docstring for the requested count of each row
    of y: covers the true count with probability ≥ ``level`` for every data set."""
    y = np.rint(np.asarray(y, dtype=np.float64)).astype(np.int64)
    q, k = y.shape
    w = int(np.log2(k)) - 1
    alpha = 1 - level
    half = k // 2
    n_p, n_not = y[:, half:].sum(axis=1), y[:, :half].sum(axis=1)
    a_obs = y[:, -1]
    if w == 1:
        b_obs = y[:, 1]
        known = n_not == 0  # P holds every record: b = 0, the interval is f_s's
        share = np.where(known, alpha / 2, alpha / 3)
        a_lo, a_hi = trials_limits(a_obs, 1 / group_size, n_p, share, share)
        _, b_hi = trials_limits(b_obs, 1 / group_size, n_not, np.zeros(q),
                                np.where(known, 0.0, alpha / 3))
        b_hi = np.where(known, 0, b_hi)
        lower = np.maximum(0, -((-(a_lo - (group_size - 1) * b_hi)) // group_size))  # ceil
        upper = np.minimum.reduce([a_hi, (a_hi + b_hi) // group_size, n_p])
        return lower.astype(float), np.maximum(upper, lower).astype(float)
    share = alpha / (2 + w)
    a_lo, a_hi = trials_limits(a_obs, float(group_size) ** -w, n_p, np.full(q, share),
                               np.full(q, share))
    n = n_p + n_not
    f_hi = np.empty((q, w), dtype=np.int64)
    for j in range(w):
        published = y[:, _bit_of(j + 1, w)].sum(axis=1)
        _, trials_hi = trials_limits(published, 1 / group_size, group_size * n, np.zeros(q),
                                     np.full(q, share))
        f_hi[:, j] = np.minimum(trials_hi // group_size, n)
    lower = np.maximum(0, a_lo - (group_size - 1) * f_hi.sum(axis=1))
    upper = np.minimum.reduce([a_hi, n_p, f_hi.min(axis=1)])
    return lower.astype(float), np.maximum(upper, lower).astype(float)


def misfit(y: np.ndarray, implied: np.ndarray, group_size: int) -> np.ndarray:
    """max_k |y_k − ŷ_k| / sd(y_k), (Q,): how far the published counts the
    estimate implies (ŷ = Mᵀx̂) lie from the published ones, in the release's
    own standard deviations (at least 1 record)."""
    cov = state_covariance(np.asarray(y, dtype=np.float64), group_size)
    sd = np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 1.0))
    return np.max(np.abs(y - implied) / sd, axis=1)
