//! The default plan inputs this crate ships (`inputs/default.toml`, what `metrale-codegen plan`
//! sizes a circuit with when no `--inputs` is given) parse to the figures their comments state.
//! The file is read from inside this crate, so the test also builds from the published package.

use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::inputs::{
    CarryInputs, DraftInputs, LookupInputs, RingInputs, TreeInputs, WindowInputs,
};
use metrale_circuit::load::{InputsFile, inputs_file::VerifyCounts};
use metrale_circuit::{CacheInputs, KvInputs, StateDtype};

#[test]
fn the_shipped_default_parses_to_its_documented_figures() {
    let text = include_str!("../inputs/default.toml");
    let file = InputsFile::parse("metrale-codegen/cli/inputs/default.toml", text).unwrap();
    assert_eq!(file.slots, 9);
    assert_eq!(
        file.formats,
        [
            (
                "kv_cache_dtype".to_owned(),
                FormatChoice::Dtype(StateDtype::Fp8)
            ),
            (
                "ssm_h_storage".to_owned(),
                FormatChoice::Dtype(StateDtype::F32)
            ),
            (
                "ssm_conv_storage".to_owned(),
                FormatChoice::Dtype(StateDtype::Bf16)
            ),
        ]
    );
    assert_eq!(
        file.verify,
        Some(VerifyCounts {
            h_steps: metrale_circuit::load::inputs_file::StepCounts::PerSlot(vec![4; 9]),
            conv_steps: 4
        })
    );
    assert_eq!(
        file.kv,
        Some(KvInputs {
            blocks: 2048,
            block_size: 16,
            window: Some(WindowInputs {
                sequences: 8,
                chunk_tokens: 2048,
                max_tokens: 32768
            })
        })
    );
    assert_eq!(
        file.draft_kv,
        Some(KvInputs {
            blocks: 2048,
            block_size: 16,
            window: Some(WindowInputs {
                sequences: 8,
                chunk_tokens: 2048,
                max_tokens: 32768
            })
        })
    );
    assert_eq!(
        file.caches,
        CacheInputs {
            prefix_snapshot_slots: 16,
            ring: Some(RingInputs {
                ring_slots: 4,
                seq_slots: 9
            }),
            carry: Some(CarryInputs {
                slots: 9,
                table_rows: 9
            }),
            verify_table_rows: 36,
            capture_rows: 4096,
            lookup: Some(LookupInputs {
                sequences: 8,
                history_tokens: 8192
            }),
            tree: Some(TreeInputs {
                slots: 9,
                nodes: 16
            }),
            drafts: Some(DraftInputs {
                slots: 9,
                positions: 4
            }),
        }
    );
}

/// The built-in serving profile (what `fit --for sequences` varies by default).
const SERVING: &str = include_str!("../inputs/serving.toml");

#[test]
fn the_default_server_as_a_profile_derives_the_default_counts() {
    let default =
        InputsFile::parse("default.toml", include_str!("../inputs/default.toml")).unwrap();
    let serving = InputsFile::parse("serving.toml", SERVING).unwrap();
    assert!(serving.serving().is_some());
    assert_eq!(serving.slots, default.slots);
    let (a, b) = (
        serving.verify.clone().unwrap(),
        default.verify.clone().unwrap(),
    );
    assert_eq!(a.conv_steps, b.conv_steps);
    assert_eq!(a.h_steps.slots(), b.h_steps.slots());
    assert!((0..9).all(|s| a.h_steps.rows_of(s) == b.h_steps.rows_of(s)));
    assert_eq!(serving.caches, default.caches);
    // The pools: the same blocks; the window bounds each sequence by its own 4096 tokens.
    let no_window = |kv: Option<KvInputs>| kv.map(|kv| (kv.blocks, kv.block_size));
    assert_eq!(no_window(serving.kv), no_window(default.kv));
    assert_eq!(no_window(serving.draft_kv), no_window(default.draft_kv));
    assert_eq!(
        serving.kv.unwrap().window,
        Some(WindowInputs {
            sequences: 8,
            chunk_tokens: 2048,
            max_tokens: 4096
        })
    );
    // So Qwen3.5-27B (no windowed side) plans the same, byte for byte.
    let circuit = metrale_circuit::load::Circuit::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../circuits/qwen3_5.toml"
    ))
    .unwrap();
    let decls = circuit.instantiate("qwen3_5_27b").unwrap();
    let plan = |file: &InputsFile| {
        metrale_circuit::dynamic::DynamicPlan::new(&decls, &file.view().inputs(), 256).unwrap()
    };
    let (a, b) = (plan(&serving), plan(&default));
    assert_eq!(a.device_bytes(), b.device_bytes());
    assert_eq!(
        a.terms()
            .iter()
            .map(|t| (t.offset, t.bytes))
            .collect::<Vec<_>>(),
        b.terms()
            .iter()
            .map(|t| (t.offset, t.bytes))
            .collect::<Vec<_>>()
    );
}
