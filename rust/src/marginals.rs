//! Contingency counts of a view over attribute subsets (every equality query
//! over the subset at once).
//!
//! # Citations
//! * Rastogi, Suciu, Hong, VLDB 2007, Sec. 5: the experiment estimates every
//!   equality query over up to three attributes; n_V for all of them is a
//!   histogram of the view over each attribute subset.

use crate::error::KernelError;
use rayon::prelude::*;

/// For each subset (attribute indices, first slowest), the histogram of the
/// rows' combined digit over Π radices cells. `digits` is row-major (k, n):
/// attribute j's digits are `digits[j*n .. (j+1)*n]`. Parallel over subsets.
pub fn count_subsets(
    digits: &[u16],
    n: usize,
    radices: &[u64],
    subsets: &[Vec<usize>],
) -> Result<Vec<Vec<u64>>, KernelError> {
    if digits.len() != n * radices.len() {
        return Err(KernelError::Shape("digits are not (k, n)".into()));
    }
    if subsets.iter().flatten().any(|&j| j >= radices.len()) {
        return Err(KernelError::Shape(
            "subset names a missing attribute".into(),
        ));
    }
    Ok(subsets
        .par_iter()
        .map(|subset| {
            let cells: usize = subset.iter().map(|&j| radices[j] as usize).product();
            let mut counts = vec![0u64; cells];
            let cols: Vec<&[u16]> = subset
                .iter()
                .map(|&j| &digits[j * n..(j + 1) * n])
                .collect();
            let sizes: Vec<usize> = subset.iter().map(|&j| radices[j] as usize).collect();
            match cols.len() {
                1 => cols[0].iter().for_each(|&a| counts[a as usize] += 1),
                2 => cols[0]
                    .iter()
                    .zip(cols[1])
                    .for_each(|(&a, &b)| counts[a as usize * sizes[1] + b as usize] += 1),
                3 => cols[0]
                    .iter()
                    .zip(cols[1])
                    .zip(cols[2])
                    .for_each(|((&a, &b), &c)| {
                        counts[(a as usize * sizes[1] + b as usize) * sizes[2] + c as usize] += 1
                    }),
                _ => (0..n).for_each(|i| {
                    let idx = cols
                        .iter()
                        .zip(&sizes)
                        .fold(0, |acc, (col, &r)| acc * r + col[i] as usize);
                    counts[idx] += 1
                }),
            }
            counts
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_match_a_direct_count() {
        // k = 3 attributes with radices 2, 3, 4; five rows.
        let rows = [[0u16, 2, 3], [1, 0, 0], [0, 2, 3], [1, 1, 2], [0, 0, 1]];
        let n = rows.len();
        let mut digits = vec![0u16; 3 * n];
        for (i, r) in rows.iter().enumerate() {
            for j in 0..3 {
                digits[j * n + i] = r[j];
            }
        }
        let subsets = vec![vec![0], vec![2, 1], vec![0, 1, 2], vec![1, 0, 2, 1]];
        let out = count_subsets(&digits, n, &[2, 3, 4], &subsets).unwrap();
        assert_eq!(out[0], vec![3, 2]);
        let mut two = vec![0; 12];
        let mut three = vec![0; 24];
        let mut four = vec![0; 72];
        for r in &rows {
            two[r[2] as usize * 3 + r[1] as usize] += 1;
            three[(r[0] as usize * 3 + r[1] as usize) * 4 + r[2] as usize] += 1;
            four[((r[1] as usize * 2 + r[0] as usize) * 4 + r[2] as usize) * 3 + r[1] as usize] +=
                1;
        }
        assert_eq!(out[1], two);
        assert_eq!(out[2], three);
        assert_eq!(out[3], four);
        assert!(count_subsets(&digits, n, &[2, 3, 4], &[vec![3]]).is_err());
    }
}
