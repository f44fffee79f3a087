//! Graph kernels for relationship privacy (Rastogi, Hay, Miklau, Suciu,
//! PODS 2009): a binary relation R(u, v) in CSR form, exact counting of
//! CQ(≠) queries over it by a generic (worst-case-optimal style) join, and
//! special paths for the patterns where they pay (cliques on a symmetric
//! relation by degree ordering, two-paths from degrees).
//!
//! Node ids are dense `u32` in `[0, m)`; every count is exact (`u128`,
//! overflow is an error).

pub mod csr;
pub mod join;
pub mod masked;
pub mod patterns;
pub mod sensitivity;
pub mod smooth;
mod tails;

pub use csr::Csr;
