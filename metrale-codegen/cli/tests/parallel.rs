//! `plan --tp --pp` (issue 12, contract 4): every rank's bytes and their sum, one rank's plan
//! with its rank and layers in the JSON, and the errors of a split that cannot be made.

mod common;

use common::run;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("JSON")
}

#[test]
fn every_rank_and_the_sum() {
    let all = json(&[
        "plan",
        "circuits/qwen3_next.toml",
        "--tp",
        "4",
        "--pp",
        "2",
        "--json",
    ]);
    assert_eq!((all["tp"].as_u64(), all["pp"].as_u64()), (Some(4), Some(2)));
    let ranks = all["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 8);
    let sum: u64 = ranks
        .iter()
        .map(|r| r["device_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(all["device_bytes"].as_u64(), Some(sum));
    // 48 layers over 2 pipeline ranks: 24 each, in order; every tensor rank alike.
    let layers = |r: &Value| r["layers"].as_array().unwrap().len();
    assert!(ranks.iter().all(|r| layers(r) == 24));
    assert_eq!(ranks[4]["layers"][0].as_u64(), Some(24));
    assert_eq!(ranks[0]["device_bytes"], ranks[3]["device_bytes"]);

    // One rank's plan is that row, with its rank and layers.
    let one = json(&[
        "plan",
        "circuits/qwen3_next.toml",
        "--tp",
        "4",
        "--pp",
        "2",
        "--tp-rank",
        "1",
        "--pp-rank",
        "1",
        "--json",
    ]);
    assert_eq!(one["device_bytes"], ranks[5]["device_bytes"]);
    assert_eq!(one["host_bytes"], ranks[5]["host_bytes"]);
    assert_eq!(
        (one["tp_rank"].as_u64(), one["pp_rank"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(one["layers"], ranks[5]["layers"]);
    // Its terms are of its layers only.
    assert!(one["terms"].as_array().unwrap().iter().all(|t| {
        let state = t["state"].as_str().unwrap();
        !state.starts_with("l0.") && !state.starts_with("l3.")
    }));

    // The table says the same.
    let table = run(&["plan", "circuits/qwen3_next.toml", "--tp", "4", "--pp", "2"]);
    assert_eq!(table.code, 0);
    assert!(table.stdout.contains("parallel    tp 4 x pp 2\n"));
    assert!(
        table.stdout.contains(&format!("({sum} B)")),
        "{}",
        table.stdout
    );
}

#[test]
fn a_rank_needs_both_indices_and_a_split_that_fits() {
    let one_index = run(&["plan", "circuits/llama.toml", "--tp", "2", "--tp-rank", "0"]);
    assert_eq!(one_index.code, 2, "{}", one_index.stderr);
    let three = run(&["plan", "circuits/qwen3_next.toml", "--tp", "3"]);
    assert_eq!(three.code, 1);
    assert!(
        three
            .stderr
            .contains("dim `q_heads` = 16 does not split over 3 tensor-parallel ranks"),
        "{}",
        three.stderr
    );
    let deep = run(&["plan", "circuits/llama.toml", "--pp", "33"]);
    assert_eq!(deep.code, 1);
    assert!(
        deep.stderr.contains("a rank would hold no layer"),
        "{}",
        deep.stderr
    );
    let zero = run(&["plan", "circuits/llama.toml", "--tp", "0"]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
}

#[test]
fn fit_answers_for_the_rank_that_binds_first() {
    let base = [
        "fit",
        "circuits/nemotron_h.toml",
        "--checkpoint",
        "nemotron_h_47b",
        "--tp",
        "4",
        "--pp",
        "2",
        "--budget",
        "80GiB",
        "--for",
        "kv-blocks",
        "--json",
    ];
    let all = json(&base);
    let of_rank = |pp: &str| {
        let mut args = base.to_vec();
        args.extend(["--tp-rank", "0", "--pp-rank", pp]);
        json(&args)["value"].as_u64().unwrap()
    };
    let (first, last) = (of_rank("0"), of_rank("1"));
    assert_ne!(first, last, "the two stages hold different layers");
    assert_eq!(all["value"].as_u64(), Some(first.min(last)));
    let binding = u64::from(first > last);
    assert_eq!(all["pp_rank"].as_u64(), Some(binding));
    assert_eq!((all["tp"].as_u64(), all["pp"].as_u64()), (Some(4), Some(2)));
}

#[test]
fn every_rank_blames_an_overflow_as_the_rank_alone_does() {
    // 2^44 blocks at an alignment of 2^59: each rank's plan overflows, and what alone made it
    // overflow is `--align` (at align 1 the rank fits). The table of every rank once blamed the
    // whole checkpoint's states and named no input.
    let inputs = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("every-rank.toml");
    std::fs::write(
        &inputs,
        "slots = 8\n[formats]\nkv_cache_dtype = \"fp8\"\n[kv]\nblocks = 17592186044416\nblock_size = 16\n",
    )
    .unwrap();
    let inputs = inputs.to_str().unwrap();
    let args = |extra: &[&'static str]| {
        let mut args = vec!["plan", "circuits/llama.toml", "--inputs", inputs];
        args.extend_from_slice(&["--align", "576460752303423488", "--pp", "2"]);
        args.extend_from_slice(extra);
        run(&args)
    };
    let every = args(&[]);
    let first = args(&["--tp-rank", "0", "--pp-rank", "0"]);
    assert_eq!(
        (every.code, first.code),
        (1, 1),
        "{}\n{}",
        every.stderr,
        first.stderr
    );
    assert!(first.stderr.contains("--align"), "{}", first.stderr);
    assert_eq!(every.stderr, first.stderr);
}

#[test]
fn svg_of_every_rank_is_refused_not_skipped() {
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("every-rank.svg");
    let _ = std::fs::remove_file(&target);
    let target_arg = target.to_str().unwrap();
    let every = run(&[
        "plan",
        "circuits/llama.toml",
        "--pp",
        "2",
        "--svg",
        target_arg,
    ]);
    assert_eq!(every.code, 1, "{}", every.stderr);
    assert!(
        every
            .stderr
            .contains("`--svg` draws the memory map of one plan"),
        "{}",
        every.stderr
    );
    assert!(
        every.stderr.contains("--tp-rank R --pp-rank S"),
        "{}",
        every.stderr
    );
    assert!(every.stdout.is_empty() && !target.exists());
    // One rank named: its map is written.
    let one = run(&[
        "plan",
        "circuits/llama.toml",
        "--pp",
        "2",
        "--tp-rank",
        "0",
        "--pp-rank",
        "1",
        "--svg",
        target_arg,
    ]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(target.exists());
}
