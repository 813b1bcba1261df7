//! The dynamic plan against figures worked out by hand (issue: "Figures to check by hand").

use metrale_circuit::dynamic::{
    DynamicPlan,
    decl::{Section, StateDecl, StateFormat, VerifySteps},
};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::{
    Holding, KvInputs, Lifetime, PlanError, Space, StateDtype, StateInputs, StateKind, VerifyInputs,
};

const H_STEPS: [u64; 3] = [3, 1, 3];

fn keyed(key: &str) -> StateFormat {
    StateFormat::Keyed(key.to_owned())
}

/// h: 1000 elements `{h}`; conv: 30 f32; k: 8 `{kv}`.
fn decls() -> Vec<StateDecl> {
    vec![
        StateDecl::new("l0.gdn.h", StateKind::Recurrent, keyed("h"), 1000)
            .with_verify(VerifySteps::HSteps),
        StateDecl::new(
            "l0.gdn.conv",
            StateKind::Recurrent,
            StateFormat::Fixed(StateDtype::F32),
            30,
        )
        .with_verify(VerifySteps::ConvSteps),
        StateDecl::new("l1.attn.k", StateKind::PagedKv, keyed("kv"), 8),
    ]
}

fn inputs() -> StateInputs<'static> {
    StateInputs {
        formats: &[
            ("h", FormatChoice::Dtype(StateDtype::F32)),
            ("kv", FormatChoice::Dtype(StateDtype::Fp8)),
        ],
        slots: 5,
        verify: Some(VerifyInputs {
            h_steps: metrale_circuit::inputs::HSteps::PerSlot(&H_STEPS),
            conv_steps: 4,
        }),
        kv: Some(KvInputs {
            blocks: 10,
            block_size: 16,
            window: None,
        }),
        ..StateInputs::EMPTY
    }
}

fn bytes(plan: &DynamicPlan, state: &str, holding: Holding) -> u64 {
    plan.term(state, holding).map_or(u64::MAX, |t| t.bytes)
}

#[test]
fn the_issue_figures() {
    let plan = DynamicPlan::new(&decls(), &inputs(), 256).expect("plan");
    // h: 1000 x 4 B = 4000 B a unit.
    assert_eq!(bytes(&plan, "l0.gdn.h", Holding::Live), 20_000); // 5 slots
    assert_eq!(bytes(&plan, "l0.gdn.h", Holding::Steps), 28_000); // 3 + 1 + 3
    assert_eq!(bytes(&plan, "l0.gdn.h", Holding::Checkpoint), 12_000); // 3 verify slots
    // conv: 30 x 4 B = 120 B a unit.
    assert_eq!(bytes(&plan, "l0.gdn.conv", Holding::Live), 600);
    assert_eq!(bytes(&plan, "l0.gdn.conv", Holding::Steps), 1_440); // 4 x 3 slots
    assert_eq!(bytes(&plan, "l0.gdn.conv", Holding::Checkpoint), 360);
    // k: 8 x 1 B, 10 x 16 tokens.
    assert_eq!(bytes(&plan, "l1.attn.k", Holding::Blocks), 1_280);
    assert_eq!(plan.term_bytes(Space::Device), 63_680);
    assert_eq!(plan.terms().len(), 7);
    assert_eq!(plan.host_bytes(), 0);
}

#[test]
fn terms_come_in_plan_order_with_their_lifetimes() {
    let plan = DynamicPlan::new(&decls(), &inputs(), 256).expect("plan");
    let order: Vec<(&str, Holding, Lifetime)> = plan
        .terms()
        .iter()
        .map(|t| (t.state.as_str(), t.holding, t.lifetime))
        .collect();
    assert_eq!(
        order,
        [
            ("l0.gdn.h", Holding::Live, Lifetime::Sequence),
            ("l0.gdn.h", Holding::Steps, Lifetime::Verify),
            ("l0.gdn.h", Holding::Checkpoint, Lifetime::Verify),
            ("l0.gdn.conv", Holding::Live, Lifetime::Sequence),
            ("l0.gdn.conv", Holding::Steps, Lifetime::Verify),
            ("l0.gdn.conv", Holding::Checkpoint, Lifetime::Verify),
            ("l1.attn.k", Holding::Blocks, Lifetime::Model),
        ]
    );
    let units: Vec<u64> = plan.terms().iter().map(|t| t.units).collect();
    assert_eq!(units, [5, 7, 3, 5, 12, 3, 160]);
}

