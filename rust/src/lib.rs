//! The `privpub._core` extension: thin bindings over the kernels.
//!
//! Each binding converts numpy arrays to slices, releases the GIL for the
//! kernel, and maps `KernelError` once onto `privpub.errors`. No privacy
//! parameter is decided here.

pub mod cond;
pub mod encode;
pub mod error;
pub mod frapp;
pub mod marginals;
pub mod rng;
pub mod sample;

use error::KernelError;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Raise a kernel error as the matching `privpub.errors` class, carrying the
/// attribute index and row so Python can name the column and value.
fn to_py(py: Python<'_>, err: KernelError) -> PyErr {
    let (class, attribute, row) = match &err {
        KernelError::OutOfDomain { attribute, row } => {
            ("DomainError", Some(*attribute), Some(*row))
        }
        KernelError::InvalidCode { row } => ("CodeError", None, Some(*row)),
        KernelError::Shape(_) => ("PrivpubError", None, None),
    };
    let build = || -> PyResult<PyErr> {
        let cls = py.import("privpub.errors")?.getattr(class)?;
        let exc = cls.call1((err.to_string(),))?;
        exc.setattr("attribute_index", attribute)?;
        exc.setattr("row", row)?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

fn key_from(bytes: &Bound<'_, PyBytes>) -> PyResult<rng::Key> {
    bytes
        .as_bytes()
        .try_into()
        .map_err(|_| PyValueError::new_err("random key must be exactly 32 bytes"))
}

/// A numpy integer column of any width, borrowed without a copy.
#[derive(FromPyObject)]
enum IntArray<'py> {
    I8(PyReadonlyArray1<'py, i8>),
    I16(PyReadonlyArray1<'py, i16>),
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
    U8(PyReadonlyArray1<'py, u8>),
    U16(PyReadonlyArray1<'py, u16>),
    U32(PyReadonlyArray1<'py, u32>),
    U64(PyReadonlyArray1<'py, u64>),
}

impl IntArray<'_> {
    fn values(&self) -> PyResult<encode::Values<'_>> {
        use encode::Values as V;
        Ok(match self {
            IntArray::I8(a) => V::I8(a.as_slice()?),
            IntArray::I16(a) => V::I16(a.as_slice()?),
            IntArray::I32(a) => V::I32(a.as_slice()?),
            IntArray::I64(a) => V::I64(a.as_slice()?),
            IntArray::U8(a) => V::U8(a.as_slice()?),
            IntArray::U16(a) => V::U16(a.as_slice()?),
            IntArray::U32(a) => V::U32(a.as_slice()?),
            IntArray::U64(a) => V::U64(a.as_slice()?),
        })
    }
}

/// The kernel's view of the columns: values, offsets and optional remap tables.
fn columns<'a>(
    cols: &'a [IntArray<'_>],
    offsets: &[i64],
    remaps: &'a [Option<PyReadonlyArray1<'_, i64>>],
) -> PyResult<Vec<encode::Column<'a>>> {
    if cols.len() != offsets.len() || cols.len() != remaps.len() {
        return Err(PyValueError::new_err(
            "one offset and one remap (or None) per column",
        ));
    }
    cols.iter()
        .zip(offsets)
        .zip(remaps)
        .map(|((c, &offset), remap)| {
            let remap = remap.as_ref().map(|r| r.as_slice()).transpose()?;
            Ok(encode::Column {
                values: c.values()?,
                offset,
                remap,
            })
        })
        .collect()
}

/// Encode columns into u64 codes (index = remap[value], or value − offset).
#[pyfunction]
fn encode_u64<'py>(
    py: Python<'py>,
    cols: Vec<IntArray<'py>>,
    offsets: Vec<i64>,
    remaps: Vec<Option<PyReadonlyArray1<'py, i64>>>,
    radices: Vec<u64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let cols = columns(&cols, &offsets, &remaps)?;
    let n = cols.first().map_or(0, |c| c.len());
    let mut out = vec![0u64; n];
    py.detach(|| encode::encode_u64(&cols, &radices, &mut out))
        .map_err(|e| to_py(py, e))?;
    Ok(out.into_pyarray(py))
}

/// Encode into an (n, limbs) u64 array, most significant limb first.
#[pyfunction]
fn encode_wide<'py>(
    py: Python<'py>,
    cols: Vec<IntArray<'py>>,
    offsets: Vec<i64>,
    remaps: Vec<Option<PyReadonlyArray1<'py, i64>>>,
    radices: Vec<u64>,
    limbs: usize,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let cols = columns(&cols, &offsets, &remaps)?;
    let n = cols.first().map_or(0, |c| c.len());
    let mut out = vec![0u64; n * limbs];
    py.detach(|| encode::encode_wide(&cols, &radices, limbs, &mut out))
        .map_err(|e| to_py(py, e))?;
    out.into_pyarray(py).reshape([n, limbs])
}

