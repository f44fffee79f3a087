//! SPLU-Gen's decoy groups and per-record randomisation.
//!
//! # Citations
//! * Wong, Fu, Wang, Yu, Pei, *Small Sum Privacy and Large Sum Utility in
//!   Data Publishing*, Sec. 3 (SPLU-Gen, Steps 2–3) and Sec. 6 (the
//!   partition is Anatomy's group creation, made deterministic).
//! * Xiao, Tao, *Anatomy*, VLDB 2006 (group creation: repeatedly one tuple
//!   from each of the γ largest remaining buckets).

use crate::error::KernelError;
use crate::rng::{block_rng, Key, BLOCK};
use rand::RngCore;
use rayon::prelude::*;

/// The deterministic decoy-group partition of records by sensitive value.
///
/// `values[i]` is record i's sensitive value (an index below `n_values`).
/// Each round takes one record from each of the γ buckets with the most
/// records left — ties to the smaller value index — and from each bucket its
/// smallest record id. Rounds stop when fewer than γ buckets are non-empty.
///
/// Returns `(members, residue)`: `members` holds the groups one after the
/// other (γ record ids each, in bucket-rank order); `residue` the record ids
/// left over, ascending. The buckets are kept sorted by (count desc, value
/// asc); after a round the γ decremented ones are still sorted among
/// themselves and are merged back with the rest in O(V), so the whole
/// partition costs O(N + V + (N/γ)·V) = O(N(1 + V/γ)).
pub fn decoy_groups(
    values: &[u32],
    n_values: usize,
    gamma: usize,
) -> Result<(Vec<u32>, Vec<u32>), KernelError> {
    if gamma < 2 {
        return Err(KernelError::Parameter(format!(
            "gamma must be at least 2, got {gamma}"
        )));
    }
    if values.len() > u32::MAX as usize {
        return Err(KernelError::Capacity(format!(
            "{} records; record ids must fit in 32 bits",
            values.len()
        )));
    }
    if let Some(row) = values.iter().position(|&v| v as usize >= n_values) {
        return Err(KernelError::OutOfDomain { attribute: 0, row });
    }
    // Counting sort: bucket v's record ids, ascending, at start[v]..start[v+1].
    let mut start = vec![0usize; n_values + 1];
    for &v in values {
        start[v as usize + 1] += 1;
    }
    for v in 0..n_values {
        start[v + 1] += start[v];
    }
    let mut ids = vec![0u32; values.len()];
    let mut fill = start.clone();
    for (i, &v) in values.iter().enumerate() {
        ids[fill[v as usize]] = i as u32;
        fill[v as usize] += 1;
    }
    let mut next = start.clone(); // next unused position of each bucket
    let left = |v: usize, next: &[usize]| start[v + 1] - next[v];
    // Non-empty buckets, sorted by (records left desc, value asc).
    let mut order: Vec<usize> = (0..n_values).filter(|&v| start[v + 1] > start[v]).collect();
    order.sort_by_key(|&v| (std::cmp::Reverse(left(v, &next)), v));
    let mut members = Vec::with_capacity(values.len() - values.len() % gamma);
    let mut merged = Vec::with_capacity(order.len());
    while order.len() >= gamma {
        for &v in &order[..gamma] {
            members.push(ids[next[v]]);
            next[v] += 1;
        }
        // Merge the decremented head with the untouched tail (both sorted).
        merged.clear();
        let (head, tail) = order.split_at(gamma);
        let (mut a, mut b) = (0, 0);
        while a < head.len() || b < tail.len() {
            let take_head = b == tail.len()
                || (a < head.len()
                    && (std::cmp::Reverse(left(head[a], &next)), head[a])
                        < (std::cmp::Reverse(left(tail[b], &next)), tail[b]));
            let v = if take_head {
                a += 1;
                head[a - 1]
            } else {
                b += 1;
                tail[b - 1]
            };
            if left(v, &next) > 0 {
                merged.push(v);
            }
        }
        std::mem::swap(&mut order, &mut merged);
    }
    let mut residue: Vec<u32> = order
        .iter()
        .flat_map(|&v| ids[next[v]..start[v + 1]].iter().copied())
        .collect();
    residue.sort_unstable();
    Ok((members, residue))
}

