//! Generated == dynamic: for every circuit in `circuits/` and each of its checkpoints, the
//! generated `DynamicPlan::new` and the dynamic `metrale_circuit::dynamic::DynamicPlan::new` on the
//! instantiated declarations give the same terms, units, bytes, dtypes and offsets, the same
//! arena totals, and the same error, under randomized inputs (overflowing ones included), on
//! a randomized rank of a randomized tensor- and pipeline-parallel layout: generated
//! `Dims::on_tp` against `Circuit::rank_dims`, and generated `DynamicPlan::for_rank` against the
//! dynamic plan of `instantiate_rank` (whose terms are the rank's only: every term of a block
//! instance the rank does not hold must be `Region::EMPTY`). On the suites' circuit of KV
//! shared across layers (`shared_kv`), each reader's field is also its owner's regions in the
//! dynamic plan (`DynamicPlan::term` of the reader), or empty where the rank does not hold it.

use metrale_circuit::TermInfo;
use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl};
use metrale_circuit::inputs::{
    CarryInputs, DraftInputs, FormatChoice, HSteps, LookupInputs, RingInputs, TreeInputs,
    WindowInputs,
};
use metrale_circuit::load::Circuit;
use metrale_circuit::parallel::{Parallel, ParallelError, Rank};
use metrale_circuit::serving::{
    PoolPolicy,
    pages::{PoolPages, PoolPlan, VllmPool},
};
use metrale_circuit::{
    CacheInputs, Holding, KvInputs, Lifetime, PlanError, Region, Space, StateDtype, StateInputs,
    VerifyInputs, parallel::RankError,
};
use proptest::prelude::*;

/// Run-time inputs as proptest draws them: owned, so a case can borrow its `h_steps`.
#[derive(Debug, Clone)]
struct Drawn {
    dtypes: Vec<StateDtype>,
    /// Per format key, which of its values a key whose states declare layouts takes (its
    /// drawn dtype, or one of its layouts).
    picks: Vec<usize>,
    slots: u64,
    verify: Option<(Vec<u64>, u64)>,
    kv: Option<KvInputs>,
    draft_kv: Option<KvInputs>,
    draft_kv_dtype: Option<StateDtype>,
    caches: CacheInputs,
    align: u64,
    pool: PoolPolicy,
}

impl Drawn {
    fn verify(&self) -> Option<VerifyInputs<'_>> {
        self.verify
            .as_ref()
            .map(|(h_steps, conv_steps)| VerifyInputs {
                h_steps: HSteps::PerSlot(h_steps),
                conv_steps: *conv_steps,
            })
    }
}

/// A count: mostly small, sometimes huge enough to overflow a product.
fn count() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..64,
        2 => 0u64..100_000,
        1 => Just(u64::MAX / 3),
        1 => (1u64 << 40)..(1u64 << 48),
    ]
}

/// KV blocks, with or without window inputs (a windowed side without them is an error both
/// plans must agree on).
fn kv() -> impl Strategy<Value = Option<KvInputs>> {
    let window = (count(), count(), count()).prop_map(|(sequences, chunk_tokens, max_tokens)| {
        WindowInputs {
            sequences,
            chunk_tokens,
            max_tokens,
        }
    });
    proptest::option::of(
        (count(), count(), proptest::option::weighted(0.7, window)).prop_map(
            |(blocks, block_size, window)| KvInputs {
                blocks,
                block_size,
                window,
            },
        ),
    )
}

fn caches() -> impl Strategy<Value = CacheInputs> {
    let pair = || (count(), count());
    (
        (count(), count(), count()),
        proptest::option::of(pair()),
        proptest::option::of(pair()),
        proptest::option::of(pair()),
        proptest::option::of(pair()),
        proptest::option::of(pair()),
    )
        .prop_map(
            |((prefix, rows, capture), ring, carry, lookup, tree, drafts)| CacheInputs {
                prefix_snapshot_slots: prefix,
                ring: ring.map(|(ring_slots, seq_slots)| RingInputs {
                    ring_slots,
                    seq_slots,
                }),
                carry: carry.map(|(slots, table_rows)| CarryInputs { slots, table_rows }),
                verify_table_rows: rows,
                capture_rows: capture,
                lookup: lookup.map(|(sequences, history_tokens)| LookupInputs {
                    sequences,
                    history_tokens,
                }),
                tree: tree.map(|(slots, nodes)| TreeInputs { slots, nodes }),
                drafts: drafts.map(|(slots, positions)| DraftInputs { slots, positions }),
            },
        )
}

/// Arenas, or a vLLM page pool of any figures (huge ones overflow, an error both plans must
/// agree on).
fn pool() -> impl Strategy<Value = PoolPolicy> {
    let vllm = (
        (count(), count(), count(), count()),
        (count(), count(), any::<bool>()),
        (count(), count(), any::<bool>()),
    )
        .prop_map(
            |(
                (pages, context, kernel_block, batched_tokens),
                (batches_in_flight, checkpoint_alignment, prefix_caching),
                (checkpoint_pages, speculative_tokens, requests),
            )| VllmPool {
                pages: if requests {
                    PoolPages::Requests(pages)
                } else {
                    PoolPages::Pages(pages)
                },
                context,
                kernel_block,
                batched_tokens,
                batches_in_flight,
                prefix_caching,
                checkpoint_alignment,
                checkpoint_pages,
                speculative_tokens,
            },
        );
    prop_oneof![2 => Just(PoolPolicy::Arenas), 1 => vllm.prop_map(PoolPolicy::Vllm)]
}

