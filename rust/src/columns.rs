//! Per-attribute columns of domain indices ("digits"): what a table view is
//! read as, batch by batch, whether it lives in memory or in a file.
//!
//! * `to_digits`: raw column values (dictionary indices through a remap
//!   table, or integers minus an offset) to checked domain indices, each in
//!   the narrowest signed type that holds them;
//! * `fingerprints`: per column (rows, Σ digit, Σ digit²), sums wrapping mod
//!   2^64, the check that rows read back are the rows written.

use crate::encode::{narrowest, Column, DigitColumn, FromDigit, Values, CHUNK};
use crate::error::KernelError;
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
        return Err(KernelError::Shape("one radix per column".into()));
    }
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

/// (rows, Σ x, Σ x²) of non-negative integers, the sums wrapping mod 2^64.
fn sums<T: Copy + Into<i128> + Sync>(values: &[T]) -> [u64; 3] {
    let (s, q) = values
        .par_chunks(CHUNK)
        .map(|chunk| {
            chunk.iter().fold((0u64, 0u64), |(s, q), &v| {
                let x = v.into() as u64;
                (s.wrapping_add(x), q.wrapping_add(x.wrapping_mul(x)))
            })
        })
        .reduce(
            || (0, 0),
            |a, b| (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1)),
        );
    [values.len() as u64, s, q]
}

/// The fingerprint of each column.
pub fn fingerprints(cols: &[Values<'_>]) -> Vec<[u64; 3]> {
    cols.par_iter()
        .map(|v| match *v {
            Values::I8(v) => sums(v),
            Values::I16(v) => sums(v),
            Values::I32(v) => sums(v),
            Values::I64(v) => sums(v),
            Values::U8(v) => sums(v),
            Values::U16(v) => sums(v),
            Values::U32(v) => sums(v),
            Values::U64(v) => sums(v),
        })
        .collect()
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
    fn fingerprints_wrap() {
        let v = [u64::MAX, 2];
        let f = fingerprints(&[Values::U64(&v)]);
        assert_eq!(f[0], [2, 1, 5]); // MAX + 2 = 1; MAX² + 4 = 1 + 4 (mod 2^64)
        let w = [3i8, 4];
        assert_eq!(fingerprints(&[Values::I8(&w)])[0], [2, 7, 25]);
    }
}
