//! The page reader against well-formed chunks and against hostile headers:
//! every case ends in the right values or an error, within a second.

use super::*;
use std::time::{Duration, Instant};

/// ULEB128.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn zigzag(v: i64, out: &mut Vec<u8>) {
    varint(((v << 1) ^ (v >> 63)) as u64, out);
}

/// An i32 field (compact protocol: delta 1 from the previous id).
fn i32_field(v: i64, out: &mut Vec<u8>) {
    out.push(0x15);
    zigzag(v, out);
}

/// A page header: type, sizes, the page's own header as field 5 (data) or 7
/// (dictionary), then `extra`, an unknown field: its Thrift type and its
/// value's bytes (written with id 100, in the long form).
fn header(kind: i64, uncompressed: usize, compressed: usize, extra: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    i32_field(kind, &mut h); // 1: type
    i32_field(uncompressed as i64, &mut h); // 2
    i32_field(compressed as i64, &mut h); // 3
    if kind == 2 {
        h.push(0x4c); // 7: DictionaryPageHeader
        i32_field(3, &mut h); // num_values 3
        i32_field(0, &mut h); // encoding PLAIN
        h.push(0);
    } else {
        h.push(0x2c); // 5: DataPageHeader
        i32_field(16, &mut h); // num_values
        i32_field(8, &mut h); // RLE_DICTIONARY
        i32_field(3, &mut h); // levels RLE
        i32_field(3, &mut h);
        h.push(0);
    }
    if let Some((ty, value)) = extra.split_first() {
        h.extend([*ty, 0xc8, 0x01]); // id 100 (zigzag 200)
        h.extend(value);
    }
    h.push(0);
    h
}

/// A dictionary page (3 strings) and one data page of 16 values: levels (one
/// RLE run of ones) and one bit-packed run at 2 bits.
fn chunk(extra_dict: &[u8], extra_data: &[u8]) -> (Vec<u8>, Vec<u64>) {
    let mut dict = Vec::new();
    for s in ["a", "bb", "ccc"] {
        dict.extend((s.len() as u32).to_le_bytes());
        dict.extend(s.as_bytes());
    }
    let values: Vec<u64> = (0..16).map(|i| i % 3).collect();
    let mut body = vec![2u8, 0, 0, 0, 16 << 1, 1, 2, (2 << 1) | 1];
    for four in values.chunks(4) {
        body.push(
            four.iter()
                .enumerate()
                .fold(0u8, |a, (i, &v)| a | (v as u8) << (2 * i)),
        );
    }
    let mut data = header(2, dict.len(), dict.len(), extra_dict);
    data.extend(&dict);
    data.extend(header(0, body.len(), body.len(), extra_data));
    data.extend(&body);
    (data, values)
}

/// The data pages of a chunk from `chunk` (after its dictionary page).
fn decoded(data: &[u8]) -> Result<Vec<i64>, KernelError> {
    let (end, _) = dictionary_page(data, false, Physical::ByteArray)?;
    let remap = [10i64, 20, 30];
    decode_data_pages(&data[end..], false, true, &remap, 8, 16).map(|c| c.to_i64())
}

fn want(values: &[u64]) -> Vec<i64> {
    values.iter().map(|&v| 10 * (v as i64 + 1)).collect()
}

