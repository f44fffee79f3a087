//! `privpub._core.sampling`: the randomised kernels (rng.rs: the uniform
//! stream of a key; sample.rs: αβ's α-step, β-step, thinning and merge;
//! frapp.rs: FRAPP's perturbation).

use super::key_from;
use crate::error::{buffer, KernelError};
use crate::{frapp, rng, sample};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// This file's functions as the submodule `privpub._core.sampling`, with
/// `BLOCK` (items per logical random block).
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add("BLOCK", rng::BLOCK)?;
    m.add_function(wrap_pyfunction!(uniform, &m)?)?;
    m.add_function(wrap_pyfunction!(keep_records, &m)?)?;
    m.add_function(wrap_pyfunction!(thin_product, &m)?)?;
    m.add_function(wrap_pyfunction!(beta_step_layout, &m)?)?;
    m.add_function(wrap_pyfunction!(beta_step, &m)?)?;
    m.add_function(wrap_pyfunction!(merge_sorted, &m)?)?;
    m.add_function(wrap_pyfunction!(frapp_perturb, &m)?)?;
    Ok(())
}

/// Elements [start, start + n) of the uniform [0, 1) stream of a 32-byte key.
#[pyfunction]
pub(crate) fn uniform<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    n: usize,
    start: u64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let key = key_from(key)?;
    check_stream_window(start, n)?;
    let mut out = buffer(n, 0.0, || format!("{n} uniform doubles"))?;
    py.detach(|| rng::fill_uniform(&key, start, &mut out));
    Ok(out.into_pyarray(py))
}

/// Rows of an (n, limbs) code array as one flat slice and its limb count;
/// n > 0 rows of no limbs (which would lose the row count) are refused.
pub(crate) fn code_rows<'a>(codes: &'a PyReadonlyArray2<'_, u64>) -> PyResult<(&'a [u64], usize)> {
    let (rows, limbs) = (codes.shape()[0], codes.shape()[1]);
    if limbs == 0 && rows > 0 {
        return Err(KernelError::Shape(format!(
            "codes of shape ({rows}, 0): a code needs at least one limb"
        ))
        .into());
    }
    Ok((codes.as_slice()?, limbs))
}

/// Stream elements [start, start + n) must exist (the stream has 2^64).
fn check_stream_window(start: u64, n: usize) -> PyResult<()> {
    if u128::from(start) + n as u128 > 1u128 << 64 {
        return Err(KernelError::Capacity(format!(
            "start {start} + n {n} exceeds 2^64, the stream's length"
        ))
        .into());
    }
    Ok(())
}

/// `Shape` error unless codes below `m` fit in `limbs` words (1 or 2).
fn check_m_fits(m: u128, limbs: usize) -> Result<(), KernelError> {
    if limbs == 1 && m > 1u128 << 64 {
        return Err(KernelError::Shape(format!(
            "m = {m} needs 2 limbs per code, the codes have 1"
        )));
    }
    Ok(())
}

/// α-step mask over sorted (n, limbs) codes: first copy kept with `p_first`
/// (one value, or one per record), further copies with `p_rest`; record i
/// uses stream element `start + i`.
#[pyfunction]
#[pyo3(signature = (key, codes, p_first, p_rest, start = 0))]
pub(crate) fn keep_records<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    p_first: PyReadonlyArray1<'py, f64>,
    p_rest: f64,
    start: u64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    if u128::from(start) + (words.len() / limbs.max(1)) as u128 > 1u128 << 64 {
        return Err(
            KernelError::Capacity(format!("start {start} + the records exceed 2^64")).into(),
        );
    }
    let p_first = p_first.as_slice()?;
    let rows: Vec<&[u64]> = words.chunks_exact(limbs.max(1)).collect();
    let mask = py.detach(|| sample::keep_records(&key, start, &rows, p_first, p_rest))?;
    Ok(mask.into_pyarray(py))
}

/// Algorithm 8's thinning: keep each (n, limbs) code with probability
/// Π_j ratios[attribute j's block][digit_j]; candidate i uses stream element
/// `start + i`.
#[pyfunction]
#[pyo3(signature = (key, codes, radices, ratios, start = 0))]
pub(crate) fn thin_product<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    radices: Vec<u64>,
    ratios: PyReadonlyArray1<'py, f64>,
    start: u64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    check_stream_window(start, words.len() / limbs.max(1))?;
    let ratios = ratios.as_slice()?;
    let mask = py.detach(|| {
        let codes = sample::to_u128(words, limbs)?;
        sample::thin_product(&key, start, &codes, &radices, ratios)
    })?;
    Ok(mask.into_pyarray(py))
}

/// The β-step's segment length and segment count for (m, β).
#[pyfunction]
pub(crate) fn beta_step_layout(m: u128, beta: f64) -> PyResult<(u128, u64)> {
    Ok(sample::segment_layout(m, beta)?)
}

/// β-step: codes in [0, m) outside the sorted distinct `excluded`, each with
/// probability `beta`; with `segments = (a, b)` only those in [a·L, b·L) for
/// the segment length L (`beta_step_layout`). `kept`: sorted excluded codes
/// in that range (the α-step's records) written in order among the selected.
#[pyfunction]
#[pyo3(signature = (key, m, beta, excluded, segments = None, kept = None))]
pub(crate) fn beta_step<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    m: u128,
    beta: f64,
    excluded: PyReadonlyArray2<'py, u64>,
    segments: Option<(u64, u64)>,
    kept: Option<PyReadonlyArray2<'py, u64>>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&excluded)?;
    let kept_words = match &kept {
        Some(k) => {
            let (w, l) = code_rows(k)?;
            if l != limbs {
                return Err(KernelError::Shape(format!(
                    "beta_step: kept codes of {l} limbs, excluded of {limbs}"
                ))
                .into());
            }
            w
        }
        None => &[],
    };
    let out = py.detach(|| {
        let excluded = sample::to_u128(words, limbs)?;
        let kept = sample::to_u128(kept_words, limbs)?;
        check_m_fits(m, limbs)?;
        let step = sample::BetaStep::new(&key, m, beta, &excluded)?;
        let (first, stop) = segments.unwrap_or((0, u64::MAX));
        step.run_segments_with(limbs, first, stop, &kept)
    })?;
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}

/// Merge two sorted (n, limbs) code arrays.
#[pyfunction]
pub(crate) fn merge_sorted<'py>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, u64>,
    b: PyReadonlyArray2<'py, u64>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let (a, limbs) = code_rows(&a)?;
    let (b, limbs_b) = code_rows(&b)?;
    if limbs != limbs_b {
        return Err(KernelError::Shape(format!(
            "merge_sorted: code arrays of {limbs} and {limbs_b} limbs"
        ))
        .into());
    }
    let out = py.detach(|| sample::merge_sorted(a, b, limbs))?;
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}

/// FRAPP: each (n, limbs) code kept with probability `keep`, else a uniform other tuple;
/// the records are positions `start ..` of the whole list.
#[pyfunction]
#[pyo3(signature = (key, codes, m, keep, start = 0))]
pub(crate) fn frapp_perturb<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    m: u128,
    keep: f64,
    start: u64,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    let out = py.detach(|| {
        let codes = sample::to_u128(words, limbs)?;
        check_m_fits(m, limbs)?;
        let perturbed = frapp::perturb(&key, start, &codes, m, keep)?;
        Ok::<_, KernelError>(sample::from_u128(&perturbed, limbs))
    })?;
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}
