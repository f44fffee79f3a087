//! Query text: privpub's one parser (issue 33).
//!
//! A query is a WHERE condition (optionally after `WHERE`) or
//! `SELECT count(*) FROM <name> [WHERE …]`. Both are read by the `sqlparser`
//! crate (DuckDB dialect): its tokenizer and its recursive-descent parser,
//! with a recursion limit. What privpub adds is policy that DuckDB's grammar
//! does not state, on sqlparser's own tokens and tree:
//!
//! - characters SQL does not read outside quotes (a digit that is not 0-9, a
//!   space that is not SQL whitespace, a control character) are refused by
//!   position, where sqlparser would skip Unicode spaces;
//! - a word DuckDB reserves and privpub has never read as a column (SELECT,
//!   ANY, CASE, …: [`REFUSED`]) standing where a column would is refused with
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

use sqlparser::ast::{
    BinaryOperator, DuplicateTreatment, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    GroupByExpr, InTarget, LimitClause, ObjectNamePart, Query, SelectItem, SetExpr, TableFactor,
    UnaryOperator, Value, Visit, Visitor,
};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer, Whitespace};
use std::ops::ControlFlow;

/// Words DuckDB reserves that privpub refuses as bare column names (where a
/// column would stand), asking for double quotes. DuckDB reserves more; the
/// rest (ORDER, GROUP, LIMIT, ALL, …) privpub has always read as names there.
pub const REFUSED: [&str; 27] = [
    "ANY",
    "AS",
    "CASE",
    "CREATE",
    "DESCRIBE",
    "DISTINCT",
    "ELSE",
    "EXCEPT",
    "FETCH",
    "FOR",
    "FROM",
    "HAVING",
    "INTERSECT",
    "INTO",
    "LATERAL",
    "ON",
    "ONLY",
    "QUALIFY",
    "RETURNING",
    "SELECT",
    "SUMMARIZE",
    "THEN",
    "UNION",
    "USING",
    "WHEN",
    "WHERE",
    "WITH",
];

/// Words that keep their own meaning wherever they stand (never read as names).
const OWN_MEANING: [&str; 6] = ["AND", "OR", "NOT", "NULL", "TRUE", "FALSE"];

/// Operators written as words: one standing alone is missing an operand.
const OPERATOR_WORDS: [&str; 8] = ["AND", "OR", "NOT", "IN", "IS", "LIKE", "ILIKE", "BETWEEN"];

/// Clauses a SELECT may hold and a condition may not (named in refusals).
const CLAUSES: [&str; 14] = [
    "LIMIT",
    "OFFSET",
    "ORDER",
    "GROUP",
    "HAVING",
    "QUALIFY",
    "WINDOW",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "FETCH",
    "USING",
    "TABLESAMPLE",
    "SAMPLE",
];

/// Functions a subquery may call live in Python (the caller's allow-list); a
/// placeholder token of this prefix stands for a value list read off the tokens.
const LIST_PLACEHOLDER: &str = "$privpub:";

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

/// A parsed query: the condition (None: count everything), and for the
/// SELECT form the table's name and alias (columns may be qualified by them).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub condition: Option<Node>,
    pub table: Option<String>,
    pub alias: Option<String>,
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

// ---- positions -------------------------------------------------------------------------------

/// Character index of a token's location (sqlparser counts lines at '\n' and
/// columns in characters, both from 1).
struct Lines {
    starts: Vec<usize>,
    chars: usize,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        let mut chars = 0;
        for c in text.chars() {
            chars += 1;
            if c == '\n' {
                starts.push(chars);
            }
        }
        Lines { starts, chars }
    }

    fn at(&self, loc: Location) -> usize {
        if loc.line == 0 {
            return self.chars; // an empty span: EOF
        }
        let line = (loc.line as usize - 1).min(self.starts.len() - 1);
        (self.starts[line] + loc.column as usize).saturating_sub(1)
    }
}

/// `"at Line: L, Column: C"` at the end of a sqlparser message.
fn message_location(message: &str) -> (String, Option<Location>) {
    if let Some(cut) = message.rfind(" at Line: ") {
        let rest = &message[cut + " at Line: ".len()..];
        let mut parts = rest.split(", Column: ");
        if let (Some(line), Some(column)) = (parts.next(), parts.next()) {
            if let (Ok(line), Ok(column)) = (line.trim().parse(), column.trim().parse()) {
                return (message[..cut].to_string(), Some(Location { line, column }));
            }
        }
    }
    (message.to_string(), None)
}

/// The first character outside quotes that SQL does not read.
fn first_unread(text: &str, tokens: &[TokenWithSpan], lines: &Lines) -> Option<usize> {
    let chars: Vec<char> = text.chars().collect();
    for t in tokens {
        let at = lines.at(t.span.start);
        match &t.token {
            Token::Whitespace(Whitespace::Space)
                if !matches!(chars.get(at), Some(' ' | '\x0b' | '\x0c')) =>
            {
                return Some(at);
            }
            Token::Char(_) => return Some(at),
            _ => {}
        }
    }
    None
}

// ---- tokens ----------------------------------------------------------------------------------

fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

