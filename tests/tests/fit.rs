//! Capacity (`fit --for kv-blocks`): the generated `DynamicPlan::fit_kv_blocks` of three tiny
//! checkpoints of different shapes (Qwen3.5's GDN, Nemotron-H's Mamba2 pattern, gpt-oss's
//! sliding window) equals the dynamic `metrale_circuit::dynamic::fit_kv_blocks` on random inputs and
//! budgets, and is optimal against brute force: every block count up to the answer fits, the
//! next does not. The same holds on one rank of a tensor- and pipeline-parallel layout: the
//! generated `fit_kv_blocks_for_rank` against the dynamic fit of `instantiate_rank`'s states.

use metrale_circuit::dynamic::{
    DynamicPlan, decl::StateDecl, fit_kv_blocks, fit_profile_blocks, fit_sequences,
};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::inputs::WindowInputs;
use metrale_circuit::load::Circuit;
use metrale_circuit::parallel::{Parallel, Rank};
use metrale_circuit::serving::{
    KvTokens, PoolPolicy, ProfileKv,
    pages::{PoolFault, PoolPages, VllmPool},
};
use metrale_circuit::{
    DEFAULT_ALIGN, KvInputs, PlanError, StateDtype, StateInputs,
    parallel::RankError,
    serving::{Fit, FitError, ServingProfile},
};
use proptest::prelude::*;

fn load(circuit: &str) -> Circuit {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Circuit::load(root.join(circuit)).unwrap_or_else(|e| panic!("{e}"))
}

fn decls(circuit: &str) -> Vec<StateDecl> {
    load(circuit).instantiate("tiny").unwrap()
}

/// The dynamic device bytes at `blocks` (None: the plan fails): the main KV blocks,
/// or under vLLM's policy the page pool's pages.
fn device_bytes(decls: &[StateDecl], inputs: &StateInputs<'_>, blocks: u64) -> Option<u64> {
    let kv = inputs.kv.map(|kv| KvInputs { blocks, ..kv });
    let pool = match inputs.pool {
        PoolPolicy::Vllm(pool) => PoolPolicy::Vllm(VllmPool {
            pages: PoolPages::Pages(blocks),
            ..pool
        }),
        PoolPolicy::Arenas => PoolPolicy::Arenas,
    };
    DynamicPlan::new(
        decls,
        &StateInputs {
            kv,
            pool,
            ..*inputs
        },
        DEFAULT_ALIGN,
    )
    .ok()
    .map(|p| p.device_bytes())
}

/// Arenas, or a vLLM page pool of any figures (its pages what a fit varies).
fn pools() -> impl Strategy<Value = Option<VllmPool>> {
    proptest::option::of(
        (
            (1u64..40, 1u64..70, any::<bool>()),
            (0u64..300, 1u64..3, 0u64..3, 0u64..3, 0u64..5_000),
        )
            .prop_map(
                |(
                    (kernel_block, checkpoint_alignment, prefix_caching),
                    (
                        batched_tokens,
                        batches_in_flight,
                        checkpoint_pages,
                        speculative_tokens,
                        context,
                    ),
                )| VllmPool {
                    pages: PoolPages::Requests(0),
                    context,
                    kernel_block,
                    batched_tokens,
                    batches_in_flight,
                    prefix_caching,
                    checkpoint_alignment,
                    checkpoint_pages,
                    speculative_tokens,
                },
            ),
    )
}

/// Brute force: the first block count that does not fit, scanning up from 0.
fn brute_force(decls: &[StateDecl], inputs: &StateInputs<'_>, budget: u64) -> Option<u64> {
    (0..100_000u64)
        .find(|&n| device_bytes(decls, inputs, n).is_none_or(|b| b > budget))
        .and_then(|n| n.checked_sub(1))
}

