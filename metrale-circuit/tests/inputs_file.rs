//! The inputs file: a full file parses to the exact values, and the checks that need more than
//! the file alone (the circuit's states for the format keys, a real circuit of the zoo, a file
//! on disk). Each error of the file alone is a case of `tests/inputs_cases/`, beside the text
//! it renders (`inputs_cases.rs`). The default inputs the CLI ships are checked in
//! metrale-codegen, beside the file (`metrale-codegen/cli/tests/default_inputs.rs`).

use metrale_circuit::dynamic::decl::{PartDecl, StateDecl, StateFormat};
use metrale_circuit::inputs::{
    CarryInputs, DraftInputs, FormatChoice, LookupInputs, RingInputs, TreeInputs,
};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::{InputsFile, inputs_file::VerifyCounts};
use metrale_circuit::{CacheInputs, KvInputs, StateDtype, StateInputs, StateKind, VerifyInputs};

/// Every key, each count distinct so a swapped field shows, but for the counts that must agree
/// (`slots`, the verify slots and the cache groups' slots: 3; `verify_table_rows`: 3 + 1 + 2).
const FULL: &str = r#"# every key
slots = 3
draft_kv_dtype = "bf16"

[formats]
kv_cache_dtype = "fp8"
ssm_h_storage = "f32"
not_named_by_any_circuit = "u64"

[verify]
h_steps = [3, 1, 2]
conv_steps = 7

[kv]
blocks = 100
block_size = 16

[draft_kv]
blocks = 11
block_size = 8

[caches]
prefix_snapshot_slots = 6
ring = { ring_slots = 2, seq_slots = 3 }
carry = { slots = 3, table_rows = 12 }
verify_table_rows = 6
capture_rows = 14
lookup = { sequences = 15, history_tokens = 16 }
tree = { slots = 3, nodes = 18 }
drafts = { slots = 3, positions = 20 }
"#;

fn parse(text: &str) -> InputsFile {
    InputsFile::parse("in.toml", text).unwrap_or_else(|d| panic!("{d}"))
}

fn parse_err(text: &str) -> Diagnostics {
    match InputsFile::parse("in.toml", text) {
        Ok(file) => panic!("expected errors, parsed {file:?}"),
        Err(diags) => diags,
    }
}

/// `(line, column)` of a located diagnostic.
fn at(d: &Diagnostic) -> (usize, usize) {
    let loc = d
        .location
        .as_ref()
        .unwrap_or_else(|| panic!("no location: {d}"));
    assert_eq!(loc.path, "in.toml");
    (loc.line, loc.column)
}

