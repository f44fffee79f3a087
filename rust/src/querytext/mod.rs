//! Query text: privpub's one parser (issue 33).
//!
//! A query is a WHERE condition (optionally after `WHERE`) or
//! `SELECT count(*) | sum(col) | avg(col) FROM <name> [WHERE …]`. Both are read by the `sqlparser`
//! crate (DuckDB dialect): its tokenizer and its recursive-descent parser,
//! with a recursion limit. What privpub adds is policy that DuckDB's grammar
//! does not state, on sqlparser's own tokens and tree:
//!
//! - characters SQL does not read outside quotes (a digit that is not 0-9, a
//!   space that is not SQL whitespace, a control character) are refused by
//!   position, where sqlparser would skip Unicode spaces;
//! - a word DuckDB reserves and privpub has never read as a column (SELECT,
//!   ANY, CASE, …: `refusals::REFUSED`) standing where a column would is refused with
//!   the fix, double quotes; other keywords standing there are read as names
//!   (`order = 1`), as they always were;
//! - the limits: AND/OR operands counted on the tokens, listed values
//!   counted as lists are read, nesting measured on the tree (and bounded
//!   before that by the parser's recursion limit);
//! - the SELECT form: every clause but the WHERE condition refused by name;
//! - a literal IN list (`IN (1, 2, 'x')`) is read off sqlparser's tokens into
//!   one value list before the parser sees it, so a million values cost one
//!   array, not a million tree nodes (a list with anything else in it is
//!   left to the parser, and the tree's constant lists become value lists
//!   the same way);
//! - IN subqueries are kept as SQL text with the tables they read and the
//!   functions they call, for the caller's allow-lists.
//!
//! The result is a small tree ([`Node`]) that the Python layer turns into the
//! sqlglot nodes the counting engine works on. Nothing here panics on input.
//!
//! Files by reason to change: `tokens` (positions and what a token is),
//! `reader` (the tokens read and handed to sqlparser), `refusals` (what is
//! refused and how it is worded), `lists` (literal IN lists read off the
//! tokens), `runs` (long integer runs read without the tokenizer where that
//! reads the same), `convert` (sqlparser's tree into [`Node`]), `select` (IN
//! subqueries and the SELECT form).

mod convert;
mod lists;
mod reader;
mod refusals;
mod runs;
mod select;
mod tokens;

#[cfg(test)]
mod tests;

use reader::Reader;
use select::audit;
pub use select::Aggregate;

/// The stated limits (Python's `querytext.MAX_DEPTH`, `MAX_TERMS`, `MAX_VALUES`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub depth: usize,
    pub terms: usize,
    pub values: usize,
}

/// Why a text is refused. Character positions count characters of the text.
#[derive(Debug, Clone, PartialEq)]
pub enum TextError {
    /// Character `at` is not read by SQL (or starts the problem stated).
    Character {
        at: usize,
        problem: Option<String>,
    },
    /// A syntax error, in words.
    Syntax(String),
    /// A quoted string, name or comment is not closed.
    Unclosed,
    /// A reserved word stands where a column would (characters at..at+len).
    Reserved {
        word: String,
        at: usize,
        len: usize,
    },
    /// A bitwise operator where pandas users mean a logical one; every
    /// position (in characters) of that token in the text.
    Bitwise {
        token: char,
        word: &'static str,
        at: Vec<usize>,
    },
    /// Nesting deeper than the limit (`past`: deeper than the parser reads,
    /// `depth` is then the bound).
    Depth {
        depth: usize,
        past: bool,
    },
    Terms(usize),
    Values(usize),
    /// A clause after a condition (`a > 0 LIMIT 1`).
    Clause(String),
    /// What the SELECT form holds besides count(*) and WHERE.
    Select(String),
    /// `FROM '<file>'`.
    File(String),
}

/// A literal value of an IN list.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Int(i64),
    /// An integer outside int64, as its decimal digits (with a leading '-').
    Big(String),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// The values of a literal IN list and their SQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Ints(Vec<i64>),
    Mixed(Vec<Literal>),
}

