//! KV shared across layers (`shares`, schema 3): the checks that need every file. A reader's
//! owner exists and keeps KV of its own ([`owners`]), a reader's block sits only in layers
//! ([`in_layers`]), and under every checkpoint every layer holding a reader's block has its
//! owner's layer ([`layers`], by the one rule of `circuit::owner_layer`).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A check runs only on what earlier stages found valid (a reader whose `shares` parsed, a
//!   checkpoint whose layer kinds and dims are known, a `layer` expression whose dims are
//!   declared); the rest was already reported.
//! - Under one checkpoint a reader is reported at most once, at its first layer without an
//!   owner, so a model of many layers gives one error, not one per layer.

use super::derive::Values;
use super::raw::{RawBlock, RawCheckpoint, RawLayout, RawShares, RawState, Top};
use crate::load::circuit::{OwnerFault, owner_layer};
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Sink, Text};
use crate::model::StateKind;

/// A state that can be shared: a `paged_kv` side with a shape of its own that shares nothing.
fn ownable(state: &RawState) -> bool {
    state.kind == Some(StateKind::PagedKv) && state.has_shape_key && !state.has_shares_key
}

/// Every reader's owner: a block that exists, a state of it, a `paged_kv` side with a shape
/// that does not itself share. Returns the readers whose owner is valid, with their block.
pub(super) fn owners<'b>(
    sink: &mut Sink,
    blocks: &[&'b RawBlock],
) -> Vec<(&'b RawBlock, &'b RawState, &'b RawShares)> {
    let mut valid = Vec::new();
    for block in blocks {
        for state in &block.states {
            let Some(shares) = &state.shares else {
                continue;
            };
            if owner(sink, blocks, shares) {
                valid.push((*block, state, shares));
            }
        }
    }
    valid
}

/// One reader's owner; reported at the part of `"<block>.<state>"` at fault.
fn owner(sink: &mut Sink, blocks: &[&RawBlock], shares: &RawShares) -> bool {
    let Some(block) = blocks.iter().find(|b| b.name.text == shares.block) else {
        let candidates: Vec<&str> = blocks
            .iter()
            .filter(|b| b.states.iter().any(ownable))
            .map(|b| b.name.text.as_str())
            .collect();
        sink.report(
            &shares.block_at(),
            Diagnostic::error(format!("`shares` names no block `{}`", shares.block))
                .label("no such block")
                .expected_one_of("blocks with a KV side to share", &shares.block, &candidates),
        );
        return false;
    };
    let Some(state) = block
        .states
        .iter()
        .find(|s| s.local() == Some(shares.state.as_str()))
    else {
        let candidates: Vec<&str> = block
            .states
            .iter()
            .filter(|s| ownable(s))
            .filter_map(RawState::local)
            .collect();
        sink.report(
            &shares.state_at(),
            Diagnostic::error(format!(
                "block `{}` has no state `{}`",
                shares.block, shares.state
            ))
            .label("no such state")
            .expected_one_of(
                &format!("KV sides of block `{}`", shares.block),
                &shares.state,
                &candidates,
            ),
        );
        return false;
    };
    let place = sink.place(&state.header);
    let name = format!("{}.{}", shares.block, shares.state);
    let problem = match state.kind {
        // Its kind was refused already.
        None => return false,
        Some(kind) if kind != StateKind::PagedKv => {
            Diagnostic::error(format!("`{name}` is a `{}`, not a KV side", kind.name()))
                .label("not a `paged_kv` state")
                .help("a KV side reads the KV of another `paged_kv` state")
        }
        Some(_) if state.has_shares_key => {
            let also = state.shares.as_ref().map_or_else(String::new, |s| {
                format!(": name the state it reads, `{}.{}`", s.block, s.state)
            });
            Diagnostic::error(format!("`{name}` itself reads another layer's KV"))
                .label("a state that `shares`")
                .help(format!("share the state that keeps the KV{also}"))
        }
        // Its missing shape was reported already.
        Some(_) if !state.has_shape_key => return false,
        Some(_) => return true,
    };
    sink.report(
        &shares.owner.loc,
        problem.note(format!("`{name}` is declared at {place}")),
    );
    false
}

