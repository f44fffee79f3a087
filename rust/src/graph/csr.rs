//! A binary relation R(u, v) over nodes `[0, m)` as two sorted CSR
//! adjacencies: out-neighbours (v with R(u, v)) and in-neighbours.

use crate::error::KernelError;
use rayon::prelude::*;

/// Sorted out- and in-adjacency of a relation without repeated tuples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    pub m: usize,
    pub out_offsets: Vec<u64>,
    pub out_targets: Vec<u32>,
    pub in_offsets: Vec<u64>,
    pub in_sources: Vec<u32>,
}

/// What `build` returns besides the CSR: the number of input tuples that
/// repeated an earlier one (the relation keeps one copy; the caller decides
/// whether a repeat is an error).
#[derive(Debug)]
pub struct Built {
    pub csr: Csr,
    pub repeated: u64,
}

fn node(x: i64, m: usize, attribute: usize, row: usize) -> Result<u64, KernelError> {
    if x < 0 || x as u64 >= m as u64 {
        return Err(KernelError::OutOfDomain { attribute, row });
    }
    Ok(x as u64)
}

/// Offsets and the low 32 bits of sorted `(high << 32 | low)` keys.
fn compress(keys: &[u64], m: usize) -> (Vec<u64>, Vec<u32>) {
    let mut offsets = vec![0u64; m + 1];
    for &k in keys {
        offsets[(k >> 32) as usize + 1] += 1;
    }
    for i in 0..m {
        offsets[i + 1] += offsets[i];
    }
    let targets = keys.par_iter().map(|&k| k as u32).collect();
    (offsets, targets)
}

/// The relation of the tuples `(src[i], dst[i])`, plus `(dst[i], src[i])` when
/// `symmetric` (an undirected graph). Ids outside `[0, m)` are an
/// `OutOfDomain` error (attribute 0 for `src`, 1 for `dst`).
///
/// # Citations
/// * Rastogi et al., PODS 2009, Sec. 2.1: the database is one relation R over
///   a domain of m nodes.
pub fn build(src: &[i64], dst: &[i64], m: usize, symmetric: bool) -> Result<Built, KernelError> {
    if src.len() != dst.len() {
        return Err(KernelError::Shape(format!(
            "{} sources but {} targets",
            src.len(),
            dst.len()
        )));
    }
    if m > u32::MAX as usize {
        return Err(KernelError::Capacity(format!(
            "m = {m} nodes; node ids are 32-bit, so m must be below 2^32"
        )));
    }
    let mut keys: Vec<u64> = Vec::with_capacity(if symmetric { 2 } else { 1 } * src.len());
    for (row, (&u, &v)) in src.iter().zip(dst).enumerate() {
        let (u, v) = (node(u, m, 0, row)?, node(v, m, 1, row)?);
        keys.push(u << 32 | v);
        if symmetric && u != v {
            keys.push(v << 32 | u);
        }
    }
    keys.par_sort_unstable();
    let before = keys.len();
    keys.dedup();
    let repeated = (before - keys.len()) as u64;
    let (out_offsets, out_targets) = compress(&keys, m);
    let mut rev: Vec<u64> = keys.par_iter().map(|&k| k.rotate_left(32)).collect();
    rev.par_sort_unstable();
    let (in_offsets, in_sources) = compress(&rev, m);
    Ok(Built {
        csr: Csr {
            m,
            out_offsets,
            out_targets,
            in_offsets,
            in_sources,
        },
        repeated,
    })
}

impl Csr {
    /// A CSR from arrays made by `build` (e.g. handed back from Python),
    /// checked so that no later lookup can index out of bounds.
    pub fn from_parts(
        m: usize,
        out_offsets: Vec<u64>,
        out_targets: Vec<u32>,
        in_offsets: Vec<u64>,
        in_sources: Vec<u32>,
    ) -> Result<Csr, KernelError> {
        for (name, off, adj) in [
            ("out", &out_offsets, &out_targets),
            ("in", &in_offsets, &in_sources),
        ] {
            let ok = off.len() == m + 1
                && off[0] == 0
                && off.windows(2).all(|w| w[0] <= w[1])
                && off[m] == adj.len() as u64
                && adj.par_iter().all(|&x| (x as usize) < m)
                && (0..m).into_par_iter().all(|u| {
                    adj[off[u] as usize..off[u + 1] as usize]
                        .windows(2)
                        .all(|w| w[0] < w[1])
                });
            if !ok {
                return Err(KernelError::Shape(format!(
                    "the {name}-adjacency is not a sorted CSR over {m} nodes"
                )));
            }
        }
        if out_targets.len() != in_sources.len() {
            return Err(KernelError::Shape(
                "out- and in-adjacency hold different numbers of tuples".into(),
            ));
        }
        Ok(Csr {
            m,
            out_offsets,
            out_targets,
            in_offsets,
            in_sources,
        })
    }

