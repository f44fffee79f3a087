//! `privpub._core.graph`: the graph kernels (graph/): build a CSR relation, count
//! CQ(≠) queries over it. Python holds the four CSR arrays; each call checks
//! them once (`Csr::from_parts`) before any lookup.

use crate::error::KernelError;
use crate::graph::join::{Query, Term};
use crate::graph::masked::{self, Sparse};
use crate::graph::{csr, join, patterns, sensitivity, smooth, Csr};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

/// This file's functions as the submodule `privpub._core.graph`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add_function(wrap_pyfunction!(build, &m)?)?;
    m.add_function(wrap_pyfunction!(count, &m)?)?;
    m.add_function(wrap_pyfunction!(cliques, &m)?)?;
    m.add_function(wrap_pyfunction!(masked_product, &m)?)?;
    m.add_function(wrap_pyfunction!(two_paths, &m)?)?;
    m.add_function(wrap_pyfunction!(four_cycles, &m)?)?;
    m.add_function(wrap_pyfunction!(triangle_pairs, &m)?)?;
    m.add_function(wrap_pyfunction!(local_sensitivity, &m)?)?;
    Ok(())
}

type CsrArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
);

/// CSR of the tuples (src[i], dst[i]) (and reversed when `symmetric`) over
/// nodes [0, m): (out_offsets, out_targets, in_offsets, in_sources), and the
/// number of repeated tuples merged.
#[pyfunction]
pub(crate) fn build<'py>(
    py: Python<'py>,
    src: PyReadonlyArray1<'py, i64>,
    dst: PyReadonlyArray1<'py, i64>,
    m: usize,
    symmetric: bool,
) -> PyResult<(CsrArrays<'py>, u64)> {
    let (s, d) = (src.as_slice()?, dst.as_slice()?);
    let built = py.detach(|| csr::build(s, d, m, symmetric))?;
    let c = built.csr;
    Ok((
        (
            c.out_offsets.into_pyarray(py),
            c.out_targets.into_pyarray(py),
            c.in_offsets.into_pyarray(py),
            c.in_sources.into_pyarray(py),
        ),
        built.repeated,
    ))
}

/// A relation as Python holds it, one argument: (m, out_offsets,
/// out_targets, in_offsets, in_sources) (`Graph.relation`).
#[derive(FromPyObject)]
pub(crate) struct Relation<'py>(
    usize,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u32>,
);

impl Relation<'_> {
    /// The checked CSR (`Csr::from_parts`), so that no later lookup can index
    /// out of bounds.
    fn csr(&self, py: Python<'_>) -> PyResult<Csr> {
        let parts = (
            self.1.as_slice()?.to_vec(),
            self.2.as_slice()?.to_vec(),
            self.3.as_slice()?.to_vec(),
            self.4.as_slice()?.to_vec(),
        );
        let m = self.0;
        Ok(py.detach(|| Csr::from_parts(m, parts.0, parts.1, parts.2, parts.3))?)
    }
}

/// A term: variable index ≥ 0, or constant node c encoded as −(c + 1).
fn term(t: i64) -> PyResult<Term> {
    if t >= 0 {
        return Ok(Term::Var(t as usize));
    }
    u32::try_from(-(t + 1)).map(Term::Const).map_err(|_| {
        KernelError::Parameter(format!("constant term {t} is not a 32-bit node id")).into()
    })
}

fn terms(pairs: Vec<(i64, i64)>) -> PyResult<Vec<(Term, Term)>> {
    pairs
        .into_iter()
        .map(|(a, b)| Ok((term(a)?, term(b)?)))
        .collect()
}

