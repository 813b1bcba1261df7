//! Every circuit in `circuits/` through `circuit!`, named relative to this file, compiles
//! warning-free, and its plan can be a constant.
#![deny(warnings, missing_docs)]

/// The generated modules.
pub mod plans {
    metrale_macros::circuit!("../../../circuits/qwen3_5.toml");
}

use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use plans::qwen3_5::{Formats, Inputs, qwen3_5_27b};

const INPUTS: Inputs<'static> = Inputs {
    formats: Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    },
    slots: 9,
    verify: None,
    kv: Some(KvInputs {
        blocks: 2048,
        block_size: 16,
    }),
    draft_kv: None,
    caches: CacheInputs::EMPTY,
};

const PLAN: qwen3_5_27b::StatePlan =
    match qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &INPUTS, 256) {
        Ok(plan) => plan,
        Err(_) => panic!(),
    };

// One slot of `l0.gdn.h`: 48 value heads x 128 x 128 f32 = 786_432 elements x 4 B
// = 3_145_728 B; 9 slots (the padding dummy included) = 28_311_552 B.
const _: () = assert!(PLAN.l0.gdn.h.live.bytes == 28_311_552);
// One token of `l3.attn.k`: 4 kv heads x 256 x 1 B (fp8) = 1024 B; 2048 blocks of 16 tokens
// = 33_554_432 B.
const _: () = assert!(PLAN.l3.attn.k.blocks.bytes == 33_554_432);

fn main() {
    assert_eq!(PLAN.regions().len(), qwen3_5_27b::TERM_COUNT);
}
