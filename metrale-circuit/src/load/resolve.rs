//! Resolution: the checks that need every file (a block defined twice across files, names of
//! undefined blocks, undeclared dims in shapes, the names the generated code needs, every shape
//! evaluated under every checkpoint, every reader's owner under every checkpoint), then the
//! assembly of the validated [`Circuit`].
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Checks that need every file run only when every file was read and parsed
//!   ([`Loaded::complete`]), so a library with a syntax error does not also cause "unknown
//!   block" errors.
//! - [`resolve`] returns a [`Circuit`] only when no error was found in any stage.

use std::collections::HashMap;

use super::raw::{Loaded, RawBlock, Top};
use super::{blocks, checkpoints, derive, names, sharing};
use crate::load::circuit::{Circuit, LayerLayout};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::{MAX_BLOCKS, MAX_STATES, MAX_TERMS, too_many};
use crate::load::text::walk::{Sink, Text};
use crate::model::Reach;

/// The checks that need every file, then the assembly of the circuit.
pub(crate) fn resolve(sink: &mut Sink, loaded: Loaded) -> Option<Circuit> {
    let Loaded {
        files,
        read,
        dir,
        complete,
    } = loaded;
    let blocks = unique_blocks(sink, files.iter().flat_map(|f| &f.blocks));
    let top = files.first().and_then(|f| f.top.as_ref());
    let dims: Option<Vec<String>> = top
        .and_then(|t| t.dims.as_ref())
        .map(|d| d.iter().map(|t| t.text.clone()).collect());
    let derived = top.map_or(&[][..], |t| t.derived.as_slice());
    // What shapes may read: the declared dims and the derived ones.
    let readable: Option<Vec<String>> = dims.as_ref().map(|dims| {
        dims.iter()
            .cloned()
            .chain(derived.iter().map(|d| d.name.text.clone()))
            .collect()
    });
    if let Some(readable) = &readable {
        for block in &blocks {
            blocks::check_dims(sink, block, readable);
        }
    }
    let top = top?;
    if complete {
        defined_blocks(sink, top, &blocks);
    }
    names::check(sink, top, &blocks);
    blocks::same_packings(sink, &blocks);
    terms_of_checkpoints(sink, top, &blocks);
    if top.schema == Some(1) {
        schema_1_shapes(sink, &blocks);
    }
    if top.schema.is_some_and(|schema| schema < 3) {
        schema_3_keys(sink, &blocks);
    }
    if top.schema.is_some_and(|schema| schema < 4) {
        schema_4_keys(sink, &blocks);
    }
    let order = dims
        .as_ref()
        .and_then(|dims| derive::order(sink, derived, dims));
    let values: Vec<Option<derive::Values>> = top
        .checkpoints
        .iter()
        .map(|checkpoint| {
            checkpoint.dims.as_ref()?;
            derive::values(sink, derived, order.as_ref()?, checkpoint)
        })
        .collect();
    if let Some(readable) = &readable {
        checkpoints::evaluate(sink, &blocks, &top.checkpoints, readable, &values);
    }
    if complete {
        let readers = sharing::owners(sink, &blocks);
        let reader_blocks: Vec<&RawBlock> = blocks
            .iter()
            .copied()
            .filter(|b| b.states.iter().any(|s| s.shares.is_some()))
            .collect();
        sharing::in_layers(sink, top, &reader_blocks);
        if let (Some(layout), Some(readable)) = (&top.layout, &readable) {
            sharing::layers(sink, layout, &readers, &top.checkpoints, &values, readable);
        }
    }
    if sink.count() > 0 {
        return None;
    }
    let order = order?;
    assemble(sink, top, &blocks, (read, dir), dims?, &order, values)
}

/// A circuit before schema 4 (its libraries' included) declares no fixed-token KV (`tokens`).
fn schema_4_keys(sink: &mut Sink, blocks: &[&RawBlock]) {
    for state in blocks.iter().flat_map(|b| &b.states) {
        if let Some(Reach::Fixed(tokens)) = &state.reach {
            sink.report(
                &tokens.at.loc,
                Diagnostic::error("`tokens` needs `schema = 4`")
                    .label("a fixed token count")
                    .help("write `schema = 4` at the top of the circuit"),
            );
        }
    }
}

