//! The one error type of the kernels. `lib.rs` maps it once onto the
//! Python hierarchy (`privpub.core.errors`); the Python layer then names the
//! column and value, which the kernels do not know.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// Attribute `attribute` of row `row` is not an index into its domain.
    OutOfDomain { attribute: usize, row: usize },
    /// Code at `row` is not below the domain size m.
    InvalidCode { row: usize },
    /// Arguments disagree in shape or size (a bug in the caller, not in the data).
    Shape(String),
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
        }
    }
}

impl std::error::Error for KernelError {}

/// A vector of `len` copies of `fill`, or a `Shape` error naming `what` when
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
        KernelError::Shape(format!(
            "cannot allocate {}: {len} values of {} bytes",
            what(),
            std::mem::size_of::<T>()
        ))
    })?;
    Ok(vec![fill; len])
}

/// `Shape` error unless every radix is at least 1 (an attribute with no values).
pub(crate) fn check_radices(radices: &[u64]) -> Result<(), KernelError> {
    match radices.iter().position(|&r| r == 0) {
        Some(j) => Err(KernelError::Shape(format!(
            "radix of attribute {j} is 0; every attribute needs at least one value"
        ))),
        None => Ok(()),
    }
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
            KernelError::Shape(
                "radix of attribute 1 is 0; every attribute needs at least one value".into()
            )
        );
    }
}
