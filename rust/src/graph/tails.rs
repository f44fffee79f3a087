//! The last two levels of a generic join counted without visiting the
//! values of the first of them: as pairs of two candidate lists when no
//! subgoal links them (`Pair`), or from the level before's intersection,
//! computed once, when the last level extends it (`nested`).

use super::join::{common, Level, Memo, Plan, Term};

/// The last two levels when no subgoal links them: given the levels before,
/// their values are independent but for a disequality or an order between
/// them, so the pairs are counted from the two candidate lists (sorted) in
/// one merge instead of one intersection per value of the first (the two
/// ends of a 4-path, the two tips of a diamond, the leaves of a star).
#[derive(Debug)]
pub(super) struct Pair {
    /// The last level without its disequality and order to the one before.
    last: Level,
    /// The two values must differ.
    differ: bool,
    /// Some(true): the last value must lie above the one before; Some(false):
    /// below it.
    above: Option<bool>,
    /// Both levels have the same candidates (the same lists, disequalities
    /// and cuts: the two tips of a diamond, the leaves of a star), so the
    /// pairs follow from their number.
    same: bool,
}

impl Plan<'_> {
    /// The assignments of the last two levels (`k`, `k + 1`) of a `Pair`.
    pub(super) fn count_pairs(&self, k: usize, pair: &Pair, val: &[u32], memo: &mut Memo) -> u128 {
        if pair.same {
            let n = self.count_candidates(k, val, memo);
            return match pair.above {
                Some(_) => n * n.saturating_sub(1) / 2,
                None if pair.differ => n * n.saturating_sub(1),
                None => n * n,
            };
        }
        let first = &self.levels[k];
        if let (Some(a), Some(b)) = (self.single(first, val), self.single(&pair.last, val)) {
            return pair.between_lists(a, &self.excluded(first, val, a), b, &{
                self.excluded(&pair.last, val, b)
            });
        }
        let (mut firsts, mut seconds) = (
            std::mem::take(&mut memo.firsts),
            std::mem::take(&mut memo.seconds),
        );
        firsts.clear();
        seconds.clear();
        self.candidates(k, val, |c| {
            firsts.push(c);
            true
        });
        self.scan(&pair.last, val, |c| {
            seconds.push(c);
            true
        });
        // Both lists are increasing: for each first value, the seconds
        // below it are a prefix whose end only moves forward.
        let (mut below, mut n) = (0usize, 0u128);
        for &u in &firsts {
            below += seconds[below..].partition_point(|&w| w < u);
            let at = usize::from(seconds.get(below) == Some(&u));
            n += match pair.above {
                Some(true) => (seconds.len() - below - at) as u128,
                Some(false) => below as u128,
                None => (seconds.len() - at * usize::from(pair.differ)) as u128,
            };
        }
        (memo.firsts, memo.seconds) = (firsts, seconds);
        n
    }
}

