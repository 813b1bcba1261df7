//! `[config.layer_rules]` (schema 3): the layer kinds by rule, for configs that list no kind
//! per layer ("every 4th layer is global", "these indices are attention, the rest conv", "the
//! last K layers share KV").
//!
//! This module owns the table's keys (`default`, `rules`), the keys of one rule (`every` with
//! `offset`, `indices` with `base`, `last` (alone, or restricting `every` or `indices` to the
//! last K layers), and `kind`), the three ways a rule's integer is
//! written (a number, a config key path, `{ key, or }`), and every check of a rule set that
//! needs no config: the kinds, each rule's numbers, and, over the layers a checkpoint may have
//! (fewer than [`MAX_LAYERS`]), the rule set as a whole: no layer left without a kind, no
//! unused `default`, no rule overridden on every layer it names, no disagreement with a fixed
//! layout. `metrale-codegen import` evaluates the rules against a config.
//!
//! A rule is *fixed* when it names the same layers whatever the config says: an `every` with
//! numbers for its period and offset, or a written list of `indices`. Only fixed rules can
//! prove that a layer gets a kind, or that a rule is overridden. Which layers a fixed rule names
//! is the one law the config reader evaluates every rule by (`circuit::layer_law`).
//!
//! Invariants:
//! - Each error is located at the value or key at fault (a missing key at the table that lacks
//!   it); the set checks run only when every rule was valid, so one mistake is reported once.
//! - Every loop over layers is bounded by [`MAX_LAYERS`] and every rule is read once, so a
//!   file of any size costs time linear in its rules.

use std::ops::Range;

use super::{Context, key_path, mapped_kind, required};
use crate::load::circuit::layer_law;
use crate::load::circuit::{
    LayerRule,
    config_map::{ConfigInt, DimValue, KindRule, LayerRules, RuleIndices, RuleLayers},
};
use crate::load::raw::{FULL, LINEAR};
use crate::load::text::diag::Diagnostic;
use crate::load::text::limits::MAX_LAYERS;
use crate::load::text::walk::{Table, Value, Walk, field, type_name};

/// The keys of `[config.layer_rules]`.
pub(crate) const TABLE_KEYS: &[&str] = &["default", "rules"];

/// The keys of one rule.
pub(crate) const RULE_KEYS: &[&str] = &["every", "offset", "indices", "base", "last", "kind"];

/// The keys of a rule's integer written as a table, `{ key, or }`.
pub(crate) const RULE_INT_KEYS: &[&str] = &["key", "or"];

/// The keys of a rule's `indices` written as a table, `{ key, or }` (the config's list, or the
/// list written when the config omits the key).
pub(crate) const RULE_INDICES_KEYS: &[&str] = &["key", "or"];

/// The keys that name a rule's layers, of which a rule has exactly one.
pub(crate) const SELECTORS: [&str; 3] = ["every", "indices", "last"];

/// How many layers the set checks look at: every layer a checkpoint may have.
#[allow(
    clippy::cast_possible_truncation,
    reason = "MAX_LAYERS is 1024, which every usize holds"
)]
const LAYERS: usize = MAX_LAYERS as usize;

/// A set of the layers below [`MAX_LAYERS`], one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layers([u64; LAYERS.div_ceil(64)]);

impl Layers {
    /// No layer.
    const NONE: Self = Self([0; LAYERS.div_ceil(64)]);

    /// Whether layer `i` is in the set.
    fn has(&self, i: usize) -> bool {
        self.0
            .get(i / 64)
            .is_some_and(|word| (word >> (i % 64)) & 1 == 1)
    }

