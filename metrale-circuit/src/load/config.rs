//! `[config]` (schema 2): where `metrale-codegen import` reads each checkpoint figure in a
//! Hugging Face `config.json`.
//!
//! This module owns the table's keys (`layers`, `layer_types`, `pattern`, `layer_indices`,
//! `layer_rules`, `interval`, `[config.dims]`) and every rule that can be checked without a
//! config: key paths well formed, one source of layer kinds at most and one fitting the layout,
//! mapped layer kinds that the layout has (and, in a pattern layout, a symbol for each), every
//! declared dim named once and nothing else, fallbacks that read only other declared dims. The
//! layer kinds by rule (`[config.layer_rules]`, schema 3) are walked and checked in `rules`.
//!
//! Invariants:
//! - Each error is located at the key or value at fault (a missing key at the table that lacks
//!   it); a [`ConfigMap`] is returned only when the table had no error.

pub(crate) mod rules;

use std::ops::Range;

use super::raw::{FULL, LINEAR, RawLayout};
use crate::load::circuit::shape::Shape;
use crate::load::circuit::{
    LayerRule,
    config_expr::ConfigExpr,
    config_map::{ConfigDim, ConfigMap, DimValue, Fallback, LayerKindsSource, LayerRules},
};
use crate::load::text::diag::{Diagnostic, did_you_mean};
use crate::load::text::walk::{Table, Text, Value, Walk, entries, field};

/// The keys of `[config]`.
pub(crate) const CONFIG_KEYS: &[&str] = &[
    "layers",
    "layer_types",
    "pattern",
    "layer_indices",
    "layer_rules",
    "interval",
    "dims",
];

/// The four sources of layer kinds, of which a `[config]` names at most one.
pub(crate) const KIND_SOURCES: [&str; 4] =
    ["layer_types", "pattern", "layer_indices", "layer_rules"];

/// The keys of `layer_types = { ... }`.
pub(crate) const LAYER_TYPES_KEYS: &[&str] = &["key", "map"];

/// The keys of `layer_indices = { ... }`.
pub(crate) const LAYER_INDICES_KEYS: &[&str] = &["base", "kinds"];

/// The keys of a `[config.dims]` entry written as a table, `{ key, or }`.
pub(crate) const DIM_SOURCE_KEYS: &[&str] = &["key", "or"];

/// The keys of a `[config.dims]` entry chosen by a condition (schema 4), `{ if, then, else,
/// or }`.
pub(crate) const DIM_CONDITION_KEYS: &[&str] = &["if", "then", "else", "or"];

/// A part of `[config]` that was refused (already reported).
struct Refused;

/// An optional part of `[config]`: absent (`Ok(None)`), given and valid, or refused.
type Part<T> = Result<Option<T>, Refused>;

/// What `[config]` may refer to in the rest of the circuit.
pub(crate) struct Context<'a> {
    /// `schema`, when valid.
    pub schema: Option<u64>,
    /// `[layout]`, when present.
    pub layout: Option<&'a RawLayout>,
    /// The declared dims, when `dims` is valid.
    pub dims: Option<&'a [Text]>,
    /// The derived dims' names.
    pub derived: &'a [&'a str],
}

impl Context<'_> {
    /// Whether `[config]` figures may be expressions over config keys (schema 4; an invalid
    /// `schema`, already reported, is read as the latest so nothing more is said of it).
    pub(crate) fn expressions(&self) -> bool {
        self.schema.is_none_or(|schema| schema >= 4)
    }
}