#[test]
fn a_full_file_parses_to_the_exact_values() {
    let file = InputsFile::parse("full.toml", FULL).unwrap();
    // Every value, field by field (the file also keeps where its tables are).
    let expected = (
        vec![
            (
                "kv_cache_dtype".to_owned(),
                FormatChoice::Dtype(StateDtype::Fp8),
            ),
            ("ssm_h_storage".into(), FormatChoice::Dtype(StateDtype::F32)),
            (
                "not_named_by_any_circuit".into(),
                FormatChoice::Dtype(StateDtype::U64),
            ),
        ],
        3,
        Some(VerifyCounts {
            h_steps: metrale_circuit::load::inputs_file::StepCounts::PerSlot(vec![3, 1, 2]),
            conv_steps: 7,
        }),
        Some(KvInputs {
            blocks: 100,
            block_size: 16,
            window: None,
        }),
        Some(KvInputs {
            blocks: 11,
            block_size: 8,
            window: None,
        }),
        CacheInputs {
            prefix_snapshot_slots: 6,
            ring: Some(RingInputs {
                ring_slots: 2,
                seq_slots: 3,
            }),
            carry: Some(CarryInputs {
                slots: 3,
                table_rows: 12,
            }),
            verify_table_rows: 6,
            capture_rows: 14,
            lookup: Some(LookupInputs {
                sequences: 15,
                history_tokens: 16,
            }),
            tree: Some(TreeInputs {
                slots: 3,
                nodes: 18,
            }),
            drafts: Some(DraftInputs {
                slots: 3,
                positions: 20,
            }),
        },
    );
    assert_eq!(
        (
            file.formats.clone(),
            file.slots,
            file.verify.clone(),
            file.kv,
            file.draft_kv,
            file.caches
        ),
        expected
    );
    assert_eq!(file.draft_kv_dtype, Some(StateDtype::Bf16));
    assert_eq!(
        file.format("ssm_h_storage"),
        Some(FormatChoice::Dtype(StateDtype::F32))
    );
    assert_eq!(file.format("ssm_conv_storage"), None);

    let view = file.view();
    let inputs = view.inputs();
    let formats = [
        ("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8)),
        ("ssm_h_storage", FormatChoice::Dtype(StateDtype::F32)),
        (
            "not_named_by_any_circuit",
            FormatChoice::Dtype(StateDtype::U64),
        ),
    ];
    assert_eq!(
        inputs,
        StateInputs {
            formats: &formats,
            slots: 3,
            verify: Some(VerifyInputs {
                h_steps: metrale_circuit::inputs::HSteps::PerSlot(&[3, 1, 2]),
                conv_steps: 7
            }),
            kv: expected.3,
            draft_kv: expected.4,
            draft_kv_dtype: Some(StateDtype::Bf16),
            caches: expected.5,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        }
    );
    assert_eq!(inputs.verify.map(|v| v.slots()), Some(3));
}

#[test]
fn absent_tables_are_none_and_absent_counts_zero() {
    let file = InputsFile::parse("in.toml", "slots = 2\n[caches]\ncapture_rows = 3\n").unwrap();
    assert_eq!(file.formats, []);
    assert_eq!((file.verify, file.kv, file.draft_kv), (None, None, None));
    assert_eq!(
        file.caches,
        CacheInputs {
            capture_rows: 3,
            ..CacheInputs::EMPTY
        }
    );
    // Tables written as headers or dotted keys are the same tables.
    let dotted = InputsFile::parse(
        "in.toml",
        "slots = 3\n[caches.ring]\nring_slots = 2\nseq_slots = 3\n",
    )
    .unwrap();
    assert_eq!(
        dotted.caches.ring,
        Some(RingInputs {
            ring_slots: 2,
            seq_slots: 3
        })
    );
}

#[test]
fn unknown_dtype_suggests_the_near_one() {
    // `kv_cache_dtype = "bf61"` on line 3: 14 chars of key, ` = `, the string at col 18. The
    // file alone reads it as a layout's name; the states of the key refuse it.
    let file = parse("slots = 9\n[formats]\nkv_cache_dtype = \"bf61\"\n");
    assert_eq!(
        file.format("kv_cache_dtype"),
        Some(FormatChoice::Packing("bf61"))
    );
    let k = StateDecl::new(
        "l0.attn.k",
        StateKind::PagedKv,
        StateFormat::Keyed("kv_cache_dtype".into()),
        8,
    );
    let diags = file.check_formats(std::slice::from_ref(&k)).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags}");
    let d = &diags.0[0];
    assert_eq!(
        d.message,
        "unknown dtype `bf61` for format key `kv_cache_dtype`"
    );
    assert_eq!(at(d), (3, 18));
    assert_eq!(d.location.as_ref().map(|l| l.width), Some(6));
    assert_eq!(
        d.help,
        [
            "valid dtypes: `f32`, `f16`, `bf16`, `fp8`, `fp4`, `u8`, `i32`, `u32`, `u64`",
            "did you mean `bf16`?",
        ]
    );
    // A packing the key's states declare passes; a near miss names it.
    let parts = vec![PartDecl::new("k", StateDtype::Fp8, 8)];
    let k = k.with_packing("fp8_scaled", parts);
    let good = parse("slots = 9\n[formats]\nkv_cache_dtype = \"fp8_scaled\"\n");
    assert_eq!(good.check_formats(std::slice::from_ref(&k)), Ok(()));
    let near = parse("slots = 9\n[formats]\nkv_cache_dtype = \"fp8_scald\"\n");
    let diags = near.check_formats(std::slice::from_ref(&k)).unwrap_err();
    assert_eq!(
        diags.0[0].message,
        "format key `kv_cache_dtype` holds `fp8_scald`, not a dtype or a packing of `l0.attn.k`"
    );
    assert!(
        diags.0[0]
            .help
            .contains(&"did you mean `fp8_scaled`?".to_owned())
    );
    // A key no state names is ignored.
    let v = StateDecl::new(
        "l0.attn.v",
        StateKind::PagedKv,
        StateFormat::Keyed("other".into()),
        8,
    );
    assert_eq!(file.check_formats(&[v]), Ok(()));
}