    /// Puts layer `i` in the set (a layer past the limit is left out).
    fn add(&mut self, i: usize) {
        if let Some(word) = self.0.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    /// Puts every layer of `other` in the set.
    fn add_all(&mut self, other: &Self) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    /// Whether every layer of the set is in `other`.
    fn within(&self, other: &Self) -> bool {
        self.0.iter().zip(other.0).all(|(word, of)| word & !of == 0)
    }

    /// The first layer not in the set.
    fn first_missing(&self) -> Option<usize> {
        (0..LAYERS).find(|&i| !self.has(i))
    }
}

/// What the help of a rule's shape says.
const RULE_FORMS: &str = "name the layers with one of `every = N` (with `offset = O`), `indices = [...]` and `last = K` (`last` may also restrict `every` or `indices` to the last K layers)";

/// One valid rule with the places the set checks point at.
struct Walked {
    rule: KindRule,
    /// The rule's table.
    at: Range<usize>,
    /// Its `kind` value.
    kind_at: Range<usize>,
}

/// An integer of a rule as written, with where it is.
struct IntAt {
    int: ConfigInt,
    /// The value.
    at: Range<usize>,
    /// The `or` value, in a `{ key, or }` table.
    or_at: Option<Range<usize>>,
}

impl Context<'_> {
    /// `[config.layer_rules]`: the rules and the default, or `None` when anything was refused
    /// (reported).
    pub(super) fn layer_rules(&self, w: &mut Walk<'_>, value: &Value<'_>) -> Option<LayerRules> {
        let table = w.table("layer_rules", value)?;
        let before = w.sink.error_count();
        w.check_keys(table, TABLE_KEYS, "`[config.layer_rules]`");
        let default = field(table, "default").and_then(|(_, v)| {
            let kind = w.string("default", v)?;
            let kind = mapped_kind(w, kind, v.span(), self)?;
            Some((kind, v.span()))
        });
        let rules_value = required(w, table, value.span(), "rules", "[config.layer_rules]");
        let rules = rules_value.and_then(|v| self.rules(w, v));
        if w.sink.error_count() != before {
            return None;
        }
        let (rules, rules_value) = (rules?, rules_value?);
        let fixed: Vec<Option<Layers>> = rules.iter().map(|r| fixed_layers(&r.rule)).collect();
        let mut valid = coverage(w, &fixed, default.as_ref(), rules_value.span());
        valid &= none_overridden(w, &rules, &fixed);
        if valid {
            self.agrees_with_layout(w, &rules, &fixed, default.as_ref());
        }
        if w.sink.error_count() != before {
            return None;
        }
        Some(LayerRules {
            rules: rules.into_iter().map(|r| r.rule).collect(),
            default: default.map(|(kind, at)| (kind, w.sink.origin(&w.loc(at)))),
        })
    }

    /// `rules = [ { ... }, ... ]`: every rule, or `None` when one was refused (reported).
    fn rules(&self, w: &mut Walk<'_>, value: &Value<'_>) -> Option<Vec<Walked>> {
        let items = w.array("rules", value)?;
        if items.is_empty() {
            w.report(
                value.span(),
                Diagnostic::error("`rules` is empty")
                    .label("no rules")
                    .help(format!("add a rule: {RULE_FORMS}, and its `kind`")),
            );
            return None;
        }
        let mut out = Vec::with_capacity(items.len());
        let mut valid = true;
        for item in items {
            let rule = if let Some(table) = item.get_ref().as_table() {
                self.rule(w, table, item.span())
            } else {
                w.report(
                    item.span(),
                    Diagnostic::error(format!(
                        "each rule must be a table, found {}",
                        type_name(item.get_ref())
                    ))
                    .label("not a table")
                    .help("write a rule as `{ every = 4, offset = -1, kind = \"global\" }`"),
                );
                None
            };
            match rule {
                Some(rule) => out.push(rule),
                None => valid = false,
            }
        }
        valid.then_some(out)
    }

