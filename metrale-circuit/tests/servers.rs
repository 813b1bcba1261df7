//! Real servers' shapes (issue 19) planned on a zoo circuit, Qwen3-Next-80B-A3B
//! (`circuits/configs/qwen3_next_80b_a3b.json`: GDN `h` of 32 value heads x 128 x 128, 2 KV
//! heads of 256), each figure worked out by hand.

use metrale_circuit::dynamic::{DynamicPlan, StateDecl};
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::{Holding, StateDtype, StateInputs};

fn qwen3_next() -> Vec<StateDecl> {
    Circuit::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../circuits/qwen3_next.toml"
    ))
    .unwrap_or_else(|e| panic!("{e}"))
    .instantiate("qwen3_next_80b_a3b")
    .unwrap_or_else(|e| panic!("{e}"))
}

const FORMATS: [(&str, StateDtype); 3] = [
    ("ssm_h_storage", StateDtype::F32),
    ("ssm_conv_storage", StateDtype::Bf16),
    ("kv_cache_dtype", StateDtype::Fp8),
];

/// Units and bytes of a term the plan must have.
fn term(plan: &DynamicPlan, state: &str, holding: Holding) -> (u64, u64) {
    let t = plan
        .term(state, holding)
        .unwrap_or_else(|| panic!("no {state} {holding:?}"));
    (t.units, t.bytes)
}

#[test]
fn the_two_slot_tiered_server_plans() {
    // The reference engine's golden memory report: 2 live slots, `h_steps = [3, 3]`, 128-row
    // tables, a carried-state stash per verify slot; described by its serving profile.
    let file = InputsFile::parse(
        "server.toml",
        "[serving]\nsequences = 1\nverify_rows = 3\nh_steps = [3, 3]\ntable_rows = 128\n\
         carry = true\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let counts = file.serving().unwrap().inputs().unwrap();
    let plan = DynamicPlan::new(
        &qwen3_next(),
        &StateInputs {
            formats: &FORMATS,
            ..counts
        },
        256,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // h: 32 x 128 x 128 f32 = 2 MiB a unit.
    let h = 32 * 128 * 128 * 4;
    assert_eq!(term(&plan, "l0.gdn.h", Holding::Live), (2, 2 * h));
    assert_eq!(term(&plan, "l0.gdn.h", Holding::Steps), (6, 6 * h)); // 3 + 3 rows
    assert_eq!(term(&plan, "l0.gdn.h", Holding::Checkpoint), (2, 2 * h));
    // conv: 3 conv steps in each of the 2 verify slots.
    assert_eq!(term(&plan, "l0.gdn.conv", Holding::Steps).0, 6);
    // A stash per verify slot; 128 carry-table rows of 4 u64, 128 WY-table rows of 2 u64.
    assert_eq!(term(&plan, "l0.gdn.carry", Holding::Cache), (2, 2 * h));
    assert_eq!(
        term(&plan, "l0.gdn.carry_table", Holding::Cache),
        (128, 128 * 32)
    );
    assert_eq!(
        term(&plan, "l0.gdn.wy_table", Holding::Cache),
        (128, 128 * 16)
    );
    // 2 verify slots of 3 draft positions, 2 f32 each.
    assert_eq!(term(&plan, "head.draft_tokens", Holding::Cache), (6, 6 * 8));
    // The file holds the same counts.
    assert_eq!(file.view().inputs().verify, counts.verify);
}
