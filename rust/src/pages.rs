//! Parquet column chunks as privpub writes them, read straight into domain
//! indices: a file's footer (where each row group's chunks lie, their codec,
//! physical type and levels), a chunk's dictionary page (its PLAIN values) and
//! its data pages (their dictionary indices mapped to domain indices).
//!
//! What this reader decodes: v1 data pages of RLE_DICTIONARY (or
//! PLAIN_DICTIONARY) values, definition levels of at most one level, all
//! "defined", no repetition, Snappy or no compression, BYTE_ARRAY, INT32 or
//! INT64 values. Anything else is an error (`Malformed`), or in the footer a chunk
//! marked as not decoded: the caller reads it with pyarrow. Malformed input is
//! an error too, in time and memory bounded by the input's own length, never
//! a hang, a panic or an abort.
//!
//! # Whose Thrift
//! Footers and page headers (Thrift's compact protocol) are read by the
//! `polars-parquet-format` crate: the Parquet Thrift types and reader that
//! polars keeps for its own reader (a fork of `parquet-format-safe`, which was
//! written for untrusted files). Every list, set and map is charged 8 bytes an
//! element and every binary its length against a byte budget before any loop
//! or allocation; a boolean element reads its byte; nesting stops at 64. The
//! budget here is the bytes the input can hold (see `budget`), so a claim of
//! 2^31 − 1 elements in a header of a few bytes is an error at once.
//!
//! Not the other candidates (measured or read on their sources, 2026-11):
//! * `parquet` 60 (arrow-rs): its Thrift types are crate-private (only
//!   `SerializedPageReader` reads a page header), and its skip of an unknown
//!   field reads no byte for a boolean inside a list, set or map, where the
//!   compact protocol stores one byte each: a header of 12 bytes claiming a
//!   list of 2^31 − 1 booleans takes 5.6 s, and a header may hold many (a map
//!   of bool → bool the same). Guarding it would take a Thrift pre-parser of
//!   our own, which is what this module removes; it also needs Rust 1.88 and
//!   adds ~2 min to a clean release build and 19% to the extension.
//! * `parquet` 58's `parquet::format` (on the `thrift` crate 0.17): deprecated,
//!   removed in 59; its generated readers reserve `Vec::with_capacity(n)` for
//!   any claimed list size n (a negative one panics, a large one aborts) and
//!   `read_bytes` zeroes a claimed length of up to 4 GiB.
//! * `parquet-format-safe` 0.2.4 itself: bounded, but its last release is the
//!   crate polars forked; polars keeps the fork.
//!
//! Levels and dictionary indices are decoded by `hybrid` (no well-kept crate
//! exposes an RLE/bit-packed decoder as stable API: arrow-rs's is behind its
//! `experimental` feature), mapped through the remap in the same pass. Snappy
//! is undone by the `snap` crate, after the claimed length is held against
//! what the compressed bytes can expand to.
//!
//! # Citations
//! * Apache Parquet format: parquet.thrift (FileMetaData, PageHeader),
//!   Encodings.md (PLAIN, RLE/bit-packing hybrid, RLE_DICTIONARY).
//! * Apache Thrift, doc/specs/thrift-compact-protocol.md (a boolean element of
//!   a list, set or map is one byte).

use polars_parquet_format::thrift::protocol::{ReadThrift, TCompactInputProtocol};
use polars_parquet_format::{
    CompressionCodec, Encoding, FieldRepetitionType, FileMetaData, PageHeader, PageType, Type,
};

use crate::encode::DigitColumn;
use crate::error::{buffer, KernelError};
use crate::hybrid::{all_ones, decode_into};

fn malformed(what: &str) -> KernelError {
    KernelError::Malformed(format!("malformed Parquet column chunk: {what}"))
}

fn unreadable_footer(what: &str) -> KernelError {
    KernelError::Malformed(format!("unreadable Parquet footer: {what}"))
}

/// The most footer this reader parses (privpub's are a few KiB); a larger one
/// is left to pyarrow. It bounds what the footer's lists may reserve.
const MAX_FOOTER: usize = 16 << 20;

/// The byte budget for `len` bytes of Thrift: every list element is charged
/// 8 bytes and takes at least one, every struct 2 (and takes at least one),
/// every binary its length; so no well-formed input of `len` bytes spends
/// more than 10 × `len`, and no claim beyond that is read or reserved.
fn budget(len: usize) -> usize {
    len.saturating_mul(10).saturating_add(1024)
}

/// A Thrift struct of type `T` at the start of `data`, and the bytes it took.
fn read_struct<T: ReadThrift>(data: &[u8]) -> Result<(T, usize), String> {
    let mut rest = data;
    let mut protocol = TCompactInputProtocol::new(&mut rest, budget(data.len()));
    let value = T::read_from_in_protocol(&mut protocol).map_err(|e| e.to_string())?;
    Ok((value, data.len() - rest.len()))
}

