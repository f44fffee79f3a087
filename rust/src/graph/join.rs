//! Exact counting of CQ(≠) queries over one binary relation R by a generic
//! join: variables are bound one at a time, each from the intersection of
//! the sorted adjacency lists of the subgoals that link it to variables
//! already bound (or to constants), smallest list first with galloping
//! lookups in the others. Disequalities and self-loop subgoals R(x, x) are
//! checked as soon as their variables are bound.
//!
//! The value of a query is the number of distinct assignments to its head
//! variables (Rastogi et al., PODS 2009, Sec. 2.1). Head variables are bound
//! first; past them the search only asks whether some completion exists, so
//! each head assignment is counted once without a hash set.

use super::Csr;
use crate::error::KernelError;
use rayon::prelude::*;

/// A subgoal argument: variable index or constant node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Var(usize),
    Const(u32),
}

/// A CQ(≠) query over R: `n_vars` variables of which `0..n_head` are the head.
#[derive(Debug, Clone)]
pub struct Query {
    pub n_vars: usize,
    pub n_head: usize,
    pub atoms: Vec<(Term, Term)>,
    pub neq: Vec<(Term, Term)>,
}

/// How one variable is bound: its candidate lists and the checks on each value.
#[derive(Debug, Default)]
struct Level {
    var: usize,
    /// (bound term, true: out-list of it, false: in-list of it).
    extend: Vec<(Term, bool)>,
    /// R(x, x) must hold.
    self_loop: bool,
    /// The value must differ from each of these (already bound) terms.
    differ: Vec<Term>,
    /// With nothing to extend from: candidates are nodes with an out-edge
    /// (true) or an in-edge (false).
    base_out: bool,
    /// The variable is in no subgoal (allowed only for a variable that a
    /// removed subgoal used, see `Plan::with_order`): every node is a candidate.
    everywhere: bool,
}

pub(crate) struct Plan<'a> {
    csr: &'a Csr,
    levels: Vec<Level>,
    n_head: usize,
    with_out: Vec<u32>,
    with_in: Vec<u32>,
    all: Vec<u32>,
}

/// The order of binding: head variables first, each time the variable with
/// the most subgoals to bound terms (then the most subgoals overall).
fn order(q: &Query) -> Vec<usize> {
    let mut bound = vec![false; q.n_vars];
    let mut out = Vec::with_capacity(q.n_vars);
    let is_bound = |t: Term, bound: &[bool]| match t {
        Term::Const(_) => true,
        Term::Var(v) => bound[v],
    };
    for group in [0..q.n_head, q.n_head..q.n_vars] {
        for _ in group.clone() {
            let best = group
                .clone()
                .filter(|&x| !bound[x])
                .max_by_key(|&x| {
                    let mut links = 0usize;
                    let mut total = 0usize;
                    for &(a, b) in &q.atoms {
                        for (me, other) in [(a, b), (b, a)] {
                            if me == Term::Var(x) {
                                total += 1;
                                if other != Term::Var(x) && is_bound(other, &bound) {
                                    links += 1;
                                }
                            }
                        }
                    }
                    (links, total, std::cmp::Reverse(x))
                })
                .expect("group has an unbound variable");
            bound[best] = true;
            out.push(best);
        }
    }
    out
}

