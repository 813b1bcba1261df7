//! `fit` refuses a question no budget answers: `--context 0` (a usage error, exit 2), and a
//! free input nothing in the plan grows with (bad input, exit 1), instead of answering the
//! search's own limit (4,611,686,018,427,387,902 sequences, `u64::MAX` KV blocks).

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