#[test]
fn a_chunk_decodes_its_dictionary_and_data_pages() {
    let (data, values) = chunk(&[], &[]);
    let (end, dict) = dictionary_page(&data, false, Physical::ByteArray).unwrap();
    assert_eq!(end, header(2, 18, 18, &[]).len() + 18);
    let strings = ["a", "bb", "ccc"].map(String::from).to_vec();
    assert_eq!(dict, Dictionary::Strings(strings));
    assert_eq!(decoded(&data).unwrap(), want(&values));
    let remap = [10i64, 20, 30];
    assert!(decode_data_pages(&data[end..], false, true, &remap, 8, 17).is_err()); // rows
    let mut missing = data.clone();
    missing[data.len() - 12 + 5] = 0; // the levels' RLE run of zeros: "missing"
    assert!(decoded(&missing).is_err());
    assert!(decoded(&data[..data.len() - 1]).is_err()); // truncated page
    let mut plain = data.clone();
    let at = end + 10; // the data page's encoding (RLE_DICTIONARY) -> PLAIN
    assert_eq!(plain[at - 1..=at], [0x15, 16]);
    plain[at] = 0;
    assert!(decoded(&plain).is_err());
    assert!(decode_data_pages(&[], false, false, &[300], 8, 0).is_err()); // remap past i8
                                                                          // Integer dictionaries.
    let mut ints = header(2, 24, 24, &[]);
    for v in [7i64, -1, 1 << 40] {
        ints.extend(v.to_le_bytes());
    }
    let (_, dict) = dictionary_page(&ints, false, Physical::Int64).unwrap();
    assert_eq!(dict, Dictionary::Int64(vec![7, -1, 1 << 40]));
    let (_, dict) = dictionary_page(&ints, false, Physical::Int32).unwrap(); // 3 of the 6 i32
    assert_eq!(dict, Dictionary::Int32(vec![7, 0, -1]));
    assert!(dictionary_page(&ints[..ints.len() - 1], false, Physical::Int64).is_err());
}

#[test]
fn snappy_pages_decode_and_a_huge_claim_is_refused_before_allocating() {
    let (plain_chunk, values) = chunk(&[], &[]);
    // The same pages Snappy-compressed.
    let mut data = Vec::new();
    let mut pos = 0;
    let mut ends = Vec::new();
    for kind in [2i64, 0] {
        let n = if kind == 2 { 18 } else { 12 };
        let h = header(kind, n, n, &[]);
        let raw = &plain_chunk[pos + h.len()..pos + h.len() + n];
        let packed = snap::raw::Encoder::new().compress_vec(raw).unwrap();
        data.extend(header(kind, n, packed.len(), &[]));
        data.extend(&packed);
        ends.push(data.len());
        pos += h.len() + n;
    }
    let (end, _) = dictionary_page(&data, true, Physical::ByteArray).unwrap();
    assert_eq!(end, ends[0]);
    let remap = [10i64, 20, 30];
    let got = decode_data_pages(&data[end..], true, true, &remap, 8, 16).unwrap();
    assert_eq!(got.to_i64(), want(&values));
    // A Snappy block whose preamble claims 2^32 − 1 bytes from 6 bytes.
    let mut huge = header(2, 0x7fff_ffff, 6, &[]);
    huge.extend([0xff, 0xff, 0xff, 0xff, 0x0f, 0]);
    let err = dictionary_page(&huge, true, Physical::ByteArray).unwrap_err();
    assert!(err.to_string().contains("Snappy"), "{err}");
    let mut huge = header(2, 0x0fff_ffff, 6, &[]);
    huge.extend([0xff, 0xff, 0xff, 0x7f, 0, 0]);
    let err = dictionary_page(&huge, true, Physical::ByteArray).unwrap_err();
    assert!(err.to_string().contains("claims 268435455 bytes"), "{err}");
    // The most a block can expand (64 bytes a 3-byte copy) is accepted.
    let zeros = vec![0u8; 1 << 20];
    let packed = snap::raw::Encoder::new().compress_vec(&zeros).unwrap();
    assert_eq!(&body(&packed, true, 1 << 20).unwrap()[..], &zeros[..]);
    assert!(body(&packed, true, (1 << 20) + 1).is_err()); // the header disagrees
    assert!(body(&packed[..packed.len() - 1], true, 1 << 20).is_err()); // truncated
}

