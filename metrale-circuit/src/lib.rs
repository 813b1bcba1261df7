//! The state a metrale circuit keeps between decode steps, and the one law that sizes and lays
//! it out: what an engine links to read the plans `metrale-codegen` generates.
//!
//! A circuit (a TOML file, see `docs/circuit-schema.md`) declares per block what ONE unit of each
//! state holds: one sequence slot of a recurrent state, one token of one side of a KV cache, one
//! slot of a snapshot cache. How many units exist (slots, the padding dummy, verify
//! intermediates per slot, KV blocks, cache rows) is a plan input the engine decides and passes
//! in explicitly; this crate multiplies and never reads a process global.
//!
//! # What an engine on a generated plan reads (the root)
//! - The plan's regions and field groups: [`Region`] (with each unit's address),
//!   [`RecurrentRegions`], [`KvRegions`], [`CacheRegions`], [`TermInfo`], [`RegionList`]
//!   (the regions of a plan whose checkpoint is chosen at run time); a region's unit is
//!   [`units::Unit`].
//! - The arenas: [`Arena`], [`Space`], [`Lifetime`], [`DEFAULT_ALIGN`].
//! - What a term is: [`StateKind`], [`Holding`], [`StateDtype`].
//! - The inputs a generated `Inputs` holds: [`StateInputs`], [`KvInputs`], [`VerifyInputs`],
//!   [`CacheInputs`] (their parts in [`inputs`]).
//! - Why a plan fails: [`PlanError`] (one family, generic over how it names the state),
//!   [`SizeFault`], [`MissingFormat`].
//!
//! # The rest, in modules
//! - [`alloc`]: handing out the units a plan sized at run time (slots, KV blocks, rings).
//! - [`units`]: what one unit is, as a kernel views it: its tensor shape ([`units::Axes`]) and
//!   the parts of a unit made of a packing ([`units::Part`], [`units::Parts`]).
//! - [`inputs`]: every plan input, the parts of the cache and verify inputs included.
//! - [`serving`]: the serving profile, its free inputs, the counts that must agree, and
//!   capacity ([`serving::Fit`], [`serving::FitError`]); vLLM's page pool
//!   ([`serving::pages`]) and the registry of checkpoints chosen at run time
//!   ([`serving::registry`]).
//! - [`parallel`]: tensor- and pipeline-parallel ranks ([`parallel::RankError`]), a block's
//!   model position.
//! - [`dynamic`]: the dynamic plan (declarations in, [`dynamic::decl`]; a plan at run time:
//!   the reference generated plans are tested against) and its fits.
//! - `load` (feature `load`, on by default): the circuit TOML reader with rustc-like
//!   diagnostics, and the inputs file. An engine that only includes generated plans turns it
//!   off with `default-features = false` and links nothing outside `std`.
//! - `config` (feature `config`): a Hugging Face `config.json` read through a circuit's
//!   `[config]`: the checkpoint table `metrale-codegen import` prints, or a checkpoint and its
//!   dims added at run time.
//! - `schema` (feature `schema`): the JSON Schemas of the circuit file and of the inputs file,
//!   for editors.
//! - `weights` (feature `weights`): a checkpoint's weights read exactly from its safetensors
//!   metadata, the figure `metrale-codegen fit --weights` takes.
//!
//! ```
//! use metrale_circuit::dynamic::{DynamicPlan, decl::{StateDecl, StateFormat}};
//! use metrale_circuit::inputs::FormatChoice;
//! use metrale_circuit::{KvInputs, PlanError, StateDtype, StateInputs, StateKind};
//!
//! let k = StateDecl::new("l3.attn.k", StateKind::PagedKv, StateFormat::Keyed("kv".into()), 8);
//! let inputs = StateInputs {
//!     formats: &[("kv", FormatChoice::Dtype(StateDtype::Fp8))],
//!     kv: Some(KvInputs { blocks: 10, block_size: 16, window: None }),
//!     ..StateInputs::EMPTY
//! };
//! let plan = DynamicPlan::new(&[k], &inputs, 256)?;
//! assert_eq!(plan.terms()[0].bytes, 10 * 16 * 8);
//! assert_eq!(plan.device_bytes(), 1280);
//! # Ok::<(), PlanError<String>>(())
//! ```
//!
//! What generated code calls lives in a hidden module whose name carries the ABI version; it is
//! not API. Generated code checks, at compile time, that it was generated for this runtime.
//!
//! Invariants:
//! - Every byte count is units x elements x element size, the element count evaluated from the
//!   circuit's dims when it is instantiated; one function (`law::sizing::size_term`) produces
//!   every term, for the dynamic plan and for the plans `metrale-codegen` generates.
//! - One function places every term (`law::layout::Placer`); the fast layout of generated plans
//!   is tested against it.
//! - A format named by a key (`{kv_cache_dtype}`) must be given in [`StateInputs::formats`]
//!   (a dtype, or a packing every state of the key declares); a missing key is an error, never a
//!   default. A state's terms are stored in its format, but a
//!   draft KV side in [`StateInputs::draft_kv_dtype`] when given (`law::sizing::term_dtype`).
//!   All size arithmetic is checked.

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