/// A reader's block sits only in layers: its place in the prologue, the epilogue or the draft
/// head is reported, with a note at the `shares` it holds.
pub(super) fn in_layers(sink: &mut Sink, top: &Top, readers: &[&RawBlock]) {
    let lists: [(&[Text], &str); 3] = [
        (&top.prologue, "the prologue"),
        (&top.epilogue, "the epilogue"),
        (&top.draft, "the draft head"),
    ];
    for (list, what) in lists {
        for entry in list {
            let Some(block) = readers.iter().find(|b| b.name.text == entry.text) else {
                continue;
            };
            let Some((state, shares)) = block
                .states
                .iter()
                .find_map(|s| Some((s, s.shares.as_ref()?)))
            else {
                continue;
            };
            let place = sink.place(&shares.key);
            sink.report(
                &entry.loc,
                Diagnostic::error(format!(
                    "block `{}` is in {what}, but its `{}` reads another layer's KV",
                    entry.text,
                    state.local().unwrap_or("?")
                ))
                .label("not a layer")
                .note(format!("`shares` at {place}"))
                .help(
                    "a KV side that `shares` reads the KV of an earlier layer: its block goes \
                     in a layer kind's list in `[layout.blocks]`",
                ),
            );
        }
    }
}

/// Under every checkpoint whose layer kinds are known, every layer holding a reader's block
/// has its owner's layer: reported at the first layer without one, once per checkpoint.
/// `derived` holds each checkpoint's derived dims (`None` when they could not be computed);
/// `readable` the dims an expression may read.
pub(super) fn layers(
    sink: &mut Sink,
    layout: &RawLayout,
    readers: &[(&RawBlock, &RawState, &RawShares)],
    checkpoints: &[RawCheckpoint],
    derived: &[Option<Values>],
    readable: &[String],
) {
    let kinds_holding = |block: &str| -> Vec<&str> {
        layout
            .blocks
            .iter()
            .filter(|(_, list)| list.iter().any(|b| b.text == block))
            .map(|(kind, _)| kind.text.as_str())
            .collect()
    };
    for &(block, state, shares) in readers {
        let reader = Reader {
            block,
            state,
            shares,
            kinds: kinds_holding(&block.name.text),
            owner_kinds: kinds_holding(&shares.block),
        };
        for (checkpoint, derived) in checkpoints.iter().zip(derived) {
            let Some(kinds) = &checkpoint.layer_kinds else {
                continue;
            };
            let Ok(given) = given_layer(sink, &reader, checkpoint, derived.as_ref(), readable)
            else {
                continue;
            };
            let holds = |i: usize, kinds_of: &[&str]| {
                kinds
                    .get(i)
                    .is_some_and(|kind| kinds_of.contains(&kind.as_str()))
            };
            let fault = (0..kinds.len())
                .filter(|&i| holds(i, &reader.kinds))
                .find_map(|i| {
                    owner_layer(i, given, |j| holds(j, &reader.owner_kinds))
                        .err()
                        .map(|fault| (i, fault))
                });
            if let Some((layer, fault)) = fault {
                report(sink, &reader, checkpoint, layer, fault);
            }
        }
    }
}

/// A reader whose owner is valid, with the layer kinds holding its block and its owner's.
struct Reader<'a> {
    /// Its block.
    block: &'a RawBlock,
    /// The reader.
    state: &'a RawState,
    /// What it reads.
    shares: &'a RawShares,
    /// The layer kinds holding its block.
    kinds: Vec<&'a str>,
    /// The layer kinds holding its owner's block.
    owner_kinds: Vec<&'a str>,
}

impl Reader<'_> {
    /// `<block>.<state>`.
    fn name(&self) -> String {
        format!(
            "{}.{}",
            self.block.name.text,
            self.state.local().unwrap_or("?")
        )
    }
}

/// A `layer` expression that cannot be evaluated under a checkpoint (already reported, or
/// without the checkpoint's dims).
struct Unevaluated;

