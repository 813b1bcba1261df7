//! `[checkpoint.<name>]` tables, and the evaluation of every shape under every checkpoint.
//!
//! This module owns the checkpoint keys (`hf`, `layers` for interval and pattern layouts,
//! `layer_kinds` for list layouts, `pattern` for pattern layouts, `dims`), the layer kinds each
//! checkpoint produces (a pattern read character by character: [`pattern_kinds`]), the rule that a
//! checkpoint gives every declared dim and no other, the rule that no two checkpoints give the
//! same `hf` id (ASCII case ignored, as the Hub resolves ids) and none an empty one, and
//! [`evaluate`]: every state's shape of every block under every checkpoint, and its unit's
//! bytes by the one sizing law, so an overflow or a division by zero is a load error rather
//! than a failure of [`crate::Circuit::instantiate`] or of a plan at any inputs.
//!
//! Invariants:
//! - At least one checkpoint is required; the first one written is the default one.
//! - A checkpoint has at most [`MAX_LAYERS`] layers, so the layer kinds built for it stay small
//!   whatever the file says.
//! - `RawCheckpoint::dims` is `Some` only when every declared dim is given exactly once with
//!   a valid value; only such checkpoints evaluate shapes, and only shapes whose dims are all
//!   declared are evaluated (the others were already reported).

use super::derive::Values;
use super::raw::{
    FULL, LINEAR, Produced, RawBlock, RawCheckpoint, RawLayout, RawState, ShapeValue,
};
use crate::law::sizing::{next_part, unit_bytes};
use crate::load::circuit::LayerRule;
use crate::load::circuit::shape::{EvalError, Shape};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::{MAX_CHECKPOINTS, MAX_LAYERS};
use crate::load::text::walk::{Loc, Sink, StrAt, Table, Text, Value, Walk, entries, field};
use crate::model::inputs::same_id;
use crate::model::{Reach, StateFormat};

/// The keys of a checkpoint table.
pub(crate) const CHECKPOINT_KEYS: &[&str] = &["hf", "layers", "layer_kinds", "pattern", "dims"];

/// The help of a pattern layout's checkpoint keys.
const PATTERN_HELP: &str =
    "a pattern layout's checkpoint gives `layers = <count>` and optionally `pattern = \"...\"`";

/// Walks the `checkpoint` table against the `schema`, the declared `dims` (the valid names, and
/// the refused ones a checkpoint may give without a new error) and the `layout`. Returns the
/// checkpoints and every layer kind they produce.
pub(super) fn walk(
    w: &mut Walk<'_>,
    root: &Table<'_>,
    schema: Option<u64>,
    dims: Option<(&[Text], &[String])>,
    derived: &[&str],
    layout: Option<&RawLayout>,
) -> (Vec<RawCheckpoint>, Vec<Produced>) {
    let empty = Table::new();
    let (span, table) = match field(root, "checkpoint") {
        Some((_, v)) => match w.table("checkpoint", v) {
            Some(t) => (v.span(), t),
            None => return (Vec::new(), Vec::new()),
        },
        None => (0..0, &empty),
    };
    if table.is_empty() {
        w.report(
            span,
            Diagnostic::error("the circuit has no checkpoint")
                .label("no `[checkpoint.<name>]` here")
                .help("add a `[checkpoint.<name>]` table with its layers and dims"),
        );
        return (Vec::new(), Vec::new());
    }
    let declared: Option<Declared<'_>> = dims.map(|(valid, refused)| Declared {
        names: valid.iter().map(|t| t.text.as_str()).collect(),
        refused,
        derived,
    });
    let mut checkpoints = Vec::with_capacity(table.len().min(MAX_CHECKPOINTS));
    let mut produced = Vec::new();
    // Every valid `hf` id so far: its checkpoint and where it is written.
    let mut ids: Vec<HfId> = Vec::new();
    for (i, (key, v)) in entries(table).into_iter().enumerate() {
        if !w.at_most(i + 1, MAX_CHECKPOINTS, key.span(), "checkpoints") {
            break;
        }
        let name: &str = key.get_ref();
        w.identifier(name, key.span(), "checkpoint name");
        let Some(t) = w.table(&format!("checkpoint.{name}"), v) else {
            continue;
        };
        let what = format!("checkpoint `{name}`");
        w.check_keys(t, CHECKPOINT_KEYS, &what);
        let hf = field(t, "hf").and_then(|(_, v)| {
            let id = w.string("hf", v)?.to_owned();
            hf_id(w, &mut ids, name, id, v.span())
        });
        let header = w.loc(v.span());
        let layer_kinds = layer_kinds(w, t, &header, &what, schema, layout);
        for (layer, kind) in layer_kinds.iter().flatten().enumerate() {
            if !produced.iter().any(|p: &Produced| p.kind == *kind) {
                produced.push(Produced {
                    kind: kind.clone(),
                    checkpoint: name.to_owned(),
                    layer,
                });
            }
        }
        checkpoints.push(RawCheckpoint {
            name: w.text(name, key.span()),
            dims: checkpoint_dims(w, t, &header, &what, declared.as_ref()),
            header,
            hf,
            layer_kinds,
        });
    }
    (checkpoints, produced)
}

