//! Long runs of unsigned integers in a list (`IN (3, 17, 4, …)`), read without
//! sqlparser's tokenizer, which costs ~0.1 µs a character (a 100,000-value
//! list: ~60 ms, where the values themselves take ~2 ms).
//!
//! The meaning stays the tokenizer's: a run's middle items are cut out of the
//! text, the shortened text is tokenized, and the cut is kept only if the
//! tokenizer read the run's first item as a number token of its own followed
//! by a comma (so the run stands in code, not in a string, a quoted name or a
//! comment) and the literal-list fold then took the whole run into one list.
//! Cut out there, digits, commas and spaces are tokens of exactly one kind
//! each, which is what the fold reads. Anything else (a run that turns out to
//! be inside a string, a list with a column in it, any refusal) and the whole
//! text is read again by the tokenizer, so its answer or its error is the one
//! the tokenizer gives.

use super::lists::{number, ListItem};
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Whitespace};

/// Runs shorter than this are left to the tokenizer (the cut costs a check).
pub(super) const MIN_ITEMS: usize = 64;

/// A run's middle items, cut out of the text.
pub(super) struct Cut {
    /// Byte offsets in the shortened text of the run's first item and of its
    /// last item (which follows the first item's separator there).
    first: usize,
    last: usize,
    /// Characters (all ASCII) cut out between them.
    removed: usize,
    /// The cut items' values (integers: the SQL of a list that holds them
    /// needs no digits but the value's, `lists::literal_sql`).
    pub(super) items: Vec<ListItem>,
}

/// The text with every long run's middle cut out, and the cuts in order.
pub(super) fn shorten(text: &str) -> (String, Vec<Cut>) {
    let bytes = text.as_bytes();
    let mut short = String::new();
    let mut cuts = Vec::new();
    let mut copied = 0; // bytes of `text` already in `short`
    let mut i = 0;
    while i < bytes.len() {
        let starts_item = bytes[i].is_ascii_digit()
            && (i == 0 || matches!(bytes[i - 1], b'(' | b',' | b' ' | b'\t' | b'\n' | b'\r'));
        if !starts_item {
            i += 1;
            continue;
        }
        let items = run_items(bytes, i);
        if items.len() < MIN_ITEMS {
            i = items.last().map_or(i + 1, |&(_, end)| end);
            continue;
        }
        let (second, _) = items[1];
        let (last, end) = items[items.len() - 1];
        short.push_str(&text[copied..second]);
        let first = short.len() - (second - items[0].0);
        let last_in_short = short.len();
        cuts.push(Cut {
            first,
            last: last_in_short,
            removed: last - second,
            items: items[1..items.len() - 1]
                .iter()
                .map(|&(a, b)| (number(false, &text[a..b]), None))
                .collect(),
        });
        copied = last;
        i = end;
    }
    short.push_str(&text[copied..]);
    (short, cuts)
}

/// The items (byte ranges of their digits) of the run `d (' '* ',' ' '* d)*`
/// starting at `start`.
fn run_items(bytes: &[u8], start: usize) -> Vec<(usize, usize)> {
    let digits_end = |mut j: usize| {
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let spaces_end = |mut j: usize| {
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        j
    };
    let mut items = vec![(start, digits_end(start))];
    loop {
        let mut j = spaces_end(items[items.len() - 1].1);
        if bytes.get(j) != Some(&b',') {
            return items;
        }
        j = spaces_end(j + 1);
        if !bytes.get(j).is_some_and(u8::is_ascii_digit) {
            return items;
        }
        items.push((j, digits_end(j)));
    }
}

/// Check the cuts against the shortened text's tokens and put the tokens'
/// spans back on the whole text. Returns, for each cut, the index of the
/// token of its first item; None when a run did not stand in code as a
/// number, a comma and a number.
pub(super) fn place(short: &str, cuts: &[Cut], tokens: &mut [TokenWithSpan]) -> Option<Vec<usize>> {
    let at = locations(short, cuts.iter().flat_map(|c| [c.first, c.last]));
    let mut placed = Vec::with_capacity(cuts.len());
    let mut k = 0;
    for (n, cut) in cuts.iter().enumerate() {
        let (first, last) = (at[2 * n], at[2 * n + 1]);
        while k < tokens.len() && tokens[k].span.start != first {
            k += 1;
        }
        let len = cut_digits(short, cut.first);
        match tokens.get(k).map(|t| &t.token) {
            Some(Token::Number(s, false)) if s.len() == len => {}
            _ => return None,
        }
        placed.push(k);
        let mut commas = 0;
        k += 1;
        while k < tokens.len() && tokens[k].span.start != last {
            match tokens[k].token {
                Token::Comma => commas += 1,
                Token::Whitespace(Whitespace::Space) => {}
                _ => return None,
            }
            k += 1;
        }
        if commas != 1 || !matches!(tokens.get(k).map(|t| &t.token), Some(Token::Number(..))) {
            return None;
        }
    }
    // Columns after a cut on its line move right by what it removed.
    let shifts: Vec<(Location, u64)> = cuts
        .iter()
        .enumerate()
        .map(|(n, cut)| (at[2 * n + 1], cut.removed as u64))
        .collect();
    let moved = |loc: Location| {
        let extra: u64 = shifts
            .iter()
            .filter(|(from, _)| from.line == loc.line && from.column <= loc.column)
            .map(|&(_, removed)| removed)
            .sum();
        Location::new(loc.line, loc.column + extra)
    };
    for token in tokens.iter_mut() {
        token.span = Span::new(moved(token.span.start), moved(token.span.end));
    }
    Some(placed)
}

fn cut_digits(short: &str, from: usize) -> usize {
    short.as_bytes()[from..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// sqlparser's locations (line from 1, column in characters from 1) of the
/// given byte offsets, in increasing order.
fn locations(text: &str, offsets: impl Iterator<Item = usize>) -> Vec<Location> {
    let mut out = Vec::new();
    let (mut line, mut column) = (1u64, 1u64);
    let mut chars = text.char_indices().peekable();
    for offset in offsets {
        while let Some(&(i, c)) = chars.peek() {
            if i >= offset {
                break;
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
            chars.next();
        }
        out.push(Location::new(line, column));
    }
    out
}
