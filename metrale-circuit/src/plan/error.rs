//! Why a plan could not be made: one family, [`PlanError<S>`], generic over how it names the
//! state, as `FitError<E>` is over its plan error. A generated const plan names the state by
//! `&'static str` (the default: `Copy`, since a value with a destructor cannot be dropped in a
//! `const fn`); the dynamic plan owns it (`PlanError<String>`). [`MissingFormat`] is why a
//! generated `Formats::from_pairs` refuses a pair list (a key the circuit names that it lacks).
//!
//! Owner: metrale-circuit.
//! Invariants: a generated plan's `PlanError` converts (`From`) into the `PlanError<String>`
//! the dynamic plan gives for the same circuit and inputs, so the two paths compare error for
//! error; both print the same message.

use std::fmt;

use crate::law::{PoolFault, SizeFault};

/// Why a state plan could not be made, naming the state by `S`: `&'static str` for a generated
/// plan, `String` for the dynamic one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanError<S = &'static str> {
    /// A state's format names a key the inputs do not give (the dynamic plan only: a generated
    /// plan's formats are typed fields).
    MissingFormat {
        /// The state (`l0.gdn.h`).
        state: S,
        /// The key (`ssm_h_storage`).
        key: S,
    },
    /// A state's format names a packing (its key holds one, or its `format` is one) that the
    /// state does not declare (the dynamic plan only: a generated plan's packings are typed).
    UnknownPacking {
        /// The state (`l0.mla.latent`).
        state: S,
        /// The packing named (`fp8_ds_mla`).
        packing: S,
    },
    /// Verify inputs were given but a recurrent state declares no `verify`.
    MissingVerify {
        /// The state.
        state: S,
    },
    /// A size or offset of the state overflowed `u64`.
    Overflow {
        /// The state.
        state: S,
    },
    /// The state's shape divides by a dim that is zero.
    DivisionByZero {
        /// The state.
        state: S,
    },
    /// The state's shape subtracts below zero.
    Negative {
        /// The state.
        state: S,
    },
    /// The KV side keeps a sliding window, an attention chunk or a fixed token count, but the
    /// KV inputs give no window inputs.
    MissingWindow {
        /// The state.
        state: S,
    },
    /// The unified page pool cannot be laid out; `state` is a state of the layer at fault.
    Pool {
        /// The state.
        state: S,
        /// Why.
        fault: PoolFault,
    },
    /// A KV side reads another layer's KV (`shares`), but the plan does not hold that layer's
    /// state: a pipeline rank that holds the reader's layer but not its owner's.
    MissingOwner {
        /// The reader (`l20.shared.k`).
        state: S,
        /// The state whose KV it reads (`l14.attn.k`).
        owner: S,
    },
    /// The alignment is not a nonzero power of two.
    BadAlign {
        /// The alignment given.
        align: u64,
    },
}

impl<S> PlanError<S> {
    /// The fault of one term, naming its state.
    #[must_use]
    pub const fn of_fault(fault: SizeFault, state: S) -> Self {
        match fault {
            SizeFault::Overflow => PlanError::Overflow { state },
            SizeFault::MissingVerify => PlanError::MissingVerify { state },
            SizeFault::DivisionByZero => PlanError::DivisionByZero { state },
            SizeFault::Negative => PlanError::Negative { state },
            SizeFault::MissingWindow => PlanError::MissingWindow { state },
        }
    }

    /// The same error, its state (and key) named by `name`.
    pub fn map_state<T>(self, mut name: impl FnMut(S) -> T) -> PlanError<T> {
        match self {
            PlanError::MissingFormat { state, key } => PlanError::MissingFormat {
                state: name(state),
                key: name(key),
            },
            PlanError::UnknownPacking { state, packing } => PlanError::UnknownPacking {
                state: name(state),
                packing: name(packing),
            },
            PlanError::MissingVerify { state } => PlanError::MissingVerify { state: name(state) },
            PlanError::Overflow { state } => PlanError::Overflow { state: name(state) },
            PlanError::DivisionByZero { state } => PlanError::DivisionByZero { state: name(state) },
            PlanError::Negative { state } => PlanError::Negative { state: name(state) },
            PlanError::MissingWindow { state } => PlanError::MissingWindow { state: name(state) },
            PlanError::Pool { state, fault } => PlanError::Pool {
                state: name(state),
                fault,
            },
            PlanError::MissingOwner { state, owner } => PlanError::MissingOwner {
                state: name(state),
                owner: name(owner),
            },
            PlanError::BadAlign { align } => PlanError::BadAlign { align },
        }
    }

