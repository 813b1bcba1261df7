//! The first stage of reading a `config.json`: its JSON tree and the values found in it, each
//! with its place. This module owns the strict parse ([`parse`]), the one lookup of a dotted
//! key path ([`Reader::find`]: object keys, and number segments into arrays), the typed reads
//! every later stage makes through it ([`Reader::require`], [`Reader::integer`]), the refusal
//! of a key written twice in one object, the error list of one import ([`Reader::report`]),
//! and the located values the later stages pass each other: the layer count ([`Depth`]) and a
//! layer's kind ([`Layer`]).
//!
//! Invariants:
//! - Every error is located in the config: at the value for a wrong type, at the object that
//!   lacks it for a missing key, at the second of a key written twice.
//! - Nothing here panics whatever the config holds: JSON nesting is bounded by the parser, and
//!   the duplicate-key pass walks the tree with an explicit stack.
//! - An integer past `u64::MAX` is said to be, not called "not an integer".

use std::ops::Range;

use crate::load::circuit::config_expr::Exact;
use crate::load::text::diag::{Diagnostic, Diagnostics, Source};
use jsonc_parser::ast::Value;
use jsonc_parser::{CollectOptions, parse_to_ast};

pub(super) use crate::load::text::json::{prop_name, span};
use crate::load::text::json::{prop_span, strict_options};

/// The config's JSON tree, parsed strictly (no comments, trailing commas, single quotes, ...;
/// non-finite numbers allowed, as Python's `json` writes them).
///
/// # Errors
/// Malformed JSON, located; an empty config.
pub(super) fn parse(config: &Source) -> Result<Value<'_>, Diagnostics> {
    let strict = strict_options(true);
    let parsed = match parse_to_ast(config.text(), &CollectOptions::default(), &strict) {
        Ok(parsed) => parsed,
        Err(error) => {
            let range = error.range();
            return Err(Diagnostic::error(format!("invalid JSON: {}", error.kind()))
                .at(config, range.start..range.end)
                .label("here")
                .into());
        }
    };
    parsed.value.ok_or_else(|| {
        Diagnostic::error("the config is empty")
            .at(config, 0..0)
            .label("no JSON value")
            .into()
    })
}

/// One import in progress: the config, its tree and the errors found so far.
pub(super) struct Reader<'a> {
    pub(super) config: &'a Source,
    pub(super) root: &'a Value<'a>,
    /// Each error with the byte offset it is sorted by.
    pub(super) errors: Vec<(usize, Diagnostic)>,
}

/// The layer count as read: its value, its key and where the value is.
pub(super) struct Depth {
    /// The layer count, 1 to [`MAX_LAYERS`](crate::load::text::limits::MAX_LAYERS).
    pub(super) layers: u64,
    /// Its key path.
    pub(super) key: String,
    /// Its value in the config.
    pub(super) at: Range<usize>,
}

/// One layer's kind as read, with what decided it.
pub(super) struct Layer {
    /// The layer kind.
    pub(super) kind: String,
    /// Where in the config it was decided: the list entry, the pattern character, the index, a
    /// rule's value, or the layer count for a rule written in the circuit.
    pub(super) at: Range<usize>,
    /// What decided it, as a message says it: "in the config", "by rule 1 of ...".
    pub(super) by: String,
}

impl Layer {
    /// A layer given by a per-layer source of the config.
    pub(super) fn in_config(kind: String, at: Range<usize>) -> Self {
        Self {
            kind,
            at,
            by: "in the config".to_owned(),
        }
    }
}

/// What a key path leads to.
pub(super) enum Found<'a> {
    /// The value.
    Value(&'a Value<'a>),
    /// No such key: the span of the object or array that lacks it.
    Missing(Range<usize>),
}

