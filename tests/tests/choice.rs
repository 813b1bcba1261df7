//! Choosing a checkpoint at run time. For every checkpoint of two circuits (Qwen3.5 and
//! Nemotron-H): `Checkpoint` finds it by name and by Hugging Face id and refuses names it does
//! not have, and its `AnyPlan` answers exactly what the checkpoint's own `DynamicPlan` answers
//! under the same inputs (the plan itself, its regions and terms, the arena sizes, every layer,
//! both fit searches, the errors). And `Inputs` read from the default inputs file
//! (`Formats::from_pairs`, `Inputs::from_state_inputs`) give the plan of the same figures
//! written by hand.
//!
//! The names, ids, counts and variants below are copied by hand from the circuits'
//! `[checkpoint.*]` tables; the term counts are counted by hand from their packings.

use metrale_circuit::inputs::{
    CarryInputs, DraftInputs, FormatChoice, HSteps, LookupInputs, RingInputs, TreeInputs,
    WindowInputs,
};
use metrale_circuit::load::InputsFile;
use metrale_circuit::serving::{KvTokens, ProfileKv};
use metrale_circuit::{
    CacheInputs, KvInputs, Lifetime, MissingFormat, PlanError, Space, StateDtype, StateInputs,
    VerifyInputs,
    serving::{FitError, ServingProfile},
};