/// The physical types whose dictionaries this reader decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Physical {
    ByteArray,
    Int32,
    Int64,
}

impl Physical {
    pub fn name(self) -> &'static str {
        match self {
            Physical::ByteArray => "BYTE_ARRAY",
            Physical::Int32 => "INT32",
            Physical::Int64 => "INT64",
        }
    }

    pub fn from_name(name: &str) -> Result<Self, KernelError> {
        match name {
            "BYTE_ARRAY" => Ok(Physical::ByteArray),
            "INT32" => Ok(Physical::Int32),
            "INT64" => Ok(Physical::Int64),
            _ => Err(KernelError::Parameter(format!(
                "physical type {name:?} is not BYTE_ARRAY, INT32 or INT64"
            ))),
        }
    }

    fn of(t: Type) -> Option<Self> {
        match t {
            Type::BYTE_ARRAY => Some(Physical::ByteArray),
            Type::INT32 => Some(Physical::Int32),
            Type::INT64 => Some(Physical::Int64),
            _ => None,
        }
    }
}

/// A column chunk this reader decodes: its bytes (`start`, `len`: from its
/// dictionary page to its last data page), whether they are Snappy-compressed,
/// its physical type, and whether it has definition levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkLayout {
    pub start: u64,
    pub len: u64,
    pub snappy: bool,
    pub physical: Physical,
    pub nullable: bool,
}

/// A file's footer as read from its last bytes.
#[derive(Debug)]
pub enum Footer {
    /// The footer needs this many bytes from the end of the file (more than given).
    NeedMore(usize),
    /// Per row group: its rows, and per column its chunk, or None when this
    /// reader does not decode it (another codec, type or level structure, no
    /// dictionary page, a chunk in another file or past the footer's start).
    Groups(Vec<(u64, Vec<Option<ChunkLayout>>)>),
}

/// The footer of a file of `file_size` bytes whose last `tail.len()` bytes are
/// `tail`. A footer that cannot be read (no magic, a length past the file,
/// malformed Thrift, a negative row count) is an error naming what is wrong;
/// a codec it does not know (99, say) only marks its chunks as not decoded.
pub fn footer(tail: &[u8], file_size: u64) -> Result<Footer, KernelError> {
    if tail.len() as u64 > file_size {
        return Err(unreadable_footer(&format!(
            "{} bytes given as the end of a file of {file_size}",
            tail.len()
        )));
    }
    let n = tail.len();
    if n < 8 || &tail[n - 4..] != b"PAR1" {
        return Err(unreadable_footer("the file does not end in PAR1"));
    }
    let len = u32::from_le_bytes([tail[n - 8], tail[n - 7], tail[n - 6], tail[n - 5]]) as usize;
    // The file holds its leading magic, the footer, its length and magic.
    let whole = len as u64 + 12;
    if whole > file_size {
        return Err(unreadable_footer(&format!(
            "a footer of {len} bytes in a file of {file_size}"
        )));
    }
    if len > MAX_FOOTER {
        return Err(unreadable_footer(&format!(
            "a footer of {len} bytes (this reader parses at most {MAX_FOOTER})"
        )));
    }
    if len + 8 > n {
        return Ok(Footer::NeedMore(len + 8));
    }
    let (meta, _) = read_struct::<FileMetaData>(&tail[n - 8 - len..n - 8])
        .map_err(|e| unreadable_footer(&e))?;
    let body_end = file_size - len as u64 - 8;
    let leaves = flat_leaves(&meta);
    meta.row_groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            let rows = u64::try_from(group.num_rows).map_err(|_| {
                unreadable_footer(&format!("row group {g} has a negative row count"))
            })?;
            let chunks = group
                .columns
                .iter()
                .enumerate()
                .map(|(j, chunk)| {
                    let leaf = leaves.as_ref().and_then(|l| l.get(j).copied()).flatten();
                    layout(chunk, leaf, body_end)
                })
                .collect();
            Ok((rows, chunks))
        })
        .collect::<Result<_, _>>()
        .map(Footer::Groups)
}

/// Each column's (physical type, nullable) when the schema is flat (a root
/// and its leaves: what privpub writes); None otherwise, and None for a leaf
/// that is repeated or of another type.
fn flat_leaves(meta: &FileMetaData) -> Option<Vec<Option<(Physical, bool)>>> {
    let (root, leaves) = meta.schema.split_first()?;
    if root.num_children != Some(i32::try_from(leaves.len()).ok()?)
        || leaves
            .iter()
            .any(|e| e.num_children.is_some_and(|c| c != 0))
    {
        return None;
    }
    Some(
        leaves
            .iter()
            .map(|e| {
                let nullable = match e.repetition_type {
                    Some(FieldRepetitionType::REQUIRED) => false,
                    Some(FieldRepetitionType::OPTIONAL) => true,
                    _ => return None,
                };
                Some((Physical::of(e.type_?)?, nullable))
            })
            .collect(),
    )
}

