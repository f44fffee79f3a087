//! Seekable, counter-based randomness shared by every randomised kernel.
//!
//! Convention (see docs/design.md, "Conventions"): a call receives a 32-byte key
//! (derived in Python from the user's seed, or drawn from the OS CSPRNG).
//! Work is cut into fixed logical blocks of `BLOCK` items; block `b` draws
//! from ChaCha20 keyed by the key with stream id `b`. Blocks are a property
//! of the data, not of the thread pool, so a result is the same for any
//! number of threads or any chunking of the calls.

use rand::RngCore;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::{ChaCha12Rng, ChaCha20Rng};
use rayon::prelude::*;

/// Items per logical block. Fixed: changing it changes every seeded result.
pub const BLOCK: usize = 1 << 16;

pub type Key = [u8; 32];

/// The generator for logical block `block`, positioned at its start.
pub fn block_rng(key: &Key, block: u64) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::from_seed(*key);
    rng.set_stream(block);
    rng
}

/// The generator of β-step segment `segment`: ChaCha with 12 rounds, the
/// core of `rand`'s `StdRng`. Still a CSPRNG (the best published attack
/// reaches 7 rounds), at 60% of ChaCha20's cost, which matters here because
/// the random bits are a quarter of the cost of each selected code.
pub fn segment_rng(key: &Key, segment: u64) -> ChaCha12Rng {
    let mut rng = ChaCha12Rng::from_seed(*key);
    rng.set_stream(segment);
    rng
}

/// A uniform double in [0, 1) with 53 random bits.
#[inline]
pub fn unit_f64(rng: &mut ChaCha20Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Elements `start .. start + out.len()` of the uniform stream of `key`:
/// element `i` is the `(i mod BLOCK)`-th double of block `i / BLOCK`.
/// Any window of the stream can be produced without the elements before it.
/// Callers keep `start + out.len() ≤ 2^64` (the binding checks it).
pub fn fill_uniform(key: &Key, start: u64, out: &mut [f64]) {
    let block = BLOCK as u64;
    // Split the output at block boundaries so each piece seeks once.
    let first_len = ((block - start % block) as usize).min(out.len());
    let (head, tail) = out.split_at_mut(first_len);
    let mut pieces: Vec<(u64, &mut [f64])> = vec![(start, head)];
    // The stream has 2^64 elements; a window may end exactly at its end.
    let mut pos = start.wrapping_add(first_len as u64);
    for chunk in tail.chunks_mut(BLOCK) {
        let len = chunk.len() as u64;
        pieces.push((pos, chunk));
        pos = pos.wrapping_add(len);
    }
    pieces.into_par_iter().for_each(|(first, piece)| {
        let mut rng = block_rng(key, first / block);
        // Two 32-bit words per double.
        rng.set_word_pos(2 * u128::from(first % block));
        for x in piece.iter_mut() {
            *x = unit_f64(&mut rng);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(key: &Key, start: u64, n: usize) -> Vec<f64> {
        let mut out = vec![0.0; n];
        fill_uniform(key, start, &mut out);
        out
    }

    #[test]
    fn windows_agree_with_the_whole_stream() {
        let key = [7u8; 32];
        let n = 3 * BLOCK + 123;
        let whole = stream(&key, 0, n);
        for &(start, len) in &[
            (0, 10),
            (5, BLOCK),
            (BLOCK as u64 - 3, 7),
            (2 * BLOCK as u64 + 1, BLOCK + 100),
        ] {
            assert_eq!(
                stream(&key, start, len),
                whole[start as usize..start as usize + len]
            );
        }
    }

    #[test]
    fn thread_count_does_not_change_results() {
        let key = [42u8; 32];
        let n = 5 * BLOCK + 17;
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| stream(&key, 0, n))
        };
        assert_eq!(run(1), run(2));
        assert_eq!(run(1), run(7));
    }

    #[test]
    fn different_keys_give_different_streams() {
        assert_ne!(stream(&[1u8; 32], 0, 8), stream(&[2u8; 32], 0, 8));
    }

    #[test]
    fn uniform_mean_and_range() {
        let xs = stream(&[9u8; 32], 0, 1 << 20);
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        // Standard error of the mean is sqrt(1/12 / 2^20) ~ 2.8e-4; allow 6 SE.
        assert!((mean - 0.5).abs() < 6.0 * 2.82e-4, "mean {mean}");
    }
}
