//! Exact local sensitivity of a pattern query on a given relation R: the
//! largest change of the query's value when one tuple is added to R or
//! removed from it.
//!
//! A pattern query has k variables, all pairwise distinct, all in the head,
//! and subgoals R(x, y) with x ≠ y. An assignment is injective, so a tuple
//! t = (a, b) fills at most one subgoal of it (two subgoals with the same
//! image would be the same subgoal). Hence adding t gains, and removing t
//! loses, exactly
//!
//!   Σ_j N_j(a, b),  N_j(a, b) = #assignments with x_j = a, y_j = b whose
//!                               other subgoals hold in R,
//!
//! where subgoal j is R(x_j, y_j): the other subgoals never need t itself.
//! N_j is counted by the generic join of the query without subgoal j, with
//! x_j bound first; once y_j is bound the completions are counted (not
//! enumerated) and added to a per-thread accumulator indexed by b. The cost
//! is that of enumerating the partial assignments up to y_j's level, for
//! every subgoal, so it grows with the graph's small subgraphs, not with m².
//!
//! Subgoals in one orbit of the pattern's automorphism group have equal
//! N_j (an automorphism σ maps an assignment counted by N_j(a, b) to one
//! counted by N_σ(j)(a, b)), so one subgoal per orbit is counted, times the
//! orbit's size: K_4 on a symmetric R has 12 subgoals and one orbit.

use super::join::{Memo, Plan, Query, Term};
use super::Csr;
use crate::error::KernelError;
use rayon::prelude::*;

/// The largest gain from adding an absent tuple and the largest loss from
/// removing a present one, each with the first tuple (smallest (a, b))
/// reaching it when it is positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Local {
    pub added: u128,
    pub add_at: Option<(u32, u32)>,
    pub removed: u128,
    pub remove_at: Option<(u32, u32)>,
}

fn better(value: u128, at: (u32, u32), best: u128, best_at: Option<(u32, u32)>) -> bool {
    value > best || (value == best && value > 0 && best_at.is_none_or(|b| at < b))
}

impl Local {
    fn offer(&mut self, value: u128, at: (u32, u32), present: bool) {
        if present {
            if better(value, at, self.removed, self.remove_at) {
                (self.removed, self.remove_at) = (value, Some(at));
            }
        } else if better(value, at, self.added, self.add_at) {
            (self.added, self.add_at) = (value, Some(at));
        }
    }

    fn merge(mut self, other: Local) -> Local {
        if let Some(at) = other.add_at {
            self.offer(other.added, at, false);
        }
        if let Some(at) = other.remove_at {
            self.offer(other.removed, at, true);
        }
        self
    }
}

/// Binding order for the query without subgoal `skip`: x_skip first, then
/// each time the variable with the most remaining subgoals to bound ones.
fn order_from(n_vars: usize, goals: &[(usize, usize)], skip: usize) -> Vec<usize> {
    let mut bound = vec![false; n_vars];
    let first = goals[skip].0;
    bound[first] = true;
    let mut out = vec![first];
    while out.len() < n_vars {
        let best = (0..n_vars)
            .filter(|&x| !bound[x])
            .max_by_key(|&x| {
                let (mut links, mut total) = (0usize, 0usize);
                for (j, &(a, b)) in goals.iter().enumerate() {
                    if j == skip {
                        continue;
                    }
                    for (me, other) in [(a, b), (b, a)] {
                        if me == x {
                            total += 1;
                            links += usize::from(bound[other]);
                        }
                    }
                }
                (links, total, std::cmp::Reverse(x))
            })
            .expect("an unbound variable remains");
        bound[best] = true;
        out.push(best);
    }
    out
}

/// One subgoal per orbit of the automorphism group (permutations of the
/// variables mapping the set of subgoals onto itself), with the orbit's size.
/// Patterns with more than `MAX_PERMUTED` variables keep every subgoal alone.
fn orbits(n_vars: usize, goals: &[(usize, usize)]) -> Vec<(usize, u128)> {
    let mut orbit: Vec<usize> = (0..goals.len()).collect();
    if n_vars <= MAX_PERMUTED {
        let mut perm: Vec<usize> = (0..n_vars).collect();
        let index = |g: (usize, usize)| goals.iter().position(|&h| h == g);
        // Heap's algorithm over all n_vars! permutations.
        let mut c = vec![0usize; n_vars];
        let mut i = 0;
        loop {
            let images: Vec<Option<usize>> = goals
                .iter()
                .map(|&(a, b)| index((perm[a], perm[b])))
                .collect();
            if images.iter().all(Option::is_some) {
                for (j, image) in images.into_iter().enumerate() {
                    let (r, s) = (root(&mut orbit, j), root(&mut orbit, image.unwrap_or(j)));
                    orbit[r.max(s)] = r.min(s);
                }
            }
            while i < n_vars && c[i] >= i {
                c[i] = 0;
                i += 1;
            }
            if i >= n_vars {
                break;
            }
            let swap = if i % 2 == 0 { 0 } else { c[i] };
            perm.swap(swap, i);
            c[i] += 1;
            i = 0;
        }
    }
    let mut sizes = vec![0u128; goals.len()];
    for j in 0..goals.len() {
        sizes[root(&mut orbit, j)] += 1;
    }
    (0..goals.len())
        .filter(|&j| sizes[j] > 0)
        .map(|j| (j, sizes[j]))
        .collect()
}

