//! Special paths for the patterns where they beat the generic join.
//!
//! * Cliques K_k on a symmetric relation: orient every edge from lower to
//!   higher (degree, id) rank, so each k-set is found once, from its
//!   lowest-ranked node, by intersecting forward lists (Chiba–Nishizeki);
//!   the query counts ordered assignments, k! per set.
//! * Directed 4-cycles c_4 on any relation: per start node, counters over
//!   the two-paths out of and into it.
//! * Two-paths ∨ (x → y → z, pairwise distinct) on any relation: from degrees
//!   and reciprocal pairs, no enumeration.

use super::Csr;
use crate::error::KernelError;
use rayon::prelude::*;

/// Forward adjacency: for each u, its neighbours ranked above it (by
/// (degree, id)), sorted by id; self-loops dropped.
fn forward(csr: &Csr) -> (Vec<u64>, Vec<u32>) {
    let m = csr.m;
    let rank = csr.degree_rank();
    // Blocks of nodes in parallel, each writing its lists once; the blocks
    // are then concatenated (one allocation per block, not per node).
    const BLOCK: usize = 1024;
    let blocks: Vec<(Vec<u64>, Vec<u32>)> = (0..m.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(m));
            let mut lengths = Vec::with_capacity(hi - lo);
            let mut out = Vec::new();
            for u in lo..hi {
                let before = out.len();
                let r = rank[u];
                out.extend(csr.out(u as u32).iter().filter(|&&w| rank[w as usize] > r));
                lengths.push((out.len() - before) as u64);
            }
            (lengths, out)
        })
        .collect();
    let mut offsets = Vec::with_capacity(m + 1);
    offsets.push(0u64);
    let mut targets = Vec::with_capacity(blocks.iter().map(|(_, t)| t.len()).sum());
    for (lengths, out) in &blocks {
        for l in lengths {
            offsets.push(offsets.last().unwrap() + l);
        }
        targets.extend_from_slice(out);
    }
    (offsets, targets)
}

fn intersect(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}

/// k-sets in `cand` that extend the current clique by `depth` more nodes.
fn extend(
    off: &[u64],
    fwd: &[u32],
    cand: &[u32],
    depth: usize,
    scratch: &mut [Vec<u32>],
    mark: &mut [bool],
) -> u128 {
    if depth == 1 {
        return cand.len() as u128;
    }
    if depth == 2 {
        // The last level only counts: Σ_w |cand ∩ fwd(w)|, with cand marked
        // in an m-long array so each fwd(w) is read once, without a merge.
        for &c in cand {
            mark[c as usize] = true;
        }
        let n: u128 = cand
            .iter()
            .map(|&w| {
                let fw = &fwd[off[w as usize] as usize..off[w as usize + 1] as usize];
                fw.iter().filter(|&&x| mark[x as usize]).count() as u128
            })
            .sum();
        for &c in cand {
            mark[c as usize] = false;
        }
        return n;
    }
    let (mine, rest) = scratch.split_first_mut().expect("scratch per level");
    let mut total = 0u128;
    for &w in cand {
        let fw = &fwd[off[w as usize] as usize..off[w as usize + 1] as usize];
        intersect(cand, fw, mine);
        if mine.len() + 1 >= depth {
            let next = std::mem::take(mine);
            total += extend(off, fwd, &next, depth - 1, rest, mark);
            *mine = next;
        }
    }
    total
}

