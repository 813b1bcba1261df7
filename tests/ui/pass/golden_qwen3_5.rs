//! The golden module of `circuits/qwen3_5.toml` compiles warning-free, and its plan can be a
//! constant.
#![deny(warnings, missing_docs)]

include!("../../golden/qwen3_5.rs");

use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use qwen3_5::{Formats, Inputs, qwen3_5_27b};

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
        window: None,
    }),
    draft_kv: None,
    draft_kv_dtype: None,
    caches: CacheInputs::EMPTY,
    pool: metrale_circuit::serving::PoolPolicy::Arenas,
};

const PLAN: qwen3_5_27b::StatePlan =
    match qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &INPUTS, 256) {
        Ok(plan) => plan,
        Err(_) => panic!(),
    };

// One token of `l3.attn.k`: 4 kv heads x 256 x 1 B (fp8); 2048 blocks of 16 tokens.
const _: () = assert!(PLAN.l3.attn.k.blocks.bytes == 2048 * 16 * 4 * 256);

fn main() {
    assert_eq!(PLAN.regions().len(), qwen3_5_27b::TERM_COUNT);
}
