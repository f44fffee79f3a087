//! `privpub._core.splu`: SPLU-Gen's kernels (splu.rs).

use super::key_from;
use crate::error::KernelError;
use crate::splu;
use crate::splu_em::{self, Stopping};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Two arrays of record ids.
type IdPair<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>);

/// The EM's x (Q, K), iterations (Q,) and converged (Q,).
type EmResult<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<bool>>,
);

/// This file's functions as the submodule `privpub._core.splu`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(decoy_groups, &m)?)?;
    m.add_function(wrap_pyfunction!(decoy_draw, &m)?)?;
    m.add_function(wrap_pyfunction!(em_batch, &m)?)?;
    Ok(())
}

/// Decoy groups of records by sensitive value: (members, residue) record ids.
#[pyfunction]
pub(crate) fn decoy_groups<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u32>,
    n_values: usize,
    gamma: usize,
) -> PyResult<IdPair<'py>> {
    let values = values.as_slice()?;
    let (members, residue) = py.detach(|| splu::decoy_groups(values, n_values, gamma))?;
    Ok((members.into_pyarray(py), residue.into_pyarray(py)))
}

/// Each group member's published value: a uniform member's value of its group.
#[pyfunction]
pub(crate) fn decoy_draw<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    members: PyReadonlyArray1<'py, u32>,
    values: PyReadonlyArray1<'py, u32>,
    gamma: usize,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let key = key_from(key)?;
    let (members, values) = (members.as_slice()?, values.as_slice()?);
    let out = py.detach(|| splu::decoy_draw(&key, members, values, gamma))?;
    Ok(out.into_pyarray(py))
}

/// Eq. 13/14 for each row of y from the same row of start, each query to its
/// own stopping rule ("count" or "paper"): (x, iterations, converged).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn em_batch<'py>(
    py: Python<'py>,
    y: PyReadonlyArray2<'py, f64>,
    start: PyReadonlyArray2<'py, f64>,
    group_size: usize,
    exact_rate: bool,
    stopping: &str,
    tol: f64,
    max_iter: i64,
) -> PyResult<EmResult<'py>> {
    let (rows, states) = (y.shape()[0], y.shape()[1]);
    if start.shape() != y.shape() {
        return Err(KernelError::Shape(format!(
            "start has shape {:?}, y {:?}: one starting point per query",
            start.shape(),
            y.shape()
        ))
        .into());
    }
    let stopping = match stopping {
        "count" => Stopping::Count { tol },
        "paper" => Stopping::Paper { tol },
        other => {
            return Err(KernelError::Parameter(format!(
                "stopping must be 'count' or 'paper', got {other:?}"
            ))
            .into())
        }
    };
    let (y, start) = (y.as_slice()?, start.as_slice()?);
    let out = py.detach(|| {
        splu_em::em_batch(y, start, states, group_size, exact_rate, stopping, max_iter)
    })?;
    Ok((
        out.x.into_pyarray(py).reshape([rows, states])?,
        out.iterations.into_pyarray(py),
        out.converged.into_pyarray(py),
    ))
}
