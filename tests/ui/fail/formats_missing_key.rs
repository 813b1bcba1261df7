//! User code building `Formats` without a key the circuit names (`{kv_cache_dtype}`).
mod plans {
    metrale_macros::circuit!("../../../circuits/qwen3_5.toml");
}

use metrale_circuit::StateDtype;
use plans::qwen3_5::Formats;

fn main() {
    let _formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
    };
}
