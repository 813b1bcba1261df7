//! `fit` refuses a question no budget answers: `--context 0` (a usage error, exit 2), and a
//! free input nothing in the plan grows with (bad input, exit 1), instead of answering the
//! search's own limit (4,611,686,018,427,387,902 sequences, `u64::MAX` KV blocks); and it says
//! which serving profile it answered under.

mod common;

use common::run;

/// A circuit of recurrent states only: nothing in it is kept per KV block.
const RECURRENT: &str = r#"schema = 2
arch = "r"
dims = ["heads", "head_dim"]
[layout]
kind = "list"
[layout.blocks]
mamba = ["m"]
[checkpoint.t]
layer_kinds = ["mamba", "mamba"]
dims = { heads = 4, head_dim = 8 }
[[block.m.state]]
id = "h"
kind = "recurrent"
format = "f32"
shape = "heads x head_dim"
verify = "h_steps"
"#;

#[test]
fn a_context_of_zero_is_a_usage_error() {
    let out = run(&[
        "fit",
        "circuits/llama.toml",
        "--budget",
        "10GiB",
        "--for",
        "sequences",
        "--context",
        "0",
    ]);
    assert_eq!(out.code, 2, "stdout:\n{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: `--context 0`: a sequence holds at least one token, and no budget bounds \
         sequences of none; give the KV tokens each sequence holds, e.g. `--context 32768`\n"
    );
    // One token is a question: llama keeps KV per token.
    let out = run(&[
        "fit",
        "circuits/llama.toml",
        "--budget",
        "10GiB",
        "--for",
        "sequences",
        "--context",
        "1",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn kv_blocks_of_a_circuit_that_keeps_no_kv_are_refused() {
    let dir = std::env::temp_dir().join(format!("metrale-cli-fit-q-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let circuit = dir.join("recurrent.toml");
    std::fs::write(&circuit, RECURRENT).unwrap();
    let circuit = circuit.to_str().unwrap();
    let out = run(&["fit", circuit, "--budget", "1GiB", "--for", "kv-blocks"]);
    assert_eq!(out.code, 1, "stdout:\n{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("error: `--for kv-blocks` has no answer: no budget bounds it"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "at {} kv-blocks and one more cannot be planned",
            u64::MAX
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("no state of the checkpoint is kept per KV block"),
        "{}",
        out.stderr
    );
    // Its sequences are a question: each holds a recurrent slot.
    let out = run(&[
        "fit",
        circuit,
        "--budget",
        "1GiB",
        "--for",
        "sequences",
        "--context",
        "100",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn fit_says_the_serving_profile_it_answered_under() {
    // The built-in profile, metrale-codegen/cli/inputs/serving.toml: verify_rows = 4,
    // ring_depth = 4, prefix_snapshots = 2, draft_kv = true, tree_nodes = 16, KV blocks of 16
    // tokens; fp8 KV, f32 recurrent h, bf16 conv.
    let args = [
        "fit",
        "circuits/qwen3_5.toml",
        "--for",
        "sequences",
        "--context",
        "32Ki",
        "--budget",
        "40GiB",
    ];
    let json = run(&[&args[..], &["--json"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(
        value["profile"],
        serde_json::json!({
            "source": "built-in serving profile (metrale-codegen/cli/inputs/serving.toml)",
            "verify_rows": 4,
            "ring_depth": 4,
            "prefix_snapshots": 2,
            "draft_kv": true,
            "tree_nodes": 16,
            "kv_block_size": 16,
            "formats": { "kv_cache_dtype": "fp8", "ssm_h_storage": "f32", "ssm_conv_storage": "bf16" },
        })
    );
    let table = run(&args).stdout;
    for line in [
        "profile                   [serving]: 4 verify rows, a rollback ring of 4, 2 prefix \
         snapshots, draft KV blocks, 16 tree nodes, KV blocks of 16 tokens",
        "formats                   kv_cache_dtype fp8, ssm_h_storage f32, ssm_conv_storage bf16",
        "context                   32768 tokens per sequence",
    ] {
        assert!(table.contains(line), "{line}\n{table}");
    }
    // Without `[serving]`, no profile: KV blocks under the built-in default inputs.
    let blocks = run(&[
        "fit",
        "circuits/qwen3_5.toml",
        "--for",
        "kv-blocks",
        "--budget",
        "40GiB",
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&blocks.stdout).expect("JSON");
    assert_eq!(value["profile"], serde_json::Value::Null);
}