/// Walks `[config]`: the validated map, or `None` when it is absent or had an error (reported).
pub(crate) fn walk(w: &mut Walk<'_>, root: &Table<'_>, cx: &Context<'_>) -> Option<ConfigMap> {
    let (header, v) = field(root, "config")?;
    if cx.schema == Some(1) {
        w.report(
            header,
            Diagnostic::error("`[config]` needs `schema = 2`")
                .label("a schema-2 table")
                .help("write `schema = 2` at the top of the circuit"),
        );
        return None;
    }
    let table = w.table("config", v)?;
    let before = w.sink.error_count();
    w.check_keys(table, CONFIG_KEYS, "`[config]`");
    let layers = if let Some((_, v)) = field(table, "layers") {
        key_path(w, "layers", v)
    } else {
        w.report(
            v.span(),
            Diagnostic::error("missing `layers` in `[config]`")
                .label("this table has no layer count")
                .help("add `layers = \"num_hidden_layers\"`: the config key of the layer count"),
        );
        None
    };
    let kinds = layer_kinds(w, table, cx);
    let interval = interval(w, table, cx);
    let sourced = KIND_SOURCES.iter().any(|k| field(table, k).is_some());
    needs_kinds(w, v.span(), cx, sourced);
    let dims = if let Some((_, d)) = field(table, "dims") {
        dims(w, d, cx)
    } else {
        w.report(
            v.span(),
            Diagnostic::error("missing `[config.dims]`")
                .label("this table says where no dim comes from")
                .help("add `[config.dims]` with the config key of every declared dim"),
        );
        None
    };
    if w.sink.error_count() != before {
        return None;
    }
    Some(ConfigMap {
        layers: layers?,
        layer_kinds: kinds.ok()?,
        interval: interval.ok()?,
        dims: dims?,
    })
}

/// A dotted key path: a non-empty string without an empty segment.
fn key_path(w: &mut Walk<'_>, key: &str, value: &Value<'_>) -> Option<String> {
    let text = w.string(key, value)?;
    if text.is_empty() || text.split('.').any(str::is_empty) {
        w.report(
            value.span(),
            Diagnostic::error(format!("`{key}` is not a config key path: `{text}`"))
                .label("an empty segment")
                .help("write the config.json key, its nesting joined by `.`: `text_config.hidden_size`"),
        );
        return None;
    }
    Some(text.to_owned())
}

/// The layer kinds the layout has: `[layout.blocks]`'s keys, and an interval layout's two.
fn layout_kinds(cx: &Context<'_>) -> Vec<String> {
    let Some(layout) = cx.layout else {
        return Vec::new();
    };
    let mut kinds: Vec<String> = layout.blocks.iter().map(|(k, _)| k.text.clone()).collect();
    if matches!(layout.rule, Some(LayerRule::Interval { .. })) {
        for k in [LINEAR, FULL] {
            if !kinds.iter().any(|have| have == k) {
                kinds.push(k.to_owned());
            }
        }
    }
    kinds
}

/// A layer kind a source maps to: one of the layout's, with a symbol in a pattern layout.
fn mapped_kind(
    w: &mut Walk<'_>,
    kind: &str,
    span: Range<usize>,
    cx: &Context<'_>,
) -> Option<String> {
    let kinds = layout_kinds(cx);
    if cx.layout.is_some() && !kinds.iter().any(|k| k == kind) {
        let names: Vec<&str> = kinds.iter().map(String::as_str).collect();
        w.report(
            span,
            Diagnostic::error(format!("`{kind}` is not a layer kind of the layout"))
                .label("unknown layer kind")
                .expected_one_of("layer kinds", kind, &names),
        );
        return None;
    }
    if let Some(LayerRule::Pattern { symbols, .. }) = cx.layout.and_then(|l| l.rule.as_ref())
        && !symbols.iter().any(|(_, k)| k == kind)
    {
        w.report(
            span,
            Diagnostic::error(format!("layer kind `{kind}` has no symbol"))
                .label("no `[layout.symbols]` character stands for it")
                .help("an imported pattern is written in symbols: add one for this kind to `[layout.symbols]`"),
        );
        return None;
    }
    Some(kind.to_owned())
}