    /// v with R(u, v), sorted.
    #[inline]
    pub fn out(&self, u: u32) -> &[u32] {
        let u = u as usize;
        &self.out_targets[self.out_offsets[u] as usize..self.out_offsets[u + 1] as usize]
    }

    /// u with R(u, v), sorted.
    #[inline]
    pub fn inn(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.in_sources[self.in_offsets[v] as usize..self.in_offsets[v + 1] as usize]
    }

    /// Whether R(u, v) holds.
    #[inline]
    pub fn has(&self, u: u32, v: u32) -> bool {
        self.out(u).binary_search(&v).is_ok()
    }

    /// Number of tuples of R.
    pub fn tuples(&self) -> usize {
        self.out_targets.len()
    }

    /// Whether R(u, v) ⇔ R(v, u) for every pair.
    pub fn is_symmetric(&self) -> bool {
        self.out_offsets == self.in_offsets && self.out_targets == self.in_sources
    }

    /// rank[u]: u's position in the (degree, id) order of the nodes, degree
    /// counting in- and out-tuples (on a symmetric relation, twice the
    /// out-degree: the same order). A counting sort on degrees, stable, so
    /// ties go by id.
    pub fn degree_rank(&self) -> Vec<u32> {
        let deg = |u: usize| {
            (self.out_offsets[u + 1] - self.out_offsets[u] + self.in_offsets[u + 1]
                - self.in_offsets[u]) as usize
        };
        let max_deg = (0..self.m).map(deg).max().unwrap_or(0);
        let mut start = vec![0u32; max_deg + 2];
        for u in 0..self.m {
            start[deg(u) + 1] += 1;
        }
        for d in 0..=max_deg {
            start[d + 1] += start[d];
        }
        let mut rank = vec![0u32; self.m];
        for (u, r) in rank.iter_mut().enumerate() {
            let slot = &mut start[deg(u)];
            *r = *slot;
            *slot += 1;
        }
        rank
    }

    /// The relation with every node u renamed `rank[u]` (a permutation of
    /// [0, m)), adjacency sorted again.
    pub fn relabelled(&self, rank: &[u32]) -> Result<Csr, KernelError> {
        let (src, dst): (Vec<i64>, Vec<i64>) = (0..self.m)
            .into_par_iter()
            .flat_map_iter(|u| {
                self.out(u as u32)
                    .iter()
                    .map(move |&v| (i64::from(rank[u]), i64::from(rank[v as usize])))
            })
            .unzip();
        Ok(build(&src, &dst, self.m, false)?.csr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_sorted_adjacency_and_counts_repeats() {
        let b = build(&[2, 0, 0, 2], &[0, 1, 2, 0], 3, false).unwrap();
        assert_eq!(b.repeated, 1);
        assert_eq!(b.csr.out(0), &[1, 2]);
        assert_eq!(b.csr.out(2), &[0]);
        assert_eq!(b.csr.inn(0), &[2]);
        assert!(b.csr.has(2, 0) && !b.csr.has(1, 0));
        assert!(!b.csr.is_symmetric());
    }

    #[test]
    fn symmetric_input_gives_both_directions_and_keeps_loops_once() {
        let b = build(&[0, 1, 1], &[1, 1, 0], 2, true).unwrap();
        // (0,1) and (1,0) are the same undirected edge: two repeated tuples.
        assert_eq!(b.repeated, 2);
        assert_eq!(b.csr.out(0), &[1]);
        assert_eq!(b.csr.out(1), &[0, 1]);
        assert!(b.csr.is_symmetric());
    }

    #[test]
    fn out_of_domain_ids_name_the_row_and_side() {
        let err = build(&[0, 1], &[1, 5], 3, false).unwrap_err();
        assert_eq!(
            err,
            KernelError::OutOfDomain {
                attribute: 1,
                row: 1
            }
        );
        assert!(build(&[-1], &[0], 3, false).is_err());
    }

    #[test]
    fn from_parts_rejects_unsorted_or_out_of_range() {
        let b = build(&[0, 1], &[1, 2], 3, false).unwrap().csr;
        let ok = Csr::from_parts(
            3,
            b.out_offsets.clone(),
            b.out_targets.clone(),
            b.in_offsets.clone(),
            b.in_sources.clone(),
        );
        assert!(ok.is_ok());
        let bad = Csr::from_parts(3, b.out_offsets, vec![7, 2], b.in_offsets, b.in_sources);
        assert!(bad.is_err());
    }
}
