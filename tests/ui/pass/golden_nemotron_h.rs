//! The golden module of `circuits/nemotron_h.toml` compiles warning-free, and its plan can be a
//! constant.
#![deny(warnings, missing_docs)]

include!("../../golden/nemotron_h.rs");

use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use nemotron_h::{Formats, Inputs, nemotron_h_8b};

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

const PLAN: nemotron_h_8b::StatePlan =
    match nemotron_h_8b::StatePlan::new(&nemotron_h_8b::DIMS, &INPUTS, 256) {
        Ok(plan) => plan,
        Err(_) => panic!(),
    };

// One slot of `l0.mamba2.conv`: conv_window = 3 rows of 128 heads x 64 + 2 x 8 groups x 128
// = 8192 + 2048 = 10_240 channels = 30_720 elements x 2 B (bf16) = 61_440 B; 9 slots (the
// padding dummy included) = 552_960 B.
const _: () = assert!(PLAN.l0.mamba2.conv.live.bytes == 552_960);

fn main() {
    assert_eq!(PLAN.regions().len(), nemotron_h_8b::TERM_COUNT);
}