#[test]
fn a_near_miss_of_a_missing_format_key_is_named_at_it() {
    let k = StateDecl::new(
        "l3.attn.k",
        StateKind::PagedKv,
        StateFormat::Keyed("kv_cache_dtype".into()),
        8,
    );
    let h = StateDecl::new(
        "l0.gdn.h",
        StateKind::Recurrent,
        StateFormat::Keyed("ssm_h_storage".into()),
        8,
    );
    let decls = [h, k];
    // `kv_cache_dtyp` on line 4, col 1: one edit from `kv_cache_dtype`, which no key gives.
    let file = parse("slots = 9\n[formats]\nssm_h_storage = \"f32\"\nkv_cache_dtyp = \"fp8\"\n");
    assert_eq!(
        file.near_miss("kv_cache_dtype", &decls),
        Some("kv_cache_dtyp")
    );
    assert_eq!(file.near_miss("ssm_h_storage", &decls), None);
    let diags = file.check_formats(&decls).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags}");
    let d = &diags.0[0];
    assert_eq!(
        d.message,
        "format key `kv_cache_dtyp` names no state; `kv_cache_dtype` is missing"
    );
    assert_eq!(at(d), (4, 1));
    assert_eq!(d.location.as_ref().map(|l| l.width), Some(13));
    assert_eq!(
        d.notes,
        ["state `l3.attn.k` has format `{kv_cache_dtype}`, which the inputs do not give"]
    );
    assert_eq!(d.help, ["did you mean `kv_cache_dtype`?"]);
    // Once the needed key is given, the stray one is ignored again (it may serve another
    // circuit); a key far from every missing one is ignored too.
    let both = parse(
        "slots = 9\n[formats]\nssm_h_storage = \"f32\"\nkv_cache_dtype = \"fp8\"\nkv_cache_dtyp = \"fp8\"\n",
    );
    assert_eq!(both.check_formats(&decls), Ok(()));
    let far = parse("slots = 9\n[formats]\nssm_h_storage = \"f32\"\nconv_dtype = \"fp8\"\n");
    assert_eq!(far.near_miss("kv_cache_dtype", &decls), None);
    assert_eq!(far.check_formats(&decls), Ok(()));
}