/// The one source of layer kinds, if any; `layer_types` beside `layer_rules` (schema 3) reads
/// the rules when the config has no list, and with a list applies them on top of it (schema
/// 4) or checks it against them (schema 3).
fn layer_kinds(w: &mut Walk<'_>, table: &Table<'_>, cx: &Context<'_>) -> Part<LayerKindsSource> {
    let mut given: Vec<(&str, Range<usize>)> = KIND_SOURCES
        .iter()
        .filter_map(|k| field(table, k).map(|(span, _)| (*k, span)))
        .collect();
    // The first one written is kept; each later one is reported, but for `layer_rules` as the
    // fallback of `layer_types`.
    given.sort_by_key(|(_, span)| span.start);
    let fallback = given.len() == 2
        && given.iter().any(|(k, _)| *k == "layer_types")
        && given.iter().any(|(k, _)| *k == "layer_rules");
    if let [(first, _), rest @ ..] = given.as_slice()
        && !fallback
    {
        for (key, span) in rest {
            w.report(
                span.clone(),
                Diagnostic::error(format!("`{key}` and `{first}` both say the layer kinds"))
                    .label("a second source")
                    .help(
                        "keep one of `layer_types`, `pattern`, `layer_indices` and `layer_rules` \
                         (only `layer_rules` may go beside `layer_types`: the rules when the \
                         config has no list, and over it when it has one)",
                    ),
            );
        }
        if !rest.is_empty() {
            return Err(Refused);
        }
    }
    if fallback {
        let types = field(table, "layer_types").and_then(|(_, v)| layer_types(w, v, cx));
        let rules = field(table, "layer_rules").and_then(|(key, v)| rules(w, key, v, cx));
        return match (types, rules) {
            (Some(LayerKindsSource::Types { key, map, .. }), Some(rules)) => {
                Ok(Some(LayerKindsSource::Types {
                    key,
                    map,
                    or: Some(rules),
                    over: cx.expressions(),
                }))
            }
            _ => Err(Refused),
        };
    }
    if let Some((_, v)) = field(table, "layer_types") {
        return layer_types(w, v, cx).map(Some).ok_or(Refused);
    }
    if let Some((key, v)) = field(table, "pattern") {
        if !matches!(
            cx.layout.and_then(|l| l.rule.as_ref()),
            Some(LayerRule::Pattern { .. }) | None
        ) {
            w.report(
                key,
                Diagnostic::error("`pattern` in `[config]` is only for pattern layouts")
                    .label("not a pattern layout")
                    .help("a list layout reads `layer_types` or `layer_indices`"),
            );
            return Err(Refused);
        }
        return key_path(w, "pattern", v)
            .map(|key| Some(LayerKindsSource::Pattern { key }))
            .ok_or(Refused);
    }
    if let Some((_, v)) = field(table, "layer_indices") {
        return layer_indices(w, v, cx).map(Some).ok_or(Refused);
    }
    if let Some((key, v)) = field(table, "layer_rules") {
        return rules(w, key, v, cx)
            .map(|rules| Some(LayerKindsSource::Rules(rules)))
            .ok_or(Refused);
    }
    Ok(None)
}

/// `[config.layer_rules]`, refused before schema 3.
fn rules(
    w: &mut Walk<'_>,
    key: Range<usize>,
    value: &Value<'_>,
    cx: &Context<'_>,
) -> Option<LayerRules> {
    if cx.schema.is_some_and(|schema| schema < 3) {
        w.report(
            key,
            Diagnostic::error("`layer_rules` needs `schema = 3`")
                .label("layer kinds by rule")
                .help("write `schema = 3` at the top of the circuit"),
        );
        return None;
    }
    cx.layer_rules(w, value)
}

/// `layer_types = { key = "...", map = { <entry> = "<layer kind>", ... } }`.
fn layer_types(w: &mut Walk<'_>, value: &Value<'_>, cx: &Context<'_>) -> Option<LayerKindsSource> {
    let table = w.table("layer_types", value)?;
    w.check_keys(table, LAYER_TYPES_KEYS, "`layer_types`");
    let key = required(w, table, value.span(), "key", "layer_types")
        .and_then(|v| key_path(w, "key", v).and_then(|key| projection(w, v, key, cx)));
    let map =
        required(w, table, value.span(), "map", "layer_types").and_then(|v| kind_map(w, v, cx));
    Some(LayerKindsSource::Types {
        key: key?,
        map: map?,
        or: None,
        over: false,
    })
}

