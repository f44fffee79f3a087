"""The numpy tail sums the intervals used before tails.rs (privpub 07b9ca4's
``privpub.tables.confidence.sum_tails``), kept as the reference the Rust kernel
is tested equal to (tests/tables/test_rust_tails.py): the same windows and
special functions, the windows' pmfs, their convolution (directly when one is
short, by FFT otherwise) and the last summand's tail over them as ragged numpy
arrays over all problems at once."""

from __future__ import annotations

import numpy as np

# The window and the special functions are the package's (tested against
# exact sums on their own); the rounding raise is this reference's own, so a
# change to the package's shows.
from privpub.tables.confidence import _window, binom_ge, binom_le, log_binom_pmf

_ROUNDING = 1e-11

#: Segments this short are convolved directly, longer ones by FFT.
_DIRECT_CONVOLUTION = 16


def _ragged_arange(lengths: np.ndarray) -> np.ndarray:
    """0..len−1 for each length, concatenated."""
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)


def _ragged_cumsum(values: np.ndarray, length: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at each problem's first element."""
    running = np.cumsum(values)
    start = np.cumsum(length) - length
    base = running[start] - values[start]
    return running - base[owner]


def _ragged_convolve(pmf1: np.ndarray, len1: np.ndarray, pmf2: np.ndarray, len2: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Each problem's two pmf segments convolved (lengths len1 + len2 − 1):
    directly when one is short, by FFT (problems grouped by padded length)
    when both are long."""
    length = len1 + len2 - 1
    out = np.zeros(int(length.sum()))
    start, start1, start2 = (np.cumsum(x) - x for x in (length, len1, len2))
    direct = np.minimum(len1, len2) <= _DIRECT_CONVOLUTION
    # Direct: every (value of segment 1, value of segment 2) pair of a problem.
    idx = np.flatnonzero(direct)
    if len(idx):
        short = len1[idx] <= len2[idx]
        reps = np.where(short, len2[idx], len1[idx])
        steps = np.where(short, len1[idx], len2[idx])
        which = np.repeat(np.arange(len(idx)), steps)  # the problem of each short value
        s_local = _ragged_arange(steps)
        s_pmf = np.where(short[which], pmf1[start1[idx][which] + s_local],
                         pmf2[start2[idx][which] + s_local])
        pair = np.repeat(np.arange(len(which)), reps[which])  # the short value of each pair
        l_local = _ragged_arange(reps[which])
        owner = which[pair]
        l_start = np.where(short, start2[idx], start1[idx])[owner]
        l_pmf = np.where(short[owner], pmf2[np.minimum(l_start + l_local, len(pmf2) - 1)],
                         pmf1[np.minimum(l_start + l_local, len(pmf1) - 1)])
        target = start[idx][owner] + s_local[pair] + l_local
        out += np.bincount(target, weights=s_pmf[pair] * l_pmf, minlength=len(out))
    # FFT: problems whose padded size is the same power of two together.
    idx = np.flatnonzero(~direct)
    size = 1 << np.ceil(np.log2(np.maximum(length[idx], 1))).astype(np.int64)
    for n_fft in np.unique(size):
        group = idx[size == n_fft]
        a, b = np.zeros((len(group), n_fft)), np.zeros((len(group), n_fft))
        for dest, src, starts, lens in ((a, pmf1, start1, len1), (b, pmf2, start2, len2)):
            rows = np.repeat(np.arange(len(group)), lens[group])
            local = _ragged_arange(lens[group])
            dest[rows, local] = src[starts[group][rows] + local]
        conv = np.fft.irfft(np.fft.rfft(a, axis=1) * np.fft.rfft(b, axis=1), n=int(n_fft), axis=1)
        rows = np.repeat(np.arange(len(group)), length[group])
        local = _ragged_arange(length[group])
        out[start[group][rows] + local] = np.maximum(conv[rows, local], 0.0)
    return out, length


def _window_pmf(first: np.ndarray, length: np.ndarray, owner: np.ndarray, n: np.ndarray,
                p: np.ndarray) -> np.ndarray:
    """P(Bin(n, p) = j) for j = first, …, first + length − 1 of each problem
    (a window within [0, n]; length 1 when p is 0 or 1): the first by betaln,
    the others by the ratio P(j)/P(j − 1) = (n − j + 1)/j · p/(1 − p)."""
    local = _ragged_arange(length)
    j = first[owner] + local
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.log(p) - np.log1p(-p)
        step = np.log((n[owner] - j + 1) / j) + odds[owner]
    step = np.where(local > 0, step, 0.0)
    return np.exp(log_binom_pmf(first, n, p)[owner] + _ragged_cumsum(step, length, owner))


def _tail_pmf(top: np.ndarray, length: np.ndarray, owner: np.ndarray, n: np.ndarray,
              p: np.ndarray) -> np.ndarray:
    """P(B = x) for x = top, top − 1, …, top − length + 1 of each problem
    (B ~ Bin(n, p); 0 outside [0, n]): anchored at the largest x within [0, n]
    by betaln, the others by P(x)/P(x + 1) = (x + 1)/(n − x) · (1 − p)/p."""
    local = _ragged_arange(length)
    x = top[owner] - local
    anchor = np.clip(top, 0, n)
    point = (p <= 0) | (p >= 1)
    inside = (x >= 0) & (x <= n[owner])
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = np.where(point, 0.0, np.log1p(-p) - np.log(p))
        step = np.log((x + 1) / (n[owner] - x)) + odds[owner]
    step = np.where(inside & (x < anchor[owner]) & ~point[owner], step, 0.0)
    log_anchor = np.where(point, 0.0, log_binom_pmf(anchor, n, p))
    pmf = np.exp(log_anchor[owner] + _ragged_cumsum(step, length, owner))
    pmf = np.where(point[owner], (x == (n * p)[owner]).astype(float), pmf)
    return np.where(inside, pmf, 0.0)


def _raised(tail: np.ndarray) -> np.ndarray:
    """A computed tail raised over its rounding error, within [0, 1]."""
    return np.clip(tail * (1 + _ROUNDING), 0.0, 1.0)


def sum_tails(k: np.ndarray, trials: np.ndarray, probs: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """``privpub.tables.confidence.sum_tails`` as numpy computed it (upper
    bounds on P(N ≥ k) and P(N ≤ k) for N = Σ_i Bin(trials[i], probs[i]))."""
    k = np.asarray(k, float)
    trials, probs = np.asarray(trials, float), np.asarray(probs, float)
    n_problems = k.shape[0]
    if trials.shape[0] == 1:
        return _raised(binom_ge(k, trials[0], probs[0])), _raised(binom_le(k, trials[0], probs[0]))
    variance = trials * probs * (1 - probs)
    order = np.argsort(variance, axis=0, kind="stable")
    trials = np.take_along_axis(trials, order, axis=0)
    probs = np.take_along_axis(probs, order, axis=0)
    problems = np.arange(n_problems)
    # The pmf of the windowed summands' sum, problem after problem (ragged).
    first, last, left_out = _window(trials[0], probs[0])
    length = (last - first + 1).astype(np.int64)
    owner = np.repeat(problems, length)
    pmf = _window_pmf(first, length, owner, trials[0], probs[0])
    for i in range(1, trials.shape[0] - 1):
        f2, l2, out2 = _window(trials[i], probs[i])
        len2 = (l2 - f2 + 1).astype(np.int64)
        pmf2 = _window_pmf(f2, len2, np.repeat(problems, len2), trials[i], probs[i])
        pmf, new_length = _ragged_convolve(pmf, length, pmf2, len2)
        first, length, left_out = first + f2, new_length, left_out + out2
        owner = np.repeat(problems, length)
    # The last summand, B, by its tail: S(x) = P(B ≥ x) at x = k − j for the
    # window's values j, from S at the largest x (one special-function call
    # per problem) plus B's pmf: S(k − j) = S(k − first) + Σ_{j' = first+1..j}
    # P(B = k − j').
    n_b, p_b = trials[-1], probs[-1]
    pmf_b = _tail_pmf(k - first, length, owner, n_b, p_b)
    start = np.cumsum(length) - length
    s_at = binom_ge(k - first, n_b, p_b)[owner] + _ragged_cumsum(pmf_b, length, owner) \
        - pmf_b[start][owner]
    s_at = np.clip(s_at, 0.0, 1.0)
    upper = np.bincount(owner, weights=pmf * s_at, minlength=n_problems)
    # P(N ≥ k + 1) ≥ Σ_j pmf(j)·S(k + 1 − j), S(k + 1 − j) = S(k − j) − P(B = k − j).
    above = np.bincount(owner, weights=pmf * np.clip(s_at - pmf_b, 0.0, 1.0),
                        minlength=n_problems)
    return _raised(upper + left_out), _raised(1.0 - above * (1 - _ROUNDING))
