//! `privpub._core.query`: query text (querytext/): the parsed tree as nested
//! tuples (tags, names, literals as Python values, integer lists as int64
//! arrays), refusals as `QueryTextError(kind, …)` for Python to word.

use crate::querytext::{self, Aggregate, Limits, Literal, Node, Subquery, TextError, Values};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;

pyo3::create_exception!(
    privpub._core.query,
    QueryTextError,
    pyo3::exceptions::PyValueError,
    "Query text refused: args are (kind, details…), worded by privpub.counting.querytext."
);

/// This file's functions as the submodule `privpub._core.query`, with
/// `QueryTextError`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = super::submodule(parent, module_path!())?;
    m.add("QueryTextError", m.py().get_type::<QueryTextError>())?;
    m.add_function(wrap_pyfunction!(parse_query, &m)?)?;
    m.add_function(wrap_pyfunction!(parse_subquery, &m)?)?;
    m.add_function(wrap_pyfunction!(int_list_text, &m)?)?;
    Ok(())
}

fn refusal(py: Python<'_>, err: TextError) -> PyErr {
    let args: PyResult<Bound<'_, PyTuple>> = match err {
        TextError::Character { at, problem } => ("character", at, problem).into_pyobject(py),
        TextError::Syntax(message) => ("syntax", message).into_pyobject(py),
        TextError::Unclosed => ("unclosed",).into_pyobject(py),
        TextError::Reserved { word, at, len } => ("reserved", word, at, len).into_pyobject(py),
        TextError::Bitwise { token, word, at } => {
            ("bitwise", token.to_string(), word, at).into_pyobject(py)
        }
        TextError::Depth { depth, past } => ("depth", depth, past).into_pyobject(py),
        TextError::Terms(n) => ("terms", n).into_pyobject(py),
        TextError::Values(n) => ("values", n).into_pyobject(py),
        TextError::Clause(name) => ("clause", name).into_pyobject(py),
        TextError::Select(what) => ("select", what).into_pyobject(py),
        TextError::File(token) => ("file", token).into_pyobject(py),
    };
    match args {
        Ok(args) => QueryTextError::new_err(args.unbind()),
        Err(e) => e,
    }
}

fn limits(depth: usize, terms: usize, values: usize) -> Limits {
    Limits {
        depth,
        terms,
        values,
    }
}

/// Query text (a condition, or `SELECT count(*) | sum(col) | avg(col) FROM <name>
/// [WHERE …]`) parsed within the limits: (tree or None, table name or None,
/// alias or None, (aggregate, column or None)).
#[pyfunction]
pub(crate) fn parse_query<'py>(
    py: Python<'py>,
    text: &str,
    max_depth: usize,
    max_terms: usize,
    max_values: usize,
) -> PyResult<QueryParts<'py>> {
    let limits = limits(max_depth, max_terms, max_values);
    let parsed = py
        .detach(|| querytext::parse(text, limits))
        .map_err(|e| refusal(py, e))?;
    let tree = match parsed.condition {
        Some(node) => to_py(py, node)?,
        None => py.None().into_bound(py),
    };
    let aggregate = match parsed.aggregate {
        Aggregate::Count => ("count", None),
        Aggregate::Sum(column) => ("sum", Some(column)),
        Aggregate::Avg(column) => ("avg", Some(column)),
    };
    Ok((tree, parsed.table, parsed.alias, aggregate))
}

/// What `parse_query` returns (see there).
type QueryParts<'py> = (
    Bound<'py, PyAny>,
    Option<String>,
    Option<String>,
    (&'static str, Option<String>),
);

/// The text of an IN subquery parsed: (sql, tables, functions, columns, refused).
#[pyfunction]
pub(crate) fn parse_subquery<'py>(
    py: Python<'py>,
    text: &str,
    max_depth: usize,
    max_terms: usize,
    max_values: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let limits = limits(max_depth, max_terms, max_values);
    let found = py
        .detach(|| querytext::parse_subquery(text, limits))
        .map_err(|e| refusal(py, e))?;
    subquery(py, found)
}

/// int64 values as an SQL list body, "1, 2, 3".
#[pyfunction]
pub(crate) fn int_list_text(values: PyReadonlyArray1<'_, i64>) -> PyResult<String> {
    Ok(querytext::render(values.as_slice()?))
}