/// A schema-1 or schema-2 circuit's states (its libraries' included) declare no `chunk`, no
/// `shares` and no `packings`: chunked local attention, KV shared across layers and units made
/// of parts are schema 3.
fn schema_3_keys(sink: &mut Sink, blocks: &[&RawBlock]) {
    for state in blocks.iter().flat_map(|b| &b.states) {
        if let Some(key) = &state.packings_key {
            sink.report(
                key,
                Diagnostic::error("`packings` needs `schema = 3`")
                    .label("a unit made of parts")
                    .help("write `schema = 3` at the top of the circuit"),
            );
        }
        if let Some(shares) = &state.shares {
            sink.report(
                &shares.key,
                Diagnostic::error("`shares` needs `schema = 3`")
                    .label("KV shared across layers")
                    .help("write `schema = 3` at the top of the circuit"),
            );
        }
        if let Some(Reach::Chunk(chunk)) = &state.reach {
            sink.report(
                &chunk.at.loc,
                Diagnostic::error("`chunk` needs `schema = 3`")
                    .label("chunked local attention")
                    .help("write `schema = 3` at the top of the circuit"),
            );
        }
    }
}

/// A schema-1 circuit's shapes (its libraries' included) do not subtract, and its states
/// declare no `window`: both are schema 2.
fn schema_1_shapes(sink: &mut Sink, blocks: &[&RawBlock]) {
    for window in blocks
        .iter()
        .flat_map(|b| &b.states)
        .filter_map(|s| match &s.reach {
            Some(Reach::Window(window)) => Some(window),
            _ => None,
        })
    {
        sink.report(
            &window.at.loc,
            Diagnostic::error("`window` needs `schema = 2`")
                .label("a sliding window")
                .help("write `schema = 2` at the top of the circuit"),
        );
    }
    for shape in blocks
        .iter()
        .flat_map(|b| &b.states)
        .filter_map(|s| s.shape.as_ref())
    {
        if shape.shape.subtracts() {
            sink.report(
                &shape.at.loc,
                Diagnostic::error("`-` in a shape needs `schema = 2`")
                    .label("subtracts")
                    .help("write `schema = 2` at the top of the circuit (a schema-1 shape only adds and multiplies)"),
            );
        }
    }
}

/// Every block once: a block defined again (in another file) is reported at the second
/// definition, with a note at the first, and dropped; blocks past [`MAX_BLOCKS`], or whose
/// states pass [`MAX_STATES`], are reported and dropped.
fn unique_blocks<'b>(
    sink: &mut Sink,
    all: impl Iterator<Item = &'b RawBlock>,
) -> Vec<&'b RawBlock> {
    let mut out: Vec<&RawBlock> = Vec::new();
    let mut states = 0usize;
    for block in all {
        if out.len() == MAX_BLOCKS {
            sink.report(&block.name.loc, too_many("blocks", MAX_BLOCKS));
            break;
        }
        if let Some(past) = block.states.get(MAX_STATES.saturating_sub(states)) {
            sink.report(&past.header, too_many("states", MAX_STATES));
            break;
        }
        states += block.states.len();
        if let Some(first) = out.iter().find(|b| b.name.text == block.name.text) {
            let place = sink.place(&first.name.loc);
            sink.report(
                &block.name.loc,
                Diagnostic::error(format!("block `{}` is defined twice", block.name.text))
                    .label("defined again")
                    .note(format!("first defined at {place}")),
            );
        } else {
            out.push(block);
        }
    }
    out
}