const MAX_PERMUTED: usize = 8;

fn root(parent: &mut [usize], mut j: usize) -> usize {
    while parent[j] != j {
        parent[j] = parent[parent[j]];
        j = parent[j];
    }
    j
}

/// Binds levels `k..=stop` (stop = y_j's level) and adds, for each value b
/// of y_j, the number of completions to `acc[b]`.
#[allow(clippy::too_many_arguments)]
fn spread(
    plan: &Plan<'_>,
    k: usize,
    stop: usize,
    val: &mut Vec<u32>,
    weight: u128,
    acc: &mut [u128],
    touched: &mut Vec<u32>,
    memo: &mut Memo,
) {
    let var = plan.var(k);
    let snapshot = val.clone();
    plan.candidates(k, &snapshot, |c| {
        val[var] = c;
        if k == stop {
            let n = weight * plan.visit(k + 1, val, memo);
            if n > 0 {
                let slot = &mut acc[c as usize];
                if *slot == 0 {
                    touched.push(c);
                }
                *slot += n;
            }
        } else {
            spread(plan, k + 1, stop, val, weight, acc, touched, memo);
        }
        true
    });
}

/// Exact local sensitivity (under adding or removing one tuple) of the
/// pattern query with `n_vars` pairwise distinct variables and subgoals
/// `goals` (pairs of variable indices, distinct, no R(x, x)).
///
/// # Citations
/// * Rastogi et al., PODS 2009, Def. 3.1 (local sensitivity, after Nissim,
///   Raskhodnikova, Smith 2007).
pub fn pattern_local_sensitivity(
    csr: &Csr,
    n_vars: usize,
    goals: &[(usize, usize)],
) -> Result<Local, KernelError> {
    if goals.is_empty() {
        return Err(KernelError::Parameter(
            "a pattern needs at least one subgoal".into(),
        ));
    }
    for (j, &(x, y)) in goals.iter().enumerate() {
        if x >= n_vars || y >= n_vars || x == y {
            return Err(KernelError::Parameter(format!(
                "subgoal {j} = ({x}, {y}) is not R(x, y) over two distinct variables below {n_vars}"
            )));
        }
        if goals[..j].contains(&(x, y)) {
            return Err(KernelError::Parameter(format!(
                "subgoal ({x}, {y}) repeats"
            )));
        }
    }
    if let Some(x) = (0..n_vars).find(|&x| !goals.iter().any(|&(a, b)| a == x || b == x)) {
        return Err(KernelError::Parameter(format!(
            "variable {x} appears in no subgoal"
        )));
    }
    let m = csr.m;
    // Every N_j(a, b) ≤ m^(k−2), so the sums stay below g·m^(k−2).
    let bound = (goals.len() as f64) * (m as f64).powi(n_vars as i32 - 2);
    if bound >= 2f64.powi(127) {
        return Err(KernelError::Capacity(format!(
            "{n_vars} variables over m = {m} nodes may overflow 128-bit counts"
        )));
    }
    let neq: Vec<(Term, Term)> = (0..n_vars)
        .flat_map(|x| (x + 1..n_vars).map(move |y| (Term::Var(x), Term::Var(y))))
        .collect();
    let mut plans = Vec::with_capacity(goals.len());
    for (j, weight) in orbits(n_vars, goals) {
        let y = goals[j].1;
        let q = Query {
            n_vars,
            n_head: n_vars,
            atoms: goals
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != j)
                .map(|(_, &(a, b))| (Term::Var(a), Term::Var(b)))
                .collect(),
            neq: neq.clone(),
            less: vec![],
        };
        let order = order_from(n_vars, goals, j);
        let stop = order.iter().position(|&x| x == y).expect("y_j is ordered");
        // A pattern has no constants and no x ≠ x, so a plan always exists.
        if let Some(plan) = Plan::with_order(csr, &q, Some(order))? {
            plans.push((plan, stop, weight));
        }
    }
    Ok((0..m as u32)
        .into_par_iter()
        .map_init(
            || {
                let memos: Vec<Memo> = plans.iter().map(|(p, _, _)| Memo::new(p)).collect();
                (vec![0u128; m], Vec::<u32>::new(), vec![0u32; n_vars], memos)
            },
            |(acc, touched, val, memos), a| {
                for ((plan, stop, weight), memo) in plans.iter().zip(memos.iter_mut()) {
                    if plan.admits_first(a) {
                        val[plan.var(0)] = a;
                        spread(plan, 1, *stop, val, *weight, acc, touched, memo);
                    }
                }
                let mut best = Local::default();
                for &b in touched.iter() {
                    best.offer(acc[b as usize], (a, b), csr.has(a, b));
                    acc[b as usize] = 0;
                }
                touched.clear();
                best
            },
        )
        .reduce(Local::default, Local::merge))
}

