//! Thin PyO3 bindings: each converts numpy arrays to slices, releases the GIL
//! for its kernel, and lets `?` raise a `KernelError` as the matching
//! `privpub.core.errors` class (`From<KernelError> for PyErr`, below).

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

// The Python classes, imported once (on first use) and kept: no lookup by
// name per raise.
pyo3::import_exception!(privpub.core.errors, ArtifactError);
pyo3::import_exception!(privpub.core.errors, CapacityError);
pyo3::import_exception!(privpub.core.errors, CodeError);
pyo3::import_exception!(privpub.core.errors, DomainError);
pyo3::import_exception!(privpub.core.errors, ParameterError);
pyo3::import_exception!(privpub.core.errors, ShapeError);

/// Each kind of kernel failure as its `privpub.core.errors` class; a row's
/// errors carry the attribute index and row so Python can name the column
/// and value.
impl From<KernelError> for PyErr {
    fn from(err: KernelError) -> PyErr {
        let message = err.to_string();
        match err {
            KernelError::OutOfDomain { attribute, row } => {
                located::<DomainError>(message, Some(attribute), Some(row))
            }
            KernelError::InvalidCode { row } => located::<CodeError>(message, None, Some(row)),
            KernelError::Shape(_) => ShapeError::new_err(message),
            KernelError::Parameter(_) => ParameterError::new_err(message),
            KernelError::Malformed(_) => ArtifactError::new_err(message),
            KernelError::Capacity(_) => CapacityError::new_err(message),
        }
    }
}

/// An exception of class `E` with `attribute_index` and `row` set.
fn located<E: pyo3::PyTypeInfo>(
    message: String,
    attribute: Option<usize>,
    row: Option<usize>,
) -> PyErr {
    Python::attach(|py| {
        let build = || -> PyResult<PyErr> {
            let exc = py.get_type::<E>().call1((message,))?;
            exc.setattr("attribute_index", attribute)?;
            exc.setattr("row", row)?;
            Ok(PyErr::from_value(exc))
        };
        build().unwrap_or_else(|e| e)
    })
}

pub(crate) fn key_from(bytes: &Bound<'_, PyBytes>) -> PyResult<rng::Key> {
    let raw = bytes.as_bytes();
    raw.try_into().map_err(|_| {
        KernelError::Parameter(format!(
            "random key of {} bytes; it must be exactly 32 bytes",
            raw.len()
        ))
        .into()
    })
}
