//! `[block.<name>]` tables and their `[[block.<name>.state]]` declarations.
//!
//! This module owns the block keys, every rule of one state table (`id`, `kind`, `lifetime`,
//! `format`, `shape`, `verify`, `of`, `window`, `chunk`, `shares`, `layouts`, and each layout's
//! parts: `part`, `format`, `shape`), the rules between the states of one block (unique ids,
//! `of` naming a sibling with a shape and no layouts), and the check that every dim a shape, a
//! part, a reach or a reader's `layer` reads is declared ([`check_dims`], run once the
//! circuit's dims are known). Whether every state of a format key declares the same layouts
//! is [`same_layouts`]'s (it needs every file). Node tables are handed to [`super::nodes`]; whether a reader's
//! owner exists, and has a layer under every checkpoint, is [`super::sharing`]'s (it needs
//! every file).
//!
//! Invariants:
//! - A `RawState` keeps every field that was valid, so the checks between states and the node
//!   rules still run when another field of the same state was refused.
//! - A shape error (syntax or unknown dim) points inside the shape string when the string maps
//!   one to one onto the file, and at the whole value otherwise
//!   ([`StrAt`](crate::load::text::walk::StrAt)).
//! - Blocks are listed in the order they first appear in the file (a block may be split over
//!   several headers), which is the order of [`crate::Circuit::blocks`].

use super::names::reserved::FORMAT_ITEMS;
use super::names::{camel_case, listed};
use super::nodes;
use super::raw::{RawBlock, RawPart, RawShares, RawState, RawUnitLayout, ShapeValue};
use crate::load::circuit::shape::Shape;
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::{
    MAX_BLOCKS, MAX_LAYOUTS_PER_STATE, MAX_PARTS_PER_LAYOUT, MAX_STATES_PER_BLOCK,
};
use crate::load::text::walk::{Loc, Sink, Table, Text, Value, Walk, field, first_offset};
use crate::model::{
    FormatError, Lifetime, Reach, StateDtype, StateFormat, StateKind, VerifySteps,
    is_snake_identifier,
};

/// The keys of a block table.
pub(super) const BLOCK_KEYS: &[&str] = &["stream_in", "stream_out", "outputs", "state", "node"];

/// The keys of a state table.
pub(super) const STATE_KEYS: &[&str] = &[
    "id", "kind", "lifetime", "format", "shape", "verify", "of", "window", "chunk", "shares",
    "layouts",
];

/// The keys of one part of a layout (schema 3).
pub(super) const PART_KEYS: &[&str] = &["part", "format", "shape"];

/// The keys of `shares` in its table form (schema 3).
pub(super) const SHARES_KEYS: &[&str] = &["state", "layer"];

/// The keys a reader (`shares`) does not have: it keeps no unit of its own.
const NOT_WITH_SHARES: &[&str] = &["format", "shape", "window", "chunk", "of", "layouts"];

/// Walks the `block` table: every block, in the order it first appears.
pub(super) fn walk(w: &mut Walk<'_>, value: &Value<'_>) -> Vec<RawBlock> {
    let Some(table) = w.table("block", value) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(table.len().min(MAX_BLOCKS));
    for (i, (key, v)) in table.iter().enumerate() {
        if !w.at_most(i + 1, MAX_BLOCKS, key.span(), "blocks") {
            break;
        }
        let name: &str = key.get_ref();
        w.identifier(name, key.span(), "block name");
        let first = w.loc(first_offset(key.span(), v)..first_offset(key.span(), v));
        let states = match w.table(&format!("block.{name}"), v) {
            Some(t) => walk_block(w, name, t),
            None => Vec::new(),
        };
        out.push(RawBlock {
            name: w.text(name, key.span()),
            first,
            states,
        });
    }
    out.sort_by_key(|b| b.first.span.start);
    out
}

