//! The inputs file: the plan inputs an engine decides, written as TOML (`[formats]`, counts,
//! `[verify]`, `[kv]`, `[caches]`, `[parallel]`, `[pool]`: the layout policy, `pool`), read into an owned [`InputsFile`] with every
//! error located (`file`), and its `[serving]` profile with the rules refusing counts that
//! disagree with it or with each other, each refusal located in the file (`agree`), and what
//! of it made a plan overflow, its counts tried at 1 (`cause`). Its keys,
//! rules and errors for users are in `docs/inputs.md`.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - The keys are exactly the field names of the plan inputs; every error of a file is
//!   reported, in file order, through the same walk and sink as a circuit's.
//! - The agreement rules are the runtime's (`serve`); this layer only locates them.
//! - It reads no circuit: an inputs file serves every circuit whose format keys it gives; what
//!   it gives a key is checked against a checkpoint's states only when asked (`formats`).

mod agree;
mod cause;
mod file;
mod formats;
mod pool;

pub use cause::{KeyPath, OverflowCause};
pub use file::{InputsFile, InputsView, ParallelCounts, StepCounts, VerifyCounts};

// The key tables, one source of truth for the inputs file's JSON Schema (`crate::schema`).
#[cfg(feature = "schema")]
pub(crate) use agree::{SERVING_KEYS, SERVING_KV_KEYS};
#[cfg(feature = "schema")]
pub(crate) use file::{
    CACHE_KEYS, CARRY_KEYS, DRAFT_KEYS, KV_KEYS, LOOKUP_KEYS, PARALLEL_KEYS, RING_KEYS, TOP_KEYS,
    TREE_KEYS, VERIFY_KEYS, WINDOW_KEYS,
};
#[cfg(feature = "schema")]
pub(crate) use pool::{POLICIES, POOL_KEYS};
