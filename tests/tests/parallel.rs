//! Generated parallel plans (issue 12, contract 5), checked by hand on real checkpoints: a
//! rank's dims as a `const` and their errors (`Dims::on_tp`), a rank's plan
//! (`StatePlan::for_rank`) sized by hand, and the laws every layout keeps: a tensor-parallel
//! group holds more KV than one GPU exactly when heads are replicated, and the pipeline
//! ranks of a layout together hold every term of the model once. The differential proptest
//! compares every checkpoint's rank plans with the dynamic ones; these pin the figures.

use metrale_circuit::parallel::{Parallel, Rank, ShardFault, Stage, StageFault};
use metrale_circuit::{
    CacheInputs, Lifetime, Region, Space, StateDtype, StateKind, TermInfo, parallel::RankError,
};
use metrale_tests::{llama, nemotron_h, qwen3_5, qwen3_next};

/// Qwen3-Next-80B-A3B at TP 4, evaluated at compile time: 16 / 4 query heads, 2 KV heads
/// replicated to one a rank, 16 / 4 key and 32 / 4 value GDN heads; the rest as they are.
const QWEN3_NEXT_TP4: qwen3_next::Dims = match qwen3_next::qwen3_next_80b_a3b::DIMS.on_tp(4) {
    Ok(dims) => dims,
    Err(_) => panic!("Qwen3-Next splits over 4 ranks"),
};

#[test]
fn qwen3_next_at_tp_4() {
    let d = QWEN3_NEXT_TP4;
    assert_eq!(
        (d.q_heads, d.kv_heads, d.lin_k_heads, d.lin_v_heads),
        (4, 1, 4, 8)
    );
    assert_eq!(
        (d.head_dim, d.lin_k_dim, d.lin_v_dim, d.hidden),
        (256, 128, 128, 2048)
    );
    // The conv window follows: conv_kernel is not sharded.
    assert_eq!(d.conv_window(), Ok(3));
}

#[test]
fn errors_name_the_dim() {
    // Llama-3.1-8B: 32 query heads, 8 KV heads; 3 ranks split neither.
    assert_eq!(
        llama::llama_3_1_8b::DIMS.on_tp(3),
        Err(ShardFault::DoesNotSplit {
            dim: "q_heads",
            value: 32,
            tp: 3
        })
    );
    assert_eq!(
        llama::llama_3_1_8b::DIMS.on_tp(0),
        Err(ShardFault::ZeroRanks)
    );
    // 16 ranks: 2 query heads each, 8 KV heads replicated to one each.
    let d = llama::llama_3_1_8b::DIMS.on_tp(16).unwrap();
    assert_eq!((d.q_heads, d.kv_heads), (2, 1));
}

/// Qwen3.5 inputs: `slots` sequence slots, h in f32, conv in bf16, KV in fp8 over the serve's
/// pool, no verify and no cache.
const fn qwen3_5_inputs(slots: u64) -> qwen3_5::Inputs<'static> {
    qwen3_5::Inputs {
        formats: qwen3_5::Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots,
        verify: None,
        kv: metrale_tests::SERVE_KV,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    }
}

/// `tp` tensor-parallel ranks, one pipeline rank.
const fn tp(tp: u64) -> Parallel<'static> {
    Parallel {
        tp,
        pp: 1,
        pp_layers: None,
    }
}

#[test]
fn qwen3_5_35b_a3b_at_tp_8() {
    use qwen3_5::qwen3_5_35b_a3b::{DIMS, StatePlan};
    // 32 GDN value heads over 8 ranks: (32 / 8) x 128 x 128 f32 = 262,144 B of h a slot.
    let plan = StatePlan::for_rank(
        &DIMS,
        &qwen3_5_inputs(3),
        256,
        &tp(8),
        Rank { tp: 5, pp: 0 },
    )
    .expect("35B-A3B splits over 8 ranks");
    let mut gdn_layers = 0;
    for layer in plan.layers() {
        if let qwen3_5::Layer::LinearAttention(layer) = layer {
            gdn_layers += 1;
            assert_eq!(layer.gdn.h.live.unit_bytes, 262_144);
            assert_eq!(layer.gdn.h.live.bytes, 3 * 262_144);
        }
    }
    assert_eq!(gdn_layers, 30, "40 layers, every fourth full attention");
    // One GPU keeps 8 times that.
    let whole = StatePlan::new(&DIMS, &qwen3_5_inputs(3), 256).expect("one GPU");
    assert_eq!(whole.l0.gdn.h.live.unit_bytes, 8 * 262_144);
}

