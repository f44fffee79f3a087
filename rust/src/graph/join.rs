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
//!
//! The last variable, when it is a head variable, is counted instead of
//! visited: its candidates are the intersection of sorted lists minus the
//! values of the bound terms it must differ from, so their number is the
//! size of the intersection (a merge, or galloping when one list is much
//! shorter) less the distinct excluded values that lie in every list. The
//! intersection size depends only on the values of the list sources, so each
//! task caches it by the value of the last-bound source while the others keep
//! theirs (for c_4, |out(x3) ∩ in(x1)| once per x3 for a given x1, instead of
//! once per path x1 → x2 → x3).
//!
//! Symmetry breaking: order constraints between variables (`Query::less`,
//! chosen by the caller over the pattern's automorphisms) compare degree
//! ranks; the relation is relabelled by rank, so each constraint cuts the
//! sorted lists of the later variable to a range, and the variable that must
//! rank lowest is bound first (degree ordering, as in clique listing).
//!
//! When no subgoal links the last two variables, their values are counted as
//! pairs of two candidate lists (one merge, or inclusion–exclusion over the
//! few excluded values), not one intersection per value of the first.

use super::tails::{nested, pair, Pair};
use super::Csr;
use crate::error::KernelError;
use rayon::prelude::*;
use std::ops::Range;

/// A subgoal argument: variable index or constant node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Var(usize),
    Const(u32),
}

/// A CQ(≠) query over R: `n_vars` variables of which `0..n_head` are the head.
/// `less` holds order constraints (a, b): the value of variable a ranks
/// below that of b in the (degree, id) order of the nodes (`ranked`). They
/// break the symmetries of a pattern (the caller multiplies the count by the
/// number of automorphisms); with `less` non-empty the kernel counts over
/// the graph relabelled by that rank, so `first` ranges (`count_part`) are
/// ranges of ranks.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub n_vars: usize,
    pub n_head: usize,
    pub atoms: Vec<(Term, Term)>,
    pub neq: Vec<(Term, Term)>,
    pub less: Vec<(usize, usize)>,
}

/// How one variable is bound: its candidate lists and the checks on each value.
#[derive(Debug, Default)]
pub(super) struct Level {
    pub(super) var: usize,
    /// (bound term, true: out-list of it, false: in-list of it).
    pub(super) extend: Vec<(Term, bool)>,
    /// R(x, x) must hold.
    pub(super) self_loop: bool,
    /// The value must differ from each of these (already bound) terms.
    pub(super) differ: Vec<Term>,
    /// The value must lie above each of these (already bound) variables'
    /// values, and below each of `below`'s: each list is cut to that range.
    pub(super) above: Vec<usize>,
    pub(super) below: Vec<usize>,
    /// With nothing to extend from: candidates are nodes with an out-edge
    /// (true) or an in-edge (false).
    pub(super) base_out: bool,
    /// The variable is in no subgoal (allowed only for a variable that a
    /// removed subgoal used, see `Plan::with_order`): every node is a candidate.
    pub(super) everywhere: bool,
}

/// Nodes up to which the last level's intersection sizes are cached (two
/// m-long arrays per worker).
const MEMO_MAX_M: usize = 1 << 21;

/// Per-task cache of the last level's |∩ lists| by the value of `key` (the
/// last-bound variable its lists come from), valid while the other list
/// sources (`context`) keep the values they had when it was filled.
pub(crate) struct Memo {
    /// The two candidate lists of a `Pair`.
    pub(super) firsts: Vec<u32>,
    pub(super) seconds: Vec<u32>,
    context: Vec<u32>,
    epoch: u32,
    stamp: Vec<u32>,
    size: Vec<u32>,
}

impl Memo {
    pub(crate) fn new(plan: &Plan<'_>) -> Memo {
        let m = if plan.memo.is_some() { plan.csr.m } else { 0 };
        Memo {
            firsts: Vec::new(),
            seconds: Vec::new(),
            context: Vec::new(),
            epoch: 0,
            stamp: vec![0; m],
            size: vec![0; m],
        }
    }
}

