//! `[block.<name>]` tables and their `[[block.<name>.state]]` declarations.
//!
//! This module owns the block keys, every rule of one state table (`id`, `kind`, `lifetime`,
//! `format`, `shape`, `verify`, `of`, `window`, `chunk`, `shares`, `packings`, and each packing's
//! parts: `part`, `format`, `shape`), the rules between the states of one block (unique ids,
//! `of` naming a sibling with a shape and no packings), and the check that every dim a shape, a
//! part, a reach or a reader's `layer` reads is declared ([`check_dims`], run once the
//! circuit's dims are known). Whether every state of a format key declares the same packings
//! is [`same_packings`]'s (it needs every file). Node tables are handed to [`super::nodes`]; whether a reader's
//! owner exists, and has a layer under every checkpoint, is [`super::sharing`]'s (it needs
//! every file).
//!
//! Three files, each only reading the ones after it: this one walks the block and state
//! tables and holds the rules between the states of one block and of the circuit
//! ([`check_dims`]); `packings` reads a state's `packings` and their parts, and checks that the
//! states of one format key declare the same packings ([`same_packings`]); `fields` reads each
//! other field of one state (`kind`, `lifetime`, `format`, `shape`, `verify`, `of`, `window`,
//! `chunk`, `shares`).
//!
//! Invariants:
//! - A `RawState` keeps every field that was valid, so the checks between states and the node
//!   rules still run when another field of the same state was refused.
//! - A shape error (syntax or unknown dim) points inside the shape string when the string maps
//!   one to one onto the file, and at the whole value otherwise
//!   ([`StrAt`](crate::load::text::walk::StrAt)).
//! - Blocks are listed in the order they first appear in the file (a block may be split over
//!   several headers), which is the order of [`crate::Circuit::blocks`].

mod fields;
mod packings;

use crate::load::nodes;
use crate::load::raw::{RawBlock, RawState};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::{MAX_BLOCKS, MAX_STATES_PER_BLOCK};
use crate::load::text::walk::{Sink, Table, Value, Walk, entries, field, first_offset};
use crate::model::StateFormat;

use fields::{
    expression, format, kind, lifetime, not_with_shares, of, reach, required, shares, verify,
};
use packings::{packings, unused_packings};

pub(super) use packings::same_packings;
// The key tables of `crate::schema` (the JSON Schema of the circuit file).
#[cfg(feature = "schema")]
pub(crate) use fields::SHARES_KEYS;
#[cfg(feature = "schema")]
pub(crate) use packings::PART_KEYS;

/// The keys of a block table.
pub(crate) const BLOCK_KEYS: &[&str] = &["stream_in", "stream_out", "outputs", "state", "node"];

/// The keys of a state table.
pub(crate) const STATE_KEYS: &[&str] = &[
    "id", "kind", "lifetime", "format", "shape", "verify", "of", "window", "chunk", "tokens",
    "shares", "packings",
];

/// The keys of a state table renamed since their schema, each refused at itself naming the new
/// one: `layouts` (schema 3) became `packings`, a unit made of parts, so that "layout" means the
/// layer layout alone.
const RENAMED_STATE_KEYS: &[(&str, &str)] = &[("layouts", "packings")];

/// Walks the `block` table: every block, in the order it first appears.
pub(super) fn walk(w: &mut Walk<'_>, value: &Value<'_>) -> Vec<RawBlock> {
    let Some(table) = w.table("block", value) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(table.len().min(MAX_BLOCKS));
    for (i, (key, v)) in entries(table).into_iter().enumerate() {
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

/// One state table.
fn walk_state(
    w: &mut Walk<'_>,
    block: &str,
    span: std::ops::Range<usize>,
    t: &Table<'_>,
) -> RawState {
    let what = format!("a state of block `{block}`");
    w.check_keys_renamed(t, STATE_KEYS, RENAMED_STATE_KEYS, &what);
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
    let (packings, packings_key) = if has_shares_key {
        (Vec::new(), None)
    } else {
        packings(w, t)
    };
    let format = if has_shares_key {
        not_with_shares(w, t, shares.as_ref());
        None
    } else {
        required(w, t, "format", &header, &what).and_then(|v| format(w, v, &packings))
    };
    let in_packing = matches!(format, Some(StateFormat::Packing(_)));
    unused_packings(w, format.as_ref(), packings_key.as_ref());
    let (shape, has_shape_key) = expression(w, t, "shape");
    if in_packing && let Some((key, _)) = field(t, "shape") {
        w.report(
            key,
            Diagnostic::error("a state stored in a packing has no `shape`")
                .label("its unit is its packing's parts")
                .help(
                    "remove `shape`, or store the state as a `{key}` that may hold a dtype (of \
                     `shape`'s elements) or one of its packings",
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
    // A format that names no dtype or key beside `packings` was meant as a packing: its error
    // says so, and a missing shape would only repeat it.
    let meant_a_packing = in_packing || (format.is_none() && packings_key.is_some());
    if !has_shape_key && field(t, "of").is_none() && !has_shares_key && !meant_a_packing {
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
        packings,
        packings_key,
    }
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
        if target.packings_key.is_some() {
            w.report(
                of.loc.span.clone(),
                Diagnostic::error(format!(
                    "`of` names `{}`, which declares `packings`",
                    of.text
                ))
                .label("copies a state made of parts")
                .help("a copy keeps one dtype's elements: copy a state without `packings`"),
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
                    .packings
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
