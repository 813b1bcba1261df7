//! Walking one parsed TOML file: the spanned-tree helpers every other loader stage uses.
//!
//! This module owns [`Walk`] (the file being walked and the sink its errors go to), the typed
//! accessors over `toml`'s spanned tree (`string`, `u64`, `table`, `array`, `strings`), the
//! unknown-key check, the identifier rule for names that become Rust identifiers, and the
//! mapping of a byte offset inside a string value back into the file ([`StrAt`]).
//!
//! Invariants:
//! - Nothing here panics on any input: every lookup is by key or iterator, integers are parsed
//!   with checked conversions, and spans are handed to [`crate::diag`], which clamps them.
//! - Each accessor reports at most one error per value it refuses, located at that value, and
//!   returns `None` (or skips the item) so the caller can go on and collect every error.

use std::ops::Range;

use ::toml::Spanned;
use ::toml::de::{DeTable, DeValue};

use super::{Loc, Sink};
use crate::diag::Diagnostic;
use crate::is_snake_identifier;

/// A table of the spanned tree.
pub(crate) type Table<'i> = DeTable<'i>;
/// A spanned value of the spanned tree.
pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// Every Rust keyword, strict and reserved, in every edition: none may name a generated item.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// A string read from a file, with where it was written.
#[derive(Debug, Clone)]
pub(crate) struct Text {
    /// The decoded string.
    pub text: String,
    /// The span of the value (quotes included) or of the key.
    pub loc: Loc,
}

/// Where a string value sits in its file, to point inside it.
#[derive(Debug, Clone)]
pub(crate) struct StrAt {
    /// The whole value, quotes included.
    pub loc: Loc,
    /// The byte offset in the file of the string's first char, when every byte of the decoded
    /// string is the same byte of the file (a one-line string without escapes).
    pub content: Option<usize>,
}

impl StrAt {
    /// The file span of `len` bytes at byte `offset` of the decoded string, or the whole value
    /// when offsets do not map one to one.
    pub fn inner(&self, offset: usize, len: usize) -> Loc {
        match self.content {
            Some(start) => {
                let begin = start.saturating_add(offset);
                Loc {
                    file: self.loc.file,
                    span: begin..begin.saturating_add(len),
                }
            }
            None => self.loc.clone(),
        }
    }
}

/// One file being walked: its index in the sink and the sink its errors go to.
pub(crate) struct Walk<'a> {
    /// Where every error goes.
    pub sink: &'a mut Sink,
    /// The file's index in [`Sink::files`].
    pub file: usize,
}