    /// One rule: exactly one selector, its own keys only, and a kind of the layout.
    fn rule(&self, w: &mut Walk<'_>, table: &Table<'_>, at: Range<usize>) -> Option<Walked> {
        w.check_keys(table, RULE_KEYS, "a rule");
        let mut selectors: Vec<(&str, Range<usize>)> = SELECTORS
            .iter()
            .filter_map(|k| field(table, k).map(|(span, _)| (*k, span)))
            .collect();
        selectors.sort_by_key(|(_, span)| span.start);
        let mut valid = true;
        // `last` may restrict an `every` or `indices` rule to the last K layers; `every` and
        // `indices` exclude each other.
        let (restricted, named): (Vec<_>, Vec<_>) = selectors
            .iter()
            .cloned()
            .partition(|(k, _)| *k == "last" && selectors.len() > 1);
        if let [(first, _), rest @ ..] = named.as_slice() {
            for (key, span) in rest {
                w.report(
                    span.clone(),
                    Diagnostic::error(format!("`{key}` and `{first}` both name this rule's layers"))
                        .label("a second way to name layers")
                        .help("a rule names its layers one way, `every` or `indices`, which `last` may restrict to the last K layers: write two rules (a later rule overrides an earlier one on the layers both name)"),
                );
                valid = false;
            }
        } else {
            w.report(
                at.clone(),
                Diagnostic::error("this rule names no layers")
                    .label("no `every`, `indices` or `last`")
                    .help(RULE_FORMS),
            );
            valid = false;
        }
        let selector = named.first().map(|(k, _)| *k);
        for (key, owner) in [("offset", "every"), ("base", "indices")] {
            if let Some((span, _)) = field(table, key)
                && selector.is_some_and(|s| s != owner)
            {
                w.report(
                    span,
                    Diagnostic::error(format!("`{key}` belongs to an `{owner}` rule"))
                        .label(format!("no `{owner}` in this rule"))
                        .help(if key == "offset" {
                            "`offset` says which layer of each period an `every` rule names"
                        } else {
                            "`base` says the index an `indices` list gives the first layer"
                        }),
                );
                valid = false;
            }
        }
        let kind = if let Some((_, v)) = field(table, "kind") {
            w.string("kind", v)
                .and_then(|kind| mapped_kind(w, kind, v.span(), self))
                .map(|kind| (kind, v.span()))
        } else {
            w.report(
                at.clone(),
                Diagnostic::error("this rule has no `kind`")
                    .label("no `kind`")
                    .help("add `kind = \"<layer kind>\"`: the kind the rule gives its layers"),
            );
            None
        };
        let layers = match selector {
            Some("every") => every(w, table, self.expressions()),
            Some("indices") => indices(w, table, self.expressions()),
            Some("last") => last(w, table, self.expressions()),
            _ => None,
        };
        let within_last = match restricted.first() {
            Some(_) => match last(w, table, self.expressions()) {
                Some(RuleLayers::Last { count }) => Some(Some(count)),
                _ => None,
            },
            None => Some(None),
        };
        let (kind, kind_at) = kind?;
        let (layers, within_last) = (layers?, within_last?);
        valid.then(|| Walked {
            rule: KindRule {
                layers,
                within_last,
                kind,
                origin: w.sink.origin(&w.loc(at.clone())),
            },
            at,
            kind_at,
        })
    }

    /// Under a fixed layout (an interval's period, a pattern layout's own pattern), rules that
    /// are all fixed must give every layer the layout's kind.
    fn agrees_with_layout(
        &self,
        w: &mut Walk<'_>,
        rules: &[Walked],
        fixed: &[Option<Layers>],
        default: Option<&(String, Range<usize>)>,
    ) {
        let Some(fixed) = fixed
            .iter()
            .map(Option::as_ref)
            .collect::<Option<Vec<&Layers>>>()
        else {
            return;
        };
        let (expected, what): (Vec<String>, String) =
            match self.layout.and_then(|l| l.rule.as_ref()) {
                Some(LayerRule::Interval { period }) => (
                    (0..LAYERS)
                        .map(|i| {
                            let full = (i as u64 + 1).is_multiple_of(*period);
                            (if full { FULL } else { LINEAR }).to_owned()
                        })
                        .collect(),
                    format!("the layout (period {period})"),
                ),
                Some(LayerRule::Pattern {
                    symbols,
                    pattern: Some(pattern),
                }) => {
                    let kinds: Option<Vec<String>> = pattern
                        .chars()
                        .map(|c| {
                            symbols
                                .iter()
                                .find(|(s, _)| *s == c)
                                .map(|(_, k)| k.clone())
                        })
                        .collect();
                    let Some(kinds) = kinds.filter(|k| !k.is_empty()) else {
                        return;
                    };
                    (
                        kinds.iter().cycle().take(LAYERS).cloned().collect(),
                        format!("the layout's pattern `{pattern}`"),
                    )
                }
                _ => return,
            };
        for i in 0..LAYERS {
            let decided = rules
                .iter()
                .zip(&fixed)
                .rev()
                .find(|(_, names)| names.has(i))
                .map(|(r, _)| (r.rule.kind.as_str(), r.kind_at.clone(), "this rule"));
            let Some((kind, at, by)) = decided
                .or_else(|| default.map(|(kind, at)| (kind.as_str(), at.clone(), "`default`")))
            else {
                return;
            };
            let Some(wanted) = expected.get(i) else {
                return;
            };
            if kind != wanted {
                w.report(
                    at,
                    Diagnostic::error(format!(
                        "layer {i} is `{kind}` by {by}, but {what} makes it `{wanted}`"
                    ))
                    .label("contradicts the layout")
                    .help("the rules and the layout must agree: correct one of them, or leave the layer kinds to the rules alone (a pattern layout without its own `pattern`)"),
                );
                return;
            }
        }
    }
}