/// A checkpoint's `hf` id, as later ids are checked against it.
struct HfId {
    /// The id as written.
    id: String,
    /// Its checkpoint.
    checkpoint: String,
    /// Where it is written.
    at: Loc,
}

/// Checkpoint `name`'s `hf` id `id`, written at `span`, when it is not empty and names no
/// earlier checkpoint's id: ids compare with ASCII case ignored (`same_id`), as the Hub
/// resolves them, so a generated `Checkpoint::from_hf` can tell every checkpoint apart.
fn hf_id(
    w: &mut Walk<'_>,
    ids: &mut Vec<HfId>,
    name: &str,
    id: String,
    span: std::ops::Range<usize>,
) -> Option<String> {
    if id.trim().is_empty() {
        w.report(
            span,
            Diagnostic::error(format!("empty `hf` id in checkpoint `{name}`"))
                .label("no id here")
                .help("give the checkpoint's Hugging Face id, `hf = \"<org>/<model>\"`, or leave `hf` out"),
        );
        return None;
    }
    if let Some(first) = ids.iter().find(|first| same_id(&first.id, &id)) {
        let (label, first_id) = if first.id == id {
            ("given twice", "it".to_owned())
        } else {
            ("the same id, ASCII case ignored", format!("`{}`", first.id))
        };
        let place = w.sink.place(&first.at);
        w.report(
            span,
            Diagnostic::error(format!(
                "`hf` id `{id}` of checkpoint `{name}` is already checkpoint `{}`'s",
                first.checkpoint
            ))
            .label(label)
            .note(format!(
                "checkpoint `{}` gives {first_id} at {place}",
                first.checkpoint
            ))
            .help("the Hub resolves ids with ASCII case ignored, so `Checkpoint::from_hf` could not tell them apart: give each checkpoint its own id, or leave `hf` out of one"),
        );
        return None;
    }
    let at = w.loc(span);
    ids.push(HfId {
        id: id.clone(),
        checkpoint: name.to_owned(),
        at,
    });
    Some(id)
}

/// `layers` (interval layouts), `layer_kinds` (list layouts) or `layers` and `pattern`
/// (pattern layouts): each layer's kind.
fn layer_kinds(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    header: &Loc,
    what: &str,
    schema: Option<u64>,
    layout: Option<&RawLayout>,
) -> Option<Vec<String>> {
    let layout = layout?;
    let rule = layout.rule.as_ref()?;
    if let (Some((key, _)), false) = (
        field(t, "pattern"),
        matches!(rule, LayerRule::Pattern { .. }),
    ) {
        let d = if schema == Some(1) {
            Diagnostic::error(format!("`pattern` in {what} needs `schema = 2`"))
                .label("a schema-2 key")
                .help("write `schema = 2` at the top of the circuit")
        } else {
            Diagnostic::error("`pattern` is only for `kind = \"pattern\"` layouts")
                .label("not for this layout")
                .help("a pattern layout gives `[layout.symbols]`; its checkpoints give `pattern`")
        };
        w.report(key, d);
    }
    match rule {
        LayerRule::Interval { period } => {
            if let Some((key, _)) = field(t, "layer_kinds") {
                w.report(
                    key,
                    Diagnostic::error("`layer_kinds` is only for `kind = \"list\"` layouts")
                        .label("not for an interval layout")
                        .help("an interval layout's checkpoint gives `layers = <count>`"),
                );
            }
            let layers = layer_count(
                w,
                t,
                header,
                what,
                "an interval layout's checkpoint gives `layers = <count>`",
            )?;
            let kinds = (1..=layers).map(|n| if n % *period == 0 { FULL } else { LINEAR });
            Some(kinds.map(str::to_owned).collect())
        }
        LayerRule::List => list_kinds(w, t, header, what, layout),
        LayerRule::Pattern { symbols, pattern } => {
            pattern_layers(w, t, header, what, symbols, pattern.as_deref())
        }
    }
}