fn check_optimal(
    decls: &[StateDecl],
    inputs: &StateInputs<'_>,
    budget: u64,
    fit: &Result<Fit, FitError<PlanError<String>>>,
) -> Result<(), TestCaseError> {
    match fit {
        // A plan the pool costs nothing more past some count (a stage of no attention layer,
        // or of sliding windows only): every count fits, and the search ends at the largest.
        Ok(fit) if fit.value == u64::MAX => {
            prop_assert_eq!(
                device_bytes(decls, inputs, u64::MAX),
                Some(fit.device_bytes)
            );
            prop_assert!(fit.device_bytes <= budget);
            prop_assert_eq!(fit.next_device_bytes, None);
        }
        Ok(fit) => {
            prop_assert_eq!(
                device_bytes(decls, inputs, fit.value),
                Some(fit.device_bytes)
            );
            prop_assert!(fit.device_bytes <= budget);
            let next = device_bytes(decls, inputs, fit.value + 1);
            prop_assert_eq!(next, fit.next_device_bytes);
            prop_assert!(next.is_none_or(|b| b > budget));
            // The scan proves every smaller count fits too; past a few thousand plans it is
            // the test's cost, and the two ends above still pin the answer.
            if fit.value < 4_096 {
                prop_assert_eq!(brute_force(decls, inputs, budget), Some(fit.value));
            }
        }
        Err(FitError::TooSmall { needs }) => {
            prop_assert_eq!(device_bytes(decls, inputs, 0), Some(*needs));
            prop_assert!(*needs > budget);
        }
        // 0 fits, 1 does not: the plans at 0 and 1 say so.
        Err(FitError::NoneFits { empty, needs }) => {
            prop_assert_eq!(device_bytes(decls, inputs, 0), Some(*empty));
            prop_assert!(*empty <= budget);
            let one = device_bytes(decls, inputs, 1).unwrap_or(u64::MAX);
            prop_assert_eq!(one, *needs);
            prop_assert!(*needs > budget);
        }
        Err(other) => prop_assert!(false, "unexpected {other:?}"),
    }
    Ok(())
}

macro_rules! fit_agrees {
    ($test:ident, $arch:ident, $circuit:literal, [$($format:ident),*]) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            #[test]
            fn $test(
                slots in 0u64..12,
                block_size in 1u64..33,
                sequences in 1u64..5,
                chunk in 1u64..200,
                budget in 0u64..4_000_000,
                dtype in proptest::sample::select(StateDtype::ALL.to_vec()),
                (tp, pp) in (proptest::sample::select(vec![1u64, 2, 4]), 1u64..=3),
                (tp_rank, pp_rank) in (any::<u64>(), any::<u64>()),
                pool in pools(),
            ) {
                use metrale_tests::$arch::{AnyPlan, Checkpoint, Formats, Inputs, tiny};
                static CIRCUIT: std::sync::OnceLock<Circuit> = std::sync::OnceLock::new();
                static DECLS: std::sync::OnceLock<Vec<StateDecl>> = std::sync::OnceLock::new();
                let circuit = CIRCUIT.get_or_init(|| load($circuit));
                let decls = DECLS.get_or_init(|| decls($circuit));
                let kv = KvInputs {
                    blocks: 7,
                    block_size,
                    window: Some(WindowInputs { sequences, chunk_tokens: chunk, max_tokens: 4_096 }),
                };
                let inputs = Inputs {
                    formats: Formats { $($format: dtype),* },
                    slots,
                    verify: None,
                    kv: Some(kv),
                    draft_kv: None,
                    draft_kv_dtype: None,
                    caches: metrale_tests::SERVE_CACHES,
                    pool: pool.map_or(PoolPolicy::Arenas, PoolPolicy::Vllm),
                };
                let generated = AnyPlan::fit_kv_blocks(Checkpoint::Tiny, &tiny::DIMS, &inputs, DEFAULT_ALIGN, budget);
                let pairs = inputs.formats.pairs();
                let state = StateInputs { formats: &pairs, ..inputs.state_inputs() };
                let dynamic = fit_kv_blocks(decls, &state, DEFAULT_ALIGN, budget);
                let generated = generated.map_err(|e| e.map_plan(PlanError::from));
                prop_assert_eq!(&generated, &dynamic);
                check_optimal(decls, &state, budget, &dynamic)?;
                // One rank: its states only, the budget that GPU's.
                let parallel = Parallel { tp, pp, pp_layers: None };
                let rank = Rank { tp: tp_rank % tp, pp: pp_rank % pp };
                let held = circuit.instantiate_rank("tiny", &parallel, rank).unwrap();
                let generated = AnyPlan::fit_kv_blocks_for_rank(
                    Checkpoint::Tiny, &tiny::DIMS, &inputs, DEFAULT_ALIGN, budget, &parallel, rank,
                )
                .map_err(|e| match e {
                    RankError::Plan(e) => e.map_plan(PlanError::from),
                    other => panic!("a rank inside the sizes: {other:?}"),
                });
                let dynamic = fit_kv_blocks(&held, &state, DEFAULT_ALIGN, budget);
                prop_assert_eq!(&generated, &dynamic);
                check_optimal(&held, &state, budget, &dynamic)?;
            }
        }
    };
}

