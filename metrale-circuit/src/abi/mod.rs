//! What the plans `metrale-codegen` generates call, split by concern; this file only
//! re-exports and fingerprints.
//!
//! - `arith`: the checked `const fn` arithmetic unit functions are written in.
//! - `table`: a checkpoint's static table, the IR a generated module holds as one `const`.
//! - `plan`: the algorithms the runtime runs on a table: a stage's sizes and arena
//!   ([`Table::size`]), the capacity searches ([`Table::fit_kv_blocks`], [`Table::fit_profile`])
//!   and the rank wrapper ([`in_rank`]). A generated `new`, `for_rank` and `fit_*` call these
//!   and add only the typed `lay` calls.
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
pub use arith::{PartSpec, add, ceil_div, layout_unit, mul, parts, plain_parts, sub, unit, value};
pub use choice::{dtype_of, format_of, same_id, same_str};
pub use lanes::{ClassSize, GROUPS, Lanes, first_fault, group, size_class, valid_align};
pub use plan::{Sized, Units, in_rank, replay};
pub use stage::{Held, StageClasses, held, place_of, window};
pub use table::{Row, SizeClass, Step, Table, put};

use crate::law::Holding;
use crate::model::{Lifetime, StateKind};

/// Bumped whenever what generated code calls changes its shape or meaning (2: `ceil_div` takes
/// `Result`s, for derived dims; 3: size classes carry a window index, `size_class` the
/// windows; 4: a region carries its unit bytes and inner count; 5: generated plans fit
/// (`Search`, `ServingProfile`) and are chosen at run time (`RegionList`, `MissingFormat`);
/// 6: `Dims::on_tp` calls `shard` and names `ShardFault`; 7: plans are built for a pipeline
/// stage: `place_of` over a table's place starts, `held`, `StageClasses`, `ClassSize::ABSENT`;
/// `size_class` takes the held count and `replay` the `Held`; 8: a checkpoint's table is one
/// `Table` the runtime sizes, lays out, fits and ranks: `Table::size`, `Units`, `Sized`,
/// `Table::fit_kv_blocks`, `Table::fit_profile`, `in_rank`; unit functions call `unit` and
/// `on_tp` calls `shard` here, and generated code names the parallel, serving and dynamic items
/// through their modules; 9: `StateInputs` and a generated `Inputs` carry `draft_kv_dtype`,
/// which `size_class` retypes a draft KV side's unit by, and the layout policy, `pool`, whose
/// page pool the table's fits add (`Table::pool`); `ServingProfile` borrows its `h_steps`
/// tiers; 10: a size class's `reach` (a sliding window or an attention chunk, `Reach<usize>`)
/// replaces its `window`, and `Units::reaches` its `windows`; 11: formats are
/// `FormatChoice`s (`format_of`, `dtype_of`, `MissingFormat`'s `expected` and `refused`),
/// `Checkpoint::from_hf` ignores ASCII case (`same_id`), a `Unit` carries
/// its `elements`, a `Region` its `space`, and a state stored in a layout calls `layout_unit`,
/// `parts` and `plain_parts`; 12: a `Dims` is made from named values (`dims_by_name`, its
/// error `serving::DimsError`)).
const REVISION: u64 = 12;

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
