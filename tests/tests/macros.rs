//! The `metrale_macros::circuit!` front end: its module is the `build.rs` module (same terms,
//! same regions, same plan under the same inputs), every circuit compiles through it
//! warning-free (trybuild pass cases `ui/pass/macro_*.rs`), and what the compiler shows
//! through it (trybuild compile-fail cases `ui/fail/*.rs`, their `.stderr` blessed on the
//! rustc named in the guard below with `TRYBUILD=overwrite cargo test -p metrale-tests --test
//! macros`): one located loader error in an inline circuit with no error of the code using
//! the fallback module (`unknown_kind`), malformed TOML (`malformed_toml`), a missing file and
//! an include cycle found from the calling file (`missing_file`, `include_cycle`), and user
//! code misusing a valid circuit's module (`formats_missing_key`, `unknown_state_field`).
//!
//! Every loader message is asserted in the core's case files (`metrale-circuit/tests/cases`,
//! run by its `cases.rs`) and `metrale-codegen`'s `expansion` tests; the macro's argument
//! parsing in `metrale-macros`' unit tests.

use metrale_circuit::{CacheInputs, KvInputs, StateDtype, VerifyInputs};

/// The macro's modules; `metrale_tests` holds the `build.rs` ones.
mod from_macro {
    metrale_macros::circuit!("../../circuits/nemotron_h.toml");
    metrale_macros::circuit!("../../circuits/qwen3_5.toml");
}

/// Inputs of the circuit module at `$($m)::+`, with verify, both KV caches and caches. Every
/// circuit in `circuits/` names the same three format keys, so one literal serves them all.
macro_rules! inputs {
    ($($m:ident)::+, $h_steps:expr) => {
        $($m)::+::Inputs {
            formats: $($m)::+::Formats {
                ssm_h_storage: StateDtype::F32,
                ssm_conv_storage: StateDtype::Bf16,
                kv_cache_dtype: StateDtype::Fp8,
            },
            slots: 9,
            verify: Some(VerifyInputs {
                h_steps: metrale_circuit::inputs::HSteps::PerSlot($h_steps),
                conv_steps: 4,
            }),
            kv: Some(KvInputs {
                blocks: 2048,
                block_size: 16,
                window: None,
            }),
            draft_kv: Some(KvInputs {
                blocks: 64,
                block_size: 16,
                window: None,
            }),
            draft_kv_dtype: Some(StateDtype::Bf16),
            caches: CacheInputs {
                prefix_snapshot_slots: 5,
                verify_table_rows: 7,
                capture_rows: 3,
                ..CacheInputs::EMPTY
            },
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        }
    };
}

/// Asserts that checkpoint `$ckpt` of circuit `$arch` has the same terms, dims and plan in
/// both modules.
macro_rules! same_checkpoint {
    ($arch:ident, $ckpt:ident) => {{
        use from_macro::$arch::$ckpt as by_macro;
        use metrale_tests::$arch::$ckpt as by_build;
        assert_eq!(by_macro::TERMS, by_build::TERMS);
        assert_eq!(
            format!("{:?}", by_macro::DIMS),
            format!("{:?}", by_build::DIMS)
        );
        let h_steps = [4, 4, 1];
        for align in [1, 256] {
            let a = by_macro::StatePlan::new(
                &by_macro::DIMS,
                &inputs!(from_macro::$arch, &h_steps),
                align,
            )
            .expect("the macro's plan");
            let b = by_build::StatePlan::new(
                &by_build::DIMS,
                &inputs!(metrale_tests::$arch, &h_steps),
                align,
            )
            .expect("the build.rs plan");
            assert_eq!(a.regions(), b.regions());
            assert_eq!(a.device_bytes(), b.device_bytes());
            assert_eq!(a.host_bytes(), b.host_bytes());
            // Every field, by the same names: the two modules' types print alike.
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }};
}

#[test]
fn macro_module_is_the_build_rs_module() {
    same_checkpoint!(nemotron_h, nemotron_h_8b);
    same_checkpoint!(nemotron_h, tiny);
    same_checkpoint!(qwen3_5, qwen3_5_27b);
    same_checkpoint!(qwen3_5, tiny);
}

#[test]
fn every_circuit_has_a_macro_pass_case() {
    let pass = include_str!("../ui/pass/macro_circuits.rs");
    for circuit in metrale_tests::CIRCUITS {
        let call = format!("metrale_macros::circuit!(\"../../../{circuit}\");");
        assert!(
            pass.contains(&call),
            "add `{call}` to tests/ui/pass/macro_circuits.rs"
        );
    }
}

#[test]
fn pass_cases_compile_warning_free() {
    trybuild::TestCases::new().pass("ui/pass/macro_*.rs");
}

#[test]
#[rustversion::attr(not(stable(1.95)), ignore)]
fn compile_fail_cases_show_the_circuit_error() {
    trybuild::TestCases::new().compile_fail("ui/fail/*.rs");
}
