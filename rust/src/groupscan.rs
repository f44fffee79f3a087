//! A view file's row groups counted in one call: for each group, its
//! dictionary-encoded column chunks decoded into domain indices
//! (`pages::decode_data_pages`), each column's SHA-256 and least and greatest
//! index computed, and the group's rows counted under each condition's truth
//! table (`columns::count_in_table`). Groups and their columns run on rayon's
//! pool, and a decoded column lives only while its group is counted, so the
//! memory held is a few groups' columns whatever the file's size.
//!
//! The kernel checks nothing against the file's statistics: it returns each
//! column's digest and range with the counts, and the caller compares them
//! with the sealed stats before it uses a count. A group whose chunk is
//! malformed is an error for that group alone (the caller reads it another way).

use crate::columns::count_in_table;
use crate::encode::{DigitColumn, Values};
use crate::error::KernelError;
use crate::pages::decode_data_pages;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

/// One column chunk of a group: the bytes after its dictionary page and how to
/// decode them (as `decode_data_pages` takes them).
pub struct Chunk<'a> {
    pub data: &'a [u8],
    pub snappy: bool,
    pub nullable: bool,
    pub remap: &'a [i64],
    pub width: u32,
}

/// A condition's truth table over its attributes (first slowest), with each
/// attribute's domain size.
pub struct Table<'a> {
    pub radices: Vec<u64>,
    pub table: &'a [bool],
}

/// A group to read: its rows, its chunks, and the conditions to count in it,
/// each as (index into the tables, the positions in `chunks` of its attributes).
pub struct Group<'a> {
    pub rows: usize,
    pub chunks: Vec<Chunk<'a>>,
    pub counts: Vec<(usize, Vec<usize>)>,
}

/// A decoded column's SHA-256 (of its indices as little-endian integers of
/// its width, the digest privpub stores) and least and greatest index (None
/// for an empty column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub sha256: [u8; 32],
    pub range: Option<(i64, i64)>,
}

/// What a group gave: each chunk's check, and each requested count.
#[derive(Debug)]
pub struct Scanned {
    pub columns: Vec<Checked>,
    pub counts: Vec<u64>,
}