/// A `layer_types` key that projects over a list, `list[*].path` (schema 4): one `[*]`, after
/// the list's key, followed by the end or by `.` and the path in each entry.
fn projection(
    w: &mut Walk<'_>,
    value: &Value<'_>,
    key: String,
    cx: &Context<'_>,
) -> Option<String> {
    let Some((list, rest)) = key.split_once("[*]") else {
        return Some(key);
    };
    let refused = if !cx.expressions() {
        Some((
            "a projection over a list (`[*]`) needs `schema = 4`".to_owned(),
            "write `schema = 4` at the top of the circuit".to_owned(),
        ))
    } else if list.is_empty()
        || rest.contains("[*]")
        || !(rest.is_empty() || rest.len() > 1 && rest.starts_with('.'))
    {
        Some((
            format!("`{key}` is not a projection over a list"),
            "write the list's key, `[*]` once, then the key in each entry: `block_configs[*].attention.no_op`, or `[*]` last for a list of values".to_owned(),
        ))
    } else {
        None
    };
    if let Some((message, help)) = refused {
        w.report(
            value.span(),
            Diagnostic::error(message).label("here").help(help),
        );
        return None;
    }
    Some(key)
}

/// `layer_indices = { base = 0 | 1, kinds = { <layer kind> = "<key>", ... } }`.
fn layer_indices(
    w: &mut Walk<'_>,
    value: &Value<'_>,
    cx: &Context<'_>,
) -> Option<LayerKindsSource> {
    let table = w.table("layer_indices", value)?;
    w.check_keys(table, LAYER_INDICES_KEYS, "`layer_indices`");
    let base = required(w, table, value.span(), "base", "layer_indices").and_then(|v| {
        let n = w.u64("base", v)?;
        if n > 1 {
            w.report(
                v.span(),
                Diagnostic::error(format!("`base` must be 0 or 1, found {n}"))
                    .label("not 0 or 1")
                    .help("the index the config's lists give the first layer"),
            );
            return None;
        }
        Some(n)
    });
    let kinds = required(w, table, value.span(), "kinds", "layer_indices").and_then(|v| {
        let t = w.table("kinds", v)?;
        let mut out = Vec::with_capacity(t.len());
        let mut valid = true;
        for (kind, list) in entries(t) {
            let name: &str = kind.get_ref();
            let kind = mapped_kind(w, name, kind.span(), cx);
            let key = key_path(w, name, list);
            match (kind, key) {
                (Some(kind), Some(key)) => out.push((kind, key)),
                _ => valid = false,
            }
        }
        empty_table(w, v, out.is_empty() && valid, "kinds")?;
        valid.then_some(out)
    });
    Some(LayerKindsSource::Indices {
        base: base?,
        kinds: kinds?,
    })
}

/// `map`: entry spelling -> layer kind; `None` when any entry was refused or it is empty.
fn kind_map(
    w: &mut Walk<'_>,
    value: &Value<'_>,
    cx: &Context<'_>,
) -> Option<Vec<(String, String)>> {
    let table = w.table("map", value)?;
    let mut out = Vec::with_capacity(table.len());
    let mut valid = true;
    for (entry, v) in entries(table) {
        let entry: &str = entry.get_ref();
        let kind = w
            .string(entry, v)
            .and_then(|kind| mapped_kind(w, kind, v.span(), cx));
        match kind {
            Some(k) => out.push((entry.to_owned(), k)),
            None => valid = false,
        }
    }
    empty_table(w, value, out.is_empty() && valid, "map")?;
    valid.then_some(out)
}

/// Reports an empty table (`None`), else `Some(())`.
fn empty_table(w: &mut Walk<'_>, value: &Value<'_>, empty: bool, key: &str) -> Option<()> {
    if empty {
        w.report(
            value.span(),
            Diagnostic::error(format!("`{key}` is empty"))
                .label("no entries")
                .help("name at least one layer kind"),
        );
        return None;
    }
    Some(())
}

