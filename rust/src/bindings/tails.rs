//! `privpub._core.tails`: tails of sums of independent binomials for many
//! problems at once (tails.rs), the ragged part of the confidence intervals'
//! test inversion.

use crate::tails::{self, Last, Windows};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.tails`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(window_tails, &m)?)?;
    Ok(())
}

/// (upper, above): one value per problem.
type Tails<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// (upper, above) per problem: Σ_j pmf(j)·P(B ≥ k − j) and Σ_j pmf(j)·P(B ≥
/// k + 1 − j), pmf the convolved windows of the (W, P) window arrays, B the
/// last summand (tails.rs).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn window_tails<'py>(
    py: Python<'py>,
    first: PyReadonlyArray2<'py, f64>,
    length: PyReadonlyArray2<'py, i64>,
    log_first: PyReadonlyArray2<'py, f64>,
    trials: PyReadonlyArray2<'py, f64>,
    prob: PyReadonlyArray2<'py, f64>,
    top: PyReadonlyArray1<'py, f64>,
    last_trials: PyReadonlyArray1<'py, f64>,
    last_prob: PyReadonlyArray1<'py, f64>,
    log_anchor: PyReadonlyArray1<'py, f64>,
    tail: PyReadonlyArray1<'py, f64>,
) -> PyResult<Tails<'py>> {
    let problems = top.len();
    let windows = Windows {
        first: first.as_slice()?,
        length: length.as_slice()?,
        log_first: log_first.as_slice()?,
        trials: trials.as_slice()?,
        prob: prob.as_slice()?,
    };
    let last = Last {
        top: top.as_slice()?,
        trials: last_trials.as_slice()?,
        prob: last_prob.as_slice()?,
        log_anchor: log_anchor.as_slice()?,
        tail: tail.as_slice()?,
    };
    let (upper, above) = py.detach(|| tails::window_tails(problems, &windows, &last))?;
    Ok((upper.into_pyarray(py), above.into_pyarray(py)))
}