/// The owner's layer `reader`'s `layer` expression gives under `checkpoint` (`None` without
/// one), or [`Unevaluated`] (reading an unknown dim, already reported; without the
/// checkpoint's dims; or failing, reported here).
fn given_layer(
    sink: &mut Sink,
    reader: &Reader<'_>,
    checkpoint: &RawCheckpoint,
    derived: Option<&Values>,
    readable: &[String],
) -> Result<Option<u64>, Unevaluated> {
    let Some(layer) = &reader.shares.layer else {
        return Ok(None);
    };
    if layer
        .shape
        .dims()
        .iter()
        .any(|d| !readable.contains(&d.name))
    {
        return Err(Unevaluated);
    }
    let (Some(_), Some(derived)) = (&checkpoint.dims, derived) else {
        return Err(Unevaluated);
    };
    let lookup = |name: &str| {
        checkpoint
            .dim(name)
            .or_else(|| derived.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
    };
    match layer.shape.eval(lookup) {
        Ok(value) => Ok(Some(value)),
        Err(error) => {
            let place = sink.place(&checkpoint.header);
            sink.report(
                &layer.at.loc,
                Diagnostic::error(format!(
                    "`layer` of `{}` cannot be evaluated: {error}",
                    reader.name()
                ))
                .label("here")
                .note(format!(
                    "under checkpoint `{}`, defined at {place}",
                    checkpoint.name.text
                )),
            );
            Err(Unevaluated)
        }
    }
}

/// Reports that layer `layer` of `checkpoint`, holding `reader`'s block, has no owner's layer:
/// at the owner string for the last-earlier-layer rule, at the `layer` expression otherwise.
fn report(
    sink: &mut Sink,
    reader: &Reader<'_>,
    checkpoint: &RawCheckpoint,
    layer: usize,
    fault: OwnerFault,
) {
    let shares = reader.shares;
    let kinds = checkpoint.layer_kinds.as_deref().unwrap_or_default();
    let kind_of = |i: usize| kinds.get(i).map_or("?", String::as_str);
    let place = sink.place(&checkpoint.header);
    let (name, block) = (reader.name(), &reader.block.name.text);
    let under = format!(
        "under checkpoint `{}` (defined at {place}), layer {layer} is a `{}` layer, whose block \
         `{block}` reads `{}.{}`",
        checkpoint.name.text,
        kind_of(layer),
        shares.block,
        shares.state
    );
    let holding = if reader.owner_kinds.is_empty() {
        format!(
            "no layer kind holds block `{}`: add it to a kind's list in `[layout.blocks]`",
            shares.block
        )
    } else {
        format!(
            "the layer kinds holding block `{}`: {}",
            shares.block,
            reader
                .owner_kinds
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let (loc, diagnostic) = match (fault, &shares.layer) {
        (OwnerFault::NotEarlier { given }, Some(expr)) => (
            &expr.at.loc,
            Diagnostic::error(format!(
                "`layer` of `{name}` is layer {given}, not one before layer {layer}"
            ))
            .label(format!(
                "{given} under checkpoint `{}`",
                checkpoint.name.text
            ))
            .note(under)
            .help(format!(
                "a KV side reads the KV of an earlier layer: `layer` must be below every layer \
                 holding `{block}`"
            )),
        ),
        (OwnerFault::DoesNotHold { given }, Some(expr)) => (
            &expr.at.loc,
            Diagnostic::error(format!(
                "`layer` of `{name}` is layer {given}, a `{}` layer without block `{}`",
                kind_of(given),
                shares.block
            ))
            .label(format!(
                "{given} under checkpoint `{}`",
                checkpoint.name.text
            ))
            .note(under)
            .help(holding),
        ),
        // The last-earlier-layer rule (a given layer's faults are the two above).
        _ => (
            &shares.owner.loc,
            Diagnostic::error(format!(
                "no layer before layer {layer} holds block `{}` for `{name}` to read",
                shares.block
            ))
            .label("the last earlier layer holding this block")
            .note(under)
            .help(format!(
                "a layer holding `{}` must come before every layer holding `{block}`; {holding}",
                shares.block
            )),
        ),
    };
    sink.report(loc, diagnostic);
}
