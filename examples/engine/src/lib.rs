//! A worked engine on metrale-circuit's public API: it turns a circuit, a checkpoint, a device
//! budget and a serving profile into memory, and serves sequences in it the way an inference
//! engine keeps its state between decode steps, to show that the plan's addresses hold.
//!
//! The pipeline, one file each:
//! - [`args`]: the command line ([`Args`]);
//! - [`setup`]: `Circuit::load`, `instantiate`, the `[serving]` profile, `fit_sequences` (the
//!   most sequences the budget holds at the profile's context), the dynamic `StatePlan` at
//!   that count ([`Setup`]);
//! - [`layout`]: the plan's terms wrapped in the field groups `RecurrentRegions`,
//!   `KvRegions`, `CacheRegions`, the only source of addresses ([`Layout`]), and each state's
//!   unit shape (`StateTerm::axes`, `strides()`) to check those addresses against;
//! - [`memory`]: one aligned host buffer per memory space, exactly the arena's bytes, as a
//!   stand-in for device memory;
//! - [`tags`]: the tag each written unit holds, the ledger, the final read-back;
//! - [`kv`]: each paged side on the runtime's allocator (`metrale_circuit::alloc`: a
//!   `BlockPool` and `BlockTable`s, windowed sides' as rings), with the window check before a
//!   ring reuses a block; the allocator also gives the engine its sequence slots (the padding
//!   dummy never handed out) and prefix-snapshot slots;
//! - [`engine`]: the operations: claim, prefill, decode, prefix snapshot and restore,
//!   verify with rollback, release; each term's shape checked against its unit at setup, and
//!   each unit written against its strides;
//! - [`mod@run`]: the script of operations ([`serve`]) and the whole program ([`run()`]);
//! - [`report`]: what it prints ([`Report`]), the unit shapes among it.
//!
//! ```no_run
//! use clap::Parser;
//! let args = metrale_engine::Args::parse_from([
//!     "engine", "circuits/qwen3_5.toml", "--checkpoint", "tiny", "--budget", "16MiB",
//!     "--inputs", "metrale-codegen/cli/inputs/serving.toml",
//! ]);
//! let report = metrale_engine::run(&args)?;
//! assert!(report.intact());
//! # Ok::<(), metrale_engine::EngineError>(())
//! ```
//!
//! Invariants:
//! - No address is computed here: every unit's bytes come from a plan `Region` through the
//!   address API (`Region::unit`, `at`, `group` and the field groups' accessors). The strides
//!   address a unit's last element only to check it lies in those bytes.
//! - Every unit of every term is written before the run (the format) and read back after it;
//!   the run succeeds only if each holds what the ledger says: no two units alias.
//! - No `unsafe` (the workspace denies it); memory stays what the budget says, bounded by
//!   `--max-memory`.

pub mod args;
pub mod engine;
pub mod error;
pub mod kv;
pub mod layout;
pub mod memory;
pub mod report;
pub mod run;
pub mod setup;
pub mod tags;

pub use args::{Args, ProfileFlags};
pub use engine::{Engine, Operations};
pub use error::EngineError;
pub use layout::{Layout, UnitRef};
pub use report::{Report, UnitShape, WindowSide};
pub use run::{run, serve};
pub use setup::Setup;
pub use tags::{Found, Mismatch, Tag, TagCheck};
