//! Sizes and counts as people write them on `fit`'s command line (issue 29, part 8): a size
//! with a decimal fraction (`--budget 16.2GB`, `--weights 1.5GiB`) is its exact bytes, a count
//! with a unit (`--context 32k`) its exact count, and a fraction of a byte is refused naming
//! the text. The grammar itself is `metrale_circuit::load::text::{parse_size, parse_count}`'s, tested
//! there; these check that each option reads through it.

mod common;

use common::run;
use serde_json::Value;

const CIRCUIT: &str = "circuits/llama.toml";

/// `fit CIRCUIT --for kv-blocks --json` with `args`, parsed; the run must succeed.
fn fit_json(args: &[&str]) -> Value {
    let mut all = vec!["fit", CIRCUIT, "--for", "kv-blocks", "--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("JSON")
}

#[test]
fn a_size_with_a_fraction_is_its_exact_bytes() {
    // 16.2 x 10^9 = 16,200,000,000 B, as if written out.
    let fraction = fit_json(&["--budget", "16.2GB"]);
    assert_eq!(fraction["budget"], 16_200_000_000u64);
    assert_eq!(fraction, fit_json(&["--budget", "16200000000"]));
    // On a GPU: 1.5 x 2^30 = 1,610,612,736 B of weights and 0.5 x 2^30 = 536,870,912 B kept.
    let gpu = fit_json(&[
        "--gpu",
        "80GiB",
        "--weights",
        "1.5GiB",
        "--reserve",
        "0.5GiB",
    ]);
    assert_eq!(gpu["weights"], 1_610_612_736u64);
    assert_eq!(gpu["reserve"], 536_870_912u64);
    // floor(0.92 x 85,899,345,920) = 79,027,398,246, less both (2,147,483,648): 76,879,914,598.
    assert_eq!(gpu["budget"], 76_879_914_598u64);
}

#[test]
fn a_fraction_of_a_byte_is_refused_naming_the_text() {
    // A budget is a usage error (exit 2), clap's line naming the option.
    let out = run(&["fit", CIRCUIT, "--for", "kv-blocks", "--budget", "1.5B"]);
    assert_eq!(out.code, 2, "stdout:\n{}", out.stdout);
    assert_eq!(
        out.stderr,
        "error: invalid value '1.5B' for '--budget <SIZE>': `1.5B` is not a whole number of \
         bytes\n\nFor more information, try '--help'.\n"
    );
    // `--weights` is a size or a path: 0.3 x 1024 = 307.2 B is neither, and it says why.
    let out = run(&[
        "fit",
        CIRCUIT,
        "--for",
        "kv-blocks",
        "--gpu",
        "80GiB",
        "--weights",
        "0.3KiB",
    ]);
    assert_eq!(out.code, 1, "stdout:\n{}", out.stdout);
    assert_eq!(
        out.stderr,
        "error: `--weights 0.3KiB` is neither a size nor a file\n  = note: as a size: `0.3KiB` \
         is not a whole number of bytes\n  = help: give the weights' bytes (17GiB, 16.2GB, \
         17179869184), a `model.safetensors.index.json`, a `.safetensors` file, or the folder \
         of a checkpoint\n\nerror: aborting due to 1 previous error\n"
    );
}

#[test]
fn a_context_takes_si_and_binary_units() {
    let fit = |context: &str| {
        let out = run(&[
            "fit",
            CIRCUIT,
            "--for",
            "sequences",
            "--context",
            context,
            "--budget",
            "40GiB",
            "--json",
        ]);
        assert_eq!(out.code, 0, "--context {context}: {}", out.stderr);
        out.stdout
    };
    // 32k = 32,000 tokens; 32Ki = 32,768.
    assert_eq!(fit("32k"), fit("32000"));
    assert_eq!(fit("32Ki"), fit("32768"));
    assert_ne!(fit("32k"), fit("32Ki"));
    // `K` says neither: refused (usage, exit 2) naming the text.
    let out = run(&[
        "fit",
        CIRCUIT,
        "--for",
        "sequences",
        "--context",
        "32K",
        "--budget",
        "40GiB",
    ]);
    assert_eq!(out.code, 2, "stdout:\n{}", out.stdout);
    assert_eq!(
        out.stderr,
        "error: invalid value '32K' for '--context <TOKENS>': expected a whole number or one \
         with a unit (32k = 32000, 32Ki = 32768, 1.5M), found `32K`\n\nFor more information, \
         try '--help'.\n"
    );
}
