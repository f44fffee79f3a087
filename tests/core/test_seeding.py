"""Seeding convention and the seekable ChaCha20 uniform stream (privpub.core.seeding)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from scipy import stats

from privpub import ParameterError, PrivpubError, RandomSource, _core, resolve_seed

BLOCK = _core.sampling.BLOCK


# ---------------------------------------------------------------------------------------------
# An independent ChaCha20 (OpenSSL via `cryptography`)
# ---------------------------------------------------------------------------------------------
#
# rand_chacha's ChaCha20Rng: 20 rounds, state words 12-13 a 64-bit block counter and words
# 14-15 a 64-bit stream id, both little-endian; next_u64 takes the next two 32-bit keystream
# words, low word first, i.e. the next 8 keystream bytes read little-endian. cryptography's
# ChaCha20(key, nonce) takes the 16 bytes of words 12-15 as `nonce`, so the matching layout is
# counter (8 bytes LE) || stream id (8 bytes LE). (OpenSSL documents it as a 4-byte counter and
# a 12-byte nonce; for counters below 2^32 that is byte-for-byte the same thing when the
# stream id sits in the last 8 bytes, and our counters are below BLOCK / 8 = 8192.)


def nonce_ctr8_stream8(counter: int, stream: int) -> bytes:
    return struct.pack("<QQ", counter, stream)


def nonce_ctr4_stream_in_words_13_14(counter: int, stream: int) -> bytes:
    return struct.pack("<IQI", counter, stream, 0)


def nonce_stream8_ctr8(counter: int, stream: int) -> bytes:
    return struct.pack("<QQ", stream, counter)


def chacha_u64(key: bytes, stream: int, first: int, n: int, layout=nonce_ctr8_stream8):
    """u64 words [first, first + n) of ChaCha20 stream `stream` (64-byte blocks, 8 words each)."""
    counter, skip = divmod(first, 8)
    enc = Cipher(algorithms.ChaCha20(key, layout(counter, stream)), mode=None).encryptor()
    raw = enc.update(b"\0" * (8 * (skip + n)))
    return np.frombuffer(raw, dtype="<u8")[skip:]


def reference_uniform(key: bytes, start: int, n: int, layout=nonce_ctr8_stream8) -> np.ndarray:
    """Element i is the (i mod BLOCK)-th u64 of stream i // BLOCK, as (u >> 11) * 2^-53."""
    out = []
    i, end = start, start + n
    while i < end:
        block, offset = divmod(i, BLOCK)
        take = min(BLOCK - offset, end - i)
        out.append(chacha_u64(key, block, offset, take, layout))
        i += take
    words = np.concatenate(out) if out else np.zeros(0, dtype=np.uint64)
    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


def test_stream_is_rand_chacha_chacha20_with_64_bit_counter_and_stream_id():
    src = resolve_seed(20240501)
    n = 3 * BLOCK + 1000
    np.testing.assert_array_equal(src.uniform(n), reference_uniform(src.key, 0, n))
    # Windows that start mid-block (so the counter is nonzero) in high streams.
    for start, length in [(5 * BLOCK + 8 * 1234 + 3, 77), (7 * BLOCK - 5, 20), (123_456_789, 9)]:
        np.testing.assert_array_equal(src.uniform(length, start),
                                      reference_uniform(src.key, start, length))
    # The very end of the stream: element 2^64 - 1 lives in stream 2^48 - 1.
    np.testing.assert_array_equal(src.uniform(3, 2**64 - 3),
                                  reference_uniform(src.key, 2**64 - 3, 3))
    # A derived key is just another key.
    sub = src.derive("beta-step")
    np.testing.assert_array_equal(sub.uniform(100, BLOCK), reference_uniform(sub.key, BLOCK, 100))


def test_reference_check_has_power_against_other_nonce_layouts():
    """In stream 0 every layout agrees (all-zero words); from stream 1 on only one matches."""
    src = resolve_seed(7)
    assert np.array_equal(src.uniform(16), reference_uniform(src.key, 0, 16,
                                                             nonce_stream8_ctr8))
    got = src.uniform(16, BLOCK)
    assert np.array_equal(got, reference_uniform(src.key, BLOCK, 16, nonce_ctr8_stream8))
    for wrong in (nonce_ctr4_stream_in_words_13_14, nonce_stream8_ctr8):
        assert not np.array_equal(got, reference_uniform(src.key, BLOCK, 16, wrong))
    # And against a different key.
    assert not np.array_equal(got, reference_uniform(resolve_seed(8).key, BLOCK, 16))


def test_values_are_53_bit_dyadic_in_unit_interval():
    x = resolve_seed(3).uniform(100_000)
    assert x.dtype == np.float64 and x.shape == (100_000,)
    assert np.all((x >= 0.0) & (x < 1.0))
    scaled = x * 2.0**53
    np.testing.assert_array_equal(scaled, np.floor(scaled))


@pytest.mark.slow
def test_ks_uniform_with_power():
    """KS test at alpha = 1e-6 on 10^6 draws; the same test rejects x**1.01."""
    alpha = 1e-6
    x = resolve_seed(12345).uniform(10**6)
    assert stats.kstest(x, "uniform").pvalue > alpha
    # Power: max |t^(1/1.01) - t| ~ 3.7e-3 exceeds the 1e-6 critical value ~ 2.7e-3.
    assert stats.kstest(x**1.01, "uniform").pvalue < alpha