fn layout(
    chunk: &polars_parquet_format::ColumnChunk,
    leaf: Option<(Physical, bool)>,
    body_end: u64,
) -> Option<ChunkLayout> {
    let (physical, nullable) = leaf?;
    let meta = chunk.meta_data.as_ref()?;
    if chunk.file_path.is_some() || Physical::of(meta.type_) != Some(physical) {
        return None;
    }
    let snappy = match meta.codec {
        CompressionCodec::UNCOMPRESSED => false,
        CompressionCodec::SNAPPY => true,
        _ => return None,
    };
    // The dictionary page comes first; the leading magic takes bytes 0..4.
    let start = u64::try_from(meta.dictionary_page_offset?)
        .ok()
        .filter(|&s| s >= 4)?;
    let len = u64::try_from(meta.total_compressed_size).ok()?;
    if start.checked_add(len)? > body_end {
        return None;
    }
    Some(ChunkLayout {
        start,
        len,
        snappy,
        physical,
        nullable,
    })
}

/// A page's header (at the start of `data`) and where its body lies in `data`.
struct Page {
    header: PageHeader,
    body: std::ops::Range<usize>,
}

fn page(data: &[u8], at: usize) -> Result<Page, KernelError> {
    let (header, took) = read_struct::<PageHeader>(&data[at..])
        .map_err(|e| malformed(&format!("page header: {e}")))?;
    let start = at + took;
    let size = usize::try_from(header.compressed_page_size)
        .map_err(|_| malformed("a negative page size"))?;
    let end = start
        .checked_add(size)
        .filter(|&e| e <= data.len())
        .ok_or_else(|| {
            malformed(&format!(
                "a page of {size} bytes with {} left in the chunk",
                data.len() - start
            ))
        })?;
    Ok(Page {
        header,
        body: start..end,
    })
}

/// A page body as stored, or its Snappy block (Parquet's SNAPPY codec) undone
/// by the `snap` crate, which must say it holds `expected` bytes (the page
/// header's). Snappy's longest element (a copy of 64 bytes) takes at least 3
/// bytes, so a block expands at most 64/3 times: a larger claim is refused
/// before anything is allocated.
fn body<'a>(
    stored: &'a [u8],
    snappy: bool,
    expected: i32,
) -> Result<std::borrow::Cow<'a, [u8]>, KernelError> {
    if !snappy {
        return Ok(std::borrow::Cow::Borrowed(stored));
    }
    let snappy_error = |e: snap::Error| malformed(&format!("Snappy: {e}"));
    let len = snap::raw::decompress_len(stored).map_err(snappy_error)?;
    if usize::try_from(expected).ok() != Some(len) {
        return Err(malformed(&format!(
            "Snappy holds {len} bytes, the page header says {expected}"
        )));
    }
    if len > stored.len().saturating_mul(22) {
        return Err(malformed(&format!(
            "a Snappy page of {} bytes claims {len} bytes uncompressed",
            stored.len()
        )));
    }
    snap::raw::Decoder::new()
        .decompress_vec(stored)
        .map(std::borrow::Cow::Owned)
        .map_err(snappy_error)
}

