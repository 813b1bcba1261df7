//! The names the generated code needs: every rule a circuit must meet so that `metrale-codegen`
//! can spell it in Rust, checked here, located, so that `check`, `plan`, `gen`, the `Builder`
//! and the macro accept exactly the same circuits and the generator never fails on a loaded
//! one.
//!
//! Owner: metrale-circuit (feature `load`).
//! The generated module of arch `a` holds, besides types named after the circuit:
//! - `blocks` (a module per stateful block) and `units` (a function): a checkpoint's module
//!   may take neither name;
//! - a `Dims` struct whose methods are the derived dims and `on_tp`: a derived dim may not be
//!   called `on_tp`;
//! - a plan struct whose fields are `l<i>` per layer, the stateful prologue and epilogue blocks,
//!   and `draft`, `arena`, `pool`, `h_steps`: such a block may not be called one of those or
//!   `l<digits>`;
//! - a type per layer kind (`<Kind>Layer`, and the `Layer::<Kind>` variant) and per stateful
//!   block (`<Block>Block`), named by [`camel_case`]: each must be a Rust identifier, and no two
//!   may be the same;
//! - a `Checkpoint` enum (and an `AnyPlan` enum) with a variant per checkpoint, named by
//!   [`camel_case`]: no two checkpoints may give the same variant, nor `Checkpoint::ALL`;
//! - an enum per format key whose states declare packings (`<Key>Format`, schema 3): no two
//!   keys may give the same name (a key's packings, its variants, are checked where they are
//!   walked, against [`reserved::FORMAT_ITEMS`] too).
//!
//! The fixed names among these are [`reserved`]'s, the one list the generator spells them from
//! (and which `metrale-codegen`'s tests hold complete against its output).
//!
//! Names the walk stages already hold to `[a-z][a-z0-9_]*` (arch, dims, blocks, states,
//! checkpoints, format keys) are identifiers and not keywords; layer kinds are any TOML key, so
//! they are checked here.

use super::raw::{RawBlock, Top};
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Sink, Text};
pub use crate::model::is_snake_identifier;

pub mod reserved {
    //! The names the generated code defines on its types beside those a circuit gives them:
    //! the one list the generator (`metrale-codegen`) spells them from and the loader refuses a
    //! circuit's names against, type by type.
    //!
    //! Only names a circuit's name could meet are listed: a field and a method of one name are
    //! legal Rust (`StatePlan::arena()` beside the field `arena`), and a snake-case method never
    //! meets a camel-case variant; two fields, two methods, or a variant and an associated item
    //! of one name are collisions (the variant hides the item).

    /// `Dims::on_tp`: the dims of one tensor-parallel rank.
    pub const ON_TP: &str = "on_tp";
    /// The methods of the generated `Dims` besides the derived dims (each a method too): no
    /// derived dim may take one of these names. `Dims`'s other items are trait impls.
    pub const DIMS_METHODS: [&str; 1] = [ON_TP];

    /// `StatePlan::draft`: the draft head's blocks.
    pub const DRAFT: &str = "draft";
    /// `StatePlan::arena`: the arena sizes.
    pub const ARENA: &str = "arena";
    /// `StatePlan::pool`: the page pool under vLLM's policy.
    pub const POOL: &str = "pool";
    /// `StatePlan::h_steps`: the verify rows the plan was made with.
    pub const H_STEPS: &str = "h_steps";
    /// The fields of a checkpoint's generated `StatePlan` besides `l<i>` per layer and one per
    /// stateful prologue and epilogue block: no such block may take one of these names.
    pub const PLAN_FIELDS: [&str; 4] = [DRAFT, ARENA, POOL, H_STEPS];

    /// `Checkpoint::ALL`: every checkpoint, in file order.
    pub const ALL: &str = "ALL";
    /// The associated items of the generated `Checkpoint` and `AnyPlan` a variant (a
    /// checkpoint's camel-case name) could meet: no checkpoint may give one of these variants.
    pub const CHECKPOINT_ITEMS: [&str; 1] = [ALL];

