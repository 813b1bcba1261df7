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
//! - [`divisors`] names, for each declared dim, the first derived dim (in file order) that
//!   divides by it, directly or by a derived dim that reads it; it takes time linear in the
//!   expressions (times the dims' words of 64 bits), whatever the chains, and tolerates a
//!   cycle (reported by [`order`]).
//! - A derived dim's value under a checkpoint is its expression's left-to-right checked fold,
//!   exactly as the generated `Dims::<name>()` computes it; a fault is reported at the
//!   expression, with the checkpoint in a note.

use std::collections::HashMap;

use super::raw::{RawCheckpoint, RawDerived, ShapeValue};
use crate::load::circuit::shape::{Divisor, Factor, Shape};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::MAX_DIMS;
use crate::load::text::walk::{Sink, Table, Text, Walk, entries, field};

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
    for (i, (key, value)) in entries(table).into_iter().enumerate() {
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

/// A derived dim that divides by a declared dim: a rank's share of that dim would widen it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divides<'a> {
    /// The derived dim whose expression divides.
    pub by: &'a RawDerived,
    /// The derived dim it divides by when that one reads the declared dim (`None`: it divides
    /// by the declared dim itself).
    pub via: Option<&'a RawDerived>,
}

/// What a name in a derived dim's expression is.
#[derive(Debug, Clone, Copy)]
enum Read {
    /// The declared dim of this index.
    Declared(usize),
    /// The derived dim of this index.
    Derived(usize),
}

/// For each of `dims` (the declared dims, by index), the first derived dim in file order that
/// divides by it (`hidden / q_heads`), directly or by a derived dim that reads it, at any
/// depth (`hidden / g` with `g = "q_heads * 2"`); `None` when none does. Names that are
/// neither are skipped (reported by [`order`]).
pub(crate) fn divisors<'a>(derived: &'a [RawDerived], dims: &[&str]) -> Vec<Option<Divides<'a>>> {
    let words = dims.len().div_ceil(64);
    let mut names: HashMap<&str, Read> = HashMap::with_capacity(dims.len() + derived.len());
    for (i, dim) in dims.iter().enumerate() {
        names.entry(dim).or_insert(Read::Declared(i));
    }
    for (i, d) in derived.iter().enumerate() {
        names
            .entry(d.name.text.as_str())
            .or_insert(Read::Derived(i));
    }
    let reads: Vec<Vec<Read>> = derived
        .iter()
        .map(|d| {
            d.expr
                .shape
                .dims()
                .iter()
                .filter_map(|dim| names.get(dim.name.as_str()).copied())
                .collect()
        })
        .collect();
    let sets = declared_reads(&reads, words);
    let mut out: Vec<Option<Divides<'a>>> = vec![None; dims.len()];
    // The declared dims not yet given a divider: each is recorded once, so the bits walked
    // stay within the dims, however many divisions the expressions hold.
    let mut open: Vec<u64> = (0..words)
        .map(|w| {
            let bits = dims.len() - w * 64;
            if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            }
        })
        .collect();
    for d in derived {
        for factor in d
            .expr
            .shape
            .axes
            .iter()
            .flat_map(|a| &a.terms)
            .flat_map(|t| &t.factors)
        {
            let Factor::CeilDiv {
                by: Divisor::Dim(divisor),
                ..
            } = factor
            else {
                continue;
            };
            match names.get(divisor.name.as_str()) {
                Some(Read::Declared(k)) => {
                    if let Some(slot) = out.get_mut(*k)
                        && slot.is_none()
                    {
                        *slot = Some(Divides { by: d, via: None });
                        open[k / 64] &= !(1u64 << (k % 64));
                    }
                }
                Some(Read::Derived(j)) => {
                    for (w, word) in open.iter_mut().enumerate() {
                        let mut new = *word & sets[*j].get(w).copied().unwrap_or(0);
                        *word &= !new;
                        while new != 0 {
                            let k = w * 64 + new.trailing_zeros() as usize;
                            new &= new - 1;
                            if let Some(slot) = out.get_mut(k) {
                                *slot = Some(Divides {
                                    by: d,
                                    via: derived.get(*j),
                                });
                            }
                        }
                    }
                }
                None => {}
            }
        }
    }
    out
}

/// Each derived dim's declared reads, at any depth, as bit sets of `words` words: a depth-first
/// walk with its own stack, each derived dim's set made once from those it reads (a derived dim
/// in a cycle adds what was found so far; the cycle is reported by [`order`]).
fn declared_reads(reads: &[Vec<Read>], words: usize) -> Vec<Vec<u64>> {
    let mut sets: Vec<Vec<u64>> = vec![Vec::new(); reads.len()];
    let mut state = vec![Visit::New; reads.len()];
    for start in 0..reads.len() {
        if state[start] != Visit::New {
            continue;
        }
        state[start] = Visit::Open;
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some((i, next)) = stack.last_mut() {
            let i = *i;
            if let Some(read) = reads[i].get(*next) {
                *next += 1;
                if let Read::Derived(j) = *read
                    && state[j] == Visit::New
                {
                    state[j] = Visit::Open;
                    stack.push((j, 0));
                }
                continue;
            }
            let mut set = vec![0u64; words];
            for read in &reads[i] {
                match *read {
                    Read::Declared(k) => set[k / 64] |= 1u64 << (k % 64),
                    Read::Derived(j) => {
                        for (word, of) in set.iter_mut().zip(&sets[j]) {
                            *word |= of;
                        }
                    }
                }
            }
            sets[i] = set;
            state[i] = Visit::Done;
            stack.pop();
        }
    }
    sets
}