/// One block's table: its keys, states and nodes.
fn walk_block(w: &mut Walk<'_>, block: &str, table: &Table<'_>) -> Vec<RawState> {
    w.check_keys(table, BLOCK_KEYS, &format!("block `{block}`"));
    let mut states = Vec::new();
    if let Some((_, v)) = field(table, "state")
        && let Some(items) = w.array("state", v)
    {
        for (i, item) in items.iter().enumerate() {
            let what = format!("states in block `{block}`");
            if !w.at_most(i + 1, MAX_STATES_PER_BLOCK, item.span(), &what) {
                break;
            }
            let ::toml::de::DeValue::Table(t) = item.get_ref() else {
                w.wrong_type(&format!("each state of block `{block}`"), "a table", item);
                continue;
            };
            states.push(walk_state(w, block, item.span(), t));
        }
        unique_ids(w, block, &states);
        copies(w, block, &states);
    }
    if let Some((_, v)) = field(table, "node") {
        nodes::walk(w, block, v, &states);
    }
    states
}

/// The value of a required key, or an error at the table's header.
fn required<'t, 'i>(
    w: &mut Walk<'_>,
    table: &'t Table<'i>,
    key: &str,
    header: &Loc,
    what: &str,
) -> Option<&'t Value<'i>> {
    let found = field(table, key).map(|(_, v)| v);
    if found.is_none() {
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("missing `{key}` in {what}"))
                .label(format!("this table has no `{key}`")),
        );
    }
    found
}

/// One state table.
fn walk_state(
    w: &mut Walk<'_>,
    block: &str,
    span: std::ops::Range<usize>,
    t: &Table<'_>,
) -> RawState {
    let what = format!("a state of block `{block}`");
    w.check_keys(t, STATE_KEYS, &what);
    let header = w.loc(span);
    let id = required(w, t, "id", &header, &what).and_then(|v| w.string_text("id", v));
    if let Some(id) = &id {
        // An invalid id is reported and kept, so nodes naming it do not also fail.
        w.identifier(&id.text, id.loc.span.clone(), "state id");
    }
    let kind = required(w, t, "kind", &header, &what).and_then(|v| kind(w, v));
    let lifetime = lifetime(w, t, kind);
    let has_shares_key = field(t, "shares").is_some();
    let shares = shares(w, t, kind);
    let (layouts, layouts_key) = if has_shares_key {
        (Vec::new(), None)
    } else {
        layouts(w, t)
    };
    let format = if has_shares_key {
        not_with_shares(w, t, shares.as_ref());
        None
    } else {
        required(w, t, "format", &header, &what).and_then(|v| format(w, v, &layouts))
    };
    let in_layout = matches!(format, Some(StateFormat::Layout(_)));
    unused_layouts(w, format.as_ref(), layouts_key.as_ref());
    let (shape, has_shape_key) = expression(w, t, "shape");
    if in_layout && let Some((key, _)) = field(t, "shape") {
        w.report(
            key,
            Diagnostic::error("a state stored in a layout has no `shape`")
                .label("its unit is its layout's parts")
                .help(
                    "remove `shape`, or store the state as a `{key}` that may hold a dtype (of \
                     `shape`'s elements) or one of its layouts",
                ),
        );
    }
    let reach = reach(w, t, kind);
    let verify = verify(w, t, kind, &header, id.as_ref());
    let of = of(w, t, kind);
    if let (Some((key, _)), Some(_)) = (field(t, "shape"), field(t, "of")) {
        w.report(
            key,
            Diagnostic::error("`shape` and `of` cannot both be given")
                .label("a copy has no shape of its own")
                .help("a copy (`of`) has the shape of the state it copies"),
        );
    }
    // A format that names no dtype or key beside `layouts` was meant as a layout: its error
    // says so, and a missing shape would only repeat it.
    let meant_a_layout = in_layout || (format.is_none() && layouts_key.is_some());
    if !has_shape_key && field(t, "of").is_none() && !has_shares_key && !meant_a_layout {
        let name = id.as_ref().map_or("this state", |t| t.text.as_str());
        w.report(
            header.span.clone(),
            Diagnostic::error(format!("state `{name}` of block `{block}` has no `shape`"))
                .label("no `shape`")
                .help(
                    "add `shape = \"...\"`; a `prefix_snapshot` or `ring_snapshot` may instead \
                     copy a sibling state with `of = \"<state>\"`, and a `paged_kv` side read an \
                     earlier layer's KV with `shares = \"<block>.<state>\"` (schema 3)",
                ),
        );
    }
    RawState {
        header,
        id,
        kind,
        lifetime,
        format,
        shape,
        has_shape_key,
        verify,
        of,
        reach,
        shares,
        has_shares_key,
        layouts,
        layouts_key,
    }
}