/// Ordered assignments of K_k (R on every ordered pair of k distinct
/// variables) over a symmetric relation: k! × the number of k-cliques.
///
/// # Citations
/// * Chiba & Nishizeki, "Arboricity and subgraph listing algorithms" (1985).
pub fn cliques_symmetric(csr: &Csr, k: usize) -> Result<u128, KernelError> {
    if !csr.is_symmetric() {
        return Err(KernelError::Parameter(
            "the clique path needs a symmetric relation (an undirected graph)".into(),
        ));
    }
    if !(2..=32).contains(&k) {
        return Err(KernelError::Parameter(format!(
            "clique size {k}; the clique path takes 2 to 32"
        )));
    }
    let (off, fwd) = forward(csr);
    let sets: u128 = (0..csr.m as u32)
        .into_par_iter()
        .with_min_len(256)
        .map_init(
            || {
                (
                    vec![Vec::new(); k],
                    vec![false; if k >= 3 { csr.m } else { 0 }],
                )
            },
            |(scratch, mark), u| {
                let cand = &fwd[off[u as usize] as usize..off[u as usize + 1] as usize];
                extend(&off, &fwd, cand, k - 1, scratch, mark)
            },
        )
        .sum();
    let factorial: u128 = (1..=k as u128).product();
    sets.checked_mul(factorial)
        .ok_or_else(|| KernelError::Capacity("clique count overflows 128 bits".into()))
}

/// Assignments of ∨(x, y, z) :- R(x, y), R(y, z), x ≠ y, y ≠ z, z ≠ x:
/// Σ_y in'(y)·out'(y) − recip(y), where ' leaves out the self-loop at y and
/// recip(y) counts x ≠ y with R(x, y) and R(y, x) (the choices with z = x).
pub fn two_paths(csr: &Csr) -> u128 {
    (0..csr.m as u32)
        .into_par_iter()
        .map(|y| {
            let (out, inn) = (csr.out(y), csr.inn(y));
            let looped = u128::from(out.binary_search(&y).is_ok());
            let (o, i) = (out.len() as u128 - looped, inn.len() as u128 - looped);
            let mut both = Vec::new();
            intersect(out, inn, &mut both);
            let recip = both.len() as u128 - looped;
            i * o - recip
        })
        .sum()
}