/// Every checkpoint of circuit `$arch` (file order), as `module => Variant`: the run-time
/// choice of each equals its own module.
macro_rules! choice_agrees {
    ($arch:ident, [$($ckpt:ident => $variant:ident),* $(,)?]) => {{
        use metrale_tests::$arch::{AnyPlan, Checkpoint, Formats, Inputs};
        let formats = Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        };
        let h_steps = [4, 4, 4, 1];
        // A speculative, prefix-cached serve (every term present), and a bare decode (no
        // verify, no draft KV, no caches: many terms empty).
        let serve = Inputs {
            formats,
            slots: 4,
            verify: Some(VerifyInputs {
                h_steps: HSteps::PerSlot(&h_steps),
                conv_steps: 4,
            }),
            kv: metrale_tests::SERVE_KV,
            draft_kv: Some(KvInputs::blocks(64, 16)),
            draft_kv_dtype: None,
            caches: metrale_tests::SERVE_CACHES,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        };
        let bare = Inputs {
            formats,
            slots: 2,
            verify: None,
            kv: Some(KvInputs::blocks(10, 16)),
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        };
        // The bare decode with its KV and live states in vLLM's page pool: two requests of
        // 4,096 tokens.
        let pooled = Inputs {
            pool: metrale_circuit::serving::PoolPolicy::Vllm(metrale_circuit::serving::pages::VllmPool {
                pages: metrale_circuit::serving::pages::PoolPages::Requests(2),
                ..metrale_circuit::serving::pages::VllmPool::serving(4096)
            }),
            ..bare
        };
        let profile = ServingProfile {
            sequences: 0,
            verify_rows: 4,
            verify_batch: None,
            h_steps: None,
            table_rows: None,
            ring_dummy: true,
            kv: Some(ProfileKv {
                block_size: 16,
                tokens: KvTokens::PerSequence(0),
                chunk_tokens: Some(2048),
            }),
            draft_kv: true,
            draft_kv_dtype: None,
            prefix_snapshots: 2,
            ring_depth: 4,
            carry: true,
            tree_nodes: 16,
            capture_rows: 4096,
            lookup_history: 8192,
            pool: None,
        };
        let mut seen = Vec::new();
        $(
            let checkpoint = Checkpoint::$variant;
            seen.push(checkpoint);
            let name = stringify!($ckpt);
            assert_eq!(checkpoint.name(), name);
            assert_eq!(Checkpoint::from_name(name), Some(checkpoint));
            if let Some(hf) = checkpoint.hf() {
                assert_eq!(Checkpoint::from_hf(hf), Some(checkpoint), "{hf}");
            }
            // A name is not an id, and an id is matched exactly.
            assert_eq!(Checkpoint::from_hf(name), None);
            assert_eq!(Checkpoint::from_name(&name.to_uppercase()), None);
            assert_eq!(Checkpoint::from_name(&format!("{name} ")), None);
            assert_eq!(checkpoint.dims(), &$arch::$ckpt::DIMS);
            assert_eq!(checkpoint.terms(), &$arch::$ckpt::TERMS[..]);
            assert_eq!(checkpoint.term_count(), $arch::$ckpt::TERM_COUNT);
            assert_eq!(checkpoint.layer_count(), $arch::$ckpt::LAYERS);
            assert!(checkpoint.term_count() <= $arch::MAX_TERM_COUNT);
            for inputs in [&serve, &bare, &pooled] {
                for align in [1, 256] {
                    let own = $arch::$ckpt::StatePlan::new(&$arch::$ckpt::DIMS, inputs, align)
                        .expect("the checkpoint's plan");
                    let any = AnyPlan::new(checkpoint, checkpoint.dims(), inputs, align)
                        .expect("the chosen plan");
                    assert_eq!(any, AnyPlan::$variant(own));
                    assert_eq!(any.checkpoint(), checkpoint);
                    assert_eq!(any.terms(), &$arch::$ckpt::TERMS[..]);
                    assert_eq!(any.regions().as_slice(), &own.regions()[..]);
                    assert_eq!(any.regions().len(), any.terms().len());
                    assert_eq!(any.arena(), own.arena());
                    assert_eq!(any.h_steps(), own.h_steps());
                    assert_eq!(any.device_bytes(), own.device_bytes());
                    assert_eq!(any.pool(), own.pool());
                    // The device bytes are the arena's, and under vLLM's policy the page pool's
                    // after it (C1: `AnyPlan` gave the arena's alone).
                    match own.pool() {
                        Some(pool) => {
                            assert!(pool.bytes() > 0 && std::ptr::eq(inputs, &pooled));
                            assert!(pool.end() >= own.arena().device_bytes + pool.bytes());
                            assert_eq!(any.device_bytes(), pool.end());
                        }
                        None => assert_eq!(any.device_bytes(), own.arena().device_bytes),
                    }
                    assert_eq!(any.host_bytes(), own.host_bytes());
                    for space in Space::ALL {
                        assert_eq!(any.term_bytes(space), own.term_bytes(space));
                        for lifetime in Lifetime::ALL {
                            assert_eq!(
                                any.lifetime_bytes(space, lifetime),
                                own.lifetime_bytes(space, lifetime)
                            );
                        }
                    }
                    assert_eq!(any.layer_count(), $arch::$ckpt::LAYERS);
                    // One past the last layer is `None` in both.
                    for i in 0..=$arch::$ckpt::LAYERS {
                        assert_eq!(any.layer(i), own.layer(i), "layer {i}");
                    }
                    // A budget below the plan at 0 blocks, the plan's own bytes, and room to
                    // spare.
                    for budget in [0, own.device_bytes(), 80 << 30] {
                        // The fits run on the checkpoint's table (tests/fit.rs checks them
                        // against the dynamic search): each answer fits, one more does not.
                        let fits = [
                            AnyPlan::fit_kv_blocks(checkpoint, checkpoint.dims(), inputs, align, budget),
                            AnyPlan::fit_sequences(checkpoint, checkpoint.dims(), formats, &profile, 4096, align, budget),
                        ];
                        for fit in fits.into_iter().flatten() {
                            assert!(fit.device_bytes <= budget, "{fit:?} within {budget}");
                            assert!(fit.next_device_bytes.is_none_or(|next| next > budget), "{fit:?}");
                        }
                    }
                }
            }
            // The errors are the checkpoint's too.
            assert_eq!(
                AnyPlan::new(checkpoint, checkpoint.dims(), &bare, 3),
                Err(PlanError::BadAlign { align: 3 })
            );
            let no_kv = Inputs { kv: None, ..bare };
            assert_eq!(
                AnyPlan::fit_kv_blocks(checkpoint, checkpoint.dims(), &no_kv, 256, 1 << 30),
                Err(FitError::NoKvPool)
            );
        )*
        assert_eq!(seen, Checkpoint::ALL, "every checkpoint, in file order");
        assert_eq!(Checkpoint::from_name("no_such_checkpoint"), None);
        assert_eq!(Checkpoint::from_name(""), None);
        assert_eq!(Checkpoint::from_hf(""), None);
    }};
}