#[test]
fn a_circuit_given_as_an_inputs_file_is_named_so() {
    // A real circuit of the zoo: `missing key `slots`` says what the file looks like, once.
    let path = format!("{}/../circuits/llama.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let all = parse_err(&text);
    let slots = &all.0[0];
    assert_eq!(slots.message, "missing key `slots`");
    assert_eq!(
        slots.help[1],
        "this looks like a circuit (`schema`, `arch`, `description`: a circuit's keys), not an \
         inputs file: give it as the circuit, and an inputs file (`slots`, `[formats]`, `[kv]`; \
         docs/inputs.md) as the inputs"
    );
    let hinted = all
        .iter()
        .filter(|d| d.help.iter().any(|h| h.contains("looks like")));
    assert_eq!(hinted.count(), 1);
}

#[test]
fn load_names_a_missing_file() {
    let err = InputsFile::load("no/such/inputs.toml").unwrap_err();
    let d = &err.0[0];
    assert!(
        d.message
            .starts_with("cannot read inputs file `no/such/inputs.toml`"),
        "{d}"
    );
    assert_eq!(d.file.as_deref(), Some("no/such/inputs.toml"));
}

#[test]
fn kv_window_keys_come_together() {
    let file = InputsFile::parse(
        "w.toml",
        "slots = 1\n[kv]\nblocks = 100\nblock_size = 16\nsequences = 8\nchunk_tokens = 8192\nmax_tokens = 131072\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        file.kv.and_then(|kv| kv.window),
        Some(metrale_circuit::inputs::WindowInputs {
            sequences: 8,
            chunk_tokens: 8192,
            max_tokens: 131_072
        })
    );
    let without = InputsFile::parse("w.toml", "slots = 1\n[kv]\nblocks = 100\nblock_size = 16\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(without.kv.and_then(|kv| kv.window), None);
}

#[test]
fn a_serving_profile_gives_every_count() {
    let file = InputsFile::parse(
        "in.toml",
        "[serving]\nsequences = 3\nverify_rows = 2\nkv = { block_size = 16, tokens_per_sequence = 100 }\nring_depth = 2\n",
    )
    .unwrap();
    // 3 sequences + the dummy; 2 rows in each of the 4 verify slots; ceil(300 / 16) = 19 blocks.
    assert_eq!(file.slots, 4);
    assert_eq!(
        file.verify,
        Some(VerifyCounts {
            h_steps: metrale_circuit::load::inputs_file::StepCounts::Uniform { slots: 4, rows: 2 },
            conv_steps: 2
        })
    );
    assert_eq!(file.kv, Some(KvInputs::blocks(19, 16)));
    assert_eq!(file.draft_kv, None);
    assert_eq!(
        file.caches.ring,
        Some(RingInputs {
            ring_slots: 2,
            seq_slots: 4
        })
    );
    // (S + 1) x K verify-table rows, S + 1 draft slots of K positions.
    assert_eq!(file.caches.verify_table_rows, 8);
    assert_eq!(
        file.caches.drafts,
        Some(DraftInputs {
            slots: 4,
            positions: 2
        })
    );
    assert_eq!(file.view().inputs().verify.map(|v| v.slots()), Some(4));
}

#[test]
fn counts_written_out_beside_a_profile_agree_and_load() {
    // Counts that disagree are the cases of `inputs_cases/serving/`.
    InputsFile::parse(
        "in.toml",
        "slots = 4\n[serving]\nsequences = 3\n[caches]\nverify_table_rows = 0\n",
    )
    .unwrap();
}

#[test]
fn the_counts_of_a_real_server_load() {
    // Counts no server can have are the cases of `inputs_cases/` (`verify/`, `caches/`).
    // The reference engine's shape (issue 19): 129 live slots, 2 verify slots, a carried-state
    // stash per verify slot, tables of a fixed capacity of 128 rows, a ring over 128 sequences.
    let server = "slots = 129\n[verify]\nh_steps = [3, 3]\nconv_steps = 3\n[caches]\n\
                  verify_table_rows = 128\ncarry = { slots = 2, table_rows = 128 }\n\
                  ring = { ring_slots = 8, seq_slots = 128 }\n";
    let file = InputsFile::parse("in.toml", server).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((file.slots, file.caches.verify_table_rows), (129, 128));
    // Without verify inputs, each verify group is bounded by the slots only: as many fit.
    for text in [
        "carry = { slots = 3, table_rows = 1 }",
        "tree = { slots = 3, nodes = 1 }",
        "drafts = { slots = 3, positions = 1 }",
    ] {
        let fits = format!("slots = 3\n[caches]\n{text}\n");
        assert!(InputsFile::parse("in.toml", &fits).is_ok(), "{fits}");
    }
}

#[test]
fn a_serving_profile_with_a_verify_batch_derives_the_reference_engines_counts() {
    // docs/inputs.md's example: 128 sequences, 32 verifying at once, 128-row tables, a ring
    // over the real sequences. By hand: 129 slots, 33 verify slots of 3 rows, carry 33 x 128.
    let text = "[serving]\nsequences = 128\nverify_rows = 3\nverify_batch = 32\n\
                table_rows = 128\nring_dummy = false\nring_depth = 8\ncarry = true\n";
    let file = InputsFile::parse("in.toml", text).unwrap_or_else(|e| panic!("{e}"));
    let view = file.view();
    let inputs = view.inputs();
    assert_eq!(inputs.slots, 129);
    let verify = inputs.verify.unwrap();
    assert_eq!((verify.slots(), verify.h_steps.total()), (33, Some(99)));
    assert_eq!(inputs.caches.verify_table_rows, 128);
    let carry = inputs.caches.carry.unwrap();
    assert_eq!((carry.slots, carry.table_rows), (33, 128));
    assert_eq!(inputs.caches.ring.unwrap().seq_slots, 128);
}

#[test]
fn a_vllm_pool_takes_a_default_servers_figures() {
    use metrale_circuit::serving::{
        PoolPolicy,
        pages::{PoolPages, VllmPool},
    };
    let file = InputsFile::parse(
        "in.toml",
        "slots = 1\n[pool]\npolicy = \"vllm\"\ncontext = 32768\nrequests = 4\ncheckpoint_alignment = 64\n",
    )
    .unwrap();
    // Every figure not written is vLLM 0.33.0's default (docs/inputs.md cites each line).
    let want = VllmPool {
        pages: PoolPages::Requests(4),
        context: 32_768,
        kernel_block: 16,
        batched_tokens: 8192,
        batches_in_flight: 2,
        prefix_caching: true,
        checkpoint_alignment: 64,
        checkpoint_pages: 1,
        speculative_tokens: 0,
    };
    assert_eq!(file.pool, PoolPolicy::Vllm(want));
    assert_eq!(file.view().inputs().pool, PoolPolicy::Vllm(want));
    // Without `[pool]`, or with `policy = "arenas"`, today's arenas.
    assert_eq!(parse("slots = 1\n").pool, PoolPolicy::Arenas);
    let arenas = parse("slots = 1\n[pool]\npolicy = \"arenas\"\n");
    assert_eq!(arenas.pool, PoolPolicy::Arenas);
    // Under `[serving]`, the profile's sequences size the pool.
    let served = parse(
        "[serving]\nsequences = 3\n[pool]\npolicy = \"vllm\"\ncontext = 100\nprefix_caching = false\n",
    );
    let PoolPolicy::Vllm(pool) = served.pool else {
        panic!("a vllm pool");
    };
    assert_eq!(
        (pool.pages, pool.context, pool.prefix_caching),
        (PoolPages::Requests(3), 100, false)
    );
}

#[test]
fn a_pool_without_context_loads_and_says_it_lacks_one() {
    use metrale_circuit::serving::{PoolPolicy, pages::PoolPages};

    // `context` is left to the caller (`fit --for sequences --context`): the file loads, its
    // pool's context 0, and `lacks_context` tells a caller that plans it as it is to refuse.
    let file = parse("slots = 1\n[pool]\npolicy = \"vllm\"\npages = 3\n");
    let PoolPolicy::Vllm(pool) = file.pool else {
        panic!("a vllm pool");
    };
    assert_eq!((pool.pages, pool.context), (PoolPages::Pages(3), 0));
    assert!(file.lacks_context());
    // Under `[serving]` too: the profile's pool is sized for requests of 0 tokens until
    // `ServingProfile::at` gives them a context.
    let served = parse("[serving]\nsequences = 2\n[pool]\npolicy = \"vllm\"\n");
    assert!(served.lacks_context());
    let profile = served.serving().expect("a profile");
    assert_eq!(profile.pool.map(|p| p.context), Some(0));
    assert_eq!(profile.at(2, 4096).pool.map(|p| p.context), Some(4096));
    // A context written, even 0, is the file's own; the arenas need none.
    assert!(
        !parse("slots = 1\n[pool]\npolicy = \"vllm\"\ncontext = 0\npages = 3\n").lacks_context()
    );
    assert!(!parse("slots = 1\n[pool]\npolicy = \"arenas\"\n").lacks_context());
    assert!(!parse("slots = 1\n").lacks_context());
}

#[test]
fn serving_tiers_name_the_verify_slots() {
    // The issue's two-slot server: one sequence and the dummy, `h_steps = [3, 3]`, 128-row
    // tables, a carried-state stash per verify slot.
    let text = "[serving]\nsequences = 1\nverify_rows = 3\nh_steps = [3, 3]\ntable_rows = 128\n\
                carry = true\n";
    let file = InputsFile::parse("in.toml", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.serving().and_then(|p| p.h_steps), Some(&[3, 3][..]));
    assert_eq!(file.slots, 2);
    assert_eq!(
        file.verify,
        Some(VerifyCounts {
            h_steps: metrale_circuit::load::inputs_file::StepCounts::PerSlot(vec![3, 3]),
            conv_steps: 3
        })
    );
    assert_eq!(file.caches.verify_table_rows, 128);
    assert_eq!(
        file.caches.carry,
        Some(CarryInputs {
            slots: 2,
            table_rows: 128
        })
    );
    // The counts written out agree with the tiers.
    let written = format!("slots = 2\n[verify]\nh_steps = [3, 3]\nconv_steps = 3\n{text}");
    assert!(InputsFile::parse("in.toml", &written).is_ok());
}

#[test]
fn the_draft_kv_dtype_is_a_dtype_with_or_without_a_profile() {
    let file = InputsFile::parse("in.toml", "slots = 1\ndraft_kv_dtype = \"bf16\"\n").unwrap();
    assert_eq!(file.draft_kv_dtype, Some(StateDtype::Bf16));
    assert_eq!(file.view().inputs().draft_kv_dtype, Some(StateDtype::Bf16));
    // A profile passes it through: it is not a count.
    let text = "draft_kv_dtype = \"bf16\"\n[serving]\nsequences = 2\n";
    let file = InputsFile::parse("in.toml", text).unwrap_or_else(|e| panic!("{e}"));
    let profile = file.serving().unwrap();
    assert_eq!(profile.draft_kv_dtype, Some(StateDtype::Bf16));
    assert_eq!(
        profile.inputs().unwrap().draft_kv_dtype,
        Some(StateDtype::Bf16)
    );
    assert_eq!(file.view().inputs().draft_kv_dtype, Some(StateDtype::Bf16));
    // Absent: none.
    let file = InputsFile::parse("in.toml", "slots = 1\n").unwrap();
    assert_eq!(file.draft_kv_dtype, None);
}
