//! The little JSON the schemas are made of: a value ([`Json`]) and its one text form, so the
//! loader writes a schema without a JSON crate (the runtime's `load` feature pulls in `toml` and
//! `strsim` only).
//!
//! Owner: metrale-circuit (feature `schema`). Strings are quoted by `load::text::quote`.
//! Invariants:
//! - An object keeps its keys in the order built: the same value always prints the same text.
//! - The text is valid JSON (RFC 8259): strings are escaped (`"`, `\`, every control character),
//!   numbers are non-negative integers; nothing panics.
//! - The layout is fixed: two spaces an indent, an object's entries one a line, an array of
//!   scalars on one line (an enum reads as one list), other arrays one item a line.

use std::fmt::Write as _;

use crate::load::text::quote::write_quoted;

/// A JSON value: what a JSON Schema needs (no floats, no negative numbers, no null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Json {
    /// `true` or `false`, also the schemas that accept everything or nothing.
    Bool(bool),
    /// A non-negative integer.
    Int(u64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, its keys in the order written.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// A string.
    pub(super) fn str(s: &str) -> Json {
        Json::Str(s.to_owned())
    }

    /// An array of strings.
    pub(super) fn strs<'a>(items: impl IntoIterator<Item = &'a str>) -> Json {
        Json::Arr(items.into_iter().map(Json::str).collect())
    }

    /// An object of `entries`.
    pub(super) fn obj<const N: usize>(entries: [(&str, Json); N]) -> Json {
        Json::Obj(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// A count as a JSON integer (a `usize` always fits a `u64` here; saturating otherwise).
    pub(super) fn count(n: usize) -> Json {
        Json::Int(u64::try_from(n).unwrap_or(u64::MAX))
    }

    /// Adds `key: value` to an object (a value of another type is left as it is).
    pub(super) fn with(mut self, key: &str, value: Json) -> Json {
        if let Json::Obj(entries) = &mut self {
            entries.push((key.to_owned(), value));
        }
        self
    }

    /// Puts `key: value` first in an object (a description reads before the rest).
    pub(super) fn first(mut self, key: &str, value: Json) -> Json {
        if let Json::Obj(entries) = &mut self {
            entries.insert(0, (key.to_owned(), value));
        }
        self
    }

    /// Whether this is a string, an integer or a boolean.
    fn is_scalar(&self) -> bool {
        matches!(self, Json::Bool(_) | Json::Int(_) | Json::Str(_))
    }

    /// The text of the value, ending in a newline.
    pub(super) fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    /// Writes the value at indent level `depth`.
    fn write(&self, out: &mut String, depth: usize) {
        match self {
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Json::Str(s) => write_quoted(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) if items.iter().all(Json::is_scalar) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write(out, depth);
                }
                out.push(']');
            }
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    indent(out, depth + 1);
                    item.write(out, depth + 1);
                }
                out.push('\n');
                indent(out, depth);
                out.push(']');
            }
            Json::Obj(entries) if entries.is_empty() => out.push_str("{}"),
            Json::Obj(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    indent(out, depth + 1);
                    write_quoted(out, key);
                    out.push_str(": ");
                    value.write(out, depth + 1);
                }
                out.push('\n');
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

/// Two spaces per level.
fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_fixed_layout() {
        let value = Json::obj([
            ("a", Json::Int(1)),
            ("b", Json::strs(["x", "y"])),
            ("c", Json::Arr(vec![Json::obj([("d", Json::Bool(false))])])),
            ("e", Json::Obj(Vec::new())),
            ("f", Json::Arr(Vec::new())),
        ]);
        assert_eq!(
            value.to_text(),
            "{\n  \"a\": 1,\n  \"b\": [\"x\", \"y\"],\n  \"c\": [\n    {\n      \"d\": false\n    }\n  ],\n  \"e\": {},\n  \"f\": []\n}\n"
        );
    }

    #[test]
    fn escapes_strings() {
        let value = Json::str("a\"b\\c\nd\u{1}é^\\s");
        assert_eq!(value.to_text(), "\"a\\\"b\\\\c\\nd\\u0001é^\\\\s\"\n");
    }

    #[test]
    fn with_and_first_only_touch_objects() {
        assert_eq!(Json::Int(3).with("k", Json::Int(1)), Json::Int(3));
        let o = Json::obj([("b", Json::Int(2))]).first("a", Json::Int(1));
        assert_eq!(o, Json::obj([("a", Json::Int(1)), ("b", Json::Int(2))]));
    }
}
