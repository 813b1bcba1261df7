//! A plan error blamed on the input that caused it, as a located diagnostic
//! ([`located_plan_error`], [`plan_error`]): a missing format key or window at the inputs that
//! lack it, and an overflow at the alignment (`--align`) or at the one count of the inputs file
//! that made it ([`overflow_cause`], found by planning again with that one input at its
//! smallest), rather than at "the counts".
//!
//! Invariants:
//! - A cause is named only when changing that one input alone makes the plan stop overflowing;
//!   otherwise there is no cause (the sum of several inputs, or the circuit's own sizes).
//! - The counts are tried in the inputs file's order (`slots`, `[verify]`, `[kv]`,
//!   `[draft_kv]`, `[caches]`), so the first named is the first written.
//! - Without an inputs file, the help names the built-in default inputs
//!   ([`DEFAULT_INPUTS`]), whichever built-in inputs the command read.

use metrale_circuit::dynamic::{DynamicPlan, Section, StateDecl};
use metrale_circuit::inputs::HSteps;
use metrale_circuit::load::InputsFile;
use metrale_circuit::load::diag::Diagnostic;
use metrale_circuit::{PlanError, StateInputs};

use super::request::{DEFAULT_INPUTS, Request};

/// A plan error of `decls` under `inputs` as a located diagnostic: [`plan_error`], a missing
/// window at the inputs' `[kv]` (or `[draft_kv]`) table that lacks the window keys, an
/// overflow at the input that alone caused it (`--align`, or a count of the inputs file:
/// [`overflow_cause`]).
pub fn located_plan_error(
    error: &PlanError<String>,
    request: &Request,
    inputs: &InputsFile,
    decls: &[StateDecl],
) -> Diagnostic {
    let diagnostic = plan_error(error, request);
    let align = request.align;
    match error {
        PlanError::Overflow { state } => {
            let view = inputs.view();
            match overflow_cause(decls, &view.inputs(), align) {
                Some(Cause::Align) => Diagnostic::error(format!(
                    "the layout of state `{state}` overflows u64 at `--align {align}`"
                ))
                .note("the plan fits at `--align 1`: the alignment padding overflows")
                .help("lower `--align` (the default is 256)"),
                Some(Cause::Input(path)) => {
                    let key = key_name(path);
                    inputs.locate_key(
                        path,
                        Diagnostic::error(error.to_string())
                            .label("this count")
                            .note(format!("with {key} at 1 the plan fits"))
                            .help(format!("lower {key}")),
                    )
                }
                None => diagnostic,
            }
        }
        PlanError::MissingWindow { state } => {
            let section = if state.starts_with("draft.") {
                Section::Draft
            } else {
                Section::Main
            };
            inputs.locate_kv(section, diagnostic)
        }
        _ => diagnostic,
    }
}

/// A plan error as a diagnostic: a missing format key or window names the inputs file and how
/// to give it; any other error names the circuit file.
pub fn plan_error(error: &PlanError<String>, request: &Request) -> Diagnostic {
    let circuit = request.circuit.as_str();
    let diagnostic = Diagnostic::error(error.to_string());
    match error {
        PlanError::MissingFormat { key, .. } => {
            let give = format!("`{key} = \"<dtype>\"` (e.g. \"bf16\")");
            match request.inputs_file() {
                Some(path) => diagnostic
                    .in_file(path)
                    .help(format!("add {give} to the `[formats]` table of `{path}`")),
                None => diagnostic.help(format!(
                    "the {} do not give it: pass `--inputs FILE` whose `[formats]` table has \
                     {give}",
                    DEFAULT_INPUTS.name
                )),
            }
        }
        PlanError::MissingVerify { .. } => diagnostic.in_file(circuit).help(
            "declare `verify = \"h_steps\"` or `verify = \"conv_steps\"` on the state, or drop \
             `[verify]` from the inputs",
        ),
        PlanError::Overflow { .. } => diagnostic
            .in_file(circuit)
            .help("the inputs are too large for this state: lower the counts of the inputs"),
        PlanError::MissingOwner { owner, .. } => diagnostic.in_file(circuit).help(format!(
            "split the layers so that the rank holding this layer holds `{owner}`'s too: \
             `pp_layers` under the inputs' `[parallel]`, or fewer pipeline ranks (`--pp`)"
        )),
        PlanError::MissingWindow { .. } => {
            let give = "`sequences`, `chunk_tokens` and `max_tokens`";
            match request.inputs_file() {
                Some(path) => diagnostic.in_file(path).help(format!(
                    "add {give} to the `[kv]` (or `[draft_kv]`) table of `{path}`"
                )),
                None => diagnostic.help(format!(
                    "the {} do not give them: pass `--inputs FILE` whose `[kv]` table has {give}",
                    DEFAULT_INPUTS.name
                )),
            }
        }
        _ => diagnostic.in_file(circuit),
    }
}

/// What made a plan overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The plan fits at alignment 1: `--align` made it overflow.
    Align,
    /// The plan fits with this inputs-file key (its table path) at its smallest.
    Input(&'static [&'static str]),
}