// Beside the loader, above it (each reads the loader, the loader reads neither): a Hugging Face
// `config.json` read through a circuit's `[config]`; the JSON Schemas of the circuit and
// inputs files, from the loader's key tables.
#[cfg(feature = "config")]
pub mod config;
#[cfg(feature = "schema")]
pub mod schema;

// A checkpoint's weights from its safetensors metadata: reads the loader's diagnostics.
#[cfg(feature = "weights")]
pub mod weights;

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

// The engine-facing API: what an engine on a generated plan reads, at the root; the rest in
// the modules below. The layers themselves are private.
pub use law::{Arena, DEFAULT_ALIGN, Holding, Region, SizeFault, Space};
pub use model::{
    CacheInputs, KvInputs, Lifetime, StateDtype, StateInputs, StateKind, VerifyInputs,
};
pub use plan::{
    CacheRegions, KvRegions, MissingFormat, PlanError, RecurrentRegions, RegionList, TermInfo,
};

pub mod alloc {
    //! Handing out the units a plan sized, at run time, from a generated or dynamic plan's
    //! counts: sequence and verify slots that never give out the padding dummy ([`SlotPool`]),
    //! ring and prefix-snapshot slots ([`IndexPool`]), KV blocks with reference counts for
    //! shared prefixes ([`BlockPool`]), and each sequence's block table on a side, a windowed
    //! side's a ring ([`BlockTable`]). Every failure is an [`AllocError`], never a panic.
    //!
    //! ```
    //! use metrale_circuit::alloc::{BlockPool, BlockTable, SlotPool};
    //!
    //! // 3 slots (the dummy last) and a KV side of 4 blocks, as a plan sized them.
    //! let (mut slots, mut blocks, mut table) = (SlotPool::new(3), BlockPool::new(4), BlockTable::new());
    //! let seq = slots.claim()?;                       // slot 0; the dummy, 2, is never given
    //! let first = table.append(seq, &mut blocks)?;    // block 0 for its first tokens
    //! let other = slots.claim()?;
    //! table.adopt(other, &[first.block], &mut blocks)?; // a prefix-cache hit shares block 0
    //! assert_eq!(blocks.refs(first.block), Some(2));
    //! table.release(seq, &mut blocks)?;               // block 0 stays: `other` holds it
    //! slots.release(seq)?;
    //! assert_eq!(blocks.free_count(), 3);
    //! # Ok::<(), metrale_circuit::alloc::AllocError>(())
    //! ```
    pub use crate::serve::{AllocError, Appended, BlockPool, BlockTable, IndexPool, SlotPool};
}

pub mod units {
    //! What one unit of a state is, as a kernel views it: its tensor shape ([`Axes`]: each
    //! axis of the circuit's `shape`, its extent and row-major strides, so a region is the
    //! tensor `[units, axes...]`) and, for a unit made of a packing, where each part sits
    //! ([`Part`], [`Parts`]). A generated module gives them by `blocks::<block>::<state>_axes`
    //! and `<state>_parts`; the dynamic plan by each term's `axes` and `packing`. A region is
    //! viewed in its arena's buffer as bytes (`Region::bytes_in`), and with feature `bytemuck`
    //! as a slice of its element type ([`Element`]: `Region::elements_in`), every check a
    //! [`ViewError`].
    #[cfg(feature = "bytemuck")]
    pub use crate::plan::Element;
    pub use crate::plan::{Axes, Part, Parts, Unit, ViewError};
}

