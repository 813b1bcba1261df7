//! Every circuit in `circuits/` through `circuit!`, named relative to this file, compiles
//! warning-free, and its plan can be a constant.
#![deny(warnings, missing_docs)]

/// The generated modules.
pub mod plans {
    metrale_macros::circuit!("../../../circuits/deepseek_v3.toml");
    metrale_macros::circuit!("../../../circuits/deepseek_v32.toml");
    metrale_macros::circuit!("../../../circuits/falcon_h1.toml");
    metrale_macros::circuit!("../../../circuits/gemma2.toml");
    metrale_macros::circuit!("../../../circuits/gemma3.toml");
    metrale_macros::circuit!("../../../circuits/gemma3n.toml");
    metrale_macros::circuit!("../../../circuits/gpt_oss.toml");
    metrale_macros::circuit!("../../../circuits/granite_4_h.toml");
    metrale_macros::circuit!("../../../circuits/jamba.toml");
    metrale_macros::circuit!("../../../circuits/kimi_linear.toml");
    metrale_macros::circuit!("../../../circuits/llama.toml");
    metrale_macros::circuit!("../../../circuits/llama4.toml");
    metrale_macros::circuit!("../../../circuits/minimax_m1.toml");
    metrale_macros::circuit!("../../../circuits/mistral.toml");
    metrale_macros::circuit!("../../../circuits/nemotron_h.toml");
    metrale_macros::circuit!("../../../circuits/qwen3_5.toml");
    metrale_macros::circuit!("../../../circuits/qwen3_next.toml");
    metrale_macros::circuit!("../../../circuits/whisper.toml");
    // Not a real model: the suites' circuit of KV shared across layers.
    metrale_macros::circuit!("../circuits/shared_kv.toml");
}

use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use plans::nemotron_h::nemotron_h_8b;
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

// One slot of `l0.gdn.h`: 48 value heads x 128 x 128 f32 = 786_432 elements x 4 B
// = 3_145_728 B; 9 slots (the padding dummy included) = 28_311_552 B.
const _: () = assert!(PLAN.l0.gdn.h.live.bytes == 28_311_552);
// One token of `l3.attn.k`: 4 kv heads x 256 x 1 B (fp8) = 1024 B; 2048 blocks of 16 tokens
// = 33_554_432 B.
const _: () = assert!(PLAN.l3.attn.k.blocks.bytes == 33_554_432);

/// The same serve for Nemotron-H (its `Inputs` is its own type, with the same fields).
const NEMOTRON_INPUTS: plans::nemotron_h::Inputs<'static> = plans::nemotron_h::Inputs {
    formats: plans::nemotron_h::Formats {
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

const NEMOTRON_PLAN: nemotron_h_8b::StatePlan =
    match nemotron_h_8b::StatePlan::new(&nemotron_h_8b::DIMS, &NEMOTRON_INPUTS, 256) {
        Ok(plan) => plan,
        Err(_) => panic!(),
    };

// One slot of `l0.mamba2.h`: 128 heads x 64 x 128 f32 = 1_048_576 elements x 4 B
// = 4_194_304 B; 9 slots = 37_748_736 B.
const _: () = assert!(NEMOTRON_PLAN.l0.mamba2.h.live.bytes == 37_748_736);
// One token of `l7.attn.k` (the first attention layer): 8 kv heads x 128 x 1 B (fp8) = 1024 B;
// 2048 blocks of 16 tokens = 33_554_432 B.
const _: () = assert!(NEMOTRON_PLAN.l7.attn.k.blocks.bytes == 33_554_432);

fn main() {
    assert_eq!(PLAN.regions().len(), qwen3_5_27b::TERM_COUNT);
    assert_eq!(NEMOTRON_PLAN.regions().len(), nemotron_h_8b::TERM_COUNT);
}