fit_agrees!(
    qwen3_5_tiny_fit_is_optimal,
    qwen3_5,
    "circuits/qwen3_5.toml",
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
fit_agrees!(
    nemotron_h_tiny_fit_is_optimal,
    nemotron_h,
    "circuits/nemotron_h.toml",
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
fit_agrees!(
    gpt_oss_tiny_fit_is_optimal,
    gpt_oss,
    "circuits/gpt_oss.toml",
    [kv_cache_dtype]
);

#[test]
fn fit_errors() {
    let decls = decls("circuits/qwen3_5.toml");
    let formats = [
        ("ssm_h_storage", FormatChoice::Dtype(StateDtype::F32)),
        ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
    ];
    let inputs = StateInputs {
        formats: &formats,
        slots: 9,
        ..StateInputs::EMPTY
    };
    assert_eq!(
        fit_kv_blocks(&decls, &inputs, DEFAULT_ALIGN, 1 << 30),
        Err(FitError::NoKvPool)
    );
    let with_kv = StateInputs {
        kv: Some(KvInputs::blocks(1, 16)),
        ..inputs
    };
    let Err(FitError::TooSmall { needs }) = fit_kv_blocks(&decls, &with_kv, DEFAULT_ALIGN, 10)
    else {
        panic!("10 bytes fit nothing");
    };
    assert_eq!(Some(needs), device_bytes(&decls, &with_kv, 0));
    // A missing format fails at 0 blocks already: the plan's error.
    let bare = StateInputs {
        formats: &[],
        ..with_kv
    };
    assert!(matches!(
        fit_kv_blocks(&decls, &bare, DEFAULT_ALIGN, 1 << 30),
        Err(FitError::Plan(_))
    ));
}

/// The dynamic device bytes of `profile` at `sequences` of `context` tokens.
fn profile_bytes(
    decls: &[StateDecl],
    formats: &[(&str, FormatChoice)],
    profile: &ServingProfile<'_>,
    sequences: u64,
    context: u64,
) -> Option<u64> {
    let inputs = profile.at(sequences, context).inputs().ok()?;
    DynamicPlan::new(decls, &StateInputs { formats, ..inputs }, DEFAULT_ALIGN)
        .ok()
        .map(|p| p.device_bytes())
}

macro_rules! fit_sequences_agrees {
    ($test:ident, $arch:ident, $circuit:literal, [$($format:ident),*]) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(32))]
            #[test]
            fn $test(
                verify_rows in 0u64..5,
                block_size in 1u64..33,
                context in 0u64..3_000,
                ring_depth in 0u64..3,
                carry: bool,
                (draft_kv, draft_kv_dtype) in (
                    any::<bool>(),
                    proptest::option::of(proptest::sample::select(StateDtype::ALL.to_vec())),
                ),
                (verify_batch, tiers) in (
                    proptest::option::of(0u64..4),
                    proptest::option::weighted(0.3, proptest::collection::vec(0u64..6, 0..5)),
                ),
                table_rows in proptest::option::of(0u64..200),
                ring_dummy: bool,
                budget in 0u64..6_000_000,
                dtype in proptest::sample::select(StateDtype::ALL.to_vec()),
                pool in pools(),
            ) {
                use metrale_tests::$arch::{AnyPlan, Checkpoint, Formats, tiny};
                static DECLS: std::sync::OnceLock<Vec<StateDecl>> = std::sync::OnceLock::new();
                let decls = DECLS.get_or_init(|| decls($circuit));
                let profile = ServingProfile {
                    sequences: 0,
                    verify_rows,
                    verify_batch,
                    h_steps: tiers.as_deref(),
                    table_rows,
                    ring_dummy,
                    kv: Some(ProfileKv { block_size, tokens: KvTokens::PerSequence(0), chunk_tokens: Some(64) }),
                    draft_kv,
                    draft_kv_dtype,
                    prefix_snapshots: 1,
                    ring_depth,
                    carry,
                    tree_nodes: 2,
                    capture_rows: 8,
                    lookup_history: 16,
                    pool,
                };
                let formats = Formats { $($format: dtype),* };
                let generated = AnyPlan::fit_sequences(Checkpoint::Tiny, &tiny::DIMS, formats, &profile, context, DEFAULT_ALIGN, budget)
                    .map_err(|e| e.map_plan(PlanError::from));
                let pairs = formats.pairs();
                let dynamic = fit_sequences(decls, &pairs, &profile, context, DEFAULT_ALIGN, budget);
                prop_assert_eq!(&generated, &dynamic);
                match dynamic {
                    Ok(fit) => {
                        prop_assert_eq!(profile_bytes(decls, &pairs, &profile, fit.value, context), Some(fit.device_bytes));
                        let next = profile_bytes(decls, &pairs, &profile, fit.value + 1, context);
                        prop_assert_eq!(next, fit.next_device_bytes);
                        prop_assert!(next.is_none_or(|b| b > budget));
                        // Brute force: every count up to the answer fits. A profile of few
                        // bytes a sequence can fit millions (a plan each to scan): past a few
                        // thousand the two ends above pin the answer.
                        if fit.value < 4_096 {
                            let first_over = (0..=fit.value + 1)
                                .find(|&n| profile_bytes(decls, &pairs, &profile, n, context).is_none_or(|b| b > budget));
                            prop_assert_eq!(first_over, Some(fit.value + 1));
                        }
                    }
                    Err(FitError::TooSmall { needs }) => {
                        prop_assert_eq!(profile_bytes(decls, &pairs, &profile, 0, context), Some(needs));
                        prop_assert!(needs > budget);
                    }
                    // 0 sequences fit, 1 does not: the plans at 0 and 1 say so.
                    Err(FitError::NoneFits { empty, needs }) => {
                        prop_assert_eq!(profile_bytes(decls, &pairs, &profile, 0, context), Some(empty));
                        prop_assert!(empty <= budget);
                        let one = profile_bytes(decls, &pairs, &profile, 1, context).unwrap_or(u64::MAX);
                        prop_assert_eq!(one, needs);
                        prop_assert!(needs > budget);
                    }
                    // A draft pool in another dtype than the main one under vLLM's pool: attention
                    // layers of two page sizes, which this policy refuses (vLLM pads them).
                    Err(FitError::Plan(PlanError::Pool { fault: PoolFault::MixedAttention { .. }, .. }))
                        if pool.is_some() && draft_kv && draft_kv_dtype.is_some() => {}
                    Err(other) => prop_assert!(false, "unexpected {other:?}"),
                }
            }
        }
    };
}

