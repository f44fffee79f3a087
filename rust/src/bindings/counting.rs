//! `privpub._core.counting`: counts over domain digits (marginals.rs:
//! histograms over attribute subsets; columns.rs: rows in a truth table) and
//! over tuple codes (codecount.rs: codes in a truth table, not decoded).

use super::codes::IntArray;
use crate::{codecount, columns, marginals};
use numpy::{
    IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.counting`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(count_subsets, &m)?)?;
    m.add_function(wrap_pyfunction!(sum_down, &m)?)?;
    m.add_function(wrap_pyfunction!(count_in_table, &m)?)?;
    m.add_function(wrap_pyfunction!(count_codes_in_table, &m)?)?;
    Ok(())
}

/// Histograms of (k, n) u16 digits over attribute subsets, added into each
/// subset's int64 totals (parallel over subsets).
#[pyfunction]
pub(crate) fn count_subsets<'py>(
    py: Python<'py>,
    digits: PyReadonlyArray2<'py, u16>,
    radices: Vec<u64>,
    subsets: Vec<Vec<usize>>,
    mut totals: Vec<PyReadwriteArray1<'py, i64>>,
) -> PyResult<()> {
    let n = digits.shape()[1];
    let digits = digits.as_slice()?;
    let mut totals = totals
        .iter_mut()
        .map(|t| t.as_slice_mut())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(py.detach(|| marginals::count_subsets(digits, n, &radices, &subsets, &mut totals))?)
}

/// A histogram over `radices` summed down to each target's kept axes.
#[pyfunction]
pub(crate) fn sum_down<'py>(
    py: Python<'py>,
    hist: PyReadonlyArray1<'py, i64>,
    radices: Vec<usize>,
    keeps: Vec<Vec<usize>>,
) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
    let hist = hist.as_slice()?;
    let out = py.detach(|| marginals::sum_down(hist, &radices, &keeps))?;
    Ok(out.into_iter().map(|c| c.into_pyarray(py)).collect())
}

/// How many rows' digits index a true cell of `table` (Π radices cells).
#[pyfunction]
pub(crate) fn count_in_table(
    py: Python<'_>,
    cols: Vec<IntArray<'_>>,
    radices: Vec<u64>,
    table: PyReadonlyArray1<'_, bool>,
) -> PyResult<u64> {
    let values = cols
        .iter()
        .map(|c| c.values())
        .collect::<PyResult<Vec<_>>>()?;
    let table = table.as_slice()?;
    Ok(py.detach(|| columns::count_in_table(&values, &radices, table))?)
}

/// How many u64 tuple codes (over `radices`) make `table` true: the table is
/// over the attributes at positions `read`, first slowest (codecount.rs).
#[pyfunction]
pub(crate) fn count_codes_in_table(
    py: Python<'_>,
    codes: PyReadonlyArray1<'_, u64>,
    radices: Vec<u64>,
    read: Vec<usize>,
    table: PyReadonlyArray1<'_, bool>,
) -> PyResult<u64> {
    let (codes, table) = (codes.as_slice()?, table.as_slice()?);
    Ok(py.detach(|| codecount::count_codes_in_table(codes, &radices, &read, table))?)
}
