//! KV shared across layers (`shares`, schema 3), on the suites' circuit
//! (`tests/ui/circuits/shared_kv.toml`): a reader's field in the generated plan holds its
//! owner's regions (an address, not a copy) and it has no unit, term or row; the dynamic plan
//! declares it with its owner (`StateDecl::shares`), sizes no term for it and gives its owner's
//! regions (`owner_of`, `term`, `states`); a pipeline rank holding a reader but not its owner is
//! `PlanError::MissingOwner` in both plans and their fits; under vLLM's page pool a reader
//! takes no page. Figures by hand; the drawn inputs are tests/tests/differential.rs's.

use metrale_circuit::dynamic::{
    DynamicPlan, FieldGroup,
    decl::{StateDecl, StateFormat},
    fit_kv_blocks,
};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::inputs::WindowInputs;
use metrale_circuit::load::Circuit;
use metrale_circuit::parallel::{Parallel, Rank};
use metrale_circuit::serving::{
    PoolPolicy,
    pages::{PoolPages, VllmPool},
};
use metrale_circuit::{
    Holding, KvInputs, PlanError, Region, StateDtype, StateInputs, parallel::RankError,
    serving::FitError,
};
use metrale_tests::shared_kv::{AnyPlan, Checkpoint, Formats, Inputs, blocks, small, tiny};

/// 1,000 blocks of 16 tokens; 2 sequences, chunks of 64 tokens, a 4,096-token context.
const KV: KvInputs = KvInputs {
    blocks: 1_000,
    block_size: 16,
    window: Some(WindowInputs {
        sequences: 2,
        chunk_tokens: 64,
        max_tokens: 4_096,
    }),
};

const FORMATS: Formats = Formats {
    kv_cache_dtype: StateDtype::Bf16,
};

fn inputs(pool: PoolPolicy) -> Inputs<'static> {
    Inputs {
        formats: FORMATS,
        slots: 3,
        verify: None,
        kv: Some(KV),
        draft_kv: Some(KvInputs::blocks(10, 16)),
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool,
    }
}

