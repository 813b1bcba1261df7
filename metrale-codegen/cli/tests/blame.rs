//! Issue 28's regression tests of `plan`'s blame (C6, C7, B11): an overflow the inputs cause
//! is located in the inputs file, at the `[serving]` or `[pool]` key that alone causes it, or
//! at the first of the counts that cause it together, never at the circuit; and a `[formats]`
//! key that misspells a key the circuit needs is named at the misspelling.

mod common;

use std::path::PathBuf;

const QWEN: &str = "circuits/qwen3_5.toml";

/// The formats Qwen3.5 needs.
const FORMATS: &str =
    "[formats]\nkv_cache_dtype = \"fp8\"\nssm_h_storage = \"f32\"\nssm_conv_storage = \"bf16\"\n";

/// `plan` of Qwen3.5 under `inputs`, written to a scratch file `<name>.toml`: its exit code,
/// its stderr, and the file's path.
fn plan(name: &str, inputs: &str) -> (i32, String, String) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-codegen-blame");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, inputs).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let run = common::run(&["plan", QWEN, "--inputs", &path]);
    (run.code, run.stderr, path)
}

/// The rendered error `message` blamed on the one count `key`, its value `value` at `line` and
/// `column` of the file at `path`.
fn blamed(message: &str, path: &str, line: usize, column: usize, value: &str, key: &str) -> String {
    let gutter = " ".repeat(line.to_string().len());
    format!(
        "error: {message}\n{gutter}--> {path}:{line}:{column}\n{gutter} |\n{line} | {}\n{gutter} | {}{} this count\n{gutter} |\n{gutter} = note: with {key} at 1 the plan fits\n{gutter} = help: lower {key}\n\nerror: aborting due to 1 previous error\n",
        line_text(path, line),
        " ".repeat(column - 1),
        "^".repeat(value.len()),
    )
}

/// Line `line` (1-based) of the file at `path`.
fn line_text(path: &str, line: usize) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .nth(line - 1)
        .unwrap()
        .to_owned()
}

#[test]
fn a_serving_count_is_blamed_at_its_value() {
    // C6: `[serving] capture_rows` once named `[caches] capture_rows`, a key the file does not
    // write, without a line. The hidden capture is `capture_rows` rows: line 8, column 16.
    let inputs = format!(
        "{FORMATS}[serving]\nsequences = 8\nkv = {{ block_size = 16, tokens_per_sequence = 4096 }}\n\
         capture_rows = 18446744073709551615\n"
    );
    let (code, stderr, path) = plan("serving-capture", &inputs);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        blamed(
            "the size of state `head.hidden_capture` overflows u64",
            &path,
            8,
            16,
            "18446744073709551615",
            "`[serving] capture_rows`",
        )
    );
}

#[test]
fn a_pool_count_is_blamed_at_its_value() {
    // C7: a `[pool]` figure that overflows the page pool once named the circuit file. The
    // kernel block is line 13, its value at column 16.
    let inputs = format!(
        "slots = 9\n{FORMATS}[kv]\nblocks = 2048\nblock_size = 16\n[pool]\npolicy = \"vllm\"\n\
         context = 4096\nrequests = 8\nkernel_block = 4611686018427387904\n"
    );
    let (code, stderr, path) = plan("pool-kernel-block", &inputs);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        blamed(
            "the page pool's size overflows u64 (at state `l0.gdn.h`)",
            &path,
            13,
            16,
            "4611686018427387904",
            "`[pool] kernel_block`",
        )
    );
    // Under `[serving]`, the profile's sequences size the pool: `sequences` on line 6.
    let inputs = format!(
        "{FORMATS}[serving]\nsequences = 4611686018427387904\n\
         kv = {{ block_size = 16, tokens_per_sequence = 1 }}\n[pool]\npolicy = \"vllm\"\ncontext = 4096\n"
    );
    let (code, stderr, path) = plan("pool-sequences", &inputs);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        blamed(
            "the page pool's size overflows u64 (at state `l0.gdn.h`)",
            &path,
            6,
            13,
            "4611686018427387904",
            "`[serving] sequences`",
        )
    );
}

#[test]
fn counts_that_overflow_only_together_are_all_named_at_the_first() {
    // B11: each of `slots` (2^62 slots of `l0.gdn.h`), `[kv] blocks` and `[draft_kv] blocks`
    // (2^62 blocks of 16 tokens) overflows by itself, so no one of them at 1 makes the plan
    // fit; the error once named the circuit and "the counts".
    let inputs = format!(
        "slots = 4611686018427387904\n{FORMATS}[kv]\nblocks = 4611686018427387904\nblock_size = 16\n\
         [draft_kv]\nblocks = 4611686018427387904\nblock_size = 16\n"
    );
    let (code, stderr, path) = plan("together", &inputs);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: the size of state `l0.gdn.h` overflows u64\n --> {path}:1:9\n  |\n\
             1 | slots = 4611686018427387904\n  |         ^^^^^^^^^^^^^^^^^^^ this count, with \
             `[kv] blocks` and `[draft_kv] blocks`\n  |\n  = note: no one count alone: with \
             `slots`, `[kv] blocks` and `[draft_kv] blocks` at 1 the plan fits, with any one of \
             them as written it overflows\n  = help: lower `slots`, `[kv] blocks` and \
             `[draft_kv] blocks`\n\nerror: aborting due to 1 previous error\n"
        )
    );
    // With the draft pool back to a size that fits, the two others remain.
    let inputs = inputs.replacen(
        "[draft_kv]\nblocks = 4611686018427387904",
        "[draft_kv]\nblocks = 64",
        1,
    );
    let (_, stderr, _) = plan("together-two", &inputs);
    assert!(
        stderr.contains("help: lower `slots` and `[kv] blocks`\n"),
        "{stderr}"
    );
}

#[test]
fn a_misspelled_format_key_is_named_with_the_key_it_misses() {
    // `kv_cache_dtyp` on line 3 names no state; `kv_cache_dtype`, which the KV sides need, is
    // missing. The error once named only the missing key, at no line.
    let inputs = "slots = 9\n[formats]\nkv_cache_dtyp = \"fp8\"\nssm_h_storage = \"f32\"\n\
                  ssm_conv_storage = \"bf16\"\n[kv]\nblocks = 64\nblock_size = 16\n";
    let (code, stderr, path) = plan("near-miss", inputs);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: format key `kv_cache_dtyp` names no state; `kv_cache_dtype` is missing\n \
             --> {path}:3:1\n  |\n3 | kv_cache_dtyp = \"fp8\"\n  | ^^^^^^^^^^^^^ no state has \
             format `{{kv_cache_dtyp}}`\n  |\n  = note: state `l3.attn.k` has format \
             `{{kv_cache_dtype}}`, which the inputs do not give\n  = help: did you mean \
             `kv_cache_dtype`?\n\nerror: aborting due to 1 previous error\n"
        )
    );
}
