//! The RLE/bit-packing hybrid encoding of Parquet's levels and dictionary
//! indices, decoded straight into domain indices (the page reader, `pages`,
//! hands each data page's runs here).
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
//! above 32) is a `Malformed` error, never a panic: the caller then reads the page
//! with another reader.
//!
//! Kept by hand because no well-kept crate exposes this decoder as stable API
//! (arrow-rs's `parquet` has it behind its `experimental` feature only), and
//! mapping each index through the remap as it is unpacked is this module's
//! point: one pass, no intermediate index array.

use crate::error::KernelError;

fn malformed(what: &str) -> KernelError {
    KernelError::Malformed(format!("malformed RLE/bit-packed data: {what}"))
}

/// Fills `out` with the next `out.len()` values of `data`, mapped through `remap`.
pub(crate) fn decode_into<T: Copy>(
    data: &[u8],
    bit_width: u32,
    out: &mut [T],
    remap: &[T],
) -> Result<(), KernelError> {
    if bit_width > 32 {
        return Err(malformed("bit width above 32"));
    }
    let count = out.len();
    let lookup = |v: u64| -> Result<T, KernelError> {
        remap
            .get(v as usize)
            .copied()
            .ok_or_else(|| malformed("an index past the dictionary"))
    };
    let (mut pos, mut done) = (0usize, 0usize);
    let value_bytes = bit_width.div_ceil(8) as usize;
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
            unpack(bit_width, packed, &mut out[done..done + take], remap)?;
            done += take;
        }
    }
    Ok(())
}

/// Whether the next `count` values of `data`, one bit each, are all 1: the
/// definition levels of a page without a missing value, checked run by run
/// (an RLE run by its value, a bit-packed run by its bytes) without
/// expanding them. Malformed as `decode_into` finds it.
pub(crate) fn all_ones(data: &[u8], count: usize) -> Result<bool, KernelError> {
    let (mut pos, mut done) = (0usize, 0usize);
    while done < count {
        let header = uleb128(data, &mut pos)?;
        let runs = usize::try_from(header >> 1).map_err(|_| malformed("run too long"))?;
        let left = count - done;
        if header & 1 == 0 {
            let value = *data
                .get(pos)
                .ok_or_else(|| malformed("truncated RLE run"))?;
            pos += 1;
            if value > 1 {
                return Err(malformed("an index past the dictionary"));
            }
            if value == 0 && runs > 0 {
                return Ok(false);
            }
            done = done.saturating_add(runs).min(count);
        } else {
            // `runs` groups of 8 one-bit values: a byte each.
            let packed = data
                .get(pos..pos.saturating_add(runs))
                .ok_or_else(|| malformed("truncated bit-packed run"))?;
            pos += runs;
            let take = runs.saturating_mul(8).min(left);
            let (full, rest) = (take / 8, take % 8);
            if packed[..full].iter().any(|&b| b != 0xff)
                || (rest > 0 && packed[full] | (0xff << rest) != 0xff)
            {
                return Ok(false);
            }
            done += take;
        }
    }
    Ok(true)
}

/// `out.len()` values bit-packed `bit_width` bits each in `packed` (which
/// holds at least ⌈out.len() / 8⌉ groups of 8), mapped through `remap`.
/// Specialised per bit width, so that each group of 8 is unpacked by
/// constant shifts of one little-endian word per value.
fn unpack<T: Copy>(
    bit_width: u32,
    packed: &[u8],
    out: &mut [T],
    remap: &[T],
) -> Result<(), KernelError> {
    macro_rules! widths {
        ($($w:literal)*) => {
            match bit_width {
                $($w => unpack_width::<T, $w>(packed, out, remap),)*
                _ => Err(malformed("bit width above 32")),
            }
        };
    }
    widths!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
            31 32)
}