#[test]
fn qwen3_5_4b_at_tp_2() {
    use qwen3_5::qwen3_5_4b::{DIMS, StatePlan};
    let dims = DIMS.on_tp(2).expect("4B splits over 2 ranks");
    // 16 key and 32 value heads of 128: 8 and 16 a rank; the window is conv_kernel - 1.
    assert_eq!((dims.lin_k_heads, dims.lin_v_heads), (8, 16));
    assert_eq!(dims.conv_window(), Ok(3));
    let plan = StatePlan::for_rank(
        &DIMS,
        &qwen3_5_inputs(1),
        256,
        &tp(2),
        Rank { tp: 1, pp: 0 },
    )
    .expect("a plan");
    // The conv window: 3 rows of 2 x 8 x 128 (q, k) + 16 x 128 (v) = 4,096 channels, bf16.
    assert_eq!(plan.l0.gdn.conv.live.unit_bytes, 3 * 4_096 * 2);
    // h: 16 x 128 x 128 f32.
    assert_eq!(plan.l0.gdn.h.live.unit_bytes, 16 * 128 * 128 * 4);
    // KV: 4 heads over 2 ranks, 2 x 256 wide, fp8: 512 B a token a side.
    assert_eq!(plan.l3.attn.k.blocks.unit_bytes, 2 * 256);
}

#[test]
fn qwen3_next_at_tp_4_keeps_one_kv_head_a_rank() {
    use qwen3_next::qwen3_next_80b_a3b::{DIMS, StatePlan};
    let inputs = qwen3_next::Inputs {
        formats: qwen3_next::Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots: 1,
        verify: None,
        kv: metrale_tests::SERVE_KV,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    let plan =
        StatePlan::for_rank(&DIMS, &inputs, 256, &tp(4), Rank { tp: 2, pp: 0 }).expect("a plan");
    // One KV head of 256, fp8: 256 B a token a side, 2,048 blocks of 16 tokens.
    assert_eq!(plan.l3.attn.k.blocks.unit_bytes, 256);
    assert_eq!(plan.l3.attn.k.block_size(), 16);
    assert_eq!(plan.l3.attn.k.blocks.units, 2048 * 16);
}

/// The bytes of the paged-KV terms of a plan (`terms` beside `regions`).
fn kv_bytes(terms: &[TermInfo], regions: &[Region]) -> u64 {
    terms
        .iter()
        .zip(regions)
        .filter(|(term, _)| term.kind == StateKind::PagedKv)
        .map(|(_, region)| region.bytes)
        .sum()
}

/// Over a tensor-parallel group of `t` ranks, the KV of `$checkpoint` sums to one GPU's when
/// `t` divides its KV heads, and exceeds it (by `t / kv_heads`) exactly when it does not and
/// the heads are replicated.
macro_rules! kv_over_the_group {
    ($arch:ident, $checkpoint:ident, $inputs:expr) => {{
        use $arch::$checkpoint::{DIMS, StatePlan, TERMS};
        let inputs = $inputs;
        let single = StatePlan::new(&DIMS, &inputs, 256).expect("one GPU");
        let single = kv_bytes(&TERMS, &single.regions());
        assert!(single > 0);
        for t in [1u64, 2, 4, 8, 16] {
            let Ok(dims) = DIMS.on_tp(t) else { continue };
            let mut group = 0;
            for r in 0..t {
                let plan = StatePlan::for_rank(&DIMS, &inputs, 256, &tp(t), Rank { tp: r, pp: 0 })
                    .expect("a rank's plan");
                group += kv_bytes(&TERMS, &plan.regions());
            }
            let replicated = DIMS.kv_heads < t;
            assert_eq!(
                group > single,
                replicated,
                "{} at tp {t}",
                stringify!($checkpoint)
            );
            if replicated {
                assert_eq!(dims.kv_heads, 1);
                assert_eq!(group, single * (t / DIMS.kv_heads));
            } else {
                assert_eq!(group, single);
            }
        }
    }};
}

#[test]
fn a_group_holds_more_kv_exactly_when_heads_are_replicated() {
    kv_over_the_group!(qwen3_5, qwen3_5_27b, qwen3_5_inputs(1));
    kv_over_the_group!(qwen3_5, qwen3_5_397b_a17b, qwen3_5_inputs(1));
    kv_over_the_group!(qwen3_5, qwen3_5_4b, qwen3_5_inputs(1));
    kv_over_the_group!(
        llama,
        llama_3_1_8b,
        llama::Inputs {
            formats: llama::Formats {
                kv_cache_dtype: StateDtype::Bf16
            },
            slots: 1,
            verify: None,
            kv: metrale_tests::SERVE_KV,
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        }
    );
}

/// Nemotron-H inputs with every Nemotron-H term present that the serve's caches give.
const fn nemotron_inputs() -> nemotron_h::Inputs<'static> {
    nemotron_h::Inputs {
        formats: nemotron_h::Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots: 8,
        verify: None,
        kv: metrale_tests::SERVE_KV,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_tests::SERVE_CACHES,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    }
}