impl<'a> Plan<'a> {
    fn new(csr: &'a Csr, q: &Query) -> Result<Option<Plan<'a>>, KernelError> {
        Self::with_order(csr, q, None)
    }

    /// A plan binding the variables in `order` (the greedy `order(q)` when
    /// None). With an explicit order, a variable in no subgoal ranges over
    /// every node (the local-sensitivity kernel drops the subgoal a changed
    /// tuple fills, which may leave its variables in no other subgoal).
    pub(crate) fn with_order(
        csr: &'a Csr,
        q: &Query,
        order_given: Option<Vec<usize>>,
    ) -> Result<Option<Plan<'a>>, KernelError> {
        let m = csr.m;
        let check = |t: Term| match t {
            Term::Var(v) if v >= q.n_vars => Err(KernelError::Shape(format!(
                "variable {v} but the query has {} variables",
                q.n_vars
            ))),
            Term::Const(c) if c as usize >= m => Err(KernelError::Shape(format!(
                "constant node {c} is not below m = {m}"
            ))),
            _ => Ok(()),
        };
        for &(a, b) in q.atoms.iter().chain(&q.neq) {
            check(a)?;
            check(b)?;
        }
        if q.n_head > q.n_vars {
            return Err(KernelError::Shape(
                "more head variables than variables".into(),
            ));
        }
        for x in 0..q.n_vars {
            if order_given.is_none()
                && !q
                    .atoms
                    .iter()
                    .any(|&(a, b)| a == Term::Var(x) || b == Term::Var(x))
            {
                return Err(KernelError::Shape(format!(
                    "variable {x} appears in no subgoal"
                )));
            }
        }
        // Subgoals and disequalities over constants only decide the query at once.
        for &(a, b) in &q.atoms {
            if let (Term::Const(u), Term::Const(v)) = (a, b) {
                if !csr.has(u, v) {
                    return Ok(None);
                }
            }
        }
        if q.neq.iter().any(|&(a, b)| a == b) {
            return Ok(None);
        }
        let order = match order_given {
            Some(o) => {
                let mut seen = vec![false; q.n_vars];
                for &x in &o {
                    if x >= q.n_vars || std::mem::replace(&mut seen[x], true) {
                        return Err(KernelError::Shape(format!(
                            "order {o:?} is not a permutation of the {} variables",
                            q.n_vars
                        )));
                    }
                }
                if o.len() != q.n_vars {
                    return Err(KernelError::Shape(format!(
                        "order {o:?} is not a permutation of the {} variables",
                        q.n_vars
                    )));
                }
                o
            }
            None => order(q),
        };
        let mut pos = vec![usize::MAX; q.n_vars];
        for (k, &x) in order.iter().enumerate() {
            pos[x] = k;
        }
        let before = |t: Term, k: usize| match t {
            Term::Const(_) => true,
            Term::Var(v) => pos[v] < k,
        };
        let mut levels = Vec::with_capacity(q.n_vars);
        for (k, &x) in order.iter().enumerate() {
            let me = Term::Var(x);
            let mut level = Level {
                var: x,
                ..Level::default()
            };
            let (mut as_src, mut as_dst) = (false, false);
            for &(a, b) in &q.atoms {
                if a == me && b == me {
                    level.self_loop = true;
                } else if b == me && before(a, k) {
                    level.extend.push((a, true));
                } else if a == me && before(b, k) {
                    level.extend.push((b, false));
                }
                as_src |= a == me;
                as_dst |= b == me;
            }
            level.everywhere = !as_src && !as_dst;
            level.base_out = as_src
                && (!as_dst || csr.tuples() == 0 || {
                    let outs = csr.out_offsets.windows(2).filter(|w| w[1] > w[0]).count();
                    let ins = csr.in_offsets.windows(2).filter(|w| w[1] > w[0]).count();
                    outs <= ins
                });
            for &(a, b) in &q.neq {
                for (mine, other) in [(a, b), (b, a)] {
                    if mine == me && before(other, k) {
                        level.differ.push(other);
                    }
                }
            }
            levels.push(level);
        }
        let nonempty = |off: &[u64]| {
            (0..m as u32)
                .filter(|&u| off[u as usize + 1] > off[u as usize])
                .collect::<Vec<u32>>()
        };
        Ok(Some(Plan {
            csr,
            levels,
            n_head: q.n_head,
            with_out: nonempty(&csr.out_offsets),
            with_in: nonempty(&csr.in_offsets),
            all: (0..m as u32).collect(),
        }))
    }

    /// The variable bound at level `k`.
    pub(crate) fn var(&self, k: usize) -> usize {
        self.levels[k].var
    }

    /// Whether node `a` can be the value of level 0 (which has nothing to
    /// extend from): the same test `candidates(0, ..)` applies to its list.
    pub(crate) fn admits_first(&self, a: u32) -> bool {
        let level = &self.levels[0];
        let (u, csr) = (a as usize, self.csr);
        (level.everywhere
            || if level.base_out {
                csr.out_offsets[u + 1] > csr.out_offsets[u]
            } else {
                csr.in_offsets[u + 1] > csr.in_offsets[u]
            })
            && (!level.self_loop || csr.has(a, a))
    }

    #[inline]
    pub(crate) fn value(t: Term, val: &[u32]) -> u32 {
        match t {
            Term::Const(c) => c,
            Term::Var(v) => val[v],
        }
    }

    /// Calls `f` on each value of level `k` consistent with `val`; stops when
    /// `f` returns false.
    pub(crate) fn candidates(&self, k: usize, val: &[u32], mut f: impl FnMut(u32) -> bool) {
        let level = &self.levels[k];
        let mut lists: Vec<&[u32]> = level
            .extend
            .iter()
            .map(|&(t, out)| {
                let u = Self::value(t, val);
                if out {
                    self.csr.out(u)
                } else {
                    self.csr.inn(u)
                }
            })
            .collect();
        if lists.is_empty() {
            lists.push(if level.everywhere {
                &self.all
            } else if level.base_out {
                &self.with_out
            } else {
                &self.with_in
            });
        }
        let (i, _) = lists
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| l.len())
            .expect("at least one list");
        let smallest = lists.swap_remove(i);
        let mut cursors = vec![0usize; lists.len()];
        'next: for &c in smallest {
            for (list, cur) in lists.iter().zip(cursors.iter_mut()) {
                // Galloping: values come in increasing order, so each list is
                // searched only past the last position found.
                *cur += list[*cur..].partition_point(|&y| y < c);
                if *cur == list.len() {
                    return;
                }
                if list[*cur] != c {
                    continue 'next;
                }
            }
            if level.self_loop && !self.csr.has(c, c) {
                continue;
            }
            if level.differ.iter().any(|&t| Self::value(t, val) == c) {
                continue;
            }
            if !f(c) {
                return;
            }
        }
    }

    /// Assignments of levels `k..` extending `val`: every head assignment
    /// once, and past the head only whether one completion exists.
    pub(crate) fn visit(&self, k: usize, val: &mut Vec<u32>) -> u128 {
        if k == self.levels.len() {
            return 1;
        }
        let exists = k >= self.n_head;
        let var = self.levels[k].var;
        let mut total = 0u128;
        // `val` is needed inside the callback while candidates borrow it.
        let snapshot = val.clone();
        self.candidates(k, &snapshot, |c| {
            val[var] = c;
            total += self.visit(k + 1, val);
            !(exists && total > 0)
        });
        total
    }
}