/// `layouts` (schema 3): the state's named units made of parts,
/// `{ <name> = [{ part, format, shape }, ...], ... }`. Returns every layout whose name is
/// valid (its parts those that are), and the key.
fn layouts(w: &mut Walk<'_>, t: &Table<'_>) -> (Vec<RawUnitLayout>, Option<Loc>) {
    let Some((key, v)) = field(t, "layouts") else {
        return (Vec::new(), None);
    };
    let key = w.loc(key);
    let Some(table) = w.table("layouts", v) else {
        return (Vec::new(), Some(key));
    };
    if table.is_empty() {
        w.report(
            v.span(),
            Diagnostic::error("`layouts` declares no layout")
                .label("empty")
                .help("name each layout and list its parts: `layouts.fp8_ds_mla = [{ part = \"nope\", format = \"fp8\", shape = \"512\" }]`"),
        );
    }
    let mut out: Vec<RawUnitLayout> = Vec::new();
    for (i, (name, value)) in table.iter().enumerate() {
        if !w.at_most(
            i + 1,
            MAX_LAYOUTS_PER_STATE,
            name.span(),
            "layouts of one state",
        ) {
            break;
        }
        let text: &str = name.get_ref();
        if !w.identifier(text, name.span(), "layout name") {
            continue;
        }
        if StateDtype::parse(text).is_some() {
            w.report(
                name.span(),
                Diagnostic::error(format!("layout `{text}` has a dtype's name"))
                    .label("a dtype")
                    .help(format!(
                        "a format key holding `{text}` means the dtype: name the layout otherwise"
                    )),
            );
            continue;
        }
        let variant = camel_case(text);
        if FORMAT_ITEMS.contains(&variant.as_str()) {
            w.report(
                name.span(),
                Diagnostic::error(format!(
                    "layout `{text}` becomes the variant `{variant}`, which the generated code takes"
                ))
                .label("taken by the generated code")
                .help(format!(
                    "a format key's generated enum defines {} beside a variant per layout: \
                     rename the layout",
                    listed(&FORMAT_ITEMS)
                )),
            );
            continue;
        }
        if let Some(first) = out.iter().find(|l| camel_case(&l.name.text) == variant) {
            let place = w.sink.place(&first.name.loc);
            w.report(
                name.span(),
                Diagnostic::error(format!(
                    "layouts `{text}` and `{}` both become the variant `{variant}`",
                    first.name.text
                ))
                .label("same variant name")
                .note(format!("`{}` is at {place}", first.name.text))
                .help("rename one of them"),
            );
            continue;
        }
        let parts = parts(w, text, value);
        out.push(RawUnitLayout {
            name: w.text(text, name.span()),
            parts,
        });
    }
    (out, Some(key))
}

