//! Plans: the dynamic plan (`dynamic`: every declared state sized and placed at run time, the
//! reference generated plans are tested against), what an engine reads of any plan besides a
//! `Region` (`regions`: the field groups, term infos, units, region lists; `parts`: where each
//! part of a packing's unit sits), and why a plan
//! could not be made (`error`).
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - A plan sizes and places only through the laws (`law`); it adds order and errors, never a
//!   second way to size or place a term.
//! - Every const [`PlanError`] of a generated plan converts into the `PlanError<String>` the
//!   dynamic plan gives for the same circuit and inputs.

mod axes;
mod dynamic;
mod error;
pub(crate) mod parts;
mod pool;
pub(crate) mod regions;
mod views;

pub use axes::Axes;
pub(crate) use dynamic::owners_held;
pub use dynamic::{DynamicPlan, FieldGroup, StateRegions, StateTerm, UnitPacking};
pub use error::{MissingFormat, PlanError};
pub use parts::{Part, Parts};
pub use pool::{PagePool, PoolMember, PoolPlan};
pub use regions::{CacheRegions, KvRegions, RecurrentRegions, RegionList, TermInfo, Unit};
#[cfg(feature = "bytemuck")]
pub use views::Element;
pub use views::ViewError;
