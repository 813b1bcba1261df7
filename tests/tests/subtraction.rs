//! Schema 2's subtraction in generated code: a unit function computes `a - b` with the checked
//! `sub`, a difference below zero under run-time dims is `SizeFault::Negative` (and the plan's
//! `PlanError::Negative`), and the dynamic plan agrees with the generated one on the
//! checkpoint's dims. Figures by hand.

use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::units::Unit;
use metrale_circuit::{Holding, PlanError, SizeFault, StateDtype, StateInputs};

mod plans {
    metrale_macros::circuit!(
        inline = r#"
schema = 2
arch = "window"
dims = ["kernel", "channels"]
[layout]
kind = "interval"
period = 1
[layout.blocks]
full_attention = ["conv"]
[[block.conv.state]]
id = "w"
kind = "recurrent"
format = "bf16"
shape = "kernel - 1 x channels*2 - 4"
verify = "conv_steps"
[checkpoint.small]
layers = 2
dims = { kernel = 4, channels = 10 }
"#
    );
}

use plans::window::{Dims, Formats, Inputs, blocks, small};

const FORMATS: Formats = Formats {};

#[test]
fn a_unit_subtracts_left_to_right() {
    // (4 - 1) x (10 * 2 - 4) = 3 x 16 = 48 elements of 2 bytes.
    assert_eq!(
        blocks::conv::w_unit(&small::DIMS, FORMATS),
        Ok(Unit {
            bytes: 96,
            dtype: StateDtype::Bf16,
            elements: Some(48),
        })
    );
    // kernel = 1: the window is empty, not an error.
    let one = Dims {
        kernel: 1,
        ..small::DIMS
    };
    assert_eq!(blocks::conv::w_unit(&one, FORMATS).map(|u| u.bytes), Ok(0));
}

#[test]
fn below_zero_is_an_error_naming_the_state() {
    let zero = Dims {
        kernel: 0,
        ..small::DIMS
    };
    assert_eq!(
        blocks::conv::w_unit(&zero, FORMATS),
        Err(SizeFault::Negative)
    );
    let narrow = Dims {
        channels: 1,
        ..small::DIMS
    };
    assert_eq!(
        blocks::conv::w_unit(&narrow, FORMATS),
        Err(SizeFault::Negative)
    );
    let inputs = Inputs {
        formats: FORMATS,
        slots: 3,
        verify: None,
        kv: None,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    assert_eq!(
        small::StatePlan::new(&zero, &inputs, 256).map(|_| ()),
        Err(PlanError::Negative { state: "l0.conv.w" })
    );
    assert_eq!(
        PlanError::Negative { state: "l0.conv.w" }.to_string(),
        "the shape of state `l0.conv.w` is below zero under these dims"
    );
}

#[test]
fn generated_and_dynamic_plans_agree() {
    let inputs = Inputs {
        formats: FORMATS,
        slots: 3,
        verify: None,
        kv: None,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    let generated = small::StatePlan::new(&small::DIMS, &inputs, 256).expect("plans");
    // Two layers of 3 slots x 96 bytes, each rounded up to 256.
    assert_eq!(generated.l1.conv.w.live.offset, 512);
    assert_eq!(generated.device_bytes(), 512 + 512);
    // The macro's circuit, loaded from this file's text for the dynamic plan.
    let circuit = metrale_tests::inline_circuit(include_str!("subtraction.rs"), "window.toml");
    let decls = circuit
        .instantiate("small")
        .unwrap_or_else(|e| panic!("{e}"));
    let dynamic = DynamicPlan::new(
        &decls,
        &StateInputs {
            slots: 3,
            ..StateInputs::EMPTY
        },
        256,
    )
    .expect("plans");
    assert_eq!(dynamic.terms().len(), 2);
    for (state, region) in [
        ("l0.conv.w", generated.l0.conv.w.live),
        ("l1.conv.w", generated.l1.conv.w.live),
    ] {
        let term = dynamic.term(state, Holding::Live).expect("the live term");
        assert_eq!(
            (term.offset, term.bytes, term.units),
            (region.offset, region.bytes, region.units)
        );
        assert_eq!((term.bytes, term.units), (288, 3));
    }
    assert_eq!(dynamic.device_bytes(), generated.device_bytes());
}