#[test]
fn offsets_group_by_lifetime_and_align() {
    let plan = DynamicPlan::new(&decls(), &inputs(), 256).expect("plan");
    let offset = |state: &str, holding| plan.term(state, holding).map_or(u64::MAX, |t| t.offset);
    // model: k [0, 1280); sequence: h live [1280, 21280), conv live [21504, 22104);
    // verify: h steps [22272, 50272), h checkpoint [50432, 62432), conv steps [62464, 63904),
    // conv checkpoint [64000, 64360); the arena rounded up to 64512.
    assert_eq!(offset("l1.attn.k", Holding::Blocks), 0);
    assert_eq!(offset("l0.gdn.h", Holding::Live), 1_280);
    assert_eq!(offset("l0.gdn.conv", Holding::Live), 21_504);
    assert_eq!(offset("l0.gdn.h", Holding::Steps), 22_272);
    assert_eq!(offset("l0.gdn.h", Holding::Checkpoint), 50_432);
    assert_eq!(offset("l0.gdn.conv", Holding::Steps), 62_464);
    assert_eq!(offset("l0.gdn.conv", Holding::Checkpoint), 64_000);
    assert_eq!(plan.device_bytes(), 64_512);
    assert_eq!(plan.lifetime_bytes(Space::Device, Lifetime::Verify), 41_800);
    assert_eq!(
        plan.lifetime_bytes(Space::Device, Lifetime::Sequence),
        20_600
    );
    assert_eq!(plan.lifetime_bytes(Space::Device, Lifetime::Model), 1_280);
    // With align 1 the regions are packed.
    let packed = DynamicPlan::new(&decls(), &inputs(), 1).expect("plan");
    assert_eq!(packed.device_bytes(), 63_680);
}

#[test]
fn regions_never_overlap_and_are_aligned() {
    for align in [1, 64, 256, 4096] {
        let plan = DynamicPlan::new(&decls(), &inputs(), align).expect("plan");
        let mut spans: Vec<(u64, u64)> = plan
            .terms()
            .iter()
            .map(|t| (t.offset, t.offset + t.bytes))
            .collect();
        spans.sort_unstable();
        for pair in spans.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "{pair:?} overlap at align {align}");
        }
        assert!(plan.terms().iter().all(|t| t.offset % align == 0));
        assert_eq!(plan.device_bytes() % align, 0);
        assert!(plan.device_bytes() >= spans.last().map_or(0, |s| s.1));
    }
}

#[test]
fn without_verify_or_kv_inputs_there_are_fewer_terms() {
    let inputs = StateInputs {
        verify: None,
        kv: None,
        ..inputs()
    };
    let plan = DynamicPlan::new(&decls(), &inputs, 256).expect("plan");
    let holdings: Vec<Holding> = plan.terms().iter().map(|t| t.holding).collect();
    assert_eq!(holdings, [Holding::Live, Holding::Live]);
}

#[test]
fn draft_kv_sides_take_draft_kv() {
    // The `draft.` prefix places it in the draft head, whose KV sides take `draft_kv`.
    let draft = StateDecl::new("draft.attn.k", StateKind::PagedKv, keyed("kv"), 8);
    assert_eq!(draft.section(), Section::Draft);
    let plan = DynamicPlan::new(std::slice::from_ref(&draft), &inputs(), 256).expect("plan");
    assert!(plan.terms().is_empty());
    let with_draft = StateInputs {
        draft_kv: Some(KvInputs {
            blocks: 2,
            block_size: 16,
            window: None,
        }),
        ..inputs()
    };
    let plan = DynamicPlan::new(&[draft], &with_draft, 256).expect("plan");
    assert_eq!(plan.terms()[0].bytes, 2 * 16 * 8);
}

#[test]
fn a_missing_format_key_is_an_error_never_a_default() {
    let inputs = StateInputs {
        formats: &[("h", FormatChoice::Dtype(StateDtype::F32))],
        ..inputs()
    };
    assert_eq!(
        DynamicPlan::new(&decls(), &inputs, 256),
        Err(PlanError::MissingFormat {
            state: "l1.attn.k".into(),
            key: "kv".into()
        })
    );
}