/// The value of a required key of `table`, or an error at `at` naming `what`.
fn required<'v, 'i>(
    w: &mut Walk<'_>,
    table: &'v Table<'i>,
    at: Range<usize>,
    key: &str,
    what: &str,
) -> Option<&'v Value<'i>> {
    if let Some((_, v)) = field(table, key) {
        return Some(v);
    }
    w.report(
        at,
        Diagnostic::error(format!("missing `{key}` in `{what}`")).label(format!("no `{key}`")),
    );
    None
}

/// `interval`: an interval layout, or a pattern layout with its own pattern.
fn interval(w: &mut Walk<'_>, table: &Table<'_>, cx: &Context<'_>) -> Part<String> {
    let Some((key, v)) = field(table, "interval") else {
        return Ok(None);
    };
    let fits = match cx.layout.and_then(|l| l.rule.as_ref()) {
        Some(LayerRule::Interval { .. }) | None => true,
        Some(LayerRule::Pattern { pattern, .. }) => pattern.is_some(),
        Some(LayerRule::List) => false,
    };
    if !fits {
        w.report(
            key,
            Diagnostic::error("`interval` needs an interval layout or a layout `pattern`")
                .label("nothing to compare it with")
                .help("the config's interval is checked against `[layout] period`, or the length of `[layout] pattern`"),
        );
        return Err(Refused);
    }
    key_path(w, "interval", v).map(Some).ok_or(Refused)
}

/// A list layout, or a pattern layout without its own pattern, cannot have its layers'
/// kinds imported unless the config says them.
fn needs_kinds(w: &mut Walk<'_>, at: Range<usize>, cx: &Context<'_>, sourced: bool) {
    let needs = match cx.layout.and_then(|l| l.rule.as_ref()) {
        Some(LayerRule::List) => Some("a list layout's checkpoints list `layer_kinds`"),
        Some(LayerRule::Pattern { pattern: None, .. }) => {
            Some("a pattern layout without `[layout] pattern` needs each checkpoint's `pattern`")
        }
        _ => None,
    };
    if let (Some(why), false) = (needs, sourced) {
        w.report(
            at,
            Diagnostic::error("`[config]` does not say the layer kinds")
                .label("no `layer_types`, `pattern`, `layer_indices` or `layer_rules`")
                .note(why)
                .help("add the config key that gives each layer's kind"),
        );
    }
}

/// `[config.dims]`: every declared dim once, each a key path or `{ key, or }`.
fn dims(w: &mut Walk<'_>, value: &Value<'_>, cx: &Context<'_>) -> Option<Vec<ConfigDim>> {
    let table = w.table("dims", value)?;
    let declared: Vec<&str> = cx
        .dims
        .map(|d| d.iter().map(|t| t.text.as_str()).collect())
        .unwrap_or_default();
    let mut found: Vec<ConfigDim> = Vec::with_capacity(table.len());
    let mut valid = true;
    for (key, v) in entries(table) {
        let dim: &str = key.get_ref();
        if cx.dims.is_some() && !declared.contains(&dim) {
            let d = if cx.derived.contains(&dim) {
                Diagnostic::error(format!("`{dim}` is a derived dim"))
                    .label("computed by `[derive]`, never read")
                    .help("remove it here: import computes nothing a checkpoint does not give")
            } else {
                let mut d = Diagnostic::error(format!("unknown dim `{dim}` in `[config.dims]`"))
                    .label("not declared in `dims`");
                if let Some(near) = did_you_mean(dim, &declared) {
                    d = d.help(format!("did you mean `{near}`?"));
                }
                d
            };
            w.report(key.span(), d);
            valid = false;
            continue;
        }
        match dim_source(w, dim, v, cx, &declared) {
            Some(source) => found.push(source),
            None => valid = false,
        }
    }
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|d| !found.iter().any(|f| f.dim == *d))
        .collect();
    if valid && !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(|d| format!("`{d}`")).collect();
        w.report(
            value.span(),
            Diagnostic::error(format!(
                "`[config.dims]` does not say where {} come{} from",
                list.join(", "),
                if missing.len() == 1 { "s" } else { "" }
            ))
            .label("incomplete")
            .help("every declared dim needs its config key: `<dim> = \"<key>\"`"),
        );
        return None;
    }
    if !valid {
        return None;
    }
    // Declaration order, whatever order the table is written in.
    let mut ordered = Vec::with_capacity(found.len());
    for d in declared {
        if let Some(i) = found.iter().position(|f| f.dim == d) {
            ordered.push(found.swap_remove(i));
        }
    }
    Some(ordered)
}