fn drawn(formats: usize) -> impl Strategy<Value = Drawn> {
    (
        (
            proptest::collection::vec(proptest::sample::select(StateDtype::ALL.to_vec()), formats),
            proptest::collection::vec(0usize..4, formats),
        ),
        count(),
        proptest::option::of((proptest::collection::vec(0u64..16, 0..10), count())),
        kv().boxed(),
        (
            kv().boxed(),
            proptest::option::of(proptest::sample::select(StateDtype::ALL.to_vec())),
        ),
        caches().boxed(),
        prop_oneof![
            8 => (0u32..13).prop_map(|p| 1u64 << p),
            1 => Just(0u64),
            1 => Just(96u64),
        ],
        // Boxed, as the pools above: proptest's tree of this many nested strategies otherwise
        // takes more than a test thread's stack to build in a debug build.
        pool().boxed(),
    )
        .prop_map(
            |(
                (dtypes, picks),
                slots,
                verify,
                kv,
                (draft_kv, draft_kv_dtype),
                caches,
                align,
                pool,
            )| Drawn {
                dtypes,
                picks,
                slots,
                verify,
                kv,
                draft_kv,
                draft_kv_dtype,
                caches,
                align,
                pool,
            },
        )
}

/// A tensor-parallel size: mostly 1 and powers of two (the sizes that split real heads), and
/// any of 0 to 16 (most of which do not split, an error both sides must agree on).
fn tp() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(1u64),
        4 => (1u32..5).prop_map(|p| 1u64 << p),
        1 => 0u64..=16,
    ]
}

/// A parallel layout and one rank of it, as proptest draws them.
#[derive(Debug, Clone)]
struct DrawnRank {
    tp: u64,
    pp: u64,
    pp_layers: Option<Vec<u64>>,
    rank: Rank,
}

/// A layout of a model of `layers` layers: the tensor-parallel size of [`tp`]; mostly one
/// pipeline rank, often 2 to 4, sometimes any of 0 to `layers + 2` (more ranks than layers is
/// an error); a hand-given split a fifth of the time (cut at random points, so some counts
/// are 0, an error); a rank inside the sizes, or one of them out of range.
fn parallel(layers: usize) -> impl Strategy<Value = DrawnRank> {
    let layers = layers as u64;
    (
        tp(),
        prop_oneof![4 => Just(1u64), 3 => 2u64..=4, 1 => 0..=layers + 2],
        proptest::option::weighted(0.2, proptest::collection::vec(any::<u64>(), 0..6)),
        (any::<u64>(), any::<u64>(), proptest::bool::weighted(0.05)),
    )
        .prop_map(move |(tp, pp, cuts, (tp_raw, pp_raw, outside))| {
            // Counts between sorted cut points in 0..=layers, so they sum to the layers
            // (unless there are not pp - 1 cuts).
            let pp_layers = cuts.map(|raw| {
                let mut cuts: Vec<u64> = raw.iter().map(|c| c % (layers + 1)).collect();
                cuts.truncate(usize::try_from(pp.saturating_sub(1)).unwrap_or(0));
                cuts.sort_unstable();
                cuts.push(layers);
                let mut start = 0;
                cuts.iter()
                    .map(|&cut| {
                        let count = cut - start;
                        start = cut;
                        count
                    })
                    .collect()
            });
            let rank = if outside {
                Rank {
                    tp,
                    pp: pp_raw % (pp + 1),
                }
            } else {
                Rank {
                    tp: tp_raw % tp.max(1),
                    pp: pp_raw % pp.max(1),
                }
            };
            DrawnRank {
                tp,
                pp,
                pp_layers,
                rank,
            }
        })
}

/// A generated plan as compared: its regions, arena sizes, per-lifetime bytes and page pool.
type GeneratedPlan = (Vec<Region>, [u64; 2], Vec<u64>, Option<PoolPlan>);

