//! `privpub._core.attacks`: the reconstruction attacks (attacks.rs).

use crate::attacks;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.attacks`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(weed, &m)?)?;
    Ok(())
}

/// Theorem 2's weeding: the first candidate mask whose subset sums are all
/// within `bound` of `answers`, or None.
#[pyfunction]
pub(crate) fn weed(
    py: Python<'_>,
    n: u32,
    queries: PyReadonlyArray1<'_, u64>,
    answers: PyReadonlyArray1<'_, f64>,
    bound: f64,
) -> PyResult<Option<u64>> {
    let (queries, answers) = (queries.as_slice()?, answers.as_slice()?);
    Ok(py.detach(|| attacks::weed(n, queries, answers, bound))?)
}
