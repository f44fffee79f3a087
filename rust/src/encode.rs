//! Mixed-radix tuple codes.
//!
//! A tuple (v_1, …, v_k) with domain indices i_j ∈ [0, r_j) has code
//! Σ_j i_j · Π_{l>j} r_l: the first attribute is the most significant digit,
//! so codes sort like tuples. When m = Π r_j ≤ 2^64 a code is one u64;
//! otherwise it is `limbs` u64 words, most significant first (rows of a
//! row-major (n, limbs) array compare lexicographically like the integers).

use crate::error::KernelError;
use rayon::prelude::*;

/// Rows per parallel work item.
const CHUNK: usize = 1 << 15;

/// Check that every column has `n` rows and there is one radix per column.
fn check_columns(cols: &[&[i64]], offsets: &[i64], radices: &[u64]) -> Result<usize, KernelError> {
    if cols.len() != radices.len() || offsets.len() != radices.len() {
        return Err(KernelError::Shape(format!(
            "{} columns, {} offsets, {} radices",
            cols.len(),
            offsets.len(),
            radices.len()
        )));
    }
    let n = cols.first().map_or(0, |c| c.len());
    if cols.iter().any(|c| c.len() != n) {
        return Err(KernelError::Shape("columns differ in length".into()));
    }
    if radices.contains(&0) {
        return Err(KernelError::Shape("a radix is zero".into()));
    }
    Ok(n)
}

/// Domain index of `value` for attribute `attr`, or the error naming it.
#[inline]
fn index(value: i64, offset: i64, radix: u64, attr: usize, row: usize) -> Result<u64, KernelError> {
    let idx = (value as i128) - (offset as i128);
    if idx < 0 || idx >= radix as i128 {
        return Err(KernelError::OutOfDomain {
            attribute: attr,
            row,
        });
    }
    Ok(idx as u64)
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

/// Encode k columns of raw values (index = value − offset) into u64 codes.
/// The caller guarantees Π radices ≤ 2^64.
pub fn encode_u64(
    cols: &[&[i64]],
    offsets: &[i64],
    radices: &[u64],
    out: &mut [u64],
) -> Result<(), KernelError> {
    let n = check_columns(cols, offsets, radices)?;
    if out.len() != n {
        return Err(KernelError::Shape("output length".into()));
    }
    if limbs_for(radices) != 1 {
        return Err(KernelError::Shape("domain does not fit in u64".into()));
    }
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            piece.fill(0);
            for (a, (col, (&off, &r))) in cols.iter().zip(offsets.iter().zip(radices)).enumerate() {
                let src = &col[base..base + piece.len()];
                for (i, (code, &v)) in piece.iter_mut().zip(src).enumerate() {
                    // Horner step; cannot overflow because the final code is < m ≤ 2^64.
                    *code = code
                        .wrapping_mul(r)
                        .wrapping_add(index(v, off, r, a, base + i)?);
                }
            }
            Ok(())
        })
}

/// Encode into `limbs` u64 words per row, most significant first; `out` is
/// row-major (n, limbs). Works for any m representable in `limbs` words.
pub fn encode_wide(
    cols: &[&[i64]],
    offsets: &[i64],
    radices: &[u64],
    limbs: usize,
    out: &mut [u64],
) -> Result<(), KernelError> {
    let n = check_columns(cols, offsets, radices)?;
    if out.len() != n * limbs || limbs_for(radices) > limbs {
        return Err(KernelError::Shape("output limbs".into()));
    }
    out.par_chunks_mut(CHUNK * limbs)
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            let mut acc: Vec<u64> = Vec::with_capacity(limbs + 1);
            for (i, row) in piece.chunks_mut(limbs).enumerate() {
                acc.clear();
                acc.push(0);
                for (a, col) in cols.iter().enumerate() {
                    let idx = index(col[base + i], offsets[a], radices[a], a, base + i)?;
                    mul_add(&mut acc, radices[a], idx);
                }
                acc.resize(limbs, 0);
                for (dst, &w) in row.iter_mut().zip(acc.iter().rev()) {
                    *dst = w;
                }
            }
            Ok(())
        })
}