/// The parts of layout `layout`: an array of `{ part, format, shape }`, at least one, part
/// names unique.
fn parts(w: &mut Walk<'_>, layout: &str, value: &Value<'_>) -> Vec<RawPart> {
    let Some(items) = w.array(&format!("layouts.{layout}"), value) else {
        return Vec::new();
    };
    if items.is_empty() {
        w.report(
            value.span(),
            Diagnostic::error(format!("layout `{layout}` has no parts"))
                .label("empty")
                .help("list its parts in unit order: `[{ part = \"values\", format = \"fp8\", shape = \"head_dim\" }, ...]`"),
        );
    }
    let what = format!("a part of layout `{layout}`");
    let mut out: Vec<RawPart> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if !w.at_most(
            i + 1,
            MAX_PARTS_PER_LAYOUT,
            item.span(),
            "parts of one layout",
        ) {
            break;
        }
        let ::toml::de::DeValue::Table(t) = item.get_ref() else {
            w.wrong_type(&format!("each part of layout `{layout}`"), "a table", item);
            continue;
        };
        w.check_keys(t, PART_KEYS, &what);
        let header = w.loc(item.span());
        let name = required(w, t, "part", &header, &what).and_then(|v| w.string_text("part", v));
        let name = name.filter(|n| w.identifier(&n.text, n.loc.span.clone(), "part name"));
        if let Some(name) = &name
            && let Some(first) = out
                .iter()
                .filter_map(|p| p.name.as_ref())
                .find(|f| f.text == name.text)
        {
            let message = format!("duplicate part `{}` in layout `{layout}`", name.text);
            w.duplicate(name.loc.span.clone(), &first.loc, message);
        }
        let dtype = required(w, t, "format", &header, &what).and_then(|v| part_dtype(w, v));
        if field(t, "shape").is_none() {
            w.report(
                header.span.clone(),
                Diagnostic::error(format!("missing `shape` in {what}"))
                    .label("this part has no `shape`")
                    .help("give its elements per unit: `shape = \"kv_lora_rank/128\"`"),
            );
        }
        let (shape, _) = expression(w, t, "shape");
        out.push(RawPart { name, dtype, shape });
    }
    out
}

/// A part's `format`: a dtype (a part's type is fixed; a key chooses between layouts).
fn part_dtype(w: &mut Walk<'_>, v: &Value<'_>) -> Option<StateDtype> {
    let s = w.string("format", v)?;
    if let Some(dtype) = StateDtype::parse(s) {
        return Some(dtype);
    }
    let mut diagnostic = Diagnostic::error(format!("a part's format is a dtype, not `{s}`"))
        .label("not a dtype")
        .expected_one_of("dtypes", s, StateDtype::spellings());
    if s.starts_with('{') {
        diagnostic = diagnostic.help(
            "a part's dtype is fixed: a `{key}` on the state chooses between its layouts instead",
        );
    }
    w.report(v.span(), diagnostic);
    None
}

/// `layouts` beside a `format` that can name none of them (a dtype) is refused at the key.
fn unused_layouts(w: &mut Walk<'_>, format: Option<&StateFormat>, key: Option<&Loc>) {
    if let (Some(StateFormat::Fixed(dtype)), Some(key)) = (format, key) {
        w.sink.report(
            key,
            Diagnostic::error(format!(
                "`layouts` is never used: `format` is the dtype `{}`",
                dtype.name()
            ))
            .label("no format names these layouts")
            .help(
                "store the state in one with `format = \"<layout>\"`, or let a key choose: \
                 `format = \"{kv_cache_dtype}\"` may then hold a dtype or any of them",
            ),
        );
    }
}

