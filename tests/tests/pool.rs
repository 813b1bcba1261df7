//! vLLM's unified page pool on five real checkpoints at a 40 GiB budget and 32,768-token
//! requests: the attention block size, page bytes, slots, groups, pages per request, pool pages,
//! requests admitted at once and the "GPU KV cache size" tokens, each pinned to figures worked
//! by hand from vLLM 0.33.0's rules (commit 4ba787ec9; the lines each follows are cited in
//! docs/inputs.md and `law/pages.rs`), not read off this program. A default `vllm serve` on an
//! H100-class GPU: `FlashAttention` (kernel block 16), 8192 batched tokens, two batches in
//! flight, prefix caching on (recurrent layers in `align` mode, one checkpoint page).

use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl, fit_kv_blocks, fit_sequences};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::load::Circuit;
use metrale_circuit::serving::{
    PoolPolicy,
    pages::{PoolPages, PoolPlan, VllmPool},
};
use metrale_circuit::{DEFAULT_ALIGN, StateDtype, StateInputs, serving::ServingProfile};

/// 40 GiB.
const BUDGET: u64 = 40 << 30;
/// Tokens per request.
const CONTEXT: u64 = 32_768;

fn decls(circuit: &str, checkpoint: &str) -> Vec<StateDecl> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Circuit::load(root.join(circuit))
        .unwrap_or_else(|e| panic!("{e}"))
        .instantiate(checkpoint)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// What a model's pool must come to.
#[derive(Debug, PartialEq, Eq)]
struct Figures {
    block_tokens: u64,
    page_bytes: u64,
    slots: u64,
    groups: u64,
    request_pages: u64,
    pages: u64,
    admitted: u64,
    tokens: u64,
}

/// The pool's figures of `decls` under a default server (with `vllm` changes), its KV and conv
/// states in bf16 and its recurrent `h` in `ssm_h`, and the plan's pool and the inputs it was planned under.
fn pooled(decls: &[StateDecl], ssm_h: StateDtype, vllm: VllmPool) -> (Figures, PoolPlan, VllmPool) {
    let formats = [
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Bf16)),
        ("ssm_h_storage", FormatChoice::Dtype(ssm_h)),
        ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
    ];
    let inputs = StateInputs {
        formats: &formats,
        pool: PoolPolicy::Vllm(vllm),
        ..StateInputs::EMPTY
    };
    // vLLM gives the pool every byte: the most pages the budget holds.
    let fit = fit_kv_blocks(decls, &inputs, DEFAULT_ALIGN, BUDGET).unwrap();
    let plan = DynamicPlan::new(
        decls,
        &StateInputs {
            pool: PoolPolicy::Vllm(VllmPool {
                pages: PoolPages::Pages(fit.value),
                ..vllm
            }),
            ..inputs
        },
        DEFAULT_ALIGN,
    )
    .unwrap();
    // Nothing but the pool takes device bytes under this server.
    assert_eq!(plan.device_bytes(), fit.device_bytes);
    let pool = plan.pool().unwrap();
    assert_eq!(pool.plan.offset, 0);
    // The requests a server of S sequences admits: the largest S whose pool of S requests
    // and the null page fits, which is what the whole pool admits.
    let profile = ServingProfile {
        pool: Some(vllm),
        ..ServingProfile::EMPTY
    };
    let sequences = fit_sequences(decls, &formats, &profile, CONTEXT, DEFAULT_ALIGN, BUDGET)
        .unwrap()
        .value;
    assert_eq!(sequences, pool.plan.admitted(), "fit --for sequences");
    // Every layer's page addresses: page p of its slot, p pages in.
    for member in &pool.members {
        let slot = pool.plan.slot(member.slot).unwrap();
        for state in &member.states {
            assert_eq!(pool.page(state, 0), Some(slot.offset));
            assert_eq!(
                pool.page(state, pool.plan.pages - 1),
                Some(slot.end() - pool.plan.shape.page_bytes)
            );
            assert_eq!(pool.page(state, pool.plan.pages), None);
        }
    }
    let figures = Figures {
        block_tokens: pool.plan.shape.block_tokens,
        page_bytes: pool.plan.shape.page_bytes,
        slots: pool.plan.shape.slots,
        groups: pool.plan.shape.groups,
        request_pages: pool.plan.shape.request_pages,
        pages: pool.plan.pages,
        admitted: pool.plan.admitted(),
        tokens: pool.plan.shape.tokens(pool.plan.pages, CONTEXT).unwrap(),
    };
    let planned = VllmPool {
        pages: PoolPages::Pages(pool.plan.pages),
        ..vllm
    };
    (figures, pool.plan, planned)
}

