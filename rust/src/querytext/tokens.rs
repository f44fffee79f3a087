//! Positions in the text and what a token is (a word, an operand's end, a
//! comparison, …), as the reader and the refusals ask.

use super::lists::LIST_PLACEHOLDER;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Whitespace};

/// Operators written as words: one standing alone is missing an operand.
pub(super) const OPERATOR_WORDS: [&str; 8] =
    ["AND", "OR", "NOT", "IN", "IS", "LIKE", "ILIKE", "BETWEEN"];

/// Character index of a token's location (sqlparser counts lines at '\n' and
/// columns in characters, both from 1).
pub(super) struct Lines {
    starts: Vec<usize>,
    pub(super) chars: usize,
}

impl Lines {
    pub(super) fn new(text: &str) -> Self {
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

    pub(super) fn at(&self, loc: Location) -> usize {
        if loc.line == 0 {
            return self.chars; // an empty span: EOF
        }
        let line = (loc.line as usize - 1).min(self.starts.len() - 1);
        (self.starts[line] + loc.column as usize).saturating_sub(1)
    }
}

/// `"at Line: L, Column: C"` at the end of a sqlparser message.
pub(super) fn message_location(message: &str) -> (String, Option<Location>) {
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
pub(super) fn first_unread(text: &str, tokens: &[TokenWithSpan], lines: &Lines) -> Option<usize> {
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

pub(super) fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

pub(super) fn bare_word(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

pub(super) fn significant(token: &Token) -> bool {
    !matches!(token, Token::Whitespace(_))
}

/// Whether a token ends an operand (after one, a keyword is an operator).
pub(super) fn ends_operand(token: &Token) -> bool {
    match token {
        Token::Number(..) | Token::SingleQuotedString(_) | Token::RParen => true,
        Token::Word(w) => w.quote_style.is_some() || w.keyword == Keyword::NoKeyword,
        _ => false,
    }
}

pub(super) fn comparison(token: &Token) -> bool {
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

pub(super) fn starts_predicate(token: &Token) -> bool {
    comparison(token)
        || ["IN", "BETWEEN", "LIKE", "ILIKE", "IS"]
            .iter()
            .any(|w| is_word(token, w))
}

pub(super) fn ends_value(token: Option<&Token>) -> bool {
    match token {
        None | Some(Token::EOF) | Some(Token::RParen) => true,
        Some(t) => is_word(t, "AND") || is_word(t, "OR"),
    }
}

/// A token as the user wrote it, for messages.
pub(super) fn shown(token: &Token) -> String {
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
pub(super) fn nesting_bound(tokens: &[TokenWithSpan]) -> usize {
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