/// SPLU-Gen Step 3 with p = q = 1/γ: each group member publishes the
/// sensitive value of a uniformly chosen member of its group (itself
/// included). `members` is `decoy_groups`' output; the result is the
/// published value per position of `members`. Position j draws from stream
/// j / BLOCK, so the result does not depend on the thread count.
pub fn decoy_draw(
    key: &Key,
    members: &[u32],
    values: &[u32],
    gamma: usize,
) -> Result<Vec<u32>, KernelError> {
    if gamma < 2 || members.len() % gamma != 0 {
        return Err(KernelError::Shape(format!(
            "{} group members is not a multiple of gamma = {gamma} (≥ 2)",
            members.len()
        )));
    }
    if let Some(row) = members.iter().position(|&i| i as usize >= values.len()) {
        return Err(KernelError::InvalidCode { row });
    }
    let g = gamma as u64;
    // Rejection bound: the largest multiple of γ below 2^64, so draws are uniform.
    let zone = u64::MAX - (u64::MAX % g + 1) % g;
    let mut out = vec![0u32; members.len()];
    out.par_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(b, chunk)| {
            let mut rng = block_rng(key, b as u64);
            let first = b * BLOCK;
            for (k, slot) in chunk.iter_mut().enumerate() {
                let j = first + k;
                let group = j - j % gamma;
                let pick = loop {
                    let x = rng.next_u64();
                    if x <= zone {
                        break (x % g) as usize;
                    }
                };
                *slot = values[members[group + pick] as usize];
            }
        });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule spelled out directly: sort every round (O(V log V) per round).
    fn reference(values: &[u32], n_values: usize, gamma: usize) -> (Vec<u32>, Vec<u32>) {
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); n_values];
        for (i, &v) in values.iter().enumerate() {
            buckets[v as usize].push(i as u32);
        }
        let mut members = Vec::new();
        loop {
            let mut live: Vec<usize> = (0..n_values).filter(|&v| !buckets[v].is_empty()).collect();
            if live.len() < gamma {
                break;
            }
            live.sort_by_key(|&v| (std::cmp::Reverse(buckets[v].len()), v));
            for &v in &live[..gamma] {
                members.push(buckets[v].remove(0));
            }
        }
        let mut residue: Vec<u32> = buckets.concat();
        residue.sort_unstable();
        (members, residue)
    }

    #[test]
    fn partition_matches_the_reference_rule() {
        let mut state = 12345u64;
        for trial in 0..300 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n_values = 2 + (state >> 33) as usize % 9;
            let gamma = 2 + trial % 4;
            let n = (state >> 40) as usize % 80;
            let values: Vec<u32> = (0..n)
                .map(|i| {
                    let h = (i as u64 + 1).wrapping_mul(state | 1) >> 35;
                    (h % n_values as u64) as u32
                })
                .collect();
            assert_eq!(
                decoy_groups(&values, n_values, gamma).unwrap(),
                reference(&values, n_values, gamma),
                "trial {trial}"
            );
        }
    }

    #[test]
    fn groups_hold_distinct_values_and_residue_is_n_mod_gamma_when_eligible() {
        // Frequencies 4, 3, 3, 2 (N = 12) with γ = 3: eligible (4 ≤ 12/3).
        let values = [0, 1, 0, 2, 3, 0, 1, 2, 0, 1, 3, 2];
        let (members, residue) = decoy_groups(&values, 4, 3).unwrap();
        assert!(residue.is_empty());
        for g in members.chunks(3) {
            let mut vs: Vec<u32> = g.iter().map(|&i| values[i as usize]).collect();
            vs.sort_unstable();
            vs.dedup();
            assert_eq!(vs.len(), 3);
        }
        let (_, residue) = decoy_groups(&values[..11], 4, 3).unwrap();
        assert_eq!(residue.len(), 11 % 3);
    }

    #[test]
    fn draws_are_uniform_over_the_group_and_thread_independent() {
        let gamma = 5;
        let n = gamma * (2 * BLOCK / gamma + 7); // blocks end mid-group (BLOCK % 5 ≠ 0)
        let values: Vec<u32> = (0..n as u32).map(|i| i % gamma as u32).collect();
        let members: Vec<u32> = (0..n as u32).collect();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| decoy_draw(&[3; 32], &members, &values, gamma).unwrap())
        };
        let out = run(1);
        assert_eq!(out, run(2));
        let mut hist = [0f64; 5];
        for &v in &out {
            hist[v as usize] += 1.0;
        }
        let p = 1.0 / gamma as f64;
        let se = (n as f64 * p * (1.0 - p)).sqrt();
        for h in hist {
            assert!((h - n as f64 * p).abs() < 5.0 * se, "{hist:?}");
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(decoy_groups(&[0, 1], 2, 1).is_err());
        assert_eq!(
            decoy_groups(&[0, 5], 2, 2).unwrap_err(),
            KernelError::OutOfDomain {
                attribute: 0,
                row: 1
            }
        );
        assert!(decoy_draw(&[0; 32], &[0, 1, 2], &[0, 1, 2], 2).is_err());
        assert!(decoy_draw(&[0; 32], &[0, 9], &[0, 1], 2).is_err());
    }
}
