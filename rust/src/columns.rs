//! Per-attribute columns of domain indices ("digits"): what a table view is
//! read as, batch by batch, whether it lives in memory or in a file.
//!
//! * `to_digits`: raw column values (dictionary indices through a remap
//!   table, or integers minus an offset) to checked domain indices, each in
//!   the narrowest signed type that holds them;
//! * `count_in_table`: how many rows a condition's truth table (over the
//!   projection on its attributes) marks true, one pass, no temporaries.

use crate::encode::{narrowest, Column, DigitColumn, FromDigit, Values, CHUNK};
use crate::error::{check_radices, KernelError};
use rayon::prelude::*;

/// Domain indices of one column, checked against `radix` (attribute `attr` in errors).
fn column_digits<T: FromDigit>(
    col: &Column<'_>,
    radix: u64,
    attr: usize,
) -> Result<Vec<T>, KernelError> {
    match col.values {
        Values::I8(v) => map_column(v, col, radix, attr),
        Values::I16(v) => map_column(v, col, radix, attr),
        Values::I32(v) => map_column(v, col, radix, attr),
        Values::I64(v) => map_column(v, col, radix, attr),
        Values::U8(v) => map_column(v, col, radix, attr),
        Values::U16(v) => map_column(v, col, radix, attr),
        Values::U32(v) => map_column(v, col, radix, attr),
        Values::U64(v) => map_column(v, col, radix, attr),
    }
}

/// One pass, value by value: `remap[value]` or `value − offset`, in [0, radix).
fn map_column<S: Copy + Into<i128> + Sync, T: FromDigit>(
    values: &[S],
    col: &Column<'_>,
    radix: u64,
    attr: usize,
) -> Result<Vec<T>, KernelError> {
    let outside = |row: usize| KernelError::OutOfDomain {
        attribute: attr,
        row,
    };
    let mut out = vec![T::default(); values.len()];
    let chunks = out
        .par_chunks_mut(CHUNK)
        .zip(values.par_chunks(CHUNK))
        .enumerate();
    match col.remap {
        // Dictionary indices: a table lookup (−1 or past the end: outside).
        Some(table) => chunks.try_for_each(|(c, (dst, src))| {
            for (i, (d, &v)) in dst.iter_mut().zip(src).enumerate() {
                let at = u64::try_from(v.into()).unwrap_or(u64::MAX);
                let idx = table.get(at as usize).copied().unwrap_or(-1);
                if idx < 0 || idx as u64 >= radix {
                    return Err(outside(c * CHUNK + i));
                }
                *d = T::from_digit(idx);
            }
            Ok(())
        }),
        None => {
            let (offset, radix) = (i128::from(col.offset), i128::from(radix));
            chunks.try_for_each(|(c, (dst, src))| {
                for (i, (d, &v)) in dst.iter_mut().zip(src).enumerate() {
                    let idx = v.into() - offset;
                    if !(0..radix).contains(&idx) {
                        return Err(outside(c * CHUNK + i));
                    }
                    *d = T::from_digit(idx as i64);
                }
                Ok(())
            })
        }
    }?;
    Ok(out)
}

