//! Factor tables for ConD: join and marginalise by variable elimination.
//!
//! # Citations
//! * Rastogi, Suciu, Hong, VLDB 2007, Sec. 4.1, Algorithms 5 and 6 (ConD,
//!   ConD-recur), with DESIGN.md's correction of line 18: a child's table is
//!   summed over the child's attributes that are not in its parent. Summing
//!   a variable out of the product of the factors that mention it, in an
//!   elimination order, is the same computation on the tree decomposition
//!   that the order induces.
//!
//! A factor is a dense table over a sorted list of variables (row-major, the
//! first variable slowest). Values are exact u128 counts (checked, an
//! overflow is an error) or f64 weights.

use crate::error::{buffer, KernelError};
use rayon::prelude::*;

/// Plain arithmetic for the inner loop (used only where overflow is impossible).
pub trait Num:
    Copy + Send + Sync + PartialOrd + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self>
{
    const ZERO: Self;
}

impl Num for u64 {
    const ZERO: Self = 0;
}
impl Num for u128 {
    const ZERO: Self = 0;
}
impl Num for f64 {
    const ZERO: Self = 0.0;
}

/// The numbers a factor holds: exact counts or weights.
pub trait Value: Num {
    /// Fill `out` with the eliminated table for `plan` (see `accumulate`).
    fn eliminate_cells(
        tables: &[&[Self]],
        plan: &Plan,
        out: &mut [Self],
    ) -> Result<(), KernelError>;
}

impl Value for f64 {
    fn eliminate_cells(tables: &[&[f64]], plan: &Plan, out: &mut [f64]) -> Result<(), KernelError> {
        accumulate(tables, plan, out);
        Ok(())
    }
}

impl Value for u128 {
    /// Exact: every cell is at most r_var · Π_f max(table_f), so when that bound
    /// fits in u64 the step runs in u64, when it fits in u128 in u128, and
    /// otherwise it is refused (nothing wraps).
    fn eliminate_cells(
        tables: &[&[u128]],
        plan: &Plan,
        out: &mut [u128],
    ) -> Result<(), KernelError> {
        let bound = tables.iter().try_fold(plan.r_var as u128, |b, t| {
            b.checked_mul(t.iter().copied().max().unwrap_or(0))
        });
        match bound {
            None => Err(KernelError::Shape("a ConD count may exceed 2^128".into())),
            Some(b) if b <= u128::from(u64::MAX) => {
                let small: Vec<Vec<u64>> = tables
                    .iter()
                    .map(|t| t.iter().map(|&x| x as u64).collect())
                    .collect();
                let views: Vec<&[u64]> = small.iter().map(|t| t.as_slice()).collect();
                let mut cells = buffer(out.len(), 0u64, || "a ConD table".into())?;
                accumulate(&views, plan, &mut cells);
                for (o, c) in out.iter_mut().zip(cells) {
                    *o = u128::from(c);
                }
                Ok(())
            }
            Some(_) => {
                accumulate(tables, plan, out);
                Ok(())
            }
        }
    }
}

/// How one elimination step walks its factors.
pub struct Plan {
    kept: Vec<usize>,
    kept_radices: Vec<usize>,
    /// kept_strides[f][k]: stride of kept variable k in factor f (0 if absent).
    kept_strides: Vec<Vec<usize>>,
    r_var: usize,
}

/// out[kept assignment] = Σ_x Π_f table_f[kept assignment, x], in parallel
/// over chunks of cells. No overflow checks: callers guarantee the bound.
fn accumulate<N: Num>(tables: &[&[N]], plan: &Plan, out: &mut [N]) {
    const CHUNK: usize = 4096;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, cells)| {
            let mut base = vec![0usize; tables.len()];
            for (i, cell) in cells.iter_mut().enumerate() {
                let mut index = c * CHUNK + i;
                base.fill(0);
                for k in (0..plan.kept.len()).rev() {
                    let r = plan.kept_radices[k];
                    let digit = index % r;
                    index /= r;
                    for (b, strides) in base.iter_mut().zip(&plan.kept_strides) {
                        *b += digit * strides[k];
                    }
                }
                // Each factor holds the eliminated variable last: its values for
                // this cell are one contiguous row, so the sum is a dot product.
                let r = plan.r_var;
                let row = |f: usize| &tables[f][base[f]..base[f] + r];
                *cell = match tables.len() {
                    1 => row(0).iter().fold(N::ZERO, |s, &a| s + a),
                    2 => row(0)
                        .iter()
                        .zip(row(1))
                        .fold(N::ZERO, |s, (&a, &b)| s + a * b),
                    3 => row(0)
                        .iter()
                        .zip(row(1))
                        .zip(row(2))
                        .fold(N::ZERO, |s, ((&a, &b), &c)| s + a * b * c),
                    _ => (0..r).fold(N::ZERO, |s, x| {
                        s + (1..tables.len()).fold(row(0)[x], |p, f| p * row(f)[x])
                    }),
                };
            }
        });
}