/// Assignments of the directed 4-cycle c_4 (x1 → x2 → x3 → x4 → x1, pairwise
/// distinct): for each x1 = a and x3 = c ≠ a, P(a, c)·P(c, a) − Q(a, c), where
/// P(a, c) counts y ∉ {a, c} with a → y → c and Q(a, c) the y on both
/// (the choices with x2 = x4). Two-paths are enumerated once per a, with
/// per-thread dense counters, so the cost is that of the wedges, not of the
/// 3-paths a generic join walks.
pub fn four_cycles(csr: &Csr) -> u128 {
    let m = csr.m;
    (0..m as u32)
        .into_par_iter()
        .map_init(
            || (vec![0u64; m], vec![0u64; m], vec![0u64; m], Vec::new()),
            |(fwd, back, both, touched), a| {
                for &y in csr.out(a) {
                    if y == a {
                        continue;
                    }
                    for &c in csr.out(y) {
                        if c != a && c != y {
                            if fwd[c as usize] == 0 && back[c as usize] == 0 {
                                touched.push(c);
                            }
                            fwd[c as usize] += 1;
                        }
                    }
                    if csr.has(y, a) {
                        for &c in csr.out(y) {
                            if c != a && c != y && csr.has(c, y) {
                                both[c as usize] += 1;
                            }
                        }
                    }
                }
                for &y in csr.inn(a) {
                    if y == a {
                        continue;
                    }
                    for &c in csr.inn(y) {
                        if c != a && c != y {
                            if fwd[c as usize] == 0 && back[c as usize] == 0 {
                                touched.push(c);
                            }
                            back[c as usize] += 1;
                        }
                    }
                }
                let mut total = 0u128;
                for &c in touched.iter() {
                    let c = c as usize;
                    total += u128::from(fwd[c]) * u128::from(back[c]) - u128::from(both[c]);
                    fwd[c] = 0;
                    back[c] = 0;
                    both[c] = 0;
                }
                touched.clear();
                total
            },
        )
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::csr::build;
    use super::super::join::{
        count, Query,
        Term::{Const, Var},
    };
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    fn random(m: usize, n: usize, symmetric: bool, seed: &mut u64) -> Csr {
        let s: Vec<i64> = (0..n).map(|_| (lcg(seed) % m as u64) as i64).collect();
        let d: Vec<i64> = (0..n).map(|_| (lcg(seed) % m as u64) as i64).collect();
        build(&s, &d, m, symmetric).unwrap().csr
    }

    fn clique(k: usize) -> Query {
        let mut atoms = vec![];
        let mut neq = vec![];
        for a in 0..k {
            for b in 0..k {
                if a != b {
                    atoms.push((Var(a), Var(b)));
                    if a < b {
                        neq.push((Var(a), Var(b)));
                    }
                }
            }
        }
        Query {
            n_vars: k,
            n_head: k,
            less: vec![],
            atoms,
            neq,
        }
    }

    #[test]
    fn special_paths_agree_with_the_generic_join() {
        let mut seed = 11;
        for trial in 0..20 {
            let m = 6 + trial % 7;
            let g = random(m, 3 * m, true, &mut seed);
            for k in 2..=5 {
                assert_eq!(
                    cliques_symmetric(&g, k).unwrap(),
                    count(&g, &clique(k)).unwrap()
                );
            }
            let d = random(m, 3 * m, false, &mut seed);
            let wedge = Query {
                n_vars: 3,
                n_head: 3,
                less: vec![],
                atoms: vec![(Var(0), Var(1)), (Var(1), Var(2))],
                neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
            };
            assert_eq!(two_paths(&d), count(&d, &wedge).unwrap());
            let c4 = Query {
                n_vars: 4,
                n_head: 4,
                less: vec![],
                atoms: (0..4).map(|i| (Var(i), Var((i + 1) % 4))).collect(),
                neq: (0..4)
                    .flat_map(|i| (i + 1..4).map(move |j| (Var(i), Var(j))))
                    .collect(),
            };
            assert_eq!(four_cycles(&d), count(&d, &c4).unwrap());
            assert_eq!(four_cycles(&g), count(&g, &c4).unwrap());
            assert_eq!(two_paths(&g), count(&g, &wedge).unwrap());
        }
    }

    /// Counting one embedding per orbit of the pattern's automorphisms (order
    /// constraints on degree ranks) times their number gives the plain count.
    #[test]
    fn symmetry_breaking_times_automorphisms_is_the_plain_count() {
        let mut seed = 5;
        let chain = |k: usize| {
            (0..k)
                .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
                .collect()
        };
        for trial in 0..20 {
            let m = 8 + trial % 6;
            let g = random(m, 4 * m, true, &mut seed);
            let d = random(m, 4 * m, false, &mut seed);
            for k in 3..=4 {
                let broken = Query {
                    less: chain(k),
                    ..clique(k)
                };
                let factorial: u128 = (1..=k as u128).product();
                assert_eq!(
                    count(&g, &broken).unwrap() * factorial,
                    count(&g, &clique(k)).unwrap()
                );
            }
            // The directed 3-cycle: rotations, x0 below x1 and x2. With a
            // constant in a disequality, relabelling must carry it along.
            let cycle = Query {
                n_vars: 3,
                n_head: 3,
                atoms: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
                neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
                less: vec![],
            };
            let broken = Query {
                less: vec![(0, 1), (0, 2)],
                ..cycle.clone()
            };
            assert_eq!(count(&d, &broken).unwrap() * 3, count(&d, &cycle).unwrap());
            let pinned = |q: &Query| Query {
                neq: [
                    q.neq.clone(),
                    vec![(Var(0), Const(2)), (Var(1), Const(2)), (Var(2), Const(2))],
                ]
                .concat(),
                ..q.clone()
            };
            assert_eq!(
                count(&d, &pinned(&broken)).unwrap() * 3,
                count(&d, &pinned(&cycle)).unwrap()
            );
        }
        let bad = Query {
            less: vec![(1, 1)],
            ..clique(3)
        };
        assert!(count(&random(5, 5, true, &mut seed), &bad).is_err());
    }

    #[test]
    fn clique_path_refuses_directed_relations() {
        let g = build(&[0], &[1], 2, false).unwrap().csr;
        assert!(cliques_symmetric(&g, 3).is_err());
    }
}