/// `layers`: required, between 1 and [`MAX_LAYERS`]; `help` says what the checkpoint gives.
fn layer_count(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    header: &Loc,
    what: &str,
    help: &str,
) -> Option<u64> {
    let Some((_, v)) = field(t, "layers") else {
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("missing `layers` in {what}"))
                .label("this table has no `layers`")
                .help(help),
        );
        return None;
    };
    let layers = w.u64("layers", v)?;
    if layers == 0 || layers > MAX_LAYERS {
        w.report(
            v.span(),
            Diagnostic::error(format!("`layers` must be between 1 and {MAX_LAYERS}"))
                .label("out of range"),
        );
        return None;
    }
    Some(layers)
}

/// A pattern layout's checkpoint: `layers`, and its own `pattern` of exactly `layers`
/// characters, else the layout's `pattern` repeated (`layout_pattern`, already checked).
fn pattern_layers(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    header: &Loc,
    what: &str,
    symbols: &[(char, String)],
    layout_pattern: Option<&str>,
) -> Option<Vec<String>> {
    if let Some((key, _)) = field(t, "layer_kinds") {
        w.report(
            key,
            Diagnostic::error("`layer_kinds` is only for `kind = \"list\"` layouts")
                .label("not for a pattern layout")
                .help(PATTERN_HELP),
        );
    }
    let layers = layer_count(w, t, header, what, PATTERN_HELP);
    if let Some((_, v)) = field(t, "pattern") {
        return own_pattern(w, v, what, symbols, layers);
    }
    let Some(repeated) = layout_pattern else {
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("{what} has no pattern"))
                .label("no `pattern` here, and none in `[layout]`")
                .help("give this checkpoint `pattern = \"...\"`, one character per layer, or `[layout]` a `pattern` that repeats to cover the layers"),
        );
        return None;
    };
    let kinds: Vec<&String> = repeated
        .chars()
        .filter_map(|c| symbols.iter().find(|(s, _)| *s == c).map(|(_, k)| k))
        .collect();
    let layers = usize::try_from(layers?).ok()?;
    (!kinds.is_empty()).then(|| kinds.into_iter().cycle().take(layers).cloned().collect())
}

/// A checkpoint's own `pattern`: every character a symbol, exactly `layers` of them (`layers`
/// `None` when it was refused: the characters are still checked).
fn own_pattern(
    w: &mut Walk<'_>,
    v: &Value<'_>,
    what: &str,
    symbols: &[(char, String)],
    layers: Option<u64>,
) -> Option<Vec<String>> {
    let text = w.string("pattern", v)?;
    let at = w.str_at(v.span(), text);
    let kinds = pattern_kinds(w, symbols, text, &at);
    let layers = layers?;
    let found = text.chars().count();
    if u64::try_from(found).ok() != Some(layers) {
        w.report(
            v.span(),
            Diagnostic::error(format!(
                "`pattern` of {what} has {found} characters, expected {layers}"
            ))
            .label(format!("{found} characters"))
            .help(format!(
                "a checkpoint's own `pattern` gives one character per layer: `layers = {layers}`"
            )),
        );
        return None;
    }
    kinds
}