/// `shares` (schema 3): the state of an earlier layer whose KV this `paged_kv` side reads
/// instead of keeping its own, `"<block>.<state>"` (the last earlier layer holding `<block>`)
/// or `{ state = "<block>.<state>", layer = "<expression>" }` (the layer the dims give).
fn shares(w: &mut Walk<'_>, t: &Table<'_>, kind: Option<StateKind>) -> Option<RawShares> {
    let (key, v) = field(t, "shares")?;
    if let Some(kind) = kind
        && kind != StateKind::PagedKv
    {
        w.report(
            key,
            Diagnostic::error("`shares` is only for `paged_kv` states")
                .label(format!("a `{}` is not a KV side", kind.name()))
                .help(
                    "a `paged_kv` side may read an earlier layer's KV instead of keeping its own",
                ),
        );
        return None;
    }
    let key = w.loc(key);
    let (owner, layer) = match v.get_ref() {
        ::toml::de::DeValue::String(_) => (v, None),
        ::toml::de::DeValue::Table(table) => {
            w.check_keys(table, SHARES_KEYS, "`shares`");
            let Some((_, owner)) = field(table, "state") else {
                w.report(
                    v.span(),
                    Diagnostic::error("missing `state` in `shares`")
                        .label("this table has no `state`")
                        .help(
                            "name the state an earlier layer keeps: `shares = { state = \
                             \"<block>.<state>\", layer = \"<expression>\" }`",
                        ),
                );
                return None;
            };
            let (layer, has_layer) = expression(w, table, "layer");
            if has_layer && layer.is_none() {
                return None;
            }
            (owner, layer)
        }
        _ => {
            w.wrong_type(
                "shares",
                "a string `\"<block>.<state>\"` or a table `{ state, layer }`",
                v,
            );
            return None;
        }
    };
    if let Some(layer) = &layer
        && layer.shape.axes.len() > 1
    {
        w.sink.report(
            &layer.at.loc,
            Diagnostic::error("a `layer` has more than one axis")
                .label("` x ` joins axes")
                .help("a layer is one index: terms joined by `+` or `-`, factors by `*`"),
        );
        return None;
    }
    let text = w.string("state", owner)?;
    let at = w.str_at(owner.span(), text);
    let Some((block, state)) = text
        .split_once('.')
        .filter(|(b, s)| is_snake_identifier(b) && is_snake_identifier(s))
    else {
        w.sink.report(
            &at.loc,
            Diagnostic::error(format!("`shares` names `{text}`, not a `<block>.<state>`"))
                .label("not `<block>.<state>`")
                .help(
                    "name the state an earlier layer keeps by its block and its id: \
                     `shares = \"attn.k\"`",
                ),
        );
        return None;
    };
    Some(RawShares {
        key,
        block: block.to_owned(),
        state: state.to_owned(),
        owner: at,
        layer,
    })
}

/// A reader (`shares`) writes no `format`, `shape`, `window`, `chunk` or `of`: it keeps no unit
/// of its own. Each one written is reported at its key.
fn not_with_shares(w: &mut Walk<'_>, t: &Table<'_>, shares: Option<&RawShares>) {
    let owner = shares.map_or_else(
        || "the state it shares".to_owned(),
        |s| format!("`{}.{}`", s.block, s.state),
    );
    for name in NOT_WITH_SHARES {
        if let Some((key, _)) = field(t, name) {
            w.report(
                key,
                Diagnostic::error(format!("a state that `shares` has no `{name}` of its own"))
                    .label("it reads another layer's KV")
                    .help(format!(
                        "remove `{name}`: the KV it reads is {owner}'s, with that state's \
                         format, shape and reach"
                    )),
            );
        }
    }
}

/// `kind`: one of the state kinds.
fn kind(w: &mut Walk<'_>, v: &Value<'_>) -> Option<StateKind> {
    let s = w.string("kind", v)?;
    let kind = StateKind::parse(s);
    if kind.is_none() {
        w.report(
            v.span(),
            Diagnostic::error(format!("unknown state kind `{s}`"))
                .label("not a state kind")
                .expected_one_of("state kinds", s, StateKind::spellings()),
        );
    }
    kind
}

/// `lifetime`: optional, but when given it must be the kind's one lifetime. Returns the kind's
/// lifetime when it is known and not contradicted.
fn lifetime(w: &mut Walk<'_>, t: &Table<'_>, kind: Option<StateKind>) -> Option<Lifetime> {
    let own = kind.map(Lifetime::of_kind);
    let Some((_, v)) = field(t, "lifetime") else {
        return own;
    };
    let s = w.string("lifetime", v)?;
    let Some(given) = Lifetime::parse(s) else {
        w.report(
            v.span(),
            Diagnostic::error(format!("unknown lifetime `{s}`"))
                .label("not a lifetime")
                .expected_one_of("lifetimes", s, Lifetime::spellings()),
        );
        return None;
    };
    let (kind, own) = (kind?, own?);
    if given == own {
        return Some(own);
    }
    w.report(
        v.span(),
        Diagnostic::error(format!(
            "lifetime `{}` is not allowed for kind `{}`",
            given.name(),
            kind.name()
        ))
        .label("not this kind's lifetime")
        .help(format!("a `{}` state lives `{}`", kind.name(), own.name())),
    );
    None
}

