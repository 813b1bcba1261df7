//! Units made of parts (schema 3) on DeepSeek-V3.2 (`circuits/deepseek_v32.toml`): each value
//! `{kv_cache_dtype}` may hold gives the MLA latent the unit vLLM keeps, the indexer key is
//! always its one packing, the parts sit where vLLM's kernels write them, and the generated
//! plan, its `<state>_parts` and the dynamic plan agree.
//!
//! Reference figures, from vLLM 0.33.0 (commit 4ba787ec9), by hand:
//! - the latent row is `kv_lora_rank + qk_rope_head_dim` = 576 elements of the cache dtype
//!   (`model_executor/layers/attention/mla_attention.py:480`): 1,152 B in bf16, 576 B in fp8;
//! - `fp8_ds_mla` is 656 B a token: 512 fp8 `NoPE` values, 4 f32 scales, 64 bf16 `RoPE` values
//!   (`v1/attention/backends/mla/flashmla_sparse.py:79-87`, the constant at
//!   `mla_attention.py:1386`);
//! - `nvfp4_ds_mla` is 352 B a token: 512 e2m1 values two a byte, 64 fp8 `RoPE` values, 32 fp8
//!   scales (`flashmla_sparse.py:111-121`, `mla_attention.py:1386`);
//! - the indexer key is `index_head_dim + index_head_dim // 128 * 4` = 132 uint8 a token
//!   (`model_executor/models/deepseek_v2.py:731-736`), whatever the cache dtype.

use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::load::Circuit;
use metrale_circuit::{DEFAULT_ALIGN, KvInputs, MissingFormat, PlanError, StateDtype, StateInputs};
use metrale_tests::deepseek_v32::{
    Formats, Inputs, KvCacheDtypeFormat, blocks, deepseek_v3_2, tiny,
};

