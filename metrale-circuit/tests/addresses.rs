//! The address of every unit: `Region::unit`/`at`/`group` and the field groups' accessors
//! (`RecurrentRegions::step`, `KvRegions::block`, `CacheRegions::ring`, ...) on the dynamic plan
//! of Qwen3.5's `tiny` checkpoint, where every kind has a term. Expected offsets are counted
//! by hand from the unit order of docs/circuit-schema.md: unit `i` starts `i x unit bytes`
//! after the region's offset, a grid `[a][b]` being unit `a x B + b`.

use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::inputs::{
    CarryInputs, DraftInputs, HSteps, LookupInputs, RingInputs, TreeInputs,
};
use metrale_circuit::load::Circuit;
use metrale_circuit::{
    CacheInputs, DEFAULT_ALIGN, Holding, KvInputs, KvRegions, RecurrentRegions, Region, Space,
    StateDtype, StateInputs, VerifyInputs,
};

const QWEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/qwen3_5.toml");

/// 3 verify slots with 3, 1 and 3 `h_steps` rows.
const H_STEPS: [u64; 3] = [3, 1, 3];

fn plan() -> DynamicPlan {
    let circuit = Circuit::load(QWEN).unwrap_or_else(|e| panic!("{e}"));
    let decls = circuit.instantiate("tiny").unwrap();
    let formats = [
        ("ssm_h_storage", FormatChoice::Dtype(StateDtype::F32)),
        ("ssm_conv_storage", FormatChoice::Dtype(StateDtype::Bf16)),
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
    ];
    let inputs = StateInputs {
        formats: &formats,
        slots: 3,
        verify: Some(VerifyInputs {
            h_steps: HSteps::PerSlot(&H_STEPS),
            conv_steps: 2,
        }),
        kv: Some(KvInputs::blocks(4, 16)),
        draft_kv: Some(KvInputs::blocks(2, 8)),
        draft_kv_dtype: None,
        caches: CacheInputs {
            prefix_snapshot_slots: 2,
            ring: Some(RingInputs {
                ring_slots: 2,
                seq_slots: 3,
            }),
            carry: Some(CarryInputs {
                slots: 3,
                table_rows: 3,
            }),
            verify_table_rows: 6,
            capture_rows: 5,
            lookup: Some(LookupInputs {
                sequences: 2,
                history_tokens: 14,
            }),
            tree: Some(TreeInputs { slots: 3, nodes: 4 }),
            drafts: Some(DraftInputs {
                slots: 3,
                positions: 4,
            }),
        },
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    DynamicPlan::new(&decls, &inputs, DEFAULT_ALIGN).unwrap()
}

fn region(plan: &DynamicPlan, state: &str, holding: Holding) -> Region {
    plan.term(state, holding)
        .unwrap_or_else(|| panic!("no {state} {holding:?}"))
        .region()
}

#[test]
fn every_dense_unit_is_its_index_times_unit_bytes() {
    let plan = plan();
    for term in plan.terms() {
        let r = term.region();
        if term.state == "head.lookup_index" {
            continue;
        }
        assert!(r.is_dense(), "{} {:?}", term.state, term.holding);
        for i in [0, r.units / 2, r.units.saturating_sub(1)] {
            if r.units == 0 {
                break;
            }
            let u = r.unit(i).unwrap();
            assert_eq!(u.offset, r.offset + i * r.unit_bytes, "{}", term.state);
            assert_eq!((u.bytes, u.units, u.dtype), (r.unit_bytes, 1, r.dtype));
            assert!(u.end() <= r.end());
        }
        assert_eq!(r.unit(r.units), None, "{} past the end", term.state);
    }
}

#[test]
fn recurrent_slots_steps_and_checkpoints() {
    let plan = plan();
    let h = RecurrentRegions {
        live: region(&plan, "l0.gdn.h", Holding::Live),
        steps: region(&plan, "l0.gdn.h", Holding::Steps),
        checkpoint: region(&plan, "l0.gdn.h", Holding::Checkpoint),
    };
    // tiny's h: 4 value heads x 8 x 8 f32 = 256 elements x 4 B = 1,024 B.
    assert_eq!(h.live.unit_bytes, 1_024);
    assert_eq!(h.slot(2).unwrap().offset, h.live.offset + 2 * 1_024);
    assert_eq!(h.slot(3), None);
    assert_eq!(
        h.checkpoint_of(1).unwrap().offset,
        h.checkpoint.offset + 1_024
    );
    // h_steps 3, 1, 3: slot 0 rows 0..3, slot 1 row 3, slot 2 rows 4..7.
    assert_eq!(h.steps.inner, 0);
    assert_eq!(
        h.step(2, 0, &HSteps::PerSlot(&H_STEPS)).unwrap().offset,
        h.steps.offset + 4 * 1_024
    );
    assert_eq!(
        h.step(1, 0, &HSteps::PerSlot(&H_STEPS)).unwrap().offset,
        h.steps.offset + 3 * 1_024
    );
    assert_eq!(h.step(1, 1, &HSteps::PerSlot(&H_STEPS)), None);
    assert_eq!(h.step(3, 0, &HSteps::PerSlot(&H_STEPS)), None);
    // conv: 2 steps per verify slot, `[verify slot][step]`; a window of 3 rows x
    // (2 x 2 x 8 + 4 x 8 = 64) channels bf16 = 384 B.
    let conv = RecurrentRegions {
        live: region(&plan, "l0.gdn.conv", Holding::Live),
        steps: region(&plan, "l0.gdn.conv", Holding::Steps),
        checkpoint: region(&plan, "l0.gdn.conv", Holding::Checkpoint),
    };
    assert_eq!((conv.steps.inner, conv.steps.unit_bytes), (2, 384));
    assert_eq!(
        conv.step(2, 1, &HSteps::PerSlot(&[])).unwrap().offset,
        conv.steps.offset + 5 * 384
    );
    assert_eq!(conv.step(0, 2, &HSteps::PerSlot(&[])), None);
}

#[test]
fn kv_blocks_and_tokens() {
    let plan = plan();
    let k = KvRegions {
        blocks: region(&plan, "l3.attn.k", Holding::Blocks),
    };
    // 4 blocks of 16 tokens; one token is 1 KV head x 16 fp8 = 16 B, a block 256 B.
    assert_eq!(
        (k.block_size(), k.block_count(), k.token_count()),
        (16, 4, 64)
    );
    let b2 = k.block(2).unwrap();
    assert_eq!(
        (b2.offset, b2.bytes, b2.units),
        (k.blocks.offset + 512, 256, 16)
    );
    assert_eq!(k.token(2, 3).unwrap().offset, k.blocks.offset + 35 * 16);
    assert_eq!(k.block(4), None);
    assert_eq!(k.token(0, 16), None);
    // The draft pool: 2 blocks of 8.
    let draft = KvRegions {
        blocks: region(&plan, "draft.attn.k", Holding::Blocks),
    };
    assert_eq!((draft.block_size(), draft.block_count()), (8, 2));
    assert_eq!(KvRegions::EMPTY.block_count(), 0);
}

#[test]
fn cache_grids() {
    use metrale_circuit::CacheRegions;
    let plan = plan();
    let cache = |state: &str| CacheRegions {
        cache: region(&plan, state, Holding::Cache),
    };
    // Ring: `[sequence slot][ring slot]`, 2 ring slots each.
    let ring = cache("l0.gdn.h_ring");
    assert_eq!(ring.cache.inner, 2);
    assert_eq!(
        ring.ring(2, 1).unwrap().offset,
        ring.cache.offset + 5 * 1_024
    );
    assert_eq!(ring.ring(0, 2), None);
    assert_eq!(ring.ring(3, 0), None);
    // Tree mask: `[verify slot][node][node]`, 4 nodes, one u8 per cell.
    let tree = cache("head.tree_mask");
    assert_eq!((tree.cache.inner, tree.cache.unit_bytes), (4, 1));
    assert_eq!(
        tree.tree_cell(2, 1, 3).unwrap().offset,
        tree.cache.offset + (2 * 4 + 1) * 4 + 3
    );
    assert_eq!(tree.tree_cell(0, 4, 0), None);
    assert_eq!(tree.tree_cell(3, 0, 0), None);
    // Drafts: `[verify slot][position]`, 4 positions of 2 f32 = 8 B.
    let drafts = cache("head.draft_tokens");
    assert_eq!(
        drafts.draft(1, 3).unwrap().offset,
        drafts.cache.offset + 7 * 8
    );
    assert_eq!(drafts.draft(1, 4), None);
    // A flat cache: prefix snapshot slot 1 of h.
    let prefix = cache("l0.gdn.h_prefix");
    assert_eq!(prefix.unit(1).unwrap().offset, prefix.cache.offset + 1_024);
    assert_eq!(prefix.unit(2), None);
}

#[test]
fn the_lookup_index_is_addressed_by_sequence_table() {
    use metrale_circuit::CacheRegions;
    let plan = plan();
    let index = CacheRegions {
        cache: region(&plan, "head.lookup_index", Holding::Cache),
    };
    // An entry is 2 u32 = 8 B; 14 entries need 14 x 8 / 7 = 16 buckets, each an entry and a
    // control byte (9 B), plus 16 control bytes: 160 B per sequence, 320 B for 2. Not
    // units x entry (28 x 8 = 224), so the entries have no address of their own.
    assert_eq!((index.cache.bytes, index.cache.unit_bytes), (320, 8));
    assert!(!index.cache.is_dense());
    assert_eq!(index.unit(0), None);
    let t1 = index.lookup_table(1).unwrap();
    assert_eq!(
        (t1.offset, t1.bytes, t1.units),
        (index.cache.offset + 160, 160, 14)
    );
    assert_eq!(index.lookup_table(2), None);
    // A region says which arena it addresses, and so does every address taken from it: the
    // index lives in host memory, a KV side in device memory.
    assert_eq!((index.cache.space, t1.space), (Space::Host, Space::Host));
    // The padding dummy is the last sequence slot, an API item on the inputs and the regions.
    let h = RecurrentRegions {
        live: region(&plan, "l0.gdn.h", Holding::Live),
        ..RecurrentRegions::EMPTY
    };
    let slots = h.live.units;
    assert_eq!(
        StateInputs {
            slots,
            ..StateInputs::EMPTY
        }
        .dummy_slot(),
        Some(slots - 1)
    );
    assert_eq!(h.dummy(), h.slot(slots - 1));
    assert_eq!(RecurrentRegions::EMPTY.dummy(), None);
    assert_eq!(StateInputs::EMPTY.dummy_slot(), None);
    assert_eq!(
        region(&plan, "l3.attn.k", Holding::Blocks)
            .unit(0)
            .map(|u| u.space),
        Some(Space::Device)
    );
}

#[test]
fn addresses_are_checked_on_hand_made_regions() {
    let huge = Region {
        offset: u64::MAX - 1,
        bytes: u64::MAX,
        units: u64::MAX,
        dtype: StateDtype::U8,
        unit_bytes: 1,
        space: Space::Device,
        inner: 2,
    };
    // Past u64 when added to the offset: no panic, no address.
    assert_eq!(huge.unit(5), None);
    assert_eq!(huge.at(u64::MAX, 1), None);
    assert_eq!(Region::EMPTY.unit(0), None);
    assert_eq!(Region::EMPTY.group(0), None);
}

#[test]
fn uniform_h_steps_address_like_the_same_counts_per_slot() {
    use metrale_circuit::inputs::HSteps;
    let uniform = HSteps::Uniform { slots: 3, rows: 4 };
    let per_slot = HSteps::PerSlot(&[4, 4, 4]);
    for slot in 0..4 {
        assert_eq!(uniform.rows_of(slot), per_slot.rows_of(slot));
        assert_eq!(uniform.rows_before(slot), per_slot.rows_before(slot));
    }
    // 3 slots x 4 rows = 12; slot 2 starts at row 8.
    assert_eq!(
        (uniform.total(), uniform.rows_before(2)),
        (Some(12), Some(8))
    );
    assert_eq!(
        HSteps::Uniform {
            slots: u64::MAX,
            rows: 2
        }
        .total(),
        None
    );
}
