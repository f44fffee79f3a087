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

use crate::error::KernelError;
use rayon::prelude::*;

/// The numbers a factor holds: exact counts or weights.
pub trait Value: Copy + Send + Sync {
    const ZERO: Self;
    fn add(self, other: Self) -> Result<Self, KernelError>;
    fn mul(self, other: Self) -> Result<Self, KernelError>;
}

impl Value for u128 {
    const ZERO: Self = 0;
    fn add(self, other: Self) -> Result<Self, KernelError> {
        self.checked_add(other).ok_or_else(overflow)
    }
    fn mul(self, other: Self) -> Result<Self, KernelError> {
        self.checked_mul(other).ok_or_else(overflow)
    }
}

impl Value for f64 {
    const ZERO: Self = 0.0;
    fn add(self, other: Self) -> Result<Self, KernelError> {
        Ok(self + other)
    }
    fn mul(self, other: Self) -> Result<Self, KernelError> {
        Ok(self * other)
    }
}

fn overflow() -> KernelError {
    KernelError::Shape("a ConD count exceeds 2^128".into())
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
        .filter(|&s| s.saturating_mul(radices[var] as usize) <= budget)
        .ok_or_else(|| {
            KernelError::Shape(format!(
                "a ConD table over {union:?} exceeds the budget of {budget} cells"
            ))
        })?;
    // Iterate kept assignments (row-major) and, innermost, the eliminated variable.
    let kept_strides: Vec<Vec<usize>> = factors
        .iter()
        .map(|f| strides(&f.scope, &kept, radices))
        .collect();
    let var_strides: Vec<usize> = factors
        .iter()
        .map(|f| strides(&f.scope, &[var], radices)[0])
        .collect();
    let r_var = radices[var] as usize;
    let mut table = vec![T::ZERO; size];
    const CHUNK: usize = 4096;
    table
        .par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(c, out)| {
            for (i, cell) in out.iter_mut().enumerate() {
                let mut index = c * CHUNK + i;
                // Decode the kept assignment into each factor's base offset.
                let mut base = vec![0usize; factors.len()];
                for (k, &v) in kept.iter().enumerate().rev() {
                    let r = radices[v] as usize;
                    let digit = index % r;
                    index /= r;
                    for (f, b) in base.iter_mut().enumerate() {
                        *b += digit * kept_strides[f][k];
                    }
                }
                let mut sum = T::ZERO;
                for x in 0..r_var {
                    let mut prod = factors[0].table[base[0] + x * var_strides[0]];
                    for f in 1..factors.len() {
                        prod = prod.mul(factors[f].table[base[f] + x * var_strides[f]])?;
                    }
                    sum = sum.add(prod)?;
                }
                *cell = sum;
            }
            Ok(())
        })?;
    Ok(Factor { scope: kept, table })
}

/// Σ over all assignments of the variables in `order` of the product of the
/// factors. Every variable of every factor must appear in `order`; each step
/// may build a table of at most `budget` cells (joined scope included).
pub fn sum_product<T: Value>(
    mut factors: Vec<Factor<T>>,
    radices: &[u64],
    order: &[usize],
    budget: usize,
) -> Result<T, KernelError> {
    for f in &factors {
        let cells: usize = f.scope.iter().map(|&v| radices[v] as usize).product();
        if f.table.len() != cells || f.scope.windows(2).any(|w| w[0] >= w[1]) {
            return Err(KernelError::Shape(
                "factor table does not match its sorted scope".into(),
            ));
        }
        if f.scope.iter().any(|v| !order.contains(v)) {
            return Err(KernelError::Shape(
                "a factor variable is missing from the order".into(),
            ));
        }
    }
    for &var in order {
        let (with, without): (Vec<_>, Vec<_>) =
            factors.into_iter().partition(|f| f.scope.contains(&var));
        factors = without;
        if !with.is_empty() {
            factors.push(eliminate(&with, var, radices, budget)?);
        }
    }
    // Only scalars remain.
    let mut total: Option<T> = None;
    for f in factors {
        total = Some(match total {
            None => f.table[0],
            Some(t) => t.mul(f.table[0])?,
        });
    }
    total.ok_or_else(|| KernelError::Shape("no factors".into()))
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
        assert!(sum_product(vec![f.clone()], &[10, 10], &[0, 1], 50).is_err());
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
}