fn circuit() -> Circuit {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Circuit::load(root.join("circuits/deepseek_v32.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn formats(kv: KvCacheDtypeFormat) -> Formats {
    Formats { kv_cache_dtype: kv }
}

const BF16: KvCacheDtypeFormat = KvCacheDtypeFormat::Dtype(StateDtype::Bf16);
const FP8: KvCacheDtypeFormat = KvCacheDtypeFormat::Dtype(StateDtype::Fp8);
const DS_MLA: KvCacheDtypeFormat = KvCacheDtypeFormat::Fp8DsMla;
const NVFP4: KvCacheDtypeFormat = KvCacheDtypeFormat::Nvfp4DsMla;

/// One block of 64 tokens on the main pool and on the draft head's.
const ONE_BLOCK: KvInputs = KvInputs {
    blocks: 1,
    block_size: 64,
    window: None,
};

fn inputs(kv: KvCacheDtypeFormat) -> Inputs<'static> {
    Inputs::with_counts(
        formats(kv),
        &StateInputs {
            kv: Some(ONE_BLOCK),
            draft_kv: Some(ONE_BLOCK),
            ..StateInputs::EMPTY
        },
    )
}

#[test]
fn each_value_of_the_key_is_vllms_unit() {
    let dims = &deepseek_v3_2::DIMS;
    let latent = |kv| blocks::mla::latent_unit(dims, formats(kv)).map(|u| u.bytes);
    assert_eq!(latent(BF16), Ok(1152));
    assert_eq!(latent(FP8), Ok(576));
    assert_eq!(latent(DS_MLA), Ok(656));
    assert_eq!(latent(NVFP4), Ok(352));
    // A packing's unit is addressed by byte, and has no one dtype's elements.
    let unit = blocks::mla::latent_unit(dims, formats(DS_MLA)).unwrap();
    assert_eq!((unit.dtype, unit.elements), (StateDtype::U8, None));
    // The indexer key is always its packing: 128 fp8 values and one f32 scale.
    for kv in [BF16, FP8, DS_MLA, NVFP4] {
        assert_eq!(
            blocks::mla::index_k_unit(dims, formats(kv)).map(|u| u.bytes),
            Ok(132)
        );
    }
    // The miniature: kv_lora_rank 128, RoPE 8, index_head_dim 128. fp8_ds_mla is 128 fp8, one
    // f32 scale and 8 bf16: 148 B; nvfp4_ds_mla 64 + 8 + 8 = 80 B.
    let tiny_latent = |kv| blocks::mla::latent_unit(&tiny::DIMS, formats(kv)).map(|u| u.bytes);
    assert_eq!(tiny_latent(DS_MLA), Ok(148));
    assert_eq!(tiny_latent(NVFP4), Ok(80));
    assert_eq!(tiny_latent(BF16), Ok(272));
}

#[test]
fn the_whole_model_per_token_is_61_layers_and_the_mtp_layer() {
    // Per token and layer: latent + 132. One 64-token block of each pool: 61 main layers, and
    // the MTP layer in the draft pool.
    for (kv, per_token) in [(BF16, 1284), (FP8, 708), (DS_MLA, 788), (NVFP4, 484)] {
        let plan = deepseek_v3_2::StatePlan::new(&deepseek_v3_2::DIMS, &inputs(kv), DEFAULT_ALIGN)
            .unwrap();
        let main: u64 = plan
            .layers()
            .iter()
            .map(|layer| match layer {
                metrale_tests::deepseek_v32::Layer::FullAttention(l) => {
                    l.mla.latent.blocks.bytes + l.mla.index_k.blocks.bytes
                }
            })
            .sum();
        assert_eq!(main, 61 * 64 * per_token, "{kv:?}");
        let draft = plan.draft.mla.latent.blocks.bytes + plan.draft.mla.index_k.blocks.bytes;
        assert_eq!(draft, 64 * per_token, "{kv:?}");
    }
}

#[test]
fn parts_sit_where_vllms_kernels_write_them() {
    let dims = &deepseek_v3_2::DIMS;
    let spans = |kv| -> Vec<(&'static str, StateDtype, u64, u64, u64)> {
        blocks::mla::latent_parts(dims, formats(kv))
            .unwrap()
            .as_slice()
            .iter()
            .map(|p| (p.name, p.dtype, p.elements, p.offset, p.bytes))
            .collect()
    };
    assert_eq!(
        spans(DS_MLA),
        [
            ("nope", StateDtype::Fp8, 512, 0, 512),
            ("scales", StateDtype::F32, 4, 512, 16),
            ("rope", StateDtype::Bf16, 64, 528, 128),
        ]
    );
    assert_eq!(
        spans(NVFP4),
        [
            ("nope", StateDtype::Fp4, 512, 0, 256),
            ("rope", StateDtype::Fp8, 64, 256, 64),
            ("scales", StateDtype::Fp8, 32, 320, 32),
        ]
    );
    // A dtype: one part, the whole row.
    assert_eq!(spans(BF16), [("latent", StateDtype::Bf16, 576, 0, 1152)]);
    let index = blocks::mla::index_k_parts(dims, formats(BF16)).unwrap();
    assert_eq!(
        index.get("scale").map(|p| (p.offset, p.bytes)),
        Some((128, 4))
    );

    // Token 70 of a plan's latent (block 1, row 6): its RoPE part's bytes, by hand.
    let plan = deepseek_v3_2::StatePlan::new(
        &deepseek_v3_2::DIMS,
        &Inputs::with_counts(
            formats(DS_MLA),
            &StateInputs {
                kv: Some(KvInputs {
                    blocks: 2,
                    ..ONE_BLOCK
                }),
                ..StateInputs::EMPTY
            },
        ),
        DEFAULT_ALIGN,
    )
    .unwrap();
    let latent = plan.l3.mla.latent.blocks;
    let token = latent.at(1, 6).unwrap();
    let rope = blocks::mla::latent_parts(dims, formats(DS_MLA))
        .unwrap()
        .get("rope")
        .unwrap()
        .within(token)
        .unwrap();
    assert_eq!(rope.offset, latent.offset + 70 * 656 + 528);
    assert_eq!((rope.bytes, rope.dtype), (128, StateDtype::Bf16));
}

#[test]
fn the_dynamic_plan_agrees_part_for_part() {
    let decls = circuit().instantiate("deepseek_v3_2").unwrap();
    for kv in [BF16, FP8, DS_MLA, NVFP4] {
        let pairs = formats(kv).pairs();
        let counts = StateInputs {
            formats: &pairs,
            ..inputs(kv).state_inputs()
        };
        let dynamic = DynamicPlan::new(&decls, &counts, DEFAULT_ALIGN).unwrap();
        let generated =
            deepseek_v3_2::StatePlan::new(&deepseek_v3_2::DIMS, &inputs(kv), DEFAULT_ALIGN)
                .unwrap();
        assert_eq!(dynamic.device_bytes(), generated.device_bytes(), "{kv:?}");
        let term = dynamic
            .terms()
            .iter()
            .find(|t| t.state == "l0.mla.latent")
            .unwrap();
        let generated_parts = blocks::mla::latent_parts(&deepseek_v3_2::DIMS, formats(kv)).unwrap();
        match &term.packing {
            None => assert_eq!(generated_parts.as_slice().len(), 1, "{kv:?}"),
            Some(packing) => {
                assert_eq!(
                    Some(packing.name.as_str()),
                    match kv.choice() {
                        FormatChoice::Packing(name) => Some(name),
                        FormatChoice::Dtype(_) => None,
                    }
                );
                let dynamic: Vec<(&str, u64, u64)> = packing
                    .parts
                    .iter()
                    .map(|p| (p.name.as_str(), p.offset, p.bytes))
                    .collect();
                let generated: Vec<(&str, u64, u64)> = generated_parts
                    .as_slice()
                    .iter()
                    .map(|p| (p.name, p.offset, p.bytes))
                    .collect();
                assert_eq!(dynamic, generated);
            }
        }
    }
}

#[test]
fn a_packing_no_state_declares_is_refused() {
    let decls = circuit().instantiate("tiny").unwrap();
    let pairs = [("kv_cache_dtype", FormatChoice::Packing("fp8_ds_mlaa"))];
    let inputs = StateInputs {
        formats: &pairs,
        ..StateInputs::EMPTY
    };
    assert_eq!(
        DynamicPlan::new(&decls, &inputs, DEFAULT_ALIGN),
        Err(PlanError::UnknownPacking {
            state: "l0.mla.latent".to_owned(),
            packing: "fp8_ds_mlaa".to_owned(),
        })
    );
    let refused = Formats::from_pairs(&pairs).unwrap_err();
    assert_eq!(
        refused,
        MissingFormat {
            key: "kv_cache_dtype",
            expected: "a dtype or one of `fp8_ds_mla`, `nvfp4_ds_mla`",
            refused: true,
        }
    );
    assert_eq!(
        refused.to_string(),
        "format key `kv_cache_dtype` holds a packing its states do not declare: expected a dtype \
         or one of `fp8_ds_mla`, `nvfp4_ds_mla`"
    );
    // Every value round-trips through the dynamic plan's spelling.
    for kv in [BF16, FP8, DS_MLA, NVFP4] {
        assert_eq!(KvCacheDtypeFormat::from_choice(kv.choice()), Some(kv));
    }
    assert_eq!(
        Formats::from_pairs(&[("kv_cache_dtype", FormatChoice::Packing("nvfp4_ds_mla"))]),
        Ok(formats(NVFP4))
    );
}

#[test]
fn the_draft_kv_dtype_retypes_a_dtype_and_keeps_a_packing() {
    let plan = |kv, draft| {
        let mut inputs = inputs(kv);
        inputs.draft_kv_dtype = draft;
        tiny::StatePlan::new(&tiny::DIMS, &inputs, DEFAULT_ALIGN).unwrap()
    };
    // fp8 main, bf16 draft: the draft latent's 136 elements at 2 B, 64 tokens.
    let retyped = plan(FP8, Some(StateDtype::Bf16));
    assert_eq!(retyped.draft.mla.latent.blocks.bytes, 64 * 136 * 2);
    assert_eq!(retyped.l0.mla.latent.blocks.bytes, 64 * 136);
    // fp8_ds_mla: the draft latent keeps its 148-byte packing, and the indexer its 132.
    let kept = plan(DS_MLA, Some(StateDtype::Bf16));
    assert_eq!(kept.draft.mla.latent.blocks.bytes, 64 * 148);
    assert_eq!(kept.draft.mla.index_k.blocks.bytes, 64 * 132);
}

mod nvfp4 {
    metrale_macros::circuit!(
        inline = r#"
schema = 3
arch = "gqa"
dims = ["kv_heads", "head_dim"]
[layout]
kind = "interval"
period = 1
[layout.blocks]
full_attention = ["attn"]
[[block.attn.state]]
id = "k"
kind = "paged_kv"
format = "{kv_cache_dtype}"
shape = "kv_heads x head_dim"
[block.attn.state.packings]
nvfp4 = [
  { part = "values", format = "fp4", shape = "kv_heads x head_dim" },
  { part = "scales", format = "fp8", shape = "kv_heads x head_dim/16" },
]
[[block.attn.state]]
id = "v"
kind = "paged_kv"
format = "{kv_cache_dtype}"
shape = "kv_heads x head_dim"
[block.attn.state.packings]
nvfp4 = [
  { part = "values", format = "fp4", shape = "kv_heads x head_dim" },
  { part = "scales", format = "fp8", shape = "kv_heads x head_dim/16" },
]
[checkpoint.llama_3_1_8b]
layers = 32
dims = { kv_heads = 8, head_dim = 128 }
"#
    );
}

#[test]
fn an_nvfp4_kv_cache_is_vllms() {
    use nvfp4::gqa::{Formats, KvCacheDtypeFormat, blocks, llama_3_1_8b};
    // vLLM's FlashInfer NVFP4 cache: each KV head's side is `head_size // 2 + head_size // 16`
    // bytes (`utils/torch_utils.py:542-544`, `v1/attention/backends/flashinfer.py:557-570`):
    // 64 + 8 = 72 for a head of 128, 8 heads: 576 B a side and token, where bf16 is 2,048.
    let formats = |kv| Formats { kv_cache_dtype: kv };
    let k = |kv| blocks::attn::k_unit(&llama_3_1_8b::DIMS, formats(kv)).map(|u| u.bytes);
    assert_eq!(k(KvCacheDtypeFormat::Nvfp4), Ok(8 * 72));
    assert_eq!(k(KvCacheDtypeFormat::Dtype(StateDtype::Bf16)), Ok(2048));
    let parts =
        blocks::attn::v_parts(&llama_3_1_8b::DIMS, formats(KvCacheDtypeFormat::Nvfp4)).unwrap();
    assert_eq!(
        parts.get("scales").map(|p| (p.elements, p.offset, p.bytes)),
        Some((64, 512, 64))
    );
}
