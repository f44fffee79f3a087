//! privpub's Rust core: the kernels (plain functions, no pyo3) and the
//! `privpub._core` extension module that exposes them (bindings/).
//!
//! Each binding converts numpy arrays to slices, releases the GIL for the
//! kernel, and maps `KernelError` once onto `privpub.core.errors`. No privacy
//! parameter is decided here.

pub mod attacks;
mod bindings;
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

use bindings::{
    attacks as attack_bindings, codes, counting, graph as graph_bindings, parquet, query, sampling,
    splu as splu_bindings,
};
use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BLOCK", rng::BLOCK)?;
    m.add_function(wrap_pyfunction!(codes::encode_u64, m)?)?;
    m.add_function(wrap_pyfunction!(codes::encode_wide, m)?)?;
    m.add_function(wrap_pyfunction!(codes::decode_u64, m)?)?;
    m.add_function(wrap_pyfunction!(codes::decode_wide, m)?)?;
    m.add_function(wrap_pyfunction!(codes::limbs_for, m)?)?;
    m.add_function(wrap_pyfunction!(codes::to_digits, m)?)?;
    m.add_function(wrap_pyfunction!(codes::count_in_table, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_footer, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::dictionary_page, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::decode_data_pages, m)?)?;
    m.add_function(wrap_pyfunction!(codes::scan_groups, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::uniform, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::keep_records, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::beta_step, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::beta_step_layout, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::merge_sorted, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::frapp_perturb, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::thin_product, m)?)?;
    m.add_function(wrap_pyfunction!(counting::count_subsets, m)?)?;
    m.add_function(wrap_pyfunction!(counting::sum_down, m)?)?;
    m.add("QueryTextError", m.py().get_type::<query::QueryTextError>())?;
    m.add_function(wrap_pyfunction!(query::parse_query, m)?)?;
    m.add_function(wrap_pyfunction!(query::parse_subquery, m)?)?;
    m.add_function(wrap_pyfunction!(query::int_list_text, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_build, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_count, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_cliques, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_masked_product, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_two_paths, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_four_cycles, m)?)?;
    m.add_function(wrap_pyfunction!(graph_bindings::graph_triangle_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(
        graph_bindings::graph_local_sensitivity,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(attack_bindings::weed, m)?)?;
    m.add_function(wrap_pyfunction!(splu_bindings::decoy_groups, m)?)?;
    m.add_function(wrap_pyfunction!(splu_bindings::decoy_draw, m)?)?;
    Ok(())
}
