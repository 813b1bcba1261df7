//! Real servers' shapes (issue 19) planned on a zoo circuit, Qwen3-Next-80B-A3B
//! (`circuits/configs/qwen3_next_80b_a3b.json`: GDN `h` of 32 value heads x 128 x 128, 2 KV
//! heads of 256, 48 layers of which every fourth is full attention, and a one-layer MTP draft
//! head with its own KV), each figure worked out by hand.

use metrale_circuit::dynamic::{
    DynamicPlan,
    decl::{Section, StateDecl},
};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::{Holding, PlanError, StateDtype, StateInputs, StateKind};

fn qwen3_next() -> Vec<StateDecl> {
    Circuit::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../circuits/qwen3_next.toml"
    ))
    .unwrap_or_else(|e| panic!("{e}"))
    .instantiate("qwen3_next_80b_a3b")
    .unwrap_or_else(|e| panic!("{e}"))
}

const FORMATS: [(&str, FormatChoice); 3] = [
    ("ssm_h_storage", FormatChoice::Dtype(StateDtype::F32)),
    ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
    ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
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

#[test]
fn an_fp8_main_pool_and_a_bf16_draft_pool_plan_each_at_its_dtype() {
    // The reference engine's ledger fixtures: `kv_cache_dtype = "fp8"` for the main pool,
    // `draft_kv_dtype = "bf16"` for the draft head's.
    let text = "slots = 3\ndraft_kv_dtype = \"bf16\"\n[formats]\nssm_h_storage = \"f32\"\n\
                ssm_conv_storage = \"bf16\"\nkv_cache_dtype = \"fp8\"\n\
                [kv]\nblocks = 100\nblock_size = 16\n[draft_kv]\nblocks = 40\nblock_size = 16\n";
    let file = InputsFile::parse("mixed.toml", text).unwrap_or_else(|e| panic!("{e}"));
    let view = file.view();
    let mixed = view.inputs();
    assert_eq!(mixed.draft_kv_dtype, Some(StateDtype::Bf16));
    let decls = qwen3_next();
    let plan = |inputs: &StateInputs<'_>| {
        DynamicPlan::new(&decls, inputs, 256).unwrap_or_else(|e| panic!("{e}"))
    };
    let (with, without) = (
        plan(&mixed),
        plan(&StateInputs {
            draft_kv_dtype: None,
            ..mixed
        }),
    );
    // One KV side's token: 2 KV heads x 256; a pool of blocks x block_size tokens.
    let token = 2 * 256;
    let (main_tokens, draft_tokens) = (100 * 16, 40 * 16);
    let draft = |id: &str| {
        decls
            .iter()
            .any(|d| d.id == id && d.section() == Section::Draft)
    };
    let mut draft_sides = 0;
    assert_eq!(with.terms().len(), without.terms().len());
    for (a, b) in with.terms().iter().zip(without.terms()) {
        assert_eq!((&a.state, a.holding), (&b.state, b.holding));
        if a.kind == StateKind::PagedKv && draft(&a.state) {
            draft_sides += 1;
            // bf16: 2 bytes an element, twice the fp8 pool's.
            assert_eq!((a.dtype, b.dtype), (StateDtype::Bf16, StateDtype::Fp8));
            assert_eq!(a.units, draft_tokens);
            assert_eq!(a.bytes, token * 2 * draft_tokens, "{}", a.state);
            assert_eq!(b.bytes, token * draft_tokens);
            assert_eq!((a.unit_bytes, a.inner), (token * 2, 16));
        } else {
            // Every other term as without the key (its offset aside: the draft pool, laid out
            // with the model's other terms, grew).
            assert_eq!(
                (a.units, a.bytes, a.dtype, a.unit_bytes, a.inner),
                (b.units, b.bytes, b.dtype, b.unit_bytes, b.inner),
                "{}",
                a.state
            );
            if a.kind == StateKind::PagedKv {
                assert_eq!(a.dtype, StateDtype::Fp8);
                assert_eq!(a.bytes, token * main_tokens, "{}", a.state);
            }
        }
    }
    // The draft head's attention: one `k` and one `v`.
    assert_eq!(draft_sides, 2);
    assert_eq!(
        with.device_bytes() - without.device_bytes(),
        2 * token * draft_tokens
    );
    // The format key the draft sides name is still required.
    let head: Vec<StateDecl> = decls
        .iter()
        .filter(|d| d.section() == Section::Draft)
        .cloned()
        .collect();
    let error = DynamicPlan::new(
        &head,
        &StateInputs {
            formats: &[],
            ..mixed
        },
        256,
    )
    .unwrap_err();
    assert_eq!(
        error,
        PlanError::MissingFormat {
            state: "draft.attn.k".to_owned(),
            key: "kv_cache_dtype".to_owned()
        }
    );
}