pub(crate) struct Plan<'a> {
    pub(super) csr: &'a Csr,
    pub(super) levels: Vec<Level>,
    /// For the last level, when it is a head level without R(x, x): the key
    /// variable and the other list sources of its cached intersection size.
    pub(super) memo: Option<(usize, Vec<Term>)>,
    pub(super) pair: Option<Pair>,
    /// The last level's lists beyond those of the level before (the lists
    /// from its variable), when the last level's lists, cuts and checks
    /// contain the level before's: its candidates are then among the level
    /// before's intersection, which is computed once (the clique path's
    /// reuse of N⁺(x0) ∩ N⁺(x1) for every x2).
    pub(super) nested: Option<Vec<(Term, bool)>>,
    pub(super) n_head: usize,
    pub(super) with_out: Vec<u32>,
    pub(super) with_in: Vec<u32>,
    pub(super) all: Vec<u32>,
}

/// The order of binding: head variables first, each time the variable with
/// the most subgoals to bound terms (then the most subgoals overall, then one
/// that no unbound variable must rank below: under symmetry breaking the
/// lowest-ranked variable comes first, so later lists are cut to the nodes
/// ranked above it, as in degree-ordered clique listing).
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
                    let minimal = !q.less.iter().any(|&(a, b)| b == x && !bound[a]);
                    (links, total, minimal, std::cmp::Reverse(x))
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
            Term::Var(v) if v >= q.n_vars => Err(KernelError::Parameter(format!(
                "variable {v} but the query has {} variables",
                q.n_vars
            ))),
            Term::Const(c) if c as usize >= m => Err(KernelError::Parameter(format!(
                "constant node {c} is not below m = {m}"
            ))),
            _ => Ok(()),
        };
        for &(a, b) in q.atoms.iter().chain(&q.neq) {
            check(a)?;
            check(b)?;
        }
        for &(a, b) in &q.less {
            if a == b || a >= q.n_vars || b >= q.n_vars {
                return Err(KernelError::Parameter(format!(
                    "order constraint ({a}, {b}) needs two different variables below {}",
                    q.n_vars
                )));
            }
        }
        if q.n_head > q.n_vars {
            return Err(KernelError::Parameter(
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
                return Err(KernelError::Parameter(format!(
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
                        return Err(KernelError::Parameter(format!(
                            "order {o:?} is not a permutation of the {} variables",
                            q.n_vars
                        )));
                    }
                }
                if o.len() != q.n_vars {
                    return Err(KernelError::Parameter(format!(
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
        let symmetric = csr.is_symmetric();
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
                    // On a symmetric relation in-lists are out-lists: one
                    // spelling, so that equal levels compare equal (`Pair`).
                    level.extend.push((b, symmetric));
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
            for &(a, b) in &q.less {
                if b == x && pos[a] < k {
                    level.above.push(a);
                } else if a == x && pos[b] < k {
                    level.below.push(b);
                }
            }
            levels.push(level);
        }
        let pair = (q.n_head == q.n_vars).then(|| pair(&levels)).flatten();
        let nested = (q.n_head == q.n_vars && pair.is_none())
            .then(|| nested(&levels))
            .flatten();
        let memo = levels
            .last()
            .filter(|_| pair.is_none() && nested.is_none())
            .and_then(|last| {
                let sources: Vec<Term> = last.extend.iter().map(|&(t, _)| t).collect();
                let key = sources
                    .iter()
                    .filter_map(|&t| match t {
                        Term::Var(v) => Some(v),
                        Term::Const(_) => None,
                    })
                    .max_by_key(|&v| pos[v])?;
                // A cut list's intersection depends on the bounds too: their
                // variables join the context (which the key must not be one of).
                let bounds = last.above.iter().chain(&last.below);
                let useful = q.n_head == q.n_vars
                    && !last.self_loop
                    && !bounds.clone().any(|&v| v == key)
                    && m <= MEMO_MAX_M;
                useful.then(|| {
                    let mut context: Vec<Term> = sources
                        .into_iter()
                        .filter(|&t| t != Term::Var(key))
                        .collect();
                    context.extend(bounds.map(|&v| Term::Var(v)));
                    (key, context)
                })
            });
        let nonempty = |off: &[u64]| {
            (0..m as u32)
                .filter(|&u| off[u as usize + 1] > off[u as usize])
                .collect::<Vec<u32>>()
        };
        Ok(Some(Plan {
            csr,
            levels,
            memo,
            pair,
            nested,
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

    /// The part of a sorted list strictly between the values of the level's
    /// `above` and `below` variables (the whole list without such bounds).
    #[inline]
    pub(super) fn cut<'l>(level: &Level, val: &[u32], list: &'l [u32]) -> &'l [u32] {
        let mut list = list;
        if let Some(lo) = level.above.iter().map(|&v| val[v]).max() {
            list = &list[list.partition_point(|&y| y <= lo)..];
        }
        if let Some(hi) = level.below.iter().map(|&v| val[v]).min() {
            list = &list[..list.partition_point(|&y| y < hi)];
        }
        list
    }

    /// The list of subgoal `(t, out)` of level `k`: out- or in-neighbours of
    /// the value of `t`, cut to the level's bounds.
    #[inline]
    pub(super) fn list(&self, level: &Level, val: &[u32], (t, out): (Term, bool)) -> &[u32] {
        let u = Self::value(t, val);
        let whole = if out {
            self.csr.out(u)
        } else {
            self.csr.inn(u)
        };
        Self::cut(level, val, whole)
    }

    /// The sorted lists whose intersection holds the candidates of `level`.
    pub(super) fn lists(&self, level: &Level, val: &[u32]) -> Vec<&[u32]> {
        let mut lists: Vec<&[u32]> = level
            .extend
            .iter()
            .map(|&e| self.list(level, val, e))
            .collect();
        if lists.is_empty() {
            let base: &[u32] = if level.everywhere {
                &self.all
            } else if level.base_out {
                &self.with_out
            } else {
                &self.with_in
            };
            lists.push(Self::cut(level, val, base));
        }
        lists
    }

    /// The number of values of level `k` consistent with `val`, without
    /// visiting them when the level has no self-loop subgoal: |∩ lists| less
    /// the distinct values of the `differ` terms found in every list.
    pub(crate) fn count_candidates(&self, k: usize, val: &[u32], memo: &mut Memo) -> u128 {
        let level = &self.levels[k];
        if level.self_loop {
            let mut n = 0u128;
            self.candidates(k, val, |_| {
                n += 1;
                true
            });
            return n;
        }
        // Up to four lists on the stack: this runs once per assignment of the
        // other variables, so an allocation here would dominate.
        let n = level.extend.len();
        if (1..=4).contains(&n) {
            let mut inline: [&[u32]; 4] = [&[]; 4];
            for (slot, &e) in inline.iter_mut().zip(&level.extend) {
                *slot = self.list(level, val, e);
            }
            let lists = &mut inline[..n];
            lists.sort_unstable_by_key(|l| l.len());
            return self.count_sorted(k, val, lists, memo);
        }
        let mut lists = self.lists(level, val);
        lists.sort_unstable_by_key(|l| l.len());
        self.count_sorted(k, val, &lists, memo)
    }

    /// |∩ lists| (shortest first), from the memo when this level has one.
    fn intersection_size(&self, k: usize, val: &[u32], lists: &[&[u32]], memo: &mut Memo) -> u128 {
        let size = || match lists {
            [one] => one.len() as u128,
            [a, b] => common(a, b),
            [first, rest @ ..] => first
                .iter()
                .filter(|&&c| rest.iter().all(|l| l.binary_search(&c).is_ok()))
                .count() as u128,
            [] => unreachable!("at least one list"),
        };
        let Some((key, context)) = self.memo.as_ref().filter(|_| k + 1 == self.levels.len()) else {
            return size();
        };
        let same = memo.context.len() == context.len()
            && context
                .iter()
                .zip(&memo.context)
                .all(|(&t, &v)| Self::value(t, val) == v);
        if !same || memo.epoch == 0 {
            memo.context.clear();
            memo.context
                .extend(context.iter().map(|&t| Self::value(t, val)));
            if memo.epoch == u32::MAX {
                memo.stamp.fill(0);
                memo.epoch = 0;
            }
            memo.epoch += 1;
        }
        let y = val[*key] as usize;
        if memo.stamp[y] != memo.epoch {
            memo.stamp[y] = memo.epoch;
            // An intersection of lists of nodes has fewer than m < 2^32 values.
            memo.size[y] = size() as u32;
        }
        u128::from(memo.size[y])
    }

    /// `count_candidates` for the lists of level `k`, shortest first.
    fn count_sorted(&self, k: usize, val: &[u32], lists: &[&[u32]], memo: &mut Memo) -> u128 {
        let mut n = self.intersection_size(k, val, lists, memo);
        let differ = &self.levels[k].differ;
        for (i, &t) in differ.iter().enumerate() {
            let c = Self::value(t, val);
            let repeated = differ[..i].iter().any(|&u| Self::value(u, val) == c);
            if !repeated && lists.iter().all(|l| l.binary_search(&c).is_ok()) {
                n -= 1;
            }
        }
        n
    }

    /// Calls `f` on each value of level `k` consistent with `val`; stops when
    /// `f` returns false.
    pub(crate) fn candidates(&self, k: usize, val: &[u32], f: impl FnMut(u32) -> bool) {
        self.scan(&self.levels[k], val, f);
    }

    /// Calls `f` on each value of `level` consistent with `val`; stops when
    /// `f` returns false.
    pub(super) fn scan(&self, level: &Level, val: &[u32], mut f: impl FnMut(u32) -> bool) {
        let mut lists = self.lists(level, val);
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
    pub(crate) fn visit(&self, k: usize, val: &mut Vec<u32>, memo: &mut Memo) -> u128 {
        if k == self.levels.len() {
            return 1;
        }
        let exists = k >= self.n_head;
        if !exists && k + 1 == self.levels.len() {
            return self.count_candidates(k, val, memo);
        }
        if let Some(pair) = self.pair.as_ref().filter(|_| k + 2 == self.levels.len()) {
            return self.count_pairs(k, pair, val, memo);
        }
        if let Some(extra) = self.nested.as_ref().filter(|_| k + 2 == self.levels.len()) {
            return self.count_nested(k, extra, val);
        }
        let var = self.levels[k].var;
        let mut total = 0u128;
        // `val` is needed inside the callback while candidates borrow it.
        let snapshot = val.clone();
        self.candidates(k, &snapshot, |c| {
            val[var] = c;
            total += self.visit(k + 1, val, memo);
            !(exists && total > 0)
        });
        total
    }
}

/// |a ∩ b| for sorted lists without repeats, `a` the shorter: galloping
/// (binary search past the last match) when `b` is much longer, else a merge.
pub(super) fn common(a: &[u32], b: &[u32]) -> u128 {
    if a.is_empty() {
        return 0;
    }
    if b.len() / a.len() >= 16 {
        let mut rest = b;
        let mut n = 0u128;
        for &c in a {
            let at = rest.partition_point(|&y| y < c);
            rest = &rest[at..];
            if rest.first() == Some(&c) {
                n += 1;
            }
        }
        return n;
    }
    let (mut i, mut j, mut n) = (0, 0, 0u128);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += u128::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

/// The number of distinct head assignments of `q` over `csr`.
///
/// # Citations
/// * Rastogi et al., PODS 2009, Sec. 2.1 (value of a CQ(≠) query).
/// * Ngo, Ré, Rudra, "Skew strikes back" (2013): generic join.
pub fn count(csr: &Csr, q: &Query) -> Result<u128, KernelError> {
    count_part(csr, q, 0..csr.m as u32)
}

/// The part of `count` whose first-bound variable takes its value in
/// `first` (node ids): the parts of a partition of [0, m) sum to the count,
/// except for a query without head variables (Boolean, 0 or 1), whose count
/// is the largest part. Counting in parts lets a caller report progress
/// between them.
pub fn count_part(csr: &Csr, q: &Query, first: Range<u32>) -> Result<u128, KernelError> {
    if q.less.is_empty() {
        return count_plan(csr, q, first);
    }
    // Order constraints compare ranks: count over the relation relabelled by
    // rank, where they compare ids and cut sorted lists to a range.
    let rank = csr.degree_rank();
    let ranked = csr.relabelled(&rank)?;
    let renamed = |t: Term| match t {
        Term::Const(c) if (c as usize) < csr.m => Term::Const(rank[c as usize]),
        other => other,
    };
    let pairs = |ts: &[(Term, Term)]| ts.iter().map(|&(a, b)| (renamed(a), renamed(b))).collect();
    let q = Query {
        atoms: pairs(&q.atoms),
        neq: pairs(&q.neq),
        ..q.clone()
    };
    count_plan(&ranked, &q, first)
}

/// `count_part` over ids as given.
fn count_plan(csr: &Csr, q: &Query, first: Range<u32>) -> Result<u128, KernelError> {
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
        if first.contains(&c) {
            firsts.push(c);
        }
        c < first.end
    });
    let var0 = plan.levels[0].var;
    if plan.n_head == 0 {
        // A Boolean query: 1 when one assignment exists.
        let found = firsts.par_iter().any(|&c| {
            let mut val = val0.clone();
            val[var0] = c;
            plan.visit(1, &mut val, &mut Memo::new(&plan)) > 0
        });
        return Ok(u128::from(found));
    }
    Ok(firsts
        .par_iter()
        .map_init(
            || Memo::new(&plan),
            |memo, &c| {
                let mut val = val0.clone();
                val[var0] = c;
                plan.visit(1, &mut val, memo)
            },
        )
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
            less: vec![],
            atoms: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
            neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
        };
        let wedge = Query {
            n_vars: 3,
            n_head: 3,
            less: vec![],
            atoms: vec![(Var(0), Var(1)), (Var(1), Var(2))],
            neq: vec![(Var(0), Var(1)), (Var(1), Var(2)), (Var(2), Var(0))],
        };
        // d_{2,v} with v = node 0: distinct end nodes of 2-paths from 0.
        let path = Query {
            n_vars: 2,
            n_head: 1,
            less: vec![],
            atoms: vec![(Const(0), Var(1)), (Var(1), Var(0))],
            neq: vec![],
        };
        let loops = Query {
            n_vars: 2,
            n_head: 2,
            less: vec![],
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
    fn common_counts_by_merge_and_by_galloping() {
        // Lists of multiples: |{k·a} ∩ {k·b}| = multiples of lcm(a, b).
        for (a_step, a_len, b_step, b_len) in [(3, 10, 2, 400), (5, 40, 3, 60), (7, 1, 1, 100)] {
            let a: Vec<u32> = (0..a_len).map(|k| k * a_step).collect();
            let b: Vec<u32> = (0..b_len).map(|k| k * b_step).collect();
            let want = a.iter().filter(|c| b.contains(c)).count() as u128;
            assert_eq!(common(&a, &b), want, "{a_step} {b_step}");
        }
        assert_eq!(common(&[], &[1, 2]), 0);
    }

    #[test]
    fn constants_only_and_bad_queries() {
        let g = graph(&[(0, 1)], 2);
        let yes = Query {
            n_vars: 0,
            n_head: 0,
            less: vec![],
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
