//! Bindings for counting (marginals.rs).

use crate::marginals;
use numpy::{
    IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

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