/// An integer of a rule: a number, a config key path (schema 4: an expression over config
/// keys), or `{ key = "...", or = N }`.
fn config_int(w: &mut Walk<'_>, key: &str, value: &Value<'_>, expressions: bool) -> Option<IntAt> {
    match value.get_ref() {
        toml::de::DeValue::Integer(_) => Some(IntAt {
            int: ConfigInt::Literal(integer(w, key, value)?),
            at: value.span(),
            or_at: None,
        }),
        toml::de::DeValue::String(_) => Some(IntAt {
            int: rule_figure(w, key, value, expressions, None)?,
            at: value.span(),
            or_at: None,
        }),
        toml::de::DeValue::Table(table) => {
            w.check_keys(table, RULE_INT_KEYS, &format!("`{key}`"));
            let or = match field(table, "or") {
                None => Some(None),
                Some((_, v)) => integer(w, "or", v).map(|n| Some((n, v.span()))),
            };
            let figure = required(w, table, value.span(), "key", key).and_then(|v| {
                let fallback = or.as_ref().and_then(|o| o.as_ref().map(|(n, _)| *n));
                rule_figure(w, "key", v, expressions, fallback)
            });
            let (figure, or) = (figure?, or?);
            Some(IntAt {
                int: figure,
                at: value.span(),
                or_at: or.map(|(_, at)| at),
            })
        }
        _ => {
            w.wrong_type(
                key,
                "an integer, a config key or a `{ key, or }` table",
                value,
            );
            None
        }
    }
}

/// A TOML integer as an `i64` (any sign).
fn integer(w: &mut Walk<'_>, key: &str, value: &Value<'_>) -> Option<i64> {
    let toml::de::DeValue::Integer(int) = value.get_ref() else {
        w.wrong_type(key, "an integer", value);
        return None;
    };
    if let Ok(n) = i64::from_str_radix(int.as_str(), int.radix()) {
        return Some(n);
    }
    w.report(
        value.span(),
        Diagnostic::error(format!("`{key}` is out of range")).label("too large"),
    );
    None
}

/// A rule's integer read from the config: a key path, or (schema 4) an expression over config
/// keys; `or` when a key it reads is absent or `null`.
fn rule_figure(
    w: &mut Walk<'_>,
    key: &str,
    value: &Value<'_>,
    expressions: bool,
    or: Option<i64>,
) -> Option<ConfigInt> {
    match super::config_value(w, key, value, expressions)? {
        DimValue::Key(path) => Some(ConfigInt::Key { key: path, or }),
        DimValue::Expr(expr) => match expr.as_key() {
            Some(path) => Some(ConfigInt::Key {
                key: path.to_owned(),
                or,
            }),
            None => Some(ConfigInt::Expr { expr, or }),
        },
        DimValue::If { .. } => None,
    }
}

/// The number an integer of a rule has without a config (as written, or its `or`), where it
/// is, and how a message names it: "`every = 0`", "the `or` of `every` (0)".
fn known(int: &IntAt, key: &str) -> Option<(i64, Range<usize>, String)> {
    match &int.int {
        ConfigInt::Literal(n) => Some((*n, int.at.clone(), format!("`{key} = {n}`"))),
        ConfigInt::Key { or: Some(n), .. } | ConfigInt::Expr { or: Some(n), .. } => Some((
            *n,
            int.or_at.clone().unwrap_or_else(|| int.at.clone()),
            format!("the `or` of `{key}` ({n})"),
        )),
        ConfigInt::Key { or: None, .. } | ConfigInt::Expr { or: None, .. } => None,
    }
}