#[cfg(test)]
mod tests {
    use super::super::csr::build;
    use super::super::join::count;
    use super::*;

    fn graph(edges: &[(i64, i64)], m: usize) -> Csr {
        let (s, d): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        build(&s, &d, m, false).unwrap().csr
    }

    fn value(edges: &[(i64, i64)], m: usize, n_vars: usize, goals: &[(usize, usize)]) -> i128 {
        let q = Query {
            n_vars,
            n_head: n_vars,
            less: vec![],
            atoms: goals
                .iter()
                .map(|&(a, b)| (Term::Var(a), Term::Var(b)))
                .collect(),
            neq: (0..n_vars)
                .flat_map(|x| (x + 1..n_vars).map(move |y| (Term::Var(x), Term::Var(y))))
                .collect(),
        };
        count(&graph(edges, m), &q).unwrap() as i128
    }

    /// Recount after toggling each of the m² tuples.
    fn brute(edges: &[(i64, i64)], m: usize, n_vars: usize, goals: &[(usize, usize)]) -> Local {
        let base = value(edges, m, n_vars, goals);
        let mut best = Local::default();
        for a in 0..m as i64 {
            for b in 0..m as i64 {
                let present = edges.contains(&(a, b));
                let toggled: Vec<(i64, i64)> = if present {
                    edges.iter().copied().filter(|&e| e != (a, b)).collect()
                } else {
                    edges.iter().copied().chain([(a, b)]).collect()
                };
                let change = (value(&toggled, m, n_vars, goals) - base).unsigned_abs();
                best.offer(change, (a as u32, b as u32), present);
            }
        }
        best
    }

    #[test]
    fn agrees_with_recounting_after_each_toggle() {
        let edges = [
            (0, 1),
            (1, 2),
            (2, 0),
            (1, 0),
            (2, 3),
            (3, 1),
            (0, 3),
            (4, 0),
            (3, 3),
        ];
        let triangle = [(0, 1), (1, 2), (2, 0)];
        let wedge = [(0, 1), (1, 2)];
        let four_cycle = [(0, 1), (1, 2), (2, 3), (3, 0)];
        let edge = [(0, 1)];
        let k4: Vec<(usize, usize)> = (0..4)
            .flat_map(|a| (0..4).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        let star = [(0, 1), (0, 2), (1, 2), (3, 2)];
        for (k, goals) in [
            (4, &k4[..]),
            (4, &star[..]),
            (3, &triangle[..]),
            (3, &wedge[..]),
            (4, &four_cycle[..]),
            (2, &edge[..]),
        ] {
            let got = pattern_local_sensitivity(&graph(&edges, 5), k, goals).unwrap();
            assert_eq!(got, brute(&edges, 5, k, goals), "{goals:?}");
        }
    }

    #[test]
    fn orbits_of_cycles_cliques_and_paths() {
        assert_eq!(orbits(3, &[(0, 1), (1, 2), (2, 0)]), vec![(0, 3)]);
        assert_eq!(orbits(3, &[(0, 1), (1, 2)]), vec![(0, 1), (1, 1)]);
        let k4: Vec<(usize, usize)> = (0..4)
            .flat_map(|a| (0..4).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        assert_eq!(orbits(4, &k4), vec![(0, 12)]);
        // Out-star 0 → 1, 0 → 2 plus 1 → 2: no two subgoals are swapped.
        assert_eq!(orbits(3, &[(0, 1), (0, 2), (1, 2)]).len(), 3);
    }

    #[test]
    fn rejects_what_is_not_a_pattern() {
        let g = graph(&[(0, 1)], 2);
        assert!(pattern_local_sensitivity(&g, 2, &[(0, 0)]).is_err());
        assert!(pattern_local_sensitivity(&g, 3, &[(0, 1)]).is_err());
        assert!(pattern_local_sensitivity(&g, 2, &[(0, 1), (0, 1)]).is_err());
        assert!(pattern_local_sensitivity(&g, 2, &[]).is_err());
    }
}
