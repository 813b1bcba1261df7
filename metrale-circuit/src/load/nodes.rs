//! `[[block.<name>.node]]` tables: which node touches which state of its block, and how.
//!
//! This module owns the node keys (`id`, `op`, `in`, `out`, `binding`, `role` are accepted and
//! not interpreted; `state = { <local id> = "<access>" }` is read) and the access rules of a
//! block that has nodes:
//! - a recurrent state is updated by exactly one node and neither read nor written; it is
//!   snapshotted by at most one node, and only if it keeps verify intermediates;
//! - a `paged_kv` side is written by exactly one node, read by at least one, and neither
//!   updated nor snapshotted; a side that reads another layer's KV (`shares`) is only read, by
//!   at least one node;
//! - a cache kind is touched by no node.
//!
//! Invariants:
//! - A block without nodes (no `node` key, or an empty list) declares state only: no access
//!   rule applies to it.
//! - A rule is checked only for a state whose `id` and `kind` are valid (an invalid one was
//!   already reported); a touch naming an unknown state or with an unknown access is reported
//!   and then ignored by the rules.
//! - "Too many" is reported once, at the second touch, with a note naming the first node;
//!   "never" is reported at the state's `id` value.

use toml::de::DeValue;

use super::raw::RawState;
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::MAX_NODES_PER_BLOCK;
use crate::load::text::walk::{Loc, Text, Value, Walk, entries, field};
use crate::model::{StateAccess, StateKind};

/// The keys of a node table.
pub(crate) const NODE_KEYS: &[&str] = &["id", "op", "in", "out", "binding", "role", "state"];

/// One node touching one state.
#[derive(Debug)]
struct Touch {
    /// The state's index in its block.
    state: usize,
    /// How; `None` when the access was refused (already reported).
    access: Option<StateAccess>,
    /// The node, for messages: "node `recurrence`" or "node #3".
    node: String,
    /// The access string's value.
    loc: Loc,
}

impl Touch {
    /// A touch of state `state` whose access was refused.
    fn refused(state: usize, node: &str, loc: Loc) -> Self {
        Self {
            state,
            access: None,
            node: node.to_owned(),
            loc,
        }
    }
}

/// Walks the `node` list of `block` and checks the access rules against its `states`.
pub(super) fn walk(w: &mut Walk<'_>, block: &str, value: &Value<'_>, states: &[RawState]) {
    let Some(items) = w.array("node", value) else {
        return;
    };
    let mut touches = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let what = format!("nodes in block `{block}`");
        if !w.at_most(n + 1, MAX_NODES_PER_BLOCK, item.span(), &what) {
            break;
        }
        let DeValue::Table(t) = item.get_ref() else {
            w.wrong_type(&format!("each node of block `{block}`"), "a table", item);
            continue;
        };
        w.check_keys(t, NODE_KEYS, &format!("a node of block `{block}`"));
        let node = match field(t, "id").map(|(_, v)| v.get_ref()) {
            Some(DeValue::String(id)) => format!("node `{id}`"),
            _ => format!("node #{}", n.saturating_add(1)),
        };
        if let Some((_, v)) = field(t, "state") {
            touches_of(w, block, &node, v, states, &mut touches);
        }
    }
    if items.is_empty() {
        return;
    }
    for (index, state) in states.iter().enumerate() {
        let (Some(kind), Some(id)) = (state.kind, &state.id) else {
            continue;
        };
        let mine: Vec<&Touch> = touches.iter().filter(|t| t.state == index).collect();
        // A touch already refused (its access misspelled) would only add "never updated"
        // and the like to its own error: the state's rules wait for a valid access.
        if mine.iter().any(|t| t.access.is_none()) {
            continue;
        }
        match kind {
            StateKind::Recurrent => recurrent(w, state, id, &mine),
            StateKind::PagedKv if state.has_shares_key => reader(w, id, &mine),
            StateKind::PagedKv => paged_kv(w, id, &mine),
            _ => {
                for touch in &mine {
                    w.sink.report(
                        &touch.loc,
                        Diagnostic::error(format!(
                            "`{}` is a `{}`, a cache no node touches",
                            id.text,
                            kind.name()
                        ))
                        .label(format!("touched by {}", touch.node))
                        .help("caches are filled and read by the engine, not by layer nodes"),
                    );
                }
            }
        }
    }
}

/// The `state = { ... }` table of one node: each entry names a state of the block and an
/// access.
fn touches_of(
    w: &mut Walk<'_>,
    block: &str,
    node: &str,
    value: &Value<'_>,
    states: &[RawState],
    out: &mut Vec<Touch>,
) {
    let Some(table) = w.table("state", value) else {
        return;
    };
    for (key, v) in entries(table) {
        let local: &str = key.get_ref();
        let Some(index) = states.iter().position(|s| s.local() == Some(local)) else {
            let ids: Vec<&str> = states.iter().filter_map(RawState::local).collect();
            w.report(
                key.span(),
                Diagnostic::error(format!(
                    "{node} names no state of block `{block}`: `{local}`"
                ))
                .label("no such state")
                .expected_one_of(
                    &format!("states of block `{block}`"),
                    local,
                    &ids,
                ),
            );
            continue;
        };
        let Some(s) = w.string(local, v) else {
            out.push(Touch::refused(index, node, w.loc(v.span())));
            continue;
        };
        let Some(access) = StateAccess::parse(s) else {
            out.push(Touch::refused(index, node, w.loc(v.span())));
            w.report(
                v.span(),
                Diagnostic::error(format!("unknown state access `{s}`"))
                    .label("not an access")
                    .expected_one_of("accesses", s, StateAccess::spellings()),
            );
            continue;
        };
        out.push(Touch {
            state: index,
            access: Some(access),
            node: node.to_owned(),
            loc: w.loc(v.span()),
        });
    }
}

