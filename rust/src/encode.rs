//! Mixed-radix tuple codes.
//!
//! A tuple (v_1, …, v_k) with domain indices i_j ∈ [0, r_j) has code
//! Σ_j i_j · Π_{l>j} r_l: the first attribute is the most significant digit,
//! so codes sort like tuples. When m = Π r_j ≤ 2^64 a code is one u64;
//! otherwise it is `limbs` u64 words, most significant first (rows of a
//! row-major (n, limbs) array compare lexicographically like the integers).

use crate::error::{check_radices, KernelError};
use rayon::prelude::*;
use strength_reduce::{StrengthReducedU32, StrengthReducedU64};

/// Rows per parallel work item.
pub(crate) const CHUNK: usize = 1 << 15;

/// Raw values of one column, in the integer type they arrived in (no copy).
#[derive(Clone, Copy)]
pub enum Values<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

/// One attribute's input: domain index = `remap[value]` when a remap table is
/// given (pandas category codes → domain order), else value − `offset`.
#[derive(Clone, Copy)]
pub struct Column<'a> {
    pub values: Values<'a>,
    pub offset: i64,
    pub remap: Option<&'a [i64]>,
}

impl Values<'_> {
    pub fn len(&self) -> usize {
        match self {
            Values::I8(v) => v.len(),
            Values::I16(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::U16(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Column<'_> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Domain indices of rows `start ..` into `out`, each checked against `radix`.
    fn indices(
        &self,
        start: usize,
        out: &mut [u64],
        radix: u64,
        attr: usize,
    ) -> Result<(), KernelError> {
        let end = start + out.len();
        match self.values {
            Values::I8(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::I16(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::I32(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::I64(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::U8(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::U16(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::U32(v) => self.fill(&v[start..end], start, out, radix, attr),
            Values::U64(v) => self.fill(&v[start..end], start, out, radix, attr),
        }
    }

    fn fill<T: Copy + Into<i128>>(
        &self,
        src: &[T],
        start: usize,
        out: &mut [u64],
        radix: u64,
        attr: usize,
    ) -> Result<(), KernelError> {
        for (i, (o, &v)) in out.iter_mut().zip(src).enumerate() {
            let v: i128 = v.into();
            let idx = match self.remap {
                Some(table) if (0..table.len() as i128).contains(&v) => {
                    i128::from(table[v as usize])
                }
                Some(_) => -1,
                None => v - i128::from(self.offset),
            };
            if idx < 0 || idx >= i128::from(radix) {
                return Err(KernelError::OutOfDomain {
                    attribute: attr,
                    row: start + i,
                });
            }
            *o = idx as u64;
        }
        Ok(())
    }
}

/// Check that every column has `n` rows and there is one radix per column.
fn check_columns(cols: &[Column<'_>], radices: &[u64]) -> Result<usize, KernelError> {
    if cols.len() != radices.len() {
        return Err(KernelError::Shape(format!(
            "{} columns but {} radices",
            cols.len(),
            radices.len()
        )));
    }
    let n = cols.first().map_or(0, |c| c.len());
    if let Some(j) = cols.iter().position(|c| c.len() != n) {
        return Err(KernelError::Shape(format!(
            "column {j} has {} rows, column 0 has {n}",
            cols[j].len()
        )));
    }
    check_radices(radices)?;
    Ok(n)
}

/// Check that decoded values offset .. offset + radix − 1 of every attribute
/// are i64 values (one offset per radix, no zero radix).
fn check_decoded(offsets: &[i64], radices: &[u64]) -> Result<(), KernelError> {
    if offsets.len() != radices.len() {
        return Err(KernelError::Shape(format!(
            "{} offsets for {} radices",
            offsets.len(),
            radices.len()
        )));
    }
    check_radices(radices)?;
    let past = offsets
        .iter()
        .zip(radices)
        .position(|(&o, &r)| i128::from(o) + i128::from(r) - 1 > i128::from(i64::MAX));
    match past {
        Some(j) => Err(KernelError::Capacity(format!(
            "attribute {j}: offset {} plus radix {} − 1 is past the largest int64",
            offsets[j], radices[j]
        ))),
        None => Ok(()),
    }
}

/// `Shape` error unless `limbs` u64 words hold every code below Π radices.
pub(crate) fn check_limbs(radices: &[u64], limbs: usize) -> Result<(), KernelError> {
    let needed = limbs_for(radices);
    if limbs < needed {
        return Err(KernelError::Shape(format!(
            "the domain needs {needed} limbs per code, got {limbs}"
        )));
    }
    Ok(())
}

/// Number of u64 limbs needed for codes below Π radices (1 when it fits in u64).
pub fn limbs_for(radices: &[u64]) -> usize {
    // Work in little-endian limbs: multiply the running product m by each radix.
    let mut m: Vec<u64> = vec![1];
    for &r in radices {
        mul_add(&mut m, r, 0);
    }
    // Codes go up to m − 1; m itself may need one more limb than m − 1 does.
    let mut top = m.len();
    if m[..top - 1].iter().all(|&w| w == 0) && m[top - 1] == 1 && top > 1 {
        top -= 1;
    }
    top
}

/// acc ← acc · r + add over little-endian limbs, growing acc on carry.
fn mul_add(acc: &mut Vec<u64>, r: u64, add: u64) {
    let mut carry = add as u128;
    for limb in acc.iter_mut() {
        let t = (*limb as u128) * (r as u128) + carry;
        *limb = t as u64;
        carry = t >> 64;
    }
    if carry > 0 {
        acc.push(carry as u64);
    }
}

/// Encode k columns into u64 codes. The caller guarantees Π radices ≤ 2^64.
pub fn encode_u64(
    cols: &[Column<'_>],
    radices: &[u64],
    out: &mut [u64],
) -> Result<(), KernelError> {
    let n = check_columns(cols, radices)?;
    if out.len() != n {
        return Err(KernelError::Shape(format!(
            "output of {} codes for {n} rows",
            out.len()
        )));
    }
    let needed = limbs_for(radices);
    if needed != 1 {
        return Err(KernelError::Shape(format!(
            "the domain needs {needed} u64 limbs per code; encode_u64 writes one (use encode_wide)"
        )));
    }
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            let mut idx = vec![0u64; piece.len()];
            piece.fill(0);
            for (a, (col, &r)) in cols.iter().zip(radices).enumerate() {
                col.indices(base, &mut idx, r, a)?;
                for (code, &x) in piece.iter_mut().zip(&idx) {
                    // Horner step; cannot overflow because the final code is < m ≤ 2^64.
                    *code = code.wrapping_mul(r).wrapping_add(x);
                }
            }
            Ok(())
        })
}

/// Encode into `limbs` u64 words per row, most significant first; `out` is
/// row-major (n, limbs). Works for any m representable in `limbs` words.
pub fn encode_wide(
    cols: &[Column<'_>],
    radices: &[u64],
    limbs: usize,
    out: &mut [u64],
) -> Result<(), KernelError> {
    let n = check_columns(cols, radices)?;
    check_limbs(radices, limbs)?;
    if n.checked_mul(limbs) != Some(out.len()) {
        return Err(KernelError::Shape(format!(
            "output of {} words for {n} rows × {limbs} limbs",
            out.len()
        )));
    }
    // limbs ≥ 1 (checked) and CHUNK · limbs may exceed the output: saturate.
    out.par_chunks_mut(CHUNK.saturating_mul(limbs))
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            let rows = piece.len() / limbs;
            let mut idx = vec![vec![0u64; rows]; cols.len()];
            for (a, (col, &r)) in cols.iter().zip(radices).enumerate() {
                col.indices(base, &mut idx[a], r, a)?;
            }
            let mut acc: Vec<u64> = Vec::with_capacity(limbs + 1);
            for (i, row) in piece.chunks_mut(limbs).enumerate() {
                acc.clear();
                acc.push(0);
                for (a, &r) in radices.iter().enumerate() {
                    mul_add(&mut acc, r, idx[a][i]);
                }
                acc.resize(limbs, 0);
                for (dst, &w) in row.iter_mut().zip(acc.iter().rev()) {
                    *dst = w;
                }
            }
            Ok(())
        })
}

/// One decoded attribute in the narrowest signed type that holds its values
/// (index + offset): decoded columns are written and read by pandas, so a
/// 72-value attribute costs one byte a row, not eight.
pub enum DigitColumn {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl DigitColumn {
    /// The values as i64 (tests and the wide path).
    pub fn to_i64(&self) -> Vec<i64> {
        match self {
            DigitColumn::I8(v) => v.iter().map(|&x| i64::from(x)).collect(),
            DigitColumn::I16(v) => v.iter().map(|&x| i64::from(x)).collect(),
            DigitColumn::I32(v) => v.iter().map(|&x| i64::from(x)).collect(),
            DigitColumn::I64(v) => v.clone(),
        }
    }
}

/// Conversion from a value known to fit (chosen by `narrowest`).
pub(crate) trait FromDigit: Copy + Default + Send + Sync {
    fn from_digit(v: i64) -> Self;
}
impl FromDigit for i8 {
    fn from_digit(v: i64) -> Self {
        v as i8
    }
}
impl FromDigit for i16 {
    fn from_digit(v: i64) -> Self {
        v as i16
    }
}
impl FromDigit for i32 {
    fn from_digit(v: i64) -> Self {
        v as i32
    }
}
impl FromDigit for i64 {
    fn from_digit(v: i64) -> Self {
        v
    }
}

/// One output column's rows of a chunk, in its own width.
enum DigitsMut<'a> {
    I8(&'a mut [i8]),
    I16(&'a mut [i16]),
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
}

impl DigitColumn {
    fn zeros(bits: u32, n: usize) -> Self {
        match bits {
            8 => DigitColumn::I8(vec![0; n]),
            16 => DigitColumn::I16(vec![0; n]),
            32 => DigitColumn::I32(vec![0; n]),
            _ => DigitColumn::I64(vec![0; n]),
        }
    }

    fn chunks_mut(&mut self, size: usize) -> Vec<DigitsMut<'_>> {
        match self {
            DigitColumn::I8(v) => v.chunks_mut(size).map(DigitsMut::I8).collect(),
            DigitColumn::I16(v) => v.chunks_mut(size).map(DigitsMut::I16).collect(),
            DigitColumn::I32(v) => v.chunks_mut(size).map(DigitsMut::I32).collect(),
            DigitColumn::I64(v) => v.chunks_mut(size).map(DigitsMut::I64).collect(),
        }
    }
}

impl DigitsMut<'_> {
    /// Rows `at ..` from digits plus `offset` (an i64 by the caller's check, so
    /// the wrapping sum is exact even when the digit alone is past i64::MAX).
    fn put(&mut self, at: usize, digits: &[u64], offset: i64) {
        fn fill<T: FromDigit>(dst: &mut [T], digits: &[u64], offset: i64) {
            for (d, &x) in dst.iter_mut().zip(digits) {
                *d = T::from_digit((x as i64).wrapping_add(offset));
            }
        }
        match self {
            DigitsMut::I8(v) => fill(&mut v[at..], digits, offset),
            DigitsMut::I16(v) => fill(&mut v[at..], digits, offset),
            DigitsMut::I32(v) => fill(&mut v[at..], digits, offset),
            DigitsMut::I64(v) => fill(&mut v[at..], digits, offset),
        }
    }
}

/// Rows whose digits are peeled together (the block's digits stay in L1).
const DECODE_BLOCK: usize = 1024;

/// Every attribute's digit of every code, least significant first by repeated
/// division: d_{k−1} = c mod r_{k−1}, c ← c div r_{k−1}, and so on, so each
/// code is read once and costs one division per attribute (each divisor fixed,
/// so strength-reduced to a multiplication, in 32 bits when `narrow`: the caller
/// sets it only when every code is below 2^32). What is left after the last
/// division is the leading digit (every code is below m, checked by the caller).
/// Parallel over chunks of rows; each column in its own width (`bits`).
fn peel_digits(
    codes: &[u64],
    radices: &[u64],
    offsets: &[i64],
    bits: &[u32],
    narrow: bool,
) -> Vec<DigitColumn> {
    let k = radices.len();
    let mut columns: Vec<DigitColumn> = bits
        .iter()
        .map(|&b| DigitColumn::zeros(b, codes.len()))
        .collect();
    if k == 0 || codes.is_empty() {
        return columns;
    }
    // Chunk c of every column, so that each task owns its rows of all k columns.
    let mut chunks: Vec<Vec<DigitsMut>> = Vec::new();
    for column in columns.iter_mut() {
        for (c, part) in column.chunks_mut(CHUNK).into_iter().enumerate() {
            if c == chunks.len() {
                chunks.push(Vec::with_capacity(k));
            }
            chunks[c].push(part);
        }
    }
    let wide: Vec<StrengthReducedU64> = radices
        .iter()
        .map(|&r| StrengthReducedU64::new(r))
        .collect();
    // Below m < 2^32 (narrow) every radix is a u32 too.
    let small: Vec<StrengthReducedU32> = if narrow {
        radices
            .iter()
            .map(|&r| StrengthReducedU32::new(r as u32))
            .collect()
    } else {
        Vec::new()
    };
    chunks
        .into_par_iter()
        .zip(codes.par_chunks(CHUNK))
        .for_each(|(mut outs, src)| {
            let mut digits = vec![0u64; k * DECODE_BLOCK];
            let mut rest = vec![0u64; DECODE_BLOCK];
            let mut rest32 = vec![0u32; DECODE_BLOCK];
            for (b, block) in src.chunks(DECODE_BLOCK).enumerate() {
                let len = block.len();
                if narrow {
                    for (r, &c) in rest32.iter_mut().zip(block) {
                        *r = c as u32;
                    }
                    for j in (1..k).rev() {
                        let (radix, out) = (small[j], &mut digits[j * DECODE_BLOCK..]);
                        for (r, d) in rest32[..len].iter_mut().zip(out.iter_mut()) {
                            let q = *r / radix;
                            *d = u64::from(*r - q * radix.get());
                            *r = q;
                        }
                    }
                    for (d, &r) in digits[..len].iter_mut().zip(&rest32[..len]) {
                        *d = u64::from(r);
                    }
                } else {
                    rest[..len].copy_from_slice(block);
                    for j in (1..k).rev() {
                        let (radix, out) = (wide[j], &mut digits[j * DECODE_BLOCK..]);
                        for (r, d) in rest[..len].iter_mut().zip(out.iter_mut()) {
                            let q = *r / radix;
                            *d = *r - q * radix.get();
                            *r = q;
                        }
                    }
                    digits[..len].copy_from_slice(&rest[..len]);
                }
                for (j, out) in outs.iter_mut().enumerate() {
                    let row = &digits[j * DECODE_BLOCK..j * DECODE_BLOCK + len];
                    out.put(b * DECODE_BLOCK, row, offsets[j]);
                }
            }
        });
    columns
}

/// Bits of the narrowest signed type holding offset .. offset + radix − 1.
pub(crate) fn narrowest(offset: i64, radix: u64) -> u32 {
    let (lo, hi) = (
        i128::from(offset),
        i128::from(offset) + i128::from(radix) - 1,
    );
    [8u32, 16, 32]
        .into_iter()
        .find(|&bits| lo >= -(1i128 << (bits - 1)) && hi < (1i128 << (bits - 1)))
        .unwrap_or(64)
}

/// Decode u64 codes into k columns of values (index + offset), each in the
/// narrowest signed integer type that holds it.
pub fn decode_u64(
    codes: &[u64],
    offsets: &[i64],
    radices: &[u64],
) -> Result<Vec<DigitColumn>, KernelError> {
    let k = radices.len();
    check_decoded(offsets, radices)?;
    // m = Π r_j, in u128: it may be 2^64 (every partial product is at most m).
    let limit = 1u128 << 64;
    let m = radices
        .iter()
        .try_fold(1u128, |acc, &r| {
            acc.checked_mul(u128::from(r)).filter(|&p| p <= limit)
        })
        .ok_or_else(|| {
            KernelError::Shape(format!(
                "the product of the {k} radices exceeds 2^64, so codes take more than one \
                 u64 limb (use decode_wide)"
            ))
        })?;
    if let Some(row) = codes.iter().position(|&c| c as u128 >= m) {
        return Err(KernelError::InvalidCode { row });
    }
    // Below 2^32 every code, and every radix that divides one, is a u32 (c < m).
    let narrow = m < 1u128 << 32;
    let bits: Vec<u32> = offsets
        .iter()
        .zip(radices)
        .map(|(&o, &r)| narrowest(o, r))
        .collect();
    Ok(peel_digits(codes, radices, offsets, &bits, narrow))
}

/// Decode row-major (n, limbs) wide codes into k columns, column after column.
pub fn decode_wide(
    codes: &[u64],
    limbs: usize,
    offsets: &[i64],
    radices: &[u64],
    out: &mut [i64],
) -> Result<(), KernelError> {
    let k = radices.len();
    if limbs == 0 || codes.len() % limbs != 0 {
        return Err(KernelError::Shape(format!(
            "{} words are not whole codes of {limbs} limbs",
            codes.len()
        )));
    }
    check_decoded(offsets, radices)?;
    let n = codes.len() / limbs;
    if n.checked_mul(k) != Some(out.len()) {
        return Err(KernelError::Shape(format!(
            "output of {} values for {n} rows × {k} attributes",
            out.len()
        )));
    }
    if k == 0 {
        // m = 1: the only code is 0 (the loop below sees no rows).
        if let Some(row) = codes.chunks(limbs).position(|w| w.iter().any(|&x| x != 0)) {
            return Err(KernelError::InvalidCode { row });
        }
        return Ok(());
    }
    // Row-major (n, k) digits first, in parallel over rows; then transpose.
    let mut digits = vec![0i64; out.len()];
    digits
        .par_chunks_mut(CHUNK.saturating_mul(k))
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            let mut num: Vec<u64> = Vec::with_capacity(limbs);
            for (i, row) in piece.chunks_mut(k).enumerate() {
                num.clear();
                num.extend_from_slice(&codes[(base + i) * limbs..(base + i + 1) * limbs]);
                for j in (0..k).rev() {
                    // Exact: digit + offset is an i64 (checked).
                    row[j] = (div_rem(&mut num, radices[j]) as i64).wrapping_add(offsets[j]);
                }
                // Whatever is left above the most significant digit means code ≥ m.
                if num.iter().any(|&w| w != 0) {
                    return Err(KernelError::InvalidCode { row: base + i });
                }
            }
            Ok(())
        })?;
    for j in 0..k {
        for i in 0..n {
            out[j * n + i] = digits[i * k + j];
        }
    }
    Ok(())
}

/// num ← num / r over most-significant-first limbs; returns num mod r.
fn div_rem(num: &mut [u64], r: u64) -> u64 {
    let mut rem: u128 = 0;
    for w in num.iter_mut() {
        let t = (rem << 64) | *w as u128;
        *w = (t / r as u128) as u64;
        rem = t % r as u128;
    }
    rem as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::message;

    fn columns<'a>(cols: &'a [Vec<i64>], offsets: &[i64]) -> Vec<Column<'a>> {
        cols.iter()
            .zip(offsets)
            .map(|(c, &offset)| Column {
                values: Values::I64(c),
                offset,
                remap: None,
            })
            .collect()
    }

    fn roundtrip_u64(cols: Vec<Vec<i64>>, offsets: Vec<i64>, radices: Vec<u64>) -> Vec<u64> {
        let n = cols[0].len();
        let mut codes = vec![0u64; n];
        encode_u64(&columns(&cols, &offsets), &radices, &mut codes).unwrap();
        let back: Vec<i64> = decode_u64(&codes, &offsets, &radices)
            .unwrap()
            .iter()
            .flat_map(|c| c.to_i64())
            .collect();
        assert_eq!(back, cols.concat());
        codes
    }

    #[test]
    fn codes_are_mixed_radix_with_first_attribute_most_significant() {
        let codes = roundtrip_u64(
            vec![vec![0, 1, 2], vec![10, 11, 10]],
            vec![0, 10],
            vec![3, 2],
        );
        assert_eq!(codes, vec![0, 3, 4]);
    }

    #[test]
    fn out_of_domain_names_attribute_and_row() {
        let cols = [vec![0i64, 1, 2], vec![5i64, 9, 5]];
        let mut out = vec![0u64; 3];
        let err = encode_u64(&columns(&cols, &[0, 5]), &[3, 4], &mut out).unwrap_err();
        assert_eq!(
            err,
            KernelError::OutOfDomain {
                attribute: 1,
                row: 1
            }
        );
        let neg = [vec![-1i64]];
        let mut one = vec![0u64; 1];
        assert!(encode_u64(&columns(&neg, &[0]), &[3], &mut one).is_err());
    }

    #[test]
    fn narrow_codes_with_a_remap_table() {
        // Category codes (i8) whose categories sit at domain indices 2, 0, 1.
        let codes: [i8; 4] = [0, 1, 2, 0];
        let remap = [2i64, 0, 1];
        let col = Column {
            values: Values::I8(&codes),
            offset: 0,
            remap: Some(&remap),
        };
        let mut out = vec![0u64; 4];
        encode_u64(&[col], &[3], &mut out).unwrap();
        assert_eq!(out, vec![2, 0, 1, 2]);
        // A category outside the domain (remap −1) and a code past the table fail.
        let bad = [2i64, -1, 1];
        let col = Column {
            values: Values::I8(&codes),
            offset: 0,
            remap: Some(&bad),
        };
        let err = encode_u64(&[col], &[3], &mut out).unwrap_err();
        assert_eq!(
            err,
            KernelError::OutOfDomain {
                attribute: 0,
                row: 1
            }
        );
        let past: [i8; 1] = [3];
        let col = Column {
            values: Values::I8(&past),
            offset: 0,
            remap: Some(&remap),
        };
        assert!(encode_u64(&[col], &[3], &mut out[..1]).is_err());
        // Unsigned 64-bit values beyond i64 are compared exactly, not wrapped.
        let big = [u64::MAX];
        let col = Column {
            values: Values::U64(&big),
            offset: 0,
            remap: None,
        };
        assert!(encode_u64(&[col], &[3], &mut out[..1]).is_err());
    }

    #[test]
    fn decode_rejects_codes_at_or_above_m() {
        // m = 6: code 5 is fine and code 6 is not.
        assert!(matches!(
            decode_u64(&[5, 6], &[0], &[3, 2]),
            Err(KernelError::Shape(_))
        ));
        assert!(matches!(
            decode_u64(&[5, 6], &[0, 0], &[3, 2]),
            Err(KernelError::InvalidCode { row: 1 })
        ));
    }

    #[test]
    fn peeled_digits_are_code_div_stride_mod_radix_in_32_and_64_bits() {
        // m = 3 · 5 · 7 · 40,000,000 = 4.2e9 < 2^32; 100,002 codes: several
        // chunks and a last partial block.
        let radices = [3u64, 5, 7, 40_000_000];
        let offsets = [-1i64, 0, 5, 0];
        let m: u64 = radices.iter().product();
        let codes: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % m)
            .chain([0, m - 1])
            .collect();
        let expected: Vec<Vec<i64>> = (0..4)
            .map(|j| {
                let stride: u64 = radices[j + 1..].iter().product();
                codes
                    .iter()
                    .map(|&c| ((c / stride) % radices[j]) as i64 + offsets[j])
                    .collect()
            })
            .collect();
        for narrow in [true, false] {
            let cols = peel_digits(&codes, &radices, &offsets, &[64; 4], narrow);
            let got: Vec<Vec<i64>> = cols.iter().map(DigitColumn::to_i64).collect();
            assert_eq!(got, expected, "narrow = {narrow}");
        }
    }

    #[test]
    fn decoded_columns_take_the_narrowest_type() {
        assert_eq!(narrowest(0, 128), 8);
        assert_eq!(narrowest(0, 129), 16);
        assert_eq!(narrowest(-128, 256), 8);
        assert_eq!(narrowest(17, 74), 8);
        assert_eq!(narrowest(1900, 200), 16);
        assert_eq!(narrowest(0, 1 << 31), 32);
        assert_eq!(narrowest(i64::MAX - 5, 5), 64);
        let cols = decode_u64(&[0, 5, 7], &[-3, 1000], &[4, 2]).unwrap();
        assert!(matches!(&cols[0], DigitColumn::I8(v) if v == &vec![-3, -1, 0]));
        assert!(matches!(&cols[1], DigitColumn::I16(v) if v == &vec![1000, 1001, 1001]));
    }

    #[test]
    fn limbs_for_counts_words_of_m_minus_one() {
        assert_eq!(limbs_for(&[2; 64]), 1); // m = 2^64, codes < 2^64
        assert_eq!(limbs_for(&[2; 65]), 2);
        assert_eq!(limbs_for(&[2; 128]), 2);
        assert_eq!(limbs_for(&[2; 129]), 3);
        assert_eq!(limbs_for(&[3, 5]), 1);
    }

    #[test]
    fn wide_agrees_with_u64_where_both_apply_and_roundtrips_past_2_128() {
        let cols = vec![
            vec![0i64, 6, 3, 6],
            vec![1i64, 0, 4, 4],
            vec![2i64, 0, 1, 2],
        ];
        let offsets = vec![0, 0, 0];
        let radices = vec![7u64, 5, 3];
        let codes = roundtrip_u64(cols.clone(), offsets.clone(), radices.clone());
        let mut wide = vec![0u64; 8];
        encode_wide(&columns(&cols, &offsets), &radices, 2, &mut wide).unwrap();
        let low: Vec<u64> = wide.chunks(2).map(|w| w[1]).collect();
        assert_eq!(low, codes);
        assert!(wide.chunks(2).all(|w| w[0] == 0));

        // 40 attributes of 1000 values: m = 10^120 > 2^398, seven limbs.
        let k = 40;
        let radices = vec![1000u64; k];
        assert_eq!(limbs_for(&radices), 7);
        let cols: Vec<Vec<i64>> = (0..k)
            .map(|a| vec![0, 999, (a * 37 % 1000) as i64])
            .collect();
        let offsets = vec![0i64; k];
        let mut wide = vec![0u64; 3 * 7];
        encode_wide(&columns(&cols, &offsets), &radices, 7, &mut wide).unwrap();
        assert!(wide[..7].iter().all(|&w| w == 0));
        let mut back = vec![0i64; 3 * k];
        decode_wide(&wide, 7, &offsets, &radices, &mut back).unwrap();
        assert_eq!(back, cols.concat());
    }

    #[test]
    fn decode_refuses_zero_radices_instead_of_dividing_by_zero() {
        // Once: "assertion failed: divisor > 0" (u64) and "attempt to divide by zero" (wide).
        for radices in [vec![0u64], vec![2, 0], vec![0, 3]] {
            let offsets = vec![0i64; radices.len()];
            let msg = message(
                decode_u64(&[], &offsets, &radices).err().unwrap(),
                "Parameter",
            );
            assert!(msg.starts_with("radix of attribute"), "{msg}");
            let mut out = vec![0i64; 2 * radices.len()];
            let msg = message(
                decode_wide(&[0, 0], 1, &offsets, &radices, &mut out).unwrap_err(),
                "Parameter",
            );
            assert!(msg.starts_with("radix of attribute"), "{msg}");
        }
        let msg = message(
            decode_u64(&[], &[0, 0], &[2, 0]).err().unwrap(),
            "Parameter",
        );
        assert_eq!(
            msg,
            "radix of attribute 1 is 0; every attribute needs at least one value"
        );
    }

    #[test]
    fn decode_u64_refuses_domains_past_2_64_and_handles_exactly_2_64() {
        // Π = 2^120 (and a product past u128 for k = 3 × 2^50 … 2^60) is refused.
        for radices in [vec![1u64 << 40; 3], vec![1u64 << 60; 3]] {
            let msg = message(decode_u64(&[5], &[0; 3], &radices).err().unwrap(), "Shape");
            assert!(
                msg.contains("exceeds 2^64") && msg.contains("decode_wide"),
                "{msg}"
            );
        }
        // m = 2^64 with a leading radix of 1: stride 2^64 once truncated to 0.
        let cols = decode_u64(&[5, u64::MAX], &[0, 0, 0], &[1, 1 << 32, 1 << 32]).unwrap();
        let back: Vec<Vec<i64>> = cols.iter().map(|c| c.to_i64()).collect();
        assert_eq!(
            back,
            vec![vec![0, 0], vec![0, (1 << 32) - 1], vec![5, (1 << 32) - 1]]
        );
    }

    #[test]
    fn decoded_values_must_be_int64() {
        let msg = message(
            decode_u64(&[1], &[i64::MAX], &[2]).err().unwrap(),
            "Capacity",
        );
        assert!(
            msg.contains("attribute 0") && msg.contains("largest int64"),
            "{msg}"
        );
        let mut out = vec![0i64; 1];
        assert!(decode_wide(&[1], 1, &[i64::MAX], &[2], &mut out).is_err());
        // The widest range that fits decodes exactly (no overflow on the way).
        let cols = decode_u64(&[0, u64::MAX], &[i64::MIN], &[u64::MAX])
            .err()
            .unwrap();
        assert_eq!(cols, KernelError::InvalidCode { row: 1 });
        let cols = decode_u64(&[0, u64::MAX - 1], &[i64::MIN], &[u64::MAX]).unwrap();
        assert_eq!(cols[0].to_i64(), vec![i64::MIN, i64::MAX - 1]);
        let mut out = vec![0i64; 2];
        decode_wide(&[0, u64::MAX], 1, &[i64::MIN], &[u64::MAX], &mut out).unwrap_err();
        decode_wide(&[0, 0, 0, u64::MAX], 2, &[i64::MIN], &[u64::MAX], &mut out).unwrap_err();
        decode_wide(&[0, u64::MAX - 1], 1, &[i64::MIN], &[u64::MAX], &mut out).unwrap();
        assert_eq!(out, vec![i64::MIN, i64::MAX - 1]);
    }

    #[test]
    fn decode_argument_lengths() {
        assert_eq!(
            message(decode_u64(&[1], &[0], &[3, 2]).err().unwrap(), "Shape"),
            "1 offsets for 2 radices"
        );
        let mut out = vec![0i64; 2];
        assert_eq!(
            message(
                decode_wide(&[1, 2, 3], 2, &[0], &[3], &mut out).unwrap_err(),
                "Shape"
            ),
            "3 words are not whole codes of 2 limbs"
        );
        assert!(decode_wide(&[1], 0, &[0], &[3], &mut out).is_err());
        assert_eq!(
            message(
                decode_wide(&[1], 1, &[0], &[3], &mut out).unwrap_err(),
                "Shape"
            ),
            "output of 2 values for 1 rows × 1 attributes"
        );
        // No attributes: m = 1, only code 0.
        assert!(decode_wide(&[0, 0], 1, &[], &[], &mut []).is_ok());
        assert_eq!(
            decode_wide(&[0, 4], 1, &[], &[], &mut []).unwrap_err(),
            KernelError::InvalidCode { row: 1 }
        );
    }

    #[test]
    fn encode_checks_name_what_arrived() {
        let a = vec![0i64, 1];
        let b = vec![0i64, 1, 2];
        let cols = [a.clone(), b];
        let mut out = vec![0u64; 2];
        assert_eq!(
            message(
                encode_u64(&columns(&cols, &[0, 0]), &[3, 3], &mut out).unwrap_err(),
                "Shape"
            ),
            "column 1 has 3 rows, column 0 has 2"
        );
        let one = [a.clone()];
        assert_eq!(
            message(
                encode_u64(&columns(&one, &[0]), &[3, 3], &mut out).unwrap_err(),
                "Shape"
            ),
            "1 columns but 2 radices"
        );
        assert!(message(
            encode_u64(&columns(&one, &[0]), &[0], &mut out).unwrap_err(),
            "Parameter"
        )
        .starts_with("radix of attribute 0 is 0"));
        assert_eq!(
            message(
                encode_u64(&columns(&one, &[0]), &[3], &mut out[..1]).unwrap_err(),
                "Shape"
            ),
            "output of 1 codes for 2 rows"
        );
        let two = [a.clone(), a];
        assert!(message(
            encode_u64(&columns(&two, &[0, 0]), &[1 << 40, 1 << 40], &mut out).unwrap_err(),
            "Shape"
        )
        .contains("needs 2 u64 limbs"));
        // Wide: too few limbs, zero limbs, and an output that is not rows × limbs.
        let mut wide = vec![0u64; 4];
        let cols = columns(&two, &[0, 0]);
        assert_eq!(
            message(
                encode_wide(&cols, &[1 << 40, 1 << 40], 1, &mut wide[..2]).unwrap_err(),
                "Shape"
            ),
            "the domain needs 2 limbs per code, got 1"
        );
        assert!(encode_wide(&cols, &[3, 3], 0, &mut []).is_err());
        assert_eq!(
            message(
                encode_wide(&cols, &[3, 3], usize::MAX, &mut wide).unwrap_err(),
                "Shape"
            ),
            format!("output of 4 words for 2 rows × {} limbs", usize::MAX)
        );
        assert!(encode_wide(&cols, &[3, 3], 2, &mut wide).is_ok());
    }
}
