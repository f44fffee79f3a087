//! Contingency counts of a view over attribute subsets (every equality query
//! over the subset at once).
//!
//! # Citations
//! * Rastogi, Suciu, Hong, VLDB 2007, Sec. 5: the experiment estimates every
//!   equality query over up to three attributes; n_V for all of them is a
//!   histogram of the view over each attribute subset.

use crate::encode::CHUNK;
use crate::error::{buffer, KernelError};
use rayon::prelude::*;

/// `Parameter` error unless every digit of every attribute some subset reads is
/// below its radix: one scan per such attribute, in parallel, before any
/// counting (digits index the histograms unchecked).
fn check_digits(
    digits: &[u16],
    n: usize,
    radices: &[u64],
    subsets: &[Vec<usize>],
) -> Result<(), KernelError> {
    let mut used = vec![false; radices.len()];
    for &j in subsets.iter().flatten() {
        used[j] = true;
    }
    // The maximum per column (a branch-free, vectorised scan); only a column
    // that fails is searched again for the row to name.
    let column = |j: usize| &digits[j * n..(j + 1) * n];
    let bad = (0..radices.len())
        // A radix above u16::MAX holds every u16 digit: nothing to scan.
        .filter(|&j| used[j] && radices[j] <= u64::from(u16::MAX))
        .find(|&j| {
            let max = column(j)
                .par_chunks(CHUNK)
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .max();
            max.is_some_and(|d| u64::from(d) >= radices[j])
        });
    match bad {
        Some(j) => {
            let i = column(j)
                .iter()
                .position(|&d| u64::from(d) >= radices[j])
                .unwrap_or(0);
            Err(KernelError::Parameter(format!(
                "digit {} of attribute {j} at row {i} is not below its radix {}",
                column(j)[i],
                radices[j]
            )))
        }
        None => Ok(()),
    }
}

/// Rows whose cell indices are built together.
const ROWS_PER_BLOCK: usize = 2048;

/// Add each of the `n` rows' cell (the digits of `cols`, first slowest, in
/// `sizes`; no columns: every row is the one cell) into `counts`. The digits
/// are below their sizes and the cells number at most 2^32 (checked by the
/// caller), so every cell index is a u32: built column by column over a block
/// of rows in u32 multiply-adds, which vectorise (u64 ones do not on AVX2;
/// 1.5× the whole count on Adult), then one scatter.
fn count_rows(cols: &[&[u16]], n: usize, sizes: &[usize], counts: &mut [u32]) {
    let mut idx = vec![0u32; ROWS_PER_BLOCK.min(n)];
    for start in (0..n).step_by(ROWS_PER_BLOCK) {
        let block = &mut idx[..ROWS_PER_BLOCK.min(n - start)];
        block.fill(0);
        for (col, &r) in cols.iter().zip(sizes) {
            let col = &col[start..start + block.len()];
            // At most 2^32 cells: a radix of 2^32 (0 as a u32) has only radices
            // of 1 beside it, so x is 0 when it is applied.
            let r = r as u32;
            for (x, &d) in block.iter_mut().zip(col) {
                *x = *x * r + u32::from(d);
            }
        }
        block.iter().for_each(|&x| counts[x as usize] += 1);
    }
}