pub mod inputs {
    //! Every plan input: the counts and formats a plan is made under ([`StateInputs`]) and their
    //! parts. A generated `Inputs` holds the same counts with its formats typed; [`StepCounts`]
    //! is [`HSteps`] owned (what an inputs file and a dynamic plan keep).
    pub use crate::model::{
        CacheInputs, CarryInputs, DraftInputs, FormatChoice, HSteps, KvInputs, LookupInputs,
        RingInputs, StateInputs, StepCounts, TreeInputs, VerifyInputs, WindowInputs,
    };
}

pub mod serving {
    //! Serving: the profile an operator decides ([`ServingProfile`]) and the one rule deriving
    //! every plan count from it, which of its inputs a fit frees ([`ProfileFree`]), the counts
    //! that must agree with each other and with it ([`Disagreement`]), what a fit's answer holds
    //! per unit and what one more costs ([`Capacity`]), the budget a GPU leaves the state once
    //! its weights and a reserve are counted ([`GpuMemory`]), and the policy that lays out what
    //! a request holds ([`PoolPolicy`]): the arenas, or vLLM's unified page pool ([`pages`]).
    //! Which circuit and checkpoint a model asked for at run time is: [`registry`].
    pub use crate::model::PoolPolicy;
    pub use crate::serve::{
        Capacity, Disagreement, Fit, FitError, GpuMemory, GpuShortfall, KvTokens, ProfileFree,
        ProfileKv, ServingProfile, Utilization,
    };

    pub mod pages {
        //! vLLM's unified page pool: its shape from the circuit's layers ([`VllmPool`],
        //! [`PoolPages`], [`PoolShape`] from each [`PoolLayer`] of a [`Family`]), a plan's pool
        //! ([`PoolPlan`], [`PagePool`], each [`PoolMember`]), what one more page or request's
        //! pages cost ([`PageCosts`]) and the pool a budget's rest makes, with the figures vLLM
        //! logs ([`PoolCapacity`]); why a pool cannot be shaped ([`PoolFault`]). A page here is
        //! vLLM's; the arenas' KV blocks are another pool ([`crate::alloc::BlockPool`]).
        pub use crate::law::{Family, PoolFault, PoolLayer, PoolShape};
        pub use crate::model::{PoolPages, VllmPool};
        pub use crate::plan::{PagePool, PoolMember, PoolPlan};
        pub use crate::serve::{PageCosts, PoolCapacity};
    }

    pub mod registry {
        //! Which circuit and checkpoint a model asked for at run time is ([`Registry`] over
        //! each generated module's [`CircuitEntry`], an answer [`Resolved`] or a
        //! [`RegistryError`]), and why dims given by name are not a generated `Dims`
        //! ([`DimsError`]).
        pub use crate::serve::{CircuitEntry, DimsError, Registry, RegistryError, Resolved};
    }
}

pub mod parallel {
    //! Tensor- and pipeline-parallel ranks: how many serve ([`Parallel`]), which one ([`Rank`]),
    //! what a pipeline rank holds ([`Stage`], by each block's model [`Position`]), and why a rank
    //! has no plan ([`RankError`], [`StageFault`], [`ShardFault`], [`ParallelError`]).
    pub use crate::model::Position;
    pub use crate::serve::{
        Parallel, ParallelError, Rank, RankError, ShardFault, Stage, StageFault,
    };
}

pub mod dynamic {
    //! The dynamic plan: a plan at run time ([`DynamicPlan`], its terms also in field groups:
    //! [`DynamicPlan::states`]) from the declarations of [`decl`] (made by
    //! `load::Circuit::instantiate` or by hand), and its fits. It is the reference every
    //! generated plan is tested against; an engine without generated code plans with it.
    pub use crate::model::Position;
    pub use crate::plan::{DynamicPlan, FieldGroup, StateRegions, StateTerm, UnitPacking};
    pub use crate::serve::{fit_kv_blocks, fit_profile, fit_profile_blocks, fit_sequences};

    pub mod decl {
        //! What a dynamic plan is declared from: each state ([`StateDecl`]) with its format
        //! ([`StateFormat`], a [`FormatError`] when it names what the inputs do not give), its
        //! unit made of parts ([`PackingDecl`], [`PartDecl`], each axis a [`UnitAxis`]), where
        //! it lives in the model and who reads it ([`Section`], [`Reach`], [`StateAccess`]), and
        //! the verify rows it takes ([`VerifySteps`]).
        pub use crate::model::{
            FormatError, PackingDecl, PartDecl, Reach, Section, StateAccess, StateDecl,
            StateFormat, UnitAxis, VerifySteps,
        };
    }
}
