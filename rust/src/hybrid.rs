//! A Parquet column chunk's dictionary-encoded data pages, decoded straight
//! into domain indices.
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

fn narrow<T: TryFrom<i64>>(remap: &[i64]) -> Result<Vec<T>, KernelError> {
    remap
        .iter()
        .map(|&v| T::try_from(v).map_err(|_| malformed("a remapped index does not fit its width")))
        .collect()
}

/// Fills `out` with the next `out.len()` values of `data`, mapped through `remap`.
fn decode_into<T: Copy>(
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

/// The data pages of a column chunk (the bytes after its dictionary page), as
/// the domain indices of their `rows` values: each page's header (Thrift
/// compact protocol), its body (`snappy`: Snappy-compressed), its definition
/// levels when the column is `nullable` (all must say "defined": privpub writes
/// no nulls), then its RLE_DICTIONARY values through `remap`, in the signed
/// type of `width` bits. Anything else is an error (the caller reads the chunk
/// with another reader).
///
/// # Citations
/// * Apache Parquet format, parquet.thrift (PageHeader, DataPageHeader) and
///   the Thrift compact protocol. Snappy is the `snap` crate's.
pub fn decode_data_pages(
    data: &[u8],
    snappy: bool,
    nullable: bool,
    remap: &[i64],
    width: u32,
    rows: usize,
) -> Result<DigitColumn, KernelError> {
    fn pages<T: Copy + Default>(
        data: &[u8],
        snappy: bool,
        nullable: bool,
        remap: &[T],
        rows: usize,
    ) -> Result<Vec<T>, KernelError> {
        let mut out = buffer(rows, T::default(), || "decoded indices".to_string())?;
        let (mut pos, mut done) = (0usize, 0usize);
        while pos < data.len() {
            let page = thrift::page_header(data, &mut pos)?;
            let body = data
                .get(pos..pos.saturating_add(page.compressed))
                .ok_or_else(|| malformed("truncated page"))?;
            pos += page.compressed;
            let body = if snappy {
                std::borrow::Cow::Owned(unsnappy(body, page.uncompressed)?)
            } else {
                std::borrow::Cow::Borrowed(body)
            };
            let end = done
                .checked_add(page.values)
                .filter(|&e| e <= rows)
                .ok_or_else(|| malformed("more values than rows"))?;
            let mut at = 0usize;
            if nullable {
                let len = body
                    .get(0..4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    .ok_or_else(|| malformed("truncated levels"))?;
                let levels = body
                    .get(4..4 + len)
                    .ok_or_else(|| malformed("truncated levels"))?;
                let mut defined = vec![0u8; page.values];
                decode_into(levels, 1, &mut defined, &[0u8, 1u8])?;
                if defined.iter().any(|&d| d != 1) {
                    return Err(malformed("a missing value"));
                }
                at = 4 + len;
            }
            let bit_width = *body.get(at).ok_or_else(|| malformed("no bit width"))?;
            decode_into(
                &body[at + 1..],
                u32::from(bit_width),
                &mut out[done..end],
                remap,
            )?;
            done = end;
        }
        if done != rows {
            return Err(malformed("fewer values than rows"));
        }
        Ok(out)
    }
    Ok(match width {
        8 => DigitColumn::I8(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        16 => DigitColumn::I16(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        32 => DigitColumn::I32(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        64 => DigitColumn::I64(pages(data, snappy, nullable, remap, rows)?),
        _ => {
            return Err(KernelError::Shape(format!(
                "width {width} is not 8, 16, 32 or 64"
            )))
        }
    })
}

/// Thrift's compact protocol, as far as a data page's header needs it.
mod thrift {
    use super::{malformed, uleb128};
    use crate::error::KernelError;

    pub(super) struct PageHeader {
        pub compressed: usize,
        pub uncompressed: usize,
        pub values: usize,
    }

    const DATA_PAGE: i64 = 0;
    const PLAIN_DICTIONARY: i64 = 2;
    const RLE_DICTIONARY: i64 = 8;

    /// A v1 data page's header with dictionary-encoded values (an error otherwise).
    pub(super) fn page_header(data: &[u8], pos: &mut usize) -> Result<PageHeader, KernelError> {
        let (mut kind, mut uncompressed, mut compressed) = (-1, -1, -1);
        let (mut values, mut encoding) = (-1, -1);
        let mut last = 0i64;
        while let Some((id, ty)) = field(data, pos, &mut last)? {
            match (id, ty) {
                (1, 5) => kind = zigzag(data, pos)?,
                (2, 5) => uncompressed = zigzag(data, pos)?,
                (3, 5) => compressed = zigzag(data, pos)?,
                (5, 12) => {
                    let mut inner = 0i64;
                    while let Some((id, ty)) = field(data, pos, &mut inner)? {
                        match (id, ty) {
                            (1, 5) => values = zigzag(data, pos)?,
                            (2, 5) => encoding = zigzag(data, pos)?,
                            _ => skip(data, pos, ty, 0)?,
                        }
                    }
                }
                _ => skip(data, pos, ty, 0)?,
            }
        }
        if kind != DATA_PAGE || !(encoding == PLAIN_DICTIONARY || encoding == RLE_DICTIONARY) {
            return Err(malformed("not a dictionary-encoded v1 data page"));
        }
        let size = |v: i64| usize::try_from(v).map_err(|_| malformed("negative size"));
        Ok(PageHeader {
            compressed: size(compressed)?,
            uncompressed: size(uncompressed)?,
            values: size(values)?,
        })
    }

    /// The next field's (id, type), or None at the struct's end.
    fn field(
        data: &[u8],
        pos: &mut usize,
        last: &mut i64,
    ) -> Result<Option<(i64, u8)>, KernelError> {
        let head = byte(data, pos)?;
        let ty = head & 0x0f;
        if ty == 0 {
            return Ok(None);
        }
        let delta = i64::from(head >> 4);
        *last = if delta != 0 {
            *last + delta
        } else {
            zigzag(data, pos)?
        };
        Ok(Some((*last, ty)))
    }

    fn byte(data: &[u8], pos: &mut usize) -> Result<u8, KernelError> {
        let b = *data
            .get(*pos)
            .ok_or_else(|| malformed("truncated page header"))?;
        *pos += 1;
        Ok(b)
    }

    fn zigzag(data: &[u8], pos: &mut usize) -> Result<i64, KernelError> {
        let v = uleb128(data, pos)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn skip(data: &[u8], pos: &mut usize, ty: u8, depth: u32) -> Result<(), KernelError> {
        if depth > 16 {
            return Err(malformed("page header nested too deep"));
        }
        match ty {
            1 | 2 => {}
            3 => *pos += 1,
            4..=6 => {
                uleb128(data, pos)?;
            }
            7 => *pos += 8,
            8 => {
                let len = usize::try_from(uleb128(data, pos)?).map_err(|_| malformed("binary"))?;
                *pos = pos.saturating_add(len);
            }
            9 | 10 => {
                let head = byte(data, pos)?;
                let size = if head >> 4 == 15 {
                    uleb128(data, pos)?
                } else {
                    u64::from(head >> 4)
                };
                for _ in 0..size {
                    skip(data, pos, head & 0x0f, depth + 1)?;
                }
            }
            12 => {
                let mut last = 0i64;
                while let Some((_, inner)) = field(data, pos, &mut last)? {
                    skip(data, pos, inner, depth + 1)?;
                }
            }
            _ => return Err(malformed("unknown Thrift type")),
        }
        if *pos > data.len() {
            return Err(malformed("truncated page header"));
        }
        Ok(())
    }
}

/// A page body in Snappy's block format (Parquet's SNAPPY codec), by the
/// `snap` crate; it must say it holds `expected` bytes (the page header's).
fn unsnappy(input: &[u8], expected: usize) -> Result<Vec<u8>, KernelError> {
    let len = snap::raw::decompress_len(input).map_err(|e| malformed(&format!("Snappy: {e}")))?;
    if len != expected {
        return Err(malformed("Snappy length differs from the page header's"));
    }
    snap::raw::Decoder::new()
        .decompress_vec(input)
        .map_err(|e| malformed(&format!("Snappy: {e}")))
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
        // An index past the dictionary at any width is an error.
        for bit_width in 6u32..=32 {
            let data = pack(&[1, 60, 2], bit_width);
            assert!(decode(&data, bit_width, 3, &remap).is_err(), "{bit_width}");
        }
    }

    #[test]
    fn snappy_pages_round_trip_and_refuse_a_wrong_length() {
        let text = b"abcdabcdabcdabcdabcd".repeat(10);
        let packed = snap::raw::Encoder::new().compress_vec(&text).unwrap();
        assert_eq!(unsnappy(&packed, text.len()).unwrap(), text);
        assert!(unsnappy(&packed, text.len() + 1).is_err()); // length disagrees
        assert!(unsnappy(&packed[..packed.len() - 1], text.len()).is_err()); // truncated
    }

    #[test]
    fn data_pages_decode_and_refuse_what_they_do_not_know() {
        // One uncompressed v1 data page: 16 values, levels (one RLE run of ones),
        // bit width 3, one bit-packed run.
        let values: Vec<u64> = (0..16).map(|i| i % 5).collect();
        let mut body = vec![2u8, 0, 0, 0, 16 << 1, 1, 3];
        body.extend(pack(&values, 3));
        let n = body.len() as u8;
        // PageHeader {1: 0, 2: n, 3: n, 5: {1: 16, 2: 8, 3: 3, 4: 3}}
        let mut data = vec![0x15, 0, 0x15, n << 1, 0x15, n << 1, 0x2c];
        data.extend([0x15, 32, 0x15, 16, 0x15, 6, 0x15, 6, 0, 0]);
        let header_len = data.len();
        data.extend(&body);
        let remap: Vec<i64> = (0..5).map(|i| 10 * i).collect();
        let got = decode_data_pages(&data, false, true, &remap, 8, 16)
            .unwrap()
            .to_i64();
        assert_eq!(
            got,
            values.iter().map(|&v| 10 * v as i64).collect::<Vec<_>>()
        );
        assert!(decode_data_pages(&data, false, true, &remap, 8, 17).is_err()); // rows
        let mut missing = data.clone();
        missing[header_len + 5] = 0; // the levels say "missing"
        assert!(decode_data_pages(&missing, false, true, &remap, 8, 16).is_err());
        let mut plain = data.clone();
        plain[10] = 0; // encoding PLAIN
        assert!(decode_data_pages(&plain, false, true, &remap, 8, 16).is_err());
        assert!(decode_data_pages(&data[..header_len + 3], false, true, &remap, 8, 16).is_err());
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let remap = [0i64, 1];
        assert!(decode(&[], 1, 1, &remap).is_err()); // no header
        assert!(decode(&[3], 1, 8, &remap).is_err()); // packed group without bytes
        assert!(decode(&[2 << 1, 5], 3, 2, &remap).is_err()); // index past the dictionary
        assert!(decode(&[0xff; 12], 1, 1, &remap).is_err()); // header past 64 bits
        assert!(decode(&[2, 1], 33, 1, &remap).is_err());
        assert!(decode_data_pages(&[], false, false, &[300], 8, 0).is_err()); // remap past i8
    }
}
