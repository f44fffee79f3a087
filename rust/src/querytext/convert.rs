//! sqlparser's tree of a condition into [`Node`]s, with its depth; literal
//! lists become value lists, IN subqueries are audited (`select`).

use super::lists::{constant, list_values, LIST_PLACEHOLDER};
use super::select::audit;
use super::tokens::OPERATOR_WORDS;
use super::{Node, TextError, Values};
use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget,
    ObjectNamePart, UnaryOperator, Value,
};

pub(super) struct Convert<'l> {
    pub(super) lists: &'l mut Vec<Option<(Values, String)>>,
    /// Values listed so far (the lists read off the tokens included) and the limit.
    pub(super) values: usize,
    pub(super) max_values: usize,
    /// The first bitwise operator met (a pandas connective).
    pub(super) bitwise: Option<(char, &'static str)>,
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
    pub(super) fn expr(&mut self, expr: Expr) -> Result<(Node, usize), TextError> {
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