    /// `<Key>Format::Dtype`: the variant of a dtype.
    pub const DTYPE: &str = "Dtype";
    /// `<Key>Format::EXPECTED`: what the key may hold, as `MissingFormat` says it.
    pub const EXPECTED: &str = "EXPECTED";
    /// The variants and associated items of a generated `<Key>Format` besides a variant per
    /// layout (its camel-case name): no layout may give one of these variants.
    pub const FORMAT_ITEMS: [&str; 2] = [DTYPE, EXPECTED];

    /// The module of the unit functions.
    pub const BLOCKS: &str = "blocks";
    /// The function giving every unit of a plan.
    pub const UNITS: &str = "units";
    /// The items of the generated arch module a checkpoint's module would meet: no checkpoint
    /// may take one of these names.
    pub const ARCH_ITEMS: [&str; 2] = [BLOCKS, UNITS];
}

use reserved::{ARCH_ITEMS, CHECKPOINT_ITEMS, DIMS_METHODS, PLAN_FIELDS};

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
    derived_dims(sink, top);
    plan_fields(sink, top, blocks);
    checkpoints(sink, top);
    format_enums(sink, blocks);
    types(sink, top, blocks);
}

/// No derived dim (a method of `Dims`) takes one of `Dims`'s other methods.
fn derived_dims(sink: &mut Sink, top: &Top) {
    for derived in &top.derived {
        let name = &derived.name;
        if DIMS_METHODS.contains(&name.text.as_str()) {
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "derived dim `{}` cannot be a method of the generated `Dims`: the name is taken",
                    name.text
                ))
                .label("taken by the generated code")
                .help(format!(
                    "each derived dim becomes a method of `Dims`, which also defines {}: rename the derived dim",
                    listed(&DIMS_METHODS)
                )),
            );
        }
    }
}

/// No stateful prologue or epilogue block (a field of every plan) takes one of the plan's
/// other fields.
fn plan_fields(sink: &mut Sink, top: &Top, blocks: &[&RawBlock]) {
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
                .help(format!(
                    "the plan's fields are `l<i>` for layers, the prologue and epilogue blocks, and {}: rename the block",
                    listed(&PLAN_FIELDS)
                )),
            );
        }
    }
}

/// No checkpoint (a module, and a variant of `Checkpoint` and `AnyPlan`) takes one of the
/// arch module's items, one of the enums' items, or another checkpoint's variant.
fn checkpoints(sink: &mut Sink, top: &Top) {
    for checkpoint in &top.checkpoints {
        if ARCH_ITEMS.contains(&checkpoint.name.text.as_str()) {
            sink.report(
                &checkpoint.name.loc,
                Diagnostic::error(format!(
                    "checkpoint `{}` cannot be a module of the generated code: the name is taken",
                    checkpoint.name.text
                ))
                .label("taken by the generated code")
                .help(format!(
                    "the generated module holds {}: rename the checkpoint",
                    listed(&ARCH_ITEMS)
                )),
            );
        }
    }
    let mut variants: Vec<(&Text, String)> = Vec::new();
    for checkpoint in &top.checkpoints {
        let name = &checkpoint.name;
        let variant = camel_case(&name.text);
        if CHECKPOINT_ITEMS.contains(&variant.as_str()) {
            sink.report(
                &name.loc,
                Diagnostic::error(format!(
                    "checkpoint `{}` becomes the variant `Checkpoint::{variant}`, which the generated code takes",
                    name.text
                ))
                .label("taken by the generated code")
                .help(format!(
                    "`Checkpoint` and `AnyPlan` also define {}: rename the checkpoint",
                    listed(&CHECKPOINT_ITEMS)
                )),
            );
        } else if let Some((first, _)) = variants.iter().find(|(_, v)| *v == variant) {
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
}

/// Each layer kind and stateful block names a Rust type, and no two the same.
fn types(sink: &mut Sink, top: &Top, blocks: &[&RawBlock]) {
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

/// No two format keys whose states declare packings give the same `<Key>Format` enum.
fn format_enums(sink: &mut Sink, blocks: &[&RawBlock]) {
    let mut formats: Vec<(&str, String)> = Vec::new();
    for state in blocks.iter().flat_map(|b| &b.states) {
        let (Some(crate::model::StateFormat::Keyed(key)), Some(at)) =
            (&state.format, &state.packings_key)
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

/// `names` as a list for a help line: "`a`, `b` and `c`".
pub(super) fn listed(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => "nothing".to_owned(),
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
