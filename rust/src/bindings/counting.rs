//! Bindings for counting (cond.rs, marginals.rs).

use super::{shape_err, to_py};
use crate::{cond, marginals};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Factors from Python: scopes (sorted variable ids) and flat tables, each
/// value converted once into the kernel's number type.
fn factors<S: numpy::Element + Copy, T>(
    py: Python<'_>,
    scopes: Vec<Vec<usize>>,
    tables: &[PyReadonlyArray1<'_, S>],
    convert: impl Fn(S) -> T,
) -> PyResult<Vec<cond::Factor<T>>> {
    if scopes.len() != tables.len() {
        return Err(shape_err(
            py,
            format!(
                "{} scopes but {} tables; one table per scope",
                scopes.len(),
                tables.len()
            ),
        ));
    }
    scopes
        .into_iter()
        .zip(tables)
        .map(|(scope, table)| {
            let table = table.as_slice()?.iter().map(|&x| convert(x)).collect();
            Ok(cond::Factor { scope, table })
        })
        .collect()
}

/// ConD: exact Σ over assignments of Π of 0/1 truth tables (u8), as a Python int.
#[pyfunction]
pub(crate) fn cond_count(
    py: Python<'_>,
    scopes: Vec<Vec<usize>>,
    tables: Vec<PyReadonlyArray1<'_, u8>>,
    radices: Vec<u64>,
    order: Vec<usize>,
    budget: usize,
) -> PyResult<u128> {
    let fs = factors(py, scopes, &tables, u128::from)?;
    py.detach(|| cond::sum_product(fs, &radices, &order, budget))
        .map_err(|e| to_py(py, e))
}

/// Weighted ConD: Σ over assignments of Π of f64 factor tables.
#[pyfunction]
pub(crate) fn cond_weighted(
    py: Python<'_>,
    scopes: Vec<Vec<usize>>,
    tables: Vec<PyReadonlyArray1<'_, f64>>,
    radices: Vec<u64>,
    order: Vec<usize>,
    budget: usize,
) -> PyResult<f64> {
    let fs = factors(py, scopes, &tables, |x| x)?;
    py.detach(|| cond::sum_product(fs, &radices, &order, budget))
        .map_err(|e| to_py(py, e))
}

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