/// The layer a term's state id names (`l48.mamba2.h` is 48), `None` off the layers.
fn layer_of(state: &str) -> Option<u64> {
    state.strip_prefix('l')?.split('.').next()?.parse().ok()
}

#[test]
fn nemotron_h_47b_at_tp_4_pp_2_splits_the_layers_in_half() {
    use nemotron_h::nemotron_h_47b::{DIMS, LAYERS, StatePlan, TERMS};
    let inputs = nemotron_inputs();
    let layout = Parallel {
        tp: 4,
        pp: 2,
        pp_layers: None,
    };
    // 98 layers: vLLM's split gives 49 and 49.
    assert_eq!(LAYERS, 98);
    let stages = [0, 1].map(|pp| {
        StatePlan::for_rank(&DIMS, &inputs, 256, &layout, Rank { tp: 3, pp }).expect("a stage")
    });
    for (s, plan) in stages.iter().enumerate() {
        let held = if s == 0 { 0..49 } else { 49..98 };
        for (term, region) in TERMS.iter().zip(plan.regions()) {
            let holds = match layer_of(term.state) {
                Some(layer) => held.contains(&layer),
                // The epilogue (`head`, the hidden-row caches) is the last rank's.
                None => s == 1,
            };
            if !holds {
                assert_eq!(region, Region::EMPTY, "{} on pipeline rank {s}", term.state);
            }
        }
    }
    // The pipeline ranks of one tensor-parallel rank hold its whole plan once: every region of
    // the whole plan is in exactly one stage, and the bytes of each lifetime add up.
    let whole =
        StatePlan::for_rank(&DIMS, &inputs, 256, &tp(4), Rank { tp: 3, pp: 0 }).expect("tp 4");
    for (i, region) in whole.regions().iter().enumerate() {
        let mut found = stages
            .iter()
            .map(|plan| plan.regions()[i])
            .filter(|r| r.bytes > 0);
        if region.bytes > 0 {
            assert_eq!(
                found.next().map(|r| (r.bytes, r.units)),
                Some((region.bytes, region.units))
            );
            assert_eq!(found.next(), None, "{} in both stages", TERMS[i].state);
        } else {
            assert_eq!(found.next(), None);
        }
    }
    for space in Space::ALL {
        for lifetime in Lifetime::LAYOUT_ORDER {
            assert_eq!(
                stages[0].lifetime_bytes(space, lifetime)
                    + stages[1].lifetime_bytes(space, lifetime),
                whole.lifetime_bytes(space, lifetime)
            );
        }
    }
    // Each stage packs its own terms from offset 0: neither arena is the whole one's.
    assert!(stages[0].device_bytes() < whole.device_bytes());
    assert!(stages[1].device_bytes() < whole.device_bytes());
}

#[test]
fn a_given_split_and_its_errors() {
    use nemotron_h::nemotron_h_47b::{DIMS, StatePlan};
    let inputs = nemotron_inputs();
    let counts = [90, 8];
    let given = Parallel {
        tp: 1,
        pp: 2,
        pp_layers: Some(&counts),
    };
    let last =
        StatePlan::for_rank(&DIMS, &inputs, 256, &given, Rank { tp: 0, pp: 1 }).expect("rank 1");
    assert_eq!(
        metrale_circuit::parallel::Stage::of(98, &given, Rank { tp: 0, pp: 1 }),
        Ok(Stage {
            start: 90,
            end: 98,
            first: false,
            last: true
        })
    );
    // Layer 89 is rank 0's: empty here; layer 90 is held.
    let regions = last.regions();
    let terms = nemotron_h::nemotron_h_47b::TERMS;
    for (term, region) in terms.iter().zip(regions) {
        if layer_of(term.state).is_some_and(|l| l < 90) {
            assert_eq!(region, Region::EMPTY, "{}", term.state);
        }
    }
    let bad = Parallel {
        pp_layers: Some(&[90, 7]),
        ..given
    };
    assert_eq!(
        StatePlan::for_rank(&DIMS, &inputs, 256, &bad, Rank::default()),
        Err(RankError::Stage(StageFault::BadPpLayers {
            ranks: 2,
            sum: 97,
            layers: 98,
            pp: 2
        }))
    );
    let too_many = Parallel {
        tp: 1,
        pp: 99,
        pp_layers: None,
    };
    assert_eq!(
        StatePlan::for_rank(&DIMS, &inputs, 256, &too_many, Rank::default()),
        Err(RankError::Stage(StageFault::MoreStagesThanLayers {
            layers: 98,
            pp: 99
        }))
    );
    assert_eq!(
        StatePlan::for_rank(&DIMS, &inputs, 256, &tp(4), Rank { tp: 4, pp: 0 }),
        Err(RankError::Stage(StageFault::RankOutOfRange {
            rank: Rank { tp: 4, pp: 0 },
            tp: 4,
            pp: 1
        }))
    );
    // Nemotron-H-47B has 8 KV heads: 3 ranks split nothing.
    assert!(matches!(
        StatePlan::for_rank(&DIMS, &inputs, 256, &tp(3), Rank::default()),
        Err(RankError::Shard(ShardFault::DoesNotSplit { tp: 3, .. }))
    ));
}

