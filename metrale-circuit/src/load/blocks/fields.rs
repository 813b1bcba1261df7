//! One field of a `[[block.<name>.state]]` table at a time: `kind`, `lifetime`, `format` (a
//! dtype, a packing, or a `{key}`), an expression (`shape`, `window`, `chunk`, a reader's
//! `layer`), `verify`, `of`, and `shares` (schema 3: the KV of an earlier layer a reader reads),
//! with the keys a reader may not have; and the one "missing key" error of the block tables.
//!
//! Invariants:
//! - Each reader returns the field's value when it is valid and reports at the value (or, for a
//!   missing key, at the table's header) otherwise; no reader stops the walk of the state.
//! - A shape error points inside the shape string when the string maps one to one onto the
//!   file, and at the whole value otherwise.

use crate::load::circuit::shape::Shape;
use crate::load::raw::{RawShares, RawUnitPacking, ShapeValue};
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Loc, Table, Text, Value, Walk, field};
use crate::model::{
    FormatError, Lifetime, Reach, StateDtype, StateFormat, StateKind, VerifySteps,
    is_snake_identifier,
};

/// The keys of one part of a packing (schema 3).
/// The keys of `shares` in its table form (schema 3).
pub(crate) const SHARES_KEYS: &[&str] = &["state", "layer"];

/// The keys a reader (`shares`) does not have: it keeps no unit of its own.
const NOT_WITH_SHARES: &[&str] = &[
    "format", "shape", "window", "chunk", "tokens", "of", "packings",
];

/// The value of a required key, or an error at the table's header.
pub(super) fn required<'t, 'i>(
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

/// `shares` (schema 3): the state of an earlier layer whose KV this `paged_kv` side reads
/// instead of keeping its own, `"<block>.<state>"` (the last earlier layer holding `<block>`)
/// or `{ state = "<block>.<state>", layer = "<expression>" }` (the layer the dims give).
pub(super) fn shares(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    kind: Option<StateKind>,
) -> Option<RawShares> {
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
pub(super) fn not_with_shares(w: &mut Walk<'_>, t: &Table<'_>, shares: Option<&RawShares>) {
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
pub(super) fn kind(w: &mut Walk<'_>, v: &Value<'_>) -> Option<StateKind> {
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
pub(super) fn lifetime(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    kind: Option<StateKind>,
) -> Option<Lifetime> {
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

/// `format`: a dtype, `{key}`, or one of the state's `packings` (schema 3).
pub(super) fn format(
    w: &mut Walk<'_>,
    v: &Value<'_>,
    packings: &[RawUnitPacking],
) -> Option<StateFormat> {
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
            if packings.iter().any(|l| l.name.text == found) {
                return Some(StateFormat::Packing(found));
            }
            let mut valid: Vec<&str> = StateDtype::spellings().to_vec();
            valid.extend(packings.iter().map(|l| l.name.text.as_str()));
            Diagnostic::error(format!("unknown format `{found}`"))
                .label(if packings.is_empty() {
                    "not a dtype"
                } else {
                    "not a dtype or a packing of this state"
                })
                .expected_one_of(
                    if packings.is_empty() {
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
pub(super) fn expression(
    w: &mut Walk<'_>,
    table: &Table<'_>,
    key: &str,
) -> (Option<ShapeValue>, bool) {
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

/// `window` (schema 2), `chunk` (schema 3) or `tokens` (schema 4): what a `paged_kv` side keeps
/// of a sequence, its sliding window, its attention chunk or a fixed count in tokens, one
/// number; one of the three at most.
pub(super) fn reach(
    w: &mut Walk<'_>,
    t: &Table<'_>,
    kind: Option<StateKind>,
) -> Option<Reach<ShapeValue>> {
    let window = tokens(w, t, kind, "window").map(Reach::Window);
    let chunk = tokens(w, t, kind, "chunk").map(Reach::Chunk);
    let fixed = tokens(w, t, kind, "tokens").map(Reach::Fixed);
    // The first written is kept; a second is refused at its key.
    let mut given: Vec<(&str, std::ops::Range<usize>)> = ["window", "chunk", "tokens"]
        .into_iter()
        .filter_map(|k| field(t, k).map(|(span, _)| (k, span)))
        .collect();
    given.sort_by_key(|(_, span)| span.start);
    if let [(first, _), (second, key), ..] = given.as_slice() {
        w.report(
            key.clone(),
            Diagnostic::error(format!("a state has both `{first}` and `{second}`"))
                .label("a second reach")
                .help(
                    "a KV side keeps the last `window` tokens (sliding window), the tokens of \
                     its current `chunk` (chunked local attention), or a fixed count of \
                     `tokens` a request holds (cross-attention over an encoder): give one",
                ),
        );
        return None;
    }
    window.or(chunk).or(fixed)
}

/// One token count of a `paged_kv` side (`window` or `chunk`), one axis.
pub(super) fn tokens(
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
                    "{} bounds the tokens a `paged_kv` side keeps per sequence",
                    match name {
                        "window" => "a sliding window",
                        "chunk" => "an attention chunk",
                        _ => "a fixed token count",
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
                    "{} is one number of tokens: terms joined by `+` or `-`, factors by `*`",
                    if name == "tokens" {
                        "a token count".to_owned()
                    } else {
                        format!("a {name}")
                    }
                )),
        );
        return None;
    }
    Some(value)
}

/// `verify`: required on recurrent states, refused on every other kind.
pub(super) fn verify(
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
pub(super) fn of(w: &mut Walk<'_>, t: &Table<'_>, kind: Option<StateKind>) -> Option<Text> {
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