/// Every group scanned, in order; each group's result on its own.
pub fn scan_groups(
    groups: &[Group<'_>],
    tables: &[Table<'_>],
) -> Vec<Result<Scanned, KernelError>> {
    groups.par_iter().map(|g| scan_group(g, tables)).collect()
}

fn scan_group(group: &Group<'_>, tables: &[Table<'_>]) -> Result<Scanned, KernelError> {
    let decoded = group
        .chunks
        .par_iter()
        .map(|c| {
            let column =
                decode_data_pages(c.data, c.snappy, c.nullable, c.remap, c.width, group.rows)?;
            let checked = check(&column);
            Ok((column, checked))
        })
        .collect::<Result<Vec<_>, KernelError>>()?;
    let counts = group
        .counts
        .iter()
        .map(|(t, positions)| {
            let table = tables
                .get(*t)
                .ok_or_else(|| KernelError::Shape(format!("no condition {t}")))?;
            let cols = positions
                .iter()
                .map(|&p| decoded.get(p).map(|(c, checked)| (c, checked.range)))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| KernelError::Shape("a position past the group's chunks".into()))?;
            count(&cols, &table.radices, table.table)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Scanned {
        columns: decoded.into_iter().map(|(_, c)| c).collect(),
        counts,
    })
}

/// Rows whose digits (first column slowest) index a true cell of `table`.
/// Each column's range, known from its check, is held against its radix
/// first, so the loop has no per-row test and runs on the narrowest cell
/// numbers that hold the table (u16: 8 to a vector lane, with a native
/// multiply); a table past 2^32 cells goes to `count_in_table`, which tests
/// every digit.
fn count(
    cols: &[(&DigitColumn, Option<(i64, i64)>)],
    radices: &[u64],
    table: &[bool],
) -> Result<u64, KernelError> {
    let rows = cols.first().map_or(0, |(c, _)| values(c).len());
    let fits = cols.len() == radices.len()
        && cols.iter().all(|(c, _)| values(c).len() == rows)
        && radices.iter().try_fold(1u64, |a, &r| a.checked_mul(r)) == Some(table.len() as u64)
        && cols
            .iter()
            .zip(radices)
            .all(|((_, range), &r)| range.is_none_or(|(lo, hi)| lo >= 0 && (hi as u64) < r));
    if fits && cols.len() == 1 {
        Ok(count_one(cols[0].0, cols[0].1, table))
    } else if fits && table.len() < 1 << 16 {
        Ok(count_cells::<u16>(cols, radices, table, rows))
    } else if fits && u32::try_from(table.len()).is_ok() {
        Ok(count_cells::<u32>(cols, radices, table, rows))
    } else {
        let values: Vec<_> = cols.iter().map(|(c, _)| values(c)).collect();
        count_in_table(&values, radices, table)
    }
}

/// One attribute's count (its digits known to lie in `range`, within the
/// table): a group whose condition the pruning reduced to one attribute, as
/// most straddling groups of a clustered view are. When few cells of the
/// range are true (or few false), the rows equal to each are counted by a
/// compare the compiler vectorises; otherwise each digit looks up its cell.
fn count_one(column: &DigitColumn, range: Option<(i64, i64)>, table: &[bool]) -> u64 {
    match column {
        DigitColumn::I8(v) => count_digits(v, range, table),
        DigitColumn::I16(v) => count_digits(v, range, table),
        DigitColumn::I32(v) => count_digits(v, range, table),
        DigitColumn::I64(v) => count_digits(v, range, table),
    }
}

/// The most cells counted by compares (each a pass over the digits).
const COMPARED: usize = 4;

fn count_digits<T: Copy + PartialEq + Into<i64> + TryFrom<i64>>(
    digits: &[T],
    range: Option<(i64, i64)>,
    table: &[bool],
) -> u64 {
    let Some((lo, hi)) = range else {
        return 0; // no rows
    };
    let cells = |truth: bool| {
        (lo..=hi)
            .filter(|&c| usize::try_from(c).is_ok_and(|c| table.get(c) == Some(&truth)))
            .take(COMPARED + 1)
            .map(T::try_from)
            .collect::<Result<Vec<T>, _>>()
    };
    if let (Ok(trues), Ok(falses)) = (cells(true), cells(false)) {
        if trues.len() <= COMPARED {
            return trues.iter().map(|&c| equal(digits, c)).sum();
        }
        if falses.len() <= COMPARED {
            let missed: u64 = falses.iter().map(|&c| equal(digits, c)).sum();
            return digits.len() as u64 - missed;
        }
    }
    digits
        .iter()
        .map(|&d| u64::from(usize::try_from(d.into()).is_ok_and(|i| table.get(i) == Some(&true))))
        .sum()
}

/// How many of `digits` equal `value` (blocks summed in u32, which vectorises).
fn equal<T: Copy + PartialEq>(digits: &[T], value: T) -> u64 {
    digits
        .chunks(1 << 20)
        .map(|block| u64::from(block.iter().map(|&d| u32::from(d == value)).sum::<u32>()))
        .sum()
}

/// A cell number type: every cell of the table fits it (the caller checks).
trait Cell: Copy + Default + std::ops::Mul<Output = Self> + std::ops::Add<Output = Self> {
    fn of(v: i64) -> Self;
    fn at(self) -> usize;
}

impl Cell for u16 {
    fn of(v: i64) -> Self {
        v as u16
    }
    fn at(self) -> usize {
        usize::from(self)
    }
}

impl Cell for u32 {
    fn of(v: i64) -> Self {
        v as u32
    }
    fn at(self) -> usize {
        self as usize
    }
}

fn count_cells<I: Cell>(
    cols: &[(&DigitColumn, Option<(i64, i64)>)],
    radices: &[u64],
    table: &[bool],
    rows: usize,
) -> u64 {
    const BLOCK: usize = 4096;
    let mut idx = [I::default(); BLOCK];
    let mut total = 0u64;
    for start in (0..rows).step_by(BLOCK) {
        let end = (start + BLOCK).min(rows);
        let idx = &mut idx[..end - start];
        idx.fill(I::default());
        for ((column, _), &r) in cols.iter().zip(radices) {
            let r = I::of(r as i64); // a factor of the table's size: it fits
            match column {
                DigitColumn::I8(v) => step(idx, &v[start..end], r),
                DigitColumn::I16(v) => step(idx, &v[start..end], r),
                DigitColumn::I32(v) => step(idx, &v[start..end], r),
                DigitColumn::I64(v) => step(idx, &v[start..end], r),
            }
        }
        total += idx
            .iter()
            .map(|&i| u64::from(table.get(i.at()).copied().unwrap_or(false)))
            .sum::<u64>();
    }
    total
}

/// idx ← idx · radix + digit (digits known to be in 0..radix).
fn step<T: Copy + Into<i64>, I: Cell>(idx: &mut [I], digits: &[T], radix: I) {
    for (x, &d) in idx.iter_mut().zip(digits) {
        *x = *x * radix + I::of(d.into());
    }
}

fn values(column: &DigitColumn) -> Values<'_> {
    match column {
        DigitColumn::I8(v) => Values::I8(v),
        DigitColumn::I16(v) => Values::I16(v),
        DigitColumn::I32(v) => Values::I32(v),
        DigitColumn::I64(v) => Values::I64(v),
    }
}

