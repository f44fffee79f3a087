//! The one error type of the kernels, one variant per kind of failure.
//! `bindings/` maps it once onto the Python hierarchy (`privpub.core.errors`,
//! `impl From<KernelError> for PyErr`); the Python layer then names the column
//! and value, which the kernels do not know.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// Attribute `attribute` of row `row` is not an index into its domain.
    OutOfDomain { attribute: usize, row: usize },
    /// Code at `row` is not below the domain size m.
    InvalidCode { row: usize },
    /// Arguments disagree in shape, length or layout: a bug in the caller,
    /// not in the data (`ShapeError`).
    Shape(String),
    /// An argument's value is one the kernel does not take: a probability
    /// outside [0, 1], γ < 2, a query naming a variable it lacks, unsorted
    /// codes where sorted ones are required (`ParameterError`).
    Parameter(String),
    /// Bytes read from a file do not decode: a Parquet footer, page header,
    /// page or run (`ArtifactError`).
    Malformed(String),
    /// A request past what the kernels can hold or count: memory, 2^64
    /// stream positions or words, 128-bit counts, 32-bit ids (`CapacityError`).
    Capacity(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::OutOfDomain { attribute, row } => write!(
                f,
                "attribute #{attribute} of row {row} is outside its domain"
            ),
            KernelError::InvalidCode { row } => {
                write!(f, "code at row {row} is not below the domain size")
            }
            KernelError::Shape(msg) => write!(f, "shape mismatch: {msg}"),
            KernelError::Parameter(msg)
            | KernelError::Malformed(msg)
            | KernelError::Capacity(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for KernelError {}

/// A vector of `len` copies of `fill`, or a `Capacity` error naming `what` when
/// `len` is past what can be allocated. For buffers whose size a caller picks
/// (a count, a limb width, a product of radices) rather than the input arrays:
/// `vec![..]` alone would panic ("capacity overflow") or abort the process.
///
/// The size is probed with a fallible reservation that is dropped at once
/// (untouched pages cost nothing), then the buffer is made by `vec!`, which
/// for a zero `fill` takes already-zeroed pages from the allocator instead of
/// writing every value (the kernels then write each value once).
pub(crate) fn buffer<T: Clone>(
    len: usize,
    fill: T,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, KernelError> {
    Vec::<T>::new().try_reserve_exact(len).map_err(|_| {
        KernelError::Capacity(format!(
            "cannot allocate {}: {len} values of {} bytes",
            what(),
            std::mem::size_of::<T>()
        ))
    })?;
    Ok(vec![fill; len])
}

/// `Parameter` error unless every radix is at least 1 (an attribute with no values).
pub(crate) fn check_radices(radices: &[u64]) -> Result<(), KernelError> {
    match radices.iter().position(|&r| r == 0) {
        Some(j) => Err(KernelError::Parameter(format!(
            "radix of attribute {j} is 0; every attribute needs at least one value"
        ))),
        None => Ok(()),
    }
}

/// The message of a `kind` error ("Shape", "Parameter", "Malformed" or
/// "Capacity"): the kernels' tests check which kind as well as what it says.
#[cfg(test)]
pub(crate) fn message(err: KernelError, kind: &str) -> String {
    let (found, msg) = match err {
        KernelError::Shape(m) => ("Shape", m),
        KernelError::Parameter(m) => ("Parameter", m),
        KernelError::Malformed(m) => ("Malformed", m),
        KernelError::Capacity(m) => ("Capacity", m),
        other => panic!("expected a {kind} error, got {other:?}"),
    };
    assert_eq!(found, kind, "{msg}");
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_past_memory_are_errors_not_aborts() {
        assert_eq!(buffer(3, 7u8, || "x".into()).unwrap(), vec![7, 7, 7]);
        let err = buffer(usize::MAX / 2, 0u64, || "the output".into()).unwrap_err();
        assert!(
            err.to_string().contains("cannot allocate the output"),
            "{err}"
        );
    }

    #[test]
    fn zero_radices_are_named() {
        assert!(check_radices(&[1, 2]).is_ok());
        assert_eq!(
            check_radices(&[3, 0, 0]).unwrap_err(),
            KernelError::Parameter(
                "radix of attribute 1 is 0; every attribute needs at least one value".into()
            )
        );
    }
}