# ---------------------------------------------------------------------------------------------
# seekability and independence
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("start", "n"), [
    (0, 0), (0, 10), (5, BLOCK), (BLOCK - 3, 7), (BLOCK, BLOCK), (BLOCK - 1, 1),
    (2 * BLOCK + 1, BLOCK + 80), (17, 3 * BLOCK + 83 - 17), (3 * BLOCK + 82, 1),
])
def test_windows_equal_the_prefix_computation(start, n):
    src = resolve_seed(99)
    whole = src.uniform(3 * BLOCK + 83)
    assert start + n <= len(whole)
    np.testing.assert_array_equal(src.uniform(n, start), whole[start:start + n])
    np.testing.assert_array_equal(src.uniform(start + n)[start:], src.uniform(n, start))


def test_chunked_reads_concatenate_to_the_whole():
    src = resolve_seed(5)
    whole = src.uniform(2 * BLOCK + 500)
    cuts = [0, 1, 1000, BLOCK - 1, BLOCK + 7, 2 * BLOCK, 2 * BLOCK + 500]
    parts = [src.uniform(b - a, a) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_derive_gives_independent_reproducible_streams():
    src = resolve_seed(1)
    a, b = src.derive("alpha"), src.derive("beta")
    assert a.key == src.derive("alpha").key
    assert len({src.key, a.key, b.key, resolve_seed(2).derive("alpha").key}) == 4
    assert a.seeded and b.seeded
    assert not resolve_seed(None).derive("alpha").seeded
    n = 200_000
    xa, xb, xs = a.uniform(n), b.uniform(n), src.uniform(n)
    # Independent uniforms: sample correlation ~ N(0, 1/n); allow 5 standard errors.
    for u, v in ((xa, xb), (xa, xs), (xb, xs)):
        assert abs(np.corrcoef(u, v)[0, 1]) < 5 / np.sqrt(n)
    # Power of that check: a stream is perfectly correlated with itself shifted by 0 ...
    assert np.corrcoef(xa, a.uniform(n))[0, 1] == pytest.approx(1.0)
    # ... and each derived stream is itself uniform.
    assert stats.kstest(xa, "uniform").pvalue > 1e-6
    assert stats.kstest(xb, "uniform").pvalue > 1e-6


# ---------------------------------------------------------------------------------------------
# resolve_seed
# ---------------------------------------------------------------------------------------------


def test_int_seed_is_deterministic():
    a, b = resolve_seed(42), resolve_seed(42)
    assert a.key == b.key and len(a.key) == 32 and a.seeded
    np.testing.assert_array_equal(a.uniform(1000), b.uniform(1000))
    assert resolve_seed(np.int64(42)).key == a.key
    assert resolve_seed(2**100).key == resolve_seed(2**100).key
    assert "seeded" in a.policy


def test_different_ints_differ():
    keys = {resolve_seed(s).key for s in [0, 1, 2, 3, 42, 2**32, 2**64, 2**100]}
    assert len(keys) == 8
    assert not np.array_equal(resolve_seed(0).uniform(8), resolve_seed(1).uniform(8))


def test_generator_seed_advances_the_generator():
    g = np.random.default_rng(2024)
    first, second = resolve_seed(g), resolve_seed(g)
    assert first.seeded and second.seeded
    assert first.key != second.key
    h = np.random.default_rng(2024)
    assert resolve_seed(h).key == first.key and resolve_seed(h).key == second.key
    # The draw consumed exactly 32 bytes from the generator.
    k = np.random.default_rng(2024)
    assert resolve_seed(k).key == np.random.default_rng(2024).bytes(32)


def test_none_is_os_randomness_and_marked_unseeded():
    a, b = resolve_seed(None), resolve_seed(None)
    assert not a.seeded and not b.seeded
    assert a.key != b.key
    assert a.policy == "os-csprng"
    assert not np.array_equal(a.uniform(4), b.uniform(4))


def test_random_source_passes_through_and_hides_its_key():
    src = resolve_seed(5)
    assert resolve_seed(src) is src
    assert src.key.hex() not in repr(src) and "seeded=True" in repr(src)
    with pytest.raises(ParameterError) as ei:
        RandomSource(b"\0" * 31, seeded=True)
    assert "31" in str(ei.value)


@pytest.mark.parametrize(("seed", "needle"), [
    (-1, "-1"), (-(2**70), str(-(2**70))), (1.0, "float"), (1.5, "float"), ("1", "str"),
    (True, "bool"), (False, "bool"), (np.bool_(True), "bool"), ([1], "list"),
    (np.random.RandomState(0), "RandomState"),
])
def test_bad_seeds(seed, needle):
    with pytest.raises(ParameterError) as ei:
        resolve_seed(seed)
    assert isinstance(ei.value, PrivpubError)
    assert needle in str(ei.value)


@pytest.mark.parametrize(("n", "start", "needle"), [
    (-1, 0, "n=-1"), (1, -5, "start=-5"), (2.5, 0, "2.5"), (1, 1.0, "1.0"), (True, 0, "True"),
    (5, 2**64 - 2, "2^64"), (1, 2**64, "2^64"),
])
def test_bad_uniform_arguments(n, start, needle):
    with pytest.raises(ParameterError) as ei:
        resolve_seed(0).uniform(n, start)
    assert needle in str(ei.value)


def test_uniform_up_to_the_end_of_the_stream_does_not_wrap():
    src = resolve_seed(0)
    tail = src.uniform(2, 2**64 - 2)
    assert tail.shape == (2,)
    assert not np.array_equal(tail, src.uniform(2))