/// One dim's source: a key path (an expression in schema 4), `{ key, or }`, or (schema 4)
/// `{ if, then, else, or }`.
fn dim_source(
    w: &mut Walk<'_>,
    dim: &str,
    value: &Value<'_>,
    cx: &Context<'_>,
    declared: &[&str],
) -> Option<ConfigDim> {
    let expressions = cx.expressions();
    if let toml::de::DeValue::String(_) = value.get_ref() {
        return Some(ConfigDim {
            dim: dim.to_owned(),
            value: config_value(w, dim, value, expressions)?,
            fallback: None,
        });
    }
    let Some(table) = value.get_ref().as_table() else {
        w.wrong_type(
            dim,
            "a config key, an expression (schema 4), `{ key, or }` or `{ if, then, else }`",
            value,
        );
        return None;
    };
    if let Some((at, _)) = field(table, "if") {
        if !expressions {
            w.report(
                at,
                Diagnostic::error("a condition in `[config.dims]` needs `schema = 4`")
                    .label("a schema-4 key")
                    .help("write `schema = 4` at the top of the circuit"),
            );
            return None;
        }
        return condition(w, dim, value, table).map(|value| ConfigDim {
            dim: dim.to_owned(),
            value,
            fallback: None,
        });
    }
    w.check_keys(table, DIM_SOURCE_KEYS, &format!("`{dim}`"));
    let key = required(w, table, value.span(), "key", dim)
        .and_then(|v| config_value(w, "key", v, expressions));
    let fallback = match field(table, "or") {
        None => Some(None),
        Some((_, v)) if expressions => fallback_expr(w, dim, v).map(Some),
        Some((_, v)) => fallback(w, dim, v, declared).map(Some),
    };
    Some(ConfigDim {
        dim: dim.to_owned(),
        value: key?,
        fallback: fallback?,
    })
}

/// The figure a `[config.dims]` value reads: in schema 4 an expression over config keys that
/// reads at least one; before it, a key path alone.
pub(super) fn config_value(
    w: &mut Walk<'_>,
    key: &str,
    value: &Value<'_>,
    expressions: bool,
) -> Option<DimValue> {
    let text = w.string(key, value)?;
    if !expressions {
        if text.contains(|c: char| c.is_whitespace() || "+*/%(),".contains(c)) {
            w.report(
                value.span(),
                Diagnostic::error("an expression in `[config]` needs `schema = 4`")
                    .label("not a config key path")
                    .help("write `schema = 4` at the top of the circuit, or give the config key alone"),
            );
            return None;
        }
        return key_path(w, key, value).map(DimValue::Key);
    }
    let expr = expression(w, value, text)?;
    if expr.names().is_empty() {
        w.report(
            value.span(),
            Diagnostic::error(format!("`{key}` reads no config key: `{text}` is a constant"))
                .label("a constant")
                .help("a figure no config gives is a constant: write it as a number (a dim's, in `[derive]`)"),
        );
        return None;
    }
    Some(DimValue::Expr(expr))
}

/// A config expression as written at `value` (whose decoded text is `text`), or its syntax
/// error reported at the offending token.
fn expression(w: &mut Walk<'_>, value: &Value<'_>, text: &str) -> Option<ConfigExpr> {
    match ConfigExpr::parse(text) {
        Ok(expr) => Some(expr),
        Err(error) => {
            let at = w.str_at(value.span(), text);
            let loc = at.inner(error.at.start, error.at.len());
            w.sink.report(
                &loc,
                Diagnostic::error(format!("invalid expression: {}", error.message)).label("here"),
            );
            None
        }
    }
}