/// Compares one generated plan (its `TERMS` and `regions()`) with the dynamic plan of the
/// states `held` (a rank's, from `instantiate_rank`): a held term the dynamic plan lacks is
/// an absent group's, empty at offset 0; a term not held is `Region::EMPTY`.
fn compare(
    terms: &[TermInfo],
    held: &[StateDecl],
    generated: Result<GeneratedPlan, PlanError>,
    dynamic: &Result<DynamicPlan, PlanError<String>>,
) -> Result<(), TestCaseError> {
    match (generated, dynamic) {
        (Ok((regions, arenas, lifetimes, pool)), Ok(plan)) => {
            prop_assert_eq!(pool, plan.pool().map(|pool| pool.plan));
            let mut matched = 0;
            for (info, region) in terms.iter().zip(&regions) {
                match plan.term(info.state, info.holding) {
                    Some(term) => {
                        matched += 1;
                        // Every field: offset, bytes, units, dtype, unit bytes and the
                        // grid's inner count, so every unit's address agrees too.
                        prop_assert_eq!(
                            term.region(),
                            *region,
                            "{} {:?}",
                            info.state,
                            info.holding
                        );
                        prop_assert_eq!(
                            (term.kind, term.lifetime, term.space),
                            (info.kind, info.lifetime, info.space)
                        );
                    }
                    None if held.iter().any(|d| d.id == info.state) => prop_assert!(
                        region.units == 0 && region.bytes == 0 && region.offset == 0,
                        "absent term {} {:?} is not empty: {:?}",
                        info.state,
                        info.holding,
                        region
                    ),
                    None => prop_assert_eq!(
                        *region,
                        Region::EMPTY,
                        "term {} {:?} of a block instance the rank does not hold",
                        info.state,
                        info.holding
                    ),
                }
            }
            prop_assert_eq!(matched, plan.terms().len(), "every dynamic term is a field");
            prop_assert_eq!(arenas, [plan.device_bytes(), plan.host_bytes()]);
            let dynamic_lifetimes: Vec<u64> = lifetimes_of(|s, l| plan.lifetime_bytes(s, l));
            prop_assert_eq!(lifetimes, dynamic_lifetimes);
        }
        (Err(generated), Err(dynamic)) => {
            prop_assert_eq!(&PlanError::<String>::from(generated), dynamic);
        }
        (generated, dynamic) => {
            return Err(TestCaseError::fail(format!(
                "generated {:?} but dynamic {:?}",
                generated.map(|_| "Ok"),
                dynamic.as_ref().map(|_| "Ok")
            )));
        }
    }
    Ok(())
}

/// Bytes per (space, lifetime), in a fixed order.
fn lifetimes_of(bytes: impl Fn(Space, Lifetime) -> u64) -> Vec<u64> {
    let mut all = Vec::new();
    for space in Space::ALL {
        for lifetime in Lifetime::LAYOUT_ORDER {
            all.push(bytes(space, lifetime));
        }
    }
    all
}

/// A format key's value drawn: a dtype, or for a key whose states declare layouts, one of
/// them by `pick`.
trait Drawable {
    fn drawn(dtype: StateDtype, pick: usize) -> Self;
}

impl Drawable for StateDtype {
    fn drawn(dtype: StateDtype, _pick: usize) -> Self {
        dtype
    }
}

impl Drawable for metrale_tests::deepseek_v32::KvCacheDtypeFormat {
    fn drawn(dtype: StateDtype, pick: usize) -> Self {
        match pick {
            0 => Self::Fp8DsMla,
            1 => Self::Nvfp4DsMla,
            _ => Self::Dtype(dtype),
        }
    }
}