/// `format`: a dtype, `{key}`, or one of the state's `layouts` (schema 3).
fn format(w: &mut Walk<'_>, v: &Value<'_>, layouts: &[RawUnitLayout]) -> Option<StateFormat> {
    let s = w.string("format", v)?;
    let diagnostic = match StateFormat::parse(s) {
        Ok(format) => {
            if let Some(key) = format.key()
                && !w.identifier(key, v.span(), "format key")
            {
                return None;
            }
            return Some(format);
        }
        Err(FormatError::EmptyKey) => Diagnostic::error("empty format key `{}`")
            .label("no key")
            .help("name the key the engine chooses, e.g. `{kv_cache_dtype}`"),
        Err(FormatError::BadKey(key)) => {
            Diagnostic::error(format!("format key `{key}` is not a valid key"))
                .label("not lower snake case")
                .help("a format key becomes a Rust field: use `[a-z][a-z0-9_]*`")
        }
        Err(FormatError::UnknownDtype(found)) => {
            if layouts.iter().any(|l| l.name.text == found) {
                return Some(StateFormat::Layout(found));
            }
            let mut valid: Vec<&str> = StateDtype::spellings().to_vec();
            valid.extend(layouts.iter().map(|l| l.name.text.as_str()));
            Diagnostic::error(format!("unknown format `{found}`"))
                .label(if layouts.is_empty() {
                    "not a dtype"
                } else {
                    "not a dtype or a layout of this state"
                })
                .expected_one_of(
                    if layouts.is_empty() {
                        "dtypes"
                    } else {
                        "formats"
                    },
                    &found,
                    &valid,
                )
                .help("or `{key}` for a format the engine chooses, e.g. `{kv_cache_dtype}`")
        }
    };
    w.report(v.span(), diagnostic);
    None
}

/// An expression at `key` (a `shape`, a `window`, a `chunk`, a `layer`): parsed; a syntax error
/// points inside the string. A `layer` is an index, so it may be 0 ([`Shape::parse_index`]).
/// Returns the expression (when valid) and whether the key is written.
fn expression(w: &mut Walk<'_>, table: &Table<'_>, key: &str) -> (Option<ShapeValue>, bool) {
    let Some((_, value)) = field(table, key) else {
        return (None, false);
    };
    let Some(text) = w.string(key, value) else {
        return (None, true);
    };
    let at = w.str_at(value.span(), text);
    let parsed = if key == "layer" {
        Shape::parse_index(text)
    } else {
        Shape::parse(text)
    };
    match parsed {
        Ok(shape) => (Some(ShapeValue { shape, at }), true),
        Err(error) => {
            let mut diagnostic =
                Diagnostic::error(format!("invalid {key}: {}", error.message)).label("here");
            if let Some(help) = error.help {
                diagnostic = diagnostic.help(help);
            }
            w.sink
                .report(&at.inner(error.offset, error.len), diagnostic);
            (None, true)
        }
    }
}

/// `window` (schema 2) or `chunk` (schema 3): what a `paged_kv` side keeps of a sequence, its
/// sliding window or its attention chunk in tokens, one number; not both.
fn reach(w: &mut Walk<'_>, t: &Table<'_>, kind: Option<StateKind>) -> Option<Reach<ShapeValue>> {
    let window = tokens(w, t, kind, "window").map(Reach::Window);
    let chunk = tokens(w, t, kind, "chunk").map(Reach::Chunk);
    if let (Some(_), Some((key, _))) = (&window, field(t, "chunk")) {
        w.report(
            key,
            Diagnostic::error("a state has both `window` and `chunk`")
                .label("a second reach")
                .help(
                    "a KV side keeps the last `window` tokens (sliding window) or the tokens of \
                     its current `chunk` (chunked local attention): give one",
                ),
        );
        return None;
    }
    window.or(chunk)
}