#[test]
fn a_recurrent_state_without_verify_under_verify_inputs_is_named() {
    let mut decls = decls();
    decls[1].verify = None;
    assert_eq!(
        DynamicPlan::new(&decls, &inputs(), 256),
        Err(PlanError::MissingVerify {
            state: "l0.gdn.conv".into()
        })
    );
    let no_verify = StateInputs {
        verify: None,
        ..inputs()
    };
    assert!(DynamicPlan::new(&decls, &no_verify, 256).is_ok());
}

#[test]
fn overflow_is_an_error_at_every_step() {
    let huge_slots = StateInputs {
        slots: u64::MAX / 2,
        ..inputs()
    };
    assert_eq!(
        DynamicPlan::new(&decls(), &huge_slots, 256),
        Err(PlanError::Overflow {
            state: "l0.gdn.h".into()
        })
    );
    let mut huge_elements = decls();
    huge_elements[2].elements = u64::MAX;
    huge_elements[2].format = StateFormat::Fixed(StateDtype::F16);
    assert_eq!(
        DynamicPlan::new(&huge_elements, &inputs(), 256),
        Err(PlanError::Overflow {
            state: "l1.attn.k".into()
        })
    );
    // Each term fits, their sum does not: the layout names the term it could not place.
    let half = StateDecl::new(
        "a",
        StateKind::Recurrent,
        StateFormat::Fixed(StateDtype::U8),
        u64::MAX / 2,
    );
    let other = StateDecl {
        id: "b".into(),
        ..half.clone()
    };
    let one_slot = StateInputs {
        slots: 1,
        ..StateInputs::EMPTY
    };
    assert_eq!(
        DynamicPlan::new(&[half.clone(), other.clone(), half], &one_slot, 256),
        Err(PlanError::Overflow { state: "a".into() })
    );
    assert!(DynamicPlan::new(&[other], &one_slot, 256).is_ok());
}

#[test]
fn alignment_must_be_a_power_of_two() {
    for align in [0, 3, 100, 384] {
        assert_eq!(
            DynamicPlan::new(&decls(), &inputs(), align),
            Err(PlanError::BadAlign { align })
        );
    }
}

#[test]
fn error_messages_name_the_state() {
    let e = PlanError::<String>::MissingFormat {
        state: "l1.attn.k".into(),
        key: "kv".into(),
    };
    assert_eq!(
        e.to_string(),
        "state `l1.attn.k` has format `{kv}` but the inputs give no dtype for `kv`"
    );
    let e: PlanError<String> = metrale_circuit::PlanError::Overflow { state: "l0.gdn.h" }.into();
    assert_eq!(
        e,
        PlanError::Overflow {
            state: "l0.gdn.h".into()
        }
    );
}

#[test]
fn states_are_the_field_groups_of_a_generated_plan() {
    use metrale_circuit::dynamic::FieldGroup;
    let plan = DynamicPlan::new(&decls(), &inputs(), 256).expect("plan");
    let states: Vec<_> = plan.states().collect();
    // h and conv hold live, steps and checkpoint terms (0..3, 3..6); k one block term (6).
    let ids: Vec<&str> = states
        .iter()
        .map(metrale_circuit::dynamic::StateRegions::state)
        .collect();
    assert_eq!(ids, ["l0.gdn.h", "l0.gdn.conv", "l1.attn.k"]);
    assert_eq!(
        states.iter().map(|s| s.first_term).collect::<Vec<_>>(),
        [0, 3, 6]
    );
    let h = &states[0];
    assert_eq!(
        (
            h.term(Holding::Live),
            h.term(Holding::Steps),
            h.term(Holding::Checkpoint)
        ),
        (Some(0), Some(1), Some(2))
    );
    let FieldGroup::Recurrent(regions) = h.group() else {
        panic!("a recurrent state's group is RecurrentRegions");
    };
    assert_eq!(regions.live, plan.terms()[0].region());
    assert_eq!(regions.steps, plan.terms()[1].region());
    assert_eq!(regions.checkpoint, plan.terms()[2].region());
    let FieldGroup::Kv(k) = states[2].group() else {
        panic!("a KV side's group is KvRegions");
    };
    assert_eq!(k.blocks, plan.terms()[6].region());
    assert_eq!(states[2].term(Holding::Live), None);
}