/// Each hostile header, in the dictionary page and in the data page: an error
/// or the right values, within a second.
fn bounded(extra: &[u8], what: &str) -> usize {
    let mut errors = 0;
    for (d, p) in [(extra, &[][..]), (&[][..], extra)] {
        let (data, values) = chunk(d, p);
        let t = Instant::now();
        let found = decoded(&data);
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "{what}: {:?}",
            t.elapsed()
        );
        match found {
            Ok(found) => assert_eq!(found, want(&values), "{what}"),
            Err(_) => errors += 1,
        }
    }
    errors
}

#[test]
fn unknown_fields_of_every_thrift_type_are_passed_over() {
    // (type, bytes of its value)
    let mut cases: Vec<(u8, Vec<u8>)> = vec![
        (1, vec![]),                           // bool true
        (2, vec![]),                           // bool false
        (3, vec![7]),                          // byte
        (4, vec![0x80, 0x01]),                 // i16
        (5, vec![0x81, 0x01]),                 // i32
        (6, vec![0xff, 0xff, 1]),              // i64
        (7, vec![0; 8]),                       // double
        (8, vec![3, b'a', b'b', b'c']),        // binary
        (9, vec![0x35, 2, 4, 6]),              // list of 3 i32
        (10, vec![0x23, 1, 2]),                // set of 2 bytes
        (11, vec![2, 0x55, 2, 4, 6, 8]),       // map i32 -> i32
        (12, vec![0x15, 4, 0x18, 1, b'x', 0]), // struct
        (9, vec![0x31, 1, 1, 1]),              // list of 3 bools, a byte each
        (11, vec![2, 0x11, 1, 1, 1, 1]),       // map bool -> bool
    ];
    // A list of 12 structs, each holding a list of two bools.
    let mut nested = vec![0xfc, 12];
    for _ in 0..12 {
        nested.extend([0x19, 0x21, 1, 1, 0]);
    }
    cases.push((9, nested));
    for (ty, value) in cases {
        let mut extra = vec![ty];
        extra.extend(value);
        let (data, values) = chunk(&extra, &extra);
        assert_eq!(
            decoded(&data).unwrap(),
            want(&values),
            "an unknown field of type {ty} is passed over"
        );
        assert_eq!(bounded(&extra, &format!("type {ty}")), 0);
    }
}

#[test]
fn hostile_headers_are_errors_at_once() {
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // Lists and sets claiming 2^62, 2^40 and 2^31 − 1 elements of each type.
    for n in [1u64 << 62, (1 << 31) - 1, 1 << 40] {
        for ty in 1u8..=13 {
            for collection in [9u8, 10] {
                let mut e = vec![collection, 0xf0 | ty];
                varint(n, &mut e);
                e.extend([1u8; 8]);
                cases.push(("a huge list", e));
            }
        }
        for kv in [0x11u8, 0x12, 0x21, 0x22, 0x55, 0xcc] {
            let mut map = vec![0x0b];
            varint(n, &mut map);
            map.extend([kv, 1, 1]);
            cases.push(("a huge map", map));
        }
        let mut binary = vec![0x08];
        varint(n, &mut binary);
        binary.extend(b"abc");
        cases.push(("a huge string", binary));
    }
    // Nesting: 10,000 structs, lists and maps in each other.
    for (open, inner) in [
        (vec![0x0c], vec![0x1c]),
        (vec![0x09, 0x1c], vec![0x1c]),
        (vec![0x09], vec![0x19]),
        (vec![0x0b, 1], vec![0xbb, 1]),
    ] {
        let mut e = open;
        for _ in 0..10_000 {
            e.extend(&inner);
        }
        cases.push(("deep nesting", e));
    }
    let mut long = vec![0x05];
    long.extend([0xff; 64]);
    cases.push(("a varint without end", long));
    cases.push(("an unknown type", vec![0x0e, 0, 0]));
    for (what, extra) in &cases {
        assert_eq!(bounded(extra, what), 2, "{what}: {extra:02x?}");
    }
}