#[derive(Clone, Debug)]
pub struct Factor<T> {
    pub scope: Vec<usize>,
    pub table: Vec<T>,
}

/// Row-major strides of `scope` inside the table of `of` (0 for variables of
/// `scope` that `of` does not have).
fn strides(of: &[usize], scope: &[usize], radices: &[u64]) -> Vec<usize> {
    let mut own = vec![0usize; of.len()];
    let mut s = 1usize;
    for (k, &v) in of.iter().enumerate().rev() {
        own[k] = s;
        s *= radices[v] as usize;
    }
    scope
        .iter()
        .map(|v| of.iter().position(|w| w == v).map_or(0, |k| own[k]))
        .collect()
}

/// The factor's table with `var` moved to the last (fastest) axis, and its
/// other variables in scope order.
fn var_last<T: Copy>(f: &Factor<T>, var: usize, radices: &[u64]) -> (Vec<usize>, Vec<T>) {
    let rest: Vec<usize> = f.scope.iter().copied().filter(|&v| v != var).collect();
    let mut order = rest.clone();
    order.push(var);
    let old = strides(&f.scope, &order, radices);
    let dims: Vec<usize> = order.iter().map(|&v| radices[v] as usize).collect();
    let mut table = Vec::with_capacity(f.table.len());
    let mut digits = vec![0usize; dims.len()];
    for _ in 0..f.table.len() {
        table.push(f.table[digits.iter().zip(&old).map(|(d, s)| d * s).sum::<usize>()]);
        for k in (0..dims.len()).rev() {
            digits[k] += 1;
            if digits[k] < dims[k] {
                break;
            }
            digits[k] = 0;
        }
    }
    (rest, table)
}

/// Sum `var` out of the product of `factors` (which all mention it).
fn eliminate<T: Value>(
    factors: &[Factor<T>],
    var: usize,
    radices: &[u64],
    budget: usize,
) -> Result<Factor<T>, KernelError> {
    let mut union: Vec<usize> = factors
        .iter()
        .flat_map(|f| f.scope.iter().copied())
        .collect();
    union.sort_unstable();
    union.dedup();
    let kept: Vec<usize> = union.iter().copied().filter(|&v| v != var).collect();
    let size = kept
        .iter()
        .try_fold(1usize, |acc, &v| acc.checked_mul(radices[v] as usize))
        .filter(|&s| s <= budget)
        .ok_or_else(|| {
            KernelError::Shape(format!(
                "a ConD table over {kept:?} exceeds the budget of {budget} cells"
            ))
        })?;
    // Lay every factor out with `var` last (contiguous), the rest in scope order.
    let r_var = radices[var] as usize;
    let relaid: Vec<(Vec<usize>, Vec<T>)> =
        factors.iter().map(|f| var_last(f, var, radices)).collect();
    let plan = Plan {
        kept_radices: kept.iter().map(|&v| radices[v] as usize).collect(),
        kept_strides: relaid
            .iter()
            .map(|(rest, _)| {
                strides(rest, &kept, radices)
                    .iter()
                    .map(|s| s * r_var)
                    .collect()
            })
            .collect(),
        r_var,
        kept,
    };
    let tables: Vec<&[T]> = relaid.iter().map(|(_, t)| t.as_slice()).collect();
    // `size` is bounded by the caller's budget only: allocate fallibly.
    let mut table = buffer(size, T::ZERO, || {
        format!("a ConD table over {:?}", plan.kept)
    })?;
    T::eliminate_cells(&tables, &plan, &mut table)?;
    Ok(Factor {
        scope: plan.kept,
        table,
    })
}