/// For each subset (attribute indices, first slowest), the histogram of the
/// rows' combined digit over Π radices cells, added into `totals[s]` (so that
/// batches accumulate without a histogram per batch). `digits` is row-major
/// (k, n): attribute j's digits are `digits[j*n .. (j+1)*n]`. Parallel over subsets.
pub fn count_subsets(
    digits: &[u16],
    n: usize,
    radices: &[u64],
    subsets: &[Vec<usize>],
    totals: &mut [&mut [i64]],
) -> Result<(), KernelError> {
    let k = radices.len();
    if n.checked_mul(k) != Some(digits.len()) {
        let rows = digits.len().checked_div(n).unwrap_or(0);
        return Err(KernelError::Shape(format!(
            "digits of {rows} attributes × {n} rows for {k} radices"
        )));
    }
    if totals.len() != subsets.len() {
        return Err(KernelError::Shape(format!(
            "{} totals for {} subsets",
            totals.len(),
            subsets.len()
        )));
    }
    // Every subset's attributes exist, and its cells are countable.
    for (s, subset) in subsets.iter().enumerate() {
        if let Some(&j) = subset.iter().find(|&&j| j >= k) {
            return Err(KernelError::Shape(format!(
                "subset {s} names attribute {j}, but there are only {k} radices"
            )));
        }
        // At most 2^32 cells, so that cell indices are u32 (`count_rows`).
        let size = subset
            .iter()
            .try_fold(1u64, |acc, &j| {
                acc.checked_mul(radices[j]).filter(|&c| c <= 1 << 32)
            })
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| {
                KernelError::Capacity(format!("subset {s} {subset:?} spans more than 2^32 cells"))
            })?;
        if totals[s].len() != size {
            return Err(KernelError::Shape(format!(
                "subset {s} {subset:?} has {size} cells but its totals hold {}",
                totals[s].len()
            )));
        }
    }
    check_digits(digits, n, radices, subsets)?;
    subsets
        .par_iter()
        .zip(totals.par_iter_mut())
        .try_for_each(|(subset, totals)| {
            let cols: Vec<&[u16]> = subset
                .iter()
                .map(|&j| &digits[j * n..(j + 1) * n])
                .collect();
            let sizes: Vec<usize> = subset.iter().map(|&j| radices[j] as usize).collect();
            // u32 counts: half the cache of i64 ones (the histogram is the
            // scatter's working set), over at most u32::MAX rows at a time.
            let mut counts = buffer(totals.len(), 0u32, || format!("subset {subset:?}'s counts"))?;
            for start in (0..n).step_by(u32::MAX as usize) {
                let rows = start..n.min(start + u32::MAX as usize);
                let part: Vec<&[u16]> = cols.iter().map(|c| &c[rows.clone()]).collect();
                count_rows(&part, rows.len(), &sizes, &mut counts);
                for (t, c) in totals.iter_mut().zip(&mut counts) {
                    *t += i64::from(std::mem::take(c));
                }
            }
            Ok(())
        })
}

