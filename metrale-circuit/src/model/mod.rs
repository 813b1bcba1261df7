//! The vocabulary every layer above speaks: what a state is and how long it lives (`kinds`),
//! what its elements are (`dtype`), a unit made of parts (`packing`), one declared state (`decl`), the counts an engine decides
//! (`inputs`), how the states a request holds are laid out (`pool`), and the one macro that spells every enum by name (`spelled`).
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - This is the bottom layer: nothing here reads another layer of the crate.
//! - Each enum spelled by name is one `spelled_enum!`; its `ALL`, `SPELLINGS`, `parse` and
//!   `name` cannot disagree.

pub(crate) mod spelled;

mod decl;
mod dtype;
pub(crate) mod inputs;
mod kinds;
mod packing;
mod pool;

pub use decl::{
    Position, Reach, Section, StateAccess, StateDecl, UnitAxis, VerifySteps, strides_into,
};
pub use dtype::{FormatChoice, FormatError, StateDtype, StateFormat};
// The loader's identifier rule, beside the format keys it governs; re-exported by `load`.
#[cfg(feature = "load")]
pub use dtype::is_snake_identifier;
pub use inputs::{
    CacheInputs, CarryInputs, DraftInputs, HSteps, KvInputs, LookupInputs, RingInputs, StateInputs,
    StepCounts, TreeInputs, VerifyInputs, WindowInputs,
};
pub use kinds::{Lifetime, StateKind};
pub use packing::{PackingDecl, PartDecl};
pub use pool::{PoolPages, PoolPolicy, VllmPool};