/// `Shape` error unless the factors and the order are consistent: every
/// variable (in a scope or the order) has a radix, each scope is sorted and
/// distinct, each table has Π radices of its scope cells (within usize), and
/// the order names each variable at most once and every scope variable.
/// All later indexing relies on these.
fn check_factors<T>(
    factors: &[Factor<T>],
    radices: &[u64],
    order: &[usize],
) -> Result<(), KernelError> {
    let k = radices.len();
    for (i, f) in factors.iter().enumerate() {
        if let Some(&v) = f.scope.iter().find(|&&v| v >= k) {
            return Err(KernelError::Shape(format!(
                "variable {v} in the scope of factor {i}, but only {k} radices"
            )));
        }
        if f.scope.windows(2).any(|w| w[0] >= w[1]) {
            return Err(KernelError::Shape(format!(
                "scope {:?} of factor {i} is not sorted and distinct",
                f.scope
            )));
        }
        // Strides are products of radices; with a radix of 0 the table is
        // empty but the strides of the other variables still must fit, so
        // the bound counts a 0 as 1.
        f.scope
            .iter()
            .try_fold(1usize, |acc, &v| {
                usize::try_from(radices[v].max(1))
                    .ok()
                    .and_then(|r| acc.checked_mul(r))
            })
            .ok_or_else(|| {
                KernelError::Shape(format!(
                    "scope {:?} of factor {i} spans more than 2^64 cells",
                    f.scope
                ))
            })?;
        let cells: usize = f.scope.iter().map(|&v| radices[v] as usize).product();
        if f.table.len() != cells {
            return Err(KernelError::Shape(format!(
                "table of {} cells for a scope of {cells} cells (factor {i}, scope {:?})",
                f.table.len(),
                f.scope
            )));
        }
    }
    let mut in_order = vec![false; k];
    for &v in order {
        if v >= k {
            return Err(KernelError::Shape(format!(
                "variable {v} in the order, but only {k} radices"
            )));
        }
        if std::mem::replace(&mut in_order[v], true) {
            return Err(KernelError::Shape(format!(
                "variable {v} appears twice in the order"
            )));
        }
    }
    for (i, f) in factors.iter().enumerate() {
        if let Some(&v) = f.scope.iter().find(|&&v| !in_order[v]) {
            return Err(KernelError::Shape(format!(
                "variable {v} of factor {i} is missing from the order"
            )));
        }
    }
    Ok(())
}