/// The dynamic plan of `decls` under the drawn inputs, formats keyed as the generated
/// `Formats::pairs` lists them.
fn dynamic(
    decls: &[StateDecl],
    pairs: &[(&'static str, FormatChoice)],
    drawn: &Drawn,
) -> Result<DynamicPlan, PlanError<String>> {
    let inputs = StateInputs {
        formats: pairs,
        slots: drawn.slots,
        verify: drawn.verify(),
        kv: drawn.kv,
        draft_kv: drawn.draft_kv,
        draft_kv_dtype: drawn.draft_kv_dtype,
        caches: drawn.caches,
        pool: drawn.pool,
    };
    DynamicPlan::new(decls, &inputs, drawn.align)
}

fn load(circuit: &str) -> Circuit {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: &root.join(circuit),
        name: circuit,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Each reader's (`shares`) field of a generated plan, in the order of its checkpoint's `SHARES`
/// (`fields`), against the dynamic plan of the states `held`: the readers held are the dynamic
/// plan's `shared()`, each with the owner `SHARES` names and its owner's regions (empty at
/// offset 0 where the owner has no term); a reader not held is `Region::EMPTY`.
fn compare_readers(
    shares: &[(&str, &str, u64, u64)],
    fields: &[(String, Region)],
    held: &[StateDecl],
    dynamic: &DynamicPlan,
) -> Result<(), TestCaseError> {
    let named: Vec<&str> = fields.iter().map(|(reader, _)| reader.as_str()).collect();
    let listed: Vec<&str> = shares.iter().map(|(reader, ..)| *reader).collect();
    prop_assert_eq!(named, listed, "the test lists every reader's field");
    let is_held = |id: &str| held.iter().any(|d| d.id == id);
    let held_shares: Vec<(&str, &str)> = shares
        .iter()
        .filter(|(reader, ..)| is_held(reader))
        .map(|(reader, owner, ..)| (*reader, *owner))
        .collect();
    prop_assert_eq!(dynamic.shared().collect::<Vec<_>>(), held_shares);
    for (reader, region) in fields {
        if !is_held(reader) {
            prop_assert_eq!(
                *region,
                Region::EMPTY,
                "reader {} the rank does not hold",
                reader
            );
            continue;
        }
        match dynamic.term(reader, Holding::Blocks) {
            Some(term) => prop_assert_eq!(*region, term.region(), "reader {}", reader),
            None => prop_assert!(
                region.units == 0 && region.bytes == 0 && region.offset == 0,
                "reader {} of an absent owner term: {:?}",
                reader,
                region
            ),
        }
    }
    Ok(())
}

/// Every reader's field of a Gemma 3n plan, layer by layer: a shared local layer's local pair,
/// a shared global layer's global pair.
fn gemma3n_readers(layers: &[metrale_tests::gemma3n::Layer<'_>]) -> Vec<(String, Region)> {
    use metrale_tests::gemma3n::Layer;
    let mut fields = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        match layer {
            Layer::SharedSliding(shared) => fields.extend([
                (format!("l{i}.swa_reader.k"), shared.swa_reader.k.blocks),
                (format!("l{i}.swa_reader.v"), shared.swa_reader.v.blocks),
            ]),
            Layer::SharedFull(shared) => fields.extend([
                (format!("l{i}.attn_reader.k"), shared.attn_reader.k.blocks),
                (format!("l{i}.attn_reader.v"), shared.attn_reader.v.blocks),
            ]),
            Layer::Sliding(_) | Layer::Full(_) => {}
        }
    }
    fields
}

/// One proptest per checkpoint: `$checkpoint` is the generated checkpoint module, `$formats`
/// the generated `Formats` fields in `Formats::pairs` order, `$cases` the cases drawn (the
/// miniatures get the most: every term, small enough that most inputs plan), `$readers` (for a
/// checkpoint with KV shared across layers) every reader's field of a plan, in `SHARES` order.
/// The checkpoint's declarations are instantiated once per test.
macro_rules! differential {
    ($test:ident, $arch:ident, $checkpoint:ident, $circuit:literal, $cases:literal, [$($format:ident),*] $(, readers = $readers:expr)?) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases($cases))]
            #[test]
            fn $test(
                drawn in drawn([$(stringify!($format)),*].len()),
                at in parallel(metrale_tests::$arch::$checkpoint::LAYERS),
            ) {
                use metrale_tests::$arch::{self as arch, $checkpoint as checkpoint};
                static CIRCUIT: std::sync::OnceLock<Circuit> = std::sync::OnceLock::new();
                let circuit = CIRCUIT.get_or_init(|| load($circuit));
                let name = stringify!($checkpoint);
                // A tensor-parallel rank's dims: generated `Dims::on_tp` against the dynamic
                // `Circuit::rank_dims`, the same dims or the same error.
                let tp = at.tp;
                let dynamic_dims = circuit.rank_dims(circuit.checkpoint(name).unwrap(), tp);
                match (checkpoint::DIMS.on_tp(tp), &dynamic_dims) {
                    (Ok(_), Ok(_)) => {}
                    (Err(fault), Err(error)) => prop_assert_eq!(&ParallelError::from(fault), error),
                    (generated, dynamic) => {
                        return Err(TestCaseError::fail(format!(
                            "tp {tp}: generated {generated:?} but dynamic {dynamic:?}"
                        )));
                    }
                }
                let parallel = Parallel {
                    tp,
                    pp: at.pp,
                    pp_layers: at.pp_layers.as_deref(),
                };
                let mut dtypes = drawn.dtypes.iter().copied();
                let mut picks = drawn.picks.iter().copied();
                let formats = arch::Formats {
                    $($format: Drawable::drawn(
                        dtypes.next().unwrap_or(StateDtype::F32),
                        picks.next().unwrap_or(0),
                    ),)*
                };
                let inputs = arch::Inputs {
                    formats,
                    slots: drawn.slots,
                    verify: drawn.verify(),
                    kv: drawn.kv,
                    draft_kv: drawn.draft_kv,
                    draft_kv_dtype: drawn.draft_kv_dtype,
                    caches: drawn.caches,
                    pool: drawn.pool,
                };
                let generated =
                    checkpoint::StatePlan::for_rank(&checkpoint::DIMS, &inputs, drawn.align, &parallel, at.rank);
                let decls = match (&generated, circuit.instantiate_rank(name, &parallel, at.rank)) {
                    // The rank cannot be placed, or its dims do not shard: the same error.
                    (Err(RankError::Stage(fault)), Err(error)) => {
                        prop_assert!(error.message.ends_with(&fault.to_string()), "{error} vs {fault}");
                        return Ok(());
                    }
                    (Err(RankError::Shard(fault)), Err(error)) => {
                        let fault = ParallelError::from(*fault).to_string();
                        prop_assert!(error.message.ends_with(&fault), "{error} vs {fault}");
                        return Ok(());
                    }
                    (Ok(_) | Err(RankError::Plan(_)), Ok(decls)) => decls,
                    (generated, dynamic) => {
                        return Err(TestCaseError::fail(format!(
                            "{at:?}: generated {:?} but dynamic {:?}",
                            generated.as_ref().map(|_| "a plan"),
                            dynamic.map(|_| "states")
                        )));
                    }
                };
                // One GPU's plan is `new`'s.
                if (at.tp, at.pp, at.rank) == (1, 1, Rank::default()) {
                    prop_assert_eq!(
                        &checkpoint::StatePlan::new(&checkpoint::DIMS, &inputs, drawn.align).map_err(RankError::Plan),
                        &generated
                    );
                }
                let generated = generated.map_err(|error| match error {
                    RankError::Plan(error) => error,
                    other => unreachable!("placed above: {other:?}"),
                });
                let dynamic = dynamic(&decls, &formats.pairs(), &drawn);
                $(
                    if let (Ok(plan), Ok(dynamic)) = (&generated, &dynamic) {
                        let fields: Vec<(String, Region)> = ($readers)(plan)
                            .into_iter()
                            .map(|(reader, region)| (reader.to_string(), region))
                            .collect();
                        compare_readers(&checkpoint::SHARES, &fields, &decls, dynamic)?;
                    }
                )?
                let generated = generated.map(|plan| {
                    (
                        plan.regions().to_vec(),
                        [plan.device_bytes(), plan.host_bytes()],
                        lifetimes_of(|s, l| plan.lifetime_bytes(s, l)),
                        plan.pool().copied(),
                    )
                });
                compare(&checkpoint::TERMS, &decls, generated, &dynamic)?;
            }
        }
    };
}