/// Decode u64 codes into k columns of values (index + offset), written
/// column after column into `out` (length k·n).
pub fn decode_u64(
    codes: &[u64],
    offsets: &[i64],
    radices: &[u64],
    out: &mut [i64],
) -> Result<(), KernelError> {
    let n = codes.len();
    let k = radices.len();
    if out.len() != n * k || offsets.len() != k {
        return Err(KernelError::Shape("output length".into()));
    }
    // stride_j = Π_{l>j} r_l, and m = stride_0 · r_0 (in u128: m may be 2^64).
    let mut strides = vec![1u128; k];
    for j in (0..k.saturating_sub(1)).rev() {
        strides[j] = strides[j + 1] * radices[j + 1] as u128;
    }
    let m = strides.first().map_or(1, |&s| s * radices[0] as u128);
    if let Some(row) = codes.iter().position(|&c| c as u128 >= m) {
        return Err(KernelError::InvalidCode { row });
    }
    // Each attribute's digit is independent: (code / stride_j) mod r_j.
    for (j, col) in out.chunks_mut(n.max(1)).enumerate().take(k) {
        let (stride, r, off) = (strides[j] as u64, radices[j], offsets[j]);
        col.par_chunks_mut(CHUNK)
            .zip(codes.par_chunks(CHUNK))
            .for_each(|(dst, src)| {
                for (d, &c) in dst.iter_mut().zip(src) {
                    *d = ((c / stride) % r) as i64 + off;
                }
            });
    }
    Ok(())
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
    if limbs == 0 || codes.len() % limbs != 0 || offsets.len() != k {
        return Err(KernelError::Shape("code limbs".into()));
    }
    let n = codes.len() / limbs;
    if out.len() != n * k {
        return Err(KernelError::Shape("output length".into()));
    }
    // Row-major (n, k) digits first, in parallel over rows; then transpose.
    let mut digits = vec![0i64; n * k];
    digits
        .par_chunks_mut(CHUNK * k.max(1))
        .enumerate()
        .try_for_each(|(c, piece)| {
            let base = c * CHUNK;
            let mut num: Vec<u64> = Vec::with_capacity(limbs);
            for (i, row) in piece.chunks_mut(k.max(1)).enumerate() {
                num.clear();
                num.extend_from_slice(&codes[(base + i) * limbs..(base + i + 1) * limbs]);
                for j in (0..k).rev() {
                    row[j] = div_rem(&mut num, radices[j]) as i64 + offsets[j];
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

    fn roundtrip_u64(cols: Vec<Vec<i64>>, offsets: Vec<i64>, radices: Vec<u64>) -> Vec<u64> {
        let refs: Vec<&[i64]> = cols.iter().map(|c| c.as_slice()).collect();
        let n = cols[0].len();
        let mut codes = vec![0u64; n];
        encode_u64(&refs, &offsets, &radices, &mut codes).unwrap();
        let mut back = vec![0i64; n * cols.len()];
        decode_u64(&codes, &offsets, &radices, &mut back).unwrap();
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
        let refs: Vec<&[i64]> = cols.iter().map(|c| c.as_slice()).collect();
        let mut out = vec![0u64; 3];
        let err = encode_u64(&refs, &[0, 5], &[3, 4], &mut out).unwrap_err();
        assert_eq!(
            err,
            KernelError::OutOfDomain {
                attribute: 1,
                row: 1
            }
        );
        let neg = [vec![-1i64]];
        let refs: Vec<&[i64]> = neg.iter().map(|c| c.as_slice()).collect();
        let mut one = vec![0u64; 1];
        assert!(encode_u64(&refs, &[0], &[3], &mut one).is_err());
    }

    #[test]
    fn decode_rejects_codes_at_or_above_m() {
        let mut out = [0i64; 2];
        let err = decode_u64(&[5, 6], &[0, 0], &[3, 2], &mut out[..]).unwrap_err();
        // m = 6: code 5 is fine and code 6 is not (there are two columns, so out needs 4).
        assert!(matches!(err, KernelError::Shape(_)));
        let mut out = vec![0i64; 4];
        assert_eq!(
            decode_u64(&[5, 6], &[0, 0], &[3, 2], &mut out).unwrap_err(),
            KernelError::InvalidCode { row: 1 }
        );
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
        let refs: Vec<&[i64]> = cols.iter().map(|c| c.as_slice()).collect();
        let mut wide = vec![0u64; 8];
        encode_wide(&refs, &offsets, &radices, 2, &mut wide).unwrap();
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
        let refs: Vec<&[i64]> = cols.iter().map(|c| c.as_slice()).collect();
        let offsets = vec![0i64; k];
        let mut wide = vec![0u64; 3 * 7];
        encode_wide(&refs, &offsets, &radices, 7, &mut wide).unwrap();
        assert!(wide[..7].iter().all(|&w| w == 0));
        let mut back = vec![0i64; 3 * k];
        decode_wide(&wide, 7, &offsets, &radices, &mut back).unwrap();
        assert_eq!(back, cols.concat());
    }
}
