//! The pair statistics behind the smooth sensitivity of the triangle count.
//!
//! For an undirected simple graph and a pair of distinct nodes i, j:
//! a_ij = |N(i) ∩ N(j)| (common neighbours) and b_ij = the nodes other than
//! i, j adjacent to exactly one of them, so b_ij = d_i + d_j − 2 a_ij −
//! 2·[i ~ j]. The local sensitivity at distance s is
//! LS^(s)(G) = max_{i≠j} min(a_ij + ⌊(s + min(s, b_ij))/2⌋, m − 2), which is
//! nondecreasing in both a_ij and b_ij, so only the largest b_ij for each
//! value of a_ij matters. This file computes that frontier over all
//! m(m − 1)/2 pairs without visiting them one by one: the pairs with a common
//! neighbour are reached through the wedges i – k – j, and for the pairs
//! without one only the largest d_j matters, found by scanning the nodes in
//! decreasing degree past the few that are excluded.
//!
//! # Citations
//! * Nissim, Raskhodnikova, Smith, "Smooth sensitivity and sampling in
//!   private data analysis", STOC 2007, Sec. 3.2 (triangles).
//! * Karwa, Raskhodnikova, Smith, Yaroslavtsev, "Private analysis of graph
//!   structure", PVLDB 2011, Sec. 3 (the same formula, with the notation
//!   a_ij, b_ij used here).

use super::Csr;
use crate::error::KernelError;
use rayon::prelude::*;

/// `best[a]` = the largest b_ij over unordered pairs of distinct nodes with
/// a_ij = a, or −1 when no pair has a_ij = a; the vector ends at the largest
/// a_ij. Self-loops are ignored (a triangle needs three distinct nodes).
/// Empty when m < 2.
pub fn pair_frontier(csr: &Csr) -> Result<Vec<i64>, KernelError> {
    if !csr.is_symmetric() {
        return Err(KernelError::Parameter(
            "the triangle smooth sensitivity needs a symmetric relation (an undirected graph)"
                .into(),
        ));
    }
    let m = csr.m;
    if m < 2 {
        return Ok(Vec::new());
    }
    let nbrs = |u: u32| csr.out(u).iter().copied().filter(move |&w| w != u);
    let deg: Vec<i64> = (0..m as u32).map(|u| nbrs(u).count() as i64).collect();
    let mut by_degree: Vec<u32> = (0..m as u32).collect();
    by_degree.sort_unstable_by_key(|&u| std::cmp::Reverse(deg[u as usize]));
    let merge = |mut a: Vec<i64>, b: Vec<i64>| {
        if a.len() < b.len() {
            a.resize(b.len(), -1);
        }
        for (x, y) in a.iter_mut().zip(b) {
            *x = (*x).max(y);
        }
        a
    };
    let frontier = (0..m as u32)
        .into_par_iter()
        .fold(
            || (vec![0u32; m], vec![false; m], Vec::new(), vec![-1i64; 1]),
            |(mut common, mut adjacent, mut touched, mut best), i| {
                for k in nbrs(i) {
                    adjacent[k as usize] = true;
                    for j in nbrs(k) {
                        if j != i {
                            if common[j as usize] == 0 {
                                touched.push(j);
                            }
                            common[j as usize] += 1;
                        }
                    }
                }
                let di = deg[i as usize];
                for &j in &touched {
                    let a = common[j as usize] as usize;
                    let b =
                        di + deg[j as usize] - 2 * a as i64 - 2 * i64::from(adjacent[j as usize]);
                    if best.len() <= a {
                        best.resize(a + 1, -1);
                    }
                    best[a] = best[a].max(b);
                }
                // Pairs without a common neighbour: the largest d_j − 2·[i ~ j].
                let mut zero: Option<i64> = None;
                for &j in &by_degree {
                    let dj = deg[j as usize];
                    if zero.is_some_and(|z| dj <= z) {
                        break;
                    }
                    if j != i && common[j as usize] == 0 {
                        let value = dj - 2 * i64::from(adjacent[j as usize]);
                        zero = Some(zero.map_or(value, |z| z.max(value)));
                    }
                }
                if let Some(z) = zero {
                    best[0] = best[0].max(di + z);
                }
                for &j in &touched {
                    common[j as usize] = 0;
                }
                touched.clear();
                for k in nbrs(i) {
                    adjacent[k as usize] = false;
                }
                (common, adjacent, touched, best)
            },
        )
        .map(|(_, _, _, best)| best)
        .reduce(|| vec![-1i64; 1], merge);
    Ok(frontier)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::build;

    fn graph(edges: &[(i64, i64)], m: usize) -> Csr {
        let (s, d): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        build(&s, &d, m, true).unwrap().csr
    }

    /// Every pair by definition.
    fn brute(csr: &Csr) -> Vec<i64> {
        let m = csr.m as u32;
        let mut best = vec![-1i64; 1];
        for i in 0..m {
            for j in i + 1..m {
                let (mut a, mut b) = (0usize, 0i64);
                for k in (0..m).filter(|&k| k != i && k != j) {
                    let (x, y) = (csr.has(i, k), csr.has(j, k));
                    a += usize::from(x && y);
                    b += i64::from(x != y);
                }
                if best.len() <= a {
                    best.resize(a + 1, -1);
                }
                best[a] = best[a].max(b);
            }
        }
        best
    }

    #[test]
    fn frontier_matches_every_pair() {
        let cases: Vec<(Vec<(i64, i64)>, usize)> = vec![
            (vec![(0, 1), (1, 2), (2, 0), (2, 3)], 4),
            (
                vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (4, 5)],
                7,
            ),
            (vec![(0, 1), (1, 1), (1, 2)], 3),
            (vec![], 3),
        ];
        for (edges, m) in cases {
            let g = graph(&edges, m);
            assert_eq!(pair_frontier(&g).unwrap(), brute(&g), "{edges:?}");
        }
    }

    #[test]
    fn directed_relations_are_refused() {
        let g = build(&[0], &[1], 2, false).unwrap().csr;
        assert!(pair_frontier(&g).is_err());
    }
}
