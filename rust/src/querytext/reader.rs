//! The reader: the text tokenized, checked and its literal lists folded
//! before sqlparser parses the tokens; the condition handed to `convert`.

use super::convert::Convert;
use super::lists::ListItem;
use super::runs;
use super::select::{aggregate_select, Aggregate};
use super::tokens::{first_unread, is_word, significant, Lines};
use super::{Limits, Node, Parsed, TextError, Values};
use sqlparser::ast::Expr;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer, Whitespace};

pub(super) struct Reader<'a> {
    pub(super) text: std::borrow::Cow<'a, str>,
    pub(super) limits: Limits,
    pub(super) tokens: Vec<TokenWithSpan>,
    pub(super) lists: Vec<Option<(Values, String)>>,
    pub(super) lines: Option<Lines>,
    /// Values in the lists read off the tokens.
    pub(super) values: usize,
    /// Whether the text is a SELECT (or WITH) rather than a condition.
    pub(super) select: bool,
    /// Runs cut out of the text by `runs`: the token of each run's first
    /// item and the cut items (taken when the fold reads them).
    pub(super) cuts: Vec<(usize, Option<Vec<ListItem>>)>,
    /// Cuts read into a literal list by the fold.
    pub(super) cuts_folded: usize,
    /// Tokens the parser has read (its index after a parse).
    read: usize,
}

impl<'a> Reader<'a> {
    /// The text read: long integer runs without the tokenizer where that
    /// reads the same (`runs`), else token by token.
    pub(super) fn new(text: &'a str, limits: Limits) -> Result<Self, TextError> {
        match Self::with_runs_cut(text, limits) {
            Some(reader) => Ok(reader),
            None => Self::whole(text, limits),
        }
    }

    fn empty(text: &'a str, limits: Limits) -> Self {
        Reader {
            text: text.into(),
            limits,
            tokens: Vec::new(),
            lists: Vec::new(),
            lines: None,
            values: 0,
            select: false,
            cuts: Vec::new(),
            cuts_folded: 0,
            read: 0,
        }
    }

    /// None when the text has no long run, or a run does not read as one
    /// literal list, or anything is refused (the whole text then says why).
    pub(super) fn with_runs_cut(text: &'a str, limits: Limits) -> Option<Self> {
        let (short, cuts) = runs::shorten(text);
        if cuts.is_empty() {
            return None;
        }
        let mut tokens = Tokenizer::new(&DuckDbDialect {}, &short)
            .with_unescape(true)
            .tokenize_with_location()
            .ok()?;
        let comment_returns = tokens.iter().any(|t| {
            matches!(&t.token, Token::Whitespace(Whitespace::SingleLineComment { comment, .. })
                if comment.contains('\r'))
        });
        if comment_returns {
            return None;
        }
        let placed = runs::place(&short, &cuts, &mut tokens)?;
        let mut reader = Self::empty(text, limits);
        reader.tokens = tokens;
        reader.cuts = placed
            .into_iter()
            .zip(cuts)
            .map(|(token, cut)| (token, Some(cut.items)))
            .collect();
        reader.check_characters().ok()?;
        reader.check_words().ok()?;
        reader.fold_lists().ok()?;
        (reader.cuts_folded == reader.cuts.len()).then_some(reader)
    }

    pub(super) fn whole(text: &'a str, limits: Limits) -> Result<Self, TextError> {
        let mut reader = Self::empty(text, limits);
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

    pub(super) fn lines(&mut self) -> &Lines {
        if self.lines.is_none() {
            self.lines = Some(Lines::new(&self.text));
        }
        self.lines.as_ref().unwrap()
    }

    pub(super) fn position(&mut self, loc: Location) -> usize {
        self.lines().at(loc)
    }

    /// Significant tokens' indices.
    pub(super) fn significant(&self) -> Vec<usize> {
        (0..self.tokens.len())
            .filter(|&i| significant(&self.tokens[i].token))
            .collect()
    }

    /// Run the parser on the tokens (from where the last run stopped).
    pub(super) fn run<T>(
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

    /// After the query: an optional ';', then nothing.
    pub(super) fn end(&mut self, condition: bool) -> Result<(), TextError> {
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

    pub(super) fn query(mut self) -> Result<Parsed, TextError> {
        if self.select {
            let query = self.run(|p| p.parse_query())?;
            self.end(false)?;
            let (where_, table, alias, aggregate) = aggregate_select(*query)?;
            let condition = match where_ {
                Some(e) => Some(self.condition(e)?),
                None => None,
            };
            return Ok(Parsed {
                condition,
                table: Some(table),
                alias,
                aggregate,
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
            aggregate: Aggregate::Count,
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
}
