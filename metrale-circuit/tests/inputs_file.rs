//! The inputs file: a full file parses to the exact values, and each class of error is
//! reported with its message and its `line:col` (counted by hand in the comments). The default
//! inputs the CLI ships are checked in metrale-codegen, beside the file
//! (`metrale-codegen/cli/tests/default_inputs.rs`).

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

/// The only error of `text`.
fn only_err(text: &str) -> Diagnostic {
    let diags = parse_err(text);
    assert_eq!(diags.len(), 1, "{diags}");
    diags.0.into_iter().next().unwrap()
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
fn unknown_key_suggests_the_near_one() {
    // `slot` is at 1:1; the missing `slots` is not reported again: the typo points at it.
    let d = only_err("slot = 9\n");
    assert_eq!(d.message, "unknown key `slot` in the inputs file");
    assert_eq!(at(&d), (1, 1));
    assert_eq!(
        d.help,
        [
            "valid keys: `slots`, `formats`, `verify`, `kv`, `draft_kv`, `draft_kv_dtype`, `caches`, `serving`, `parallel`, `pool`",
            "did you mean `slots`?",
        ]
    );
    assert!(d.render().contains(" --> in.toml:1:1\n"), "{d}");

    // In a nested group: line 3 `ring = { ring_slot = 4, seq_slots = 9 }`, the key at col 10.
    let d = only_err("slots = 9\n[caches]\nring = { ring_slot = 4, seq_slots = 9 }\n");
    assert_eq!(d.message, "unknown key `ring_slot` in `caches.ring`");
    assert_eq!(at(&d), (3, 10));
    assert_eq!(d.help[1], "did you mean `ring_slots`?");
}

#[test]
fn wrong_type_is_located_at_the_value() {
    // `slots = "9"`: the string starts at col 9.
    let d = only_err("slots = \"9\"\n");
    assert_eq!(d.message, "`slots` must be an integer, found a string");
    assert_eq!(at(&d), (1, 9));
    // `kv = 3` on line 2: the value at col 6.
    let d = only_err("slots = 1\nkv = 3\n");
    assert_eq!(d.message, "`kv` must be a table, found an integer");
    assert_eq!(at(&d), (2, 6));
    // `h_steps = 4` on line 3: the value at col 11.
    let d = only_err("slots = 1\n[verify]\nh_steps = 4\nconv_steps = 1\n");
    assert_eq!(
        d.message,
        "`verify.h_steps` must be an array, found an integer"
    );
    assert_eq!(at(&d), (3, 11));
    // `ssm_h_storage = 32` on line 3: the value at col 17.
    let d = only_err("slots = 1\n[formats]\nssm_h_storage = 32\n");
    assert_eq!(
        d.message,
        "`formats.ssm_h_storage` must be a string, found an integer"
    );
    assert_eq!(at(&d), (3, 17));
}

#[test]
fn negative_and_fractional_counts_are_refused() {
    // `blocks = -4` on line 3: the value at col 10.
    let d = only_err("slots = 9\n[kv]\nblocks = -4\nblock_size = 16\n");
    assert_eq!(d.message, "`kv.blocks` must not be negative");
    assert_eq!(d.label, "out of range");
    assert_eq!(at(&d), (3, 10));
    // `h_steps = [4, 4.5]` on line 3: `4.5` at col 15 (11 chars of `h_steps = [`, then `4, `).
    let d = only_err("slots = 9\n[verify]\nh_steps = [4, 4.5]\nconv_steps = 4\n");
    assert_eq!(
        d.message,
        "`verify.h_steps[1]` must be an integer, found a float"
    );
    assert_eq!(d.label, "expected an integer");
    assert_eq!(at(&d), (3, 15));
    // Too large for u64: line 1, col 9.
    let d = only_err("slots = 18446744073709551616\n");
    assert_eq!(
        d.message,
        "`slots` is too large (at most 18446744073709551615)"
    );
    assert_eq!(at(&d), (1, 9));
}

#[test]
fn unknown_dtype_suggests_the_near_one() {
    // `kv_cache_dtype = "bf61"` on line 3: 14 chars of key, ` = `, the string at col 18. The
    // file alone reads it as a layout's name; the states of the key refuse it.
    let file = parse("slots = 9\n[formats]\nkv_cache_dtype = \"bf61\"\n");
    assert_eq!(
        file.format("kv_cache_dtype"),
        Some(FormatChoice::Layout("bf61"))
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
    // A layout the key's states declare passes; a near miss names it.
    let parts = vec![PartDecl::new("k", StateDtype::Fp8, 8)];
    let k = k.with_layout("fp8_scaled", parts);
    let good = parse("slots = 9\n[formats]\nkv_cache_dtype = \"fp8_scaled\"\n");
    assert_eq!(good.check_formats(std::slice::from_ref(&k)), Ok(()));
    let near = parse("slots = 9\n[formats]\nkv_cache_dtype = \"fp8_scald\"\n");
    let diags = near.check_formats(std::slice::from_ref(&k)).unwrap_err();
    assert_eq!(
        diags.0[0].message,
        "format key `kv_cache_dtype` holds `fp8_scald`, not a dtype or a layout of `l0.attn.k`"
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
    // A value that is neither a dtype nor a name is refused by the file alone.
    let d = only_err("slots = 9\n[formats]\nkv_cache_dtype = \"bf-16\"\n");
    assert_eq!(
        d.message,
        "unknown dtype `bf-16` for format key `kv_cache_dtype`"
    );
    // A key no circuit could name: line 3, col 1.
    let d = only_err("slots = 9\n[formats]\nKV = \"fp8\"\n");
    assert_eq!(
        d.message,
        "format key `KV` is not a lower snake-case identifier"
    );
    assert_eq!(at(&d), (3, 1));
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
fn missing_keys_are_named() {
    // `ring = { seq_slots = 9 }` on line 3: pointed at the key `ring`, col 1.
    let d = only_err("slots = 9\n[caches]\nring = { seq_slots = 9 }\n");
    assert_eq!(d.message, "missing key `ring_slots` in `caches.ring`");
    assert_eq!(at(&d), (3, 1));
    assert_eq!(
        d.help,
        ["`caches.ring` takes every one of: `ring_slots`, `seq_slots`"]
    );
    // `[kv]` without `block_size`: pointed at `kv` in the header, line 2 col 2.
    let d = only_err("slots = 9\n[kv]\nblocks = 4\n");
    assert_eq!(d.message, "missing key `block_size` in `kv`");
    assert_eq!(at(&d), (2, 2));
    // `[verify]` without `conv_steps`: line 2 col 2.
    let d = only_err("slots = 9\n[verify]\nh_steps = []\n");
    assert_eq!(d.message, "missing key `conv_steps` in `verify`");
    assert_eq!(at(&d), (2, 2));
    // No `slots`: pointed at the start of the file, 1:1, like the loader's missing keys.
    let d = only_err("[kv]\nblocks = 1\nblock_size = 1\n");
    assert_eq!(d.message, "missing key `slots`");
    assert_eq!(d.label, "the inputs file starts here");
    assert_eq!(at(&d), (1, 1));
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
    // A table of the circuit is named as one.
    let d = parse_err("[layout]\nkind = \"interval\"\n");
    assert!(
        d.0[0].help[1].starts_with("this looks like a circuit (`[layout]`: "),
        "{d}"
    );
    // An inputs file with an unknown key, or one key of each kind, gets no such help.
    for text in [
        "[kv]\nblocks = 1\nblock_size = 1\nsize = 2\n",
        "schema = 2\nkv = 1\n",
    ] {
        let d = parse_err(text);
        assert!(!d.to_string().contains("looks like"), "{d}");
    }
}

#[test]
fn malformed_toml_is_located() {
    // `[kv` never closes: the parser points at the end of line 2, col 4.
    let d = only_err("slots = 9\n[kv\nblocks = 1\n");
    assert!(d.message.starts_with("invalid TOML: "), "{d}");
    assert_eq!(at(&d), (2, 4));
    // Several syntax errors come in file order.
    let diags = parse_err("slots = \n= 3\nx = [1,\n");
    let lines: Vec<usize> = diags.iter().map(|d| at(d).0).collect();
    assert!(lines.len() >= 2 && lines.is_sorted(), "{diags}");
}

#[test]
fn every_error_is_reported_in_file_order() {
    let text = "\
slots = -1
[kv]
blocks = 1
blcok_size = 2
[caches]
capture_rows = 1.5
lookup = { sequences = 1 }
";
    let diags = parse_err(text);
    let found: Vec<(&str, (usize, usize))> =
        diags.iter().map(|d| (d.message.as_str(), at(d))).collect();
    assert_eq!(
        found,
        [
            ("`slots` must not be negative", (1, 9)),
            ("unknown key `blcok_size` in `kv`", (4, 1)),
            (
                "`caches.capture_rows` must be an integer, found a float",
                (6, 16)
            ),
            ("missing key `history_tokens` in `caches.lookup`", (7, 1)),
        ]
    );
    assert!(
        diags
            .render()
            .ends_with("error: aborting due to 4 previous errors")
    );
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
    // Line 2 is `[kv]`: each missing window key is reported there.
    let err = InputsFile::parse(
        "w.toml",
        "slots = 1\n[kv]\nblocks = 100\nblock_size = 16\nsequences = 8\n",
    )
    .expect_err("two window keys missing");
    assert_eq!(err.0.len(), 2);
    assert_eq!(err.0[0].message, "missing key `chunk_tokens` in `kv`");
    assert_eq!(err.0[1].message, "missing key `max_tokens` in `kv`");
    let loc = err.0[0].location.as_ref().expect("located");
    assert_eq!((loc.line, loc.column), (2, 2));
    assert!(err.0[0].help[0].contains("the window keys come together"));
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
fn counts_that_disagree_with_the_profile_are_refused() {
    // `[verify]` on line 4 (its header at column 1); the profile gives 2 rows in 4 slots.
    let d = only_err(
        "[serving]\nsequences = 3\nverify_rows = 2\n[verify]\nh_steps = [2, 2, 2, 3]\nconv_steps = 2\n",
    );
    assert_eq!(
        d.message,
        "`[verify]` disagrees with `[serving]`, which gives 4 verify slots of 2 rows, `conv_steps = 2`"
    );
    assert_eq!(at(&d), (4, 2));
    // A pool the profile does not have.
    let d = only_err("[serving]\nsequences = 3\n[kv]\nblocks = 1\nblock_size = 1\n");
    assert_eq!(
        d.message,
        "`[kv]` disagrees with `[serving]`, which gives no pool"
    );
    // A cache count, at its key in `[caches]` (line 4).
    let d = only_err("[serving]\nsequences = 3\n[caches]\nprefix_snapshot_slots = 5\n");
    assert_eq!(
        d.message,
        "`caches.prefix_snapshot_slots` disagrees with `[serving]`, which gives 0"
    );
    assert_eq!(at(&d), (4, 1));
    // The same counts written out agree, and load.
    InputsFile::parse(
        "in.toml",
        "slots = 4\n[serving]\nsequences = 3\n[caches]\nverify_table_rows = 0\n",
    )
    .unwrap();
}

#[test]
fn serving_needs_its_sequences_and_one_pool_size() {
    let d = only_err("[serving]\nverify_rows = 2\n");
    assert_eq!(d.message, "missing key `sequences` in `serving`");
    let d = only_err(
        "[serving]\nsequences = 1\nkv = { block_size = 16, tokens_per_sequence = 8, blocks = 2 }\n",
    );
    assert_eq!(
        d.message,
        "`serving.kv` needs exactly one of `tokens_per_sequence` and `blocks`"
    );
    let d = only_err("[serving]\nsequences = 1\ncarry = 1\n");
    assert_eq!(
        d.message,
        "`serving.carry` must be a boolean, found an integer"
    );
    // Counts past u64: at the count that alone makes them, `sequences`.
    let d = only_err("[serving]\nsequences = 18446744073709551615\nring_depth = 4\n");
    assert_eq!(d.message, "the serving profile's counts overflow u64");
    assert_eq!(
        d.location.as_ref().map(|l| (l.line, l.column)),
        Some((2, 13)),
        "{d}"
    );
}

#[test]
fn only_counts_no_server_can_have_are_refused() {
    // The reference engine's shape (issue 19): 129 live slots, 2 verify slots, a carried-state
    // stash per verify slot, tables of a fixed capacity of 128 rows, a ring over 128 sequences.
    let server = "slots = 129\n[verify]\nh_steps = [3, 3]\nconv_steps = 3\n[caches]\n\
                  verify_table_rows = 128\ncarry = { slots = 2, table_rows = 128 }\n\
                  ring = { ring_slots = 8, seq_slots = 128 }\n";
    let file = InputsFile::parse("in.toml", server).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((file.slots, file.caches.verify_table_rows), (129, 128));
    // More verify slots than slots: `h_steps`'s value at line 3, column 11.
    let d = only_err("slots = 2\n[verify]\nh_steps = [4, 4, 4]\nconv_steps = 4\n");
    assert_eq!(
        d.message,
        "`verify.h_steps` has 3 entries, more than `slots = 2`"
    );
    assert_eq!(at(&d), (3, 11));
    // A ring over more sequences than slots: the `ring` key, line 3, column 1.
    let d = only_err("slots = 9\n[caches]\nring = { ring_slots = 4, seq_slots = 10 }\n");
    assert_eq!(
        d.message,
        "`caches.ring.seq_slots = 10`, more than `slots = 9`"
    );
    assert_eq!(at(&d), (3, 1));
    // A stash of another count than the verify slots: the `carry` key, line 6.
    let d = only_err(
        "slots = 3\n[verify]\nh_steps = [4, 4]\nconv_steps = 4\n[caches]\n\
         carry = { slots = 3, table_rows = 1 }\n",
    );
    assert_eq!(
        d.message,
        "`caches.carry.slots = 3`, but `verify.h_steps` names 2 verify slots"
    );
    assert_eq!(at(&d), (6, 1));
    // Without verify inputs, each verify group is bounded by the slots only.
    for (group, text) in [
        ("carry.slots = 3", "carry = { slots = 3, table_rows = 1 }"),
        ("tree.slots = 3", "tree = { slots = 3, nodes = 1 }"),
        ("drafts.slots = 3", "drafts = { slots = 3, positions = 1 }"),
    ] {
        let d = only_err(&format!("slots = 1\n[caches]\n{text}\n"));
        assert_eq!(
            d.message,
            format!("`caches.{group}`, more than `slots = 1`")
        );
        let fits = format!("slots = 3\n[caches]\n{text}\n");
        assert!(InputsFile::parse("in.toml", &fits).is_ok(), "{fits}");
    }
}

#[test]
fn a_block_of_zero_tokens_is_refused() {
    // `block_size = 0` on line 4, the value at column 14.
    let d = only_err("slots = 1\n[kv]\nblocks = 8\nblock_size = 0\n");
    assert_eq!(d.message, "`kv.block_size` must be at least 1");
    assert_eq!(at(&d), (4, 14));
    let d = only_err("[serving]\nsequences = 1\nkv = { block_size = 0, blocks = 4 }\n");
    assert_eq!(d.message, "`serving.kv.block_size` must be at least 1");
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
    // A key of the wrong type is located.
    let d = only_err("[serving]\nsequences = 2\nring_dummy = 1\n");
    assert_eq!(at(&d), (3, 14));
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
fn a_pool_that_cannot_be_is_refused_where_it_is_written() {
    // An unknown policy, at its value (line 3, col 10), with the valid ones.
    let d = only_err("slots = 1\n[pool]\npolicy = \"sglang\"\n");
    assert_eq!(d.message, "unknown pool policy `sglang`");
    assert_eq!(at(&d), (3, 10));
    // A figure of the vLLM pool under the arenas is not silently ignored.
    let d = only_err("slots = 1\n[pool]\npolicy = \"arenas\"\ncontext = 9\n");
    assert_eq!(d.message, "`pool.context` is a figure of the vLLM pool");
    assert_eq!(at(&d), (4, 1));
    // Both sizes, no size, a 0-token kernel block, a size beside `[serving]`.
    let d =
        only_err("slots = 1\n[pool]\npolicy = \"vllm\"\ncontext = 9\npages = 3\nrequests = 1\n");
    assert_eq!(d.message, "`pool.pages` and `pool.requests` both given");
    assert_eq!(at(&d), (5, 1));
    let d = only_err("slots = 1\n[pool]\npolicy = \"vllm\"\ncontext = 9\n");
    assert_eq!(d.message, "missing key `pages` or `requests` in `pool`");
    assert_eq!(at(&d), (2, 2));
    let d = only_err(
        "slots = 1\n[pool]\npolicy = \"vllm\"\ncontext = 9\npages = 3\nkernel_block = 0\n",
    );
    assert_eq!(d.message, "`pool.kernel_block` is 0 tokens");
    assert_eq!(at(&d), (6, 16));
    let d =
        only_err("[serving]\nsequences = 1\n[pool]\npolicy = \"vllm\"\ncontext = 9\npages = 3\n");
    assert_eq!(d.message, "`pool.pages` with a `[serving]` profile");
    assert_eq!(at(&d), (6, 1));
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
    // The counts written out agree with the tiers; other rows are refused at `[verify]`.
    let written = format!("slots = 2\n[verify]\nh_steps = [3, 3]\nconv_steps = 3\n{text}");
    assert!(InputsFile::parse("in.toml", &written).is_ok());
    let d = only_err(&format!(
        "slots = 2\n[verify]\nh_steps = [3, 2]\nconv_steps = 3\n{text}"
    ));
    assert_eq!(
        d.message,
        "`[verify]` disagrees with `[serving]`, which gives `h_steps = [3, 3]`, `conv_steps = 3`"
    );
    assert_eq!(at(&d), (2, 2));
}

#[test]
fn serving_tiers_are_refused_where_they_name_nothing() {
    // Beside a verify batch: at the `h_steps` key, line 5.
    let d =
        only_err("[serving]\nsequences = 4\nverify_rows = 3\nverify_batch = 2\nh_steps = [3, 3]\n");
    assert_eq!(
        d.message,
        "`serving.h_steps` and `serving.verify_batch` are both given"
    );
    assert_eq!(at(&d), (5, 1));
    assert!(d.help[0].starts_with("give one: h_steps names the verify slots"));
    assert!(d.render().contains(" --> in.toml:5:1\n"), "{d}");
    // Without a verify: no `verify_rows`, or 0 of them; at the `h_steps` key, line 3.
    for verify_rows in ["", "verify_rows = 0\n"] {
        let d = only_err(&format!(
            "[serving]\nsequences = 4\n{verify_rows}h_steps = [3, 3]\n"
        ));
        assert_eq!(d.message, "`serving.h_steps` without `verify_rows`");
        assert_eq!(at(&d).0, if verify_rows.is_empty() { 3 } else { 4 });
    }
    // A bad `verify_rows` is its own error, not a second one at `h_steps`.
    let d = only_err("[serving]\nsequences = 4\nverify_rows = -3\nh_steps = [3, 3]\n");
    assert_eq!(d.message, "`serving.verify_rows` must not be negative");
    // Empty: at the value, line 4, column 11.
    let d = only_err("[serving]\nsequences = 4\nverify_rows = 3\nh_steps = []\n");
    assert_eq!(d.message, "`serving.h_steps` is empty");
    assert_eq!(at(&d), (4, 11));
    // An entry that is no count: at the entry, column 15.
    let d = only_err("[serving]\nsequences = 4\nverify_rows = 3\nh_steps = [3, -1]\n");
    assert_eq!(d.message, "`serving.h_steps[1]` must not be negative");
    assert_eq!(at(&d), (4, 15));
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
    // A bad spelling, at the value (line 2, column 18), with the dtypes and the nearest one.
    let d = only_err("slots = 1\ndraft_kv_dtype = \"fp9\"\n");
    assert_eq!(d.message, "unknown dtype `fp9` for `draft_kv_dtype`");
    assert_eq!(at(&d), (2, 18));
    assert_eq!(
        d.help,
        [
            "valid dtypes: `f32`, `f16`, `bf16`, `fp8`, `fp4`, `u8`, `i32`, `u32`, `u64`",
            "did you mean `fp8`?"
        ]
    );
    // Not a string.
    let d = only_err("slots = 1\ndraft_kv_dtype = 2\n");
    assert_eq!(
        d.message,
        "`draft_kv_dtype` must be a string, found an integer"
    );
}