// Every checkpoint of every circuit in `circuits/`.
differential!(
    deepseek_v3_generated_equals_dynamic,
    deepseek_v3,
    deepseek_v3,
    "circuits/deepseek_v3.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    deepseek_v3_tiny_generated_equals_dynamic,
    deepseek_v3,
    tiny,
    "circuits/deepseek_v3.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    deepseek_v3_2_generated_equals_dynamic,
    deepseek_v32,
    deepseek_v3_2,
    "circuits/deepseek_v32.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    deepseek_v32_tiny_generated_equals_dynamic,
    deepseek_v32,
    tiny,
    "circuits/deepseek_v32.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    falcon_h1_7b_generated_equals_dynamic,
    falcon_h1,
    falcon_h1_7b,
    "circuits/falcon_h1.toml",
    128,
    [kv_cache_dtype, ssm_h_storage, ssm_conv_storage]
);
differential!(
    falcon_h1_tiny_generated_equals_dynamic,
    falcon_h1,
    tiny,
    "circuits/falcon_h1.toml",
    256,
    [kv_cache_dtype, ssm_h_storage, ssm_conv_storage]
);
differential!(
    gemma_2_2b_generated_equals_dynamic,
    gemma2,
    gemma_2_2b,
    "circuits/gemma2.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    gemma2_tiny_generated_equals_dynamic,
    gemma2,
    tiny,
    "circuits/gemma2.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    gemma_3_27b_generated_equals_dynamic,
    gemma3,
    gemma_3_27b,
    "circuits/gemma3.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    gemma3_tiny_generated_equals_dynamic,
    gemma3,
    tiny,
    "circuits/gemma3.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    gemma_3n_e4b_generated_equals_dynamic,
    gemma3n,
    gemma_3n_e4b,
    "circuits/gemma3n.toml",
    128,
    [kv_cache_dtype],
    readers =
        |plan: &metrale_tests::gemma3n::gemma_3n_e4b::StatePlan| gemma3n_readers(&plan.layers())
);
differential!(
    gemma3n_tiny_generated_equals_dynamic,
    gemma3n,
    tiny,
    "circuits/gemma3n.toml",
    256,
    [kv_cache_dtype],
    readers = |plan: &metrale_tests::gemma3n::tiny::StatePlan| gemma3n_readers(&plan.layers())
);
differential!(
    gpt_oss_120b_generated_equals_dynamic,
    gpt_oss,
    gpt_oss_120b,
    "circuits/gpt_oss.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    gpt_oss_20b_generated_equals_dynamic,
    gpt_oss,
    gpt_oss_20b,
    "circuits/gpt_oss.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    gpt_oss_tiny_generated_equals_dynamic,
    gpt_oss,
    tiny,
    "circuits/gpt_oss.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    granite_4_0_h_small_generated_equals_dynamic,
    granite_4_h,
    granite_4_0_h_small,
    "circuits/granite_4_h.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    granite_4_0_h_tiny_generated_equals_dynamic,
    granite_4_h,
    granite_4_0_h_tiny,
    "circuits/granite_4_h.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    granite_4_h_tiny_generated_equals_dynamic,
    granite_4_h,
    tiny,
    "circuits/granite_4_h.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    jamba_v0_1_generated_equals_dynamic,
    jamba,
    jamba_v0_1,
    "circuits/jamba.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    jamba_tiny_generated_equals_dynamic,
    jamba,
    tiny,
    "circuits/jamba.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    kimi_linear_48b_a3b_generated_equals_dynamic,
    kimi_linear,
    kimi_linear_48b_a3b,
    "circuits/kimi_linear.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    kimi_linear_tiny_generated_equals_dynamic,
    kimi_linear,
    tiny,
    "circuits/kimi_linear.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    llama_3_1_8b_generated_equals_dynamic,
    llama,
    llama_3_1_8b,
    "circuits/llama.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    llama_3_1_70b_generated_equals_dynamic,
    llama,
    llama_3_1_70b,
    "circuits/llama.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    llama_tiny_generated_equals_dynamic,
    llama,
    tiny,
    "circuits/llama.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    llama_4_scout_17b_16e_generated_equals_dynamic,
    llama4,
    llama_4_scout_17b_16e,
    "circuits/llama4.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    llama4_tiny_generated_equals_dynamic,
    llama4,
    tiny,
    "circuits/llama4.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    minimax_m1_80k_generated_equals_dynamic,
    minimax_m1,
    minimax_m1_80k,
    "circuits/minimax_m1.toml",
    128,
    [ssm_h_storage, kv_cache_dtype]
);
differential!(
    minimax_m1_tiny_generated_equals_dynamic,
    minimax_m1,
    tiny,
    "circuits/minimax_m1.toml",
    256,
    [ssm_h_storage, kv_cache_dtype]
);
differential!(
    mistral_7b_v0_1_generated_equals_dynamic,
    mistral,
    mistral_7b_v0_1,
    "circuits/mistral.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    mistral_tiny_generated_equals_dynamic,
    mistral,
    tiny,
    "circuits/mistral.toml",
    256,
    [kv_cache_dtype]
);
differential!(
    nemotron_h_8b_generated_equals_dynamic,
    nemotron_h,
    nemotron_h_8b,
    "circuits/nemotron_h.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    nemotron_h_47b_generated_equals_dynamic,
    nemotron_h,
    nemotron_h_47b,
    "circuits/nemotron_h.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    nemotron_nano_9b_v2_generated_equals_dynamic,
    nemotron_h,
    nemotron_nano_9b_v2,
    "circuits/nemotron_h.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    nemotron_h_tiny_generated_equals_dynamic,
    nemotron_h,
    tiny,
    "circuits/nemotron_h.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_5_27b_generated_equals_dynamic,
    qwen3_5,
    qwen3_5_27b,
    "circuits/qwen3_5.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_5_397b_a17b_generated_equals_dynamic,
    qwen3_5,
    qwen3_5_397b_a17b,
    "circuits/qwen3_5.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_5_35b_a3b_generated_equals_dynamic,
    qwen3_5,
    qwen3_5_35b_a3b,
    "circuits/qwen3_5.toml",
    64,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_5_4b_generated_equals_dynamic,
    qwen3_5,
    qwen3_5_4b,
    "circuits/qwen3_5.toml",
    64,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_5_tiny_generated_equals_dynamic,
    qwen3_5,
    tiny,
    "circuits/qwen3_5.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_next_80b_a3b_generated_equals_dynamic,
    qwen3_next,
    qwen3_next_80b_a3b,
    "circuits/qwen3_next.toml",
    128,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    qwen3_next_tiny_generated_equals_dynamic,
    qwen3_next,
    tiny,
    "circuits/qwen3_next.toml",
    256,
    [ssm_h_storage, ssm_conv_storage, kv_cache_dtype]
);
differential!(
    whisper_large_v3_generated_equals_dynamic,
    whisper,
    whisper_large_v3,
    "circuits/whisper.toml",
    128,
    [kv_cache_dtype]
);
differential!(
    whisper_tiny_generated_equals_dynamic,
    whisper,
    tiny,
    "circuits/whisper.toml",
    256,
    [kv_cache_dtype]
);