/// A decoded column as a numpy array of its own integer type.
fn digit_array<'py>(py: Python<'py>, col: encode::DigitColumn) -> Bound<'py, PyAny> {
    use encode::DigitColumn as D;
    match col {
        D::I8(v) => v.into_pyarray(py).into_any(),
        D::I16(v) => v.into_pyarray(py).into_any(),
        D::I32(v) => v.into_pyarray(py).into_any(),
        D::I64(v) => v.into_pyarray(py).into_any(),
    }
}

/// Decode u64 codes into k arrays of values (index + offset), each in the
/// narrowest signed integer type that holds the attribute's values.
#[pyfunction]
fn decode_u64<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray1<'py, u64>,
    offsets: Vec<i64>,
    radices: Vec<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let codes = codes.as_slice()?;
    let cols = py
        .detach(|| encode::decode_u64(codes, &offsets, &radices))
        .map_err(|e| to_py(py, e))?;
    Ok(cols.into_iter().map(|c| digit_array(py, c)).collect())
}

/// Decode (n, limbs) wide codes into k int64 arrays of values.
#[pyfunction]
fn decode_wide<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u64>,
    offsets: Vec<i64>,
    radices: Vec<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let limbs = codes.shape()[1];
    let codes = codes.as_slice()?;
    let n = codes.len() / limbs.max(1);
    let k = radices.len();
    let mut out = vec![0i64; n * k];
    py.detach(|| encode::decode_wide(codes, limbs, &offsets, &radices, &mut out))
        .map_err(|e| to_py(py, e))?;
    Ok((0..k)
        .map(|j| out[j * n..(j + 1) * n].to_vec().into_pyarray(py).into_any())
        .collect())
}

/// Number of u64 limbs a code needs for this domain (1 when m ≤ 2^64).
#[pyfunction]
fn limbs_for(radices: Vec<u64>) -> usize {
    encode::limbs_for(&radices)
}

/// Elements [start, start + n) of the uniform [0, 1) stream of a 32-byte key.
#[pyfunction]
fn uniform<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    n: usize,
    start: u64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let key = key_from(key)?;
    if u128::from(start) + n as u128 > 1u128 << 64 {
        return Err(PyValueError::new_err(
            "start + n must not exceed 2^64 (the stream's length)",
        ));
    }
    let mut out = vec![0.0; n];
    py.detach(|| rng::fill_uniform(&key, start, &mut out));
    Ok(out.into_pyarray(py))
}

/// Rows of an (n, limbs) code array as one flat slice and its limb count.
fn code_rows<'a>(codes: &'a PyReadonlyArray2<'_, u64>) -> PyResult<(&'a [u64], usize)> {
    let limbs = codes.shape()[1];
    Ok((codes.as_slice()?, limbs))
}

/// α-step mask over sorted (n, limbs) codes: first copy kept with `p_first`
/// (one value, or one per record), further copies with `p_rest`.
#[pyfunction]
fn keep_records<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    p_first: PyReadonlyArray1<'py, f64>,
    p_rest: f64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    let p_first = p_first.as_slice()?;
    let rows: Vec<&[u64]> = words.chunks_exact(limbs.max(1)).collect();
    let mask = py
        .detach(|| sample::keep_records(&key, &rows, p_first, p_rest))
        .map_err(|e| to_py(py, e))?;
    Ok(mask.into_pyarray(py))
}

/// Algorithm 8's thinning: keep each (n, limbs) code with probability
/// Π_j ratios[attribute j's block][digit_j].
#[pyfunction]
fn thin_product<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    radices: Vec<u64>,
    ratios: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    let ratios = ratios.as_slice()?;
    let mask = py
        .detach(|| {
            let codes = sample::to_u128(words, limbs)?;
            sample::thin_product(&key, &codes, &radices, ratios)
        })
        .map_err(|e| to_py(py, e))?;
    Ok(mask.into_pyarray(py))
}

/// β-step: codes in [0, m) outside the sorted distinct `excluded`, each with probability `beta`.
#[pyfunction]
fn beta_step<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    m: u128,
    beta: f64,
    excluded: PyReadonlyArray2<'py, u64>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&excluded)?;
    let out = py
        .detach(|| {
            let excluded = sample::to_u128(words, limbs)?;
            sample::BetaStep::new(&key, m, beta, &excluded)?.run(limbs)
        })
        .map_err(|e| to_py(py, e))?;
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}