fn state_inputs(pool: PoolPolicy) -> StateInputs<'static> {
    const PAIRS: [(&str, FormatChoice); 1] =
        [("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Bf16))];
    StateInputs {
        formats: &PAIRS,
        ..inputs(pool).state_inputs()
    }
}

fn circuit() -> Circuit {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Circuit::load(root.join(metrale_tests::SHARED_KV)).unwrap_or_else(|e| panic!("{e}"))
}

/// vLLM's pool of 64 pages for requests of 4,096 tokens.
fn vllm() -> PoolPolicy {
    PoolPolicy::Vllm(VllmPool {
        pages: PoolPages::Pages(64),
        context: 4_096,
        kernel_block: 16,
        batched_tokens: 64,
        batches_in_flight: 1,
        prefix_caching: false,
        checkpoint_alignment: 16,
        checkpoint_pages: 0,
        speculative_tokens: 0,
    })
}

#[test]
fn a_reader_holds_its_owners_regions() {
    let plan =
        small::StatePlan::new(&small::DIMS, &inputs(PoolPolicy::Arenas), 256).expect("a plan");
    // `small` is S S F S F R R C: the readers of layers 5 and 6 read layer 3 (the last sliding
    // layer before them) and layer 4 (the last full one); layer 7's `cross.k` reads layer
    // `first_cross - 1` = 2.
    for reader in [plan.l5, plan.l6] {
        assert_eq!(reader.swa_reader.k, plan.l3.swa.k);
        assert_eq!(reader.swa_reader.v, plan.l3.swa.v);
        assert_eq!(reader.attn_reader.k, plan.l4.attn.k);
        assert_eq!(reader.attn_reader.v, plan.l4.attn.v);
    }
    assert_eq!(plan.l7.cross.k, plan.l2.attn.k);
    // A sliding side of 2 x 64 bf16 = 256 B a token: ceil(min(511 + 64, 4096) / 16) + 1 = 37
    // blocks a sequence, 74 for 2; a full side the whole pool.
    assert_eq!(plan.l5.swa_reader.k.blocks.units, 74 * 16);
    assert_eq!(plan.l5.swa_reader.k.blocks.bytes, 74 * 16 * 256);
    assert_eq!(plan.l7.cross.k.blocks.units, 1_000 * 16);
    assert_ne!(plan.l7.cross.k.blocks.offset, plan.l4.attn.k.blocks.offset);
    // Readers have no term: 1 (prologue) + 3 sliding x 2 + 2 full x 2 + 3 (`cross.h`) + 2 (draft).
    assert_eq!(small::TERM_COUNT, 16);
    assert!(
        small::TERMS
            .iter()
            .all(|t| !t.state.contains("reader") && t.state != "l7.cross.k")
    );
    assert_eq!(metrale_tests::shared_kv::SwaReaderBlock::TERM_COUNT, 0);
    assert_eq!(metrale_tests::shared_kv::CrossBlock::TERM_COUNT, 3);
    assert_eq!(
        small::SHARES,
        [
            ("l5.swa_reader.k", "l3.swa.k", 5, 3),
            ("l5.swa_reader.v", "l3.swa.v", 5, 3),
            ("l5.attn_reader.k", "l4.attn.k", 5, 4),
            ("l5.attn_reader.v", "l4.attn.v", 5, 4),
            ("l6.swa_reader.k", "l3.swa.k", 6, 3),
            ("l6.swa_reader.v", "l3.swa.v", 6, 3),
            ("l6.attn_reader.k", "l4.attn.k", 6, 4),
            ("l6.attn_reader.v", "l4.attn.v", 6, 4),
            ("l7.cross.k", "l2.attn.k", 7, 2),
        ]
    );
    // `tiny` is F S R C, `first_cross` 1: everything reads layers 0 and 1.
    assert_eq!(
        tiny::SHARES.map(|(reader, owner, ..)| (reader, owner)),
        [
            ("l2.swa_reader.k", "l1.swa.k"),
            ("l2.swa_reader.v", "l1.swa.v"),
            ("l2.attn_reader.k", "l0.attn.k"),
            ("l2.attn_reader.v", "l0.attn.v"),
            ("l3.cross.k", "l0.attn.k"),
        ]
    );
    // The owner's unit, with no unit function of its own.
    assert_eq!(
        blocks::swa::k_unit(&small::DIMS, FORMATS).map(|u| u.bytes),
        Ok(256)
    );
}

#[test]
fn the_dynamic_plan_gives_a_reader_its_owners_regions() {
    let decls = circuit().instantiate("small").expect("small");
    let reader = decls
        .iter()
        .find(|d| d.id == "l5.swa_reader.k")
        .expect("declared");
    // Declared with its owner's id, units, format and window.
    assert_eq!(reader.shares.as_deref(), Some("l3.swa.k"));
    assert_eq!(
        (reader.elements, &reader.format, reader.reach),
        (
            128,
            &StateFormat::Keyed("kv_cache_dtype".into()),
            Some(metrale_circuit::dynamic::decl::Reach::Window(512))
        )
    );
    let cross = decls
        .iter()
        .find(|d| d.id == "l7.cross.k")
        .expect("declared");
    assert_eq!(cross.shares.as_deref(), Some("l2.attn.k"));
    let dynamic = DynamicPlan::new(&decls, &state_inputs(PoolPolicy::Arenas), 256).expect("a plan");
    assert_eq!(dynamic.owner_of("l6.attn_reader.v"), Some("l4.attn.v"));
    assert_eq!(dynamic.owner_of("l4.attn.v"), None);
    assert_eq!(dynamic.shared().count(), 9);
    assert!(dynamic.terms().iter().all(|t| !t.state.contains("reader")));
    // `term` and `states` give the owner's regions, at the reader's place in plan order.
    let owner = dynamic.term("l3.swa.k", Holding::Blocks).expect("a term");
    assert_eq!(
        dynamic.term("l5.swa_reader.k", Holding::Blocks),
        Some(owner)
    );
    let states: Vec<&str> = dynamic.states().map(|s| s.state()).collect();
    let at = |id: &str| states.iter().position(|s| *s == id).expect("listed");
    assert!(
        at("l4.attn.v") < at("l5.swa_reader.k") && at("l5.attn_reader.v") < at("l6.swa_reader.k")
    );
    let regions = dynamic.state("l5.swa_reader.k").expect("regions");
    assert_eq!(regions.owner(), Some("l3.swa.k"));
    let FieldGroup::Kv(kv) = regions.group() else {
        panic!("a KV side's group");
    };
    assert_eq!(kv.blocks, owner.region());
    assert_eq!(dynamic.state("l3.swa.k").and_then(|s| s.owner()), None);
    // The generated plan is the same plan.
    let plan =
        small::StatePlan::new(&small::DIMS, &inputs(PoolPolicy::Arenas), 256).expect("a plan");
    assert_eq!(plan.l5.swa_reader.k.blocks, owner.region());
    assert_eq!(dynamic.device_bytes(), plan.device_bytes());
}

#[test]
fn a_rank_without_the_owner_has_no_plan() {
    let circuit = circuit();
    let inputs = inputs(PoolPolicy::Arenas);
    let state = state_inputs(PoolPolicy::Arenas);
    // Layers 4..8 on rank 1: its readers of layer 5 read layer 3, which rank 0 holds.
    let split = [4, 4];
    let parallel = Parallel {
        tp: 2,
        pp: 2,
        pp_layers: Some(&split),
    };
    let rank = Rank { tp: 1, pp: 1 };
    let missing = PlanError::MissingOwner {
        state: "l5.swa_reader.k",
        owner: "l3.swa.k",
    };
    assert_eq!(
        small::StatePlan::for_rank(&small::DIMS, &inputs, 256, &parallel, rank),
        Err(RankError::Plan(missing))
    );
    let held = circuit
        .instantiate_rank("small", &parallel, rank)
        .expect("states");
    assert_eq!(
        DynamicPlan::new(&held, &state, 256),
        Err(PlanError::from(missing))
    );
    // Before any other fault: a bad alignment too is the missing owner.
    assert_eq!(
        DynamicPlan::new(&held, &state, 3),
        Err(PlanError::from(missing))
    );
    // The fits of the rank, both plans: the missing owner, before the missing pool.
    assert_eq!(
        AnyPlan::fit_kv_blocks_for_rank(
            Checkpoint::Small,
            &small::DIMS,
            &inputs,
            256,
            1 << 30,
            &parallel,
            rank
        ),
        Err(RankError::Plan(FitError::Plan(missing)))
    );
    let without_kv = StateInputs { kv: None, ..state };
    assert_eq!(
        fit_kv_blocks(&held, &without_kv, 256, 1 << 30),
        Err(FitError::Plan(PlanError::from(missing)))
    );
    assert_eq!(
        missing.to_string(),
        "KV side `l5.swa_reader.k` reads the KV of `l3.swa.k`, which the plan does not hold (a \
         pipeline rank must hold the layer a shared KV is kept in)"
    );
    // Layers 3..8 on rank 1: `cross.k` reads layer 2.
    let split = [3, 5];
    let parallel = Parallel {
        pp_layers: Some(&split),
        ..parallel
    };
    assert_eq!(
        small::StatePlan::for_rank(&small::DIMS, &inputs, 256, &parallel, rank),
        Err(RankError::Plan(PlanError::MissingOwner {
            state: "l7.cross.k",
            owner: "l2.attn.k"
        }))
    );
    // Layers 2..8 on rank 1 hold every owner; rank 0 holds no reader.
    let split = [2, 6];
    let parallel = Parallel {
        pp_layers: Some(&split),
        ..parallel
    };
    let plan =
        small::StatePlan::for_rank(&small::DIMS, &inputs, 256, &parallel, rank).expect("a plan");
    assert_eq!(plan.l6.attn_reader.k, plan.l4.attn.k);
    assert_eq!(plan.l7.cross.k, plan.l2.attn.k);
    let first =
        small::StatePlan::for_rank(&small::DIMS, &inputs, 256, &parallel, Rank { tp: 0, pp: 0 })
            .expect("a plan");
    // A reader the rank does not hold is empty, like every term it does not hold.
    assert_eq!(first.l6.attn_reader.k.blocks, Region::EMPTY);
    assert_ne!(first.l0.swa.k.blocks, Region::EMPTY);
    let held = circuit
        .instantiate_rank("small", &parallel, rank)
        .expect("states");
    let dynamic = DynamicPlan::new(&held, &state, 256).expect("a plan");
    assert_eq!(dynamic.device_bytes(), plan.device_bytes());
    assert_eq!(
        dynamic
            .term("l6.attn_reader.k", Holding::Blocks)
            .map(metrale_circuit::dynamic::StateTerm::region),
        Some(plan.l6.attn_reader.k.blocks)
    );
}

#[test]
fn a_reader_takes_no_page_of_the_pool() {
    let decls = circuit().instantiate("small").expect("small");
    let dynamic = DynamicPlan::new(&decls, &state_inputs(vllm()), 256).expect("a plan");
    let pool = dynamic.pool().expect("a pool");
    assert!(
        pool.members
            .iter()
            .flat_map(|m| &m.states)
            .all(|s| !s.contains("reader") && s != "l7.cross.k")
    );
    // The same pool as the plan of the owners alone: 5 attention layers, `cross.h` and the
    // draft head's attention.
    let owners: Vec<StateDecl> = decls
        .iter()
        .filter(|d| d.shares.is_none())
        .cloned()
        .collect();
    let alone = DynamicPlan::new(&owners, &state_inputs(vllm()), 256).expect("a plan");
    assert_eq!(alone.pool(), Some(pool));
    assert_eq!(pool.members.len(), 7);
    let plan = small::StatePlan::new(&small::DIMS, &inputs(vllm()), 256).expect("a plan");
    assert_eq!(plan.pool().copied(), Some(pool.plan));
    assert_eq!(plan.l6.swa_reader.v, plan.l3.swa.v);
}

/// Gemma 3n E4B in the zoo, by hand: 35 layers, the last 15 shared (`Gemma3nTextConfig`'s
/// `num_kv_shared_layers`), so 20 keep KV (16 local, 4 global: layers 4, 9, 14, 19), and every
/// shared local layer reads layer 18's local pair and each shared global layer (24, 29, 34)
/// layer 19's global pair (transformers' `kv_sharing_roles`, vLLM's
/// `first_kv_shared_layer_idx - 2` and `- 1`). A token of one layer is
/// 2 sides x 2 KV heads x 256 x 2 B (bf16) = 2,048 B, so with a pool of one block of one token
/// the main model keeps 20 x 2,048 = 40,960 B a token (35 layers without the sharing would keep
/// 71,680).
#[test]
fn gemma_3n_e4b_keeps_the_kv_of_twenty_layers() {
    use metrale_tests::gemma3n::{Formats, Inputs, Layer, gemma_3n_e4b as e4b};
    let one_token = KvInputs {
        blocks: 1,
        block_size: 1,
        window: Some(WindowInputs {
            sequences: 1,
            chunk_tokens: 1,
            max_tokens: 1,
        }),
    };
    let inputs = Inputs {
        formats: Formats {
            kv_cache_dtype: StateDtype::Bf16,
        },
        slots: 1,
        verify: None,
        kv: Some(one_token),
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: PoolPolicy::Arenas,
    };
    let plan = e4b::StatePlan::new(&e4b::DIMS, &inputs, 1).expect("a plan");
    let kv: u64 = e4b::TERMS
        .iter()
        .zip(plan.regions())
        .filter(|(t, _)| t.kind == metrale_circuit::StateKind::PagedKv)
        .map(|(_, r)| r.bytes)
        .sum();
    assert_eq!(kv, 20 * 2 * 2 * 256 * 2);
    assert_eq!(kv, 40_960);
    assert_eq!(e4b::TERM_COUNT, 40);
    // Each shared layer reads the one pair of its own type: 15 layers, 2 sides each.
    assert_eq!(e4b::SHARES.len(), 15 * 2);
    let (mut local, mut global) = (0, 0);
    for (i, layer) in plan.layers().iter().enumerate() {
        match layer {
            Layer::SharedSliding(l) => {
                local += 1;
                assert!(i >= 20 && i % 5 != 4, "layer {i}");
                assert_eq!(
                    (l.swa_reader.k, l.swa_reader.v),
                    (plan.l18.swa.k, plan.l18.swa.v)
                );
            }
            Layer::SharedFull(l) => {
                global += 1;
                assert!(i >= 20 && i % 5 == 4, "layer {i}");
                assert_eq!(
                    (l.attn_reader.k, l.attn_reader.v),
                    (plan.l19.attn.k, plan.l19.attn.v)
                );
            }
            Layer::Full(_) => assert!(i < 20 && i % 5 == 4, "layer {i}"),
            Layer::Sliding(_) => assert!(i < 20 && i % 5 != 4, "layer {i}"),
        }
    }
    // vLLM's layers 24, 29 and 34 read layer 19's KV, the other twelve layer 18's.
    assert_eq!((local, global), (12, 3));
}
