//! `privpub._core.splu`: SPLU-Gen's kernels (splu.rs).

use super::key_from;
use crate::splu;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Two arrays of record ids.
type IdPair<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>);

/// This file's functions as the submodule `privpub._core.splu`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(decoy_groups, &m)?)?;
    m.add_function(wrap_pyfunction!(decoy_draw, &m)?)?;
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
