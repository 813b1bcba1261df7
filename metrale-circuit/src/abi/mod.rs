//! What the plans `metrale-codegen` generates call, split by concern; this file only
//! re-exports and fingerprints.
//!
//! - `arith`: the checked `const fn` arithmetic unit functions are written in.
//! - `table`: a checkpoint's static table, the IR a generated module holds as one `const`, and
//!   its view with the lengths erased ([`TableView`]), one type for every checkpoint of a circuit.
//! - `plan`: the algorithms the runtime runs on a view: a plan's start ([`TableView::start`]),
//!   the capacity searches
//!   ([`TableView::fit_kv_blocks`], [`TableView::fit_profile`]) and the rank wrapper
//!   ([`in_rank`]). A generated `new` and `for_rank` call these and add only the typed `lay`
//!   calls; a circuit's `AnyPlan::fit_*` are these calls on its checkpoint's view.
//! - `lanes`: sizing a class and summing the layout, the exact replay.
//! - `stage`: what a pipeline stage holds, and the classes a block instance lays out from.
//! - `choice`: what a checkpoint chosen at run time reads in `const fn`.
//!
//! Owner: metrale-circuit. This is `__private_v0_1`: hidden, not API, read by generated code
//! only; what engines read of a plan is public at the crate root. Generated code asserts
//! [`ABI`] at compile time.
//! Invariants:
//! - Sizes and stored dtypes come from the one sizing law (`sizing::size_term`,
//!   `sizing::term_dtype`) and offsets from the one layout law (`layout::Placer`), in layout
//!   order: a generated plan and the dynamic plan of the same
//!   circuit and inputs agree term for term, and on the first error.
//! - Everything here is a `const fn` without allocation.

mod arith;
mod choice;
mod lanes;
mod plan;
mod stage;
mod table;

pub use crate::plan::regions::field_group;
pub use crate::serve::{dims_by_name, shard};
pub use arith::{PartSpec, add, ceil_div, mul, packing_unit, parts, plain_parts, sub, unit, value};
pub use choice::{dtype_of, format_of, same_id, same_str};
pub use lanes::{ClassSize, GROUPS, Lanes, first_fault, group, size_class, valid_align};
pub use plan::{PlanStart, StageSizes, Units, in_rank, replay};
pub use stage::{Held, StageClasses, held, owners_held, position_of, window};
pub use table::{Row, Share, SizeClass, Step, Table, TableView, nth, put};

use crate::law::Holding;
use crate::model::{Lifetime, StateKind};

/// Bumped whenever what generated code calls changes its shape or meaning; each revision's
/// change is listed in the workspace's `CHANGELOG.md` ("ABI revisions").
const REVISION: u64 = 16;

/// The revision and every layout constant the generator writes into generated code ([`GROUPS`]
/// and each kind and holding's [`group`]), folded into one number (FNV-1a): the value of
/// `__GENERATED_ABI`, which generated code asserts equals the one it was generated against.
pub const ABI: u64 = {
    const fn fold(hash: u64, value: u64) -> u64 {
        (hash ^ value).wrapping_mul(0x0100_0000_01b3)
    }
    let mut hash = fold(0xcbf2_9ce4_8422_2325, REVISION);
    hash = fold(hash, GROUPS as u64);
    let mut k = 0;
    while k < StateKind::ALL.len() {
        let kind = StateKind::ALL[k];
        let holdings = Holding::of_kind(kind);
        let mut h = 0;
        while h < holdings.len() {
            hash = fold(
                hash,
                group(kind, holdings[h], Lifetime::of_kind(kind)) as u64,
            );
            h += 1;
        }
        k += 1;
    }
    hash
};
