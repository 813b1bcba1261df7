//! What `fit` says when a budget answers nothing: a question no budget bounds (the search
//! reached the plan's own limit), and a budget too small for 0 or for 1 of the free input.
//!
//! Invariants: each refusal names the bytes it is about and what would answer instead, and is
//! located at the inputs file when it is the file's.

use metrale_circuit::load::diag::Diagnostic;

use super::super::report::FitAnswer;
use super::args::{FitArgs, Free};

/// The refusal of an answer the budget does not bound: the search reached the plan's own
/// limit (one more cannot be planned, its sizes past u64) with the budget still unspent, so
/// nothing in the plan grows with the free input and the "answer" would be that limit.
pub(super) fn unbounded(args: &FitArgs, answer: &FitAnswer) -> Diagnostic {
    let free = args.free.name();
    let d = Diagnostic::error(format!(
        "`--for {free}` has no answer: no budget bounds it, the plan's device bytes are {} B at \
         {} {free} and one more cannot be planned (its sizes pass u64)",
        answer.fit.device_bytes, answer.fit.value
    ));
    let d = match args.free {
        Free::KvBlocks => d.note(
            "no state of the checkpoint is kept per KV block: its KV (if any) does not grow \
             with the pool's `blocks`",
        ),
        Free::Sequences => d.note(format!(
            "no state of the checkpoint grows with the sequences at `--context {}`",
            args.context.unwrap_or(0)
        )),
    };
    let d = d.help("fit the input the checkpoint's states grow with (`--for kv-blocks` or `--for sequences --context TOKENS`)");
    match &args.inputs {
        Some(path) => d.in_file(path),
        None => d,
    }
}

/// Why `budget` holds nothing: even 0 needs `needs` device bytes (`empty` `None`), or 0 takes
/// `empty` and 1 needs `needs` (`u64::MAX`: the plan of one could not be made).
pub(super) fn budget_refused(
    args: &FitArgs,
    budget: u64,
    empty: Option<u64>,
    needs: u64,
) -> Diagnostic {
    let Some(empty) = empty else {
        return Diagnostic::error(format!(
            "a budget of {budget} bytes is too small: even 0 {} need {needs} device bytes",
            args.free.name()
        ))
        .help(format!(
            "the smallest budget that fits anything is {needs} bytes"
        ));
    };
    let one = match args.free {
        Free::KvBlocks => "KV block",
        Free::Sequences => "sequence",
    };
    if needs == u64::MAX {
        let lower = match args.free {
            Free::KvBlocks => "the counts of the inputs".to_owned(),
            Free::Sequences => format!("`--context {}`", args.context.unwrap_or(0)),
        };
        return Diagnostic::error(format!(
            "no budget holds one {one}: the plan of one overflows u64 (0 take {empty} device \
             bytes)"
        ))
        .help(format!("lower {lower}"));
    }
    Diagnostic::error(format!(
        "a budget of {budget} bytes holds no {one}: 0 take {empty} device bytes, 1 needs {needs}"
    ))
    .help(format!(
        "the smallest budget that serves one is {needs} bytes ({} more)",
        needs.saturating_sub(budget)
    ))
}
