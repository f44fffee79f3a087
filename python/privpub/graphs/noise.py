"""Exact samplers for the graph mechanisms: uniform big integers, Bernoulli
with rational and exp(−rational) probabilities, and the discrete Laplace.

Floating-point Laplace noise leaks through its rendering (Mironov 2012), so
the mechanisms add *discrete* Laplace noise to integer counts: Pr[Z = z] ∝
exp(−|z|/b). It is sampled exactly with rational arithmetic by Canonne,
Kamath & Steinke's Algorithm 2 ("The Discrete Gaussian for Differential
Privacy", NeurIPS 2020), from exact random bits. For an integer query with
sensitivity Δ, discrete Laplace noise of scale Δ/ε is ε-indistinguishable,
as the continuous one is: the ratio of the two probabilities of any output
is at most exp(|q(I) − q(I')|/b).

The bits come from the seekable ChaCha20 stream of a
:class:`~privpub.core.seeding.RandomSource`: each stream double is
``k / 2^53`` for 53 uniform bits ``k``, which are recovered exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

from privpub.core.seeding import RandomSource

_CHUNK = 256


class Bits:
    """Uniform random bits, integers and exact Bernoulli draws from a RandomSource."""

    def __init__(self, source: RandomSource):
        self.source, self.position = source, 0
        self._pool, self._pool_bits = 0, 0

    def randbits(self, k: int) -> int:
        """k uniform bits as an int in [0, 2^k)."""
        while self._pool_bits < k:
            doubles = self.source.uniform(_CHUNK, self.position)
            self.position += _CHUNK
            for u in doubles.tolist():
                self._pool = (self._pool << 53) | int(u * 2.0**53)
                self._pool_bits += 53
        self._pool_bits -= k
        out = self._pool >> self._pool_bits
        self._pool &= (1 << self._pool_bits) - 1
        return out

    def randbelow(self, n: int) -> int:
        """Uniform in [0, n) by rejection (exact for any n ≥ 1)."""
        if n < 1:
            raise ValueError(f"randbelow needs n ≥ 1, got {n}")
        k = (n - 1).bit_length()
        while True:
            x = self.randbits(k)
            if x < n:
                return x

    def bernoulli(self, p: Fraction) -> bool:
        """True with probability p (a rational in [0, 1])."""
        return self.randbelow(p.denominator) < p.numerator

    def bernoulli_exp(self, exponent: Fraction) -> bool:
        """True with probability exp(−exponent), a rational exponent ≥ 0 (CKS Alg. 1's γ)."""
        while exponent > 1:
            if not self.bernoulli_exp(Fraction(1)):
                return False
            exponent -= 1
        k = 1
        while self.bernoulli(exponent / k):
            k += 1
        return k % 2 == 1

    def geometric(self, scale: Fraction) -> int:
        """Y ≥ 0 with Pr[Y = y] ∝ exp(−y/scale) (the magnitude step of CKS Alg. 2,
        scale = t/s): ⌊X/s⌋ for X = u + t·v, u accepted with probability e^{−u/t}."""
        t, s = scale.numerator, scale.denominator
        while True:
            u = self.randbelow(t)
            if self.bernoulli_exp(Fraction(u, t)):
                break
        v = 0
        while self.bernoulli_exp(Fraction(1)):
            v += 1
        return (u + t * v) // s

    def discrete_laplace(self, scale: Fraction) -> int:
        """Z with Pr[Z = z] ∝ exp(−|z|/scale) (CKS Alg. 2)."""
        while True:
            y = self.geometric(scale)
            negative = self.randbits(1) == 1
            if negative and y == 0:
                continue
            return -y if negative else y

    def rounded_laplace(self, scale: Fraction) -> int:
        """round(scale·L) for L ~ Laplace(1) (density e^{−|x|}/2), exactly.

        |scale·L| is exponential with mean ``scale``: it is below 1/2 (rounds
        to 0) with probability 1 − e^{−1/(2·scale)}; past 1/2 it is, by
        memorylessness, 1/2 plus a fresh exponential, so it rounds to
        1 + ⌊Exp(mean scale)⌋ = 1 + :meth:`geometric`. The sign is a fair bit.
        Pr[|Z| ≥ k] = e^{−(k − 1/2)/scale} for k ≥ 1.
        """
        if not self.bernoulli_exp(1 / (2 * scale)):
            return 0
        y = 1 + self.geometric(scale)
        return -y if self.randbits(1) == 1 else y


def scale_up(value: float) -> Fraction:
    """The next double above a positive float, as an exact fraction: noise at
    least as wide as the formula asks, whatever the rounding of the float."""
    return Fraction(math.nextafter(value, math.inf))


def laplace_tail(scale: float, s: int) -> float:
    """Pr[|Z| ≥ s] for the discrete Laplace of this scale and an integer s ≥ 1:
    2 e^{−s/b} / (1 + e^{−1/b})."""
    return 2 * math.exp(-s / scale) / (1 + math.exp(-1 / scale))


def laplace_bound(scale: float, probability: float) -> int:
    """The least integer Σ ≥ 1 with Pr[|Z| ≥ Σ] ≤ probability."""
    s = max(1, math.ceil(scale * math.log(2 / (probability * (1 + math.exp(-1 / scale))))))
    while s > 1 and laplace_tail(scale, s - 1) <= probability:
        s -= 1
    while laplace_tail(scale, s) > probability:
        s += 1
    return s


def rounded_laplace_tail(scale: float, k: int) -> float:
    """Pr[|Z| ≥ k] for Z = round(scale·L), L ~ Laplace(1), and an integer k ≥ 1:
    e^{−(k − 1/2)/b} (:meth:`Bits.rounded_laplace`)."""
    return math.exp(-(k - 0.5) / scale)


def rounded_laplace_bound(scale: float, probability: float) -> int:
    """The least integer Σ ≥ 1 with Pr[|round(bL)| ≥ Σ] ≤ probability."""
    s = max(1, math.ceil(scale * math.log(1 / probability) + 0.5))
    while s > 1 and rounded_laplace_tail(scale, s - 1) <= probability:
        s -= 1
    while rounded_laplace_tail(scale, s) > probability:
        s += 1
    return s
