//! A plan error blamed on the input that caused it, as a located diagnostic
//! ([`located_plan_error`], [`plan_error`]): a missing format key or window at the inputs that
//! lack it, and an overflow (of a term or of the page pool) at the alignment (`--align`) or at
//! the counts of the inputs file that made it ([`overflow_cause`]: the file's
//! `InputsFile::overflow_cause`, its counts tried at 1), rather than at "the counts" or the
//! circuit.
//!
//! Invariants:
//! - A count is named alone only when setting it alone to 1 makes the plan stop overflowing;
//!   else the fewest counts that do together are named, each needed; else (the circuit's own
//!   sizes) none.
//! - The counts are tried in the order the inputs file writes them, so the first named is the
//!   first written; with `[serving]`, its keys and `[pool]`'s, not the counts derived from them.
//! - Without an inputs file, the help names the built-in default inputs
//!   ([`DEFAULT_INPUTS`]), whichever built-in inputs the command read.

use metrale_circuit::dynamic::{
    DynamicPlan,
    decl::{Section, StateDecl},
};
use metrale_circuit::load::diag::Diagnostic;
use metrale_circuit::load::{InputsFile, inputs_file::OverflowCause};
use metrale_circuit::serving::pages::PoolFault;
use metrale_circuit::{PlanError, StateInputs};

use super::request::{DEFAULT_INPUTS, Request};

/// A plan error of `decls` under `inputs` as a located diagnostic: [`plan_error`], a missing
/// window at the inputs' `[kv]` (or `[draft_kv]`) table that lacks the window keys, an
/// overflow (of a term or of the page pool) at the input that caused it (`--align`, or the
/// counts of the inputs file: [`overflow_cause`]).
pub fn located_plan_error(
    error: &PlanError<String>,
    request: &Request,
    inputs: &InputsFile,
    decls: &[StateDecl],
) -> Diagnostic {
    let diagnostic = plan_error(error, request);
    let align = request.align;
    match error {
        PlanError::Overflow { .. }
        | PlanError::Pool {
            fault: PoolFault::Overflow,
            ..
        } => match overflow_cause(decls, inputs, align) {
            Some(Cause::Align) => Diagnostic::error(format!(
                "the layout of state `{}` overflows u64 at `--align {align}`",
                error.state().map_or("?", String::as_str)
            ))
            .note("the plan fits at `--align 1`: the alignment padding overflows")
            .help("lower `--align` (the default is 256)"),
            Some(Cause::InputsFile(OverflowCause::Alone(path))) => {
                let key = key_name(path);
                inputs.locate_key(
                    path,
                    Diagnostic::error(error.to_string())
                        .label("this count")
                        .note(format!("with {key} at 1 the plan fits"))
                        .help(format!("lower {key}")),
                )
            }
            Some(Cause::InputsFile(OverflowCause::Together(paths))) => {
                let keys: Vec<String> = paths.iter().map(|path| key_name(path)).collect();
                let all = and_list(&keys);
                inputs.locate_key(
                    paths[0],
                    Diagnostic::error(error.to_string())
                        .label(format!("this count, with {}", and_list(&keys[1..])))
                        .note(format!(
                            "no one count alone: with {all} at 1 the plan fits, with any one of \
                             them as written it overflows"
                        ))
                        .help(format!("lower {all}")),
                )
            }
            None => diagnostic,
        },
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The plan fits at alignment 1: `--align` made it overflow.
    Align,
    /// Counts of the inputs file ([`InputsFile::overflow_cause`]).
    InputsFile(OverflowCause),
}

/// Whether `error` is an overflow: of a term's size or offset, or of the page pool's size.
fn is_overflow<S>(error: &PlanError<S>) -> bool {
    matches!(
        error,
        PlanError::Overflow { .. }
            | PlanError::Pool {
                fault: PoolFault::Overflow,
                ..
            }
    )
}

/// What made the plan of `decls` under `inputs` at `align` overflow, if the alignment or the
/// counts of the inputs file did.
fn overflow_cause(decls: &[StateDecl], inputs: &InputsFile, align: u64) -> Option<Cause> {
    let overflows = |inputs: &StateInputs<'_>, align: u64| {
        DynamicPlan::new(decls, inputs, align).is_err_and(|error| is_overflow(&error))
    };
    let view = inputs.view();
    if !overflows(&view.inputs(), align) {
        return None;
    }
    if align > 1 && !overflows(&view.inputs(), 1) {
        return Some(Cause::Align);
    }
    inputs
        .overflow_cause(|inputs| overflows(inputs, align))
        .map(Cause::InputsFile)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
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
    fn key_names_read_as_the_inputs_docs_write_them() {
        assert_eq!(
            key_name(&["caches", "ring", "seq_slots"]),
            "`[caches.ring] seq_slots`"
        );
        assert_eq!(
            key_name(&["serving", "kv", "tokens_per_sequence"]),
            "`[serving.kv] tokens_per_sequence`"
        );
        assert_eq!(key_name(&["slots"]), "`slots`");
    }
}
