//! The state a metrale circuit keeps between decode steps, and the one function that sizes it.
//!
//! A circuit (a TOML file, see `docs/circuit-schema.md`) declares per block what ONE unit of each
//! state holds: one sequence slot of a recurrent state, one token of one side of a KV cache, one
//! slot of a snapshot cache. How many units exist (slots, the padding dummy, verify
//! intermediates per slot, KV blocks, cache rows) is a plan input ([`StateInputs`]) the engine
//! decides and passes in explicitly; this crate multiplies and never reads a process global.
//!
//! ```
//! use metrale_circuit::{
//!     KvInputs, StateDecl, StateDtype, StateFormat, StateInputs, StateKind, StatePlan,
//! };
//!
//! let k = StateDecl::new("l3.attn.k", StateKind::PagedKv, StateFormat::Keyed("kv".into()), 8);
//! let inputs = StateInputs {
//!     formats: &[("kv", StateDtype::Fp8)],
//!     kv: Some(KvInputs { blocks: 10, block_size: 16 }),
//!     ..StateInputs::EMPTY
//! };
//! let plan = StatePlan::new(&[k], &inputs, 256)?;
//! assert_eq!(plan.terms()[0].bytes, 10 * 16 * 8);
//! assert_eq!(plan.device_bytes(), 1280);
//! # Ok::<(), metrale_circuit::StateError>(())
//! ```
//!
//! Invariants:
//! - Every byte count is units x elements x element size, the element count evaluated from the
//!   circuit's dims when it is instantiated; one function ([`sizing::size_term`]) produces every
//!   term, for this crate's [`StatePlan`] and for the plans `metrale-codegen` generates.
//! - A format named by a key (`{kv_cache_dtype}`) must be given in [`StateInputs::formats`]; a
//!   missing key is an error, never a default. All size arithmetic is checked.

pub mod caches;
mod circuit;
mod decl;
pub mod diag;
mod dtype;
mod error;
mod inputs;
mod inputs_file;
mod kinds;
pub mod layout;
pub mod load;
mod plan;
pub mod shape;
pub mod sizing;
pub mod static_plan;

pub use circuit::{
    BlockTemplate, Checkpoint, Circuit, Instance, Layout, LayoutRule, Origin, StateTemplate,
};
pub use decl::{Section, StateAccess, StateDecl, VerifySteps};
pub use dtype::{FormatError, StateDtype, StateFormat, is_snake_identifier};
pub use error::{PlanError, StateError};
pub use inputs::{
    CacheInputs, CarryInputs, DraftInputs, KvInputs, LookupInputs, RingInputs, StateInputs,
    TreeInputs, VerifyInputs,
};
pub use inputs_file::{InputsFile, InputsView, VerifyCounts};
pub use kinds::{Lifetime, StateKind};
pub use layout::{Arena, DEFAULT_ALIGN, Region};
pub use plan::{StatePlan, StateTerm};
pub use sizing::{Holding, SizeFault, Space};