fn check(column: &DigitColumn) -> Checked {
    match column {
        DigitColumn::I8(v) => checked(v, i8::to_le_bytes),
        DigitColumn::I16(v) => checked(v, i16::to_le_bytes),
        DigitColumn::I32(v) => checked(v, i32::to_le_bytes),
        DigitColumn::I64(v) => checked(v, i64::to_le_bytes),
    }
}

/// Digest and range in one pass, the bytes staged in a small buffer (a column
/// of 2^20 values is hashed without a second copy of it), the range folded
/// per block while it is in cache.
fn checked<T: Copy + Ord + Into<i64>, const N: usize>(
    values: &[T],
    le: fn(T) -> [u8; N],
) -> Checked {
    const BLOCK: usize = 4096;
    let mut hasher = Sha256::new();
    let mut staged = vec![0u8; BLOCK * N];
    let Some(&first) = values.first() else {
        return Checked {
            sha256: hasher.finalize().into(),
            range: None,
        };
    };
    let (mut low, mut high) = (first, first);
    for block in values.chunks(BLOCK) {
        for (dst, &v) in staged.chunks_exact_mut(N).zip(block) {
            dst.copy_from_slice(&le(v));
        }
        hasher.update(&staged[..block.len() * N]);
        (low, high) = fold_range(block, low, high);
    }
    Checked {
        sha256: hasher.finalize().into(),
        range: Some((low.into(), high.into())),
    }
}

/// A decoded column's least and greatest index (None when empty), for a
/// reader that digests the column elsewhere (a whole read hashes each
/// column across its row groups) but checks each group's stored range.
pub fn range(column: &DigitColumn) -> Option<(i64, i64)> {
    fn of<T: Copy + Ord + Into<i64>>(values: &[T]) -> Option<(i64, i64)> {
        let &first = values.first()?;
        let (low, high) = fold_range(values, first, first);
        Some((low.into(), high.into()))
    }
    match column {
        DigitColumn::I8(v) => of(v),
        DigitColumn::I16(v) => of(v),
        DigitColumn::I32(v) => of(v),
        DigitColumn::I64(v) => of(v),
    }
}

