//! A state's `packings` (schema 3): its named units made of parts, each part a name, a dtype and
//! a shape; and, once every file is read, the rule that every state of one format key
//! declares the same packing names ([`same_packings`]).
//!
//! Invariants:
//! - A packing's name is an identifier, not a dtype's name, and becomes a variant of the key's
//!   generated enum that neither the generated code nor another packing of the state takes.
//! - A packing has at least one part, at most `MAX_PARTS_PER_PACKING`; part names are unique in
//!   it; a state has at most `MAX_PACKINGS_PER_STATE` packings.
//! - `packings` beside a `format` that can name none of them (a dtype) is refused at the key.

use crate::load::names::reserved::FORMAT_ITEMS;
use crate::load::names::{camel_case, listed};
use crate::load::raw::{RawBlock, RawPart, RawUnitPacking};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::{MAX_PACKINGS_PER_STATE, MAX_PARTS_PER_PACKING};
use crate::load::text::walk::{Loc, Sink, Table, Value, Walk, entries, field};
use crate::model::{StateDtype, StateFormat};

use super::fields::{expression, required};

/// The keys of one part of a packing (schema 3).
pub(crate) const PART_KEYS: &[&str] = &["part", "format", "shape"];

/// `packings` (schema 3): the state's named units made of parts,
/// `{ <name> = [{ part, format, shape }, ...], ... }`. Returns every packing whose name is
/// valid (its parts those that are), and the key.
pub(super) fn packings(w: &mut Walk<'_>, t: &Table<'_>) -> (Vec<RawUnitPacking>, Option<Loc>) {
    // The old key (`layouts`, refused at itself) is read as the new, so its packings are
    // checked and the states naming them raise no error of their own.
    let Some((key, v)) = field(t, "packings").or_else(|| field(t, "layouts")) else {
        return (Vec::new(), None);
    };
    let key = w.loc(key);
    let Some(table) = w.table("packings", v) else {
        return (Vec::new(), Some(key));
    };
    if table.is_empty() {
        w.report(
            v.span(),
            Diagnostic::error("`packings` declares no packing")
                .label("empty")
                .help("name each packing and list its parts: `packings.fp8_ds_mla = [{ part = \"nope\", format = \"fp8\", shape = \"512\" }]`"),
        );
    }
    let mut out: Vec<RawUnitPacking> = Vec::new();
    for (i, (name, value)) in entries(table).into_iter().enumerate() {
        if !w.at_most(
            i + 1,
            MAX_PACKINGS_PER_STATE,
            name.span(),
            "packings of one state",
        ) {
            break;
        }
        let text: &str = name.get_ref();
        if !w.identifier(text, name.span(), "packing name") {
            continue;
        }
        if StateDtype::parse(text).is_some() {
            w.report(
                name.span(),
                Diagnostic::error(format!("packing `{text}` has a dtype's name"))
                    .label("a dtype")
                    .help(format!(
                        "a format key holding `{text}` means the dtype: name the packing otherwise"
                    )),
            );
            continue;
        }
        let variant = camel_case(text);
        if FORMAT_ITEMS.contains(&variant.as_str()) {
            w.report(
                name.span(),
                Diagnostic::error(format!(
                    "packing `{text}` becomes the variant `{variant}`, which the generated code takes"
                ))
                .label("taken by the generated code")
                .help(format!(
                    "a format key's generated enum defines {} beside a variant per packing: \
                     rename the packing",
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
                    "packings `{text}` and `{}` both become the variant `{variant}`",
                    first.name.text
                ))
                .label("same variant name")
                .note(format!("`{}` is at {place}", first.name.text))
                .help("rename one of them"),
            );
            continue;
        }
        let parts = parts(w, text, value);
        out.push(RawUnitPacking {
            name: w.text(text, name.span()),
            parts,
        });
    }
    (out, Some(key))
}

/// The parts of packing `packing`: an array of `{ part, format, shape }`, at least one, part
/// names unique.
pub(super) fn parts(w: &mut Walk<'_>, packing: &str, value: &Value<'_>) -> Vec<RawPart> {
    let Some(items) = w.array(&format!("packings.{packing}"), value) else {
        return Vec::new();
    };
    if items.is_empty() {
        w.report(
            value.span(),
            Diagnostic::error(format!("packing `{packing}` has no parts"))
                .label("empty")
                .help("list its parts in unit order: `[{ part = \"values\", format = \"fp8\", shape = \"head_dim\" }, ...]`"),
        );
    }
    let what = format!("a part of packing `{packing}`");
    let mut out: Vec<RawPart> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if !w.at_most(
            i + 1,
            MAX_PARTS_PER_PACKING,
            item.span(),
            "parts of one packing",
        ) {
            break;
        }
        let ::toml::de::DeValue::Table(t) = item.get_ref() else {
            w.wrong_type(
                &format!("each part of packing `{packing}`"),
                "a table",
                item,
            );
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
            let message = format!("duplicate part `{}` in packing `{packing}`", name.text);
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

/// A part's `format`: a dtype (a part's type is fixed; a key chooses between packings).
pub(super) fn part_dtype(w: &mut Walk<'_>, v: &Value<'_>) -> Option<StateDtype> {
    let s = w.string("format", v)?;
    if let Some(dtype) = StateDtype::parse(s) {
        return Some(dtype);
    }
    let mut diagnostic = Diagnostic::error(format!("a part's format is a dtype, not `{s}`"))
        .label("not a dtype")
        .expected_one_of("dtypes", s, StateDtype::spellings());
    if s.starts_with('{') {
        diagnostic = diagnostic.help(
            "a part's dtype is fixed: a `{key}` on the state chooses between its packings instead",
        );
    }
    w.report(v.span(), diagnostic);
    None
}

/// `packings` beside a `format` that can name none of them (a dtype) is refused at the key.
pub(super) fn unused_packings(w: &mut Walk<'_>, format: Option<&StateFormat>, key: Option<&Loc>) {
    if let (Some(StateFormat::Fixed(dtype)), Some(key)) = (format, key) {
        w.sink.report(
            key,
            Diagnostic::error(format!(
                "`packings` is never used: `format` is the dtype `{}`",
                dtype.name()
            ))
            .label("no format names these packings")
            .help(
                "store the state in one with `format = \"<packing>\"`, or let a key choose: \
                 `format = \"{kv_cache_dtype}\"` may then hold a dtype or any of them",
            ),
        );
    }
}

/// Every state of one format key declares the same packing names (their parts may differ), so
/// that any value the key holds is a unit of each; reported at each state that differs from
/// the first of its key, in block order.
pub(crate) fn same_packings(sink: &mut Sink, blocks: &[&RawBlock]) {
    let mut first: Vec<(&str, String, Vec<&str>, &Loc)> = Vec::new();
    for block in blocks {
        for state in &block.states {
            let (Some(StateFormat::Keyed(key)), Some(local)) = (&state.format, state.local())
            else {
                continue;
            };
            let mut names: Vec<&str> = state
                .packings
                .iter()
                .map(|l| l.name.text.as_str())
                .collect();
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
            let loc = state.packings_key.as_ref().unwrap_or(&state.header);
            sink.report(
                loc,
                Diagnostic::error(format!(
                    "the states of `{{{key}}}` declare different packings: `{owner}` declares {}, \
                     `{}.{local}` {}",
                    list(expected),
                    block.name.text,
                    list(&names)
                ))
                .label("not the packings of the key's first state")
                .note(format!("`{owner}` is at {place}"))
                .help(
                    "a key holds one value for all its states: declare the same packing names on \
                     each (their parts may differ), or give this state a key of its own",
                ),
            );
        }
    }
}
