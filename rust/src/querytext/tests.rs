//! The parser's unit tests.

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
    assert_eq!(parsed.aggregate, Aggregate::Count);
}

#[test]
fn sums_and_averages_name_one_column() {
    let parsed = parse("select sum(t.age) from I as t where t.a > 0", LIMITS).unwrap();
    assert_eq!(parsed.aggregate, Aggregate::Sum("age".into()));
    let parsed = parse("SELECT AVG(\"hours-per-week\") FROM adult", LIMITS).unwrap();
    assert_eq!(parsed.aggregate, Aggregate::Avg("hours-per-week".into()));
    assert_eq!(parse("a > 0", LIMITS).unwrap().aggregate, Aggregate::Count);
    for (text, why) in [
        (
            "select sum(a + 1) from I",
            "sum(a + 1) must name one column of the table",
        ),
        (
            "select sum(*) from I",
            "sum(*) must name one column of the table",
        ),
        (
            "select avg(J.a) from I",
            "avg(J.a) reads a column of J, not of the counted table I",
        ),
        (
            "select sum(DISTINCT a) from I",
            "sum(DISTINCT a) aggregates DISTINCT values",
        ),
        (
            "select max(a) from I",
            "it selects max(a), not count(*), sum(column) or avg(column)",
        ),
    ] {
        assert_eq!(
            parse(text, LIMITS).unwrap_err(),
            TextError::Select(why.into()),
            "{text}"
        );
    }
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

/// Texts with long runs of integers in every context the tokenizer tells
/// apart: the cut path (`runs`) reads each as the whole tokenizer does.
#[test]
fn runs_read_as_the_tokenizer_reads_them() {
    use super::reader::Reader;
    let prefixes = [
        "id IN (",
        "id NOT IN (",
        "WHERE id IN (",
        "SELECT count(*) FROM t WHERE id IN (",
        "name = 'é' AND id IN (",
        "-- a comment\nid IN (",
        "id IN (-1, ",
        "id IN (a, ",
        "id IN (1.5, ",
        "f(",
        "id = '",
        "id = 1 /* ",
        "\"col ",
        "id IN (x",
        "id IN ('a', ",
        "id IN (\t",
    ];
    // A second run of 65 items on the line, then an error after it.
    let second_run = |then: &str| {
        let items: Vec<String> = (1..=65).map(|i| i.to_string()).collect();
        format!(") AND b IN ({}) {then}", items.join(", "))
    };
    let (then_reserved, then_name) = (second_run("AND SELECT = 2"), second_run("c"));
    let suffixes = [
        ")",
        ") AND b = 1",
        ".5)",
        "e3)",
        "_1)",
        "x)",
        ", x)",
        ", 'a')",
        ", -3)",
        ")'",
        " */ )",
        "')",
        "\")",
        ") AND SELECT = 1",
        ") AND b = )",
        ") AND c = 'é' AND b > )",
        ")\n AND b = )",
        then_reserved.as_str(),
        ") AND b IN (7, 8) ORDER BY 1",
        ",)",
        ") b",
        ") AND b = 1 c",
        then_name.as_str(),
        ", , 3)",
        " 5)",
    ];
    let separators = [", ", ",", " , ", "  ,", ",   "];
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let (mut cut, mut total) = (0, 0);
    for prefix in prefixes {
        for suffix in suffixes {
            for items in [super::runs::MIN_ITEMS - 1, super::runs::MIN_ITEMS, 300] {
                let mut text = prefix.to_string();
                for i in 0..items {
                    if i > 0 {
                        text.push_str(separators[next(separators.len() as u64) as usize]);
                    }
                    text.push_str(
                        match next(20) {
                            0 => "9223372036854775808".to_string(),
                            1 => "007".to_string(),
                            2 => "99999999999999999999999999999999999999999".to_string(),
                            _ => next(1_000_000).to_string(),
                        }
                        .as_str(),
                    );
                }
                text.push_str(suffix);
                let whole = Reader::whole(&text, LIMITS).and_then(|r| r.query());
                cut += usize::from(Reader::with_runs_cut(&text, LIMITS).is_some());
                total += 1;
                assert_eq!(parse(&text, LIMITS), whole, "{text}");
            }
        }
    }
    // The cut path was taken where it applies (else this test tests nothing).
    assert!(cut >= total / 5, "{cut} of {total}");
}