/// The generated plan of a checkpoint under `vllm` has the dynamic plan's pool.
macro_rules! generated_pool {
    ($arch:ident :: $checkpoint:ident, $ssm_h:expr, $vllm:expr, $dynamic:expr) => {{
        use metrale_tests::$arch::{Formats, Inputs, $checkpoint};
        let formats = Formats::from_pairs(&[
            ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Bf16)),
            ("ssm_h_storage", FormatChoice::Dtype($ssm_h)),
            ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
        ])
        .unwrap();
        let inputs = Inputs::with_counts(
            formats,
            &StateInputs {
                pool: PoolPolicy::Vllm($vllm),
                ..StateInputs::EMPTY
            },
        );
        let plan = $checkpoint::StatePlan::new(&$checkpoint::DIMS, &inputs, DEFAULT_ALIGN).unwrap();
        assert_eq!(plan.pool(), Some(&$dynamic));
        assert_eq!(plan.device_bytes(), $dynamic.end());
    }};
}

#[test]
fn llama_3_1_8b() {
    // 32 full-attention layers of 8 KV heads x 128 x 2 sides x 2 B = 4096 B a token: one group
    // (every spec equal), a page of 16 x 4096 = 65,536 B, 32 slots; 40 GiB / (32 x 65,536) =
    // 20,480 pages; a request holds 32768 / 16 = 2048; (20,480 - 1) / 2048 = 9 at once (the
    // null page), 20,480 x 32768 / 2048 = 327,680 tokens (vLLM logs 10.00x).
    let decls = decls("circuits/llama.toml", "llama_3_1_8b");
    let (figures, pool, planned) = pooled(&decls, StateDtype::Bf16, VllmPool::serving(CONTEXT));
    generated_pool!(llama::llama_3_1_8b, StateDtype::Bf16, planned, pool);
    assert_eq!(
        figures,
        Figures {
            block_tokens: 16,
            page_bytes: 65_536,
            slots: 32,
            groups: 1,
            request_pages: 2048,
            pages: 20_480,
            admitted: 9,
            tokens: 327_680,
        }
    );
}

#[test]
fn gpt_oss_120b() {
    // 18 sliding (128) and 18 full layers, 8 x 64 x 2 x 2 = 2048 B a token, a page of 32,768 B:
    // two specs of 18 layers, two groups, 18 slots; 40 GiB / (18 x 32,768) = 72,817 pages. A
    // request: full 2048, sliding ceil(min(127 + 2 x 8192, 32768) / 16) + 1 = 1033: 3081;
    // 72,816 / 3081 = 23 at once, 72,817 x 32768 / 3081 = 774,445 tokens.
    let decls = decls("circuits/gpt_oss.toml", "gpt_oss_120b");
    let (figures, pool, planned) = pooled(&decls, StateDtype::Bf16, VllmPool::serving(CONTEXT));
    generated_pool!(gpt_oss::gpt_oss_120b, StateDtype::Bf16, planned, pool);
    assert_eq!(
        figures,
        Figures {
            block_tokens: 16,
            page_bytes: 32_768,
            slots: 18,
            groups: 2,
            request_pages: 3081,
            pages: 72_817,
            admitted: 23,
            tokens: 774_445,
        }
    );
}

