//! Literal IN lists: read off the tokens into one value list before the parser
//! sees them (a million values cost one array, not a million nodes), and the
//! constant lists the parser read made the same.

use super::reader::Reader;
use super::tokens::is_word;
use super::{render, Literal, TextError, Values};
use sqlparser::ast::{Expr, UnaryOperator, Value};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// A list item's value and, for a number, its sign and digits (its SQL when
/// the list is not all int64).
pub(super) type ListItem = (Literal, Option<(bool, String)>);

/// Functions a subquery may call live in Python (the caller's allow-list); a
/// placeholder token of this prefix stands for a value list read off the tokens.
pub(super) const LIST_PLACEHOLDER: &str = "$privpub:";

impl Reader<'_> {
    /// Literal IN lists read off the tokens: `IN ( item, … )` with items
    /// `[+|-] number`, `'string'`, TRUE, FALSE, becomes `IN ( $privpub:N )`.
    pub(super) fn fold_lists(&mut self) -> Result<(), TextError> {
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
            let mut cuts_read = 0;
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
                // A run `runs` cut out after this item: its items follow.
                if let Some((_, cut)) = self.cuts.iter_mut().find(|(at, _)| *at == sig[j]) {
                    items.extend(cut.take().unwrap_or_default());
                    cuts_read += 1;
                }
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
            self.cuts_folded += cuts_read;
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
}

/// A numeric literal's value: an integer (int64 or its digits) for integer
/// syntax, else a double (as Python's float() reads the same text).
pub(super) fn number(negative: bool, text: &str) -> Literal {
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
pub(super) fn list_values(items: Vec<ListItem>) -> (Values, String) {
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

/// A constant list member: a number (signed), a string, a boolean.
pub(super) fn constant(expr: &Expr) -> Option<ListItem> {
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