fn unpack_width<T: Copy, const W: usize>(
    packed: &[u8],
    out: &mut [T],
    remap: &[T],
) -> Result<(), KernelError> {
    let past = || malformed("an index past the dictionary");
    if W == 0 {
        // Zero bits a value: every value is index 0 (and the run holds no bytes).
        out.fill(*remap.first().ok_or_else(past)?);
        return Ok(());
    }
    let Some(last) = remap.len().checked_sub(1) else {
        return if out.is_empty() { Ok(()) } else { Err(past()) };
    };
    // Whole groups first when one fits a 128-bit word (W ≤ 16: dictionaries
    // of up to 65,536 values): a load a group, constant shifts, and the remap
    // read without a branch (an index past it is noted and refused after the
    // loop). Reading each value's bytes apart cost more than digesting them.
    let (mut packed, mut out) = (packed, out);
    if W <= 16 {
        let whole = (out.len() / 8).min(packed.len() / W);
        let (head, tail) = out.split_at_mut(whole * 8);
        let mut beyond = false;
        for (group, slots) in packed.chunks_exact(W).zip(head.chunks_exact_mut(8)) {
            let mut bytes = [0u8; 16];
            bytes[..W].copy_from_slice(group);
            let Ok(slots) = <&mut [T; 8]>::try_from(slots) else {
                continue; // (chunks_exact_mut(8): never)
            };
            // (An array of 8 and a 64-bit word when W ≤ 8: the shifts unrolled
            // to constants.)
            if W <= 8 {
                let word = u64::from_le_bytes([
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                ]);
                for (i, slot) in slots.iter_mut().enumerate() {
                    let v = (word >> (i * W)) as usize & ((1 << W) - 1);
                    beyond |= v > last;
                    *slot = remap[v.min(last)];
                }
            } else {
                let word = u128::from_le_bytes(bytes);
                for (i, slot) in slots.iter_mut().enumerate() {
                    let v = (word >> (i * W)) as usize & ((1 << W) - 1);
                    beyond |= v > last;
                    *slot = remap[v.min(last)];
                }
            }
        }
        if beyond {
            return Err(past());
        }
        (packed, out) = (&packed[whole * W..], tail);
    }
    let mask = u64::MAX >> (64 - W);
    // A group of 8 takes W bytes; 8 more of padding let every value be read
    // as one whole word.
    let mut staged = [0u8; 40];
    for (group, slots) in packed.chunks(W).zip(out.chunks_mut(8)) {
        staged[..group.len()].copy_from_slice(group);
        for (i, slot) in slots.iter_mut().enumerate() {
            let bit = i * W;
            let at = bit / 8;
            let word = u64::from_le_bytes([
                staged[at],
                staged[at + 1],
                staged[at + 2],
                staged[at + 3],
                staged[at + 4],
                staged[at + 5],
                staged[at + 6],
                staged[at + 7],
            ]);
            let v = (word >> (bit % 8)) & mask;
            *slot = *remap.get(v as usize).ok_or_else(past)?;
        }
    }
    Ok(())
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

    fn decode<T: Copy + Default>(
        data: &[u8],
        bit_width: u32,
        count: usize,
        remap: &[T],
    ) -> Result<Vec<T>, KernelError> {
        let mut out = vec![T::default(); count];
        decode_into(data, bit_width, &mut out, remap)?;
        Ok(out)
    }

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
    fn every_bit_width_unpacks_as_bit_by_bit() {
        // Against a reference that reads each value bit by bit, at every width
        // and at lengths that end inside a group of 8.
        let remap: Vec<i32> = (0..50).map(|i| 1000 - i).collect();
        let mut state = 12345u64;
        for bit_width in 0u32..=32 {
            for len in [1usize, 8, 13, 64, 203] {
                let limit = if bit_width == 0 {
                    1
                } else {
                    (1u64 << bit_width).min(50)
                };
                let values: Vec<u64> = (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 33) % limit
                    })
                    .collect();
                let data = pack(&values, bit_width);
                let packed = &data[1..];
                let bit = |i: usize| packed[i / 8] >> (i % 8) & 1;
                let want: Vec<i32> = (0..len)
                    .map(|v| {
                        let index = (0..bit_width as usize)
                            .map(|b| u64::from(bit(v * bit_width as usize + b)) << b)
                            .sum::<u64>();
                        remap[index as usize]
                    })
                    .collect();
                assert_eq!(
                    want,
                    values
                        .iter()
                        .map(|&v| remap[v as usize])
                        .collect::<Vec<_>>()
                );
                let got = decode(&data, bit_width, len, &remap).unwrap();
                assert_eq!(got, want, "bit width {bit_width}, {len} values");
            }
        }
        // An index past the dictionary at any width is an error, in a whole
        // group of 8 or in the last, partial one.
        for bit_width in 6u32..=32 {
            let data = pack(&[1, 60, 2], bit_width);
            assert!(decode(&data, bit_width, 3, &remap).is_err(), "{bit_width}");
            let mut values = vec![3u64; 19];
            values[10] = 50; // one past the remap's last
            let data = pack(&values, bit_width);
            assert!(decode(&data, bit_width, 19, &remap).is_err(), "{bit_width}");
        }
        let empty: [i32; 0] = [];
        assert!(decode(&pack(&[0; 8], 3), 3, 8, &empty).is_err());
    }

    #[test]
    fn all_ones_reads_the_runs_as_decoding_them_does() {
        // Against the decoded values, for runs of 1s and 0s, RLE and bit-packed,
        // at lengths that end inside a group and inside a run.
        let mut state = 99u64;
        for len in [1usize, 7, 8, 9, 64, 203] {
            for zeros in [0usize, 1, 3] {
                let mut values = vec![1u64; len];
                for _ in 0..zeros {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    values[(state >> 33) as usize % len] = 0;
                }
                let mut data = vec![(3 << 1) as u8, 1]; // RLE: three 1s
                data.extend(pack(&values, 1));
                data.extend([(5 << 1) as u8, 1]); // RLE: five 1s, past `count`
                let count = 3 + len + 2;
                let decoded = decode(&data, 1, count, &[0u8, 1]).unwrap();
                assert_eq!(
                    all_ones(&data, count).unwrap(),
                    decoded.iter().all(|&d| d == 1),
                    "{len} values, {zeros} zeros"
                );
            }
        }
        // Padding past `count` in the last group is not read as a value.
        assert!(all_ones(&[(1 << 1) | 1, 0b0000_0111], 3).unwrap());
        assert!(!all_ones(&[(1 << 1) | 1, 0b0000_0101], 3).unwrap());
        assert!(all_ones(&[(1 << 1) | 1, 0b0000_0001], 1).unwrap());
        assert!(!all_ones(&[(1 << 1) | 1, 0b1111_1110], 1).unwrap());
        assert!(!all_ones(&[4 << 1, 0], 2).unwrap()); // an RLE run of 0s
        assert!(all_ones(&[0, 0, 4 << 1, 1], 2).unwrap()); // an empty run of 0s
        assert!(all_ones(&[], 1).is_err()); // no header
        assert!(all_ones(&[3 << 1, 2], 3).is_err()); // a level past 1
        assert!(all_ones(&[(2 << 1) | 1, 0xff], 9).is_err()); // truncated
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let remap = [0i64, 1];
        assert!(decode(&[], 1, 1, &remap).is_err()); // no header
        assert!(decode(&[3], 1, 8, &remap).is_err()); // packed group without bytes
        assert!(decode(&[2 << 1, 5], 3, 2, &remap).is_err()); // index past the dictionary
        assert!(decode(&[0xff; 12], 1, 1, &remap).is_err()); // header past 64 bits
        assert!(decode(&[2, 1], 33, 1, &remap).is_err());
    }
}