/// Σ over all assignments of the variables in `order` of the product of the
/// factors. Every variable of every factor must appear in `order`, and no
/// variable twice (see `check_factors`); each step may store a table of at
/// most `budget` cells (the joined scope, which is iterated over but never
/// stored, may be `radix` times larger).
pub fn sum_product<T: Value>(
    mut factors: Vec<Factor<T>>,
    radices: &[u64],
    order: &[usize],
    budget: usize,
) -> Result<T, KernelError> {
    check_factors(&factors, radices, order)?;
    for &var in order {
        let (with, without): (Vec<_>, Vec<_>) =
            factors.into_iter().partition(|f| f.scope.contains(&var));
        factors = without;
        if !with.is_empty() {
            factors.push(eliminate(&with, var, radices, budget)?);
        }
    }
    // Only scalars remain: multiply them as a one-variable-free elimination.
    if factors.is_empty() {
        return Err(KernelError::Shape("no factors".into()));
    }
    let plan = Plan {
        kept: vec![],
        kept_radices: vec![],
        kept_strides: vec![vec![]; factors.len()],
        r_var: 1,
    };
    let tables: Vec<&[T]> = factors.iter().map(|f| f.table.as_slice()).collect();
    let mut total = [T::ZERO];
    T::eliminate_cells(&tables, &plan, &mut total)?;
    Ok(total[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(factors: &[Factor<u128>], radices: &[u64]) -> u128 {
        let n: usize = radices.iter().map(|&r| r as usize).product();
        let mut total = 0;
        for mut i in 0..n {
            let mut digits = vec![0usize; radices.len()];
            for v in (0..radices.len()).rev() {
                digits[v] = i % radices[v] as usize;
                i /= radices[v] as usize;
            }
            let mut prod = 1;
            for f in factors {
                let mut idx = 0;
                for &v in &f.scope {
                    idx = idx * radices[v] as usize + digits[v];
                }
                prod *= f.table[idx];
            }
            total += prod;
        }
        total
    }

    #[test]
    fn chain_and_triangle_match_brute_force() {
        let radices = [3u64, 4, 2, 5];
        // x0 < x1, x1 != 2x2, x2 + x3 > 2, a triangle x0, x1, x3 via x0 <= x3.
        let lt = Factor {
            scope: vec![0, 1],
            table: (0..12).map(|i| u128::from(i / 4 < i % 4)).collect(),
        };
        let ne = Factor {
            scope: vec![1, 2],
            table: (0..8).map(|i| u128::from(i / 2 != 2 * (i % 2))).collect(),
        };
        let gt = Factor {
            scope: vec![2, 3],
            table: (0..10).map(|i| u128::from(i / 5 + i % 5 > 2)).collect(),
        };
        let le = Factor {
            scope: vec![0, 3],
            table: (0..15).map(|i| u128::from(i / 5 <= i % 5)).collect(),
        };
        let factors = vec![lt, ne, gt, le];
        let expected = brute(&factors, &radices);
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]] {
            assert_eq!(
                sum_product(factors.clone(), &radices, &order, 1 << 20).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn budget_and_overflow_are_errors() {
        let f = Factor {
            scope: vec![0, 1],
            table: vec![1u128; 100],
        };
        assert!(sum_product(vec![f.clone()], &[10, 10], &[0, 1], 5).is_err());
        assert!(sum_product(vec![f.clone()], &[10, 10], &[0, 1], 10).is_ok());
        let big = Factor {
            scope: vec![0],
            table: vec![u128::MAX / 2 + 1; 2],
        };
        assert!(sum_product(vec![big], &[2], &[0], 10).is_err());
    }

    #[test]
    fn weights_sum_in_f64() {
        let w = Factor {
            scope: vec![0],
            table: vec![0.5f64, 1.5, 2.0],
        };
        let t = Factor {
            scope: vec![0, 1],
            table: vec![1.0, 0.0, 1.0, 1.0, 0.0, 0.0],
        };
        // Σ_x0 w(x0) Σ_x1 t = 0.5·1 + 1.5·2 + 2.0·0 = 3.5
        assert_eq!(sum_product(vec![w, t], &[3, 2], &[1, 0], 100).unwrap(), 3.5);
    }

    fn shape<T: std::fmt::Debug>(r: Result<T, KernelError>) -> String {
        match r {
            Err(KernelError::Shape(msg)) => msg,
            other => panic!("expected a Shape error, got {other:?}"),
        }
    }

    fn ones(scope: Vec<usize>, cells: usize) -> Factor<u128> {
        Factor {
            scope,
            table: vec![1; cells],
        }
    }

    #[test]
    fn variables_without_a_radix_are_errors_not_panics() {
        // Once: "index out of bounds: the len is 3 but the index is 9".
        assert_eq!(
            shape(sum_product(
                vec![ones(vec![0, 9], 6)],
                &[2, 3, 4],
                &[0, 9],
                100
            )),
            "variable 9 in the scope of factor 0, but only 3 radices"
        );
        let w = Factor {
            scope: vec![0, 9],
            table: vec![1.0f64; 6],
        };
        assert_eq!(
            shape(sum_product(vec![w], &[2, 3, 4], &[0, 9], 100)),
            "variable 9 in the scope of factor 0, but only 3 radices"
        );
        assert_eq!(
            shape(sum_product(
                vec![ones(vec![0, 1], 6)],
                &[2, 3],
                &[0, 1, 7],
                100
            )),
            "variable 7 in the order, but only 2 radices"
        );
    }

    #[test]
    fn scopes_tables_and_order_must_agree() {
        let r = [2u64, 3];
        assert_eq!(
            shape(sum_product(vec![ones(vec![1, 0], 6)], &r, &[0, 1], 100)),
            "scope [1, 0] of factor 0 is not sorted and distinct"
        );
        assert_eq!(
            shape(sum_product(vec![ones(vec![1, 1], 9)], &r, &[1], 100)),
            "scope [1, 1] of factor 0 is not sorted and distinct"
        );
        assert_eq!(
            shape(sum_product(vec![ones(vec![0, 1], 5)], &r, &[0, 1], 100)),
            "table of 5 cells for a scope of 6 cells (factor 0, scope [0, 1])"
        );
        assert_eq!(
            shape(sum_product(vec![ones(vec![0, 1], 6)], &r, &[0], 100)),
            "variable 1 of factor 0 is missing from the order"
        );
        assert_eq!(
            shape(sum_product(vec![ones(vec![0, 1], 6)], &r, &[0, 1, 1], 100)),
            "variable 1 appears twice in the order"
        );
        // Π radices past usize (it once wrapped to 0 and matched an empty table).
        assert_eq!(
            shape(sum_product(
                vec![ones(vec![0, 1, 2], 0)],
                &[1 << 63, 2, 3],
                &[2, 1, 0],
                100
            )),
            "scope [0, 1, 2] of factor 0 spans more than 2^64 cells"
        );
        // A radix of 0 empties the table but not the strides of the others.
        assert_eq!(
            shape(sum_product(
                vec![ones(vec![0, 1, 2], 0)],
                &[0, 1 << 63, 2],
                &[0, 1, 2],
                100
            )),
            "scope [0, 1, 2] of factor 0 spans more than 2^64 cells"
        );
        // Variables of the order that no factor mentions are fine (summed over nothing).
        assert_eq!(
            sum_product(vec![ones(vec![0, 1], 6)], &[2, 3, 5], &[2, 1, 0], 100).unwrap(),
            6
        );
    }

    #[test]
    fn empty_domains_count_zero() {
        // A radix of 0 gives empty tables and a sum over no assignments.
        for order in [[0, 1], [1, 0]] {
            let fs = vec![ones(vec![0, 1], 0), ones(vec![1], 3)];
            assert_eq!(sum_product(fs, &[0, 3], &order, 100).unwrap(), 0);
        }
        let fs = vec![ones(vec![0, 1], 0), ones(vec![0], 3)];
        assert_eq!(sum_product(fs, &[3, 0], &[0, 1], 100).unwrap(), 0);
    }
}
