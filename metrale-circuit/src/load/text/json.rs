//! The JSON both readers of JSON files share (features `config` and `weights`): the strict
//! parse options, and the names and byte spans of jsonc-parser's tree.
//!
//! Owner: metrale-circuit (features `config`, `weights`).
//! Invariants: strict means JSON as `json.loads` and safetensors read it: no comments,
//! trailing commas, JSON5 spellings or loose property names; only the non-finite numbers
//! Python writes may be allowed, by the caller.

use std::ops::Range;

use jsonc_parser::ParseOptions;
use jsonc_parser::ast::{ObjectPropName, Value};

/// Strict JSON's parse options; `non_finite` allows `NaN` and `Infinity` (Python's `json`
/// writes them for non-finite floats).
pub(crate) fn strict_options(non_finite: bool) -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: non_finite,
        allow_extended_string_escapes: false,
    }
}

/// A property's name.
pub(crate) fn prop_name<'n>(name: &'n ObjectPropName<'_>) -> &'n str {
    match name {
        ObjectPropName::String(s) => &s.value,
        ObjectPropName::Word(w) => w.value,
    }
}

/// A property name's byte span.
pub(crate) fn prop_span(name: &ObjectPropName<'_>) -> Range<usize> {
    match name {
        ObjectPropName::String(s) => s.range.start..s.range.end,
        ObjectPropName::Word(w) => w.range.start..w.range.end,
    }
}

/// A value's byte span.
pub(crate) fn span(value: &Value<'_>) -> Range<usize> {
    let range = match value {
        Value::StringLit(v) => v.range,
        Value::NumberLit(v) => v.range,
        Value::BooleanLit(v) => v.range,
        Value::Object(v) => v.range,
        Value::Array(v) => v.range,
        Value::NullKeyword(v) => v.range,
    };
    range.start..range.end
}