#[test]
fn qwen3_5_chooses_every_checkpoint() {
    use metrale_tests::qwen3_5::{self, Checkpoint};
    choice_agrees!(qwen3_5, [
        qwen3_5_27b => Qwen3527b,
        qwen3_5_397b_a17b => Qwen35397bA17b,
        qwen3_5_35b_a3b => Qwen3535bA3b,
        qwen3_5_4b => Qwen354b,
        tiny => Tiny,
    ]);
    assert_eq!(
        Checkpoint::from_hf("Qwen/Qwen3.5-27B"),
        Some(Checkpoint::Qwen3527b)
    );
    assert_eq!(
        Checkpoint::from_hf("Qwen/Qwen3.5-397B-A17B"),
        Some(Checkpoint::Qwen35397bA17b)
    );
    assert_eq!(Checkpoint::Tiny.hf(), None);
    // An id is matched with ASCII case ignored, as the Hub resolves ids; any other spelling is
    // another id.
    assert_eq!(
        Checkpoint::from_hf("qwen/qwen3.5-27b"),
        Some(Checkpoint::Qwen3527b)
    );
    assert_eq!(Checkpoint::from_hf("qwen/qwen3_5-27b"), None);
    // 27B: 48 Gated DeltaNet layers of 13 terms, 16 attention layers of 2, the head's 6 and
    // the draft's attention 2.
    assert_eq!(qwen3_5::MAX_TERM_COUNT, 48 * 13 + 16 * 2 + 6 + 2);
}

#[test]
fn nemotron_h_chooses_every_checkpoint() {
    use metrale_tests::nemotron_h::{self, Checkpoint};
    choice_agrees!(nemotron_h, [
        nemotron_h_8b => NemotronH8b,
        nemotron_h_47b => NemotronH47b,
        nemotron_nano_9b_v2 => NemotronNano9bV2,
        tiny => Tiny,
    ]);
    let ids: Vec<_> = Checkpoint::ALL.iter().map(|c| c.hf()).collect();
    assert_eq!(
        ids,
        [
            Some("nvidia/Nemotron-H-8B-Base-8K"),
            Some("nvidia/Nemotron-H-47B-Base-8K"),
            Some("nvidia/NVIDIA-Nemotron-Nano-9B-v2"),
            None,
        ]
    );
    // 47B: 45 Mamba-2 layers of 10 terms, 5 attention layers of 2, the head's 1.
    assert_eq!(nemotron_h::MAX_TERM_COUNT, 45 * 10 + 5 * 2 + 1);
}

/// The choice works in constants: an engine can pick and plan at compile time too.
#[test]
fn a_chosen_plan_can_be_a_constant() {
    use metrale_tests::qwen3_5::{AnyPlan, Checkpoint, Formats, Inputs, tiny};
    const INPUTS: Inputs<'static> = Inputs {
        formats: Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots: 2,
        verify: None,
        kv: Some(KvInputs::blocks(10, 16)),
        draft_kv: None,
        draft_kv_dtype: None,
        caches: CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    const CHOSEN: Option<Checkpoint> = Checkpoint::from_name("tiny");
    const PLAN: AnyPlan = match CHOSEN {
        Some(checkpoint) => match AnyPlan::new(checkpoint, checkpoint.dims(), &INPUTS, 256) {
            Ok(plan) => plan,
            Err(_) => panic!("the tiny plan"),
        },
        None => panic!("a tiny checkpoint"),
    };
    const DEVICE: u64 = PLAN.device_bytes();
    let own = tiny::StatePlan::new(&tiny::DIMS, &INPUTS, 256).expect("the tiny plan");
    assert_eq!(PLAN, AnyPlan::Tiny(own));
    assert_eq!(DEVICE, own.device_bytes());
    assert_eq!(PLAN.regions().as_slice(), &own.regions()[..]);
}