    /// The state the error names, if it names one.
    #[must_use]
    pub fn state(&self) -> Option<&S> {
        match self {
            PlanError::MissingFormat { state, .. }
            | PlanError::UnknownPacking { state, .. }
            | PlanError::MissingVerify { state }
            | PlanError::Overflow { state }
            | PlanError::DivisionByZero { state }
            | PlanError::Negative { state }
            | PlanError::MissingWindow { state }
            | PlanError::Pool { state, .. }
            | PlanError::MissingOwner { state, .. } => Some(state),
            PlanError::BadAlign { .. } => None,
        }
    }
}

impl From<PlanError<&str>> for PlanError<String> {
    fn from(error: PlanError<&str>) -> Self {
        error.map_state(str::to_owned)
    }
}

impl<S: fmt::Display> fmt::Display for PlanError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingFormat { state, key } => write!(
                f,
                "state `{state}` has format `{{{key}}}` but the inputs give no dtype for `{key}`"
            ),
            Self::UnknownPacking { state, packing } => write!(
                f,
                "state `{state}` declares no packing `{packing}` (its format may name a dtype or \
                 one of the packings it declares)"
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
                "KV side `{state}` keeps a sliding window, an attention chunk or a fixed token \
                 count per sequence, but the KV inputs give no `sequences`, `chunk_tokens` and \
                 `max_tokens`"
            ),
            Self::Pool { state, fault } => match fault {
                PoolFault::Overflow => {
                    write!(f, "the page pool's size overflows u64 (at state `{state}`)")
                }
                PoolFault::ZeroTokens => f.write_str(
                    "the page pool's `kernel_block` and `checkpoint_alignment` must be at least 1",
                ),
                PoolFault::ZeroWindow => {
                    write!(f, "KV side `{state}` has a sliding window of 0 tokens")
                }
                PoolFault::MixedAttention { .. } => write!(
                    f,
                    "under the vLLM page pool every attention layer must keep the same bytes per \
                     token, and the layer of `{state}` keeps other bytes than the first's"
                ),
            },
            Self::MissingOwner { state, owner } => write!(
                f,
                "KV side `{state}` reads the KV of `{owner}`, which the plan does not hold (a \
                 pipeline rank must hold the layer a shared KV is kept in)"
            ),
            Self::BadAlign { align } => {
                write!(f, "alignment {align} is not a nonzero power of two")
            }
        }
    }
}

impl<S: fmt::Debug + fmt::Display> std::error::Error for PlanError<S> {}

/// A format key the circuit names that a list of `(key, choice)` pairs does not give, or
/// gives a packing its states do not declare: why a generated `Formats::from_pairs` refuses the
/// list (`Copy`, and every field `'static`, so a `const fn` can return it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingFormat {
    /// The key (`kv_cache_dtype`): the first of the circuit's keys, in the order of its
    /// `Formats` fields, that no pair gives a valid choice for.
    pub key: &'static str,
    /// What the key may hold: "a dtype", or for a key whose states declare packings "a dtype
    /// or one of" their names.
    pub expected: &'static str,
    /// A pair gives the key a packing its states do not declare (`false`: no pair gives it).
    pub refused: bool,
}

impl fmt::Display for MissingFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.key;
        if self.refused {
            write!(
                f,
                "format key `{key}` holds a packing its states do not declare: expected {}",
                self.expected
            )
        } else {
            write!(
                f,
                "the formats give nothing for format key `{key}`: expected {} (in an inputs \
                 file: `{key} = \"<dtype>\"` under `[formats]`)",
                self.expected
            )
        }
    }
}

impl std::error::Error for MissingFormat {}
