//! Integer IN lists of query text: read and written at C speed.
//!
//! A query may list up to 10^6 values (`id IN (3, 17, …)`). The Python scan
//! used a regular expression to find such a list and numpy to read it; for a
//! 100,000-value list that cost more than the whole estimate. `scan` accepts
//! exactly the language of that expression on ASCII text (the caller hands
//! anything else to the general path), so the query reads the same either way.

/// Python's `\s` on ASCII: space, \t \n \v \f \r, and the separators \x1c–\x1f.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f)
}

/// A byte that may not follow the closing parenthesis (`[\w.'"]` on ASCII):
/// `IN (1, 2)x` is not a literal list.
fn continues(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'\'' | b'"')
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while at < text.len() && is_space(text[at]) {
        at += 1;
    }
    at
}

/// An integer list after `IN` at byte `start` of ASCII `text`:
/// `\s*\(\s*(-?\d{1,18}(?:\s*,\s*-?\d{1,18})*)\s*\)(?![\w.'"])`. Returns the
/// values, the byte range of the list's inside (group 1) and the end of the
/// match, or None where the expression does not match. At most 18 digits: every
/// value fits i64, and a longer number is left to the general path (it may not).
pub fn scan(text: &[u8], start: usize) -> Option<(Vec<i64>, usize, usize, usize)> {
    let mut at = skip_space(text, start);
    if text.get(at) != Some(&b'(') {
        return None;
    }
    at = skip_space(text, at + 1);
    let inner = at;
    let mut values = Vec::new();
    let mut inner_end;
    loop {
        let negative = text.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let digits = at;
        let mut value: i64 = 0;
        while at < text.len() && text[at].is_ascii_digit() {
            if at - digits == 18 {
                return None;
            }
            value = value * 10 + i64::from(text[at] - b'0');
            at += 1;
        }
        if at == digits {
            return None;
        }
        values.push(if negative { -value } else { value });
        inner_end = at;
        at = skip_space(text, at);
        match text.get(at) {
            Some(b',') => at = skip_space(text, at + 1),
            Some(b')') => break,
            _ => return None,
        }
    }
    let end = at + 1;
    if text.get(end).is_some_and(|&b| continues(b)) {
        return None;
    }
    Some((values, inner, inner_end, end))
}

/// Values as the body of an SQL list, "1, 2, -3" (what Python's
/// `str(list)[1:-1]` gives).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Option<Vec<i64>> {
        scan(text.as_bytes(), 0).map(|found| found.0)
    }

    #[test]
    fn reads_what_the_expression_reads() {
        assert_eq!(values(" (1, -2 ,3)"), Some(vec![1, -2, 3]));
        assert_eq!(values("(\x1c7\t)"), Some(vec![7]));
        assert_eq!(
            values("(999999999999999999)"),
            Some(vec![999_999_999_999_999_999])
        );
        let (_, inner, inner_end, end) = scan(b"IN ( 4, 5 ) AND", 2).unwrap();
        assert_eq!((inner, inner_end, end), (5, 9, 11));
    }

    #[test]
    fn leaves_everything_else_to_the_general_path() {
        for text in [
            "(1, 2)x",
            "(1, 2).",
            "(1)'",
            "(1, 2",
            "1, 2)",
            "(1,, 2)",
            "(1.5)",
            "(- 1)",
            "(1e3)",
            "()",
            "(1234567890123456789)",
            "(1, 'a')",
            "(+1)",
        ] {
            assert_eq!(values(text), None, "{text}");
        }
        assert_eq!(values("(1, 2) "), Some(vec![1, 2]));
    }

    #[test]
    fn renders_as_python_does() {
        assert_eq!(render(&[1, -2, i64::MIN]), "1, -2, -9223372036854775808");
        assert_eq!(render(&[]), "");
    }
}