impl Walk<'_> {
    /// The location of `span` in this file.
    pub fn loc(&self, span: Range<usize>) -> Loc {
        Loc {
            file: self.file,
            span,
        }
    }

    /// Locates `diagnostic` at `span` of this file and records it.
    pub fn report(&mut self, span: Range<usize>, diagnostic: Diagnostic) {
        let loc = self.loc(span);
        self.sink.report(&loc, diagnostic);
    }

    /// `path:line:col` of `span`'s start in this file.
    pub fn place(&self, span: Range<usize>) -> String {
        self.sink.place(&self.loc(span))
    }

    /// A [`Text`] of `text` at `span` of this file.
    pub fn text(&self, text: &str, span: Range<usize>) -> Text {
        Text {
            text: text.to_owned(),
            loc: self.loc(span),
        }
    }

    /// Where the string value at `span` sits, with the file offset of its first char when the
    /// decoded `decoded` maps one to one onto the file (a one-line basic or literal string
    /// without escapes).
    pub fn str_at(&self, span: Range<usize>, decoded: &str) -> StrAt {
        let raw = self
            .sink
            .files
            .get(self.file)
            .and_then(|f| f.text.get(span.clone()))
            .unwrap_or("");
        let one_to_one = !raw.starts_with("\"\"\"")
            && !raw.starts_with("'''")
            && (raw.starts_with('"') || raw.starts_with('\''))
            && raw.get(1..raw.len().saturating_sub(1)) == Some(decoded);
        StrAt {
            content: one_to_one.then(|| span.start.saturating_add(1)),
            loc: self.loc(span),
        }
    }

    /// Reports every key of `table` outside `allowed` ("unknown key `x` in `what`", with the
    /// valid keys and the nearest one).
    pub fn check_keys(&mut self, table: &Table<'_>, allowed: &[&str], what: &str) {
        for (key, _) in table {
            let name: &str = key.get_ref();
            if !allowed.contains(&name) {
                self.report(
                    key.span(),
                    Diagnostic::error(format!("unknown key `{name}` in {what}"))
                        .label("unknown key")
                        .expected_one_of("keys", name, allowed),
                );
            }
        }
    }

    /// The string of `value`, or an error naming `key` and the type found.
    pub fn string<'v>(&mut self, key: &str, value: &'v Value<'_>) -> Option<&'v str> {
        if let DeValue::String(s) = value.get_ref() {
            Some(s)
        } else {
            self.wrong_type(key, "a string", value);
            None
        }
    }

    /// The string of `value` as a [`Text`], or an error naming `key` and the type found.
    pub fn string_text(&mut self, key: &str, value: &Value<'_>) -> Option<Text> {
        let s = self.string(key, value)?;
        Some(self.text(s, value.span()))
    }

    /// The table of `value`, or an error naming `key` and the type found.
    pub fn table<'v, 'i>(&mut self, key: &str, value: &'v Value<'i>) -> Option<&'v Table<'i>> {
        if let DeValue::Table(t) = value.get_ref() {
            Some(t)
        } else {
            self.wrong_type(key, "a table", value);
            None
        }
    }

    /// The items of the array `value`, or an error naming `key` and the type found.
    pub fn array<'v, 'i>(&mut self, key: &str, value: &'v Value<'i>) -> Option<&'v [Value<'i>]> {
        if let DeValue::Array(a) = value.get_ref() {
            Some(a)
        } else {
            self.wrong_type(key, "an array", value);
            None
        }
    }

    /// The strings of the array `value`: each item that is not a string is reported and
    /// skipped. `None` (reported) when `value` is not an array.
    pub fn strings(&mut self, key: &str, value: &Value<'_>) -> Option<Vec<Text>> {
        let items = self.array(key, value)?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if let DeValue::String(s) = item.get_ref() {
                out.push(self.text(s, item.span()));
            } else {
                let found = type_name(item.get_ref());
                self.report(
                    item.span(),
                    Diagnostic::error(format!(
                        "each item of `{key}` must be a string, found {found}"
                    ))
                    .label("not a string"),
                );
            }
        }
        Some(out)
    }

    /// The non-negative integer of `value`, or an error (wrong type, negative, too large).
    pub fn u64(&mut self, key: &str, value: &Value<'_>) -> Option<u64> {
        let DeValue::Integer(int) = value.get_ref() else {
            self.wrong_type(key, "an integer", value);
            return None;
        };
        if let Ok(n) = u64::from_str_radix(int.as_str(), int.radix()) {
            return Some(n);
        }
        let message = if int.as_str().starts_with('-') {
            format!("`{key}` must not be negative")
        } else {
            format!("`{key}` is too large (at most {})", u64::MAX)
        };
        self.report(
            value.span(),
            Diagnostic::error(message).label("out of range"),
        );
        None
    }

    /// Reports "`key` must be `expected`, found a ...".
    pub fn wrong_type(&mut self, key: &str, expected: &str, value: &Value<'_>) {
        let found = type_name(value.get_ref());
        self.report(
            value.span(),
            Diagnostic::error(format!("`{key}` must be {expected}, found {found}"))
                .label(format!("expected {expected}")),
        );
    }

    /// Checks that `name` may become a Rust identifier (lower snake case, not a keyword);
    /// reports at `span` otherwise. `what` names the item ("dim", "block name").
    pub fn identifier(&mut self, name: &str, span: Range<usize>, what: &str) -> bool {
        if !is_snake_identifier(name) {
            self.report(
                span,
                Diagnostic::error(format!("invalid {what} `{name}`: not lower snake case"))
                    .label("not lower snake case")
                    .help(format!(
                        "the {what} becomes a Rust identifier: use `[a-z][a-z0-9_]*`"
                    )),
            );
            return false;
        }
        if RUST_KEYWORDS.contains(&name) {
            self.report(
                span,
                Diagnostic::error(format!("invalid {what} `{name}`: a Rust keyword"))
                    .label("a Rust keyword")
                    .help(format!(
                        "the {what} becomes a Rust identifier: e.g. `{name}_`"
                    )),
            );
            return false;
        }
        true
    }
}

/// The value of `key` in `table`, with the key's span.
pub(crate) fn field<'t, 'i>(
    table: &'t Table<'i>,
    key: &str,
) -> Option<(Range<usize>, &'t Value<'i>)> {
    table.get_key_value(key).map(|(k, v)| (k.span(), v))
}

/// "a string", "an integer", ... for `value`.
pub(crate) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The first byte offset at which `key` or its value (or anything inside it) is written: where
/// an item made of several tables (a block split over `[[block.x.state]]` headers) first appears.
pub(crate) fn first_offset(key: Range<usize>, value: &Value<'_>) -> usize {
    let mut first = key.start.min(value.span().start);
    let mut stack: Vec<&Value<'_>> = vec![value];
    while let Some(v) = stack.pop() {
        first = first.min(v.span().start);
        match v.get_ref() {
            DeValue::Table(t) => {
                for (k, child) in t {
                    first = first.min(k.span().start);
                    stack.push(child);
                }
            }
            DeValue::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    first
}