/// The number of distinct head assignments of `q` over `csr`.
///
/// # Citations
/// * Rastogi et al., PODS 2009, Sec. 2.1 (value of a CQ(≠) query).
/// * Ngo, Ré, Rudra, "Skew strikes back" (2013): generic join.
pub fn count(csr: &Csr, q: &Query) -> Result<u128, KernelError> {
    let plan = match Plan::new(csr, q)? {
        None => return Ok(0),
        Some(p) => p,
    };
    if plan.levels.is_empty() {
        return Ok(1);
    }
    let mut firsts = Vec::new();
    let val0 = vec![0u32; q.n_vars];
    plan.candidates(0, &val0, |c| {
        firsts.push(c);
        true
    });
    let var0 = plan.levels[0].var;
    if plan.n_head == 0 {
        // A Boolean query: 1 when one assignment exists.
        let found = firsts.par_iter().any(|&c| {
            let mut val = val0.clone();
            val[var0] = c;
            plan.visit(1, &mut val) > 0
        });
        return Ok(u128::from(found));
    }
    Ok(firsts
        .par_iter()
        .map(|&c| {
            let mut val = val0.clone();
            val[var0] = c;
            plan.visit(1, &mut val)
        })
        .sum())
}

#[cfg(test)]
mod tests {
    use super::super::csr::build;
    use super::*;
    use Term::{Const, Var};

    fn graph(edges: &[(i64, i64)], m: usize) -> Csr {
        let (s, d): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        build(&s, &d, m, false).unwrap().csr
    }

    fn brute(csr: &Csr, q: &Query) -> u128 {
        let m = csr.m as u32;
        let mut heads = std::collections::HashSet::new();
        let mut val = vec![0u32; q.n_vars];
        let total = (m as u64).pow(q.n_vars as u32);
        for mut code in 0..total {
            for v in val.iter_mut() {
                *v = (code % m as u64) as u32;
                code /= m as u64;
            }
            let t = |t: Term| match t {
                Const(c) => c,
                Var(v) => val[v],
            };
            let ok = q.atoms.iter().all(|&(a, b)| csr.has(t(a), t(b)))
                && q.neq.iter().all(|&(a, b)| t(a) != t(b));
            if ok {
                heads.insert(val[..q.n_head].to_vec());
            }
        }
        heads.len() as u128
    }

    #[test]
    fn triangle_two_path_and_path_from_agree_with_brute_force() {
        let g = graph(
            &[
                (0, 1),
                (1, 2),
                (2, 0),
                (1, 0),
                (2, 3),
                (3, 3),
                (3, 1),
                (0, 3),
            ],
            5,
        );
        let tri = Query {
            n_vars: 3,
            n_head: 3,
            atoms: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
            neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
        };
        let wedge = Query {
            n_vars: 3,
            n_head: 3,
            atoms: vec![(Var(0), Var(1)), (Var(1), Var(2))],
            neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
        };
        // d_{2,v} with v = node 0: distinct end nodes of 2-paths from 0.
        let path = Query {
            n_vars: 2,
            n_head: 1,
            atoms: vec![(Const(0), Var(1)), (Var(1), Var(0))],
            neq: vec![],
        };
        let loops = Query {
            n_vars: 2,
            n_head: 2,
            atoms: vec![(Var(0), Var(0)), (Var(0), Var(1))],
            neq: vec![(Var(1), Const(1))],
        };
        for q in [&tri, &wedge, &path, &loops] {
            assert_eq!(count(&g, q).unwrap(), brute(&g, q), "{q:?}");
        }
        // Directed 3-cycles 0→1→2, 1→0→3, 1→2→3, three rotations each.
        assert_eq!(count(&g, &tri).unwrap(), 9);
    }

    #[test]
    fn constants_only_and_bad_queries() {
        let g = graph(&[(0, 1)], 2);
        let yes = Query {
            n_vars: 0,
            n_head: 0,
            atoms: vec![(Const(0), Const(1))],
            neq: vec![],
        };
        assert_eq!(count(&g, &yes).unwrap(), 1);
        let no = Query {
            atoms: vec![(Const(1), Const(0))],
            ..yes.clone()
        };
        assert_eq!(count(&g, &no).unwrap(), 0);
        let far = Query {
            atoms: vec![(Const(0), Const(9))],
            ..yes
        };
        assert!(count(&g, &far).is_err());
    }
}
