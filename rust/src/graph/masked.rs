//! The last step of counting a pattern by variable elimination
//! (python/privpub/graphs/elimination.py): three variables x, y, z left, a
//! factor on each pair, and the count is
//!
//! Σ_x Σ_z F(x, z) · Σ_y L(x, y) · R(y, z) = tr(L · R · Fᵀ),
//!
//! taken from (L · R)(x, z) at the entries of F only, never forming L · R
//! (whose rows can be dense: A² · A for a 5-cycle). Each row x marks F's row
//! in a dense array and walks the rows of R that L's row x names, adding
//! only where F marks (Gustavson's product with the mask applied as it goes;
//! the masked product C⟨F⟩ = L·R of GraphBLAS). Rows are independent, so
//! they are split across threads. The caller keeps the masked product (one
//! value per entry of F) and weighs it by unary factors as it needs.
//!
//! The matrices are scipy's CSR arrays (int64 offsets, indices and values);
//! every value must be non-negative. Sums are exact: u64 with every
//! multiplication and addition checked, and each entry must fit in 63 bits
//! (an error if not).
//!
//! # Citations
//! * Gustavson, "Two fast algorithms for sparse matrices", ACM TOMS 1978.
//! * Dechter, "Bucket elimination", UAI 1996 (variable elimination).

use crate::error::{buffer, KernelError};
use rayon::prelude::*;

/// A CSR matrix as scipy holds it: row r's entries are
/// `indices[indptr[r]..indptr[r + 1]]` with values `data[..]`.
#[derive(Debug, Clone, Copy)]
pub struct Sparse<'a> {
    pub indptr: &'a [i64],
    pub indices: &'a [i64],
    pub data: &'a [i64],
    pub cols: usize,
}

impl Sparse<'_> {
    fn rows(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }

    /// `Shape` error unless the arrays form a CSR matrix with `rows` rows,
    /// column indices below `cols` and non-negative values, so that no later
    /// lookup can index out of bounds.
    fn check(&self, what: &str, rows: usize) -> Result<(), KernelError> {
        let bad = |msg: String| Err(KernelError::Shape(format!("{what}: {msg}")));
        if self.indptr.len() != rows + 1 {
            return bad(format!(
                "{} row offsets, expected {}",
                self.indptr.len(),
                rows + 1
            ));
        }
        if self.indices.len() != self.data.len() {
            return bad(format!(
                "{} column indices but {} values",
                self.indices.len(),
                self.data.len()
            ));
        }
        if self.indptr[0] != 0
            || self.indptr.windows(2).any(|w| w[0] > w[1])
            || self.indptr[rows] != self.indices.len() as i64
        {
            return bad("row offsets are not 0 ≤ … ≤ number of entries".into());
        }
        if let Some(c) = self
            .indices
            .iter()
            .find(|&&c| c < 0 || c as usize >= self.cols)
        {
            return bad(format!("column index {c} outside [0, {})", self.cols));
        }
        if let Some(v) = self.data.iter().find(|&&v| v < 0) {
            return bad(format!("value {v} is negative"));
        }
        Ok(())
    }

    /// (column, value) of row r.
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (lo, hi) = (self.indptr[r] as usize, self.indptr[r + 1] as usize);
        self.indices[lo..hi]
            .iter()
            .zip(&self.data[lo..hi])
            .map(|(&c, &v)| (c as usize, v as u64))
    }
}

fn overflow() -> KernelError {
    KernelError::Capacity("masked product entry overflows 63 bits".into())
}

/// Row blocks per thread: rows differ in cost (degrees are skewed), so many
/// small blocks balance the threads.
const BLOCKS_PER_THREAD: usize = 16;

