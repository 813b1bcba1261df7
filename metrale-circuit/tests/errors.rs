//! Every public error type of the runtime and the loader is a `std::error::Error` with a
//! message: `?` takes each into `Box<dyn Error>` (checked at compile time), and the messages of
//! the faults a caller names itself (`SizeFault`, `PoolFault`, `FormatError`) read as written
//! here.

use std::error::Error;

use metrale_circuit::alloc::AllocError;
use metrale_circuit::dynamic::decl::FormatError;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::shape::{EvalError, ShapeSyntaxError};
use metrale_circuit::load::text::{ReadFailure, read_source};
use metrale_circuit::parallel::{ParallelError, RankError, ShardFault, StageFault};
use metrale_circuit::serving::{
    Disagreement, FitError, GpuShortfall,
    pages::PoolFault,
    registry::{DimsError, RegistryError},
};
use metrale_circuit::units::ViewError;
use metrale_circuit::{MissingFormat, PlanError, SizeFault};

/// `?` of an `Err(error)` in a function returning `Box<dyn Error>`: compiles only when `E` is
/// an `Error + 'static`.
fn question_mark<E: Error + 'static>(error: E) -> Result<(), Box<dyn Error>> {
    Err(error)?;
    Ok(())
}

/// Monomorphized for each type, so each must be an `Error`; never run.
#[allow(dead_code)]
fn every_public_error_takes_question_mark() -> Result<(), Box<dyn Error>> {
    fn given<T>() -> T {
        unreachable!("compile-time check only")
    }
    question_mark(given::<SizeFault>())?;
    question_mark(given::<PoolFault>())?;
    question_mark(given::<FormatError>())?;
    question_mark(given::<PlanError>())?;
    question_mark(given::<PlanError<String>>())?;
    question_mark(given::<MissingFormat>())?;
    question_mark(given::<ViewError>())?;
    question_mark(given::<AllocError>())?;
    question_mark(given::<RegistryError>())?;
    question_mark(given::<DimsError>())?;
    question_mark(given::<Disagreement>())?;
    question_mark(given::<GpuShortfall>())?;
    question_mark(given::<FitError<PlanError>>())?;
    question_mark(given::<FitError<PlanError<String>>>())?;
    question_mark(given::<StageFault>())?;
    question_mark(given::<ShardFault>())?;
    question_mark(given::<ParallelError>())?;
    question_mark(given::<RankError<PlanError>>())?;
    question_mark(given::<RankError<FitError<PlanError>>>())?;
    question_mark(given::<Diagnostic>())?;
    question_mark(given::<Diagnostics>())?;
    question_mark(given::<ReadFailure>())?;
    question_mark(given::<EvalError>())?;
    question_mark(given::<ShapeSyntaxError>())?;
    Ok(())
}

#[test]
fn a_size_fault_says_what_went_wrong() {
    let messages: Vec<(SizeFault, &str)> = vec![
        (SizeFault::Overflow, "a size overflows u64"),
        (
            SizeFault::MissingVerify,
            "verify inputs were given but the recurrent state declares no `verify`",
        ),
        (
            SizeFault::DivisionByZero,
            "a shape divides by a dim that is zero",
        ),
        (
            SizeFault::Negative,
            "a shape is below zero under these dims",
        ),
        (
            SizeFault::MissingWindow,
            "a KV side keeps a sliding window, an attention chunk or a fixed token count per \
             sequence, but the KV inputs give no `sequences`, `chunk_tokens` and `max_tokens`",
        ),
    ];
    for (fault, message) in messages {
        assert_eq!(fault.to_string(), message);
        // Through `?`, as an engine's `main` would see it.
        let boxed = question_mark(fault).unwrap_err();
        assert_eq!(boxed.to_string(), message);
    }
}

#[test]
fn a_pool_fault_and_a_format_error_say_what_went_wrong() {
    assert_eq!(
        PoolFault::MixedAttention { first: 0, other: 3 }.to_string(),
        "under the vLLM page pool every attention layer must keep the same bytes per token, and \
         the pool's layer 3 keeps other bytes than its layer 0"
    );
    assert_eq!(
        PoolFault::ZeroWindow.to_string(),
        "a sliding window or attention chunk of 0 tokens"
    );
    assert_eq!(
        FormatError::BadKey("KV".to_owned()).to_string(),
        "format key `KV` is not a valid key (lower snake case: `[a-z][a-z0-9_]*`)"
    );
    assert_eq!(
        FormatError::UnknownDtype("f33".to_owned()).to_string(),
        "unknown format `f33`: neither a dtype nor `{key}`"
    );
}

#[test]
fn a_wrapper_passes_its_errors_source_on_not_the_error_it_prints() {
    // `RankError::Plan` prints the plan error's message as its own: a report walking the
    // sources must not print it again.
    let error: RankError<PlanError> = RankError::Plan(PlanError::Overflow { state: "l0.attn.k" });
    assert_eq!(
        error.to_string(),
        "the size of state `l0.attn.k` overflows u64"
    );
    assert!(error.source().is_none());
    let fit: FitError<PlanError> = FitError::Plan(PlanError::BadAlign { align: 3 });
    assert_eq!(fit.to_string(), "alignment 3 is not a nonzero power of two");
    assert!(fit.source().is_none());
}

#[test]
fn a_read_failure_prints_its_diagnostic() {
    let failure = read_source(std::path::Path::new(""), "", "inputs file").unwrap_err();
    assert_eq!(
        failure.to_string(),
        "error: cannot read inputs file: its path is empty"
    );
}
