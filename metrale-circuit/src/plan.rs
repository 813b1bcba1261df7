//! The dynamic (run-time) plan: every declared state sized by [`size_term`] and laid out by
//! [`place`]. It is the reference the generated const plans are checked against.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - [`StatePlan::new`] is the one function that sizes every term of a list of declarations;
//!   terms come in plan order (declaration order, then [`Holding::of_kind`] order).
//! - Offsets follow the layout law of [`crate::layout`]; arena sizes are rounded up to `align`.
//! - Errors come in a fixed order (per declaration: format, unit bytes, its terms; then layout),
//!   which the generated plans follow too.

use crate::layout::{align_up, check_align, place};
use crate::sizing::{TermSpec, size_term, unit_bytes};
use crate::{
    Holding, Lifetime, Space, StateDecl, StateDtype, StateError, StateFormat, StateInputs,
    StateKind,
};

/// One sized term: a state, what it holds, its units and bytes, and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTerm {
    /// The state's id (`l0.gdn.h`).
    pub state: String,
    /// The state's kind.
    pub kind: StateKind,
    /// What this term holds.
    pub holding: Holding,
    /// How long its units live ([`Holding::lifetime`]).
    pub lifetime: Lifetime,
    /// The element type, its format resolved.
    pub dtype: StateDtype,
    /// Units (slots, tokens, rows, entries).
    pub units: u64,
    /// Bytes.
    pub bytes: u64,
    /// Bytes from the start of its space's arena.
    pub offset: u64,
    /// The arena it sits in.
    pub space: Space,
}

/// Every state of a circuit, sized and laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatePlan {
    terms: Vec<StateTerm>,
    align: u64,
    device_bytes: u64,
    host_bytes: u64,
}

impl StatePlan {
    /// Sizes every term of `decls` under `inputs` and lays them out with every offset a multiple
    /// of `align`.
    ///
    /// # Errors
    /// [`StateError::BadAlign`] when `align` is not a nonzero power of two;
    /// [`StateError::MissingFormat`] for a format key the inputs lack;
    /// [`StateError::MissingVerify`] for a recurrent state without `verify` under verify inputs;
    /// [`StateError::Overflow`] when any size or offset overflows `u64`.
    pub fn new(
        decls: &[StateDecl],
        inputs: &StateInputs<'_>,
        align: u64,
    ) -> Result<Self, StateError> {
        if !check_align(align) {
            return Err(StateError::BadAlign { align });
        }
        let mut terms = Vec::new();
        for decl in decls {
            let dtype = match &decl.format {
                StateFormat::Fixed(dtype) => *dtype,
                StateFormat::Keyed(key) => {
                    inputs
                        .format(key)
                        .ok_or_else(|| StateError::MissingFormat {
                            state: decl.id.clone(),
                            key: key.clone(),
                        })?
                }
            };
            let fault = |fault| fault_of(fault, &decl.id);
            let unit_bytes = unit_bytes(decl.elements, dtype).map_err(fault)?;
            for &holding in Holding::of_kind(decl.kind) {
                let spec = TermSpec {
                    kind: decl.kind,
                    holding,
                    section: decl.section,
                    verify: decl.verify,
                    unit_bytes,
                };
                if let Some(size) = size_term(&spec, inputs).map_err(fault)? {
                    terms.push(StateTerm {
                        state: decl.id.clone(),
                        kind: decl.kind,
                        holding,
                        lifetime: holding.lifetime(decl.lifetime),
                        dtype,
                        units: size.units,
                        bytes: size.bytes,
                        offset: 0,
                        space: Space::of_kind(decl.kind),
                    });
                }
            }
        }
        let device_bytes = lay_out(&mut terms, Space::Device, align)?;
        let host_bytes = lay_out(&mut terms, Space::Host, align)?;
        Ok(Self {
            terms,
            align,
            device_bytes,
            host_bytes,
        })
    }

    /// Every term, in plan order.
    #[must_use]
    pub fn terms(&self) -> &[StateTerm] {
        &self.terms
    }

    /// The term of `state` holding `holding`, if the plan has it.
    #[must_use]
    pub fn term(&self, state: &str, holding: Holding) -> Option<&StateTerm> {
        self.terms
            .iter()
            .find(|t| t.state == state && t.holding == holding)
    }

    /// The alignment every offset is a multiple of.
    #[must_use]
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The device arena's size: the end of its last region, rounded up to the alignment.
    #[must_use]
    pub fn device_bytes(&self) -> u64 {
        self.device_bytes
    }

    /// The host arena's size: the end of its last region, rounded up to the alignment.
    #[must_use]
    pub fn host_bytes(&self) -> u64 {
        self.host_bytes
    }

    /// The arena size of `space`.
    #[must_use]
    pub fn arena_bytes(&self, space: Space) -> u64 {
        match space {
            Space::Device => self.device_bytes,
            Space::Host => self.host_bytes,
        }
    }

    /// The bytes the terms of `space` hold, alignment padding excluded (never more than its
    /// arena, so the sum cannot overflow).
    #[must_use]
    pub fn term_bytes(&self, space: Space) -> u64 {
        self.terms
            .iter()
            .filter(|t| t.space == space)
            .map(|t| t.bytes)
            .sum()
    }

    /// The bytes the terms of `space` with `lifetime` hold, alignment padding excluded.
    #[must_use]
    pub fn lifetime_bytes(&self, space: Space, lifetime: Lifetime) -> u64 {
        self.terms
            .iter()
            .filter(|t| t.space == space && t.lifetime == lifetime)
            .map(|t| t.bytes)
            .sum()
    }
}

/// The dynamic error of a fault of `state`.
fn fault_of(fault: crate::SizeFault, state: &str) -> StateError {
    match fault {
        crate::SizeFault::Overflow => StateError::Overflow {
            state: state.to_owned(),
        },
        crate::SizeFault::MissingVerify => StateError::MissingVerify {
            state: state.to_owned(),
        },
    }
}

/// Gives the terms of `space` their offsets, lifetime group by lifetime group, and returns the
/// arena size. An overflow names the term being placed, or for the final rounding the term that
/// ends the arena.
fn lay_out(terms: &mut [StateTerm], space: Space, align: u64) -> Result<u64, StateError> {
    let mut cursor = 0;
    let mut last = 0;
    for lifetime in Lifetime::LAYOUT_ORDER {
        for (i, term) in terms.iter_mut().enumerate() {
            if term.space != space || term.lifetime != lifetime {
                continue;
            }
            let (offset, end) =
                place(cursor, term.bytes, align).ok_or_else(|| StateError::Overflow {
                    state: term.state.clone(),
                })?;
            term.offset = offset;
            cursor = end;
            last = i;
        }
    }
    align_up(cursor, align).ok_or_else(|| StateError::Overflow {
        state: terms
            .get(last)
            .map_or_else(String::new, |t| t.state.clone()),
    })
}