fn bare_word(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn significant(token: &Token) -> bool {
    !matches!(token, Token::Whitespace(_))
}

/// Whether a token ends an operand (after one, a keyword is an operator).
fn ends_operand(token: &Token) -> bool {
    match token {
        Token::Number(..) | Token::SingleQuotedString(_) | Token::RParen => true,
        Token::Word(w) => w.quote_style.is_some() || w.keyword == Keyword::NoKeyword,
        _ => false,
    }
}

fn comparison(token: &Token) -> bool {
    matches!(
        token,
        Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Spaceship
    )
}

fn starts_predicate(token: &Token) -> bool {
    comparison(token)
        || ["IN", "BETWEEN", "LIKE", "ILIKE", "IS"]
            .iter()
            .any(|w| is_word(token, w))
}

fn ends_value(token: Option<&Token>) -> bool {
    match token {
        None | Some(Token::EOF) | Some(Token::RParen) => true,
        Some(t) => is_word(t, "AND") || is_word(t, "OR"),
    }
}

/// A token as the user wrote it, for messages.
fn shown(token: &Token) -> String {
    match token {
        Token::EOF => "the end".to_string(),
        Token::Placeholder(p) if p.starts_with(LIST_PLACEHOLDER) => "a list of values".to_string(),
        other => other.to_string(),
    }
}

/// A lower bound of the nesting a text parses to: open parentheses and runs
/// of prefix operators (NOT, unary minus). Where the parser stops early (its
/// recursion limit is met inside a construct it then reads differently), the
/// refusal names the depth by this bound.
fn nesting_bound(tokens: &[TokenWithSpan]) -> usize {
    let (mut stack, mut total, mut run, mut best) = (Vec::new(), 0usize, 0usize, 0usize);
    let mut prev: Option<&Token> = None;
    for token in tokens.iter().map(|t| &t.token).filter(|t| significant(t)) {
        let prefix = !prev.is_some_and(ends_operand);
        match token {
            Token::LParen => {
                stack.push(run + 1);
                total += run + 1;
                run = 0;
                best = best.max(total);
            }
            Token::RParen => {
                total -= stack.pop().unwrap_or(0);
                run = 0;
            }
            Token::Minus | Token::Plus | Token::Tilde if prefix => run += 1,
            t if prefix && is_word(t, "NOT") => run += 1,
            _ => {
                best = best.max(total + run + 1);
                run = 0;
            }
        }
        prev = Some(token);
    }
    best
}

struct Reader<'a> {
    text: std::borrow::Cow<'a, str>,
    limits: Limits,
    tokens: Vec<TokenWithSpan>,
    lists: Vec<Option<(Values, String)>>,
    lines: Option<Lines>,
    /// Values in the lists read off the tokens.
    values: usize,
    /// Whether the text is a SELECT (or WITH) rather than a condition.
    select: bool,
    /// Tokens the parser has read (its index after a parse).
    read: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, limits: Limits) -> Result<Self, TextError> {
        let mut reader = Reader {
            text: text.into(),
            limits,
            tokens: Vec::new(),
            lists: Vec::new(),
            lines: None,
            values: 0,
            select: false,
            read: 0,
        };
        let tokens = match Tokenizer::new(&DuckDbDialect {}, text)
            .with_unescape(true)
            .tokenize_with_location()
        {
            Ok(tokens) => tokens,
            Err(err) => {
                // A character SQL does not read may come before the problem
                // the tokenizer reports: report the first, by position.
                let mut before = Vec::new();
                let _ = Tokenizer::new(&DuckDbDialect {}, text)
                    .with_unescape(true)
                    .tokenize_with_location_into_buf(&mut before);
                if let Some(at) = first_unread(text, &before, reader.lines()) {
                    return Err(TextError::Character { at, problem: None });
                }
                let at = reader.position(err.location);
                return Err(if err.message.starts_with("Unterminated") {
                    TextError::Unclosed
                } else if err.message.starts_with("Unexpected character") {
                    TextError::Character { at, problem: None }
                } else {
                    TextError::Syntax(format!("{} at character {}", err.message, at + 1))
                });
            }
        };
        reader.tokens = tokens;
        reader.end_comments_at_returns();
        reader.check_characters()?;
        reader.check_words()?;
        reader.fold_lists()?;
        Ok(reader)
    }

    /// DuckDB ends a `--` comment at '\r' as at '\n'; sqlparser at '\n' only
    /// (it would read `a = 1 --c\rAND b = 2` as `a = 1`). Such a '\r' is read
    /// as the '\n' it means, character for character (positions unchanged).
    fn end_comments_at_returns(&mut self) {
        loop {
            let found = self.tokens.iter().find_map(|t| match &t.token {
                Token::Whitespace(Whitespace::SingleLineComment { comment, prefix }) => {
                    comment.find('\r').map(|cut| {
                        (
                            t.span.start,
                            prefix.chars().count() + comment[..cut].chars().count(),
                        )
                    })
                }
                _ => None,
            });
            let Some((start, offset)) = found else {
                return;
            };
            let at = Lines::new(&self.text).at(start) + offset;
            let text: String = self
                .text
                .chars()
                .enumerate()
                .map(|(i, c)| if i == at { '\n' } else { c })
                .collect();
            match Tokenizer::new(&DuckDbDialect {}, &text)
                .with_unescape(true)
                .tokenize_with_location()
            {
                Ok(tokens) => {
                    self.tokens = tokens;
                    self.text = text.into();
                    self.lines = None;
                }
                Err(_) => return, // (the parse reports the text as it is)
            }
        }
    }

    fn lines(&mut self) -> &Lines {
        if self.lines.is_none() {
            self.lines = Some(Lines::new(&self.text));
        }
        self.lines.as_ref().unwrap()
    }

    fn position(&mut self, loc: Location) -> usize {
        self.lines().at(loc)
    }

    /// Every character outside quotes is SQL's: the tokenizer takes any
    /// Unicode space as a space and keeps other characters as `Char`.
    fn check_characters(&mut self) -> Result<(), TextError> {
        let plain = self
            .text
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c));
        if plain {
            return Ok(());
        }
        self.lines();
        let lines = self.lines.as_ref().expect("made above");
        match first_unread(&self.text, &self.tokens, lines) {
            Some(at) => Err(TextError::Character { at, problem: None }),
            None => Ok(()),
        }
    }

    /// Significant tokens' indices.
    fn significant(&self) -> Vec<usize> {
        (0..self.tokens.len())
            .filter(|&i| significant(&self.tokens[i].token))
            .collect()
    }

    /// FROM '<file>', the AND/OR operands, reserved words where a column
    /// stands (refused) and other keywords there (read as names).
    fn check_words(&mut self) -> Result<(), TextError> {
        let sig = self.significant();
        let mut connectives = 0usize;
        let mut betweens = 0usize;
        let mut clear = Vec::new();
        for (k, &i) in sig.iter().enumerate() {
            let token = &self.tokens[i].token;
            let before = k.checked_sub(1).map(|j| &self.tokens[sig[j]].token);
            let after = sig.get(k + 1).map(|&j| &self.tokens[j].token);
            let Some(word) = bare_word(token) else {
                continue;
            };
            if k == 0 && (word == "SELECT" || word == "WITH") {
                self.select = true;
            }
            match word.as_str() {
                "AND" if betweens > 0 => betweens -= 1,
                "AND" | "OR" => connectives += 1,
                "BETWEEN" => betweens += 1,
                "FROM" => {
                    if let Some(Token::SingleQuotedString(_)) = after {
                        return Err(TextError::File(after.map(shown).unwrap_or_default()));
                    }
                }
                _ => {}
            }
            if OWN_MEANING.contains(&word.as_str()) || before.is_some_and(ends_operand) {
                continue;
            }
            let after_not_predicate = matches!(after, Some(t) if is_word(t, "NOT"))
                && sig
                    .get(k + 2)
                    .is_some_and(|&j| starts_predicate(&self.tokens[j].token));
            let column = after.is_some_and(starts_predicate)
                || after_not_predicate
                || (before.is_some_and(comparison) && ends_value(after));
            if !column {
                continue;
            }
            if REFUSED.contains(&word.as_str()) {
                let span = self.tokens[i].span;
                let Token::Word(w) = &self.tokens[i].token else {
                    unreachable!()
                };
                let value = w.value.clone();
                let at = self.position(span.start);
                return Err(TextError::Reserved {
                    len: value.chars().count(),
                    word: value,
                    at,
                });
            }
            clear.push(i);
        }
        if connectives + 1 > self.limits.terms {
            return Err(TextError::Terms(connectives + 1));
        }
        for i in clear {
            if let Token::Word(w) = &mut self.tokens[i].token {
                w.keyword = Keyword::NoKeyword;
            }
        }
        Ok(())
    }

    /// Literal IN lists read off the tokens: `IN ( item, … )` with items
    /// `[+|-] number`, `'string'`, TRUE, FALSE, becomes `IN ( $privpub:N )`.
    fn fold_lists(&mut self) -> Result<(), TextError> {
        let sig = self.significant();
        let mut cuts: Vec<(usize, usize, usize)> = Vec::new(); // (first item, close paren, list)
        let mut values = 0usize;
        let mut k = 0;
        while k + 2 < sig.len() {
            let t = |j: usize| sig.get(j).map(|&i| &self.tokens[i].token);
            if !(t(k).is_some_and(|x| is_word(x, "IN")) && t(k + 1) == Some(&Token::LParen)) {
                k += 1;
                continue;
            }
            let mut j = k + 2;
            let mut items = Vec::new();
            let mut ok = t(j) == Some(&Token::RParen);
            while !ok {
                let negative = match t(j) {
                    Some(Token::Minus) => Some(true),
                    Some(Token::Plus) => Some(false),
                    _ => None,
                };
                if negative.is_some() {
                    j += 1;
                }
                let item = match (t(j), negative) {
                    (Some(Token::Number(s, false)), sign) => {
                        let negative = sign == Some(true);
                        (number(negative, s), Some((negative, s.replace('_', ""))))
                    }
                    (Some(Token::SingleQuotedString(s)), None) => (Literal::Str(s.clone()), None),
                    (Some(w), None) if is_word(w, "TRUE") => (Literal::Bool(true), None),
                    (Some(w), None) if is_word(w, "FALSE") => (Literal::Bool(false), None),
                    _ => break,
                };
                items.push(item);
                j += 1;
                match t(j) {
                    Some(Token::Comma) => j += 1,
                    Some(Token::RParen) => ok = true,
                    _ => break,
                }
            }
            if !ok {
                k += 1;
                continue;
            }
            values += items.len();
            if values > self.limits.values {
                return Err(TextError::Values(values));
            }
            self.values = values;
            cuts.push((sig[k + 2], sig[j], self.lists.len()));
            self.lists.push(Some(list_values(items)));
            k = j + 1;
        }
        if cuts.is_empty() {
            return Ok(());
        }
        let old = std::mem::take(&mut self.tokens);
        let mut tokens = Vec::with_capacity(old.len());
        let mut cut = cuts.into_iter().peekable();
        let mut skip_to = 0;
        for (i, token) in old.into_iter().enumerate() {
            if i < skip_to {
                continue;
            }
            if let Some(&(first, close, list)) = cut.peek() {
                if i == first {
                    let span = token.span;
                    if first != close {
                        tokens.push(TokenWithSpan::new(
                            Token::Placeholder(format!("{LIST_PLACEHOLDER}{list}")),
                            span,
                        ));
                        skip_to = close;
                        cut.next();
                        continue;
                    }
                    // An empty list: the placeholder before its ')'.
                    tokens.push(TokenWithSpan::new(
                        Token::Placeholder(format!("{LIST_PLACEHOLDER}{list}")),
                        span,
                    ));
                    cut.next();
                }
            }
            tokens.push(token);
        }
        self.tokens = tokens;
        Ok(())
    }

    /// Run the parser on the tokens (from where the last run stopped).
    fn run<T>(
        &mut self,
        f: impl FnOnce(&mut Parser) -> Result<T, ParserError>,
    ) -> Result<T, TextError> {
        let dialect = DuckDbDialect {};
        let tokens = std::mem::take(&mut self.tokens);
        let mut parser = Parser::new(&dialect)
            .with_recursion_limit(2 * self.limits.depth + 10)
            .with_tokens_with_locations(tokens);
        let result = f(&mut parser);
        self.read = parser.index();
        self.tokens = parser.into_tokens();
        result.map_err(|err| self.parse_error(err))
    }

    /// The error for a parser failure.
    fn parse_error(&mut self, err: ParserError) -> TextError {
        match err {
            ParserError::RecursionLimitExceeded => TextError::Depth {
                depth: 2 * self.limits.depth + 10,
                past: true,
            },
            ParserError::TokenizerError(message) => TextError::Syntax(message),
            ParserError::ParserError(message) => {
                let (message, loc) = message_location(&message);
                let index = match loc {
                    Some(loc) => self
                        .tokens
                        .iter()
                        .position(|t| t.span.start == loc)
                        .unwrap_or(self.tokens.len()),
                    None => self.tokens.len(),
                };
                self.error_at(index, &message)
            }
        }
    }

    /// The error at token `index` (past the end: the end of the text), from
    /// sqlparser's `message` ("Expected: X, found: Y").
    fn error_at(&mut self, index: usize, message: &str) -> TextError {
        let bound = nesting_bound(&self.tokens);
        if bound > self.limits.depth {
            return TextError::Depth {
                depth: bound - 1,
                past: true,
            };
        }
        let token = self.tokens.get(index).map(|t| t.token.clone());
        let at = match self.tokens.get(index) {
            Some(t) => {
                let start = t.span.start;
                self.position(start)
            }
            None => self.lines().chars,
        };
        let prev = self.tokens[..index.min(self.tokens.len())]
            .iter()
            .rev()
            .find(|t| significant(&t.token))
            .cloned();
        let prev_token = prev.as_ref().map(|t| &t.token);
        if self.select {
            let seen = self.tokens[..index.min(self.tokens.len())]
                .iter()
                .any(|t| is_word(&t.token, "TABLESAMPLE"));
            if seen {
                return TextError::Select("TABLESAMPLE is not supported".to_string());
            }
        }
        match (&token, prev_token) {
            (Some(Token::Comma), Some(p @ (Token::LParen | Token::Comma))) => {
                return TextError::Character {
                    at,
                    problem: Some(format!("after '{p}': an item is missing; remove the comma")),
                };
            }
            (Some(Token::Comma | Token::RParen), Some(Token::Plus)) => {
                return TextError::Character {
                    at,
                    problem: Some("after '+': the '+' has no operand".to_string()),
                };
            }
            (Some(Token::Word(w)), Some(Token::Number(n, _)))
                if w.quote_style.is_none()
                    && w.value.starts_with(['e', 'E'])
                    && prev
                        .as_ref()
                        .is_some_and(|p| p.span.end == self.tokens[index].span.start) =>
            {
                return TextError::Character {
                    at,
                    problem: Some(format!(
                        "after '{n}': an exponent needs its digits (1e3, 2.5E-1)"
                    )),
                };
            }
            _ => {}
        }
        if let Some(word) = token.as_ref().and_then(bare_word) {
            if CLAUSES.contains(&word.as_str()) && prev_token.is_some() {
                let next = self.tokens[index + 1..]
                    .iter()
                    .find(|t| significant(&t.token))
                    .map(|t| &t.token);
                let name = match next {
                    Some(t) if is_word(t, "BY") => format!("{word} BY"),
                    _ => word,
                };
                return if self.select {
                    TextError::Select(format!("{name} is not supported"))
                } else {
                    TextError::Clause(name)
                };
            }
        }
        if message.starts_with("Expected: an expression") {
            if let Some(p) = prev_token {
                let operator = !ends_operand(p) && !matches!(p, Token::LParen | Token::Comma)
                    || bare_word(p).is_some_and(|w| OPERATOR_WORDS.contains(&w.as_str()));
                if operator {
                    return TextError::Syntax(format!("'{}' is missing an operand", shown(p)));
                }
            }
        }
        let found = token
            .as_ref()
            .map(shown)
            .unwrap_or_else(|| "the end".into());
        let expected = message
            .strip_prefix("sql parser error: ")
            .unwrap_or(message)
            .strip_prefix("Expected: ")
            .and_then(|m| m.split(", found: ").next())
            .map(str::to_string);
        TextError::Syntax(match expected {
            Some(e) => format!("expected {e}, found {found} at character {}", at + 1),
            None => format!("{message} (character {})", at + 1),
        })
    }

    /// After the query: an optional ';', then nothing.
    fn end(&mut self, condition: bool) -> Result<(), TextError> {
        let mut index = self.read;
        let next = |tokens: &[TokenWithSpan], from: usize| {
            (from..tokens.len()).find(|&i| significant(&tokens[i].token))
        };
        if let Some(i) = next(&self.tokens, index) {
            if self.tokens[i].token == Token::SemiColon {
                index = i + 1;
            }
        }
        match next(&self.tokens, index) {
            None => Ok(()),
            Some(i) if self.tokens[i].token == Token::EOF => Ok(()),
            Some(i) => {
                let what = if condition {
                    "Expected: the end of the condition"
                } else {
                    "Expected: the end of the query"
                };
                Err(self.error_at(i, what))
            }
        }
    }

    fn query(mut self) -> Result<Parsed, TextError> {
        if self.select {
            let query = self.run(|p| p.parse_query())?;
            self.end(false)?;
            let (where_, table, alias) = count_select(*query)?;
            let condition = match where_ {
                Some(e) => Some(self.condition(e)?),
                None => None,
            };
            return Ok(Parsed {
                condition,
                table: Some(table),
                alias,
            });
        }
        // "WHERE a > 0" is the condition after WHERE.
        if let Some(first) = self.tokens.iter().position(|t| significant(&t.token)) {
            if is_word(&self.tokens[first].token, "WHERE") {
                self.tokens[first].token = Token::Whitespace(Whitespace::Space);
            }
        }
        let expr = self.run(|p| p.parse_expr())?;
        self.end(true)?;
        let condition = Some(self.condition(expr)?);
        Ok(Parsed {
            condition,
            table: None,
            alias: None,
        })
    }

    fn condition(&mut self, expr: Expr) -> Result<Node, TextError> {
        let mut convert = Convert {
            lists: &mut self.lists,
            values: self.values,
            max_values: self.limits.values,
            bitwise: None,
        };
        let result = convert.expr(expr);
        if let Some((token, word)) = convert.bitwise {
            return Err(self.bitwise(token, word));
        }
        let (node, depth) = result?;
        if depth > self.limits.depth {
            return Err(TextError::Depth { depth, past: false });
        }
        Ok(node)
    }

    fn bitwise(&mut self, token: char, word: &'static str) -> TextError {
        let kind = match token {
            '&' => Token::Ampersand,
            '|' => Token::Pipe,
            _ => Token::Tilde,
        };
        let lines = Lines::new(&self.text);
        let at = Tokenizer::new(&DuckDbDialect {}, &self.text)
            .tokenize_with_location()
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.token == kind)
            .map(|t| lines.at(t.span.start))
            .collect();
        TextError::Bitwise { token, word, at }
    }
}

