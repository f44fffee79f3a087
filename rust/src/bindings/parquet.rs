//! `privpub._core.parquet`: the Parquet page reader (pages.rs, hybrid.rs: a
//! footer's chunk layout, a chunk's dictionary page, its data pages) and the
//! scan of a view file's row groups (groupscan.rs: decoded, digested and
//! counted in one call).

use super::codes::digit_array;
use crate::groupscan;
use crate::pages::{self, Dictionary, Footer, Physical};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.parquet`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(footer, &m)?)?;
    m.add_function(wrap_pyfunction!(dictionary_page, &m)?)?;
    m.add_function(wrap_pyfunction!(decode_data_pages, &m)?)?;
    m.add_function(wrap_pyfunction!(scan_groups, &m)?)?;
    Ok(())
}

/// A column chunk as `footer` gives it: (start, length, Snappy,
/// physical type name, nullable).
type Chunk = (u64, u64, bool, &'static str, bool);

/// `footer`'s answer: (bytes needed, per row group (rows, its chunks)).
type FooterAnswer = (Option<usize>, Vec<(u64, Vec<Option<Chunk>>)>);

/// A file's footer from its last bytes `tail` (the file holds `file_size`):
/// (None, per row group (rows, per column its chunk or None when the page
/// reader does not decode it)), or (bytes needed from the end, []) when
/// `tail` is shorter than the footer. PrivpubError when it cannot be read.
#[pyfunction]
pub(crate) fn footer(py: Python<'_>, tail: &[u8], file_size: u64) -> PyResult<FooterAnswer> {
    Ok(match py.detach(|| pages::footer(tail, file_size))? {
        Footer::NeedMore(n) => (Some(n), Vec::new()),
        Footer::Groups(groups) => (
            None,
            groups
                .into_iter()
                .map(|(rows, chunks)| {
                    let chunks = chunks
                        .into_iter()
                        .map(|c| {
                            c.map(|c| (c.start, c.len, c.snappy, c.physical.name(), c.nullable))
                        })
                        .collect();
                    (rows, chunks)
                })
                .collect(),
        ),
    })
}

/// A column chunk's dictionary page (`data`: the chunk's bytes from it on;
/// `snappy` when Snappy-compressed; `physical`: BYTE_ARRAY, INT32 or INT64):
/// (where it ends in `data`, its values as a list of str or an int array).
#[pyfunction]
pub(crate) fn dictionary_page<'py>(
    py: Python<'py>,
    data: &[u8],
    snappy: bool,
    physical: &str,
) -> PyResult<(usize, Bound<'py, PyAny>)> {
    let physical = Physical::from_name(physical)?;
    let (end, values) = pages::dictionary_page(data, snappy, physical)?;
    let values = match values {
        Dictionary::Strings(v) => v.into_pyobject(py)?.into_any(),
        Dictionary::Int32(v) => v.into_pyarray(py).into_any(),
        Dictionary::Int64(v) => v.into_pyarray(py).into_any(),
    };
    Ok((end, values))
}

/// `decode_data_pages`' answer: the domain indices, and their least and
/// greatest (None when there are none).
type Decoded<'py> = (Bound<'py, PyAny>, Option<(i64, i64)>);

/// Domain indices of a Parquet column chunk's data pages (the bytes after its
/// dictionary page; `snappy` when Snappy-compressed), each dictionary index
/// mapped through `remap`, `rows` of them in the signed type of `width` bits;
/// with their least and greatest (None when empty), found in the same call
/// while the column is in cache, for the caller to hold against the group's
/// stored range.
#[pyfunction]
pub(crate) fn decode_data_pages<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    snappy: bool,
    nullable: bool,
    remap: PyReadonlyArray1<'py, i64>,
    width: u32,
    rows: usize,
) -> PyResult<Decoded<'py>> {
    let (data, remap) = (data.as_slice()?, remap.as_slice()?);
    let (out, range) = py.detach(|| {
        pages::decode_data_pages(data, snappy, nullable, remap, width, rows).map(|column| {
            let range = groupscan::range(&column);
            (column, range)
        })
    })?;
    Ok((digit_array(py, out), range))
}

/// One column chunk as `scan_groups` takes it: (data pages, snappy, nullable,
/// remap, width), as `decode_data_pages` takes them.
type ChunkArgs<'py> = (
    PyReadonlyArray1<'py, u8>,
    bool,
    bool,
    PyReadonlyArray1<'py, i64>,
    u32,
);

/// A group as `scan_groups` takes it: (rows, its chunks, its counts as
/// (table, positions of the table's attributes among its chunks)).
type GroupArgs<'py> = (usize, Vec<ChunkArgs<'py>>, Vec<(usize, Vec<usize>)>);

/// A group's result: each requested count, and each chunk's (SHA-256 as hex,
/// least and greatest index, None for an empty column).
type GroupResult = (Vec<u64>, Vec<(String, Option<(i64, i64)>)>);

/// Row groups decoded, digested and counted in one call (`groupscan`): each
/// group is (rows, its chunks, its counts as (table, positions of the table's
/// attributes among its chunks)); each table (radices, truth table). A group
/// whose chunks cannot be decoded or counted gives None (the caller reads it
/// another way).
#[pyfunction]
pub(crate) fn scan_groups<'py>(
    py: Python<'py>,
    groups: Vec<GroupArgs<'py>>,
    tables: Vec<(Vec<u64>, PyReadonlyArray1<'py, bool>)>,
) -> PyResult<Vec<Option<GroupResult>>> {
    let tables = tables
        .iter()
        .map(|(radices, table)| {
            Ok(groupscan::Table {
                radices: radices.clone(),
                table: table.as_slice()?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let groups = groups
        .iter()
        .map(|(rows, chunks, counts)| {
            let chunks = chunks
                .iter()
                .map(|(data, snappy, nullable, remap, width)| {
                    Ok(groupscan::Chunk {
                        data: data.as_slice()?,
                        snappy: *snappy,
                        nullable: *nullable,
                        remap: remap.as_slice()?,
                        width: *width,
                    })
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(groupscan::Group {
                rows: *rows,
                chunks,
                counts: counts.clone(),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let found = py.detach(|| groupscan::scan_groups(&groups, &tables));
    Ok(found
        .into_iter()
        .map(|r| {
            r.ok().map(|s| {
                let columns = s
                    .columns
                    .into_iter()
                    .map(|c| {
                        (
                            c.sha256.iter().map(|b| format!("{b:02x}")).collect(),
                            c.range,
                        )
                    })
                    .collect();
                (s.counts, columns)
            })
        })
        .collect())
}
