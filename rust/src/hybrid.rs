//! Parquet's RLE / bit-packed hybrid encoding of dictionary indices, decoded
//! straight into domain indices.
//!
//! A dictionary-encoded data page holds its values as runs: a ULEB128 header
//! whose low bit says which kind; `header >> 1` repeats of one value stored in
//! ⌈bit_width / 8⌉ little-endian bytes (RLE), or `header >> 1` groups of 8
//! values packed `bit_width` bits each, least significant bit first
//! (bit-packed). Each dictionary index is mapped through `remap` (dictionary
//! position → domain index) as it is decoded, so a row group's column comes out
//! as the digits privpub counts and digests, in one pass.
//!
//! # Citations
//! * Apache Parquet format, Encodings.md: "Run Length Encoding / Bit-Packing
//!   Hybrid (RLE = 3)" and "Dictionary Encoding (RLE_DICTIONARY = 8)".
//!
//! Malformed input (a truncated run, an index past the dictionary, a bit width
//! above 32) is a `Shape` error, never a panic: the caller then reads the page
//! with another reader.

use crate::encode::DigitColumn;
use crate::error::{buffer, KernelError};

fn malformed(what: &str) -> KernelError {
    KernelError::Shape(format!("malformed RLE/bit-packed data: {what}"))
}

/// `count` values of bit width `bit_width` from `data`, each mapped through
/// `remap` into the narrowest signed type of `width` bits (8, 16, 32 or 64).
pub fn decode_dictionary(
    data: &[u8],
    bit_width: u32,
    count: usize,
    remap: &[i64],
    width: u32,
) -> Result<DigitColumn, KernelError> {
    Ok(match width {
        8 => DigitColumn::I8(decode(data, bit_width, count, &narrow(remap)?)?),
        16 => DigitColumn::I16(decode(data, bit_width, count, &narrow(remap)?)?),
        32 => DigitColumn::I32(decode(data, bit_width, count, &narrow(remap)?)?),
        64 => DigitColumn::I64(decode(data, bit_width, count, remap)?),
        _ => {
            return Err(KernelError::Shape(format!(
                "width {width} is not 8, 16, 32 or 64"
            )))
        }
    })
}

fn narrow<T: TryFrom<i64>>(remap: &[i64]) -> Result<Vec<T>, KernelError> {
    remap
        .iter()
        .map(|&v| T::try_from(v).map_err(|_| malformed("a remapped index does not fit its width")))
        .collect()
}

/// The decoder: runs until `count` values are out (a last bit-packed group may
/// be padded past them).
fn decode<T: Copy + Default>(
    data: &[u8],
    bit_width: u32,
    count: usize,
    remap: &[T],
) -> Result<Vec<T>, KernelError> {
    if bit_width > 32 {
        return Err(malformed("bit width above 32"));
    }
    let mut out = buffer(count, T::default(), || "decoded indices".to_string())?;
    let lookup = |v: u64| -> Result<T, KernelError> {
        remap
            .get(v as usize)
            .copied()
            .ok_or_else(|| malformed("an index past the dictionary"))
    };
    let (mut pos, mut done) = (0usize, 0usize);
    let value_bytes = bit_width.div_ceil(8) as usize;
    let mask = if bit_width == 0 {
        0
    } else {
        u64::MAX >> (64 - bit_width)
    };
    while done < count {
        let header = uleb128(data, &mut pos)?;
        let runs = usize::try_from(header >> 1).map_err(|_| malformed("run too long"))?;
        if header & 1 == 0 {
            let bytes = data
                .get(pos..pos + value_bytes)
                .ok_or_else(|| malformed("truncated RLE run"))?;
            pos += value_bytes;
            let value = bytes
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            let fill = lookup(value)?;
            let end = done.saturating_add(runs).min(count);
            out[done..end].fill(fill);
            done = end;
        } else {
            let values = runs
                .checked_mul(8)
                .ok_or_else(|| malformed("run too long"))?;
            let len = runs
                .checked_mul(bit_width as usize)
                .ok_or_else(|| malformed("run too long"))?;
            let packed = data
                .get(pos..pos.saturating_add(len))
                .ok_or_else(|| malformed("truncated bit-packed run"))?;
            pos += len;
            let take = values.min(count - done);
            let (mut acc, mut bits, mut at) = (0u64, 0u32, 0usize);
            for slot in &mut out[done..done + take] {
                while bits < bit_width {
                    acc |= u64::from(packed[at]) << bits;
                    at += 1;
                    bits += 8;
                }
                *slot = lookup(acc & mask)?;
                acc >>= bit_width;
                bits -= bit_width;
            }
            done += take;
        }
    }
    Ok(out)
}

fn uleb128(data: &[u8], pos: &mut usize) -> Result<u64, KernelError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data
            .get(*pos)
            .ok_or_else(|| malformed("truncated run header"))?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(malformed("run header longer than 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values bit-packed least significant bit first, padded to groups of 8.
    fn pack(values: &[u64], bit_width: u32) -> Vec<u8> {
        let groups = values.len().div_ceil(8);
        let mut out = vec![(groups as u8) << 1 | 1];
        let (mut acc, mut bits) = (0u128, 0u32);
        for i in 0..groups * 8 {
            acc |= u128::from(*values.get(i).unwrap_or(&0)) << bits;
            bits += bit_width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        out
    }

    #[test]
    fn bit_packed_and_rle_runs_decode_through_the_remap() {
        let remap: Vec<i64> = (0..20).map(|i| 100 + i).collect();
        for bit_width in [1u32, 3, 4, 8, 12] {
            let limit = 1u64 << bit_width.min(4);
            let values: Vec<u64> = (0..16).map(|i| (i * 7) % limit).collect();
            let mut data = pack(&values, bit_width);
            data.extend([9 << 1, 1]); // RLE: 9 repeats of 1
            if bit_width > 8 {
                data.push(0); // two bytes per value
            }
            let tail: Vec<u64> = (0..13).map(|i| (i * 3) % limit).collect();
            data.extend(pack(&tail, bit_width)); // the last group padded past the count
            let got = decode(&data, bit_width, 16 + 9 + 13, &remap).unwrap();
            let mut want: Vec<i64> = values.iter().map(|&v| 100 + v as i64).collect();
            want.extend([101; 9]);
            want.extend(tail.iter().map(|&v| 100 + v as i64));
            assert_eq!(got, want, "bit width {bit_width}");
        }
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let remap = [0i64, 1];
        assert!(decode(&[], 1, 1, &remap).is_err()); // no header
        assert!(decode(&[3], 1, 8, &remap).is_err()); // packed group without bytes
        assert!(decode(&[2 << 1, 5], 3, 2, &remap).is_err()); // index past the dictionary
        assert!(decode(&[0xff; 12], 1, 1, &remap).is_err()); // header past 64 bits
        assert!(decode(&[2, 1], 33, 1, &remap).is_err());
        assert!(decode_dictionary(&[2, 1], 1, 1, &[300], 8).is_err()); // remap past i8
    }
}