/// A histogram over `radices` (first slowest) summed down to each target:
/// target t keeps the axes `keeps[t]` in that order (its first slowest) and
/// sums over the others, exactly. One pass over the histogram per target,
/// a row of the last axis at a time; parallel over targets.
pub fn sum_down(
    hist: &[i64],
    radices: &[usize],
    keeps: &[Vec<usize>],
) -> Result<Vec<Vec<i64>>, KernelError> {
    let k = radices.len();
    let cells = radices.iter().try_fold(1usize, |a, &r| a.checked_mul(r));
    if cells != Some(hist.len()) {
        return Err(KernelError::Shape(format!(
            "a histogram of {} cells over radices {radices:?}",
            hist.len()
        )));
    }
    for (t, keep) in keeps.iter().enumerate() {
        let mut seen = vec![false; k];
        for &j in keep {
            if j >= k || std::mem::replace(&mut seen[j], true) {
                return Err(KernelError::Parameter(format!(
                    "target {t} keeps axes {keep:?} of a histogram over {k}"
                )));
            }
        }
    }
    keeps
        .par_iter()
        .map(|keep| {
            // Each axis's stride in the target; 0 for an axis summed over.
            let mut strides = vec![0usize; k];
            let mut size = 1usize;
            for &j in keep.iter().rev() {
                strides[j] = size;
                size *= radices[j]; // at most the histogram's cells (checked)
            }
            let mut out = buffer(size, 0i64, || format!("{size} summed-down cells"))?;
            let Some(last) = k.checked_sub(1) else {
                out[0] = hist[0]; // no axes: one cell
                return Ok(out);
            };
            if hist.is_empty() {
                return Ok(out);
            }
            let (step, mut digits, mut base) = (strides[last], vec![0usize; last], 0usize);
            for row in hist.chunks_exact(radices[last]) {
                if step == 0 {
                    out[base] += row.iter().sum::<i64>();
                } else {
                    for (d, &h) in row.iter().enumerate() {
                        out[base + d * step] += h;
                    }
                }
                // The next row: a mixed-radix counter over the other axes.
                for j in (0..last).rev() {
                    digits[j] += 1;
                    base += strides[j];
                    if digits[j] < radices[j] {
                        break;
                    }
                    base -= strides[j] * radices[j];
                    digits[j] = 0;
                }
            }
            Ok(out)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::message;

    /// count_subsets into zeroed totals (cells from the radices).
    fn counted(
        digits: &[u16],
        n: usize,
        radices: &[u64],
        subsets: &[Vec<usize>],
    ) -> Result<Vec<Vec<i64>>, KernelError> {
        let mut totals: Vec<Vec<i64>> = subsets
            .iter()
            .map(|s| {
                let cells = s.iter().try_fold(1usize, |a, &j| {
                    radices.get(j).and_then(|&r| a.checked_mul(r as usize))
                });
                vec![0; cells.filter(|&c| c < 1 << 24).unwrap_or(0)]
            })
            .collect();
        let mut views: Vec<&mut [i64]> = totals.iter_mut().map(|t| t.as_mut_slice()).collect();
        count_subsets(digits, n, radices, subsets, &mut views)?;
        Ok(totals)
    }

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
        let out = counted(&digits, n, &[2, 3, 4], &subsets).unwrap();
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
        assert!(counted(&digits, n, &[2, 3, 4], &[vec![3]]).is_err());
    }

    #[test]
    fn histograms_across_row_blocks_match_a_direct_count() {
        // Rows past several blocks (and a partial one), one to six attributes,
        // no attributes, and a radix of 2^16 (a digit of u16::MAX).
        let radices = [3u64, 1 << 16, 7, 2, 5, 11];
        let n = 2 * ROWS_PER_BLOCK + 37;
        let mut state = 12345u64;
        let mut digits = vec![0u16; radices.len() * n];
        for (j, &r) in radices.iter().enumerate() {
            for d in &mut digits[j * n..(j + 1) * n] {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *d = ((state >> 33) % r) as u16;
            }
        }
        digits[n + 5] = u16::MAX;
        let subsets = vec![
            vec![2],
            vec![0, 3],
            vec![5, 0, 4],
            vec![0, 2, 3, 4, 5],
            vec![1, 2],
            vec![], // no attributes: every row in the one cell
        ];
        let out = counted(&digits, n, &radices, &subsets).unwrap();
        for (subset, got) in subsets.iter().zip(&out) {
            let mut want = vec![0i64; got.len()];
            for i in 0..n {
                let cell = subset.iter().fold(0usize, |x, &j| {
                    x * radices[j] as usize + digits[j * n + i] as usize
                });
                want[cell] += 1;
            }
            assert_eq!(got, &want, "subset {subset:?}");
        }
    }

    #[test]
    fn sums_down_match_a_direct_sum_in_any_axis_order() {
        // A 2 × 3 × 4 histogram of distinct values; every target order.
        let radices = [2usize, 3, 4];
        let hist: Vec<i64> = (0..24).map(|x| x * x + 1).collect();
        let keeps = vec![
            vec![],
            vec![0],
            vec![2],
            vec![1, 0],
            vec![2, 0],
            vec![0, 1, 2],
            vec![2, 1, 0],
        ];
        let out = sum_down(&hist, &radices, &keeps).unwrap();
        for (keep, got) in keeps.iter().zip(&out) {
            let size: usize = keep.iter().map(|&j| radices[j]).product();
            let mut want = vec![0i64; size];
            for (cell, &h) in hist.iter().enumerate() {
                let d = [cell / 12, cell / 4 % 3, cell % 4];
                let at = keep.iter().fold(0, |a, &j| a * radices[j] + d[j]);
                want[at] += h;
            }
            assert_eq!(got, &want, "keep {keep:?}");
        }
        // Bad shapes are errors, never panics; a zero radix sums nothing.
        assert!(sum_down(&hist, &[2, 3, 5], &keeps).is_err());
        assert!(sum_down(&hist, &radices, &[vec![3]]).is_err());
        assert!(sum_down(&hist, &radices, &[vec![1, 1]]).is_err());
        assert_eq!(
            sum_down(&[], &[2, 0], &[vec![0]]).unwrap(),
            vec![vec![0, 0]]
        );
        assert_eq!(sum_down(&[7], &[], &[vec![]]).unwrap(), vec![vec![7]]);
    }

    #[test]
    fn a_digit_at_or_above_its_radix_is_an_error_not_a_panic() {
        // Once: "index out of bounds: the len is 4 but the index is 7".
        let digits = [0u16, 1, 2, 0, 7, 1]; // k = 2, n = 3
        for subsets in [
            vec![vec![1]],
            vec![vec![0, 1]],
            vec![vec![1, 0, 1]],
            vec![vec![0, 1, 0, 1]],
        ] {
            assert_eq!(
                message(
                    counted(&digits, 3, &[3, 4], &subsets).unwrap_err(),
                    "Parameter"
                ),
                "digit 7 of attribute 1 at row 1 is not below its radix 4"
            );
        }
        // Attributes no subset reads are not checked; a radix of 0 refuses any row.
        assert_eq!(
            counted(&digits, 3, &[3, 4], &[vec![0]]).unwrap(),
            vec![vec![1, 1, 1]]
        );
        assert!(counted(&digits, 3, &[0, 4], &[vec![0]]).is_err());
        // A radix past u16 holds every digit (no scan needed); no rows count nothing.
        assert_eq!(
            counted(&[3, 9], 1, &[4, 70_000], &[vec![1]]).unwrap()[0].len(),
            70_000
        );
        assert_eq!(
            counted(&[], 0, &[0, 0], &[vec![0, 1]]).unwrap(),
            vec![Vec::<i64>::new()]
        );
    }

    #[test]
    fn subsets_past_2_32_cells_or_memory_and_bad_shapes_are_errors() {
        let digits = [0u16; 3]; // k = 3, n = 1
        assert_eq!(
            message(
                counted(&digits, 1, &[1 << 40; 3], &[vec![0, 1, 2]]).unwrap_err(),
                "Capacity"
            ),
            "subset 0 [0, 1, 2] spans more than 2^32 cells"
        );
        assert_eq!(
            message(
                counted(&digits, 1, &[1 << 16, 1 << 16, 2], &[vec![0, 1, 2]]).unwrap_err(),
                "Capacity"
            ),
            "subset 0 [0, 1, 2] spans more than 2^32 cells"
        );
        // Totals that are not the subset's cells (the helper gives none past 2^24).
        assert_eq!(
            message(
                counted(&digits, 1, &[1 << 16; 3], &[vec![0, 1]]).unwrap_err(),
                "Shape"
            ),
            "subset 0 [0, 1] has 4294967296 cells but its totals hold 0"
        );
        assert_eq!(
            message(
                counted(&digits, 1, &[2, 2], &[vec![0]]).unwrap_err(),
                "Shape"
            ),
            "digits of 3 attributes × 1 rows for 2 radices"
        );
        assert_eq!(
            message(
                counted(&digits, 1, &[2; 3], &[vec![0], vec![2, 3]]).unwrap_err(),
                "Shape"
            ),
            "subset 1 names attribute 3, but there are only 3 radices"
        );
        assert!(counted(&digits, usize::MAX, &[2; 3], &[]).is_err());
    }
}