/// Every count of the inputs, as its key path in the inputs file.
const COUNTS: &[&[&str]] = &[
    &["slots"],
    &["verify", "h_steps"],
    &["verify", "conv_steps"],
    &["kv", "blocks"],
    &["kv", "block_size"],
    &["kv", "sequences"],
    &["kv", "chunk_tokens"],
    &["kv", "max_tokens"],
    &["draft_kv", "blocks"],
    &["draft_kv", "block_size"],
    &["draft_kv", "sequences"],
    &["draft_kv", "chunk_tokens"],
    &["draft_kv", "max_tokens"],
    &["caches", "prefix_snapshot_slots"],
    &["caches", "ring", "ring_slots"],
    &["caches", "ring", "seq_slots"],
    &["caches", "carry", "slots"],
    &["caches", "carry", "table_rows"],
    &["caches", "verify_table_rows"],
    &["caches", "capture_rows"],
    &["caches", "lookup", "sequences"],
    &["caches", "lookup", "history_tokens"],
    &["caches", "tree", "slots"],
    &["caches", "tree", "nodes"],
    &["caches", "drafts", "slots"],
    &["caches", "drafts", "positions"],
];

/// The input that alone made the plan of `decls` under `inputs` at `align` overflow, if one
/// did.
fn overflow_cause(decls: &[StateDecl], inputs: &StateInputs<'_>, align: u64) -> Option<Cause> {
    let overflows = |inputs: &StateInputs<'_>, align: u64| {
        matches!(
            DynamicPlan::new(decls, inputs, align),
            Err(PlanError::Overflow { .. })
        )
    };
    if !overflows(inputs, align) {
        return None;
    }
    if align > 1 && !overflows(inputs, 1) {
        return Some(Cause::Align);
    }
    COUNTS.iter().copied().find_map(|path| {
        let mut smallest = *inputs;
        (set_to_one(&mut smallest, path) && !overflows(&smallest, align))
            .then_some(Cause::Input(path))
    })
}

/// Sets the count at `path` to 1 (`h_steps`: one verify slot of one row); `false` when the
/// inputs do not have that count.
fn set_to_one(inputs: &mut StateInputs<'_>, path: &[&str]) -> bool {
    let slot: Option<&mut u64> = match path {
        ["slots"] => Some(&mut inputs.slots),
        ["verify", "h_steps"] => {
            let Some(verify) = &mut inputs.verify else {
                return false;
            };
            verify.h_steps = HSteps::Uniform { slots: 1, rows: 1 };
            return true;
        }
        ["verify", "conv_steps"] => inputs.verify.as_mut().map(|v| &mut v.conv_steps),
        [pool @ ("kv" | "draft_kv"), key] => {
            let kv = if *pool == "kv" {
                inputs.kv.as_mut()
            } else {
                inputs.draft_kv.as_mut()
            };
            kv.and_then(|kv| match *key {
                "blocks" => Some(&mut kv.blocks),
                "block_size" => Some(&mut kv.block_size),
                _ => kv.window.as_mut().and_then(|w| match *key {
                    "sequences" => Some(&mut w.sequences),
                    "chunk_tokens" => Some(&mut w.chunk_tokens),
                    "max_tokens" => Some(&mut w.max_tokens),
                    _ => None,
                }),
            })
        }
        ["caches", rest @ ..] => {
            let c = &mut inputs.caches;
            match rest {
                ["prefix_snapshot_slots"] => Some(&mut c.prefix_snapshot_slots),
                ["verify_table_rows"] => Some(&mut c.verify_table_rows),
                ["capture_rows"] => Some(&mut c.capture_rows),
                ["ring", "ring_slots"] => c.ring.as_mut().map(|r| &mut r.ring_slots),
                ["ring", "seq_slots"] => c.ring.as_mut().map(|r| &mut r.seq_slots),
                ["carry", "slots"] => c.carry.as_mut().map(|r| &mut r.slots),
                ["carry", "table_rows"] => c.carry.as_mut().map(|r| &mut r.table_rows),
                ["lookup", "sequences"] => c.lookup.as_mut().map(|r| &mut r.sequences),
                ["lookup", "history_tokens"] => c.lookup.as_mut().map(|r| &mut r.history_tokens),
                ["tree", "slots"] => c.tree.as_mut().map(|r| &mut r.slots),
                ["tree", "nodes"] => c.tree.as_mut().map(|r| &mut r.nodes),
                ["drafts", "slots"] => c.drafts.as_mut().map(|r| &mut r.slots),
                ["drafts", "positions"] => c.drafts.as_mut().map(|r| &mut r.positions),
                _ => None,
            }
        }
        _ => None,
    };
    match slot {
        Some(count) => {
            *count = 1;
            true
        }
        None => false,
    }
}

/// `[kv] blocks`, `slots`, `[caches.ring] seq_slots`: how the inputs docs name a key path.
fn key_name(path: &[&str]) -> String {
    match path.split_last() {
        Some((key, [])) => format!("`{key}`"),
        Some((key, tables)) => format!("`[{}] {key}`", tables.join(".")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_path_names_a_count_of_the_full_inputs() {
        let text = include_str!("../../inputs/default.toml");
        let file = metrale_circuit::load::InputsFile::parse("default.toml", text).unwrap();
        let view = file.view();
        for path in COUNTS {
            let mut inputs = view.inputs();
            assert!(set_to_one(&mut inputs, path), "{path:?}");
            assert_ne!(inputs, view.inputs(), "{path:?} changed nothing");
        }
        assert_eq!(
            key_name(&["caches", "ring", "seq_slots"]),
            "`[caches.ring] seq_slots`"
        );
        assert_eq!(key_name(&["slots"]), "`slots`");
    }
}