/// Every column's domain indices, in the narrowest signed type per column.
pub fn to_digits(cols: &[Column<'_>], radices: &[u64]) -> Result<Vec<DigitColumn>, KernelError> {
    if cols.len() != radices.len() {
        return Err(KernelError::Shape(format!(
            "{} columns but {} radices",
            cols.len(),
            radices.len()
        )));
    }
    check_radices(radices)?;
    cols.par_iter()
        .zip(radices)
        .enumerate()
        .map(|(a, (col, &r))| {
            Ok(match narrowest(0, r) {
                8 => DigitColumn::I8(column_digits(col, r, a)?),
                16 => DigitColumn::I16(column_digits(col, r, a)?),
                32 => DigitColumn::I32(column_digits(col, r, a)?),
                _ => DigitColumn::I64(column_digits(col, r, a)?),
            })
        })
        .collect()
}

/// idx ← idx · radix + digit for one column's slice; Err(i) at a digit ≥ radix.
fn accumulate<S: Copy + Into<i128>>(src: &[S], radix: u64, idx: &mut [u64]) -> Result<(), usize> {
    for (i, (x, &v)) in idx.iter_mut().zip(src).enumerate() {
        let d = u64::try_from(v.into()).unwrap_or(u64::MAX);
        if d >= radix {
            return Err(i);
        }
        *x = *x * radix + d;
    }
    Ok(())
}

/// Rows whose digits (one column per attribute, first slowest) index a true
/// cell of `table` (length Π radices).
pub fn count_in_table(
    cols: &[Values<'_>],
    radices: &[u64],
    table: &[bool],
) -> Result<u64, KernelError> {
    if cols.len() != radices.len() {
        return Err(KernelError::Shape(format!(
            "{} columns but {} radices",
            cols.len(),
            radices.len()
        )));
    }
    let cells = radices.iter().try_fold(1u64, |acc, &r| acc.checked_mul(r));
    if cells != Some(table.len() as u64) {
        return Err(KernelError::Shape(match cells {
            Some(c) => format!("table of {} cells for radices of {c} cells", table.len()),
            None => format!(
                "table of {} cells for radices of more than 2^64 cells",
                table.len()
            ),
        }));
    }
    let n = cols.first().map_or(0, |c| c.len());
    if let Some(j) = cols.iter().position(|c| c.len() != n) {
        return Err(KernelError::Shape(format!(
            "column {j} has {} rows, column 0 has {n}",
            cols[j].len()
        )));
    }
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut idx = vec![0u64; end - start];
            for (a, (col, &r)) in cols.iter().zip(radices).enumerate() {
                let res = match *col {
                    Values::I8(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::I16(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::I32(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::I64(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::U8(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::U16(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::U32(v) => accumulate(&v[start..end], r, &mut idx),
                    Values::U64(v) => accumulate(&v[start..end], r, &mut idx),
                };
                res.map_err(|i| KernelError::OutOfDomain {
                    attribute: a,
                    row: start + i,
                })?;
            }
            Ok(idx.iter().filter(|&&i| table[i as usize]).count() as u64)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_checked_and_narrow() {
        let raw = [3i64, 0, 2];
        let remap = [5i64, -1, 0, 1];
        let cols = [
            Column {
                values: Values::I64(&raw),
                offset: 0,
                remap: Some(&remap),
            },
            Column {
                values: Values::I64(&raw),
                offset: -1,
                remap: None,
            },
        ];
        let out = to_digits(&cols, &[6, 300]).unwrap();
        assert!(matches!(&out[0], DigitColumn::I8(v) if v == &vec![1, 5, 0]));
        assert!(matches!(&out[1], DigitColumn::I16(v) if v == &vec![4, 1, 3]));
        // Raw value 1 maps to −1 in the remap table: outside the domain.
        let bad = [1i64];
        let cols = [Column {
            values: Values::I64(&bad),
            offset: 0,
            remap: Some(&remap),
        }];
        assert!(matches!(
            to_digits(&cols, &[6]),
            Err(KernelError::OutOfDomain {
                attribute: 0,
                row: 0
            })
        ));
    }

    #[test]
    fn counts_true_cells_and_refuses_bad_digits() {
        let a = [0u8, 1, 2, 1];
        let b = [1i8, 0, 1, 1];
        // table over (a, b), a slowest: true at (1, 1) and (2, 0).
        let mut table = vec![false; 6];
        table[3] = true;
        table[4] = true;
        let n = count_in_table(&[Values::U8(&a), Values::I8(&b)], &[3, 2], &table).unwrap();
        assert_eq!(n, 1); // only row 3 is (1, 1); no row is (2, 0)
        let bad = [0i8, 5];
        assert!(matches!(
            count_in_table(&[Values::I8(&bad)], &[3], &table[..3]),
            Err(KernelError::OutOfDomain {
                attribute: 0,
                row: 1
            })
        ));
        assert!(count_in_table(&[Values::I8(&bad)], &[3], &table).is_err());
    }

    #[test]
    fn argument_errors_name_what_arrived() {
        let raw = [0i64, 1];
        let col = Column {
            values: Values::I64(&raw),
            offset: 0,
            remap: None,
        };
        let msg = |e: KernelError| e.to_string();
        assert_eq!(
            msg(to_digits(&[col], &[3, 3]).err().unwrap()),
            "shape mismatch: 1 columns but 2 radices"
        );
        assert!(msg(to_digits(&[col], &[0]).err().unwrap()).contains("radix of attribute 0 is 0"));
        let v = [Values::I64(&raw)];
        assert_eq!(
            msg(count_in_table(&v, &[3], &[true; 4]).unwrap_err()),
            "shape mismatch: table of 4 cells for radices of 3 cells"
        );
        assert!(
            msg(count_in_table(&v, &[1 << 40, 1 << 40], &[true]).unwrap_err())
                .contains("1 columns but 2 radices")
        );
        let v2 = [Values::I64(&raw), Values::I64(&raw)];
        assert!(
            msg(count_in_table(&v2, &[1 << 40, 1 << 40], &[true]).unwrap_err())
                .contains("more than 2^64 cells")
        );
        let short = [0u8];
        let uneven = [Values::I64(&raw), Values::U8(&short)];
        assert_eq!(
            msg(count_in_table(&uneven, &[2, 1], &[true; 2]).unwrap_err()),
            "shape mismatch: column 1 has 1 rows, column 0 has 2"
        );
    }
}