// The suites' circuit of KV shared across layers (`tests/ui/circuits/shared_kv.toml`).
differential!(
    shared_kv_small_generated_equals_dynamic,
    shared_kv,
    small,
    "tests/ui/circuits/shared_kv.toml",
    256,
    [kv_cache_dtype],
    readers = |plan: &metrale_tests::shared_kv::small::StatePlan| {
        [
            ("l5.swa_reader.k", plan.l5.swa_reader.k.blocks),
            ("l5.swa_reader.v", plan.l5.swa_reader.v.blocks),
            ("l5.attn_reader.k", plan.l5.attn_reader.k.blocks),
            ("l5.attn_reader.v", plan.l5.attn_reader.v.blocks),
            ("l6.swa_reader.k", plan.l6.swa_reader.k.blocks),
            ("l6.swa_reader.v", plan.l6.swa_reader.v.blocks),
            ("l6.attn_reader.k", plan.l6.attn_reader.k.blocks),
            ("l6.attn_reader.v", plan.l6.attn_reader.v.blocks),
            ("l7.cross.k", plan.l7.cross.k.blocks),
        ]
    }
);
differential!(
    shared_kv_tiny_generated_equals_dynamic,
    shared_kv,
    tiny,
    "tests/ui/circuits/shared_kv.toml",
    256,
    [kv_cache_dtype],
    readers = |plan: &metrale_tests::shared_kv::tiny::StatePlan| {
        [
            ("l2.swa_reader.k", plan.l2.swa_reader.k.blocks),
            ("l2.swa_reader.v", plan.l2.swa_reader.v.blocks),
            ("l2.attn_reader.k", plan.l2.attn_reader.k.blocks),
            ("l2.attn_reader.v", plan.l2.attn_reader.v.blocks),
            ("l3.cross.k", plan.l3.cross.k.blocks),
        ]
    }
);

