//! Thin PyO3 bindings: each converts numpy arrays to slices, releases the GIL
//! for its kernel and maps `KernelError` once onto `privpub.core.errors`.

pub mod attacks;
pub mod codes;
pub mod counting;
pub mod graph;
pub mod parquet;
pub mod query;
pub mod sampling;
pub mod splu;

use crate::error::KernelError;
use crate::rng;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Raise a kernel error as the matching `privpub.core.errors` class, carrying the
/// attribute index and row so Python can name the column and value.
pub(crate) fn to_py(py: Python<'_>, err: KernelError) -> PyErr {
    let (class, attribute, row) = match &err {
        KernelError::OutOfDomain { attribute, row } => {
            ("DomainError", Some(*attribute), Some(*row))
        }
        KernelError::InvalidCode { row } => ("CodeError", None, Some(*row)),
        KernelError::Shape(_) => ("PrivpubError", None, None),
    };
    let build = || -> PyResult<PyErr> {
        let cls = py.import("privpub.core.errors")?.getattr(class)?;
        let exc = cls.call1((err.to_string(),))?;
        exc.setattr("attribute_index", attribute)?;
        exc.setattr("row", row)?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// A `Shape` error raised as `privpub.core.errors.PrivpubError`.
pub(crate) fn shape_err(py: Python<'_>, msg: String) -> PyErr {
    to_py(py, KernelError::Shape(msg))
}

pub(crate) fn key_from(bytes: &Bound<'_, PyBytes>) -> PyResult<rng::Key> {
    let raw = bytes.as_bytes();
    raw.try_into().map_err(|_| {
        shape_err(
            bytes.py(),
            format!(
                "random key of {} bytes; it must be exactly 32 bytes",
                raw.len()
            ),
        )
    })
}
