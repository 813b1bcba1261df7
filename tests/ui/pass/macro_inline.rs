//! An inline circuit through `circuit!`, its runtime named through a re-export
//! (`runtime = "crate::rt"`), compiles warning-free, and its plan can be a constant.
#![deny(warnings, missing_docs)]

/// The runtime crate, as an engine would re-export it.
pub use metrale_circuit as rt;

/// The generated module.
pub mod plans {
    metrale_macros::circuit!(
        inline = r#"
schema = 1
arch = "mini"
dims = ["heads", "width"]
[layout]
kind = "interval"
period = 2
[layout.blocks]
linear_attention = ["mix"]
full_attention = ["attn"]
[[block.mix.state]]
id = "h"
kind = "recurrent"
lifetime = "sequence"
format = "{h_dtype}"
shape = "heads x width"
verify = "h_steps"
[[block.mix.node]]
id = "step"
state = { h = "update" }
[[block.attn.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "heads x width"
[[block.attn.node]]
id = "append"
state = { k = "write" }
[[block.attn.node]]
id = "attend"
state = { k = "read" }
[checkpoint.small]
layers = 2
dims = { heads = 2, width = 8 }
"#,
        runtime = "crate::rt"
    );
}

use plans::mini::{Formats, Inputs, small};
use rt::{CacheInputs, KvInputs, StateDtype};

const INPUTS: Inputs<'static> = Inputs {
    formats: Formats {
        h_dtype: StateDtype::F32,
    },
    slots: 3,
    verify: None,
    kv: Some(KvInputs {
        blocks: 4,
        block_size: 16,
        window: None,
    }),
    draft_kv: None,
    draft_kv_dtype: None,
    caches: CacheInputs::EMPTY,
    pool: metrale_circuit::serving::PoolPolicy::Arenas,
};

const PLAN: small::StatePlan = match small::StatePlan::new(&small::DIMS, &INPUTS, 256) {
    Ok(plan) => plan,
    Err(_) => panic!(),
};

// Layer 0 is `linear_attention` (period 2): one slot of `l0.mix.h` is heads x width
// = 2 x 8 = 16 f32 = 64 B; 3 slots = 192 B.
const _: () = assert!(PLAN.l0.mix.h.live.bytes == 192);
// Layer 1 is `full_attention`: one token of `l1.attn.k` is 2 x 8 = 16 bf16 = 32 B; 4 blocks
// of 16 tokens = 2048 B.
const _: () = assert!(PLAN.l1.attn.k.blocks.bytes == 2048);

fn main() {
    assert_eq!(PLAN.regions().len(), small::TERM_COUNT);
}
