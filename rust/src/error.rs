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
