//! Serving: what a server's operator decides, and what follows from it for plans. Parallel
//! ranks (`parallel`: a dim sharded over tensor-parallel ranks, the layers each pipeline rank
//! holds), the serving profile and the one rule deriving every plan count from it (`profile`),
//! the counts that must agree with each other and with a profile (`agree`), and capacity: the
//! largest free input whose plan fits a byte budget (`fit`), what its answer holds per unit and
//! what one more costs, and the page pool a budget's rest makes (`capacity`), the budget a GPU leaves the state
//! once its weights and a reserve are counted (`gpu`), and which circuit and checkpoint a
//! model asked for at run time is (`registry`), a checkpoint's dims given by name at run time
//! (`named_dims`); and handing out the units a plan sized at run
//! time: slots, KV blocks with reference counts, block tables and rings (`alloc`).
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - Every count a profile derives is non-decreasing in its sequences, so a plan's bytes are
//!   too, which every fit's search relies on.
//! - A pipeline rank's stage is placed by one rule ([`Stage::holds`]), the dynamic plan's and
//!   the generated plans' alike.
//! - It sizes through the dynamic plan (`plan`) and the laws, never on its own.

mod agree;
mod alloc;
mod capacity;
pub(crate) mod fit;
mod gpu;
mod named_dims;
mod parallel;
mod profile;
mod registry;

pub use agree::Disagreement;
pub use alloc::{AllocError, Appended, BlockPool, BlockTable, IndexPool, SlotPool};
pub use capacity::{Capacity, PageCosts, PoolCapacity};
pub(crate) use fit::Search;
pub use fit::{Fit, FitError, fit_kv_blocks, fit_profile, fit_profile_blocks, fit_sequences};
pub use gpu::{GpuMemory, GpuShortfall, Utilization};
pub use named_dims::{DimsError, dims_by_name};
pub use parallel::{
    Parallel, ParallelError, Rank, RankError, ShardFault, Stage, StageFault, shard,
};
pub use profile::{KvTokens, ProfileFree, ProfileKv, ServingProfile};
pub use registry::{CircuitEntry, Registry, RegistryError, Resolved};