#[test]
fn a_known_binary_claiming_huge_lengths_is_an_error_at_once() {
    // Statistics (DataPageHeader field 5) whose max (field 1) claims 2^40 bytes.
    let (data, _) = chunk(&[], &[]);
    let (end, _) = dictionary_page(&data, false, Physical::ByteArray).unwrap();
    let mut page = data[end..].to_vec();
    let at = page.iter().position(|&b| b == 0x2c).unwrap() + 9; // inside DataPageHeader
    let mut stats = vec![0x1c, 0x18];
    varint(1 << 40, &mut stats);
    stats.extend(b"abc\0");
    page.splice(at..at, stats);
    let t = Instant::now();
    assert!(decode_data_pages(&page, false, true, &[1, 2, 3], 8, 16).is_err());
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn sizes_past_the_chunk_are_errors() {
    let (data, _) = chunk(&[], &[]);
    let h = header(2, 18, 18, &[]).len();
    for (compressed, uncompressed) in [(1 << 30, 18), (18, 0x7fff_ffff), (-1, 18), (18, -5)] {
        let mut bad = Vec::new();
        i32_field(2, &mut bad);
        i32_field(uncompressed, &mut bad);
        i32_field(compressed, &mut bad);
        bad.extend([0x4c, 0x15, 6, 0x15, 0, 0, 0]);
        bad.extend(&data[h..]);
        let t = Instant::now();
        let plain = dictionary_page(&bad, false, Physical::ByteArray);
        let snappy = dictionary_page(&bad, true, Physical::ByteArray);
        assert!(t.elapsed() < Duration::from_secs(1));
        assert!(snappy.is_err());
        assert_eq!(plain.is_err(), compressed != 18, "{compressed}");
    }
    // A dictionary that claims more values than it holds, or invalid UTF-8.
    let mut short = header(2, 18, 18, &[]);
    let at = short.len() - 5; // num_values 3 -> 2^30 (zigzag 2^31)
    short.splice(at..at + 1, [0x80, 0x80, 0x80, 0x80, 0x08]);
    short.extend(&data[h..]);
    assert!(dictionary_page(&short, false, Physical::ByteArray).is_err());
    assert!(dictionary_page(&short, false, Physical::Int64).is_err());
    let mut latin = data.clone();
    latin[h + 4] = 0xff;
    let err = dictionary_page(&latin, false, Physical::ByteArray).unwrap_err();
    assert!(
        err.to_string().contains("dictionary value 0 is not UTF-8"),
        "{err}"
    );
}

/// A footer (FileMetaData, its length, PAR1) for one row group of `rows` rows
/// and one column chunk per (codec, dictionary offset) at 4.., written by the
/// crate's own writer.
fn footer_bytes(chunks: &[(CompressionCodec, Option<i64>)], rows: i64) -> Vec<u8> {
    use polars_parquet_format::thrift::protocol::TCompactOutputProtocol;
    use polars_parquet_format::{ColumnChunk, ColumnMetaData, RowGroup, SchemaElement};
    let element = |name: &str, children: Option<i32>, t: Option<Type>| SchemaElement {
        type_: t,
        type_length: None,
        repetition_type: Some(FieldRepetitionType::REQUIRED),
        name: name.to_string(),
        num_children: children,
        converted_type: None,
        scale: None,
        precision: None,
        field_id: None,
        logical_type: None,
    };
    let mut schema = vec![element("root", Some(chunks.len() as i32), None)];
    let columns = chunks
        .iter()
        .enumerate()
        .map(|(j, (codec, dict))| {
            schema.push(element(&format!("c{j}"), None, Some(Type::INT64)));
            ColumnChunk {
                file_path: None,
                file_offset: 4,
                meta_data: Some(ColumnMetaData {
                    type_: Type::INT64,
                    encodings: vec![Encoding::PLAIN],
                    path_in_schema: vec![format!("c{j}")],
                    codec: *codec,
                    num_values: rows,
                    total_uncompressed_size: 10,
                    total_compressed_size: 10,
                    key_value_metadata: None,
                    data_page_offset: 14,
                    index_page_offset: None,
                    dictionary_page_offset: *dict,
                    statistics: None,
                    encoding_stats: None,
                    bloom_filter_offset: None,
                    bloom_filter_length: None,
                    size_statistics: None,
                }),
                offset_index_offset: None,
                offset_index_length: None,
                column_index_offset: None,
                column_index_length: None,
                crypto_metadata: None,
                encrypted_column_metadata: None,
            }
        })
        .collect();
    let meta = FileMetaData {
        version: 1,
        schema,
        num_rows: rows,
        row_groups: vec![RowGroup {
            columns,
            total_byte_size: 10,
            num_rows: rows,
            sorting_columns: None,
            file_offset: None,
            total_compressed_size: None,
            ordinal: None,
        }],
        key_value_metadata: None,
        created_by: None,
        column_orders: None,
        encryption_algorithm: None,
        footer_signing_key_metadata: None,
    };
    let mut out = Vec::new();
    meta.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut out))
        .unwrap();
    let len = out.len() as u32;
    out.extend(len.to_le_bytes());
    out.extend(b"PAR1");
    out
}

