//! Why a plan could not be made: [`StateError`] for the dynamic plan (owns the state's id) and
//! [`PlanError`] for generated const plans (`Copy`, names the state by `&'static str`, since a
//! value with a destructor cannot be dropped in a `const fn`), and [`MissingFormat`] for the
//! `Formats::from_pairs` of generated code (a key the circuit names that a pair list lacks).
//!
//! Owner: metrale-circuit.
//! Invariants: every [`PlanError`] converts into the [`StateError`] the dynamic plan gives for
//! the same circuit and inputs, so the two paths can be compared error for error.

use std::fmt;

use crate::law::SizeFault;

/// Why a state plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// A state's format names a key the inputs do not give.
    MissingFormat {
        /// The state (`l0.gdn.h`).
        state: String,
        /// The key (`ssm_h_storage`).
        key: String,
    },
    /// Verify inputs were given but a recurrent state declares no `verify`.
    MissingVerify {
        /// The state.
        state: String,
    },
    /// A size or offset of the state overflowed `u64`.
    Overflow {
        /// The state.
        state: String,
    },
    /// The state's shape divides by a dim that is zero.
    DivisionByZero {
        /// The state.
        state: String,
    },
    /// The state's shape subtracts below zero.
    Negative {
        /// The state.
        state: String,
    },
    /// The KV side keeps a sliding window, but the KV inputs give no window inputs.
    MissingWindow {
        /// The state.
        state: String,
    },
    /// The alignment is not a nonzero power of two.
    BadAlign {
        /// The alignment given.
        align: u64,
    },
}

impl StateError {
    /// The fault of one term of `state`.
    #[must_use]
    pub fn of_fault(fault: SizeFault, state: &str) -> Self {
        let state = state.to_owned();
        match fault {
            SizeFault::Overflow => StateError::Overflow { state },
            SizeFault::MissingVerify => StateError::MissingVerify { state },
            SizeFault::DivisionByZero => StateError::DivisionByZero { state },
            SizeFault::Negative => StateError::Negative { state },
            SizeFault::MissingWindow => StateError::MissingWindow { state },
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingFormat { state, key } => write!(
                f,
                "state `{state}` has format `{{{key}}}` but the inputs give no dtype for `{key}`"
            ),
            Self::MissingVerify { state } => write!(
                f,
                "recurrent state `{state}` declares no `verify` but verify inputs were given"
            ),
            Self::Overflow { state } => write!(f, "the size of state `{state}` overflows u64"),
            Self::DivisionByZero { state } => {
                write!(
                    f,
                    "the shape of state `{state}` divides by a dim that is zero"
                )
            }
            Self::Negative { state } => {
                write!(
                    f,
                    "the shape of state `{state}` is below zero under these dims"
                )
            }
            Self::MissingWindow { state } => write!(
                f,
                "KV side `{state}` keeps a sliding window but the KV inputs give no \
                 `sequences`, `chunk_tokens` and `max_tokens`"
            ),
            Self::BadAlign { align } => {
                write!(f, "alignment {align} is not a nonzero power of two")
            }
        }
    }
}

impl std::error::Error for StateError {}

/// Why a generated const plan could not be made; converts into [`StateError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanError {
    /// Verify inputs were given but a recurrent state declares no `verify`.
    MissingVerify {
        /// The state.
        state: &'static str,
    },
    /// A size or offset of the state overflowed `u64`.
    Overflow {
        /// The state.
        state: &'static str,
    },
    /// The state's shape divides by a dim that is zero.
    DivisionByZero {
        /// The state.
        state: &'static str,
    },
    /// The state's shape subtracts below zero.
    Negative {
        /// The state.
        state: &'static str,
    },
    /// The KV side keeps a sliding window, but the KV inputs give no window inputs.
    MissingWindow {
        /// The state.
        state: &'static str,
    },
    /// The alignment is not a nonzero power of two.
    BadAlign {
        /// The alignment given.
        align: u64,
    },
}

impl PlanError {
    /// The fault of one term, naming its state.
    #[must_use]
    pub const fn of_fault(fault: SizeFault, state: &'static str) -> Self {
        match fault {
            SizeFault::Overflow => PlanError::Overflow { state },
            SizeFault::MissingVerify => PlanError::MissingVerify { state },
            SizeFault::DivisionByZero => PlanError::DivisionByZero { state },
            SizeFault::Negative => PlanError::Negative { state },
            SizeFault::MissingWindow => PlanError::MissingWindow { state },
        }
    }
}

impl From<PlanError> for StateError {
    fn from(error: PlanError) -> Self {
        match error {
            PlanError::MissingVerify { state } => StateError::MissingVerify {
                state: state.to_owned(),
            },
            PlanError::Overflow { state } => StateError::Overflow {
                state: state.to_owned(),
            },
            PlanError::DivisionByZero { state } => StateError::DivisionByZero {
                state: state.to_owned(),
            },
            PlanError::Negative { state } => StateError::Negative {
                state: state.to_owned(),
            },
            PlanError::MissingWindow { state } => StateError::MissingWindow {
                state: state.to_owned(),
            },
            PlanError::BadAlign { align } => StateError::BadAlign { align },
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        StateError::from(*self).fmt(f)
    }
}

impl std::error::Error for PlanError {}

/// A format key the circuit names that a list of `(key, dtype)` pairs does not give: why a
/// generated `Formats::from_pairs` refuses the list (`Copy`, and the key a `&'static str`,
/// so a `const fn` can return it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingFormat {
    /// The key (`kv_cache_dtype`): the first of the circuit's keys, in the order of its
    /// `Formats` fields, that no pair gives.
    pub key: &'static str,
}

impl fmt::Display for MissingFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the formats give no dtype for format key `{key}` (in an inputs file: \
             `{key} = \"<dtype>\"` under `[formats]`)",
            key = self.key
        )
    }
}

impl std::error::Error for MissingFormat {}