/// The touches of `touches` with access `access`.
fn with<'t>(touches: &[&'t Touch], access: StateAccess) -> Vec<&'t Touch> {
    touches
        .iter()
        .copied()
        .filter(|t| t.access == Some(access))
        .collect()
}

/// A recurrent state: one update, no read or write, at most one snapshot (and only with
/// verify intermediates).
fn recurrent(w: &mut Walk<'_>, state: &RawState, id: &Text, touches: &[&Touch]) {
    let subject = format!("recurrent state `{}`", id.text);
    let update = format!(
        "exactly one node must have `state = {{ {} = \"update\" }}`",
        id.text
    );
    exactly_one(
        w,
        &with(touches, StateAccess::Update),
        &subject,
        "updated",
        id,
        &update,
    );
    at_most_one(
        w,
        &with(touches, StateAccess::Snapshot),
        &subject,
        "snapshotted",
    );
    for access in [StateAccess::Read, StateAccess::Write] {
        for touch in with(touches, access) {
            w.sink.report(
                &touch.loc,
                Diagnostic::error(format!("{subject} cannot be {} by a node", past(access)))
                    .label(format!("{} by {}", past(access), touch.node))
                    .help(
                        "a recurrent state is updated in place by exactly one node: use `update`",
                    ),
            );
        }
    }
    if state.verify.is_none() {
        for touch in with(touches, StateAccess::Snapshot) {
            w.sink.report(
                &touch.loc,
                Diagnostic::error(format!(
                    "{subject} is snapshotted but keeps no verify intermediates"
                ))
                .label(format!("snapshotted by {}", touch.node))
                .help("give the state `verify = \"h_steps\"` or `verify = \"conv_steps\"`"),
            );
        }
    }
}

/// A KV side: one writer, at least one reader, no update or snapshot.
fn paged_kv(w: &mut Walk<'_>, id: &Text, touches: &[&Touch]) {
    let subject = format!("KV side `{}`", id.text);
    let write = format!(
        "exactly one node must have `state = {{ {} = \"write\" }}`",
        id.text
    );
    exactly_one(
        w,
        &with(touches, StateAccess::Write),
        &subject,
        "written",
        id,
        &write,
    );
    if with(touches, StateAccess::Read).is_empty() {
        w.sink.report(
            &id.loc,
            Diagnostic::error(format!("{subject} is never read"))
                .label("declared here")
                .help(format!(
                    "at least one node must have `state = {{ {} = \"read\" }}`",
                    id.text
                )),
        );
    }
    for access in [StateAccess::Update, StateAccess::Snapshot] {
        for touch in with(touches, access) {
            w.sink.report(
                &touch.loc,
                Diagnostic::error(format!("{subject} cannot be {}", past(access)))
                    .label(format!("{} by {}", past(access), touch.node))
                    .help("a KV side is written by one node and read by others"),
            );
        }
    }
}

/// A KV side that reads another layer's KV (`shares`): read by at least one node, and never
/// written, updated or snapshotted (its owner's layer writes it).
fn reader(w: &mut Walk<'_>, id: &Text, touches: &[&Touch]) {
    let subject = format!("KV side `{}`", id.text);
    if with(touches, StateAccess::Read).is_empty() {
        w.sink.report(
            &id.loc,
            Diagnostic::error(format!("{subject} is never read"))
                .label("declared here")
                .help(format!(
                    "at least one node must have `state = {{ {} = \"read\" }}`",
                    id.text
                )),
        );
    }
    for access in [
        StateAccess::Write,
        StateAccess::Update,
        StateAccess::Snapshot,
    ] {
        for touch in with(touches, access) {
            w.sink.report(
                &touch.loc,
                Diagnostic::error(format!(
                    "{subject} reads another layer's KV: it cannot be {}",
                    past(access)
                ))
                .label(format!("{} by {}", past(access), touch.node))
                .help("a side that `shares` is only read: the layer that owns the KV writes it"),
            );
        }
    }
}

/// Exactly one touch: none is reported at the state's id, a second at the second touch.
fn exactly_one(
    w: &mut Walk<'_>,
    touches: &[&Touch],
    subject: &str,
    verb: &str,
    id: &Text,
    help: &str,
) {
    if touches.is_empty() {
        w.sink.report(
            &id.loc,
            Diagnostic::error(format!("{subject} is never {verb}"))
                .label("declared here")
                .help(help.to_owned()),
        );
    } else {
        at_most_one(w, touches, subject, verb);
    }
}

/// At most one touch: a second is reported at the second touch, naming the first node.
fn at_most_one(w: &mut Walk<'_>, touches: &[&Touch], subject: &str, verb: &str) {
    if let [first, second, ..] = touches {
        let place = w.sink.place(&first.loc);
        w.sink.report(
            &second.loc,
            Diagnostic::error(format!("{subject} is {verb} by {} nodes", touches.len()))
                .label(format!("{verb} again by {}", second.node))
                .note(format!("first {verb} by {} at {place}", first.node)),
        );
    }
}

/// "read", "written", "updated", "snapshotted".
fn past(access: StateAccess) -> &'static str {
    match access {
        StateAccess::Read => "read",
        StateAccess::Write => "written",
        StateAccess::Update => "updated",
        StateAccess::Snapshot => "snapshotted",
    }
}