#[test]
fn gemma_3_27b() {
    // 10 full and 52 sliding (1024) layers, 16 x 128 x 2 x 2 = 8192 B a token, a page of
    // 131,072 B. 52 >= 1.5 x 10: groups of 10; the sliding layers in ceil(52 / 10) = 6 groups
    // (9, 9, 9, 9, 8, 8), 7 groups, 10 slots; 40 GiB / (10 x 131,072) = 32,768 pages. A request:
    // full 2048, each sliding group ceil(min(1023 + 16384, 32768) / 16) + 1 = 1089: 8582;
    // 32,767 / 8582 = 3 at once, 32,768 x 32768 / 8582 = 125,115 tokens.
    let decls = decls("circuits/gemma3.toml", "gemma_3_27b");
    let (figures, pool, planned) = pooled(&decls, StateDtype::Bf16, VllmPool::serving(CONTEXT));
    generated_pool!(gemma3::gemma_3_27b, StateDtype::Bf16, planned, pool);
    assert_eq!(
        figures,
        Figures {
            block_tokens: 16,
            page_bytes: 131_072,
            slots: 10,
            groups: 7,
            request_pages: 8582,
            pages: 32_768,
            admitted: 3,
            tokens: 125_115,
        }
    );
}

#[test]
fn qwen3_next_80b_a3b() {
    // 12 full layers (2 KV heads x 256 x 2 x 2 = 2048 B a token) and 36 GDN layers of
    // 3 x 8192 x 2 (conv) + 32 x 128 x 128 x 2 (h) = 1,097,728 B. Gated DeltaNet with a
    // FlashInfer prefill aligns checkpoints to 64: k = lcm(16, 64) = 64, a block of
    // 64 x ceil(1,097,728 / (64 x 2048)) = 576 tokens, a page of 1,179,648 B. Groups of 12:
    // 1 full + 3 GDN, 12 slots; 40 GiB / (12 x 1,179,648) = 3,034 pages. A request: full
    // ceil(32768 / 576) = 57, each GDN group 2 + 1 checkpoint = 3: 66; 3,033 / 66 = 45 at once,
    // 3,034 x 32768 / 66 = 1,506,335 tokens.
    let decls = decls("circuits/qwen3_next.toml", "qwen3_next_80b_a3b");
    let gdn = VllmPool {
        checkpoint_alignment: 64,
        ..VllmPool::serving(CONTEXT)
    };
    let (figures, pool, planned) = pooled(&decls, StateDtype::Bf16, gdn);
    generated_pool!(
        qwen3_next::qwen3_next_80b_a3b,
        StateDtype::Bf16,
        planned,
        pool
    );
    assert_eq!(
        figures,
        Figures {
            block_tokens: 576,
            page_bytes: 1_179_648,
            slots: 12,
            groups: 4,
            request_pages: 66,
            pages: 3034,
            admitted: 45,
            tokens: 1_506_335,
        }
    );
    // Without prefix caching (`none` mode, no checkpoint alignment): k = 16, a block of
    // 16 x ceil(1,097,728 / 32,768) = 544, a page of 1,114,112 B, 3,212 pages; a request holds
    // ceil(32768 / 544) = 61 + 3 x 1 = 64.
    let none = VllmPool {
        prefix_caching: false,
        ..gdn
    };
    let (f, ..) = pooled(&decls, StateDtype::Bf16, none);
    assert_eq!(
        (f.block_tokens, f.page_bytes, f.pages, f.request_pages),
        (544, 1_114_112, 3212, 64)
    );
}