/// The layer kinds of `text`, one per character, each looked up in `symbols`. Each unknown
/// character is reported once, at its first occurrence inside the string (`at`); `None` then.
pub(super) fn pattern_kinds(
    w: &mut Walk<'_>,
    symbols: &[(char, String)],
    text: &str,
    at: &StrAt,
) -> Option<Vec<String>> {
    let known: Vec<String> = symbols.iter().map(|(c, _)| c.to_string()).collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut kinds = Vec::with_capacity(text.len());
    let mut unknown: Vec<char> = Vec::new();
    for (offset, c) in text.char_indices() {
        if let Some((_, kind)) = symbols.iter().find(|(s, _)| *s == c) {
            kinds.push(kind.clone());
            continue;
        }
        if unknown.contains(&c) {
            continue;
        }
        unknown.push(c);
        let times = text.chars().filter(|&d| d == c).count();
        let mut d = Diagnostic::error(format!("unknown pattern character `{c}`"))
            .label("not in `[layout.symbols]`")
            .expected_one_of("pattern characters", &c.to_string(), &known);
        if times > 1 {
            d = d.note(format!("`{c}` occurs {times} times in this pattern"));
        }
        w.sink.report(&at.inner(offset, c.len_utf8()), d);
    }
    unknown.is_empty().then_some(kinds)
}

/// `layer_kinds` of a list layout: every entry a key of `[layout.blocks]`.
fn list_kinds(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    header: &Loc,
    what: &str,
    layout: &RawLayout,
) -> Option<Vec<String>> {
    if let Some((key, _)) = field(t, "layers") {
        w.report(
            key,
            Diagnostic::error("`layers` is only for `kind = \"interval\"` layouts")
                .label("not for a list layout")
                .help("a list layout's checkpoint gives `layer_kinds = [...]`"),
        );
    }
    let Some((_, v)) = field(t, "layer_kinds") else {
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("missing `layer_kinds` in {what}"))
                .label("this table has no `layer_kinds`")
                .help("a list layout's checkpoint gives `layer_kinds = [...]`, one per layer"),
        );
        return None;
    };
    let max = usize::try_from(MAX_LAYERS).unwrap_or(usize::MAX);
    let kinds = w.strings_at_most("layer_kinds", v, max, "layers")?;
    if kinds.is_empty() {
        w.report(
            v.span(),
            Diagnostic::error(format!("{what} has no layers")).label("empty"),
        );
        return None;
    }
    let known: Vec<&str> = layout.blocks.iter().map(|(k, _)| k.text.as_str()).collect();
    let mut valid = true;
    for kind in &kinds {
        if !known.contains(&kind.text.as_str()) {
            valid = false;
            w.report(
                kind.loc.span.clone(),
                Diagnostic::error(format!("unknown layer kind `{}`", kind.text))
                    .label("not in `[layout.blocks]`")
                    .expected_one_of("layer kinds", &kind.text, &known),
            );
        }
    }
    valid.then(|| kinds.into_iter().map(|k| k.text).collect())
}

/// The circuit's dims, as a checkpoint checks them.
struct Declared<'a> {
    /// The valid names, each once, in declaration order.
    names: Vec<&'a str>,
    /// The refused entries (already reported): ignored when a checkpoint gives them.
    refused: &'a [String],
    /// The derived dims (`[derive]`): a checkpoint never gives them.
    derived: &'a [&'a str],
}

/// `dims = { ... }`: every declared dim, and no other. `declared` is `None` when the circuit's
/// `dims` could not be read (then nothing is checked).
fn checkpoint_dims(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    header: &Loc,
    what: &str,
    declared: Option<&Declared<'_>>,
) -> Option<Vec<(String, u64)>> {
    let Some((_, v)) = field(t, "dims") else {
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("missing `dims` in {what}"))
                .label("this table has no `dims`")
                .help("give every declared dim: `dims = { hidden = 4096, ... }`"),
        );
        return None;
    };
    let table = w.table("dims", v)?;
    let Declared {
        names: declared,
        refused,
        derived,
    } = declared?;
    let mut given: Vec<(&str, Option<u64>)> = Vec::with_capacity(table.len());
    for (key, value) in entries(table) {
        let name: &str = key.get_ref();
        if refused.iter().any(|r| r == name) {
            continue;
        }
        if derived.contains(&name) {
            w.report(
                key.span(),
                Diagnostic::error(format!("dim `{name}` is derived: {what} does not give it"))
                    .label("derived in `[derive]`")
                    .help(format!(
                        "remove `{name}` here: it is computed from the other dims"
                    )),
            );
            continue;
        }
        if !declared.contains(&name) {
            w.report(
                key.span(),
                Diagnostic::error(format!("unknown dim `{name}` in {what}"))
                    .label("not a declared dim")
                    .expected_one_of("dims", name, declared),
            );
            continue;
        }
        given.push((name, w.u64(name, value)));
    }
    let mut out = Vec::with_capacity(declared.len());
    let mut complete = true;
    for dim in declared {
        match given.iter().find(|(n, _)| n == dim) {
            Some((_, Some(value))) => out.push(((*dim).to_owned(), *value)),
            Some((_, None)) => complete = false,
            None => {
                complete = false;
                w.report(
                    v.span(),
                    Diagnostic::error(format!("{what} does not give dim `{dim}`"))
                        .label(format!("no `{dim}` here"))
                        .help(format!(
                            "add `{dim} = <value>`: a checkpoint gives every dim"
                        )),
                );
            }
        }
    }
    complete.then_some(out)
}