// ---- numbers ---------------------------------------------------------------------------------

/// A numeric literal's value: an integer (int64 or its digits) for integer
/// syntax, else a double (as Python's float() reads the same text).
fn number(negative: bool, text: &str) -> Literal {
    let digits: std::borrow::Cow<str> = if text.contains('_') {
        text.replace('_', "").into()
    } else {
        text.into()
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let magnitude = digits.parse::<u128>().ok();
        let value = magnitude.and_then(|m| {
            if negative {
                (m <= 1u128 << 63).then(|| (m as i128).wrapping_neg() as i64)
            } else {
                i64::try_from(m).ok()
            }
        });
        return match value {
            Some(v) => Literal::Int(v),
            None => Literal::Big(format!("{}{digits}", if negative { "-" } else { "" })),
        };
    }
    let value = digits.parse::<f64>().unwrap_or(f64::NAN);
    Literal::Float(if negative { -value } else { value })
}

/// A literal's SQL, as DuckDB reads it back (a number's own text).
fn literal_sql(literal: &Literal, text: Option<(bool, &str)>) -> String {
    match literal {
        Literal::Int(v) => v.to_string(),
        Literal::Big(digits) => digits.clone(),
        Literal::Float(_) => match text {
            Some((negative, t)) => format!("{}{t}", if negative { "-" } else { "" }),
            None => "NULL".to_string(),
        },
        Literal::Str(s) => format!("'{}'", s.replace('\'', "''")),
        Literal::Bool(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
    }
}

/// The values of a literal list and its SQL (each number as written).
fn list_values(items: Vec<(Literal, Option<(bool, String)>)>) -> (Values, String) {
    if items.iter().all(|(v, _)| matches!(v, Literal::Int(_))) {
        let ints: Vec<i64> = items
            .into_iter()
            .map(|(v, _)| match v {
                Literal::Int(i) => i,
                _ => 0,
            })
            .collect();
        let sql = render(&ints);
        return (Values::Ints(ints), sql);
    }
    let sql = items
        .iter()
        .map(|(v, text)| literal_sql(v, text.as_ref().map(|(n, t)| (*n, t.as_str()))))
        .collect::<Vec<_>>()
        .join(", ");
    (
        Values::Mixed(items.into_iter().map(|(v, _)| v).collect()),
        sql,
    )
}

// ---- the tree --------------------------------------------------------------------------------

struct Convert<'l> {
    lists: &'l mut Vec<Option<(Values, String)>>,
    /// Values listed so far (the lists read off the tokens included) and the limit.
    values: usize,
    max_values: usize,
    /// The first bitwise operator met (a pandas connective).
    bitwise: Option<(char, &'static str)>,
}

fn boxed(pair: (Node, usize)) -> (Box<Node>, usize) {
    (Box::new(pair.0), pair.1)
}

fn operator_word(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(id) if id.quote_style.is_none() => {
            let upper = id.value.to_ascii_uppercase();
            OPERATOR_WORDS.contains(&upper.as_str()).then_some(upper)
        }
        _ => None,
    }
}