#[test]
fn a_footer_gives_each_chunk_it_decodes_and_marks_the_rest() {
    let tail = footer_bytes(
        &[
            (CompressionCodec::SNAPPY, Some(4)),
            (CompressionCodec(99), Some(4)),
            (CompressionCodec::UNCOMPRESSED, None),
            (CompressionCodec::UNCOMPRESSED, Some(0)),
        ],
        7,
    );
    let size = 4 + 10 + tail.len() as u64;
    let Footer::Groups(groups) = footer(&tail, size).unwrap() else {
        panic!("the whole footer was given")
    };
    assert_eq!(groups.len(), 1);
    let (rows, chunks) = &groups[0];
    assert_eq!(*rows, 7);
    let first = ChunkLayout {
        start: 4,
        len: 10,
        snappy: true,
        physical: Physical::Int64,
        nullable: false,
    };
    assert_eq!(chunks, &[Some(first), None, None, None]);
    // A chunk past the footer's start is not decoded.
    let Footer::Groups(groups) = footer(&tail, size - 1).unwrap() else {
        panic!()
    };
    assert_eq!(groups[0].1[0], None);
    // Less than the footer: how much is needed.
    match footer(&tail[tail.len() - 20..], size).unwrap() {
        Footer::NeedMore(n) => assert_eq!(n, tail.len()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn hostile_footers_are_errors_at_once() {
    assert!(footer(b"PAR1", 4).is_err());
    assert!(footer(b"xxxxPAR1", 3).is_err()); // more bytes than the file
    let mut tail = vec![0u8; 4];
    tail.extend((1u32 << 30).to_le_bytes());
    tail.extend(b"PAR1");
    assert!(footer(&tail, 1 << 20).is_err()); // a footer longer than the file
    assert!(footer(&tail, 2 << 30).is_err()); // longer than this reader parses
                                              // FileMetaData whose schema (field 2) is a list claiming 2^31 − 1 structs,
                                              // or whose first field is a list of 2^31 − 1 booleans, or a map bool -> bool.
    let mut structs = vec![0x15, 2, 0x19, 0xfc];
    varint((1u64 << 31) - 1, &mut structs);
    let mut lists = vec![structs];
    let mut bools = vec![0x09, 0xc8, 0x01, 0xf2];
    varint((1 << 31) - 1, &mut bools);
    lists.push(bools);
    let mut map = vec![0x0b, 0xc8, 0x01];
    varint((1 << 31) - 1, &mut map);
    map.push(0x11);
    lists.push(map);
    for mut t in lists {
        t.extend([1u8; 16]);
        let len = t.len() as u32;
        t.extend(len.to_le_bytes());
        t.extend(b"PAR1");
        let instant = Instant::now();
        assert!(footer(&t, t.len() as u64 + 4).is_err());
        assert!(instant.elapsed() < Duration::from_secs(1));
    }
}