/// `shape` evaluated under every checkpoint whose dims are complete, reading its declared dims
/// and the derived dims' values under it; nothing when `shape` reads a dim that is neither
/// (already reported).
fn under_checkpoints<'c>(
    shape: &Shape,
    checkpoints: &'c [RawCheckpoint],
    dims: &[String],
    derived: &'c [Option<Values>],
) -> Vec<(&'c RawCheckpoint, Result<u64, EvalError>)> {
    checkpoints
        .iter()
        .zip(derived)
        .filter_map(|(checkpoint, derived)| {
            Some((
                checkpoint,
                under(shape, checkpoint, dims, derived.as_ref())?,
            ))
        })
        .collect()
}

/// `shape` evaluated under `checkpoint` (with `derived`, the derived dims' values under it);
/// `None` when its dims are incomplete or `shape` reads a dim that is neither declared nor
/// derived (already reported).
fn under(
    shape: &Shape,
    checkpoint: &RawCheckpoint,
    dims: &[String],
    derived: Option<&Values>,
) -> Option<Result<u64, EvalError>> {
    if shape.dims().iter().any(|d| !dims.contains(&d.name)) {
        return None;
    }
    checkpoint.dims.as_ref()?;
    let derived = derived?;
    let lookup = |name: &str| {
        checkpoint
            .dim(name)
            .or_else(|| derived.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
    };
    Some(shape.eval(lookup))
}

/// A KV side's window or chunk (`name`) under every checkpoint whose dims are complete: at
/// least one token.
fn evaluate_reach(
    sink: &mut Sink,
    block: &RawBlock,
    state: &RawState,
    reach: &Reach<ShapeValue>,
    checkpoints: &[RawCheckpoint],
    dims: &[String],
    derived: &[Option<Values>],
) {
    let (name, window) = (reach.key(), reach.as_ref().tokens());
    let id = state.local().unwrap_or("?");
    for (checkpoint, value) in under_checkpoints(&window.shape, checkpoints, dims, derived) {
        let problem = match value {
            Ok(0) => "is 0 tokens".to_owned(),
            Ok(_) => continue,
            Err(error) => format!("cannot be evaluated: {error}"),
        };
        let place = sink.place(&checkpoint.header);
        sink.report(
            &window.at.loc,
            Diagnostic::error(format!(
                "{name} of state `{id}` in block `{}` {problem}: `{}`",
                block.name.text, window.shape
            ))
            .label("here")
            .note(format!(
                "under checkpoint `{}`, defined at {place}",
                checkpoint.name.text
            ))
            .help(format!("a {name} keeps at least one token")),
        );
    }
}

/// Evaluates every state's shape (and every part's of its packings) of every block under every
/// checkpoint whose dims are complete; an overflow or a division by zero is reported at the
/// shape.
pub(super) fn evaluate(
    sink: &mut Sink,
    blocks: &[&RawBlock],
    checkpoints: &[RawCheckpoint],
    dims: &[String],
    derived: &[Option<Values>],
) {
    for block in blocks {
        for state in &block.states {
            if let Some(reach) = &state.reach {
                evaluate_reach(sink, block, state, reach, checkpoints, dims, derived);
            }
            let id = state.local().unwrap_or("?");
            let at = format!("state `{id}` in block `{}`", block.name.text);
            let shapes = state.shape.iter().map(|shape| (at.clone(), shape));
            let parts = state.packings.iter().flat_map(|layout| {
                layout.parts.iter().filter_map(|part| {
                    let name = part.name.as_ref().map_or("?", |n| n.text.as_str());
                    let what = format!("part `{}.{name}` of {at}", layout.name.text);
                    Some((what, part.shape.as_ref()?))
                })
            });
            let all: Vec<(String, &ShapeValue)> = shapes.chain(parts).collect();
            for (what, shape) in all {
                evaluate_shape(sink, &what, shape, checkpoints, dims, derived);
            }
            for (checkpoint, derived) in checkpoints.iter().zip(derived) {
                let under = |shape: &Shape| under(shape, checkpoint, dims, derived.as_ref());
                if let Some((loc, problem)) = unit_overflow(block, state, under) {
                    let place = sink.place(&checkpoint.header);
                    sink.report(
                        &loc,
                        Diagnostic::error(format!("a unit of {at} overflows u64: {problem}"))
                            .label("too many bytes for one unit")
                            .note(format!(
                                "under checkpoint `{}`, defined at {place}",
                                checkpoint.name.text
                            ))
                            .help("a unit is at most u64::MAX bytes: lower the dims it reads"),
                    );
                }
            }
        }
    }
}

/// Where `state`'s unit overflows u64 under one checkpoint (`under` evaluates a shape under
/// it), and why: the elements of a fixed dtype (its `shape`, or its `of` sibling's) or a
/// packing's parts placed by the one sizing law ([`unit_bytes`], [`next_part`]). A dtype chosen
/// by the inputs (`{key}`) is the plan's to check; a shape that cannot be evaluated is
/// reported by [`evaluate_shape`].
fn unit_overflow(
    block: &RawBlock,
    state: &RawState,
    under: impl Fn(&Shape) -> Option<Result<u64, EvalError>>,
) -> Option<(Loc, String)> {
    if let Some(StateFormat::Fixed(dtype)) = &state.format {
        let (shape, loc) = match (&state.shape, &state.of) {
            (Some(shape), _) => (shape, shape.at.loc.clone()),
            (None, Some(of)) => {
                let sibling = block.states.iter().find(|s| s.local() == Some(&of.text))?;
                (sibling.shape.as_ref()?, of.loc.clone())
            }
            (None, None) => return None,
        };
        let elements = under(&shape.shape)?.ok()?;
        if unit_bytes(elements, *dtype).is_err() {
            return Some((loc, format!("{elements} elements of `{}`", dtype.name())));
        }
    }
    for layout in &state.packings {
        let mut offset: u64 = 0;
        for part in &layout.parts {
            let (Some(dtype), Some(shape)) = (part.dtype, &part.shape) else {
                break;
            };
            let Some(Ok(elements)) = under(&shape.shape) else {
                break;
            };
            let Ok((at, bytes)) = next_part(offset, elements, dtype) else {
                let name = part.name.as_ref().map_or("?", |n| n.text.as_str());
                return Some((
                    shape.at.loc.clone(),
                    format!(
                        "part `{name}` of packing `{}`, {elements} elements of `{}`, from byte {offset}",
                        layout.name.text,
                        dtype.name()
                    ),
                ));
            };
            offset = at.saturating_add(bytes);
        }
    }
    None
}

/// One shape, of `what` (a state or a part of one, as messages name it), under every
/// checkpoint whose dims are complete.
fn evaluate_shape(
    sink: &mut Sink,
    what: &str,
    shape: &ShapeValue,
    checkpoints: &[RawCheckpoint],
    dims: &[String],
    derived: &[Option<Values>],
) {
    for (checkpoint, value) in under_checkpoints(&shape.shape, checkpoints, dims, derived) {
        let Err(error) = value else {
            continue;
        };
        let (loc, label) = match &error {
            EvalError::UnknownDim(dim) => (shape.at.inner(dim.offset, dim.name.len()), "not given"),
            EvalError::DivisionByZero(dim) => (
                shape.at.inner(dim.offset, dim.name.len()),
                "divides by zero",
            ),
            EvalError::Overflow => (shape.at.loc.clone(), "overflows u64"),
            EvalError::Negative => (shape.at.loc.clone(), "below zero"),
        };
        let message = match error {
            EvalError::Negative => format!("shape of {what} is below zero: `{}`", shape.shape),
            _ => format!("shape of {what} cannot be evaluated: {error}"),
        };
        let place = sink.place(&checkpoint.header);
        sink.report(
            &loc,
            Diagnostic::error(message).label(label).note(format!(
                "under checkpoint `{}`, defined at {place}",
                checkpoint.name.text
            )),
        );
    }
}