impl Convert<'_> {
    /// The node of `expr` and its depth (querytext.shape's measure: every node
    /// on the longest path to a leaf; a chain of one connective is one level).
    fn expr(&mut self, expr: Expr) -> Result<(Node, usize), TextError> {
        Ok(match expr {
            Expr::BinaryOp {
                left,
                op: op @ (BinaryOperator::And | BinaryOperator::Or),
                right,
            } => {
                // A chain, walked in a loop (it may hold MAX_TERMS operands).
                let mut operands = vec![*right];
                let mut rest = *left;
                loop {
                    match rest {
                        Expr::BinaryOp { left, op: o, right } if o == op => {
                            operands.push(*right);
                            rest = *left;
                        }
                        other => {
                            operands.push(other);
                            break;
                        }
                    }
                }
                let mut nodes = Vec::with_capacity(operands.len());
                let mut depth = 0;
                while let Some(operand) = operands.pop() {
                    let (node, d) = self.expr(operand)?;
                    depth = depth.max(d);
                    nodes.push(node);
                }
                let node = if op == BinaryOperator::And {
                    Node::And(nodes)
                } else {
                    Node::Or(nodes)
                };
                (node, depth + 1)
            }
            Expr::BinaryOp { left, op, right } => {
                let symbol = match op {
                    BinaryOperator::Eq => "=",
                    BinaryOperator::NotEq => "<>",
                    BinaryOperator::Lt => "<",
                    BinaryOperator::LtEq => "<=",
                    BinaryOperator::Gt => ">",
                    BinaryOperator::GtEq => ">=",
                    BinaryOperator::Plus => "+",
                    BinaryOperator::Minus => "-",
                    BinaryOperator::Multiply => "*",
                    BinaryOperator::Divide => "/",
                    BinaryOperator::Modulo => "%",
                    BinaryOperator::BitwiseAnd => return self.pandas('&', "AND"),
                    BinaryOperator::BitwiseOr => return self.pandas('|', "OR"),
                    _ => {
                        let sql = Expr::BinaryOp { left, op, right }.to_string();
                        return Ok(other(sql, "an operator privpub does not evaluate"));
                    }
                };
                if operator_word(&left).is_some() {
                    return Err(TextError::Syntax(format!(
                        "'{symbol}' is missing an operand"
                    )));
                }
                let (l, dl) = boxed(self.expr(*left)?);
                let (r, dr) = boxed(self.expr(*right)?);
                (Node::Binary(symbol, l, r), 1 + dl.max(dr))
            }
            Expr::UnaryOp { op, expr } => match op {
                UnaryOperator::Not => {
                    let (x, d) = boxed(self.expr(*expr)?);
                    (Node::Not(x), d + 1)
                }
                UnaryOperator::Minus => {
                    let (x, d) = boxed(self.expr(*expr)?);
                    (Node::Neg(x), d + 1)
                }
                UnaryOperator::Plus if matches!(&*expr, Expr::Value(v) if matches!(v.value, Value::Number(..))) => {
                    self.expr(*expr)?
                }
                UnaryOperator::BitwiseNot => return self.pandas('~', "NOT"),
                _ => {
                    let sql = Expr::UnaryOp { op, expr }.to_string();
                    return Ok(other(sql, "an operator privpub does not evaluate"));
                }
            },
            Expr::Nested(x) => {
                let (x, d) = boxed(self.expr(*x)?);
                (Node::Paren(x), d + 1)
            }
            Expr::Identifier(id) => {
                if let Some(word) = operator_word(&Expr::Identifier(id.clone())) {
                    return Err(TextError::Syntax(format!("'{word}' is missing an operand")));
                }
                (Node::Column(vec![(id.value, id.quote_style.is_some())]), 1)
            }
            Expr::CompoundIdentifier(ids) => (
                Node::Column(
                    ids.into_iter()
                        .map(|id| (id.value, id.quote_style.is_some()))
                        .collect(),
                ),
                1,
            ),
            Expr::Value(v) => (self.value(v.value)?, 1),
            Expr::In {
                expr,
                target,
                negated,
                ..
            } => {
                let (x, dx) = boxed(self.expr(*expr)?);
                match target {
                    InTarget::List(items) => self.in_list(x, dx, negated, items)?,
                    InTarget::Subquery(query) => {
                        let (query, d) = audit(*query);
                        let depth = 1 + dx.max(2 + d);
                        (
                            Node::Sub {
                                expr: x,
                                negated,
                                query,
                            },
                            depth,
                        )
                    }
                    other_target => {
                        return Ok(other(
                            format!("IN {other_target}"),
                            "IN over a table or UNNEST",
                        ))
                    }
                }
            }
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, dx) = boxed(self.expr(*expr)?);
                let (lo, dl) = boxed(self.expr(*low)?);
                let (hi, dh) = boxed(self.expr(*high)?);
                (
                    Node::Between {
                        expr: x,
                        negated,
                        low: lo,
                        high: hi,
                    },
                    1 + dx.max(dl).max(dh) + usize::from(negated),
                )
            }
            e @ (Expr::Like { .. } | Expr::ILike { .. }) => {
                let insensitive = matches!(e, Expr::ILike { .. });
                if matches!(&e, Expr::Like { any, escape_char, .. }
                    | Expr::ILike { any, escape_char, .. } if *any || escape_char.is_some())
                {
                    return Ok(other(e.to_string(), "LIKE with ANY or ESCAPE"));
                }
                let (Expr::Like {
                    negated,
                    expr,
                    pattern,
                    ..
                }
                | Expr::ILike {
                    negated,
                    expr,
                    pattern,
                    ..
                }) = e
                else {
                    unreachable!("matched above")
                };
                let (x, dx) = boxed(self.expr(*expr)?);
                let (p, dp) = boxed(self.expr(*pattern)?);
                (
                    Node::Like {
                        expr: x,
                        negated,
                        pattern: p,
                        insensitive,
                    },
                    1 + dx.max(dp) + usize::from(negated),
                )
            }
            Expr::IsNull(x) => self.is(*x, false, "null")?,
            Expr::IsNotNull(x) => self.is(*x, true, "null")?,
            Expr::IsTrue(x) => self.is(*x, false, "true")?,
            Expr::IsNotTrue(x) => self.is(*x, true, "true")?,
            Expr::IsFalse(x) => self.is(*x, false, "false")?,
            Expr::IsNotFalse(x) => self.is(*x, true, "false")?,
            Expr::Cast {
                expr, data_type, ..
            } => {
                let (x, d) = boxed(self.expr(*expr)?);
                (
                    Node::Cast {
                        expr: x,
                        to: data_type.to_string(),
                    },
                    1 + d.max(1),
                )
            }
            Expr::TypedString(typed) => (
                Node::Typed {
                    to: typed.data_type.to_string(),
                    value: match typed.value.value {
                        Value::SingleQuotedString(s) => s,
                        other => other.to_string(),
                    },
                },
                2,
            ),
            Expr::Interval(interval) => (
                Node::Interval {
                    value: interval.value.to_string(),
                    unit: interval.leading_field.map(|f| f.to_string()),
                },
                2,
            ),
            Expr::Function(f) => {
                let name = f.name.to_string();
                if f.name.0.len() == 1 {
                    let upper = name.to_ascii_uppercase();
                    if let Some(ObjectNamePart::Identifier(id)) = f.name.0.first() {
                        if id.quote_style.is_none() && OPERATOR_WORDS.contains(&upper.as_str()) {
                            return Err(TextError::Syntax(format!(
                                "'{upper}' is missing an operand"
                            )));
                        }
                    }
                }
                let plain = f.filter.is_none()
                    && f.over.is_none()
                    && f.within_group.is_empty()
                    && f.null_treatment.is_none()
                    && matches!(f.parameters, FunctionArguments::None);
                let args = match (&f.args, plain) {
                    (FunctionArguments::None, true) => Some(Vec::new()),
                    (FunctionArguments::List(list), true)
                        if list.duplicate_treatment.is_none() && list.clauses.is_empty() =>
                    {
                        list.args
                            .iter()
                            .map(|a| match a {
                                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
                                _ => None,
                            })
                            .collect::<Option<Vec<_>>>()
                    }
                    _ => None,
                };
                let Some(args) = args else {
                    return Ok(other(Expr::Function(f).to_string(), "a function call"));
                };
                let mut nodes = Vec::with_capacity(args.len());
                let mut depth = 0;
                for arg in args {
                    let (node, d) = self.expr(arg)?;
                    depth = depth.max(d);
                    nodes.push(node);
                }
                (Node::Function { name, args: nodes }, depth + 1)
            }
            Expr::Tuple(items) => {
                let mut nodes = Vec::with_capacity(items.len());
                let mut depth = 0;
                for item in items {
                    let (node, d) = self.expr(item)?;
                    depth = depth.max(d);
                    nodes.push(node);
                }
                (Node::Tuple(nodes), depth + 1)
            }
            e => {
                let what = match &e {
                    Expr::Case { .. } => "CASE",
                    Expr::Exists { .. } | Expr::Subquery(_) => "a subquery outside IN",
                    Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) => "IS DISTINCT FROM",
                    Expr::SimilarTo { .. } | Expr::RLike { .. } => "a pattern match",
                    _ => "an expression privpub does not evaluate",
                };
                return Ok(other(e.to_string(), what));
            }
        })
    }

    /// Stop at a bitwise operator; the reader words the refusal (it needs
    /// every position of the token in the text).
    fn pandas(&mut self, token: char, word: &'static str) -> Result<(Node, usize), TextError> {
        self.bitwise.get_or_insert((token, word));
        Err(TextError::Syntax(String::new())) // (replaced by the reader)
    }

    fn is(
        &mut self,
        x: Expr,
        negated: bool,
        what: &'static str,
    ) -> Result<(Node, usize), TextError> {
        let (x, d) = boxed(self.expr(x)?);
        Ok((
            Node::Is {
                expr: x,
                negated,
                what,
            },
            1 + d.max(1) + usize::from(negated),
        ))
    }

    fn value(&mut self, value: Value) -> Result<Node, TextError> {
        Ok(match value {
            Value::Number(s, _) => Node::Number(s),
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Node::Str(s),
            Value::DollarQuotedString(d) => Node::Str(d.value),
            Value::Boolean(b) => Node::Bool(b),
            Value::Null => Node::Null,
            other_value => {
                let sql = other_value.to_string();
                return Ok(other(sql, "a literal privpub does not read").0);
            }
        })
    }

    fn in_list(
        &mut self,
        x: Box<Node>,
        dx: usize,
        negated: bool,
        items: Vec<Expr>,
    ) -> Result<(Node, usize), TextError> {
        let depth = 1 + dx.max(1) + usize::from(negated);
        // A list read off the tokens.
        if let [Expr::Value(v)] = items.as_slice() {
            if let Value::Placeholder(p) = &v.value {
                if let Some(index) = p.strip_prefix(LIST_PLACEHOLDER) {
                    let taken = index
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| self.lists.get_mut(i))
                        .and_then(Option::take);
                    if let Some((values, sql)) = taken {
                        let node = Node::List {
                            expr: x,
                            negated,
                            values,
                            sql,
                        };
                        return Ok((node, depth));
                    }
                }
            }
        }
        // A list of constants the parser read (a trailing comma, E'…'): the same.
        let constants: Option<Vec<_>> = items.iter().map(constant).collect();
        if let Some(constants) = constants {
            self.values += constants.len();
            if self.values > self.max_values {
                return Err(TextError::Values(self.values));
            }
            let (values, sql) = list_values(constants);
            let node = Node::List {
                expr: x,
                negated,
                values,
                sql,
            };
            return Ok((node, depth));
        }
        let mut nodes = Vec::with_capacity(items.len());
        let mut d = 0;
        for item in items {
            let (node, di) = self.expr(item)?;
            d = d.max(di);
            nodes.push(node);
        }
        Ok((
            Node::In {
                expr: x,
                negated,
                items: nodes,
            },
            1 + dx.max(d) + usize::from(negated),
        ))
    }
}