/// `(low, high)` widened by `values`: a plain fold (it vectorises;
/// `Iterator::min` on an Option did not).
fn fold_range<T: Copy + Ord>(values: &[T], low: T, high: T) -> (T, T) {
    let (mut low, mut high) = (low, high);
    for &v in values {
        low = low.min(v);
        high = high.max(v);
    }
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One uncompressed v1 data page (no levels) holding `values` bit-packed
    /// at 4 bits, the remap the identity.
    fn page(values: &[u8]) -> Vec<u8> {
        let groups = values.len().div_ceil(8);
        let mut body = vec![4u8, (groups as u8) << 1 | 1];
        for pair in values.chunks(2) {
            body.push(pair[0] | pair.get(1).copied().unwrap_or(0) << 4);
        }
        body.resize(2 + groups * 4, 0);
        let n = body.len() as u8;
        let mut data = vec![0x15, 0, 0x15, n << 1, 0x15, n << 1, 0x2c];
        data.extend([
            0x15,
            (values.len() as u8) << 1,
            0x15,
            16,
            0x15,
            0,
            0x15,
            0,
            0,
            0,
        ]);
        data.extend(body);
        data
    }

    #[test]
    fn a_group_is_decoded_digested_and_counted() {
        let a: Vec<u8> = (0..16).map(|i| (i * 5 % 7) as u8).collect();
        let b: Vec<u8> = (0..16).map(|i| (i % 3) as u8).collect();
        let (pa, pb) = (page(&a), page(&b));
        let remap: Vec<i64> = (0..16).collect();
        let chunk = |data| Chunk {
            data,
            snappy: false,
            nullable: false,
            remap: &remap,
            width: 8,
        };
        // a < 3 and b != 2, over radices (7, 3) (row 0 counts).
        let table: Vec<bool> = (0..21).map(|i| i / 3 < 3 && i % 3 != 2).collect();
        let tables = [Table {
            radices: vec![7, 3],
            table: &table,
        }];
        let group = Group {
            rows: 16,
            chunks: vec![chunk(&pa), chunk(&pb)],
            counts: vec![(0, vec![0, 1])],
        };
        let found = scan_groups(std::slice::from_ref(&group), &tables);
        let scanned = found[0].as_ref().unwrap();
        let want = a.iter().zip(&b).filter(|(&x, &y)| x < 3 && y != 2).count() as u64;
        assert_eq!(scanned.counts[0], want);
        let digest: [u8; 32] = Sha256::digest(&a).into();
        assert_eq!(scanned.columns[0].sha256, digest);
        assert_eq!(scanned.columns[0].range, Some((0, 6)));
        // Columns swapped (a's indices reach 6, past b's radix 3), a condition
        // or a position that is not there: an error for the group, not a panic.
        for counts in [
            vec![(0, vec![1, 0])],
            vec![(1, vec![0])],
            vec![(0, vec![0, 2])],
        ] {
            let bad = Group {
                rows: 16,
                chunks: vec![chunk(&pa), chunk(&pb)],
                counts,
            };
            assert!(scan_groups(&[bad], &tables)[0].is_err());
        }
        let short = Group {
            rows: 17,
            chunks: vec![chunk(&pa)],
            counts: vec![],
        };
        assert!(scan_groups(&[short], &tables)[0].is_err()); // rows disagree
    }

    #[test]
    fn one_attribute_counts_as_its_table_says() {
        // By compares (few true cells, few false ones) and by lookups (many of
        // each), against a count cell by cell, in every width.
        let digits: Vec<i64> = (0..5000).map(|i| (i * 7919 % 13) + 2).collect();
        let range = Some((2, 14));
        for truths in [
            vec![5],
            vec![2, 9, 14],
            (0..20).filter(|&c| c != 7).collect::<Vec<usize>>(),
            (0..20).filter(|c| c % 2 == 0).collect(),
            vec![],
            vec![0, 1, 15, 19], // true only outside the range
        ] {
            let mut table = vec![false; 20];
            for &c in &truths {
                table[c] = true;
            }
            let want = digits.iter().filter(|&&d| table[d as usize]).count() as u64;
            let columns = [
                DigitColumn::I8(digits.iter().map(|&d| d as i8).collect()),
                DigitColumn::I16(digits.iter().map(|&d| d as i16).collect()),
                DigitColumn::I32(digits.iter().map(|&d| d as i32).collect()),
                DigitColumn::I64(digits.clone()),
            ];
            for column in &columns {
                assert_eq!(count_one(column, range, &table), want, "{truths:?}");
                assert_eq!(count(&[(column, range)], &[20], &table).unwrap(), want);
            }
        }
        assert_eq!(count_one(&DigitColumn::I8(vec![]), None, &[true]), 0);
    }

    #[test]
    fn the_digest_is_of_little_endian_indices_of_the_width() {
        let column = DigitColumn::I16(vec![1, -2, 300]);
        let mut bytes = Vec::new();
        for v in [1i16, -2, 300] {
            bytes.extend(v.to_le_bytes());
        }
        let found = check(&column);
        assert_eq!(found.sha256, <[u8; 32]>::from(Sha256::digest(&bytes)));
        assert_eq!(found.range, Some((-2, 300)));
        let long = DigitColumn::I8((0..10_000).map(|i| (i % 100) as i8).collect());
        let bytes: Vec<u8> = (0..10_000).map(|i| (i % 100) as u8).collect();
        assert_eq!(
            check(&long).sha256,
            <[u8; 32]>::from(Sha256::digest(&bytes))
        );
        assert_eq!(check(&DigitColumn::I8(vec![])).range, None);
        assert_eq!(range(&column), Some((-2, 300)));
        assert_eq!(range(&long), Some((0, 99)));
        assert_eq!(range(&DigitColumn::I64(vec![])), None);
    }
}