/// An IN subquery: its SQL, the tables it reads, the functions it calls
/// (lowercase name, call as written with the name in capitals), its number of
/// output columns, and the first source that is not a plain table name.
#[derive(Debug, Clone, PartialEq)]
pub struct Subquery {
    pub sql: String,
    pub tables: Vec<String>,
    pub functions: Vec<(String, String)>,
    pub columns: usize,
    pub refused: Option<String>,
}

/// A condition's tree: what the Python layer needs, no more.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Paren(Box<Node>),
    Neg(Box<Node>),
    /// `=`, `<>`, `<`, `<=`, `>`, `>=`, `+`, `-`, `*`, `/`, `%`.
    Binary(&'static str, Box<Node>, Box<Node>),
    /// Name parts, last the column's (each with whether it was quoted).
    Column(Vec<(String, bool)>),
    Number(String),
    Str(String),
    Bool(bool),
    Null,
    /// A literal IN list.
    List {
        expr: Box<Node>,
        negated: bool,
        values: Values,
        sql: String,
    },
    /// An IN list with non-literal members.
    In {
        expr: Box<Node>,
        negated: bool,
        items: Vec<Node>,
    },
    Sub {
        expr: Box<Node>,
        negated: bool,
        query: Subquery,
    },
    Between {
        expr: Box<Node>,
        negated: bool,
        low: Box<Node>,
        high: Box<Node>,
    },
    Like {
        expr: Box<Node>,
        negated: bool,
        pattern: Box<Node>,
        insensitive: bool,
    },
    /// `IS [NOT] NULL | TRUE | FALSE`.
    Is {
        expr: Box<Node>,
        negated: bool,
        what: &'static str,
    },
    Cast {
        expr: Box<Node>,
        to: String,
    },
    /// `DATE '…'` and the like.
    Typed {
        to: String,
        value: String,
    },
    Interval {
        value: String,
        unit: Option<String>,
    },
    Function {
        name: String,
        args: Vec<Node>,
    },
    Tuple(Vec<Node>),
    /// SQL a condition does not hold (refused by the caller, by name).
    Other {
        sql: String,
        what: &'static str,
    },
}

/// A parsed query: the condition (None: every row), for the SELECT form the
/// table's name and alias (columns may be qualified by them), and what is
/// asked of the rows ([`Aggregate::Count`] for a bare condition).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub condition: Option<Node>,
    pub table: Option<String>,
    pub alias: Option<String>,
    pub aggregate: Aggregate,
}

/// Parse query text (either form) within `limits`.
pub fn parse(text: &str, limits: Limits) -> Result<Parsed, TextError> {
    with_stack(text, || Reader::new(text, limits)?.query())
}

/// Parse the text of an IN subquery (`Expr.isin("select …")`).
pub fn parse_subquery(text: &str, limits: Limits) -> Result<Subquery, TextError> {
    with_stack(text, || {
        let mut reader = Reader::new(text, limits)?;
        let query = reader.run(|p| p.parse_query())?;
        reader.end(false)?;
        let (found, depth) = audit(*query);
        if depth > limits.depth {
            return Err(TextError::Depth { depth, past: false });
        }
        Ok(found)
    })
}

/// Values as the body of an SQL list, "1, 2, -3".
pub fn render(values: &[i64]) -> String {
    let mut out = String::with_capacity(values.len() * 8);
    let mut buffer = itoa::Buffer::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(buffer.format(*v));
    }
    out
}

/// Run `f` with stack enough for the longest AND/OR chain a long text can
/// hold: sqlparser's tree is left-deep, and dropping or printing a subquery
/// recurses along it (the condition's own chains are walked in loops).
fn with_stack<T>(text: &str, f: impl FnOnce() -> T) -> T {
    if text.len() < 1 << 12 {
        return f();
    }
    let size = (text.len() * 256).clamp(16 << 20, 512 << 20);
    stacker::grow(size, f)
}
