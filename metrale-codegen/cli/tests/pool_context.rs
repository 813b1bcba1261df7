//! An inputs file whose vLLM `[pool]` leaves out `context` (issue 29, part 8): it loads, `fit
//! --for sequences --context N` answers under it as under `context = N` written, and a command
//! that gives no context (`plan`, `fit --for kv-blocks`) refuses it at `[pool]`, naming both
//! ways to give it.

mod common;

use std::path::PathBuf;

use common::run;

/// Llama-3.1-8B in bf16 under a default server's vLLM pool, one sequence; `context` as given.
fn inputs(name: &str, context: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-codegen-pool-context");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "[formats]\nkv_cache_dtype = \"bf16\"\n[serving]\nsequences = 1\n\
         [pool]\npolicy = \"vllm\"\n{context}"
    );
    std::fs::write(&path, text).expect("scratch file");
    path.to_str().expect("utf-8 path").to_owned()
}

/// The refusal of the file at `path`, its `[pool]` on line 5.
fn refused(path: &str) -> String {
    format!(
        "error: the vLLM pool has no `context`: the tokens one request may hold\n \
         --> {path}:5:2\n  |\n5 | [pool]\n  |  ^^^^ gives no `context`\n  |\n  = note: the \
         pool sizes each request's pages for its context (vLLM's `max_model_len`)\n  = help: \
         add `context = N` to `[pool]`, or give it on the command line: `fit --for sequences \
         --context N`\n\nerror: aborting due to 1 previous error\n"
    )
}

/// `fit --for sequences` of Llama-3.1-8B at 40 GiB under `path`, `--context` as given, as JSON.
fn fit_sequences(path: &str, context: &str) -> common::Run {
    run(&[
        "fit",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        path,
        "--for",
        "sequences",
        "--context",
        context,
        "--budget",
        "40GiB",
        "--json",
    ])
}

#[test]
fn fit_gives_the_context_the_file_leaves_out() {
    let without = inputs("without", "");
    let out = fit_sequences(&without, "32768");
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    // As cli.rs's `fit_under_the_vllm_pool_reports_what_vllm_logs` works it by hand: 2048
    // pages of 16 tokens a request, (20,480 - 1) / 2048 = 9 at once.
    let fit: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(fit["value"], 9);
    assert_eq!(fit["pool_context"], 32_768);
    assert_eq!(fit["request_pages"], 2048);
    // Exactly the answer under the same context written in the file, but for the file's name.
    let written = inputs("written", "context = 32768\n");
    let mut same: serde_json::Value =
        serde_json::from_str(&fit_sequences(&written, "32768").stdout).expect("JSON");
    same["profile"]["source"] = fit["profile"]["source"].clone();
    assert_eq!(same, fit);
}

#[test]
fn plan_refuses_a_pool_without_context_at_the_pool() {
    let path = inputs("plan", "");
    let out = run(&[
        "plan",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        &path,
    ]);
    assert_eq!(out.code, 1, "stdout:\n{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, refused(&path));
    // Written, the same file plans.
    let path = inputs("plan-written", "context = 32768\n");
    let out = run(&[
        "plan",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        &path,
    ]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
}

#[test]
fn fit_for_kv_blocks_refuses_a_pool_without_context_at_the_pool() {
    // `--context` is for `--for sequences`: a KV-block fit takes the context from the file.
    let path = inputs("kv-blocks", "");
    let out = run(&[
        "fit",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        &path,
        "--for",
        "kv-blocks",
        "--budget",
        "40GiB",
    ]);
    assert_eq!(out.code, 1, "stdout:\n{}", out.stdout);
    assert_eq!(out.stderr, refused(&path));
}