fn subquery(py: Python<'_>, found: Subquery) -> PyResult<Bound<'_, PyAny>> {
    (
        found.sql,
        found.tables,
        found.functions,
        found.columns,
        found.refused,
    )
        .into_bound_py_any(py)
}

fn literal<'py>(py: Python<'py>, value: Literal) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Literal::Int(v) => v.into_bound_py_any(py),
        Literal::Big(digits) => {
            // Python's int reads any size up to its digit limit (refused by name past it).
            let int = py.get_type::<pyo3::types::PyInt>();
            int.call1((digits.as_str(),))
                .map_err(|_| refusal_integer(py, digits))
        }
        Literal::Float(v) => v.into_bound_py_any(py),
        Literal::Str(s) => s.into_bound_py_any(py),
        Literal::Bool(b) => b.into_bound_py_any(py),
    }
}

fn refusal_integer(py: Python<'_>, digits: String) -> PyErr {
    match ("integer", digits).into_pyobject(py) {
        Ok(args) => QueryTextError::new_err(args.unbind()),
        Err(e) => e,
    }
}

fn nodes<'py>(py: Python<'py>, items: Vec<Node>) -> PyResult<Bound<'py, PyAny>> {
    let items = items
        .into_iter()
        .map(|n| to_py(py, n))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

fn name_part(py: Python<'_>, part: Option<(String, bool)>) -> PyResult<Bound<'_, PyAny>> {
    match part {
        Some(p) => p.into_bound_py_any(py),
        None => Ok(py.None().into_bound(py)),
    }
}

/// A node as a tuple whose first item names its kind.
fn to_py(py: Python<'_>, node: Node) -> PyResult<Bound<'_, PyAny>> {
    match node {
        Node::And(items) => ("and", nodes(py, items)?).into_bound_py_any(py),
        Node::Or(items) => ("or", nodes(py, items)?).into_bound_py_any(py),
        Node::Not(x) => ("not", to_py(py, *x)?).into_bound_py_any(py),
        Node::Paren(x) => ("paren", to_py(py, *x)?).into_bound_py_any(py),
        Node::Neg(x) => ("neg", to_py(py, *x)?).into_bound_py_any(py),
        Node::Binary(op, l, r) => ("bin", op, to_py(py, *l)?, to_py(py, *r)?).into_bound_py_any(py),
        Node::Column(mut parts) => {
            let (name, quoted) = parts.pop().unwrap_or_default();
            let table = parts.pop();
            let db = parts.pop();
            (
                "col",
                name,
                quoted,
                name_part(py, table)?,
                name_part(py, db)?,
            )
                .into_bound_py_any(py)
        }
        Node::Number(text) => ("num", text).into_bound_py_any(py),
        Node::Str(s) => ("str", s).into_bound_py_any(py),
        Node::Bool(b) => ("bool", b).into_bound_py_any(py),
        Node::Null => ("null",).into_bound_py_any(py),
        Node::List {
            expr,
            negated,
            values,
            sql,
        } => {
            let values = match values {
                Values::Ints(ints) => ints.into_pyarray(py).into_any(),
                Values::Mixed(items) => {
                    let items = items
                        .into_iter()
                        .map(|v| literal(py, v))
                        .collect::<PyResult<Vec<_>>>()?;
                    PyList::new(py, items)?.into_any()
                }
            };
            ("list", to_py(py, *expr)?, negated, values, sql).into_bound_py_any(py)
        }
        Node::In {
            expr,
            negated,
            items,
        } => ("in", to_py(py, *expr)?, negated, nodes(py, items)?).into_bound_py_any(py),
        Node::Sub {
            expr,
            negated,
            query,
        } => ("sub", to_py(py, *expr)?, negated, subquery(py, query)?).into_bound_py_any(py),
        Node::Between {
            expr,
            negated,
            low,
            high,
        } => (
            "between",
            to_py(py, *expr)?,
            negated,
            to_py(py, *low)?,
            to_py(py, *high)?,
        )
            .into_bound_py_any(py),
        Node::Like {
            expr,
            negated,
            pattern,
            insensitive,
        } => (
            "like",
            to_py(py, *expr)?,
            negated,
            to_py(py, *pattern)?,
            insensitive,
        )
            .into_bound_py_any(py),
        Node::Is {
            expr,
            negated,
            what,
        } => ("is", to_py(py, *expr)?, negated, what).into_bound_py_any(py),
        Node::Cast { expr, to } => ("cast", to_py(py, *expr)?, to).into_bound_py_any(py),
        Node::Typed { to, value } => ("typed", to, value).into_bound_py_any(py),
        Node::Interval { value, unit } => ("interval", value, unit).into_bound_py_any(py),
        Node::Function { name, args } => ("func", name, nodes(py, args)?).into_bound_py_any(py),
        Node::Tuple(items) => ("tuple", nodes(py, items)?).into_bound_py_any(py),
        Node::Other { sql, what } => ("other", sql, what).into_bound_py_any(py),
    }
}