/// Merge two sorted (n, limbs) code arrays.
#[pyfunction]
fn merge_sorted<'py>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, u64>,
    b: PyReadonlyArray2<'py, u64>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let (a, limbs) = code_rows(&a)?;
    let (b, limbs_b) = code_rows(&b)?;
    if limbs != limbs_b || limbs == 0 {
        return Err(PyValueError::new_err(
            "merge_sorted: code arrays differ in limbs",
        ));
    }
    let out = py.detach(|| sample::merge_sorted(a, b, limbs));
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}

/// FRAPP: each (n, limbs) code kept with probability `keep`, else a uniform other tuple.
#[pyfunction]
fn frapp_perturb<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyBytes>,
    codes: PyReadonlyArray2<'py, u64>,
    m: u128,
    keep: f64,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let key = key_from(key)?;
    let (words, limbs) = code_rows(&codes)?;
    let out = py
        .detach(|| {
            let codes = sample::to_u128(words, limbs)?;
            let perturbed = frapp::perturb(&key, &codes, m, keep)?;
            Ok(sample::from_u128(&perturbed, limbs))
        })
        .map_err(|e| to_py(py, e))?;
    let n = out.len() / limbs;
    out.into_pyarray(py).reshape([n, limbs])
}

/// Factors from Python: scopes (sorted variable ids) and flat tables.
fn factors<T: Copy>(scopes: Vec<Vec<usize>>, tables: &[&[T]]) -> Vec<cond::Factor<T>> {
    scopes
        .into_iter()
        .zip(tables)
        .map(|(scope, table)| cond::Factor {
            scope,
            table: table.to_vec(),
        })
        .collect()
}

/// ConD: exact Σ over assignments of Π of 0/1 truth tables (u8), as a Python int.
#[pyfunction]
fn cond_count(
    py: Python<'_>,
    scopes: Vec<Vec<usize>>,
    tables: Vec<PyReadonlyArray1<'_, u8>>,
    radices: Vec<u64>,
    order: Vec<usize>,
    budget: usize,
) -> PyResult<u128> {
    let slices = tables
        .iter()
        .map(|t| t.as_slice())
        .collect::<Result<Vec<_>, _>>()?;
    let wide: Vec<Vec<u128>> = slices
        .iter()
        .map(|t| t.iter().map(|&x| u128::from(x)).collect())
        .collect();
    let views: Vec<&[u128]> = wide.iter().map(|t| t.as_slice()).collect();
    let fs = factors(scopes, &views);
    py.detach(|| cond::sum_product(fs, &radices, &order, budget))
        .map_err(|e| to_py(py, e))
}

/// Weighted ConD: Σ over assignments of Π of f64 factor tables.
#[pyfunction]
fn cond_weighted(
    py: Python<'_>,
    scopes: Vec<Vec<usize>>,
    tables: Vec<PyReadonlyArray1<'_, f64>>,
    radices: Vec<u64>,
    order: Vec<usize>,
    budget: usize,
) -> PyResult<f64> {
    let slices = tables
        .iter()
        .map(|t| t.as_slice())
        .collect::<Result<Vec<_>, _>>()?;
    let fs = factors(scopes, &slices);
    py.detach(|| cond::sum_product(fs, &radices, &order, budget))
        .map_err(|e| to_py(py, e))
}

/// Histograms of (k, n) u16 digits over attribute subsets (parallel over subsets).
#[pyfunction]
fn count_subsets<'py>(
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BLOCK", rng::BLOCK)?;
    m.add_function(wrap_pyfunction!(encode_u64, m)?)?;
    m.add_function(wrap_pyfunction!(encode_wide, m)?)?;
    m.add_function(wrap_pyfunction!(decode_u64, m)?)?;
    m.add_function(wrap_pyfunction!(decode_wide, m)?)?;
    m.add_function(wrap_pyfunction!(limbs_for, m)?)?;
    m.add_function(wrap_pyfunction!(uniform, m)?)?;
    m.add_function(wrap_pyfunction!(keep_records, m)?)?;
    m.add_function(wrap_pyfunction!(beta_step, m)?)?;
    m.add_function(wrap_pyfunction!(merge_sorted, m)?)?;
    m.add_function(wrap_pyfunction!(frapp_perturb, m)?)?;
    m.add_function(wrap_pyfunction!(thin_product, m)?)?;
    m.add_function(wrap_pyfunction!(cond_count, m)?)?;
    m.add_function(wrap_pyfunction!(cond_weighted, m)?)?;
    m.add_function(wrap_pyfunction!(count_subsets, m)?)?;
    Ok(())
}