fn other(sql: String, what: &'static str) -> (Node, usize) {
    (Node::Other { sql, what }, 1)
}

/// A constant list member: a number (signed), a string, a boolean.
fn constant(expr: &Expr) -> Option<(Literal, Option<(bool, String)>)> {
    let (negative, value) = match expr {
        Expr::UnaryOp {
            op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
            expr,
        } => match &**expr {
            Expr::Value(v) if matches!(v.value, Value::Number(..)) => {
                (*op == UnaryOperator::Minus, &v.value)
            }
            _ => return None,
        },
        Expr::Value(v) => (false, &v.value),
        _ => return None,
    };
    match value {
        Value::Number(s, false) => {
            let text = s.replace('_', "");
            Some((number(negative, s), Some((negative, text))))
        }
        Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) if !negative => {
            Some((Literal::Str(s.clone()), None))
        }
        Value::Boolean(b) if !negative => Some((Literal::Bool(*b), None)),
        _ => None,
    }
}

// ---- subqueries and the SELECT form ----------------------------------------------------------

/// What a subquery reads and calls, and its depth (queries and expressions
/// nested, a chain of one connective counted once).
fn audit(query: Query) -> (Subquery, usize) {
    #[derive(Default)]
    struct Audit {
        tables: Vec<String>,
        functions: Vec<(String, String)>,
        refused: Option<String>,
        depth: usize,
        max: usize,
        stack: Vec<(Option<BinaryOperator>, bool)>,
    }
    impl Visitor for Audit {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            self.max = self.max.max(self.depth);
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
            match factor {
                TableFactor::Table {
                    name, args: None, ..
                } if name.0.len() == 1 => {
                    if let Some(ObjectNamePart::Identifier(id)) = name.0.first() {
                        self.tables.push(id.value.clone());
                    }
                }
                TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => {}
                other => {
                    self.refused.get_or_insert_with(|| other.to_string());
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            let op = match expr {
                Expr::BinaryOp { op, .. } => Some(op.clone()),
                _ => None,
            };
            let chained = matches!(op, Some(BinaryOperator::And | BinaryOperator::Or))
                && self.stack.last().is_some_and(|(parent, _)| parent == &op);
            if !chained {
                self.depth += 1;
                self.max = self.max.max(self.depth);
            }
            self.stack.push((op, !chained));
            let call = |name: &str| (name.to_ascii_lowercase(), expr.to_string());
            match expr {
                Expr::Function(f) => {
                    let name = f.name.to_string();
                    let shown = f.to_string();
                    let shown = match shown.strip_prefix(name.as_str()) {
                        Some(rest) => format!("{}{rest}", name.to_uppercase()),
                        None => shown,
                    };
                    self.functions.push((name.to_ascii_lowercase(), shown));
                }
                Expr::Substring { .. } => self.functions.push(call("substring")),
                Expr::Trim { .. } => self.functions.push(call("trim")),
                Expr::Ceil { .. } => self.functions.push(call("ceil")),
                Expr::Floor { .. } => self.functions.push(call("floor")),
                Expr::Extract { .. } => self.functions.push(call("extract")),
                Expr::Position { .. } => self.functions.push(call("position")),
                Expr::Overlay { .. } => self.functions.push(call("overlay")),
                Expr::Convert { .. } => self.functions.push(call("convert")),
                Expr::AtTimeZone { .. } => self.functions.push(call("timezone")),
                Expr::Collate { .. } => self.functions.push(call("collate")),
                _ => {}
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            if let Some((_, counted)) = self.stack.pop() {
                if counted {
                    self.depth -= 1;
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut found = Audit::default();
    let _ = query.visit(&mut found);
    let columns = first_select(&query).map_or(1, |s| s.projection.len());
    let sql = query.to_string();
    (
        Subquery {
            sql,
            tables: found.tables,
            functions: found.functions,
            columns,
            refused: found.refused,
        },
        found.max,
    )
}

fn first_select(query: &Query) -> Option<&sqlparser::ast::Select> {
    let mut body = &*query.body;
    loop {
        match body {
            SetExpr::Select(s) => return Some(s),
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(q) => body = &q.body,
            _ => return None,
        }
    }
}

/// The condition of `SELECT count(*) FROM <name> [WHERE …]`, the name and its
/// alias; every other clause refused by name.
fn count_select(query: Query) -> Result<(Option<Expr>, String, Option<String>), TextError> {
    let refuse = |what: String| Err(TextError::Select(what));
    let unsupported = |clause: &str| Err(TextError::Select(format!("{clause} is not supported")));
    if query.with.is_some() {
        return unsupported("WITH");
    }
    if query.order_by.is_some() {
        return unsupported("ORDER BY");
    }
    match &query.limit_clause {
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if limit.is_some() {
                return unsupported("LIMIT");
            }
            if offset.is_some() {
                return unsupported("OFFSET");
            }
            if !limit_by.is_empty() {
                return unsupported("LIMIT BY");
            }
        }
        Some(LimitClause::OffsetCommaLimit { .. }) => return unsupported("LIMIT"),
        None => {}
    }
    if query.fetch.is_some() {
        return unsupported("FETCH");
    }
    if !query.locks.is_empty() {
        return unsupported("FOR UPDATE");
    }
    if query.for_clause.is_some() || query.settings.is_some() || query.format_clause.is_some() {
        return unsupported("FOR, SETTINGS or FORMAT");
    }
    if !query.pipe_operators.is_empty() {
        return unsupported("a pipe operator");
    }
    let select = match *query.body {
        SetExpr::Select(s) => *s,
        SetExpr::SetOperation { op, .. } => return unsupported(&op.to_string()),
        other_body => return refuse(format!("it is {}, not a SELECT", other_body)),
    };
    if select.distinct.is_some() {
        return unsupported("DISTINCT");
    }
    let clauses = [
        (select.top.is_some(), "TOP"),
        (select.into.is_some(), "INTO"),
        (!select.lateral_views.is_empty(), "LATERAL VIEW"),
        (select.prewhere.is_some(), "PREWHERE"),
        (
            match &select.group_by {
                GroupByExpr::All(_) => true,
                GroupByExpr::Expressions(e, m) => !e.is_empty() || !m.is_empty(),
            },
            "GROUP BY",
        ),
        (!select.cluster_by.is_empty(), "CLUSTER BY"),
        (!select.distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!select.sort_by.is_empty(), "SORT BY"),
        (select.having.is_some(), "HAVING"),
        (!select.named_window.is_empty(), "WINDOW"),
        (select.qualify.is_some(), "QUALIFY"),
        (!select.connect_by.is_empty(), "CONNECT BY"),
        (select.value_table_mode.is_some(), "SELECT AS VALUE"),
        (select.exclude.is_some(), "EXCLUDE"),
    ];
    if let Some((_, clause)) = clauses.iter().find(|(present, _)| *present) {
        return unsupported(clause);
    }
    if select.projection.len() != 1 {
        return refuse(format!("it selects {} columns", select.projection.len()));
    }
    let count = match &select.projection[0] {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
        other_item => return refuse(format!("it selects '{other_item}', not count(*)")),
    };
    match count {
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("count") => {
            let star = match &f.args {
                FunctionArguments::List(list) => {
                    if list.duplicate_treatment == Some(DuplicateTreatment::Distinct) {
                        return refuse(format!("{f} counts DISTINCT values"));
                    }
                    list.clauses.is_empty()
                        && matches!(
                            list.args.as_slice(),
                            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]
                        )
                }
                _ => false,
            };
            let plain = f.filter.is_none()
                && f.over.is_none()
                && f.within_group.is_empty()
                && f.null_treatment.is_none()
                && matches!(f.parameters, FunctionArguments::None);
            if !(star && plain) {
                return refuse(format!(
                    "{f} is not count(*): privpub counts rows, not values"
                ));
            }
        }
        other_expr => return refuse(format!("it selects '{other_expr}', not count(*)")),
    }
    if select.from.is_empty() {
        return refuse("it has no FROM".to_string());
    }
    if select.from.len() > 1 || !select.from[0].joins.is_empty() {
        return unsupported("JOIN");
    }
    let relation = &select.from[0].relation;
    let (name, alias) = match relation {
        TableFactor::Table {
            name,
            alias,
            args,
            with_hints,
            version,
            with_ordinality,
            partitions,
            json_path,
            sample,
            index_directives,
            ..
        } => {
            if args.is_some() {
                return refuse(format!("FROM {relation} is a table function"));
            }
            if name.0.len() != 1 {
                return refuse(format!("FROM {relation} is qualified"));
            }
            if sample.is_some() {
                return refuse(format!("FROM {relation} has SAMPLE"));
            }
            if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                return refuse(format!("FROM {relation} renames columns"));
            }
            if !with_hints.is_empty()
                || version.is_some()
                || *with_ordinality
                || !partitions.is_empty()
                || json_path.is_some()
                || !index_directives.is_empty()
            {
                return refuse(format!("FROM {relation} has more than a name"));
            }
            let Some(ObjectNamePart::Identifier(id)) = name.0.first() else {
                return refuse(format!("FROM {relation} is not a table name"));
            };
            (
                id.value.clone(),
                alias.as_ref().map(|a| a.name.value.clone()),
            )
        }
        TableFactor::Derived { .. } => {
            return refuse("FROM reads a subquery, not a table name".to_string())
        }
        other_factor => return refuse(format!("FROM reads {other_factor}, not a table name")),
    };
    Ok((select.selection, name, alias))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        depth: 24,
        terms: 20_000,
        values: 1_000_000,
    };

    fn condition(text: &str) -> Result<Node, TextError> {
        parse(text, LIMITS).map(|p| p.condition.unwrap())
    }

    #[test]
    fn reads_a_comparison() {
        let node = condition("age > 50").unwrap();
        assert_eq!(
            node,
            Node::Binary(
                ">",
                Box::new(Node::Column(vec![("age".into(), false)])),
                Box::new(Node::Number("50".into()))
            )
        );
    }

    #[test]
    fn folds_literal_lists_as_the_parser_reads_them() {
        for (text, expected) in [
            ("a IN (1, -2, + 3)", Values::Ints(vec![1, -2, 3])),
            ("a IN (1, -2, + 3,)", Values::Ints(vec![1, -2, 3])),
            ("a IN (-9223372036854775808)", Values::Ints(vec![i64::MIN])),
            (
                "a IN (9223372036854775808, 'x', TRUE, 1.5)",
                Values::Mixed(vec![
                    Literal::Big("9223372036854775808".into()),
                    Literal::Str("x".into()),
                    Literal::Bool(true),
                    Literal::Float(1.5),
                ]),
            ),
        ] {
            match condition(text).unwrap() {
                Node::List { values, .. } => assert_eq!(values, expected, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        match condition("a IN ()").unwrap() {
            Node::List { values, .. } => assert_eq!(values, Values::Ints(vec![])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_list_with_an_expression_stays_a_tree() {
        assert!(matches!(condition("a IN (1, a)").unwrap(), Node::In { .. }));
    }

    #[test]
    fn refusals_name_the_problem() {
        assert_eq!(
            condition("a IN (1, ٣)").unwrap_err(),
            TextError::Character {
                at: 9,
                problem: None
            }
        );
        assert_eq!(
            condition("a IN (1,\u{a0}2)").unwrap_err(),
            TextError::Character {
                at: 8,
                problem: None
            }
        );
        assert!(matches!(
            condition("any = 1").unwrap_err(),
            TextError::Reserved { at: 0, len: 3, .. }
        ));
        assert_eq!(
            condition("a > 0 limit 1").unwrap_err(),
            TextError::Clause("LIMIT".into())
        );
        assert!(matches!(
            condition("a = 1 & b = 2").unwrap_err(),
            TextError::Bitwise { token: '&', .. }
        ));
        assert_eq!(
            condition("age >").unwrap_err(),
            TextError::Syntax("'>' is missing an operand".into())
        );
        let deep = format!("{}a > 0{}", "(".repeat(200), ")".repeat(200));
        assert!(matches!(
            condition(&deep).unwrap_err(),
            TextError::Depth { past: true, .. }
        ));
    }

    #[test]
    fn values_are_counted_in_every_list() {
        let small = Limits {
            values: 3,
            ..LIMITS
        };
        for text in ["a IN (1, 2) OR a IN (3, 4)", "a IN (1, 2) OR a IN (3, 4,)"] {
            assert_eq!(
                parse(text, small).unwrap_err(),
                TextError::Values(4),
                "{text}"
            );
        }
    }

    #[test]
    fn the_count_form() {
        let parsed = parse("select count(*) from I as t where t.a > 0", LIMITS).unwrap();
        assert_eq!(parsed.table.as_deref(), Some("I"));
        assert_eq!(parsed.alias.as_deref(), Some("t"));
        assert_eq!(
            parse("select count(a) from I", LIMITS).unwrap_err(),
            TextError::Select("count(a) is not count(*): privpub counts rows, not values".into())
        );
    }

    #[test]
    fn long_chains_are_walked_in_loops() {
        let text = vec!["a = 1"; 20_000].join(" OR ");
        match condition(&text).unwrap() {
            Node::Or(terms) => assert_eq!(terms.len(), 20_000),
            other => panic!("{other:?}"),
        }
        let text = format!(
            "a IN (SELECT x FROM T WHERE {})",
            vec!["x = 1"; 20_000].join(" OR ")
        );
        assert!(condition(&text).is_ok());
    }

    #[test]
    fn renders_as_python_does() {
        assert_eq!(render(&[1, -2, i64::MIN]), "1, -2, -9223372036854775808");
        assert_eq!(render(&[]), "");
    }
}