/// Schema 4, `{ if = "<key>", then = <expr>, else = <expr>, or = <bool> }`.
fn condition(
    w: &mut Walk<'_>,
    dim: &str,
    value: &Value<'_>,
    table: &Table<'_>,
) -> Option<DimValue> {
    w.check_keys(table, DIM_CONDITION_KEYS, &format!("`{dim}`"));
    let key = required(w, table, value.span(), "if", dim).and_then(|v| key_path(w, "if", v));
    let branch = |w: &mut Walk<'_>, name: &str| {
        let v = required(w, table, value.span(), name, dim)?;
        match v.get_ref() {
            toml::de::DeValue::Integer(_) => {
                let n = w.u64(name, v)?;
                Some(ConfigExpr::number(n))
            }
            toml::de::DeValue::String(text) => {
                let text = text.to_string();
                expression(w, v, &text)
            }
            _ => {
                w.wrong_type(name, "an integer or an expression over config keys", v);
                None
            }
        }
    };
    let then = branch(w, "then");
    let otherwise = branch(w, "else");
    let absent = match field(table, "or") {
        None => Some(false),
        Some((_, v)) => {
            if let toml::de::DeValue::Boolean(b) = v.get_ref() {
                Some(*b)
            } else {
                w.wrong_type("or", "a boolean", v);
                None
            }
        }
    };
    Some(DimValue::If {
        key: key?,
        absent: absent?,
        then: then?,
        otherwise: otherwise?,
    })
}

/// Schema 4's fallback: a config expression over the declared dims and config keys, not
/// reading the dim itself.
fn fallback_expr(w: &mut Walk<'_>, dim: &str, value: &Value<'_>) -> Option<Fallback> {
    let text = w.string("or", value)?;
    let expr = expression(w, value, text)?;
    let at = w.str_at(value.span(), text);
    let mut valid = true;
    for name in expr.names() {
        if name.path == dim {
            w.sink.report(
                &at.inner(name.at.start, name.at.len()),
                Diagnostic::error(format!("the fallback of `{dim}` reads `{dim}` itself"))
                    .label("itself")
                    .help("a fallback computes the dim from the others or from other config keys"),
            );
            valid = false;
        }
    }
    valid.then_some(Fallback::Expr(expr))
}

/// A fallback of schemas 2 and 3: one axis, reading only declared dims other than `dim`.
fn fallback(w: &mut Walk<'_>, dim: &str, value: &Value<'_>, declared: &[&str]) -> Option<Fallback> {
    let text = w.string("or", value)?;
    let at = w.str_at(value.span(), text);
    let shape = match Shape::parse(text) {
        Ok(shape) => shape,
        Err(error) => {
            let mut d =
                Diagnostic::error(format!("invalid expression: {}", error.message)).label("here");
            if let Some(help) = error.help {
                d = d.help(help);
            }
            w.sink.report(&at.inner(error.offset, error.len), d);
            return None;
        }
    };
    if shape.axes.len() > 1 {
        w.report(
            value.span(),
            Diagnostic::error(format!("the fallback of `{dim}` has more than one axis"))
                .label("` x ` joins axes")
                .help("a fallback is one number: terms joined by `+` or `-`, factors by `*`"),
        );
        return None;
    }
    let mut valid = true;
    for r in shape.dims() {
        let name = r.name.as_str();
        let refused = if name == dim {
            Some(
                Diagnostic::error(format!("the fallback of `{dim}` reads `{dim}` itself"))
                    .label("itself")
                    .help("a fallback computes the dim from the others"),
            )
        } else if !declared.contains(&name) {
            let mut d = Diagnostic::error(format!(
                "the fallback of `{dim}` reads `{name}`, not a declared dim"
            ))
            .label("not a declared dim")
            .help("a fallback reads the other declared dims, as the config gives them");
            if let Some(near) = did_you_mean(name, declared) {
                d = d.help(format!("did you mean `{near}`?"));
            }
            Some(d)
        } else {
            None
        };
        if let Some(d) = refused {
            w.sink.report(&at.inner(r.offset, name.len()), d);
            valid = false;
        }
    }
    valid.then(|| Fallback::Shape(text.to_owned(), shape))
}
