//! What the reader refuses before and after sqlparser, and how it is worded:
//! characters SQL does not read, reserved words where a column stands, the
//! operand limit, sqlparser's errors put in the user's terms, pandas'
//! bitwise connectives.

use super::reader::Reader;
use super::tokens::{
    bare_word, comparison, ends_operand, ends_value, first_unread, is_word, message_location,
    nesting_bound, shown, significant, starts_predicate, Lines, OPERATOR_WORDS,
};
use super::TextError;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Words DuckDB reserves that privpub refuses as bare column names (where a
/// column would stand), asking for double quotes. DuckDB reserves more; the
/// rest (ORDER, GROUP, LIMIT, ALL, …) privpub has always read as names there.
pub(super) const REFUSED: [&str; 27] = [
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

impl Reader<'_> {
    /// Every character outside quotes is SQL's: the tokenizer takes any
    /// Unicode space as a space and keeps other characters as `Char`.
    pub(super) fn check_characters(&mut self) -> Result<(), TextError> {
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

    /// FROM '<file>', the AND/OR operands, reserved words where a column
    /// stands (refused) and other keywords there (read as names).
    pub(super) fn check_words(&mut self) -> Result<(), TextError> {
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

    /// The error for a parser failure.
    pub(super) fn parse_error(&mut self, err: ParserError) -> TextError {
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
    pub(super) fn error_at(&mut self, index: usize, message: &str) -> TextError {
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

    pub(super) fn bitwise(&mut self, token: char, word: &'static str) -> TextError {
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
