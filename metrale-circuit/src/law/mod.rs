//! The laws both plans obey, each written once: how many units and bytes a term has and the
//! dtype it is stored in (`sizing`, with the cache counts and hash-table law of `caches`),
//! where each term sits in its arena (`layout`), and the unified page pool's shape (`pages`,
//! vLLM's policy).
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - Units and bytes come only from `sizing::size_term`, a term's dtype only from
//!   `sizing::term_dtype`, offsets only from `layout::Placer`:
//!   the dynamic plan and every generated plan call the same `const fn`s.
//! - All arithmetic is checked: an overflow is an error value, never a wrap or a panic.
//! - It reads only the vocabulary (`model`).

mod caches;
pub(crate) mod layout;
pub(crate) mod pages;
pub(crate) mod sizing;

pub use layout::{Arena, DEFAULT_ALIGN, Region};
pub use pages::{Family, PoolFault, PoolLayer, PoolShape};
pub use sizing::{Holding, SizeFault, Space};