#[test]
fn nemotron_h_8b() {
    // 4 attention layers (8 x 128 x 2 x 2 = 4096 B a token) and 24 Mamba2 layers of
    // 3 x (8192 + 2 x 8 x 128) x 2 (conv, bf16) + 128 x 64 x 128 x 4 (h, f32: vLLM's NemotronH
    // default) = 4,255,744 B. No checkpoint alignment: a block of 16 x ceil(4,255,744 / 65,536)
    // = 1040, a page of 4,259,840 B. Groups of 4: 1 + 6, 4 slots; 40 GiB / (4 x 4,259,840) =
    // 2,520 pages. A request: ceil(32768 / 1040) = 32 + 6 x 3 = 50; 2,519 / 50 = 50 at once,
    // 2,520 x 32768 / 50 = 1,651,507 tokens.
    let decls = decls("circuits/nemotron_h.toml", "nemotron_h_8b");
    let (figures, pool, planned) = pooled(&decls, StateDtype::F32, VllmPool::serving(CONTEXT));
    generated_pool!(nemotron_h::nemotron_h_8b, StateDtype::F32, planned, pool);
    assert_eq!(
        figures,
        Figures {
            block_tokens: 1040,
            page_bytes: 4_259_840,
            slots: 4,
            groups: 7,
            request_pages: 50,
            pages: 2520,
            admitted: 50,
            tokens: 1_651_507,
        }
    );
}

#[test]
fn qwen3_next_block_size_follows_the_tensor_parallel_rank() {
    use metrale_circuit::parallel::{Parallel, Rank};
    // At tp = 4 a rank keeps 1 of the 2 KV heads (replicated): a1 = 256 x 2 x 2 = 1024 B, and a
    // quarter of each GDN state: 3 x 2048 x 2 + 8 x 128 x 128 x 2 = 274,432 B. k = 64:
    // 64 x ceil(274,432 / 65,536) = 320 tokens, a page of 327,680 B; 40 GiB / (12 x 327,680)
    // = 10,922 pages; a request ceil(32768 / 320) = 103 + 3 x 3 = 112 pages; 97 at once.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let parallel = Parallel {
        tp: 4,
        pp: 1,
        pp_layers: None,
    };
    let decls = Circuit::load(root.join("circuits/qwen3_next.toml"))
        .unwrap()
        .instantiate_rank("qwen3_next_80b_a3b", &parallel, Rank { tp: 1, pp: 0 })
        .unwrap();
    let gdn = VllmPool {
        checkpoint_alignment: 64,
        ..VllmPool::serving(CONTEXT)
    };
    let (f, ..) = pooled(&decls, StateDtype::Bf16, gdn);
    assert_eq!(
        (
            f.block_tokens,
            f.page_bytes,
            f.pages,
            f.request_pages,
            f.admitted
        ),
        (320, 327_680, 10_922, 112, 97)
    );
}

#[test]
fn llama_4_scout_17b_16e_chunked_local_attention() {
    // 36 chunked layers (8,192-token chunks) and 12 global ones, 8 x 128 x 2 x 2 = 4096 B a
    // token, a page of 65,536 B. 36 >= 1.5 x 12: groups of 12, the chunked layers in 3, one
    // global: 4 groups, 12 slots; 40 GiB / (12 x 65,536) = 54,613 pages. A request: global
    // 32768 / 16 = 2048; each chunked group ceil(min(8192 + 2 x 8192, 32768) / 16) = 1536, no
    // extra block (vllm/v1/kv_cache_interface.py:864-888): 2048 + 3 x 1536 = 6656; 54,612 /
    // 6656 = 8 at once, 54,613 x 32768 / 6656 = 268,864 tokens. (vLLM runs this model without
    // its hybrid manager unless told to, counting every layer as full attention; this is the
    // chunked spec's own law.)
    let decls = decls("circuits/llama4.toml", "llama_4_scout_17b_16e");
    let (figures, pool, planned) = pooled(&decls, StateDtype::Bf16, VllmPool::serving(CONTEXT));
    generated_pool!(
        llama4::llama_4_scout_17b_16e,
        StateDtype::Bf16,
        planned,
        pool
    );
    assert_eq!(
        figures,
        Figures {
            block_tokens: 16,
            page_bytes: 65_536,
            slots: 12,
            groups: 4,
            request_pages: 6656,
            pages: 54_613,
            admitted: 8,
            tokens: 268_864,
        }
    );
}