/// (L · R)(x, z) at each stored entry (x, z) of F, in F's order, for L
/// (n × k), R (k × p), F (n × p).
pub fn masked_product(
    l: Sparse<'_>,
    r: Sparse<'_>,
    f: Sparse<'_>,
) -> Result<Vec<i64>, KernelError> {
    let n = l.rows();
    l.check("L", n)?;
    r.check("R", l.cols)?;
    f.check("F", n)?;
    if r.cols != f.cols {
        return Err(KernelError::Shape(format!(
            "R has {} columns and F {}",
            r.cols, f.cols
        )));
    }
    // Fails here, not inside a worker, when the mark array cannot be had.
    drop(buffer(f.cols, 0usize, || "the mask row".into())?);
    let mut out = buffer(f.data.len(), 0u64, || "the masked product".into())?;
    let r_ones = r.data.iter().all(|&v| v == 1);
    // Disjoint slices of `out`, one per block of rows, for the threads to fill.
    let per = n
        .div_ceil(rayon::current_num_threads() * BLOCKS_PER_THREAD)
        .max(1);
    let mut blocks = Vec::new();
    let mut rest: &mut [u64] = &mut out;
    for lo in (0..n).step_by(per) {
        let hi = (lo + per).min(n);
        let len = (f.indptr[hi] - f.indptr[lo]) as usize;
        let (block, tail) = rest.split_at_mut(len);
        blocks.push((lo..hi, block));
        rest = tail;
    }
    blocks
        .into_par_iter()
        .map_init(
            || vec![0usize; f.cols],
            |mark, (rows, block)| {
                let base = f.indptr[rows.start] as usize;
                for x in rows {
                    // mark[z] = 1 + the place of (x, z) in `block`; 0: not in F.
                    let (lo, hi) = (f.indptr[x] as usize, f.indptr[x + 1] as usize);
                    for (i, &z) in f.indices[lo..hi].iter().enumerate() {
                        mark[z as usize] = lo - base + i + 1;
                    }
                    for (y, lv) in l.row(x) {
                        let (rlo, rhi) = (r.indptr[y] as usize, r.indptr[y + 1] as usize);
                        if r_ones {
                            // R a relation (0/1): add lv, no multiplication.
                            for &z in &r.indices[rlo..rhi] {
                                let at = mark[z as usize];
                                if at != 0 {
                                    block[at - 1] =
                                        block[at - 1].checked_add(lv).ok_or_else(overflow)?;
                                }
                            }
                            continue;
                        }
                        for (z, rv) in r.row(y) {
                            let at = mark[z];
                            if at != 0 {
                                let add = lv.checked_mul(rv);
                                block[at - 1] = add
                                    .and_then(|a| block[at - 1].checked_add(a))
                                    .ok_or_else(overflow)?;
                            }
                        }
                    }
                    for &z in &f.indices[lo..hi] {
                        mark[z as usize] = 0;
                    }
                }
                Ok(())
            },
        )
        .collect::<Result<(), KernelError>>()?;
    out.into_iter()
        .map(|v| i64::try_from(v).map_err(|_| overflow()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense matrix as owned CSR arrays.
    fn csr(dense: &[Vec<i64>]) -> (Vec<i64>, Vec<i64>, Vec<i64>, usize) {
        let (mut indptr, mut indices, mut data) = (vec![0], vec![], vec![]);
        for row in dense {
            for (c, &v) in row.iter().enumerate() {
                if v != 0 {
                    indices.push(c as i64);
                    data.push(v);
                }
            }
            indptr.push(indices.len() as i64);
        }
        (indptr, indices, data, dense.first().map_or(0, Vec::len))
    }

    fn view(m: &(Vec<i64>, Vec<i64>, Vec<i64>, usize)) -> Sparse<'_> {
        Sparse {
            indptr: &m.0,
            indices: &m.1,
            data: &m.2,
            cols: m.3,
        }
    }

    #[test]
    fn agrees_with_the_dense_product() {
        let l = vec![vec![1, 2, 0], vec![0, 3, 1]];
        let r = vec![vec![1, 0, 2, 0], vec![0, 4, 1, 1], vec![5, 0, 0, 2]];
        let f = vec![vec![1, 1, 0, 3], vec![2, 0, 7, 1]];
        let mut want = vec![];
        for x in 0..2 {
            for z in 0..4 {
                if f[x][z] != 0 {
                    want.push((0..3).map(|y| l[x][y] * r[y][z]).sum::<i64>());
                }
            }
        }
        let (l, r, f) = (csr(&l), csr(&r), csr(&f));
        assert_eq!(masked_product(view(&l), view(&r), view(&f)), Ok(want));
    }

    #[test]
    fn a_relation_on_the_right_agrees_with_the_dense_product() {
        let l = vec![vec![3, 0, 2], vec![0, 5, 1]];
        let r = vec![vec![1, 0, 1], vec![1, 1, 0], vec![0, 1, 1]];
        let f = vec![vec![1, 1, 1], vec![0, 1, 1]];
        let mut want = vec![];
        for x in 0..2 {
            for z in 0..3 {
                if f[x][z] != 0 {
                    want.push((0..3).map(|y| l[x][y] * r[y][z]).sum::<i64>());
                }
            }
        }
        let (l, r, f) = (csr(&l), csr(&r), csr(&f));
        assert_eq!(masked_product(view(&l), view(&r), view(&f)), Ok(want));
    }

    #[test]
    fn bad_arrays_and_overflow_are_errors() {
        let one = csr(&[vec![1]]);
        let negative = csr(&[vec![-1]]);
        assert!(masked_product(view(&one), view(&negative), view(&one)).is_err());
        let mut wide = one.clone();
        wide.1[0] = 5;
        assert!(masked_product(view(&wide), view(&one), view(&one)).is_err());
        let big = csr(&[vec![i64::MAX]]);
        assert!(masked_product(view(&big), view(&big), view(&one)).is_err());
        let rows3 = csr(&[vec![1], vec![1], vec![1]]);
        assert!(masked_product(view(&one), view(&rows3), view(&one)).is_err());
    }
}
