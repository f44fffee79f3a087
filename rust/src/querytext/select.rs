//! IN subqueries (what they read and call, and their depth) and the
//! `SELECT count(*) | sum(col) | avg(col) FROM <name> [WHERE …]` form (every
//! other clause refused by name).

use super::{Subquery, TextError};
use sqlparser::ast::{
    BinaryOperator, DuplicateTreatment, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    GroupByExpr, LimitClause, ObjectNamePart, Query, SelectItem, SetExpr, TableFactor, Visit,
    Visitor,
};
use std::ops::ControlFlow;

/// What a subquery reads and calls, and its depth (queries and expressions
/// nested, a chain of one connective counted once).
pub(super) fn audit(query: Query) -> (Subquery, usize) {
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

/// What a SELECT form asks of the rows that satisfy its condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aggregate {
    /// `count(*)`.
    Count,
    /// `sum(col)`: the column's name.
    Sum(String),
    /// `avg(col)`: the column's name.
    Avg(String),
}

/// The condition of `SELECT count(*) | sum(col) | avg(col) FROM <name> [WHERE …]`,
/// the name, its alias and the aggregate; every other clause refused by name.
pub(super) fn aggregate_select(
    query: Query,
) -> Result<(Option<Expr>, String, Option<String>, Aggregate), TextError> {
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
    let item = match &select.projection[0] {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
        other_item => return refuse(format!("it selects '{other_item}', {WANTED}")),
    };
    let (f, args) = match item {
        Expr::Function(f) => match &f.args {
            FunctionArguments::List(list) => (f, list),
            _ => return refuse(format!("{f} has no argument list, {WANTED}")),
        },
        other_expr => return refuse(format!("it selects '{other_expr}', {WANTED}")),
    };
    let name = f.name.to_string().to_ascii_lowercase();
    if !["count", "sum", "avg"].contains(&name.as_str()) {
        return refuse(format!("it selects {f}, {WANTED}"));
    }
    if args.duplicate_treatment == Some(DuplicateTreatment::Distinct) {
        return refuse(format!("{f} aggregates DISTINCT values"));
    }
    let plain = args.clauses.is_empty()
        && f.filter.is_none()
        && f.over.is_none()
        && f.within_group.is_empty()
        && f.null_treatment.is_none()
        && matches!(f.parameters, FunctionArguments::None);
    if !plain {
        return refuse(format!("{f} has more than its argument, {WANTED}"));
    }
    let star = matches!(
        args.args.as_slice(),
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]
    );
    let column = match args.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(id)))] => {
            Some((None, id.value.clone()))
        }
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::CompoundIdentifier(parts)))]
            if parts.len() == 2 =>
        {
            Some((Some(parts[0].value.clone()), parts[1].value.clone()))
        }
        _ => None,
    };
    let (aggregate, qualifier) = match (name.as_str(), star, column) {
        ("count", true, _) => (Aggregate::Count, None),
        ("count", false, _) => {
            return refuse(format!(
                "{f} is not count(*): privpub counts rows, not values"
            ))
        }
        ("sum", _, Some((q, c))) => (Aggregate::Sum(c), q),
        ("avg", _, Some((q, c))) => (Aggregate::Avg(c), q),
        _ => return refuse(format!("{f} must name one column of the table")),
    };
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
    if let Some(q) = qualifier {
        if q != name && alias.as_deref() != Some(q.as_str()) {
            return refuse(format!(
                "{f} reads a column of {q}, not of the counted table {name}"
            ));
        }
    }
    Ok((select.selection, name, alias, aggregate))
}

/// How a refusal of the selected item says what is accepted.
const WANTED: &str = "not count(*), sum(column) or avg(column)";