/// `every = N` with its optional `offset = O`: `N` at least 1, and `O` fitting every period it
/// can meet.
fn every(w: &mut Walk<'_>, table: &Table<'_>, expressions: bool) -> Option<RuleLayers> {
    let period = field(table, "every").and_then(|(_, v)| config_int(w, "every", v, expressions));
    let offset = match field(table, "offset") {
        Some((_, v)) => config_int(w, "offset", v, expressions),
        None => Some(IntAt {
            int: ConfigInt::Literal(0),
            at: 0..0,
            or_at: None,
        }),
    };
    let (period, offset) = (period?, offset?);
    let mut valid = true;
    let known_period = known(&period, "every");
    if let Some((n, at, what)) = &known_period
        && *n < 1
    {
        w.report(
            at.clone(),
            Diagnostic::error(format!("{what}: a period is at least 1 layer"))
                .label(if *n == 0 {
                    "zero period"
                } else {
                    "negative period"
                })
                .help("`every = N` names one layer of every N: N >= 1"),
        );
        valid = false;
    }
    if let (Some((n, _, _)), Some((o, at, what))) = (&known_period, known(&offset, "offset"))
        && *n >= 1
        && !layer_law::offset_fits(i128::from(o), i128::from(*n))
    {
        let (message, label) = if o >= 0 {
            (
                format!("{what} is not below the period {n}"),
                "past the period",
            )
        } else {
            (
                format!("{what} reaches before the period {n}"),
                "before the period",
            )
        };
        let mut d = Diagnostic::error(message)
            .label(label)
            .help(format!("an offset is 0 to {}, or -{n} to -1 counted from the period's end (-1: the last layer of each period)", n - 1));
        if !matches!(period.int, ConfigInt::Literal(_)) {
            d = d.note(format!(
                "the period {n} is the `or` of `every`, used when the config omits its key"
            ));
        }
        w.report(at, d);
        valid = false;
    }
    valid.then_some(RuleLayers::Every {
        period: period.int,
        offset: offset.int,
    })
}

/// `indices = [...]` or `indices = "<key>"`, with its optional `base = 0 | 1`; in schema 4 the
/// list's entries may be expressions over config keys.
fn indices(w: &mut Walk<'_>, table: &Table<'_>, expressions: bool) -> Option<RuleLayers> {
    let base = match field(table, "base") {
        None => Some(0),
        Some((_, v)) => w.u64("base", v).and_then(|n| {
            if n > 1 {
                w.report(
                    v.span(),
                    Diagnostic::error(format!("`base` must be 0 or 1, found {n}"))
                        .label("not 0 or 1")
                        .help("the index the list gives the first layer"),
                );
                return None;
            }
            Some(n)
        }),
    };
    let (_, value) = field(table, "indices")?;
    let list = match value.get_ref() {
        toml::de::DeValue::String(_) => {
            key_path(w, "indices", value).map(|key| RuleIndices::Key { key, or: None })
        }
        toml::de::DeValue::Array(items)
            if items
                .iter()
                .any(|item| matches!(item.get_ref(), toml::de::DeValue::String(_))) =>
        {
            // `computed` refuses the strings before schema 4 (`config_value`).
            base.and_then(|base| computed(w, items, value, base, expressions))
        }
        toml::de::DeValue::Array(items) => base
            .and_then(|base| listed(w, items, value, base, "indices"))
            .map(RuleIndices::Listed),
        toml::de::DeValue::Table(t) => keyed_indices(w, t, value, base),
        _ => {
            w.wrong_type(
                "indices",
                "a list of layer indices, a config key or `{ key, or }`",
                value,
            );
            None
        }
    };
    let (list, base) = (list?, base?);
    Some(RuleLayers::Indices { list, base })
}

/// `indices = { key = "<key>", or = [...] }`: the config's list, or `or` (which may be empty:
/// no layer) when the config omits the key or gives `null`.
fn keyed_indices(
    w: &mut Walk<'_>,
    table: &Table<'_>,
    value: &Value<'_>,
    base: Option<u64>,
) -> Option<RuleIndices> {
    w.check_keys(table, RULE_INDICES_KEYS, "`indices`");
    let key =
        required(w, table, value.span(), "key", "indices").and_then(|v| key_path(w, "key", v));
    let or = match field(table, "or") {
        None => Some(None),
        Some((_, v)) => match v.get_ref() {
            toml::de::DeValue::Array(items) if items.is_empty() => Some(Some(Vec::new())),
            toml::de::DeValue::Array(items) => {
                base.and_then(|base| listed(w, items, v, base, "or").map(Some))
            }
            _ => {
                w.wrong_type("or", "a list of layer indices", v);
                None
            }
        },
    };
    Some(RuleIndices::Key { key: key?, or: or? })
}