impl<'a> Reader<'a> {
    /// Refuses a key written twice in one object, at the second: JSON leaves it undefined and
    /// Python's `json` (what wrote most configs) keeps the last silently, so a figure read from
    /// either would be a guess. One pass over the tree, whose depth the parser bounds.
    pub(super) fn unique_keys(&mut self, value: &Value<'_>) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(object) => {
                    let mut seen: std::collections::HashMap<&str, Range<usize>> =
                        std::collections::HashMap::new();
                    for property in &object.properties {
                        let name = prop_name(&property.name);
                        let at = prop_span(&property.name);
                        if let Some(first) = seen.get(name) {
                            let (line, column) = self.config.line_col(first.start);
                            self.report(
                                at,
                                Diagnostic::error(format!(
                                    "config key `{name}` is written twice in one object"
                                ))
                                .label("written again")
                                .note(format!(
                                    "first written at {}:{line}:{column}",
                                    self.config.name()
                                ))
                                .help("keep one: which one a JSON reader takes is not defined"),
                            );
                        } else {
                            seen.insert(name, at);
                        }
                        stack.push(&property.value);
                    }
                }
                Value::Array(array) => stack.extend(array.elements.iter()),
                _ => {}
            }
        }
    }

    /// Records an error at `span` of the config.
    pub(super) fn report(&mut self, span: Range<usize>, diagnostic: Diagnostic) {
        self.errors
            .push((span.start, diagnostic.at(self.config, span)));
    }

    /// Follows a dotted path: object keys, and number segments into arrays.
    pub(super) fn find(&self, path: &str) -> Found<'a> {
        Self::find_from(self.root, path)
    }

    /// Follows a dotted path from `from` (a list's entry, for a projection over it).
    pub(super) fn find_from(from: &'a Value<'a>, path: &str) -> Found<'a> {
        let mut at: &'a Value<'a> = from;
        for segment in path.split('.') {
            let next = match at {
                Value::Object(object) => object
                    .properties
                    .iter()
                    .rev()
                    .find(|p| prop_name(&p.name) == segment)
                    .map(|p| &p.value),
                Value::Array(array) => segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| array.elements.get(i)),
                _ => None,
            };
            match next {
                Some(value) => at = value,
                None => return Found::Missing(span(at)),
            }
        }
        Found::Value(at)
    }

    /// The value at `path`, or an error naming it (`None`).
    pub(super) fn require(&mut self, path: &str, help: &str) -> Option<&'a Value<'a>> {
        match self.find(path) {
            Found::Value(Value::NullKeyword(null)) => {
                self.report(
                    null.range.start..null.range.end,
                    Diagnostic::error(format!("config key `{path}` is null"))
                        .label("null")
                        .help(help.to_owned()),
                );
                None
            }
            Found::Value(v) => Some(v),
            Found::Missing(parent) => {
                self.report(
                    parent.start..parent.start.saturating_add(1),
                    Diagnostic::error(format!("missing config key `{path}`"))
                        .label("not in this object")
                        .help(help.to_owned()),
                );
                None
            }
        }
    }

    /// [`Reader::require`] of each of `keys` (each absent or `null`: reported, with `help`).
    pub(super) fn require_all(&mut self, keys: &[String], help: &str) {
        for key in keys {
            self.require(key, help);
        }
    }

    /// The non-negative integer at `value`, or an error naming `path`.
    pub(super) fn integer(&mut self, path: &str, value: &Value<'_>) -> Option<u64> {
        if let Value::NumberLit(n) = value
            && let Ok(v) = n.value.parse::<u64>()
        {
            return Some(v);
        }
        if past_u64(value) {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{path}` is past u64::MAX ({}), the largest figure read",
                    u64::MAX
                ))
                .label("past u64::MAX"),
            );
            return None;
        }
        self.report(
            span(value),
            Diagnostic::error(format!(
                "config key `{path}` must be a non-negative integer, found {}",
                describe(value)
            ))
            .label("not a non-negative integer"),
        );
        None
    }

    /// The span of the value at `key` (the object that lacks it, when missing).
    pub(super) fn key_span(&self, key: &str) -> Range<usize> {
        match self.find(key) {
            Found::Value(v) => span(v),
            Found::Missing(parent) => parent,
        }
    }

    /// Where an absent or null key is pointed at: the null, or the object that lacks it.
    pub(super) fn missing_span(&self, key: &str) -> Range<usize> {
        match self.find(key) {
            Found::Value(v) => span(v),
            Found::Missing(parent) => parent.start..parent.start.saturating_add(1),
        }
    }
}

/// Whether `value` is a non-negative integer (digits only) too large for u64.
pub(super) fn past_u64(value: &Value<'_>) -> bool {
    matches!(value, Value::NumberLit(n)
        if n.value.bytes().all(|b| b.is_ascii_digit()) && n.value.parse::<u64>().is_err())
}

/// The exact number a JSON number spells (`0.5` is one half, not the double nearest it);
/// `None` for any other value or a number with more digits than the exact arithmetic holds.
pub(super) fn number(value: &Value<'_>) -> Option<Exact> {
    match value {
        Value::NumberLit(n) => Exact::parse_decimal(n.value),
        _ => None,
    }
}

/// Python's truth of a JSON value, as a config class's `if config.<key>:` reads it: false for
/// `false`, `null`, a zero, `""`, `[]` and `{}`, true for anything else.
pub(super) fn truthy(value: &Value<'_>) -> bool {
    match value {
        Value::BooleanLit(b) => b.value,
        Value::NullKeyword(_) => false,
        Value::NumberLit(n) => Exact::parse_decimal(n.value).is_none_or(|v| v != Exact::int(0)),
        Value::StringLit(s) => !s.value.is_empty(),
        Value::Array(a) => !a.elements.is_empty(),
        Value::Object(o) => !o.properties.is_empty(),
    }
}

/// "a string", "a float", ... for error messages.
pub(super) fn describe(value: &Value<'_>) -> &'static str {
    match value {
        _ if past_u64(value) => "an integer past u64::MAX",
        Value::StringLit(_) => "a string",
        Value::NumberLit(n) if n.value.starts_with('-') => "a negative number",
        Value::NumberLit(_) => "a number that is not an integer",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "a list",
        Value::NullKeyword(_) => "null",
    }
}
