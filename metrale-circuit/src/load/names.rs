//! The names the generated code needs: every rule a circuit must meet so that `metrale-codegen`
//! can spell it in Rust, checked here, located, so that `check`, `plan`, `gen`, the `Builder`
//! and the macro accept exactly the same circuits and the generator never fails on a loaded
//! one.
//!
//! Owner: metrale-circuit (feature `load`).
//! The generated module of arch `a` holds, besides types named after the circuit:
//! - `blocks` (a module per stateful block) and `units` (a function): a checkpoint's module
//!   may take neither name;
//! - a plan struct whose fields are `l<i>` per layer, `draft`, `arena` and the stateful prologue
//!   and epilogue blocks: such a block may not be called `draft`, `arena` or `l<digits>`;
//! - a type per layer kind (`<Kind>Layer`, and the `Layer::<Kind>` variant) and per stateful
//!   block (`<Block>Block`), named by [`camel_case`]: each must be a Rust identifier, and no two
//!   may be the same;
//! - a `Checkpoint` enum (and an `AnyPlan` enum) with a variant per checkpoint, named by
//!   [`camel_case`]: no two checkpoints may give the same variant;
//! - an enum per format key whose states declare layouts (`<Key>Format`, schema 3): no two
//!   keys may give the same name (a key's layouts, its variants, are checked where they are
//!   walked).
//!
//! Names the walk stages already hold to `[a-z][a-z0-9_]*` (arch, dims, blocks, states,
//! checkpoints, format keys) are identifiers and not keywords; layer kinds are any TOML key, so
//! they are checked here.

use super::raw::{RawBlock, Top};
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Sink, Text};

/// Fields of a generated plan besides the layers and the prologue and epilogue blocks.
const PLAN_FIELDS: [&str; 2] = ["draft", "arena"];
/// Items of the generated arch module a checkpoint's module would collide with.
pub(super) const ARCH_ITEMS: [&str; 2] = ["blocks", "units"];

/// `snake_case` as `CamelCase`: `linear_attention` -> `LinearAttention`, `bf16` -> `Bf16`. The
/// one case conversion: the generator names types, layer variants and the runtime enums'
/// variants with it, and this module checks the names it gives.
#[must_use]
pub fn camel_case(snake: &str) -> String {
    let mut camel = String::with_capacity(snake.len());
    for part in snake.split('_') {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            camel.extend(first.to_uppercase());
            camel.push_str(chars.as_str());
        }
    }
    camel
}

/// Every rule above, for the circuit's top level and its (unique) blocks.
pub(crate) fn check(sink: &mut Sink, top: &Top, blocks: &[&RawBlock]) {
    let stateful = |name: &str| {
        blocks
            .iter()
            .any(|b| b.name.text == name && !b.states.is_empty())
    };
    for name in top.prologue.iter().chain(&top.epilogue) {
        if stateful(&name.text)
            && (PLAN_FIELDS.contains(&name.text.as_str()) || is_layer_field(&name.text))
        {
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "block `{}` cannot be a field of the generated plan: the name is taken",
                    name.text
                ))
                .label("a field of every plan already")
                .help("the plan's fields are `l<i>` for layers, `draft`, `arena`, and the prologue and epilogue blocks: rename the block"),
            );
        }
    }
    for checkpoint in &top.checkpoints {
        if ARCH_ITEMS.contains(&checkpoint.name.text.as_str()) {
            sink.report(
                &checkpoint.name.loc,
                Diagnostic::error(format!(
                    "checkpoint `{}` cannot be a module of the generated code: the name is taken",
                    checkpoint.name.text
                ))
                .label("taken by the generated code")
                .help("the generated module holds `blocks` (the unit functions) and `units`: rename the checkpoint"),
            );
        }
    }
    let mut variants: Vec<(&Text, String)> = Vec::new();
    for checkpoint in &top.checkpoints {
        let name = &checkpoint.name;
        let variant = camel_case(&name.text);
        if let Some((first, _)) = variants.iter().find(|(_, v)| *v == variant) {
            let place = sink.place(&first.loc);
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "checkpoints `{}` and `{}` both become the variant `Checkpoint::{variant}`",
                    name.text, first.text
                ))
                .label("same variant name")
                .note(format!("`{}` is at {place}", first.text))
                .help("rename one of them"),
            );
        } else {
            variants.push((name, variant));
        }
    }
    format_enums(sink, blocks);
    let layer_kinds = top
        .layout
        .iter()
        .flat_map(|layout| layout.blocks.iter().map(|(kind, _)| (kind, "Layer")));
    let stateful_blocks = blocks
        .iter()
        .filter(|b| !b.states.is_empty())
        .map(|b| (&b.name, "Block"));
    let mut types: Vec<(&Text, String)> = Vec::new();
    for (name, suffix) in layer_kinds.chain(stateful_blocks) {
        let camel = camel_case(&name.text);
        if !is_type_name(&camel) {
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "`{}` cannot name a Rust type (`{camel}{suffix}` is generated from it)",
                    name.text
                ))
                .label("not a name Rust can spell")
                .help("use lowercase letters, digits and `_`, starting with a letter"),
            );
            continue;
        }
        let ty = camel + suffix;
        if let Some((first, _)) = types.iter().find(|(_, t)| *t == ty) {
            let place = sink.place(&first.loc);
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "`{}` and `{}` both become the type `{ty}`",
                    name.text, first.text
                ))
                .label("same type name")
                .note(format!("`{}` is at {place}", first.text))
                .help("rename one of them"),
            );
        } else {
            types.push((name, ty));
        }
    }
}

/// No two format keys whose states declare layouts give the same `<Key>Format` enum.
fn format_enums(sink: &mut Sink, blocks: &[&RawBlock]) {
    let mut formats: Vec<(&str, String)> = Vec::new();
    for state in blocks.iter().flat_map(|b| &b.states) {
        let (Some(crate::model::StateFormat::Keyed(key)), Some(at)) =
            (&state.format, &state.layouts_key)
        else {
            continue;
        };
        let ty = format!("{}Format", camel_case(key));
        match formats.iter().find(|(_, t)| *t == ty) {
            Some((first, _)) if first != key => sink.report(
                at,
                Diagnostic::error(format!(
                    "format keys `{key}` and `{first}` both become the type `{ty}`"
                ))
                .label("same type name")
                .help("rename one of the keys"),
            ),
            Some(_) => {}
            None => formats.push((key, ty)),
        }
    }
}

/// `l<digits>`: the name of a layer's field.
fn is_layer_field(name: &str) -> bool {
    name.strip_prefix('l')
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
}

/// An ASCII `CamelCase` identifier that is not `Self` (the only keyword that starts upper case).
fn is_type_name(camel: &str) -> bool {
    camel.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && camel.chars().all(|c| c.is_ascii_alphanumeric())
        && camel != "Self"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_names() {
        assert_eq!(camel_case("linear_attention"), "LinearAttention");
        assert_eq!(camel_case("qwen3_attention"), "Qwen3Attention");
        assert_eq!(camel_case("bf16"), "Bf16");
        assert_eq!(camel_case("a__b"), "AB");
    }

    #[test]
    fn which_names_can_be_types() {
        assert!(is_type_name("LinearAttention"));
        assert!(is_type_name("Qwen3"));
        assert!(!is_type_name("Full-attention"));
        assert!(!is_type_name("2x"));
        assert!(!is_type_name(""));
        assert!(!is_type_name("Self"));
        assert!(is_layer_field("l0") && is_layer_field("l127"));
        assert!(!is_layer_field("l") && !is_layer_field("lm_head"));
    }
}