/// Every checkpoint holds a state term, and the state terms of every checkpoint together (one
/// per state of each block instance) are at most [`MAX_TERMS`]: reported at the checkpoint
/// without one, and at the checkpoint that passes the limit.
fn terms_of_checkpoints(sink: &mut Sink, top: &Top, blocks: &[&RawBlock]) {
    let states: HashMap<&str, usize> = blocks
        .iter()
        .map(|b| (b.name.text.as_str(), b.states.len()))
        .collect();
    let sum = |names: &[Text]| -> usize {
        names
            .iter()
            .map(|n| states.get(n.text.as_str()).copied().unwrap_or(0))
            .sum()
    };
    let fixed = sum(&top.prologue) + sum(&top.epilogue) + sum(&top.draft);
    let per_kind: HashMap<&str, usize> = top
        .layout
        .iter()
        .flat_map(|l| &l.blocks)
        .map(|(kind, names)| (kind.text.as_str(), sum(names)))
        .collect();
    let clean = sink.count() == 0;
    let mut total = 0usize;
    for checkpoint in &top.checkpoints {
        let Some(kinds) = &checkpoint.layer_kinds else {
            continue;
        };
        let terms = kinds.iter().fold(fixed, |terms, kind| {
            terms.saturating_add(per_kind.get(kind.as_str()).copied().unwrap_or(0))
        });
        // Only in an otherwise valid circuit: an unknown or unread block is no state too.
        if terms == 0 && clean {
            sink.report(
                &checkpoint.header,
                Diagnostic::error(format!(
                    "checkpoint `{}` holds no state: its plan would be empty",
                    checkpoint.name.text
                ))
                .label("no state in any of its blocks")
                .help(
                    "a circuit declares what a model keeps between decode steps: add a \
                     `[[block.<name>.state]]` to a block its layers, prologue, epilogue or \
                     draft use",
                ),
            );
        }
        total = total.saturating_add(terms);
        if total > MAX_TERMS {
            sink.report(
                &checkpoint.header,
                too_many("state terms", MAX_TERMS).note(format!(
                    "with checkpoint `{}`, the circuit's checkpoints hold {total} state terms \
                     (one per state of each block of each layer)",
                    checkpoint.name.text
                )),
            );
            return;
        }
    }
}

/// Every block named by the prologue, the epilogue, the draft and the layout is defined.
fn defined_blocks(sink: &mut Sink, top: &Top, blocks: &[&RawBlock]) {
    let defined: Vec<&str> = blocks.iter().map(|b| b.name.text.as_str()).collect();
    let packing_names = top
        .layout
        .iter()
        .flat_map(|l| l.blocks.iter().flat_map(|(_, names)| names));
    let named = top
        .prologue
        .iter()
        .chain(&top.epilogue)
        .chain(&top.draft)
        .chain(packing_names);
    for name in named {
        if !defined.contains(&name.text.as_str()) {
            sink.report(
                &name.loc,
                Diagnostic::error(format!("unknown block `{}`", name.text))
                    .label("no such block")
                    .expected_one_of("blocks", &name.text, &defined),
            );
        }
    }
}

/// Builds the circuit (called only when no error was found).
fn assemble(
    sink: &Sink,
    top: &Top,
    blocks: &[&RawBlock],
    (read, dir): (Vec<std::path::PathBuf>, std::path::PathBuf),
    dims: Vec<String>,
    order: &[usize],
    values: Vec<Option<derive::Values>>,
) -> Option<Circuit> {
    let layout = top.layout.as_ref()?;
    let names = |list: &[Text]| list.iter().map(|t| t.text.clone()).collect::<Vec<_>>();
    // A reader (`shares`) has its owner's format (the owner was checked to exist).
    let owner_format = |shares: &super::raw::RawShares| {
        blocks
            .iter()
            .find(|b| b.name.text == shares.block)?
            .states
            .iter()
            .find(|s| s.local() == Some(shares.state.as_str()))?
            .format
            .clone()
    };
    let mut templates = Vec::with_capacity(blocks.len());
    for block in blocks {
        templates.push(block.template(sink, owner_format)?);
    }
    let checkpoints = top
        .checkpoints
        .iter()
        .zip(values)
        .map(|(c, derived)| c.checkpoint(sink, derived?))
        .collect::<Option<Vec<_>>>()?;
    let derived = order
        .iter()
        .filter_map(|&i| top.derived.get(i))
        .map(|d| (d.name.text.clone(), d.expr.shape.clone()))
        .collect();
    Some(Circuit {
        files: sink.files.clone(),
        read,
        dir,
        arch: top.arch.clone()?,
        description: top.description.clone(),
        dims,
        derived,
        tensor_parallel: top.tensor_parallel.clone(),
        prologue: names(&top.prologue),
        epilogue: names(&top.epilogue),
        draft: names(&top.draft),
        layout: LayerLayout {
            rule: layout.rule.clone()?,
            blocks: layout
                .blocks
                .iter()
                .map(|(kind, list)| (kind.text.clone(), names(list)))
                .collect(),
        },
        blocks: templates,
        checkpoints,
        config: top.config.clone(),
    })
}