/// The default inputs file, loaded, gives the same `Inputs` as its figures written by hand.
#[test]
fn inputs_from_the_default_inputs_file() {
    use metrale_tests::qwen3_5::{AnyPlan, Checkpoint, Formats, Inputs, qwen3_5_27b};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../metrale-codegen/cli/inputs/default.toml");
    let file = InputsFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let view = file.view();

    // metrale-codegen/cli/inputs/default.toml, by hand.
    let h_steps = [4; 9];
    let window = Some(WindowInputs {
        sequences: 8,
        chunk_tokens: 2048,
        max_tokens: 32768,
    });
    let by_hand = Inputs {
        formats: Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots: 9,
        verify: Some(VerifyInputs {
            h_steps: HSteps::PerSlot(&h_steps),
            conv_steps: 4,
        }),
        kv: Some(KvInputs {
            blocks: 2048,
            block_size: 16,
            window,
        }),
        draft_kv: Some(KvInputs {
            blocks: 2048,
            block_size: 16,
            window,
        }),
        draft_kv_dtype: None,
        caches: CacheInputs {
            prefix_snapshot_slots: 16,
            ring: Some(RingInputs {
                ring_slots: 4,
                seq_slots: 9,
            }),
            carry: Some(CarryInputs {
                slots: 9,
                table_rows: 9,
            }),
            verify_table_rows: 36,
            capture_rows: 4096,
            lookup: Some(LookupInputs {
                sequences: 8,
                history_tokens: 8192,
            }),
            tree: Some(TreeInputs {
                slots: 9,
                nodes: 16,
            }),
            drafts: Some(DraftInputs {
                slots: 9,
                positions: 4,
            }),
        },
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };

    let formats = Formats::from_pairs(view.inputs().formats).expect("every key");
    assert_eq!(formats, by_hand.formats);
    let inputs = Inputs::with_counts(formats, &view.inputs());
    assert_eq!(inputs, by_hand);
    assert_eq!(Inputs::from_state_inputs(&view.inputs()), Ok(by_hand));

    let from_file = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256).expect("plan");
    let from_hand = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &by_hand, 256).expect("plan");
    assert_eq!(from_file, from_hand);
    // Chosen by id, as an engine reading the model's name does.
    let checkpoint = Checkpoint::from_hf("Qwen/Qwen3.5-27B").expect("a checkpoint");
    let any = AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, 256).expect("plan");
    assert_eq!(any, AnyPlan::Qwen3527b(from_hand));
    // The dynamic plan of the same file agrees on the arena.
    let decls = metrale_circuit::load::Circuit::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/qwen3_5.toml"),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .instantiate("qwen3_5_27b")
    .expect("decls");
    let dynamic =
        metrale_circuit::dynamic::DynamicPlan::new(&decls, &view.inputs(), 256).expect("plan");
    assert_eq!(dynamic.device_bytes(), any.device_bytes());
    assert_eq!(dynamic.host_bytes(), any.host_bytes());
}

