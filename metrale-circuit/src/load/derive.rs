//! `[derive]` (schema 2): dims defined from other dims (`conv_window = "conv_kernel - 1"`), so a
//! checkpoint never carries a hand-kept copy of one.
//!
//! This module owns the `[derive]` table (each key a dim name, each value a one-axis shape
//! expression), the rules of derived dims (schema 2 only; not also listed in `dims`; every
//! name read is a dim or a derived dim; no cycle), their evaluation order, and their values
//! under each checkpoint.
//!
//! Invariants:
//! - [`order`] lists every derived dim after every derived dim it reads, file order otherwise;
//!   it is `None` only when a cycle was reported.
//! - A derived dim's value under a checkpoint is its expression's left-to-right checked fold,
//!   exactly as the generated `Dims::<name>()` computes it; a fault is reported at the
//!   expression, with the checkpoint in a note.

use super::raw::{RawCheckpoint, RawDerived, ShapeValue};
use crate::load::circuit::shape::Shape;
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::MAX_DIMS;
use crate::load::text::walk::{Sink, Table, Text, Walk, field};

/// The derived dims' values under one checkpoint, in evaluation order.
pub(crate) type Values = Vec<(String, u64)>;

/// Walks `[derive]`: each entry's name and parsed expression. `dims` are the names `dims`
/// declares (a derived dim must not be one of them).
pub(crate) fn walk(
    w: &mut Walk<'_>,
    root: &Table<'_>,
    schema: Option<u64>,
    dims: Option<&[Text]>,
) -> Vec<RawDerived> {
    let Some((key, v)) = field(root, "derive") else {
        return Vec::new();
    };
    if schema == Some(1) {
        w.report(
            key,
            Diagnostic::error("`[derive]` needs `schema = 2`")
                .label("a schema-2 table")
                .help("write `schema = 2` at the top of the circuit"),
        );
        return Vec::new();
    }
    let Some(table) = w.table("derive", v) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(table.len().min(MAX_DIMS));
    for (i, (key, value)) in table.iter().enumerate() {
        if !w.at_most(i + 1, MAX_DIMS, key.span(), "derived dims") {
            break;
        }
        let name: &str = key.get_ref();
        if !w.identifier(name, key.span(), "derived dim") {
            continue;
        }
        if name == "x" {
            w.report(
                key.span(),
                Diagnostic::error("a dim may not be named `x`")
                    .label("reserved")
                    .help("`x` separates the axes of a shape"),
            );
            continue;
        }
        if let Some(declared) = dims.and_then(|d| d.iter().find(|d| d.text == name)) {
            let place = w.place(declared.loc.span.clone());
            w.report(
                key.span(),
                Diagnostic::error(format!("dim `{name}` is both declared and derived"))
                    .label("derived here")
                    .note(format!("declared in `dims` at {place}"))
                    .help("remove it from `dims`: a derived dim is computed, never given"),
            );
            continue;
        }
        let Some(text) = w.string(name, value) else {
            continue;
        };
        let at = w.str_at(value.span(), text);
        let shape = match Shape::parse(text) {
            Ok(shape) => shape,
            Err(error) => {
                let mut d = Diagnostic::error(format!("invalid expression: {}", error.message))
                    .label("here");
                if let Some(help) = error.help {
                    d = d.help(help);
                }
                w.sink.report(&at.inner(error.offset, error.len), d);
                continue;
            }
        };
        if shape.axes.len() > 1 {
            w.report(
                value.span(),
                Diagnostic::error(format!("derived dim `{name}` has more than one axis"))
                    .label("` x ` joins axes")
                    .help(
                        "a derived dim is one number: terms joined by `+` or `-`, factors by `*`",
                    ),
            );
            continue;
        }
        out.push(RawDerived {
            name: w.text(name, key.span()),
            expr: ShapeValue { shape, at },
        });
    }
    out
}

/// Every name an expression reads is a declared or derived dim, and no derived dim reads
/// itself through others. Returns the evaluation order, or `None` when a name is unknown or
/// a cycle was reported.
pub(crate) fn order(
    sink: &mut Sink,
    derived: &[RawDerived],
    dims: &[String],
) -> Option<Vec<usize>> {
    let mut known = true;
    let names: Vec<&str> = dims
        .iter()
        .map(String::as_str)
        .chain(derived.iter().map(|d| d.name.text.as_str()))
        .collect();
    for d in derived {
        for dim in d.expr.shape.dims() {
            if !names.contains(&dim.name.as_str()) {
                known = false;
                sink.report(
                    &d.expr.at.inner(dim.offset, dim.name.len()),
                    Diagnostic::error(format!("unknown dim `{}`", dim.name))
                        .label("not a declared or derived dim")
                        .expected_one_of("dims", &dim.name, &names),
                );
            }
        }
    }
    // Depth first, in file order: each derived dim after the ones it reads. The walk keeps
    // its own stack (no recursion: a chain of derived dims is as long as the file makes it).
    let mut order = Vec::with_capacity(derived.len());
    let mut state = vec![Visit::New; derived.len()];
    let mut acyclic = true;
    for start in 0..derived.len() {
        if !visit(sink, derived, start, &mut state, &mut order) {
            acyclic = false;
        }
    }
    (known && acyclic).then_some(order)
}