impl Plan<'_> {
    /// The one (cut) list holding the candidates of `level` but for its
    /// disequalities, when it has one list and no self-loop subgoal.
    fn single<'s>(&'s self, level: &Level, val: &[u32]) -> Option<&'s [u32]> {
        match level.extend[..] {
            _ if level.self_loop => None,
            [e] => Some(self.list(level, val, e)),
            [] => Some(self.lists(level, val)[0]),
            _ => None,
        }
    }

    /// The distinct values of `level`'s disequalities that lie in `list`.
    fn excluded(&self, level: &Level, val: &[u32], list: &[u32]) -> Vec<u32> {
        let mut out: Vec<u32> = level
            .differ
            .iter()
            .map(|&t| Self::value(t, val))
            .filter(|c| list.binary_search(c).is_ok())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Pair {
    /// Whether first value `u` and second value `w` may go together.
    fn admits(&self, u: u32, w: u32) -> bool {
        match self.above {
            Some(true) => w > u,
            Some(false) => w < u,
            None => !self.differ || u != w,
        }
    }

    /// Admitted pairs (u, w) with u in `a` but not in `x`, w in `b` but not
    /// in `y` (x ⊆ a, y ⊆ b: the disequalities' values), by inclusion–exclusion
    /// over the few excluded values: no list is copied, and the pairs of the
    /// whole lists are one merge.
    fn between_lists(&self, a: &[u32], x: &[u32], b: &[u32], y: &[u32]) -> u128 {
        let with_b = |u: u32| match self.above {
            Some(true) => b.len() - b.partition_point(|&w| w <= u),
            Some(false) => b.partition_point(|&w| w < u),
            None => b.len() - usize::from(self.differ && b.binary_search(&u).is_ok()),
        } as u128;
        let with_a = |w: u32| match self.above {
            Some(true) => a.partition_point(|&u| u < w),
            Some(false) => a.len() - a.partition_point(|&u| u <= w),
            None => a.len() - usize::from(self.differ && a.binary_search(&w).is_ok()),
        } as u128;
        let whole = match self.above {
            Some(true) => below_pairs(a, b),
            Some(false) => below_pairs(b, a),
            None => {
                let both = if !self.differ {
                    0
                } else if a.len() <= b.len() {
                    common(a, b)
                } else {
                    common(b, a)
                };
                a.len() as u128 * b.len() as u128 - both
            }
        };
        // Added back before subtracting, so that no partial sum is negative.
        let both: u128 = x
            .iter()
            .map(|&u| y.iter().filter(|&&w| self.admits(u, w)).count() as u128)
            .sum();
        whole + both
            - x.iter().map(|&u| with_b(u)).sum::<u128>()
            - y.iter().map(|&w| with_a(w)).sum::<u128>()
    }
}

/// Pairs (u, w), u in `a`, w in `b`, with u < w: one merge of sorted lists,
/// or a binary search per value of the shorter when the other is ≥ 16×
/// longer (degrees are skewed, so most pairs of lists are).
fn below_pairs(a: &[u32], b: &[u32]) -> u128 {
    if b.len() >= 16 * a.len() {
        return a
            .iter()
            .map(|&u| (b.len() - b.partition_point(|&w| w <= u)) as u128)
            .sum();
    }
    if a.len() >= 16 * b.len() {
        return b
            .iter()
            .map(|&w| a.partition_point(|&u| u < w) as u128)
            .sum();
    }
    let (mut j, mut n) = (0usize, 0u128);
    for &u in a {
        while j < b.len() && b[j] <= u {
            j += 1;
        }
        n += (b.len() - j) as u128;
    }
    n
}

impl Plan<'_> {
    /// The assignments of the last two levels (`k`, `k + 1`) of a `nested`
    /// plan: the level before's lists are intersected once; each of its
    /// values c is checked as `scan` would, and the last level's candidates
    /// are that intersection cut to the last level's range, intersected with
    /// the lists from c, less the excluded values.
    pub(super) fn count_nested(&self, k: usize, extra: &[(Term, bool)], val: &[u32]) -> u128 {
        let (before, last) = (&self.levels[k], &self.levels[k + 1]);
        let mut shared = Vec::new();
        let bare = Level {
            var: before.var,
            extend: before.extend.clone(),
            base_out: before.base_out,
            everywhere: before.everywhere,
            above: before.above.clone(),
            below: before.below.clone(),
            ..Level::default()
        };
        self.scan(&bare, val, |c| {
            shared.push(c);
            true
        });
        let mut val = val.to_vec();
        let mut total = 0u128;
        for &c in &shared {
            if (before.self_loop && !self.csr.has(c, c))
                || before.differ.iter().any(|&t| Self::value(t, &val) == c)
            {
                continue;
            }
            val[before.var] = c;
            let cut = Self::cut(last, &val, &shared);
            let mut lists: Vec<&[u32]> = extra.iter().map(|&e| self.list(last, &val, e)).collect();
            lists.push(cut);
            lists.sort_unstable_by_key(|l| l.len());
            let mut n = match &lists[..] {
                [a, b] => common(a, b),
                [first, rest @ ..] => first
                    .iter()
                    .filter(|&&x| rest.iter().all(|l| l.binary_search(&x).is_ok()))
                    .count() as u128,
                [] => unreachable!("the cut list is there"),
            };
            for (i, &t) in last.differ.iter().enumerate() {
                let x = Self::value(t, &val);
                let repeated = last.differ[..i].iter().any(|&u| Self::value(u, &val) == x);
                if !repeated && lists.iter().all(|l| l.binary_search(&x).is_ok()) {
                    n -= 1;
                }
            }
            total += n;
        }
        total
    }
}

