//! Thin PyO3 bindings: each converts numpy arrays to slices, releases the GIL
//! for its kernel, and lets `?` raise a `KernelError` as the matching
//! `privpub.core.errors` class (`From<KernelError> for PyErr`, below).
//!
//! Each file here is one submodule of `privpub._core`, of the same name
//! (`codes.rs` is `privpub._core.codes`), registered by its own `register`.

pub mod attacks;
pub mod codes;
pub mod counting;
pub mod graph;
pub mod parquet;
pub mod query;
pub mod sampling;
pub mod splu;
pub mod tails;

use crate::error::KernelError;
use crate::rng;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Every file's submodule, added to the extension module `parent`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    attacks::register(parent)?;
    codes::register(parent)?;
    counting::register(parent)?;
    graph::register(parent)?;
    parquet::register(parent)?;
    query::register(parent)?;
    sampling::register(parent)?;
    splu::register(parent)?;
    tails::register(parent)?;
    Ok(())
}

/// The submodule of `parent` named for the binding file whose module path is
/// `path` (its last part), importable by name: PyO3 only sets it as an
/// attribute of its parent, and the import system looks in `sys.modules`
/// (PyO3 issue #759, whose documented answer this is), so
/// `from privpub._core.codes import encode_u64` needs the entry made here.
pub(crate) fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    path: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let py = parent.py();
    let name = path.rsplit("::").next().unwrap_or(path);
    let full = format!("{}.{name}", parent.name()?);
    let module = PyModule::new(py, &full)?;
    parent.add(name, &module)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(&full, &module)?;
    Ok(module)
}

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