/// A rank's plan is a `const`: built at compile time, as one GPU's is.
const LLAMA_70B_TP8_PP2: llama::llama_3_1_70b::StatePlan =
    match llama::llama_3_1_70b::StatePlan::for_rank(
        &llama::llama_3_1_70b::DIMS,
        &llama::Inputs {
            formats: llama::Formats {
                kv_cache_dtype: StateDtype::Bf16,
            },
            slots: 1,
            verify: None,
            kv: metrale_tests::SERVE_KV,
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        },
        256,
        &Parallel {
            tp: 8,
            pp: 2,
            pp_layers: None,
        },
        Rank { tp: 7, pp: 1 },
    ) {
        Ok(plan) => plan,
        Err(_) => panic!("Llama-3.1-70B splits over tp 8 x pp 2"),
    };

#[test]
fn a_rank_plan_is_a_const() {
    // Llama-3.1-70B: 80 layers, 8 KV heads of 128; at tp 8 one head a rank, bf16: 256 B a
    // token a side, 4,096 B a block of 16. Pipeline rank 1 holds layers 40..80.
    let plan = LLAMA_70B_TP8_PP2;
    assert_eq!(plan.l40.attn.k.blocks.unit_bytes, 128 * 2);
    assert_eq!(plan.l40.attn.k.blocks.bytes, 2048 * 16 * 128 * 2);
    assert_eq!(plan.l39.attn.k.blocks, Region::EMPTY);
    // 40 layers x 2 sides x 2048 blocks x 4,096 B.
    assert_eq!(plan.device_bytes(), 40 * 2 * 2048 * 4096);
}

#[test]
fn a_checkpoint_chosen_at_run_time_plans_and_fits_a_rank() {
    use qwen3_5::{AnyPlan, Checkpoint, qwen3_5_27b};
    let inputs = qwen3_5_inputs(2);
    let layout = Parallel {
        tp: 4,
        pp: 2,
        pp_layers: None,
    };
    let rank = Rank { tp: 1, pp: 1 };
    let checkpoint = Checkpoint::from_hf("Qwen/Qwen3.5-27B").expect("27B");
    let chosen = AnyPlan::for_rank(checkpoint, checkpoint.dims(), &inputs, 256, &layout, rank);
    let typed = qwen3_5_27b::StatePlan::for_rank(&qwen3_5_27b::DIMS, &inputs, 256, &layout, rank);
    assert_eq!(chosen, typed.map(AnyPlan::Qwen3527b));
    let budget = 4 << 30;
    let fit = AnyPlan::fit_kv_blocks_for_rank(
        checkpoint,
        checkpoint.dims(),
        &inputs,
        256,
        budget,
        &layout,
        rank,
    )
    .expect("a fit");
    // The answer fits that rank's budget, one block more does not.
    let at = |blocks| {
        let kv = metrale_tests::SERVE_KV.map(|kv| metrale_circuit::KvInputs { blocks, ..kv });
        let inputs = qwen3_5::Inputs { kv, ..inputs };
        qwen3_5_27b::StatePlan::for_rank(&qwen3_5_27b::DIMS, &inputs, 256, &layout, rank)
            .expect("a plan")
            .device_bytes()
    };
    assert!(at(fit.value) <= budget && at(fit.value + 1) > budget);
    assert_eq!(at(fit.value), fit.device_bytes);
    // A rank outside the layout is the same error either way.
    assert_eq!(
        AnyPlan::for_rank(
            checkpoint,
            checkpoint.dims(),
            &inputs,
            256,
            &layout,
            Rank { tp: 0, pp: 2 }
        ),
        Err(RankError::Stage(StageFault::RankOutOfRange {
            rank: Rank { tp: 0, pp: 2 },
            tp: 4,
            pp: 2
        }))
    );
}
