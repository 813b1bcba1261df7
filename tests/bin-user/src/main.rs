//! A binary crate as a user writes one: the `build.rs` output included in a private module,
//! and only a small part of it used (one plan of one checkpoint, its device bytes). Every
//! other generated item is unused, and the crate must still build with no warning under
//! `#![deny(warnings, missing_docs)]` and `clippy::pedantic` (`.ci/run` checks both).
#![deny(warnings, missing_docs)]
#![warn(clippy::pedantic)]

mod plans {
    include!(concat!(env!("OUT_DIR"), "/qwen3_5.rs"));
    include!(concat!(env!("OUT_DIR"), "/nemotron_h.rs"));
}

use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
use plans::qwen3_5::{Formats, Inputs, qwen3_5_27b};

fn main() {
    let inputs = Inputs {
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
    match qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256) {
        Ok(plan) => println!("qwen3_5_27b: {} device bytes", plan.device_bytes()),
        Err(error) => {
            eprintln!("qwen3_5_27b: {error}");
            std::process::exit(1);
        }
    }
}
