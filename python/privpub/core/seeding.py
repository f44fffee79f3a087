"""Seeding convention shared by every randomised call.

A call's ``seed`` is resolved once into a :class:`RandomSource`: a 32-byte
key and a flag saying whether it came from the user. The Rust core keys
ChaCha20 with it and splits work into fixed logical blocks, block ``b``
using stream ``b`` (``privpub._core.sampling.BLOCK`` items per block), so a seeded
result is identical for any thread count or chunking. The β-step, whose
cost is mostly random bits, keys ChaCha12 (``rand``'s ``StdRng`` core, still
a CSPRNG) per segment instead.

- ``seed=None`` (the default): the key comes from the operating system's
  CSPRNG (:func:`secrets.token_bytes`). Use this for real releases.
- ``seed=<int>``: the key is derived deterministically from the integer
  (numpy ``SeedSequence`` entropy mixing). For tests and reproductions only;
  published metadata records that the run was seeded.
- ``seed=<numpy.random.Generator>``: 32 bytes are drawn from it, advancing
  it, so successive calls with the same generator differ but a script is
  reproducible end to end.

Different uses inside one call (say an α-step and a β-step) take
independent sub-keys from :meth:`RandomSource.derive`.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

import numpy as np

import privpub._core as _core
from privpub.core.errors import ParameterError

#: Seed policies a release records: OS randomness, or a user seed.
OS_CSPRNG = "os-csprng"
SEEDED = "seeded (reproducible; not for real releases)"
SEED_POLICIES = (OS_CSPRNG, SEEDED)


@dataclass(frozen=True)
class RandomSource:
    """A 32-byte ChaCha20 key and whether it came from a user seed."""

    key: bytes
    seeded: bool

    def __post_init__(self) -> None:
        if len(self.key) != 32:
            raise ParameterError(f"a RandomSource key must be 32 bytes, got {len(self.key)}")

    def __repr__(self) -> str:  # never print key material
        return f"RandomSource(seeded={self.seeded})"

    def derive(self, label: str) -> RandomSource:
        """An independent sub-source for one named use (keyed BLAKE2b as a PRF)."""
        key = hashlib.blake2b(label.encode(), key=self.key, digest_size=32).digest()
        return RandomSource(key, self.seeded)

    def uniform(self, n: int, start: int = 0) -> np.ndarray:
        """Elements ``[start, start + n)`` of this source's uniform [0, 1) stream.

        The stream is seekable: ``uniform(n, start)`` equals
        ``uniform(start + n)[start:]`` without computing the prefix.
        """
        for label, v in (("n", n), ("start", start)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise ParameterError(f"{label} must be an int, got {v!r}")
        if n < 0 or start < 0:
            raise ParameterError(f"n and start must be non-negative, got n={n}, start={start}")
        if int(start) + int(n) > 2**64:
            # The stream has 2^64 elements (the core refuses too; this names n and start).
            raise ParameterError(f"start + n must be at most 2^64 (the stream's length), "
                                 f"got start={start}, n={n}")
        return _core.sampling.uniform(self.key, int(n), int(start))

    @property
    def policy(self) -> str:
        """What published metadata records about the randomness."""
        return SEEDED if self.seeded else OS_CSPRNG


SeedLike = int | np.random.Generator | RandomSource | None


def resolve_seed(seed: SeedLike) -> RandomSource:
    """Turn a user's ``seed`` argument into a :class:`RandomSource`."""
    if seed is None:
        return RandomSource(secrets.token_bytes(32), seeded=False)
    if isinstance(seed, RandomSource):
        return seed
    if isinstance(seed, np.random.Generator):
        return RandomSource(seed.bytes(32), seeded=True)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ParameterError(f"seed must be a non-negative integer, got {seed}")
        state = np.random.SeedSequence(int(seed)).generate_state(8, dtype=np.uint32)
        return RandomSource(state.tobytes(), seeded=True)
    raise ParameterError(
        "seed must be None, a non-negative int, a numpy.random.Generator or a "
        f"RandomSource, got {type(seed).__name__}"
    )