/// The default inputs give a plan with every term present; the two plans agree on it too (a
/// fixed case, so the comparison is seen to run on a full plan, not only on errors).
#[test]
fn default_like_inputs_agree_and_fill_every_term() {
    use metrale_tests::qwen3_5::{Formats, Inputs, qwen3_5_27b};
    let h_steps = [4; 9];
    let drawn = Drawn {
        dtypes: vec![StateDtype::F32, StateDtype::Bf16, StateDtype::Fp8],
        picks: Vec::new(),
        slots: 9,
        verify: Some((h_steps.to_vec(), 4)),
        kv: metrale_tests::SERVE_KV,
        draft_kv: metrale_tests::SERVE_KV,
        draft_kv_dtype: None,
        caches: metrale_tests::SERVE_CACHES,
        align: 256,
        pool: PoolPolicy::Arenas,
    };
    let formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let inputs = Inputs {
        formats,
        slots: 9,
        verify: drawn.verify(),
        kv: drawn.kv,
        draft_kv: drawn.draft_kv,
        draft_kv_dtype: drawn.draft_kv_dtype,
        caches: drawn.caches,
        pool: drawn.pool,
    };
    let plan = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256).expect("plan");
    let decls = load("circuits/qwen3_5.toml")
        .instantiate("qwen3_5_27b")
        .expect("27b");
    let dynamic = dynamic(&decls, &formats.pairs(), &drawn);
    assert_eq!(
        dynamic.as_ref().map(|p| p.terms().len()),
        Ok(qwen3_5_27b::TERM_COUNT)
    );
    let generated = Ok((
        plan.regions().to_vec(),
        [plan.device_bytes(), plan.host_bytes()],
        lifetimes_of(|s, l| plan.lifetime_bytes(s, l)),
        plan.pool().copied(),
    ));
    compare(&qwen3_5_27b::TERMS, &decls, generated, &dynamic).expect("same plan");
    // By hand: l0.gdn.h is 48 x 128 x 128 f32 = 3 MiB a slot, 9 slots.
    assert_eq!(plan.l0.gdn.h.live.bytes, 9 * 48 * 128 * 128 * 4);
    assert_eq!(plan.l0.gdn.h.steps.units, 36);
    assert_eq!(plan.draft.attn.k.blocks.units, 2048 * 16);
    assert_eq!(plan.head.lookup_index.cache.dtype, StateDtype::U32);
    let lookup = qwen3_5_27b::TERMS
        .iter()
        .position(|t| t.state == "head.lookup_index")
        .expect("lookup term");
    assert_eq!(qwen3_5_27b::TERMS[lookup].holding, Holding::Cache);
    assert_eq!(qwen3_5_27b::TERMS[lookup].space, Space::Host);
}

/// An fp8 main pool beside a bf16 draft pool (`draft_kv_dtype`): the generated plan retypes
/// the draft head's KV sides as the dynamic plan does, and nothing else (a fixed case, beside
/// the drawn ones). Qwen3-Next-80B-A3B's KV token is 2 heads x 256 per side.
#[test]
fn a_draft_pool_in_its_own_dtype_agrees() {
    use metrale_tests::qwen3_next::{Formats, Inputs, qwen3_next_80b_a3b as ckpt};
    let h_steps = [4; 9];
    let drawn = Drawn {
        dtypes: vec![StateDtype::F32, StateDtype::Bf16, StateDtype::Fp8],
        picks: Vec::new(),
        slots: 9,
        verify: Some((h_steps.to_vec(), 4)),
        kv: metrale_tests::SERVE_KV,
        draft_kv: metrale_tests::SERVE_KV,
        draft_kv_dtype: Some(StateDtype::Bf16),
        caches: metrale_tests::SERVE_CACHES,
        align: 256,
        pool: PoolPolicy::Arenas,
    };
    let formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let inputs = Inputs {
        formats,
        slots: drawn.slots,
        verify: drawn.verify(),
        kv: drawn.kv,
        draft_kv: drawn.draft_kv,
        draft_kv_dtype: drawn.draft_kv_dtype,
        caches: drawn.caches,
        pool: drawn.pool,
    };
    let plan = ckpt::StatePlan::new(&ckpt::DIMS, &inputs, 256).expect("plan");
    let decls = load("circuits/qwen3_next.toml")
        .instantiate("qwen3_next_80b_a3b")
        .expect("80b");
    let dynamic = dynamic(&decls, &formats.pairs(), &drawn);
    let generated = Ok((
        plan.regions().to_vec(),
        [plan.device_bytes(), plan.host_bytes()],
        lifetimes_of(|s, l| plan.lifetime_bytes(s, l)),
        plan.pool().copied(),
    ));
    compare(&ckpt::TERMS, &decls, generated, &dynamic).expect("same plan");
    // 2,048 blocks of 16 tokens in each pool; a token of one side is 512 elements.
    let tokens = 2048 * 16;
    for side in [plan.draft.attn.k.blocks, plan.draft.attn.v.blocks] {
        assert_eq!(
            (side.dtype, side.bytes),
            (StateDtype::Bf16, 512 * 2 * tokens)
        );
    }
    assert_eq!(
        (plan.l3.attn.k.blocks.dtype, plan.l3.attn.k.blocks.bytes),
        (StateDtype::Fp8, 512 * tokens)
    );
    // Without the key, every region is the same but the draft sides' (and the offsets the
    // draft pool's growth moves).
    let fp8 = ckpt::StatePlan::new(
        &ckpt::DIMS,
        &Inputs {
            draft_kv_dtype: None,
            ..inputs
        },
        256,
    )
    .expect("plan");
    for ((info, a), b) in ckpt::TERMS.iter().zip(plan.regions()).zip(fp8.regions()) {
        if info.state.starts_with("draft.attn.") {
            assert_eq!((a.units, a.bytes, b.bytes), (b.units, 2 * b.bytes, b.bytes));
        } else {
            assert_eq!(
                (a.units, a.bytes, a.dtype, a.unit_bytes, a.inner),
                (b.units, b.bytes, b.dtype, b.unit_bytes, b.inner),
                "{}",
                info.state
            );
        }
    }
}

