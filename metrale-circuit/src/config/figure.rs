//! A figure computed from a config by a config expression (schema 4): each key it reads taken
//! as the exact number the JSON spells, the expression evaluated exactly, and the result
//! checked to be a whole number in range ([`Reader::figure`]). `import` reads dims this way,
//! `rules` a rule's integers.
//!
//! Invariants:
//! - A key absent or `null` is returned to the caller, not reported: a fallback may cover it.
//! - Every other fault is reported once, located at the first key the expression read from the
//!   config, naming the figure, the expression and every value read.

use std::ops::Range;

use jsonc_parser::ast::Value;

use crate::load::circuit::config_expr::{ConfigExpr, Exact, ExprFault};
use crate::load::text::diag::Diagnostic;

use super::json::{Found, Reader, describe, number, span};

/// The range a figure must be in.
#[derive(Clone, Copy)]
pub(super) enum Whole {
    /// 0 to `u64::MAX`: a dim, a count.
    Unsigned,
    /// An `i64`: a rule's offset may be below zero.
    Signed,
}

/// A figure as read.
pub(super) enum Figure {
    /// Its value, and where the first key it read from the config is (none when it read
    /// declared dims alone).
    Value(i128, Option<Range<usize>>),
    /// Config keys it reads that are absent or `null` (not reported).
    Absent(Vec<String>),
    /// Refused, and reported.
    Refused,
}

impl Reader<'_> {
    /// The value of `expr` (`what` names it in messages: "`[config.dims] qk_dim`"): each
    /// name a declared dim's value when `dim_of` gives one, else a config key's number.
    pub(super) fn figure(
        &mut self,
        what: &str,
        expr: &ConfigExpr,
        dim_of: &dyn Fn(&str) -> Option<u64>,
        whole: Whole,
    ) -> Figure {
        let mut read: Vec<(String, Exact, Option<Range<usize>>)> = Vec::new();
        let mut absent = Vec::new();
        let mut refused = false;
        for name in expr.names() {
            if read.iter().any(|(path, ..)| *path == name.path) || absent.contains(&name.path) {
                continue;
            }
            if let Some(v) = dim_of(&name.path) {
                read.push((name.path.clone(), Exact::int(v.into()), None));
                continue;
            }
            match self.find(&name.path) {
                Found::Value(Value::NullKeyword(_)) | Found::Missing(_) => {
                    absent.push(name.path.clone());
                }
                Found::Value(v) => {
                    if let Some(n) = number(v) {
                        read.push((name.path.clone(), n, Some(span(v))));
                    } else {
                        self.report(
                            span(v),
                            Diagnostic::error(format!(
                                "config key `{}` must be a number, found {}",
                                name.path,
                                describe(v)
                            ))
                            .label("not a number")
                            .note(format!("{what} computes `{expr}`")),
                        );
                        refused = true;
                    }
                }
            }
        }
        if refused {
            return Figure::Refused;
        }
        if !absent.is_empty() {
            return Figure::Absent(absent);
        }
        let value = expr.eval(&mut |name| {
            read.iter()
                .find(|(path, ..)| *path == name.path)
                .map(|(_, n, _)| *n)
                .ok_or(())
        });
        let first = read.iter().find_map(|(_, _, at)| at.clone());
        let fault = match value {
            Ok(v) => {
                let fits = match whole {
                    Whole::Unsigned => v.to_u64().map(i128::from),
                    Whole::Signed => v.to_i64().map(i128::from),
                };
                match fits {
                    Some(n) => return Figure::Value(n, first),
                    None if !v.is_whole() => format!("is {v}, not a whole number"),
                    None if v.is_negative() && matches!(whole, Whole::Unsigned) => {
                        format!("is {v}, below zero")
                    }
                    None => format!("is {v}, out of range"),
                }
            }
            Err(ExprFault::Overflow) => {
                "overflows: an intermediate value is past the exact arithmetic's 127 bits"
                    .to_owned()
            }
            Err(ExprFault::DivisionByZero(_)) => "divides by zero".to_owned(),
            Err(ExprFault::Read(())) => return Figure::Refused,
        };
        // Located at the first key read from the config; every figure read is named.
        let at = first.unwrap_or_else(|| {
            self.missing_span(expr.names().first().map_or("", |n| n.path.as_str()))
        });
        let figures: Vec<String> = read
            .iter()
            .map(|(path, n, at)| {
                let whence = if at.is_some() { "config key" } else { "dim" };
                format!("{whence} `{path}` is {n}")
            })
            .collect();
        let range = match whole {
            Whole::Unsigned => "a whole number from 0 to u64::MAX",
            Whole::Signed => "a whole number in i64's range",
        };
        let mut d = Diagnostic::error(format!("{what} = `{expr}` {fault}")).label("read here");
        if !figures.is_empty() {
            d = d.note(figures.join(", "));
        }
        self.report(
            at,
            d.help(format!(
                "it must be {range}: check the expression against this config"
            )),
        );
        Figure::Refused
    }
}
