//! FRAPP's per-record randomisation (the baseline of the αβ paper, Sec. 4.3).
//!
//! # Citations
//! * Agrawal, Haritsa. *A Framework for High-Accuracy Privacy-Preserving
//!   Mining*, ICDE 2005: the optimal matrix keeps a record with probability
//!   γ_frapp and otherwise replaces it by one of the other m − 1 tuples
//!   uniformly.
//! * Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.3 (the comparison).

use crate::error::KernelError;
use crate::rng::{block_rng, unit_f64, Key, BLOCK};
use rand::RngCore;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

/// A uniform integer in [0, bound) by masked rejection (no modulo bias).
fn below(rng: &mut ChaCha20Rng, bound: u128) -> u128 {
    let bits = 128 - (bound - 1).leading_zeros();
    let mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    loop {
        let x = if bits <= 64 {
            u128::from(rng.next_u64())
        } else {
            u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
        } & mask;
        if x < bound {
            return x;
        }
    }
}

/// One record's draws: kept with probability `keep`, else a uniform other
/// tuple. How many words it takes from `rng` does not depend on `code` (the
/// rejection loop tests the draw against m − 1 only), which is what lets a
/// slice of records starting inside a block replay the records before it
/// without knowing their codes.
#[inline]
fn perturb_one(rng: &mut ChaCha20Rng, code: u128, m: u128, keep: f64) -> u128 {
    if unit_f64(rng) >= keep {
        let other = below(rng, m - 1);
        if other >= code {
            other + 1
        } else {
            other
        }
    } else {
        code
    }
}

/// Perturb each record: keep it with probability `keep`, otherwise replace it
/// by a uniform tuple among the other m − 1. The records are positions
/// `start ..` of a longer list and record p draws from stream p / BLOCK, so
/// the result does not depend on the thread count, and a slice (a Dask
/// partition) draws what the whole list would: a slice starting inside a
/// block first replays the draws of that block's earlier records.
pub fn perturb(
    key: &Key,
    start: u64,
    codes: &[u128],
    m: u128,
    keep: f64,
) -> Result<Vec<u128>, KernelError> {
    if m < 2 || !(0.0..=1.0).contains(&keep) {
        return Err(KernelError::Parameter(format!(
            "FRAPP needs m ≥ 2 and a probability, got m = {m}, keep = {keep}"
        )));
    }
    if u128::from(start) + codes.len() as u128 > 1u128 << 64 {
        return Err(KernelError::Capacity(format!(
            "start {start} + {} records exceeds 2^64",
            codes.len()
        )));
    }
    if let Some(row) = codes.iter().position(|&c| c >= m) {
        return Err(KernelError::InvalidCode { row });
    }
    let block = BLOCK as u64;
    let mut out = codes.to_vec();
    // Cut at global block boundaries: (block, records of it to replay, slice).
    let head = (((block - start % block) % block) as usize).min(out.len());
    let (first, rest) = out.split_at_mut(head);
    let mut pieces: Vec<(u64, u64, &mut [u128])> = Vec::new();
    if !first.is_empty() {
        pieces.push((start / block, start % block, first));
    }
    let after = (start + head as u64) / block;
    pieces.extend(
        rest.chunks_mut(BLOCK)
            .enumerate()
            .map(|(k, chunk)| (after + k as u64, 0, chunk)),
    );
    pieces.into_par_iter().for_each(|(b, skip, chunk)| {
        let mut rng = block_rng(key, b);
        for _ in 0..skip {
            perturb_one(&mut rng, 0, m, keep);
        }
        for code in chunk.iter_mut() {
            *code = perturb_one(&mut rng, *code, m, keep);
        }
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_probabilities_match_the_frapp_matrix() {
        // m = 5, every record is tuple 2; keep = 0.6: output 2 w.p. 0.6, others 0.1 each.
        let codes = vec![2u128; 200_000];
        let out = perturb(&[4; 32], 0, &codes, 5, 0.6).unwrap();
        let mut hist = [0f64; 5];
        for &c in &out {
            hist[c as usize] += 1.0 / 200_000.0;
        }
        for (t, &f) in hist.iter().enumerate() {
            let p = if t == 2 { 0.6 } else { 0.1 };
            let se = (p * (1.0 - p) / 200_000f64).sqrt();
            assert!((f - p).abs() < 5.0 * se, "tuple {t}: {f}");
        }
    }

    #[test]
    fn wide_domains_and_thread_counts() {
        let m = 1u128 << 100;
        let codes: Vec<u128> = (0..3 * BLOCK as u128).map(|i| i * 12345).collect();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| perturb(&[1; 32], 0, &codes, m, 0.5).unwrap())
        };
        let out = run(1);
        assert_eq!(out, run(2));
        assert!(out.iter().all(|&c| c < m));
        let kept =
            out.iter().zip(&codes).filter(|(a, b)| a == b).count() as f64 / codes.len() as f64;
        assert!((kept - 0.5).abs() < 5.0 * (0.25 / codes.len() as f64).sqrt());
    }

    #[test]
    fn rejects_codes_outside_the_domain() {
        assert_eq!(
            perturb(&[0; 32], 0, &[1, 7], 5, 0.5).unwrap_err(),
            KernelError::InvalidCode { row: 1 }
        );
    }

    #[test]
    fn slices_from_any_start_draw_what_the_whole_list_draws() {
        let m = 1000u128;
        let codes: Vec<u128> = (0..2 * BLOCK as u128 + 77).map(|i| i % m).collect();
        let whole = perturb(&[9; 32], 0, &codes, m, 0.3).unwrap();
        for &(a, b) in &[
            (0, 5),
            (3, BLOCK + 10),
            (BLOCK - 1, BLOCK + 1),
            (BLOCK, 2 * BLOCK + 77),
        ] {
            let part = perturb(&[9; 32], a as u64, &codes[a..b], m, 0.3).unwrap();
            assert_eq!(part, whole[a..b], "slice {a}..{b}");
        }
        assert!(perturb(&[9; 32], u64::MAX, &codes[..2], m, 0.3).is_err());
    }
}
