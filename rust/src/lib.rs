//! privpub's Rust core: the kernels (plain functions, no pyo3) and the
//! `privpub._core` extension module that exposes them (bindings/).
//!
//! Each binding converts numpy arrays to slices, releases the GIL for the
//! kernel, and maps `KernelError` once onto `privpub.core.errors`; each
//! binding file is a submodule of `privpub._core` of its name. No privacy
//! parameter is decided here.

pub mod attacks;
mod bindings;
pub mod codecount;
pub mod columns;
pub mod encode;
pub mod error;
pub mod frapp;
pub mod graph;
pub mod groupscan;
pub mod hybrid;
pub mod marginals;
pub mod pages;
pub mod querytext;
pub mod rng;
pub mod sample;
pub mod splu;
pub mod splu_em;
pub mod tails;

use pyo3::prelude::*;

/// The extension module `privpub._core`: one submodule per binding file
/// (`bindings/codes.rs` is `privpub._core.codes`), nothing at its top.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    bindings::register(m)
}
