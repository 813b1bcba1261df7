//! User code naming a state the circuit does not declare (`gdn` has `h`, not `hh`).
mod plans {
    metrale_macros::circuit!("../../../circuits/qwen3_5.toml");
}

use plans::qwen3_5::qwen3_5_27b::StatePlan;

fn live_bytes(plan: &StatePlan) -> u64 {
    plan.l0.gdn.hh.live.bytes
}

fn main() {
    let _ = live_bytes;
}
