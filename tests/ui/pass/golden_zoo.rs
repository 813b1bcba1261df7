//! The golden modules of the zoo circuits without a case of their own compile warning-free side
//! by side, and a windowed plan can be a constant.
#![deny(warnings, missing_docs)]

include!("../../golden/deepseek_v3.rs");
include!("../../golden/deepseek_v32.rs");
include!("../../golden/falcon_h1.rs");
include!("../../golden/gemma2.rs");
include!("../../golden/gemma3.rs");
include!("../../golden/gemma3n.rs");
include!("../../golden/gpt_oss.rs");
include!("../../golden/granite_4_h.rs");
include!("../../golden/jamba.rs");
include!("../../golden/kimi_linear.rs");
include!("../../golden/llama.rs");
include!("../../golden/llama4.rs");
include!("../../golden/minimax_m1.rs");
include!("../../golden/mistral.rs");
include!("../../golden/qwen3_next.rs");
include!("../../golden/whisper.rs");

use gpt_oss::{Formats, Inputs, gpt_oss_120b};
use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use metrale_circuit::inputs::WindowInputs;

/// gpt-oss-120b at 8 sequences, 8,192-token prefill chunks and 131,072-token sequences, in a
/// pool of 100,000 blocks of 16 tokens.
const INPUTS: Inputs<'static> = Inputs {
    formats: Formats {
        kv_cache_dtype: StateDtype::Fp8,
    },
    slots: 9,
    verify: None,
    kv: Some(KvInputs {
        blocks: 100_000,
        block_size: 16,
        window: Some(WindowInputs {
            sequences: 8,
            chunk_tokens: 8_192,
            max_tokens: 131_072,
        }),
    }),
    draft_kv: None,
    draft_kv_dtype: None,
    caches: CacheInputs::EMPTY,
    pool: metrale_circuit::serving::PoolPolicy::Arenas,
};

const PLAN: gpt_oss_120b::StatePlan =
    match gpt_oss_120b::StatePlan::new(&gpt_oss_120b::DIMS, &INPUTS, 256) {
        Ok(plan) => plan,
        Err(_) => panic!(),
    };

// By hand: a sliding side keeps per sequence ceil(min(128 - 1 + 8192, 131072) / 16) + 1 =
// ceil(8319 / 16) + 1 = 520 + 1 = 521 blocks; 8 sequences = 4,168 blocks (under the pool's
// 100,000) = 66,688 tokens x 8 KV heads x 64 (fp8, 1 B) = 34,144,256 B.
const _: () = assert!(PLAN.l0.swa.k.blocks.bytes == 34_144_256);
// A full side keeps the whole pool: 100,000 x 16 tokens x 512 B.
const _: () = assert!(PLAN.l1.attn.k.blocks.bytes == 819_200_000);

fn main() {
    assert_eq!(PLAN.regions().len(), gpt_oss_120b::TERM_COUNT);
}
