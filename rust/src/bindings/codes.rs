//! `privpub._core.codes`: tuple codes and domain digits (encode.rs: mixed-radix
//! codes of columns and back; columns.rs: each column's domain indices).

use crate::error::{buffer, KernelError};
use crate::{columns, encode};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.codes`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(encode_u64, &m)?)?;
    m.add_function(wrap_pyfunction!(encode_wide, &m)?)?;
    m.add_function(wrap_pyfunction!(decode_u64, &m)?)?;
    m.add_function(wrap_pyfunction!(decode_wide, &m)?)?;
    m.add_function(wrap_pyfunction!(limbs_for, &m)?)?;
    m.add_function(wrap_pyfunction!(to_digits, &m)?)?;
    Ok(())
}

/// A numpy integer column of any width, borrowed without a copy.
#[derive(FromPyObject)]
pub(crate) enum IntArray<'py> {
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
    pub(crate) fn values(&self) -> PyResult<encode::Values<'_>> {
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
        return Err(KernelError::Shape(format!(
            "{} columns but {} offsets and {} remaps; one offset and one remap (or None) \
                 per column",
            cols.len(),
            offsets.len(),
            remaps.len()
        ))
        .into());
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
pub(crate) fn encode_u64<'py>(
    py: Python<'py>,
    cols: Vec<IntArray<'py>>,
    offsets: Vec<i64>,
    remaps: Vec<Option<PyReadonlyArray1<'py, i64>>>,
    radices: Vec<u64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let cols = columns(&cols, &offsets, &remaps)?;
    let n = cols.first().map_or(0, |c| c.len());
    let mut out = vec![0u64; n];
    py.detach(|| encode::encode_u64(&cols, &radices, &mut out))?;
    Ok(out.into_pyarray(py))
}

/// Encode into an (n, limbs) u64 array, most significant limb first.
#[pyfunction]
pub(crate) fn encode_wide<'py>(
    py: Python<'py>,
    cols: Vec<IntArray<'py>>,
    offsets: Vec<i64>,
    remaps: Vec<Option<PyReadonlyArray1<'py, i64>>>,
    radices: Vec<u64>,
    limbs: usize,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let cols = columns(&cols, &offsets, &remaps)?;
    let n = cols.first().map_or(0, |c| c.len());
    // `limbs` is the caller's: check it before sizing the output by it.
    encode::check_limbs(&radices, limbs)?;
    let mut out = n
        .checked_mul(limbs)
        .ok_or_else(|| KernelError::Capacity(format!("{n} rows × {limbs} limbs exceed 2^64 words")))
        .and_then(|len| buffer(len, 0u64, || format!("{n} rows × {limbs} limbs")))?;
    py.detach(|| encode::encode_wide(&cols, &radices, limbs, &mut out))?;
    out.into_pyarray(py).reshape([n, limbs])
}

/// A decoded column as a numpy array of its own integer type.
pub(crate) fn digit_array<'py>(py: Python<'py>, col: encode::DigitColumn) -> Bound<'py, PyAny> {
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
pub(crate) fn decode_u64<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray1<'py, u64>,
    offsets: Vec<i64>,
    radices: Vec<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let codes = codes.as_slice()?;
    let cols = py.detach(|| encode::decode_u64(codes, &offsets, &radices))?;
    Ok(cols.into_iter().map(|c| digit_array(py, c)).collect())
}

/// Decode (n, limbs) wide codes into k int64 arrays of values.
#[pyfunction]
pub(crate) fn decode_wide<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u64>,
    offsets: Vec<i64>,
    radices: Vec<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let limbs = codes.shape()[1];
    let codes = codes.as_slice()?;
    let n = codes.len() / limbs.max(1);
    let k = radices.len();
    let mut out = n
        .checked_mul(k)
        .ok_or_else(|| KernelError::Capacity(format!("{n} rows × {k} attributes exceed 2^64")))
        .and_then(|len| buffer(len, 0i64, || format!("{n} rows × {k} attributes")))?;
    py.detach(|| encode::decode_wide(codes, limbs, &offsets, &radices, &mut out))?;
    Ok((0..k)
        .map(|j| out[j * n..(j + 1) * n].to_vec().into_pyarray(py).into_any())
        .collect())
}

/// Number of u64 limbs a code needs for this domain (1 when m ≤ 2^64).
#[pyfunction]
pub(crate) fn limbs_for(radices: Vec<u64>) -> usize {
    encode::limbs_for(&radices)
}

/// Domain indices of each column (remap table or offset, checked against its
/// radix), each in the narrowest signed type; DomainError names column and row.
#[pyfunction]
pub(crate) fn to_digits<'py>(
    py: Python<'py>,
    cols: Vec<IntArray<'py>>,
    offsets: Vec<i64>,
    remaps: Vec<Option<PyReadonlyArray1<'py, i64>>>,
    radices: Vec<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let cols = columns(&cols, &offsets, &remaps)?;
    let out = py.detach(|| columns::to_digits(&cols, &radices))?;
    Ok(out.into_iter().map(|c| digit_array(py, c)).collect())
}