/// Distinct head assignments of a CQ(≠) query (variables 0..n_head are the
/// head) whose first-bound variable lies in [first.0, first.1), with the
/// order constraints `less` (variable a's node ranks below b's; the range is
/// then one of ranks, see `join::Query`).
#[pyfunction]
// The arguments are the Python call's: one per part of the query.
#[allow(clippy::too_many_arguments)]
pub(crate) fn count(
    py: Python<'_>,
    relation: Relation<'_>,
    n_vars: usize,
    n_head: usize,
    atoms: Vec<(i64, i64)>,
    neq: Vec<(i64, i64)>,
    less: Vec<(usize, usize)>,
    first: (u32, u32),
) -> PyResult<u128> {
    let g = relation.csr(py)?;
    let q = Query {
        n_vars,
        n_head,
        atoms: terms(atoms)?,
        neq: terms(neq)?,
        less,
    };
    Ok(py.detach(|| join::count_part(&g, &q, first.0..first.1))?)
}

/// k! × the number of k-cliques of a symmetric relation.
#[pyfunction]
pub(crate) fn cliques(py: Python<'_>, relation: Relation<'_>, k: usize) -> PyResult<u128> {
    let g = relation.csr(py)?;
    Ok(py.detach(|| patterns::cliques_symmetric(&g, k))?)
}

/// A scipy CSR matrix as (indptr, indices, data, number of columns), int64.
type SparseArrays<'py> = (
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    usize,
);

fn sparse<'a>(a: &'a SparseArrays<'_>) -> PyResult<Sparse<'a>> {
    Ok(Sparse {
        indptr: a.0.as_slice()?,
        indices: a.1.as_slice()?,
        data: a.2.as_slice()?,
        cols: a.3,
    })
}

/// (left · right)(x, z) at each stored entry of `mask`, in its order
/// (`masked::masked_product`).
#[pyfunction]
pub(crate) fn masked_product<'py>(
    py: Python<'py>,
    left: SparseArrays<'_>,
    right: SparseArrays<'_>,
    mask: SparseArrays<'_>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (l, r, f) = (sparse(&left)?, sparse(&right)?, sparse(&mask)?);
    let values = py.detach(|| masked::masked_product(l, r, f))?;
    Ok(values.into_pyarray(py))
}

/// Assignments of x → y → z with x, y, z pairwise distinct.
#[pyfunction]
pub(crate) fn two_paths(py: Python<'_>, relation: Relation<'_>) -> PyResult<u128> {
    let g = relation.csr(py)?;
    Ok(py.detach(|| patterns::two_paths(&g)))
}

/// Assignments of the directed 4-cycle with pairwise distinct variables.
#[pyfunction]
pub(crate) fn four_cycles(py: Python<'_>, relation: Relation<'_>) -> PyResult<u128> {
    let g = relation.csr(py)?;
    Ok(py.detach(|| patterns::four_cycles(&g)))
}

/// For each a = 0..max a_ij, the largest b_ij over node pairs with a_ij = a
/// common neighbours (−1: no such pair) of a symmetric relation.
#[pyfunction]
pub(crate) fn triangle_pairs<'py>(
    py: Python<'py>,
    relation: Relation<'_>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let g = relation.csr(py)?;
    let best = py.detach(|| smooth::pair_frontier(&g))?;
    Ok(best.into_pyarray(py))
}

/// (gain, its tuple, loss, its tuple); a tuple is (-1, -1) for a zero change.
type LocalChanges = (u128, (i64, i64), u128, (i64, i64));

/// Exact local sensitivity of a pattern query (pairwise distinct variables,
/// subgoals `goals` over variable indices): (largest gain from adding an
/// absent tuple, its tuple or (-1, -1), largest loss from removing a present
/// tuple, its tuple or (-1, -1)).
#[pyfunction]
pub(crate) fn local_sensitivity(
    py: Python<'_>,
    relation: Relation<'_>,
    n_vars: usize,
    goals: Vec<(usize, usize)>,
) -> PyResult<LocalChanges> {
    let g = relation.csr(py)?;
    let local = py.detach(|| sensitivity::pattern_local_sensitivity(&g, n_vars, &goals))?;
    let at = |t: Option<(u32, u32)>| t.map_or((-1, -1), |(a, b)| (i64::from(a), i64::from(b)));
    Ok((
        local.added,
        at(local.add_at),
        local.removed,
        at(local.remove_at),
    ))
}