/// One token count of a `paged_kv` side (`window` or `chunk`), one axis.
fn tokens(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    kind: Option<StateKind>,
    name: &str,
) -> Option<ShapeValue> {
    let (value, _) = expression(w, t, name);
    let value = value?;
    let (key, _) = field(t, name)?;
    if kind.is_some_and(|k| k != StateKind::PagedKv) {
        w.report(
            key,
            Diagnostic::error(format!("`{name}` is only for `paged_kv` states"))
                .label("not a KV side")
                .help(format!(
                    "a {} bounds the tokens a `paged_kv` side keeps per sequence",
                    if name == "window" {
                        "sliding window"
                    } else {
                        "attention chunk"
                    }
                )),
        );
        return None;
    }
    if value.shape.axes.len() > 1 {
        w.sink.report(
            &value.at.loc,
            Diagnostic::error(format!("a `{name}` has more than one axis"))
                .label("` x ` joins axes")
                .help(format!(
                    "a {name} is one number of tokens: terms joined by `+` or `-`, factors by `*`"
                )),
        );
        return None;
    }
    Some(value)
}

/// `verify`: required on recurrent states, refused on every other kind.
fn verify(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    kind: Option<StateKind>,
    header: &Loc,
    id: Option<&Text>,
) -> Option<VerifySteps> {
    let name = id.map_or("this state", |t| t.text.as_str());
    let Some((key, v)) = field(t, "verify") else {
        if kind == Some(StateKind::Recurrent) {
            w.report(
                header.span.clone(),
                Diagnostic::error(format!("recurrent state `{name}` has no `verify`"))
                    .label("no `verify`")
                    .help(
                        "add `verify = \"h_steps\"` or `verify = \"conv_steps\"`: the \
                         intermediates a verify keeps to roll it back",
                    ),
            );
        }
        return None;
    };
    if let Some(kind) = kind
        && kind != StateKind::Recurrent
    {
        w.report(
            key,
            Diagnostic::error("`verify` is only for recurrent states")
                .label("not for this kind")
                .note(format!("`{name}` is a `{}`", kind.name())),
        );
    }
    let s = w.string("verify", v)?;
    let steps = VerifySteps::parse(s);
    if steps.is_none() {
        w.report(
            v.span(),
            Diagnostic::error(format!("unknown verify steps `{s}`"))
                .label("not verify steps")
                .expected_one_of("verify steps", s, VerifySteps::spellings()),
        );
    }
    steps
}

/// `of`: only for the kinds that copy a state.
fn of(w: &mut Walk<'_>, t: &Table<'_>, kind: Option<StateKind>) -> Option<Text> {
    let (key, v) = field(t, "of")?;
    if let Some(kind) = kind
        && !kind.copies_a_state()
    {
        w.report(
            key,
            Diagnostic::error("`of` is only for `prefix_snapshot` and `ring_snapshot` states")
                .label(format!("a `{}` copies no state", kind.name())),
        );
    }
    w.string_text("of", v)
}

/// State ids are unique in a block.
fn unique_ids(w: &mut Walk<'_>, block: &str, states: &[RawState]) {
    for (i, state) in states.iter().enumerate() {
        let Some(id) = &state.id else {
            continue;
        };
        let earlier = states.get(..i).unwrap_or_default();
        if let Some(first) = earlier
            .iter()
            .filter_map(|s| s.id.as_ref())
            .find(|f| f.text == id.text)
        {
            let message = format!("duplicate state id `{}` in block `{block}`", id.text);
            w.duplicate(id.loc.span.clone(), &first.loc, message);
        }
    }
}

