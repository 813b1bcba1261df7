//! The default plan inputs this crate ships (`inputs/default.toml`, what `metrale-codegen plan`
//! sizes a circuit with when no `--inputs` is given) parse to the figures their comments state.
//! The file is read from inside this crate, so the test also builds from the published package.

use metrale_circuit::{
    CacheInputs, CarryInputs, DraftInputs, InputsFile, KvInputs, LookupInputs, RingInputs,
    StateDtype, TreeInputs, VerifyCounts, WindowInputs,
};

#[test]
fn the_shipped_default_parses_to_its_documented_figures() {
    let text = include_str!("../inputs/default.toml");
    let file = InputsFile::parse("metrale-codegen/inputs/default.toml", text).unwrap();
    assert_eq!(file.slots, 9);
    assert_eq!(
        file.formats,
        [
            ("kv_cache_dtype".to_owned(), StateDtype::Fp8),
            ("ssm_h_storage".to_owned(), StateDtype::F32),
            ("ssm_conv_storage".to_owned(), StateDtype::Bf16),
        ]
    );
    assert_eq!(
        file.verify,
        Some(VerifyCounts {
            h_steps: vec![4; 9],
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
