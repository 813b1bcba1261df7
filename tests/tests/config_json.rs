//! A `config.json` read at run time (runtime feature `config`): a fine-tune of Nemotron-H-8B
//! with another SSM state width is planned from its config, by the generated plan of
//! `nemotron_h_8b` (`Circuit::dims_from_config`, `Dims::try_from`, `AnyPlan::new`) and by the
//! dynamic plan of the circuit with the config's checkpoint added (`Circuit::with_config`),
//! and both agree; the errors name the config and what differs.
//!
//! The figures below are read by hand from `circuits/configs/nemotron_h_8b.json` and
//! `circuits/nemotron_h.toml` (`[checkpoint.nemotron_h_8b]`, `[config.dims]`).

use std::path::{Path, PathBuf};

use metrale_circuit::config::ImportOptions;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::Source;
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::serving::registry::DimsError;
use metrale_tests::nemotron_h::{AnyPlan, Checkpoint, Dims, Inputs, nemotron_h_8b};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn circuit() -> Circuit {
    Circuit::load(root().join("circuits/nemotron_h.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The 8B config with `from` replaced by `to` (each must occur once).
fn config(from: &str, to: &str) -> Source {
    let text = std::fs::read_to_string(root().join("circuits/configs/nemotron_h_8b.json"))
        .expect("the 8B config");
    assert_eq!(text.matches(from).count(), 1, "`{from}` once in the config");
    Source::new("finetune/config.json", text.replace(from, to))
}

#[test]
fn a_fine_tune_with_other_dims_is_planned_from_its_config() {
    let circuit = circuit();
    // The published config reads as the checkpoint written in the circuit.
    let same = circuit
        .dims_from_config(
            "nemotron_h_8b",
            &config("\"ssm_state_size\": 128", "\"ssm_state_size\": 128"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Dims::try_from(&same[..]), Ok(nemotron_h_8b::DIMS));

    // The fine-tune: SSM state 64 instead of 128, every other dim the 8B's.
    let source = config("\"ssm_state_size\": 128", "\"ssm_state_size\": 64");
    let dims = circuit
        .dims_from_config("nemotron_h_8b", &source)
        .unwrap_or_else(|e| panic!("{e}"));
    let by_hand = Dims {
        ssm_state: 64,
        ..nemotron_h_8b::DIMS
    };
    assert_eq!(Dims::try_from(&dims[..]), Ok(by_hand));

    let file = InputsFile::load(root().join("metrale-codegen/cli/inputs/default.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let view = file.view();
    let inputs = Inputs::from_state_inputs(&view.inputs()).expect("every format key");
    let checkpoint = Checkpoint::from_name("nemotron_h_8b").expect("the 8B");
    let tuned = AnyPlan::new(checkpoint, &by_hand, &inputs, 256).expect("the fine-tune's plan");
    let published = AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, 256).expect("the 8B's");

    // The dynamic plan of the circuit with the config's checkpoint added agrees.
    let options = ImportOptions {
        name: Some("finetune"),
        hf: Some("someone/Nemotron-H-8B-ssm64"),
    };
    let (with, name) = circuit
        .with_config(&source, "config", options)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(name, "finetune");
    assert_eq!(
        with.checkpoint("finetune")
            .map(metrale_circuit::load::CheckpointSpec::dims),
        Some(&dims[..])
    );
    let decls = with.instantiate("finetune").expect("its states");
    let dynamic = DynamicPlan::new(&decls, &view.inputs(), 256).expect("the dynamic plan");
    assert_eq!(dynamic.device_bytes(), tuned.device_bytes());
    assert_eq!(dynamic.host_bytes(), tuned.host_bytes());

    // A Mamba2 `h` unit is heads x head_dim x state elements: 128 x 64 x 64 f32 (the default
    // inputs' ssm_h_storage) = 2 MiB, half the 8B's 128 x 64 x 128.
    let h = |plan: &AnyPlan| {
        plan.terms()
            .iter()
            .zip(plan.regions().iter())
            .find(|(term, _)| term.state == "l0.mamba2.h")
            .map(|(_, region)| region.unit_bytes)
    };
    assert_eq!(h(&tuned), Some(128 * 64 * 64 * 4));
    assert_eq!(h(&published), Some(128 * 64 * 128 * 4));
}

#[test]
fn a_config_of_another_depth_or_kind_is_refused_for_a_generated_plan() {
    let circuit = circuit();
    // Layer 1 (`-`, an MLP layer) made attention (`*`): the pattern's second character.
    let pattern = "\"hybrid_override_pattern\": \"M-M-M-M*";
    let source = config(pattern, "\"hybrid_override_pattern\": \"M*M-M-M*");
    let error = circuit
        .dims_from_config("nemotron_h_8b", &source)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("describes layer 1 as `attention`, `nemotron_h_8b` has `mlp`"),
        "{error}"
    );
    assert!(error.contains("finetune/config.json"), "{error}");
    // The dynamic plan takes it: it is a checkpoint of its own.
    assert!(
        circuit
            .with_config(&source, "config", ImportOptions::default())
            .is_ok()
    );
    assert!(circuit.dims_from_config("nemotron_h_9b", &source).is_err());
}

#[test]
fn config_errors_are_located_and_the_loader_checks_the_checkpoint() {
    let circuit = circuit();
    // A missing key: located at the object that lacks it, naming the key.
    let source = config(",\n  \"ssm_state_size\": 128", "");
    let error = circuit
        .dims_from_config("nemotron_h_8b", &source)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("missing config key `ssm_state_size`"),
        "{error}"
    );
    assert!(error.contains("finetune/config.json:1:1"), "{error}");
    // A conv kernel of 0: the derived `conv_window = conv_kernel - 1` goes below zero, which
    // the loader refuses for the checkpoint as it would in the file.
    let source = config("\"conv_kernel\": 4", "\"conv_kernel\": 0");
    let error = circuit
        .with_config(&source, "config", ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("does not load in circuit `") && error.contains("conv_window"),
        "{error}"
    );
    // The name of a checkpoint the circuit has.
    let taken = ImportOptions {
        name: Some("tiny"),
        hf: None,
    };
    let error = circuit
        .with_config(
            &config("\"conv_kernel\": 4", "\"conv_kernel\": 4"),
            "config",
            taken,
        )
        .unwrap_err()
        .to_string();
    assert!(error.contains("already has a checkpoint `tiny`"), "{error}");
}

#[test]
fn dims_by_name_take_each_declared_dim_once() {
    let mut named: Vec<(&str, u64)> = vec![
        ("hidden", 4096),
        ("q_heads", 32),
        ("kv_heads", 8),
        ("head_dim", 128),
        ("mamba_heads", 128),
        ("mamba_head_dim", 64),
        ("ssm_state", 128),
        ("n_groups", 8),
        ("conv_kernel", 4),
    ];
    assert_eq!(Dims::try_from(&named[..]), Ok(nemotron_h_8b::DIMS));
    named.push(("hiden", 1));
    assert!(matches!(
        Dims::try_from(&named[..]),
        Err(DimsError::Unknown { dim, .. }) if dim == "hiden"
    ));
    named.truncate(8);
    assert_eq!(
        Dims::try_from(&named[..]),
        Err(DimsError::Missing { dim: "conv_kernel" })
    );
}