/// `from_pairs` needs every key the circuit names, reads the first pair of each, and ignores
/// keys the circuit does not name.
#[test]
fn formats_from_pairs_names_the_missing_key() {
    use metrale_tests::qwen3_5::{Formats, Inputs};
    let all = [
        ("unrelated_key", FormatChoice::Dtype(StateDtype::U8)),
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
        ("ssm_h_storage", FormatChoice::Dtype(StateDtype::F32)),
        ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Bf16)),
    ];
    assert_eq!(
        Formats::from_pairs(&all),
        Ok(Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        })
    );
    // The first missing key in field order: `ssm_h_storage`, then `ssm_conv_storage`.
    assert_eq!(
        Formats::from_pairs(&[("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8))]),
        Err(MissingFormat {
            key: "ssm_h_storage",
            expected: "a dtype",
            refused: false,
        })
    );
    let error = Formats::from_pairs(&all[..3]).expect_err("no ssm_conv_storage");
    assert_eq!(error.key, "ssm_conv_storage");
    assert_eq!(
        error.to_string(),
        "the formats give nothing for format key `ssm_conv_storage`: expected a dtype (in an \
         inputs file: `ssm_conv_storage = \"<dtype>\"` under `[formats]`)"
    );
    let counts = StateInputs {
        formats: &all[1..4],
        slots: 3,
        ..StateInputs::EMPTY
    };
    let inputs = Inputs::from_state_inputs(&counts).expect("every key");
    assert_eq!(inputs.slots, 3);
    assert_eq!(
        inputs.formats,
        Formats::from_pairs(&all).expect("every key")
    );
    assert_eq!(
        Inputs::from_state_inputs(&StateInputs::EMPTY),
        Err(MissingFormat {
            key: "ssm_h_storage",
            expected: "a dtype",
            refused: false,
        })
    );
    // A layout where the key's states declare none is refused, naming what is valid.
    let layout = [
        ("ssm_h_storage", FormatChoice::Packing("fp8_ds_mla")),
        ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
    ];
    let refused = Formats::from_pairs(&layout).expect_err("no packings");
    assert_eq!(
        refused,
        MissingFormat {
            key: "ssm_h_storage",
            expected: "a dtype",
            refused: true,
        }
    );
    assert_eq!(
        refused.to_string(),
        "format key `ssm_h_storage` holds a packing its states do not declare: expected a dtype"
    );
    // A `?` in an engine's `main` turns it into its error.
    let boxed: Box<dyn std::error::Error> = error.into();
    assert!(boxed.to_string().contains("`ssm_conv_storage`"));
}

/// The README's example ("A typed plan in your crate"), compiled: an engine that reads the
/// model's name and an inputs file at start, with one code path for every checkpoint.
fn engine(
    model: &str,
    inputs_file: &std::path::Path,
) -> Result<(u64, usize), Box<dyn std::error::Error>> {
    use metrale_tests::qwen3_5::{AnyPlan, Checkpoint, Inputs};

    let file = InputsFile::load(inputs_file)?;
    let view = file.view();
    let inputs = Inputs::from_state_inputs(&view.inputs())?;
    let checkpoint = Checkpoint::from_name(model)
        .or_else(|| Checkpoint::from_hf(model))
        .ok_or("no such checkpoint")?;
    let plan = AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, 256)?;
    let device = plan.device_bytes();
    let mut placed = 0;
    for (term, region) in plan.terms().iter().zip(plan.regions().iter()) {
        let arena = match term.space {
            Space::Device => device,
            Space::Host => plan.host_bytes(),
        };
        assert!(region.end() <= arena, "{} lies in its arena", term.state);
        placed += 1;
    }
    Ok((device, placed))
}

#[test]
fn the_readme_engine_runs_every_checkpoint() {
    use metrale_tests::qwen3_5::{Checkpoint, qwen3_5_27b};
    let default = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../metrale-codegen/cli/inputs/default.toml");
    for checkpoint in Checkpoint::ALL {
        let (_, placed) = engine(checkpoint.name(), &default).expect("planned");
        assert_eq!(placed, checkpoint.term_count());
    }
    // By id, the same plan as by name.
    assert_eq!(
        engine("Qwen/Qwen3.5-27B", &default).expect("planned"),
        engine("qwen3_5_27b", &default).expect("planned")
    );
    assert_eq!(
        engine("qwen3_5_27b", &default).expect("planned").1,
        qwen3_5_27b::TERM_COUNT
    );
    let unknown = engine("Qwen/Qwen3.5-28B", &default).expect_err("no such checkpoint");
    assert_eq!(unknown.to_string(), "no such checkpoint");
    // A file without a format key the circuit names is refused, naming the key.
    let text = std::fs::read_to_string(&default).expect("readable");
    let without = std::env::temp_dir().join(format!("metrale-choice-{}.toml", std::process::id()));
    std::fs::write(&without, text.replace("kv_cache_dtype = \"fp8\"", "")).expect("written");
    let missing = engine("tiny", &without).expect_err("no kv_cache_dtype");
    let _ = std::fs::remove_file(&without);
    assert!(
        missing.to_string().contains("`kv_cache_dtype`"),
        "{missing}"
    );
}

/// An engine serving several circuits resolves a model once, across all of them: by name, by
/// Hugging Face id with the Hub's case-insensitivity, `<arch>:<name>` for one circuit, and an
/// ambiguity (`tiny` is in both) reported instead of the first match.
#[test]
fn a_registry_resolves_across_circuits_and_reports_ambiguity() {
    use metrale_circuit::serving::registry::{Registry, RegistryError};
    use metrale_tests::{deepseek_v3, qwen3_5};
    let registry = Registry {
        circuits: &[qwen3_5::ENTRY, deepseek_v3::ENTRY],
    };
    let resolved = registry.resolve("qwen/QWEN3.5-27b").unwrap();
    assert_eq!((resolved.arch, resolved.name), ("qwen3_5", "qwen3_5_27b"));
    assert_eq!(
        qwen3_5::Checkpoint::ALL[resolved.checkpoint],
        qwen3_5::Checkpoint::Qwen3527b
    );
    assert_eq!(
        qwen3_5::Checkpoint::from_hf("QWEN/qwen3.5-27B"),
        Some(qwen3_5::Checkpoint::Qwen3527b)
    );
    let Err(RegistryError::Ambiguous { matches, .. }) = registry.resolve("tiny") else {
        panic!("tiny is in both circuits");
    };
    assert_eq!(matches, ["qwen3_5:tiny", "deepseek_v3:tiny"]);
    let tiny = registry.resolve("deepseek_v3:tiny").unwrap();
    assert_eq!(
        deepseek_v3::Checkpoint::ALL[tiny.checkpoint],
        deepseek_v3::Checkpoint::Tiny
    );
}

/// `AnyPlan::fit_profile_for_rank` is the chosen checkpoint's own: sequences per rank at run time.
#[test]
fn any_plan_fits_a_profile_on_a_rank() {
    use metrale_circuit::parallel::{Parallel, Rank};
    use metrale_circuit::serving::ProfileFree;
    use metrale_tests::qwen3_5::{AnyPlan, Checkpoint, Formats, tiny};
    let file = InputsFile::parse(
        "serving.toml",
        include_str!("../../metrale-codegen/cli/inputs/serving.toml"),
    )
    .unwrap();
    let profile = file.serving().unwrap();
    let formats = Formats::from_pairs(file.view().inputs().formats).unwrap();
    let parallel = Parallel {
        tp: 2,
        pp: 1,
        pp_layers: None,
    };
    let free = ProfileFree::Sequences { context: 64 };
    let rank = Rank { tp: 1, pp: 0 };
    let budget = 8 << 20;
    let any = AnyPlan::fit_profile_for_rank(
        Checkpoint::Tiny,
        &tiny::DIMS,
        formats,
        &profile,
        free,
        256,
        budget,
        &parallel,
        rank,
    );
    // The dynamic search on the rank's states and on the whole model's answers the same.
    let circuit = metrale_circuit::load::Circuit::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/qwen3_5.toml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let pairs = formats.pairs();
    let held = circuit
        .instantiate_rank("tiny", &parallel, rank)
        .expect("the rank's states");
    let own = metrale_circuit::dynamic::fit_profile(&held, &pairs, &profile, free, 256, budget);
    let any = any.expect("a fit on the rank");
    assert_eq!(own, Ok(any));
    assert!(any.value > 0);
    let whole = circuit.instantiate("tiny").expect("tiny's states");
    assert_eq!(
        AnyPlan::fit_profile(
            Checkpoint::Tiny,
            &tiny::DIMS,
            formats,
            &profile,
            free,
            256,
            budget
        )
        .expect("a fit"),
        metrale_circuit::dynamic::fit_profile(&whole, &pairs, &profile, free, 256, budget)
            .expect("a fit")
    );
}

/// A plan keeps the verify rows it was made with, so a step's address needs only (slot, row):
/// the generated plan (`StatePlan::step`, `h_steps`) and the dynamic one (`StateRegions::step`)
/// alike, the rows of `h_steps` slot-major, by hand.
#[test]
fn a_plan_keeps_its_verify_rows() {
    use metrale_circuit::dynamic::DynamicPlan;
    use metrale_circuit::load::Circuit;
    use metrale_tests::qwen3_5::{Formats, Inputs, tiny};

    let rows = [4, 2, 2, 1];
    let formats = Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let inputs = Inputs {
        formats,
        slots: 4,
        verify: Some(VerifyInputs {
            h_steps: HSteps::PerSlot(&rows),
            conv_steps: 4,
        }),
        kv: Some(KvInputs::blocks(10, 16)),
        draft_kv: None,
        draft_kv_dtype: None,
        caches: CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    let plan = tiny::StatePlan::new(&tiny::DIMS, &inputs, 256).expect("the tiny plan");
    assert_eq!(plan.h_steps(), HSteps::PerSlot(&rows));
    let h = plan.l0.gdn.h;
    // Slot 2's rows come after slot 0's 4 and slot 1's 2: its row 1 is the steps' unit 7.
    let row = plan.step(&h, 2, 1).expect("slot 2, row 1");
    assert_eq!(row.offset, h.steps.offset + 7 * h.steps.unit_bytes);
    assert_eq!(row.bytes, h.steps.unit_bytes);
    assert_eq!(plan.step(&h, 2, 2), None, "slot 2 has 2 rows");
    assert_eq!(plan.step(&h, 4, 0), None, "4 verify slots");
    // A conv state's steps are a [slot][step] grid of `conv_steps`.
    let conv = plan.l0.gdn.conv;
    let last = plan.step(&conv, 3, 3).expect("slot 3, step 3");
    assert_eq!(
        last.offset,
        conv.steps.offset + (3 * 4 + 3) * conv.steps.unit_bytes
    );
    assert_eq!(plan.step(&conv, 3, 4), None);
    // Without verify inputs, no slot has a row.
    let bare = Inputs {
        verify: None,
        ..inputs
    };
    let bare = tiny::StatePlan::new(&tiny::DIMS, &bare, 256).expect("the bare plan");
    assert_eq!(bare.h_steps(), HSteps::NONE);
    assert_eq!(bare.step(&bare.l0.gdn.h, 0, 0), None);

    // The dynamic plan of the same inputs answers the same.
    let circuit = Circuit::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/qwen3_5.toml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let decls = circuit.instantiate("tiny").expect("tiny's states");
    let pairs = formats.pairs();
    let counts = metrale_circuit::StateInputs {
        formats: &pairs,
        ..inputs.state_inputs()
    };
    let dynamic = DynamicPlan::new(&decls, &counts, 256).expect("the dynamic plan");
    assert_eq!(dynamic.h_steps(), HSteps::PerSlot(&rows));
    let state = dynamic.state("l0.gdn.h").expect("l0.gdn.h");
    assert_eq!(state.step(2, 1), Some(row));
    assert_eq!(
        dynamic.state("l0.gdn.conv").and_then(|s| s.step(3, 3)),
        Some(last)
    );
    assert_eq!(dynamic.state("l3.attn.k").and_then(|s| s.step(0, 0)), None);
}
