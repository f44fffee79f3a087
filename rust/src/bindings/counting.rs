//! Bindings for counting (marginals.rs).

use super::to_py;
use crate::marginals;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Histograms of (k, n) u16 digits over attribute subsets (parallel over subsets).
#[pyfunction]
pub(crate) fn count_subsets<'py>(
    py: Python<'py>,
    digits: PyReadonlyArray2<'py, u16>,
    radices: Vec<u64>,
    subsets: Vec<Vec<usize>>,
) -> PyResult<Vec<Bound<'py, PyArray1<u64>>>> {
    let n = digits.shape()[1];
    let digits = digits.as_slice()?;
    let out = py
        .detach(|| marginals::count_subsets(digits, n, &radices, &subsets))
        .map_err(|e| to_py(py, e))?;
    Ok(out.into_iter().map(|c| c.into_pyarray(py)).collect())
}