/// The last level's lists from the level before's variable, when the last
/// level (without self-loop subgoal) has every list and cut of the level
/// before (see `Plan::nested`).
pub(super) fn nested(levels: &[Level]) -> Option<Vec<(Term, bool)>> {
    let [.., before, last] = levels else {
        return None;
    };
    let tied = Term::Var(before.var);
    let has_all = before.extend.iter().all(|e| last.extend.contains(e))
        && before.above.iter().all(|v| last.above.contains(v))
        && before.below.iter().all(|v| last.below.contains(v));
    let extra: Vec<(Term, bool)> = last
        .extend
        .iter()
        .copied()
        .filter(|e| !before.extend.contains(e))
        .collect();
    let fits = has_all
        && !before.extend.is_empty()
        && !last.self_loop
        && !extra.is_empty()
        && extra.iter().all(|&(t, _)| t == tied);
    fits.then_some(extra)
}

/// The `Pair` of the last two levels, when no subgoal links them (nor a
/// self-loop subgoal on both: each level checks its own).
pub(super) fn pair(levels: &[Level]) -> Option<Pair> {
    let [.., before, last] = levels else {
        return None;
    };
    let tied = Term::Var(before.var);
    if last.extend.iter().any(|&(t, _)| t == tied) || last.everywhere {
        return None;
    }
    let others = |vs: &[usize]| vs.iter().copied().filter(|&v| v != before.var).collect();
    let free = Level {
        var: last.var,
        extend: last.extend.clone(),
        self_loop: last.self_loop,
        differ: last.differ.iter().copied().filter(|&t| t != tied).collect(),
        above: others(&last.above),
        below: others(&last.below),
        base_out: last.base_out,
        everywhere: false,
    };
    let same = same_set(&free.extend, &before.extend)
        && same_set(&free.differ, &before.differ)
        && same_set(&free.above, &before.above)
        && same_set(&free.below, &before.below)
        && free.self_loop == before.self_loop
        && (!free.extend.is_empty() || free.base_out == before.base_out);
    Some(Pair {
        last: free,
        same,
        differ: last.differ.contains(&tied),
        above: if last.above.contains(&before.var) {
            Some(true)
        } else if last.below.contains(&before.var) {
            Some(false)
        } else {
            None
        },
    })
}

/// Whether two short lists hold the same values (repeats aside).
fn same_set<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_of_two_lists_agree_with_every_pair() {
        let mut seed = 7u64;
        let mut draw = |n: usize, m: u32| {
            let mut v: Vec<u32> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) as u32 % m
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for (na, nb) in [(5, 200), (200, 5), (30, 40), (0, 9), (1, 1)] {
            let (a, b) = (draw(na, 300), draw(nb, 300));
            // Excluded values: some of each list's own, one shared if any.
            let (x, y): (Vec<u32>, Vec<u32>) = (
                a.iter().copied().step_by(3).collect(),
                b.iter()
                    .copied()
                    .step_by(4)
                    .chain(a.first().copied().filter(|u| b.contains(u)))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            );
            for (differ, above) in [
                (true, None),
                (false, None),
                (true, Some(true)),
                (true, Some(false)),
            ] {
                let pair = Pair {
                    last: Level::default(),
                    differ,
                    above,
                    same: false,
                };
                let want = a
                    .iter()
                    .filter(|u| !x.contains(u))
                    .map(|&u| {
                        b.iter()
                            .filter(|w| !y.contains(w) && pair.admits(u, **w))
                            .count() as u128
                    })
                    .sum::<u128>();
                assert_eq!(
                    pair.between_lists(&a, &x, &b, &y),
                    want,
                    "{na} {nb} {differ} {above:?}"
                );
            }
        }
    }
}