fit_sequences_agrees!(
    qwen3_5_tiny_sequences_fit_is_optimal,
    qwen3_5,
    "circuits/qwen3_5.toml",
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
fit_sequences_agrees!(
    nemotron_h_tiny_sequences_fit_is_optimal,
    nemotron_h,
    "circuits/nemotron_h.toml",
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
fit_sequences_agrees!(
    gpt_oss_tiny_sequences_fit_is_optimal,
    gpt_oss,
    "circuits/gpt_oss.toml",
    [kv_cache_dtype]
);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Under a profile, `--for kv-blocks` grows a tied draft pool with the main one: the
    /// generated and dynamic fits agree and are optimal, and a tied fit never holds more
    /// blocks than an untied one.
    #[test]
    fn profile_pool_fit_is_optimal_and_ties_the_draft_pool(
        sequences in 0u64..6,
        block_size in 1u64..33,
        draft_kv: bool,
        budget in 0u64..6_000_000,
    ) {
        use metrale_tests::qwen3_5::{AnyPlan, Checkpoint, Formats, tiny};
        static DECLS: std::sync::OnceLock<Vec<StateDecl>> = std::sync::OnceLock::new();
        let decls = DECLS.get_or_init(|| decls("circuits/qwen3_5.toml"));
        let profile = ServingProfile {
            sequences,
            verify_rows: 2,
            kv: Some(ProfileKv { block_size, tokens: KvTokens::Pool(0), chunk_tokens: None }),
            draft_kv,
            ..ServingProfile::EMPTY
        };
        let formats = Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        };
        let pairs = formats.pairs();
        let generated = AnyPlan::fit_profile(Checkpoint::Tiny, &tiny::DIMS, formats, &profile, metrale_circuit::serving::ProfileFree::KvBlocks, DEFAULT_ALIGN, budget)
            .map_err(|e| e.map_plan(PlanError::from));
        let dynamic = fit_profile_blocks(decls, &pairs, &profile, DEFAULT_ALIGN, budget);
        prop_assert_eq!(&generated, &dynamic);
        let bytes = |blocks: u64| {
            let inputs = profile.with_kv_blocks(blocks).inputs().ok()?;
            DynamicPlan::new(decls, &StateInputs { formats: &pairs, ..inputs }, DEFAULT_ALIGN).ok().map(|p| p.device_bytes())
        };
        if let Ok(fit) = dynamic {
            prop_assert_eq!(bytes(fit.value), Some(fit.device_bytes));
            prop_assert_eq!(bytes(fit.value + 1), fit.next_device_bytes);
            prop_assert!(bytes(fit.value + 1).is_none_or(|b| b > budget));
            let first_over = (0..=fit.value + 1).find(|&n| bytes(n).is_none_or(|b| b > budget));
            prop_assert_eq!(first_over, Some(fit.value + 1));
            // The tied draft pool is the main one's size.
            let inputs = profile.with_kv_blocks(fit.value).inputs().unwrap();
            prop_assert_eq!(inputs.draft_kv, if draft_kv { inputs.kv } else { None });
            let untied = fit_profile_blocks(decls, &pairs, &ServingProfile { draft_kv: false, ..profile }, DEFAULT_ALIGN, budget).unwrap();
            prop_assert!(fit.value <= untied.value);
        }
    }
}
