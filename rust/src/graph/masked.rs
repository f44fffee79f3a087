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
//! every value must be non-negative. Sums are exact: u128 with every
//! addition checked, and each entry must fit in 63 bits (an error if not).
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
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, u128)> + '_ {
        let (lo, hi) = (self.indptr[r] as usize, self.indptr[r + 1] as usize);
        self.indices[lo..hi]
            .iter()
            .zip(&self.data[lo..hi])
            .map(|(&c, &v)| (c as usize, v as u128))
    }
}

fn overflow() -> KernelError {
    KernelError::Shape("masked product entry overflows 63 bits".into())
}

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
    let rows: Vec<Vec<i64>> = (0..n)
        .into_par_iter()
        .map_init(
            || vec![0usize; f.cols],
            |mark, x| {
                // mark[z] = 1 + the place of (x, z) among F's row x; 0: not in F.
                let lo = f.indptr[x] as usize;
                let hi = f.indptr[x + 1] as usize;
                for (i, &z) in f.indices[lo..hi].iter().enumerate() {
                    mark[z as usize] = i + 1;
                }
                let mut acc = vec![0u128; hi - lo];
                for (y, lv) in l.row(x) {
                    for (z, rv) in r.row(y) {
                        let at = mark[z];
                        if at != 0 {
                            // lv, rv < 2^63: the product fits; the sum is checked.
                            acc[at - 1] = acc[at - 1].checked_add(lv * rv).ok_or_else(overflow)?;
                        }
                    }
                }
                for &z in &f.indices[lo..hi] {
                    mark[z as usize] = 0;
                }
                acc.into_iter()
                    .map(|v| i64::try_from(v).map_err(|_| overflow()))
                    .collect::<Result<Vec<i64>, KernelError>>()
            },
        )
        .collect::<Result<_, _>>()?;
    Ok(rows.concat())
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