/// The error cases compare too: overflow and a bad alignment, named alike.
#[test]
fn errors_agree() {
    use metrale_tests::qwen3_5::{Formats, Inputs, tiny};
    let formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let decls = load("circuits/qwen3_5.toml")
        .instantiate("tiny")
        .expect("tiny");
    let cases = [
        (u64::MAX / 2, 256, "the first state's live slots overflow"),
        (9, 100, "alignment 100"),
    ];
    for (slots, align, why) in cases {
        let inputs = Inputs {
            formats,
            slots,
            verify: None,
            kv: None,
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: PoolPolicy::Arenas,
        };
        let generated = tiny::StatePlan::new(&tiny::DIMS, &inputs, align).map(|_| ());
        let dynamic = DynamicPlan::new(
            &decls,
            &StateInputs {
                formats: &formats.pairs(),
                slots,
                ..StateInputs::EMPTY
            },
            align,
        );
        let generated = generated.map_err(PlanError::from);
        assert_eq!(generated, dynamic.map(|_| ()), "{why}");
        assert!(generated.is_err(), "{why}");
    }
    let overflow = tiny::StatePlan::new(
        &tiny::DIMS,
        &Inputs {
            formats,
            slots: u64::MAX / 2,
            verify: None,
            kv: None,
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: PoolPolicy::Arenas,
        },
        256,
    );
    assert_eq!(
        overflow.map(|_| ()),
        Err(PlanError::Overflow { state: "l0.gdn.h" })
    );
}

/// A module generated against a re-export of the runtime crate is the same plan.
#[test]
fn a_reexported_runtime_path_gives_the_same_plan() {
    use metrale_tests::qwen3_5::qwen3_5_27b as direct;
    use metrale_tests::reexported::qwen3_5::qwen3_5_27b as reexported;
    assert_eq!(direct::TERMS, reexported::TERMS);
    assert_eq!(direct::DIMS.hidden, reexported::DIMS.hidden);
}

/// Every term fits but their sum does not: the generated plan's exact replay names the same
/// term the dynamic layout stops at. One carry-table row is 4 u64 = 32 B; `u64::MAX / 128` =
/// 2^57 - 1 rows make each GDN layer's carry table 2^62 - 32 B.
#[test]
fn a_layout_overflow_names_the_same_term() {
    use metrale_tests::qwen3_5::{Formats, Inputs, tiny};
    let formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let caches = CacheInputs {
        carry: Some(CarryInputs {
            slots: 1,
            table_rows: u64::MAX / 128,
        }),
        ..CacheInputs::EMPTY
    };
    let inputs = Inputs {
        formats,
        slots: 1,
        verify: None,
        kv: None,
        draft_kv: None,
        draft_kv_dtype: None,
        caches,
        pool: PoolPolicy::Arenas,
    };
    let generated = tiny::StatePlan::new(&tiny::DIMS, &inputs, 256).map(|_| ());
    let decls = load("circuits/qwen3_5.toml")
        .instantiate("tiny")
        .expect("tiny");
    let dynamic = DynamicPlan::new(
        &decls,
        &StateInputs {
            formats: &formats.pairs(),
            slots: 1,
            caches,
            ..StateInputs::EMPTY
        },
        256,
    )
    .map(|_| ());
    // Model lifetime first, 256-aligned: the carry tables of layers 0, 1, 2 and 4 (layer 3 is
    // attention) start at 0, 2^62, 2^63, 3 * 2^62; the last ends at 2^64 - 32, so the next term,
    // layer 4's (empty) verify table, cannot be aligned.
    assert_eq!(
        dynamic,
        Err(PlanError::Overflow {
            state: "l4.gdn.wy_table".into()
        })
    );
    assert_eq!(generated.map_err(PlanError::from), dynamic);
}
