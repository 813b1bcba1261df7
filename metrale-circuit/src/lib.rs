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
//!     kv: Some(KvInputs { blocks: 10, block_size: 16, window: None }),
//!     ..StateInputs::EMPTY
//! };
//! let plan = StatePlan::new(&[k], &inputs, 256)?;
//! assert_eq!(plan.terms()[0].bytes, 10 * 16 * 8);
//! assert_eq!(plan.device_bytes(), 1280);
//! # Ok::<(), metrale_circuit::StateError>(())
//! ```
//!
//! # Two halves
//! - The **runtime** (always built): the state model ([`StateKind`], [`Lifetime`],
//!   [`StateDtype`], [`StateDecl`], [`StateInputs`]), the one sizing law and layout law, the
//!   dynamic [`StatePlan`], and the types a generated plan is made of ([`Region`],
//!   [`RecurrentRegions`], [`KvRegions`], [`CacheRegions`], [`TermInfo`], [`Unit`], [`Arena`],
//!   [`RegionList`], [`PlanError`], [`MissingFormat`]). It depends on nothing outside `core`, `alloc` and `std`.
//! - The **loader** (feature `load`, on by default): the circuit TOML reader with rustc-like
//!   diagnostics and the inputs file. An engine that only includes generated plans turns it off
//!   with `default-features = false`.
// Its items exist only with `load`: linked only then, so the crate documents without it too.
#![cfg_attr(
    feature = "load",
    doc = "  Its items: [`load`] and [`Circuit`], [`diag`], [`shape`], [`InputsFile`]."
)]
//!
//! What generated code calls lives in a hidden module whose name carries the ABI version; it is
//! not API. Generated code checks, at compile time, that it was generated for this runtime.
//!
//! Invariants:
//! - Every byte count is units x elements x element size, the element count evaluated from the
//!   circuit's dims when it is instantiated; one function (`law::sizing::size_term`) produces
//!   every term, for this crate's [`StatePlan`] and for the plans `metrale-codegen` generates.
//! - One function places every term (`law::layout::Placer`); the fast layout of generated plans
//!   is tested against it.
//! - A format named by a key (`{kv_cache_dtype}`) must be given in [`StateInputs::formats`]; a
//!   missing key is an error, never a default. All size arithmetic is checked.

// The runtime, bottom-up: each layer reads only the layers listed before it.
// The vocabulary: kinds, dtypes, declarations, plan inputs, the spelled enums.
mod model;

// The laws, each written once: sizing (with the cache laws) and layout.
mod law;

// The dynamic plan, the field groups an engine reads, the plan errors.
mod plan;

// Serving: parallel ranks, the serving profile, agreement, fits.
mod serve;

// The loader (text, the validated circuit, the pipeline, the inputs file): above all of them.
#[cfg(feature = "load")]
pub mod load;

// What generated code calls: not API, and free to change with every ABI version (the name
// carries it). Generated code names this module and the public API only.
#[doc(hidden)]
#[path = "abi/mod.rs"]
pub mod __private_v0_1;

/// The ABI generated code is written against: the ABI revision and the layout constants the
/// generator writes into its output, folded into one number. Generated code asserts it at
/// compile time, so code generated for another runtime fails to build and says to regenerate.
#[doc(hidden)]
pub const __GENERATED_ABI: u64 = __private_v0_1::ABI;

// The public API: every name at the root, and the modules `diag`, `limits`, `load` and
// `shape`; the layers themselves are private.
pub use law::{Arena, DEFAULT_ALIGN, Holding, Region, SizeFault, Space};
pub use model::{
    CacheInputs, CarryInputs, DraftInputs, FormatError, HSteps, KvInputs, Lifetime, LookupInputs,
    RingInputs, Section, StateAccess, StateDecl, StateDtype, StateFormat, StateInputs, StateKind,
    TreeInputs, VerifyInputs, VerifySteps, WindowInputs, is_snake_identifier,
};
pub use plan::{
    CacheRegions, KvRegions, MissingFormat, PlanError, RecurrentRegions, RegionList, StateError,
    StatePlan, StateTerm, TermInfo, Unit,
};
pub use serve::{
    Disagreement, Fit, FitError, KvTokens, Parallel, ParallelError, Place, ProfileFree, ProfileKv,
    Rank, RankError, Search, ServingProfile, ShardFault, Stage, StageFault, default_stage_layers,
    fit_kv_blocks, fit_profile, fit_profile_blocks, fit_sequences, parse_size, shard, stage,
};

#[cfg(feature = "load")]
pub use load::LoadReport;
#[cfg(feature = "load")]
pub use load::circuit::{
    BlockTemplate, Checkpoint, Circuit, ConfigDim, ConfigMap, Instance, LayerKindsSource, Layout,
    LayoutRule, StateTemplate, shape,
};
#[cfg(feature = "load")]
pub use load::inputs_file::{InputsFile, InputsView, ParallelCounts, StepCounts, VerifyCounts};
#[cfg(feature = "load")]
pub use load::text::{Origin, ReadFailure, diag, limits, read_source};