/// A dictionary page's values, decoded from PLAIN.
#[derive(Debug, Clone, PartialEq)]
pub enum Dictionary {
    Strings(Vec<String>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
}

/// The first page of a column chunk (`data`: its bytes from the dictionary
/// page on), which must be a PLAIN dictionary page: where it ends in `data`
/// (its header and stored body identify the dictionary) and its values.
pub fn dictionary_page(
    data: &[u8],
    snappy: bool,
    physical: Physical,
) -> Result<(usize, Dictionary), KernelError> {
    let page = page(data, 0)?;
    let dict = match (&page.header.type_, &page.header.dictionary_page_header) {
        (&PageType::DICTIONARY_PAGE, Some(dict))
            if dict.encoding == Encoding::PLAIN || dict.encoding == Encoding::PLAIN_DICTIONARY =>
        {
            dict
        }
        _ => return Err(malformed("the first page is not a PLAIN dictionary page")),
    };
    let count = usize::try_from(dict.num_values)
        .map_err(|_| malformed("a dictionary page of a negative size"))?;
    let stored = &data[page.body.clone()];
    let values = plain(
        &body(stored, snappy, page.header.uncompressed_page_size)?,
        physical,
        count,
    )?;
    Ok((page.body.end, values))
}

/// `count` PLAIN values of `physical` type: little-endian integers, or byte
/// arrays as a 4-byte little-endian length and the bytes (UTF-8 here).
fn plain(body: &[u8], physical: Physical, count: usize) -> Result<Dictionary, KernelError> {
    let short = || malformed("a dictionary page holds fewer values than it says");
    fn fixed<const N: usize, T>(body: &[u8], count: usize, le: fn([u8; N]) -> T) -> Option<Vec<T>> {
        let bytes = body.get(..count.checked_mul(N)?)?;
        Some(
            bytes
                .chunks_exact(N)
                .map(|b| le(b.try_into().unwrap_or([0; N])))
                .collect(),
        )
    }
    match physical {
        Physical::Int32 => fixed(body, count, i32::from_le_bytes)
            .map(Dictionary::Int32)
            .ok_or_else(short),
        Physical::Int64 => fixed(body, count, i64::from_le_bytes)
            .map(Dictionary::Int64)
            .ok_or_else(short),
        Physical::ByteArray => {
            // Each value takes at least its 4-byte length: the count a header
            // claims reserves no more than the body can hold.
            let mut values = Vec::with_capacity(count.min(body.len() / 4));
            let mut pos = 0usize;
            for k in 0..count {
                let len = body.get(pos..pos + 4).ok_or_else(short)?;
                let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                let bytes = body
                    .get(pos + 4..(pos + 4).saturating_add(len))
                    .ok_or_else(short)?;
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| malformed(&format!("dictionary value {k} is not UTF-8")))?;
                values.push(text.to_owned());
                pos += 4 + len;
            }
            Ok(Dictionary::Strings(values))
        }
    }
}

fn narrow<T: TryFrom<i64>>(remap: &[i64]) -> Result<Vec<T>, KernelError> {
    remap
        .iter()
        .map(|&v| T::try_from(v).map_err(|_| malformed("a remapped index does not fit its width")))
        .collect()
}

/// The data pages of a column chunk (`data`: the bytes after its dictionary
/// page), as the domain indices of their `rows` values: each page's header,
/// its body (`snappy`: Snappy-compressed), its definition levels when the
/// column is `nullable` (all must say "defined": privpub writes no nulls),
/// then its RLE_DICTIONARY values through `remap` (dictionary position →
/// domain index), in the signed type of `width` bits. Anything else is an
/// error (the caller reads the chunk with another reader).
pub fn decode_data_pages(
    data: &[u8],
    snappy: bool,
    nullable: bool,
    remap: &[i64],
    width: u32,
    rows: usize,
) -> Result<DigitColumn, KernelError> {
    Ok(match width {
        8 => DigitColumn::I8(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        16 => DigitColumn::I16(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        32 => DigitColumn::I32(pages(data, snappy, nullable, &narrow(remap)?, rows)?),
        64 => DigitColumn::I64(pages(data, snappy, nullable, remap, rows)?),
        _ => {
            return Err(KernelError::Parameter(format!(
                "width {width} is not 8, 16, 32 or 64"
            )))
        }
    })
}

fn pages<T: Copy + Default>(
    data: &[u8],
    snappy: bool,
    nullable: bool,
    remap: &[T],
    rows: usize,
) -> Result<Vec<T>, KernelError> {
    let mut out = buffer(rows, T::default(), || "decoded indices".to_string())?;
    let (mut at, mut done) = (0usize, 0usize);
    while at < data.len() {
        let page = page(data, at)?;
        at = page.body.end;
        let header = match (&page.header.type_, &page.header.data_page_header) {
            (&PageType::DATA_PAGE, Some(h))
                if (h.encoding == Encoding::RLE_DICTIONARY
                    || h.encoding == Encoding::PLAIN_DICTIONARY)
                    && (!nullable || h.definition_level_encoding == Encoding::RLE) =>
            {
                h
            }
            _ => return Err(malformed("not a dictionary-encoded v1 data page")),
        };
        let values =
            usize::try_from(header.num_values).map_err(|_| malformed("a negative value count"))?;
        let end = done
            .checked_add(values)
            .filter(|&e| e <= rows)
            .ok_or_else(|| malformed("more values than rows"))?;
        let body = body(&data[page.body], snappy, page.header.uncompressed_page_size)?;
        let mut pos = 0usize;
        if nullable {
            let len = body
                .get(0..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or_else(|| malformed("truncated levels"))?;
            let levels = body
                .get(4..4usize.saturating_add(len))
                .ok_or_else(|| malformed("truncated levels"))?;
            // Read run by run: expanding them and testing each level took
            // an eighth of a straddling group's scan.
            if !all_ones(levels, values)? {
                return Err(malformed("a missing value"));
            }
            pos = 4 + len;
        }
        let bit_width = *body.get(pos).ok_or_else(|| malformed("no bit width"))?;
        decode_into(
            &body[pos + 1..],
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

#[cfg(test)]
mod tests;