/// Each `of` names a sibling state that has a shape.
fn copies(w: &mut Walk<'_>, block: &str, states: &[RawState]) {
    for state in states {
        let Some(of) = &state.of else {
            continue;
        };
        let Some(target) = states.iter().find(|s| s.local() == Some(of.text.as_str())) else {
            let candidates: Vec<&str> = states
                .iter()
                .filter(|s| s.has_shape_key)
                .filter_map(RawState::local)
                .collect();
            w.report(
                of.loc.span.clone(),
                Diagnostic::error(format!(
                    "`of` names no state of block `{block}`: `{}`",
                    of.text
                ))
                .label("no such state")
                .expected_one_of("states to copy", &of.text, &candidates),
            );
            continue;
        };
        if target.layouts_key.is_some() {
            w.report(
                of.loc.span.clone(),
                Diagnostic::error(format!(
                    "`of` names `{}`, which declares `layouts`",
                    of.text
                ))
                .label("copies a state made of parts")
                .help("a copy keeps one dtype's elements: copy a state without `layouts`"),
            );
        } else if !target.has_shape_key {
            w.report(
                of.loc.span.clone(),
                Diagnostic::error(format!(
                    "`of` names `{}`, which has no `shape` of its own",
                    of.text
                ))
                .label("copies a state without a shape")
                .help("copy a state that declares its own `shape`"),
            );
        }
    }
}

/// Every state of one format key declares the same layout names (their parts may differ), so
/// that any value the key holds is a unit of each; reported at each state that differs from
/// the first of its key, in block order.
pub(super) fn same_layouts(sink: &mut Sink, blocks: &[&RawBlock]) {
    let mut first: Vec<(&str, String, Vec<&str>, &Loc)> = Vec::new();
    for block in blocks {
        for state in &block.states {
            let (Some(StateFormat::Keyed(key)), Some(local)) = (&state.format, state.local())
            else {
                continue;
            };
            let mut names: Vec<&str> = state.layouts.iter().map(|l| l.name.text.as_str()).collect();
            names.sort_unstable();
            let Some((_, owner, expected, at)) = first.iter().find(|(k, ..)| k == key) else {
                first.push((
                    key,
                    format!("{}.{local}", block.name.text),
                    names,
                    &state.header,
                ));
                continue;
            };
            if *expected == names {
                continue;
            }
            let list = |names: &[&str]| {
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            let place = sink.place(at);
            let loc = state.layouts_key.as_ref().unwrap_or(&state.header);
            sink.report(
                loc,
                Diagnostic::error(format!(
                    "the states of `{{{key}}}` declare different layouts: `{owner}` declares {}, \
                     `{}.{local}` {}",
                    list(expected),
                    block.name.text,
                    list(&names)
                ))
                .label("not the layouts of the key's first state")
                .note(format!("`{owner}` is at {place}"))
                .help(
                    "a key holds one value for all its states: declare the same layout names on \
                     each (their parts may differ), or give this state a key of its own",
                ),
            );
        }
    }
}

/// Every dim a shape of `block` reads is declared in `dims`.
pub(super) fn check_dims(sink: &mut Sink, block: &RawBlock, dims: &[String]) {
    let declared: Vec<&str> = dims.iter().map(String::as_str).collect();
    for shape in block.states.iter().flat_map(|state| {
        state
            .shape
            .iter()
            .chain(state.reach.as_ref().map(|reach| reach.as_ref().tokens()))
            .chain(state.shares.as_ref().and_then(|s| s.layer.as_ref()))
            .chain(
                state
                    .layouts
                    .iter()
                    .flat_map(|l| &l.parts)
                    .filter_map(|p| p.shape.as_ref()),
            )
    }) {
        for dim in shape.shape.dims() {
            if !declared.contains(&dim.name.as_str()) {
                sink.report(
                    &shape.at.inner(dim.offset, dim.name.len()),
                    Diagnostic::error(format!("unknown dim `{}`", dim.name))
                        .label("not a declared dim")
                        .expected_one_of("dims", &dim.name, &declared),
                );
            }
        }
    }
}
