//! Sliding-window KV sides in generated code: the window is a `const fn` of the dims, the
//! generated plan sizes a windowed side by the window law exactly as the dynamic plan does, and
//! KV inputs without window inputs are `PlanError::MissingWindow` for a windowed side only.
//! Figures by hand.

use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::inputs::WindowInputs;
use metrale_circuit::{Holding, KvInputs, PlanError, StateInputs};

mod plans {
    metrale_macros::circuit!(
        inline = r#"
schema = 2
arch = "sliding"
dims = ["kv_heads", "head_dim", "window"]
[layout]
kind = "interval"
period = 2
[layout.blocks]
linear_attention = ["local"]
full_attention = ["global"]
[[block.local.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "kv_heads x head_dim"
window = "window"
[[block.global.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "kv_heads x head_dim"
[checkpoint.small]
layers = 2
dims = { kv_heads = 2, head_dim = 4, window = 128 }
"#
    );
}

use plans::sliding::{Formats, Inputs, blocks, small};

/// 1,000 blocks of 16 tokens; 2 sequences, chunks of 64 tokens, 4,096-token context.
const KV: KvInputs = KvInputs {
    blocks: 1_000,
    block_size: 16,
    window: Some(WindowInputs {
        sequences: 2,
        chunk_tokens: 64,
        max_tokens: 4_096,
    }),
};

fn inputs(kv: KvInputs) -> Inputs<'static> {
    Inputs {
        formats: Formats {},
        slots: 1,
        verify: None,
        kv: Some(kv),
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    }
}

#[test]
fn a_windowed_side_holds_what_the_window_law_gives() {
    assert_eq!(blocks::local::k_window(&small::DIMS), Ok(128));
    let plan = small::StatePlan::new(&small::DIMS, &inputs(KV), 256).expect("plans");
    // Layer 0 is windowed: min(127 + 64, 4096) = 191 tokens span 12 blocks, + 1: 13 per
    // sequence, 26 for 2; 26 x 16 tokens of 2 x 4 bf16 = 16 bytes.
    assert_eq!(plan.l0.local.k.blocks.units, 26 * 16);
    assert_eq!(plan.l0.local.k.blocks.bytes, 26 * 16 * 16);
    // Layer 1 is global: the whole pool.
    assert_eq!(plan.l1.global.k.blocks.units, 1_000 * 16);
    let dynamic = dynamic_plan(KV).expect("plans");
    for (state, region) in [
        ("l0.local.k", plan.l0.local.k.blocks),
        ("l1.global.k", plan.l1.global.k.blocks),
    ] {
        let term = dynamic.term(state, Holding::Blocks).expect("a term");
        assert_eq!(
            (term.offset, term.bytes, term.units),
            (region.offset, region.bytes, region.units)
        );
    }
    assert_eq!(dynamic.device_bytes(), plan.device_bytes());
}

#[test]
fn a_windowed_side_needs_window_inputs() {
    assert_eq!(
        small::StatePlan::new(&small::DIMS, &inputs(KvInputs::blocks(1_000, 16)), 256).map(|_| ()),
        Err(PlanError::MissingWindow {
            state: "l0.local.k"
        })
    );
    assert_eq!(
        dynamic_plan(KvInputs::blocks(1_000, 16)).map(|_| ()),
        Err(metrale_circuit::PlanError::MissingWindow {
            state: "l0.local.k".to_owned()
        })
    );
}

/// The dynamic plan of the macro's circuit (loaded from this file's text) under `kv`.
fn dynamic_plan(kv: KvInputs) -> Result<DynamicPlan, metrale_circuit::PlanError<String>> {
    let circuit = metrale_tests::inline_circuit(include_str!("window.rs"), "sliding.toml");
    let decls = circuit
        .instantiate("small")
        .unwrap_or_else(|e| panic!("{e}"));
    DynamicPlan::new(
        &decls,
        &StateInputs {
            slots: 1,
            kv: Some(kv),
            ..StateInputs::EMPTY
        },
        256,
    )
}

/// Llama 4 Scout's chunked sides (8,192-token chunks) in the zoo's generated module, by hand.
#[test]
fn a_chunked_side_holds_what_the_chunk_law_gives() {
    use metrale_tests::llama4::{Formats, Inputs, blocks, llama_4_scout_17b_16e as scout};
    assert_eq!(blocks::chunked::k_chunk(&scout::DIMS), Ok(8192));
    // 8 sequences, 8,192-token prefill steps, 131,072-token context, 1,000,000 blocks of 16.
    let kv = KvInputs {
        blocks: 1_000_000,
        block_size: 16,
        window: Some(WindowInputs {
            sequences: 8,
            chunk_tokens: 8192,
            max_tokens: 131_072,
        }),
    };
    let inputs = Inputs {
        formats: Formats {
            kv_cache_dtype: metrale_circuit::StateDtype::Bf16,
        },
        slots: 9,
        verify: None,
        kv: Some(kv),
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    let plan = scout::StatePlan::new(&scout::DIMS, &inputs, 256).expect("plans");
    // A chunked side: min(8192 + 8192, 131072) = 16,384 tokens, 1,024 blocks a sequence (no
    // extra block: a chunk starts on a block boundary), 8,192 for 8; a token of one side is
    // 8 KV heads x 128 bf16 = 2,048 B.
    assert_eq!(plan.l0.chunked.k.blocks.units, 8 * 1024 * 16);
    assert_eq!(plan.l0.chunked.k.blocks.bytes, 8 * 1024 * 16 * 2048);
    // Layer 3 is global: the whole pool.
    assert_eq!(plan.l3.global.v.blocks.units, 1_000_000 * 16);
    // A pool too small for the chunks bounds them.
    let small = Inputs {
        kv: Some(KvInputs { blocks: 100, ..kv }),
        ..inputs
    };
    let plan = scout::StatePlan::new(&scout::DIMS, &small, 256).expect("plans");
    assert_eq!(plan.l0.chunked.k.blocks.units, 100 * 16);
}
