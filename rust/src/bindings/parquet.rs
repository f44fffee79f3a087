//! Bindings for the Parquet page reader (pages.rs): a footer's chunk layout,
//! a chunk's dictionary page, its data pages.

use super::codes::digit_array;
use crate::pages::{self, Dictionary, Footer, Physical};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

/// A column chunk as `parquet_footer` gives it: (start, length, Snappy,
/// physical type name, nullable).
type Chunk = (u64, u64, bool, &'static str, bool);

/// `parquet_footer`'s answer: (bytes needed, per row group (rows, its chunks)).
type FooterAnswer = (Option<usize>, Vec<(u64, Vec<Option<Chunk>>)>);

/// A file's footer from its last bytes `tail` (the file holds `file_size`):
/// (None, per row group (rows, per column its chunk or None when the page
/// reader does not decode it)), or (bytes needed from the end, []) when
/// `tail` is shorter than the footer. PrivpubError when it cannot be read.
#[pyfunction]
pub(crate) fn parquet_footer(
    py: Python<'_>,
    tail: &[u8],
    file_size: u64,
) -> PyResult<FooterAnswer> {
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

/// Domain indices of a Parquet column chunk's data pages (the bytes after its
/// dictionary page; `snappy` when Snappy-compressed), each dictionary index
/// mapped through `remap`, `rows` of them in the signed type of `width` bits.
#[pyfunction]
pub(crate) fn decode_data_pages<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    snappy: bool,
    nullable: bool,
    remap: PyReadonlyArray1<'py, i64>,
    width: u32,
    rows: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (data, remap) = (data.as_slice()?, remap.as_slice()?);
    let out = py.detach(|| pages::decode_data_pages(data, snappy, nullable, remap, width, rows))?;
    Ok(digit_array(py, out))
}