/// Where the depth-first walk of [`order`] is with a derived dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Open,
    Done,
    /// Done, and in a cycle or reading one: not in the order.
    Failed,
}

/// Visits derived dim `start` and every one it reads, depth first with an explicit stack of
/// (dim, how many of its reads were visited); `false` when a cycle through them was found
/// (reported once, at the dim that closes it).
fn visit(
    sink: &mut Sink,
    derived: &[RawDerived],
    start: usize,
    state: &mut [Visit],
    order: &mut Vec<usize>,
) -> bool {
    if state.get(start) != Some(&Visit::New) {
        return state.get(start) != Some(&Visit::Failed);
    }
    let reads = |i: usize| -> Vec<usize> {
        derived[i]
            .expr
            .shape
            .dims()
            .iter()
            .filter_map(|dim| derived.iter().position(|d| d.name.text == dim.name))
            .collect()
    };
    let mut stack: Vec<(usize, Vec<usize>, usize, bool)> = vec![(start, reads(start), 0, true)];
    state[start] = Visit::Open;
    while let Some((i, next, visited, ok)) = stack.last_mut() {
        let (i, ok_so_far) = (*i, *ok);
        if let Some(&j) = next.get(*visited) {
            *visited += 1;
            match state[j] {
                Visit::Done => {}
                Visit::Failed => *ok = false,
                Visit::Open => {
                    *ok = false;
                    report_cycle(sink, derived, &stack, j);
                }
                Visit::New => {
                    state[j] = Visit::Open;
                    stack.push((j, reads(j), 0, true));
                }
            }
            continue;
        }
        stack.pop();
        if ok_so_far {
            state[i] = Visit::Done;
            order.push(i);
        } else {
            state[i] = Visit::Failed;
            if let Some(parent) = stack.last_mut() {
                parent.3 = false;
            }
        }
    }
    state[start] == Visit::Done
}

/// Reports the cycle closed by reading `closes` from the top of `stack` (the open path).
fn report_cycle(
    sink: &mut Sink,
    derived: &[RawDerived],
    stack: &[(usize, Vec<usize>, usize, bool)],
    closes: usize,
) {
    let from = stack.iter().position(|(p, ..)| *p == closes).unwrap_or(0);
    let chain: Vec<&str> = stack[from..]
        .iter()
        .map(|(p, ..)| *p)
        .chain(std::iter::once(closes))
        .map(|p| derived[p].name.text.as_str())
        .collect();
    sink.report(
        &derived[closes].name.loc,
        Diagnostic::error(format!(
            "derived dim `{}` depends on itself",
            derived[closes].name.text
        ))
        .label("in a cycle")
        .note(format!("the cycle: {}", chain.join(" -> ")))
        .help("a derived dim must be computable from declared dims"),
    );
}

/// Every derived dim's value under `checkpoint` (whose dims are complete), in `order`; `None`
/// when one cannot be evaluated (reported at its expression).
pub(crate) fn values(
    sink: &mut Sink,
    derived: &[RawDerived],
    order: &[usize],
    checkpoint: &RawCheckpoint,
) -> Option<Values> {
    let mut values: Values = Vec::with_capacity(order.len());
    for &i in order {
        let d = &derived[i];
        let lookup = |name: &str| {
            checkpoint
                .dim(name)
                .or_else(|| values.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
        };
        match d.expr.shape.eval(lookup) {
            Ok(value) => values.push((d.name.text.clone(), value)),
            Err(error) => {
                let place = sink.place(&checkpoint.header);
                sink.report(
                    &d.expr.at.loc,
                    Diagnostic::error(format!(
                        "derived dim `{}` cannot be evaluated: `{}` {error}",
                        d.name.text, d.expr.shape
                    ))
                    .label("here")
                    .note(format!(
                        "under checkpoint `{}`, defined at {place}",
                        checkpoint.name.text
                    )),
                );
                return None;
            }
        }
    }
    Some(values)
}