/// Schema 4, a written list of layer indices some of which are computed from the config: the
/// numbers checked as [`listed`] checks them, each string an expression over config keys.
fn computed(
    w: &mut Walk<'_>,
    items: &[Value<'_>],
    value: &Value<'_>,
    base: u64,
    expressions: bool,
) -> Option<RuleIndices> {
    let numbers: Vec<Value<'_>> = items
        .iter()
        .filter(|item| !matches!(item.get_ref(), toml::de::DeValue::String(_)))
        .cloned()
        .collect();
    let mut valid = numbers.is_empty() || listed(w, &numbers, value, base, "indices").is_some();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let index = if let toml::de::DeValue::String(_) = item.get_ref() {
            if !expressions {
                w.report(
                    item.span(),
                    Diagnostic::error("a layer index computed from the config needs `schema = 4`")
                        .label("not a number")
                        .help("write `schema = 4` at the top of the circuit, or the index as a number"),
                );
                valid = false;
                continue;
            }
            rule_figure(w, "indices", item, true, None)
        } else {
            w.u64("indices", item)
                .and_then(|n| i64::try_from(n).ok())
                .map(ConfigInt::Literal)
        };
        match index {
            Some(index) => out.push(index),
            None => valid = false,
        }
    }
    valid.then_some(RuleIndices::Computed(out))
}

