//! Every way a run stops early ([`EngineError`]) and the text `engine` prints for it.
//!
//! Invariants:
//! - A run that reaches its end never returns an error: a broken tag is part of the report
//!   ([`crate::TagCheck`]), so the report can list what broke; everything here stops the run.
//! - [`EngineError::render`] is the whole message, ending in a newline; the loader's
//!   diagnostics are kept as rendered (they carry their own `error:` lines and locations).

use std::fmt;

use metrale_circuit::{PlanError, serving::FitError};

/// Why a run stopped before its end.
#[derive(Debug)]
pub enum EngineError {
    /// The circuit, the checkpoint or the inputs file was refused: the loader's diagnostics,
    /// rendered.
    Input(String),
    /// The command line does not describe a serving profile.
    Profile(String),
    /// The plan could not be made.
    Plan(PlanError<String>),
    /// No number of sequences fits the budget, or the plan fails at 0.
    Fit(FitError<PlanError<String>>),
    /// The budget holds the fixed terms but not one sequence: nothing to serve.
    NoSequence {
        /// Tokens per sequence.
        context: u64,
        /// The device bytes at 0 sequences.
        fixed: u64,
        /// The device bytes at 1, when that plan can be made.
        one: Option<u64>,
    },
    /// The arenas together exceed `--max-memory`.
    TooLarge {
        /// Device and host arena bytes together.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// A buffer could not be made, or a region reaches outside its buffer.
    Memory(String),
    /// The plan's address API gave no unit where the engine needed one.
    Address(String),
    /// A pool (slots, snapshot slots, KV blocks) ran out or was handed back something it did
    /// not give out.
    Pool(String),
    /// One of the engine's own checks failed (a window law that would drop a token still in
    /// the window, a copy between units of different sizes, ...).
    Invariant(String),
}

impl EngineError {
    /// The message `engine` prints on stderr.
    #[must_use]
    pub fn render(&self) -> String {
        match self {
            EngineError::Input(rendered) if rendered.ends_with('\n') => rendered.clone(),
            EngineError::Input(rendered) => format!("{rendered}\n"),
            other => format!("error: {other}\n"),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Input(rendered) => f.write_str(rendered.trim_end()),
            EngineError::Profile(message)
            | EngineError::Memory(message)
            | EngineError::Address(message)
            | EngineError::Pool(message)
            | EngineError::Invariant(message) => f.write_str(message),
            EngineError::Plan(error @ PlanError::MissingFormat { key, .. }) => write!(
                f,
                "the plan cannot be made: {error} (give it with `--format {key}=DTYPE` or in \
                 the inputs file's `[formats]`)"
            ),
            EngineError::Plan(error) => write!(f, "the plan cannot be made: {error}"),
            EngineError::NoSequence {
                context,
                fixed,
                one,
            } => {
                write!(
                    f,
                    "the budget holds no sequence of {context} tokens, so there is nothing to \
                     serve: the padding slot and every fixed term take {fixed} device bytes"
                )?;
                match one {
                    Some(one) => write!(f, ", one sequence needs {one}"),
                    None => Ok(()),
                }
            }
            EngineError::Fit(FitError::TooSmall { needs }) => write!(
                f,
                "the budget holds no sequence: even 0 sequences (the padding slot and every \
                 fixed term) need {needs} device bytes"
            ),
            EngineError::Fit(error) => write!(f, "the fit failed: {error}"),
            EngineError::TooLarge { bytes, max } => write!(
                f,
                "the arenas take {bytes} bytes together, more than --max-memory ({max} bytes): \
                 this engine allocates them for real, so give a smaller --budget or a larger \
                 --max-memory"
            ),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<PlanError<String>> for EngineError {
    fn from(error: PlanError<String>) -> Self {
        EngineError::Plan(error)
    }
}

impl From<metrale_circuit::alloc::AllocError> for EngineError {
    fn from(error: metrale_circuit::alloc::AllocError) -> Self {
        EngineError::Pool(error.to_string())
    }
}