/// A written list of layer indices (`indices`, or an `or`, named `what`): not empty, none
/// repeated, each a layer a checkpoint may have.
fn listed(
    w: &mut Walk<'_>,
    items: &[Value<'_>],
    value: &Value<'_>,
    base: u64,
    what: &str,
) -> Option<Vec<u64>> {
    if items.is_empty() {
        w.report(
            value.span(),
            Diagnostic::error("`indices` is empty")
                .label("no layers")
                .help("list at least one layer index, or remove the rule"),
        );
        return None;
    }
    // The first place each layer is listed, by layer.
    let mut first: Vec<Option<Range<usize>>> = vec![None; LAYERS];
    let mut out: Vec<u64> = Vec::with_capacity(items.len().min(LAYERS));
    let mut valid = true;
    for item in items {
        let Some(index) = w.u64(what, item) else {
            valid = false;
            continue;
        };
        let past = base.saturating_add(MAX_LAYERS);
        let refused = if index < base {
            Some(
                Diagnostic::error(format!("layer index {index} is below `base = {base}`"))
                    .label("no such layer")
                    .help("with `base = 1` the first layer is 1"),
            )
        } else if index >= past {
            Some(
                Diagnostic::error(format!(
                    "layer index {index} is past the loader's limit of {MAX_LAYERS} layers"
                ))
                .label("no checkpoint has this layer")
                .help(format!(
                    "a layer index is {base} to {}",
                    past.saturating_sub(1)
                )),
            )
        } else if let Some(Some(at)) = usize::try_from(index - base)
            .ok()
            .and_then(|layer| first.get(layer))
        {
            let place = w.place(at.clone());
            Some(
                Diagnostic::error(format!("layer {index} is listed twice in this rule"))
                    .label("listed again")
                    .note(format!("first listed at {place}")),
            )
        } else {
            None
        };
        if let Some(d) = refused {
            w.report(item.span(), d);
            valid = false;
        } else {
            if let Some(slot) = usize::try_from(index - base)
                .ok()
                .and_then(|layer| first.get_mut(layer))
            {
                *slot = Some(item.span());
            }
            out.push(index);
        }
    }
    valid.then_some(out)
}

/// `last = K`: as written 1 to [`MAX_LAYERS`], an `or` 0 to [`MAX_LAYERS`].
fn last(w: &mut Walk<'_>, table: &Table<'_>, expressions: bool) -> Option<RuleLayers> {
    let (_, value) = field(table, "last")?;
    let count = config_int(w, "last", value, expressions)?;
    if let Some((k, at, what)) = known(&count, "last") {
        let least = i64::from(matches!(count.int, ConfigInt::Literal(_)));
        let most = i64::try_from(MAX_LAYERS).unwrap_or(i64::MAX);
        if k < least || k > most {
            let d = if k > most {
                Diagnostic::error(format!(
                    "{what} is past the loader's limit of {MAX_LAYERS} layers"
                ))
                .label("more layers than a checkpoint has")
            } else if k == 0 {
                Diagnostic::error(format!("{what} names no layer")).label("zero layers")
            } else {
                Diagnostic::error(format!("{what} is negative")).label("negative")
            };
            w.report(
                at,
                d.help(format!(
                    "`last = K` names the last K layers: K is {least} to {MAX_LAYERS}"
                )),
            );
            return None;
        }
    }
    Some(RuleLayers::Last { count: count.int })
}

/// The layers below [`MAX_LAYERS`] a fixed rule names; `None` for a rule whose layers depend
/// on the config (or on the depth: a rule restricted to the last K layers).
fn fixed_layers(rule: &KindRule) -> Option<Layers> {
    if rule.within_last.is_some() {
        return None;
    }
    let mut names = Layers::NONE;
    match &rule.layers {
        RuleLayers::Every {
            period: ConfigInt::Literal(n),
            offset: ConfigInt::Literal(o),
        } => {
            for i in layer_law::every(i128::from(*n), i128::from(*o), MAX_LAYERS)? {
                names.add(i);
            }
        }
        RuleLayers::Indices {
            list: RuleIndices::Listed(list),
            base,
        } => {
            for index in list {
                if let Some(layer) = layer_law::index(*index, *base, MAX_LAYERS) {
                    names.add(layer);
                }
            }
        }
        _ => return None,
    }
    Some(names)
}

/// Without a default, the fixed rules must name every layer; with one, they must leave a layer
/// to it. `false` when refused (reported).
fn coverage(
    w: &mut Walk<'_>,
    fixed: &[Option<Layers>],
    default: Option<&(String, Range<usize>)>,
    rules_at: Range<usize>,
) -> bool {
    let mut named = Layers::NONE;
    for names in fixed.iter().flatten() {
        named.add_all(names);
    }
    match (named.first_missing(), default) {
        (Some(i), None) => {
            w.report(
                rules_at,
                Diagnostic::error(format!("these rules can leave layer {i} without a kind"))
                    .label("and there is no `default`")
                    .note("a rule names the same layers whatever the config says only with numbers for `every` and `offset`, or a written list of `indices`")
                    .help("add `default = \"<layer kind>\"` to `[config.layer_rules]`: the kind of every layer no rule names"),
            );
            false
        }
        (None, Some((_, at))) => {
            w.report(
                at.clone(),
                Diagnostic::error("`default` is never used: the rules name every layer")
                    .label("never used")
                    .help("remove `default`"),
            );
            false
        }
        _ => true,
    }
}

/// No rule is overridden, on every layer it can name, by fixed rules after it. `false` when one
/// is (reported).
fn none_overridden(w: &mut Walk<'_>, rules: &[Walked], fixed: &[Option<Layers>]) -> bool {
    let mut after = Layers::NONE;
    let mut valid = true;
    for (rule, names) in rules.iter().zip(fixed).rev() {
        let d = match names {
            Some(names) if *names == Layers::NONE => Some(
                Diagnostic::error(format!(
                    "this rule names no layer below the loader's limit of {MAX_LAYERS} layers"
                ))
                .label("names no layer")
                .help("a period or an index this large names no layer of any checkpoint"),
            ),
            _ => {
                // A rule read from the config can name any layer.
                let overridden = match names {
                    Some(names) => names.within(&after),
                    None => after.first_missing().is_none(),
                };
                overridden.then(|| {
                    Diagnostic::error("this rule never decides a layer: the rules after it name every layer it names")
                        .label("overridden")
                        .help("remove it, or move it after the rules that override it: a later rule overrides an earlier one")
                })
            }
        };
        if let Some(d) = d {
            w.report(rule.at.clone(), d);
            valid = false;
        }
        if let Some(names) = names {
            after.add_all(names);
        }
    }
    valid
}
