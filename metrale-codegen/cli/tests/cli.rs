//! The `metrale-codegen` binary, run from the workspace root: `plan` figures checked by hand
//! under the default and a small inputs file, the exit codes (clap's usage errors exit 2,
//! `--help` and `--version` exit 0 on stdout), and located errors.

mod common;

use std::path::PathBuf;

use common::{Run, root, run};

use serde_json::Value;

const CIRCUIT: &str = "circuits/qwen3_5.toml";

/// A file in this test binary's scratch folder, written with `text`.
fn scratch(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-codegen-cli");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path.to_str().expect("utf-8 path").to_owned()
}

/// `plan --json` output, parsed; the run must succeed.
fn plan_json(args: &[&str]) -> Value {
    let mut all = vec!["plan", CIRCUIT, "--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("plan --json prints JSON")
}

/// The term of `state` holding `holding`.
fn term<'a>(plan: &'a Value, state: &str, holding: &str) -> &'a Value {
    plan["terms"]
        .as_array()
        .expect("terms")
        .iter()
        .find(|t| t["state"] == state && t["holding"] == holding)
        .unwrap_or_else(|| panic!("no term {state} {holding}"))
}

fn has_term(plan: &Value, state: &str, holding: &str) -> bool {
    plan["terms"]
        .as_array()
        .expect("terms")
        .iter()
        .any(|t| t["state"] == state && t["holding"] == holding)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// `plan --json`'s `device_bytes` of Qwen3.5-27B under the built-in serving profile with
/// `sequences` sequences of `context` tokens each.
fn device_bytes_at(sequences: u64, context: u64) -> u64 {
    let serving = std::fs::read_to_string(root().join("metrale-codegen/cli/inputs/serving.toml"))
        .expect("the serving profile");
    let text = serving
        .replace("sequences = 8", &format!("sequences = {sequences}"))
        .replace(
            "tokens_per_sequence = 4096",
            &format!("tokens_per_sequence = {context}"),
        );
    let inputs = scratch(&format!("serving_{sequences}.toml"), &text);
    let out = run(&["plan", CIRCUIT, "--inputs", &inputs, "--json"]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let plan: Value = serde_json::from_str(&out.stdout).expect("plan --json prints JSON");
    u(&plan["device_bytes"])
}

#[test]
fn fit_on_a_whole_gpu_counts_the_weights_and_the_reserve() {
    // An 80 GiB GPU at 0.9, the fixture's weights (55,608,426,496 B from its index's
    // `metadata.total_size`) and a 2 GiB reserve: 85,899,345,920 x 0.9 = 77,309,411,328 usable,
    // less 55,608,426,496 and 2,147,483,648: 19,553,501,184 B for the state, by hand.
    let index = "metrale-codegen/cli/tests/fixtures/weights/model.safetensors.index.json";
    let args = [
        "fit",
        CIRCUIT,
        "--gpu",
        "80GiB",
        "--weights",
        index,
        "--reserve",
        "2GiB",
        "--utilization",
        "0.9",
        "--for",
        "sequences",
        "--context",
        "32768",
        "--json",
    ];
    let out = run(&args);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let fit: Value = serde_json::from_str(&out.stdout).expect("fit --json prints JSON");
    assert_eq!(u(&fit["gpu"]), 85_899_345_920);
    assert_eq!(fit["utilization"], "0.9");
    assert_eq!(u(&fit["usable_bytes"]), 77_309_411_328);
    assert_eq!(u(&fit["weights"]), 55_608_426_496);
    assert_eq!(u(&fit["reserve"]), 2_147_483_648);
    assert_eq!(u(&fit["budget"]), 19_553_501_184);
    // The same answer as `--budget` of the state's budget.
    let plain = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "19553501184",
        "--for",
        "sequences",
        "--context",
        "32768",
        "--json",
    ]);
    let plain: Value = serde_json::from_str(&plain.stdout).expect("fit --json prints JSON");
    assert_eq!(fit["value"], plain["value"]);
    // One more sequence costs what the plans at n and n + 1 say, not a live slot's bytes.
    let n = u(&fit["value"]);
    assert!(n >= 1, "{fit}");
    let marginal = device_bytes_at(n + 1, 32_768) - device_bytes_at(n, 32_768);
    assert_eq!(u(&fit["device_bytes"]), device_bytes_at(n, 32_768));
    assert_eq!(u(&fit["marginal_bytes"]), marginal);
    assert!(
        marginal > 10 * 153_944_064,
        "{marginal}: far more than one slot's live state"
    );
    // One more KV block of 16 tokens: 16 full-attention layers x 2 sides x 4 KV heads x 256
    // fp8 = 32,768 B a token, x 16 = 524,288 B.
    assert_eq!(u(&fit["marginal_block_bytes"]), 524_288);
    // Over two tensor-parallel ranks each GPU holds half the weights.
    let mut tp = args.to_vec();
    tp.extend(["--tp", "2"]);
    let out = run(&tp);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let split: Value = serde_json::from_str(&out.stdout).expect("fit --json prints JSON");
    assert_eq!(u(&split["weights_per_gpu"]), 55_608_426_496 / 2);
    assert_eq!(
        u(&split["budget"]),
        77_309_411_328 - 27_804_213_248 - 2_147_483_648
    );
}

#[test]
fn a_gpu_that_holds_no_sequence_says_what_one_needs() {
    // Weights that take the whole usable share: refused, naming both.
    let out = run(&[
        "fit",
        CIRCUIT,
        "--gpu",
        "24GiB",
        "--weights",
        "30GiB",
        "--for",
        "sequences",
        "--context",
        "32768",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the GPU leaves the state nothing"),
        "{}",
        out.stderr
    );
    // Room for 0 sequences but not 1: an error with what 1 needs, not `Ok(0)`. 24 GiB x 0.92 =
    // 23,708,219,473 B usable, less 21,208,219,473 B of weights: 2,500,000,000 B, more than 0
    // sequences take (1,732,444,672 B) and less than one of 32,768 tokens adds.
    let out = run(&[
        "fit",
        CIRCUIT,
        "--gpu",
        "24GiB",
        "--weights",
        "21208219473",
        "--for",
        "sequences",
        "--context",
        "32768",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("holds no sequence"), "{}", out.stderr);
    assert!(out.stderr.contains("1 needs"), "{}", out.stderr);
    // `--budget` and `--gpu` exclude each other; `--weights` needs `--gpu`.
    let out = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "1GiB",
        "--gpu",
        "24GiB",
        "--for",
        "kv-blocks",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "1GiB",
        "--weights",
        "1GiB",
        "--for",
        "kv-blocks",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(&[
        "fit",
        CIRCUIT,
        "--gpu",
        "24GiB",
        "--utilization",
        "1.5",
        "--for",
        "kv-blocks",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn plan_json_shows_the_parts_of_a_layout() {
    // DeepSeek-V3.2's latent in vLLM's fp8_ds_mla (656 B a token: 512 fp8, 4 f32, 64 bf16) and
    // its indexer key (128 fp8 and one f32), 2 blocks of 64 tokens.
    let inputs = scratch(
        "ds_mla.toml",
        "slots = 1\n[formats]\nkv_cache_dtype = \"fp8_ds_mla\"\n[kv]\nblocks = 2\nblock_size = 64\n",
    );
    let out = run(&[
        "plan",
        "circuits/deepseek_v32.toml",
        "--inputs",
        &inputs,
        "--json",
    ]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let plan: Value = serde_json::from_str(&out.stdout).expect("plan --json prints JSON");
    let latent = term(&plan, "l0.mla.latent", "blocks");
    assert_eq!(
        (&latent["layout"], &latent["dtype"]),
        (&"fp8_ds_mla".into(), &"u8".into())
    );
    assert_eq!(
        (u(&latent["unit_bytes"]), u(&latent["bytes"])),
        (656, 128 * 656)
    );
    let parts: Vec<(String, String, u64, u64, u64)> = latent["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| {
            (
                p["part"].as_str().expect("part").to_owned(),
                p["dtype"].as_str().expect("dtype").to_owned(),
                u(&p["elements"]),
                u(&p["offset"]),
                u(&p["bytes"]),
            )
        })
        .collect();
    let expected = [
        ("nope", "fp8", 512, 0, 512),
        ("scales", "f32", 4, 512, 16),
        ("rope", "bf16", 64, 528, 128),
    ]
    .map(|(n, d, e, o, b)| (n.to_owned(), d.to_owned(), e, o, b));
    assert_eq!(parts, expected);
    let index = term(&plan, "l0.mla.index_k", "blocks");
    assert_eq!(
        (&index["layout"], u(&index["unit_bytes"])),
        (&"fp8_scaled".into(), 132)
    );
    // A dtype's unit has neither.
    let bf16_inputs = scratch(
        "ds_bf16.toml",
        "slots = 1\n[formats]\nkv_cache_dtype = \"bf16\"\n[kv]\nblocks = 2\nblock_size = 64\n",
    );
    let out = run(&[
        "plan",
        "circuits/deepseek_v32.toml",
        "--inputs",
        &bf16_inputs,
        "--json",
    ]);
    let plan: Value = serde_json::from_str(&out.stdout).expect("plan --json prints JSON");
    let latent = term(&plan, "l0.mla.latent", "blocks");
    assert_eq!(
        (u(&latent["unit_bytes"]), latent.get("parts")),
        (1152, None)
    );
    // A layout the states do not declare is refused at its value in the file.
    let bad = scratch(
        "ds_bad.toml",
        "slots = 1\n[formats]\nkv_cache_dtype = \"fp8_ds_mlaa\"\n",
    );
    let out = run(&["plan", "circuits/deepseek_v32.toml", "--inputs", &bad]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("--> {bad}:3:18")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("did you mean `fp8_ds_mla`?"),
        "{}",
        out.stderr
    );
}

#[test]
fn plan_json_under_the_default_inputs() {
    let plan = plan_json(&[]);
    assert_eq!(plan["circuit"], CIRCUIT);
    assert_eq!(plan["checkpoint"], "qwen3_5_27b");
    assert_eq!(plan["align"], 256);

    // h: 48 value heads x 128 x 128 = 786432 f32 per slot; 9 slots.
    let h = term(&plan, "l0.gdn.h", "live");
    assert_eq!(
        (&h["kind"], &h["lifetime"], &h["dtype"], &h["space"]),
        (
            &"recurrent".into(),
            &"sequence".into(),
            &"f32".into(),
            &"device".into()
        )
    );
    assert_eq!((u(&h["units"]), u(&h["bytes"])), (9, 9 * 786_432 * 4));
    assert_eq!(u(&h["bytes"]), 28_311_552);
    // Its unit as a kernel views it: [48 heads, 128, 128], strides [128 x 128, 128, 1].
    assert_eq!(h["shape"], serde_json::json!([48, 128, 128]));
    assert_eq!(
        h["axes"],
        serde_json::json!(["lin_v_heads", "lin_k_dim", "lin_v_dim"])
    );
    assert_eq!(h["strides"], serde_json::json!([16_384, 128, 1]));
    // Its verify intermediates: nine slots of 4 rows = 36 units, in the verify lifetime.
    let steps = term(&plan, "l0.gdn.h", "steps");
    assert_eq!(
        (u(&steps["units"]), u(&steps["bytes"])),
        (36, 36 * 786_432 * 4)
    );
    assert_eq!(steps["lifetime"], "verify");
    // conv: 3 x (2*16*128 + 48*128) = 3 x 10240 = 30720 bf16 per slot.
    let conv = term(&plan, "l0.gdn.conv", "live");
    assert_eq!((u(&conv["units"]), u(&conv["bytes"])), (9, 9 * 30_720 * 2));

    // k of layer 3 (full attention): 2048 blocks x 16 tokens; 4 kv heads x 256 fp8 per token.
    let k = term(&plan, "l3.attn.k", "blocks");
    assert_eq!(
        (&k["kind"], &k["lifetime"], &k["dtype"]),
        (&"paged_kv".into(), &"model".into(), &"fp8".into())
    );
    assert_eq!((u(&k["units"]), u(&k["bytes"])), (32_768, 33_554_432));
    assert!(!has_term(&plan, "l0.attn.k", "blocks"), "layer 0 is GDN");

    // Host: 8 lookup tables of 8192 entries of 2 x u32: 8192 * 8 / 7 = 9362 -> 16384 buckets
    // of 9 bytes, plus 16 control bytes = 147472 per table; 8 tables = 1179776, rounded up to
    // 256 = 1179904.
    let lookup = term(&plan, "head.lookup_index", "cache");
    assert_eq!(lookup["space"], "host");
    assert_eq!(
        (u(&lookup["units"]), u(&lookup["bytes"])),
        (65_536, 1_179_776)
    );
    assert_eq!(u(&plan["host_bytes"]), 1_179_904);

    // Every offset aligned; no two regions of one space overlap; each arena holds its terms.
    let terms = plan["terms"].as_array().expect("terms");
    for space in ["device", "host"] {
        let mut regions: Vec<(u64, u64)> = terms
            .iter()
            .filter(|t| t["space"] == space)
            .map(|t| (u(&t["offset"]), u(&t["bytes"])))
            .collect();
        assert!(
            regions.iter().all(|(offset, _)| offset.is_multiple_of(256)),
            "{space}"
        );
        regions.sort_unstable();
        for pair in regions.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 <= pair[1].0,
                "{space}: {pair:?} overlap"
            );
        }
        let sum: u64 = regions.iter().map(|(_, bytes)| bytes).sum();
        let end = regions.last().map_or(0, |(offset, bytes)| offset + bytes);
        let arena = u(&plan[format!("{space}_bytes")]);
        assert!(
            arena >= sum && arena >= end,
            "{space}: {arena} < {sum} or {end}"
        );
    }
}

#[test]
fn plan_of_another_checkpoint() {
    let plan = plan_json(&["--checkpoint", "tiny"]);
    assert_eq!(plan["checkpoint"], "tiny");
    // tiny: 4 value heads x 8 x 8 = 256 f32 per slot.
    let h = term(&plan, "l0.gdn.h", "live");
    assert_eq!((u(&h["units"]), u(&h["bytes"])), (9, 9 * 256 * 4));
    assert!(has_term(&plan, "l7.attn.k", "blocks"));
    assert!(!has_term(&plan, "l8.gdn.h", "live"), "tiny has 8 layers");
}

#[test]
fn a_small_inputs_file_changes_the_figures() {
    let inputs = scratch(
        "small.toml",
        "slots = 3\n\
         [formats]\n\
         kv_cache_dtype = \"bf16\"\n\
         ssm_h_storage = \"f32\"\n\
         ssm_conv_storage = \"f16\"\n\
         [kv]\n\
         blocks = 10\n\
         block_size = 4\n",
    );
    let plan = plan_json(&[
        "--checkpoint",
        "tiny",
        "--inputs",
        &inputs,
        "--align",
        "256",
    ]);
    // h: 3 slots x 256 f32 = 3072; conv: 3 slots x 3 x (2*8*2 + 4*8) = 192 f16 -> 1152;
    // k: 10 x 4 = 40 tokens x 16 bf16 = 1280.
    let h = term(&plan, "l0.gdn.h", "live");
    assert_eq!((u(&h["units"]), u(&h["bytes"])), (3, 3072));
    let conv = term(&plan, "l0.gdn.conv", "live");
    assert_eq!(
        (u(&conv["units"]), u(&conv["bytes"]), &conv["dtype"]),
        (3, 1152, &"f16".into())
    );
    let k = term(&plan, "l3.attn.k", "blocks");
    assert_eq!(
        (u(&k["units"]), u(&k["bytes"]), &k["dtype"]),
        (40, 1280, &"bf16".into())
    );
    // No [verify]: no steps or checkpoint; no [draft_kv]: no draft KV; no ring or lookup.
    assert!(!has_term(&plan, "l0.gdn.h", "steps"));
    assert!(!has_term(&plan, "l0.gdn.h", "checkpoint"));
    assert!(!has_term(&plan, "draft.attn.k", "blocks"));
    assert!(!has_term(&plan, "l0.gdn.h_ring", "cache"));
    assert!(!has_term(&plan, "head.lookup_index", "cache"));
    // Absent plain counts are 0: the prefix snapshot is a term of no units.
    let prefix = term(&plan, "l0.gdn.h_prefix", "cache");
    assert_eq!((u(&prefix["units"]), u(&prefix["bytes"])), (0, 0));
    // Device: 4 KV sides (layers 3, 7) x 1280 + 6 GDN layers x (3072 + 1152) = 30464 term
    // bytes; each conv region (1152) is padded to 1280 before the next aligned region or the
    // arena's end: + 6 x 128 = 31232.
    assert_eq!(u(&plan["device_bytes"]), 31_232);
    assert_eq!(u(&plan["host_bytes"]), 0);
}

#[test]
fn the_default_table_is_a_summary_that_fits_a_screen() {
    // Qwen3.5-27B, the README's first command: the summary and a note, not 664 term rows.
    let out = run(&["plan", CIRCUIT]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = out.stdout.lines().count();
    assert!(lines <= 45, "{lines} lines:\n{}", out.stdout);
    assert!(
        out.stdout.contains("term bytes per layer kind\n"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("term bytes per layer\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("\ndevice arena: "), "{}", out.stdout);
    assert!(
        out.stdout.ends_with(
            "664 terms over 64 layers: `--terms` prints the bytes of every layer and every \
             term's row, `--json` every figure exact\n"
        ),
        "{}",
        out.stdout
    );
    // `--terms` adds them, and `--group` alone asks for them too.
    let all = run(&["plan", CIRCUIT, "--terms"]);
    assert!(all.stdout.lines().count() > 664, "{}", all.stdout);
    assert!(
        all.stdout
            .starts_with(out.stdout.lines().next().unwrap_or(""))
    );
    let grouped = run(&["plan", CIRCUIT, "--group", "kind"]);
    assert!(
        grouped.stdout.contains("\ndevice arena: "),
        "{}",
        grouped.stdout
    );
}

#[test]
fn the_table_names_everything() {
    let out = run(&["plan", CIRCUIT, "--checkpoint", "tiny", "--terms"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in [
        "checkpoint  tiny",
        "device arena:",
        "host arena: 1 term",
        "state",
        "l0.gdn.h",
        "recurrent",
        "paged_kv",
        "blocks",
        "MiB",
        "arena bytes per space",
        "term bytes per lifetime",
        "snapshot",
    ] {
        assert!(
            out.stdout.contains(needle),
            "no `{needle}` in\n{}",
            out.stdout
        );
    }
    // l0.gdn.h of tiny under the defaults: 9 slots x 256 f32 = 9216 B = 9.00 KiB.
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("l0.gdn.h ") && l.contains(" live "))
        .expect("h row");
    assert!(row.contains("9.00 KiB"), "{row}");
}

#[test]
fn unknown_checkpoint_is_bad_input_with_a_suggestion() {
    let out = run(&["plan", CIRCUIT, "--checkpoint", "tiny2"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown checkpoint `tiny2`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("did you mean `tiny`?"),
        "{}",
        out.stderr
    );
}

#[test]
fn align_must_be_a_power_of_two() {
    let out = run(&["plan", CIRCUIT, "--align", "100"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("`--align 100` is not a power of two"),
        "{}",
        out.stderr
    );
    // Not a number at all: a usage error (clap's), naming the value and the option.
    let out = run(&["plan", CIRCUIT, "--align", "abc"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: invalid value 'abc' for '--align <N>'"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
    // Zero is a number but no power of two: bad input, like 100.
    let out = run(&["plan", CIRCUIT, "--align", "0"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("`--align 0` is not a power of two"),
        "{}",
        out.stderr
    );
    let plan = plan_json(&["--align", "4096"]);
    assert_eq!(plan["align"], 4096);
    assert!(
        plan["terms"]
            .as_array()
            .expect("terms")
            .iter()
            .all(|t| u(&t["offset"]).is_multiple_of(4096))
    );
}

/// A usage error: exit 2, nothing on stdout, clap's message and the usage on stderr.
fn usage_error(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
    assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    assert!(
        out.stderr.starts_with("error: "),
        "{args:?}: {}",
        out.stderr
    );
    assert!(out.stderr.contains("Usage: "), "{args:?}: {}", out.stderr);
    out.stderr
}

#[test]
fn usage_errors_exit_2_with_the_usage() {
    for args in [
        &["plan", CIRCUIT, "other.toml"][..],
        &["gen", CIRCUIT, CIRCUIT],
        &["plan", CIRCUIT, "--json=1"],
        &["plan", CIRCUIT, "-x"],
    ] {
        usage_error(args);
    }
    // No command at all: the help, but on stderr and with exit 2.
    let out = run(&[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("Usage: metrale-codegen <COMMAND>"),
        "{}",
        out.stderr
    );
    // A value-taking option at the end with no value.
    let out = run(&["plan", CIRCUIT, "--checkpoint"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a value is required for '--checkpoint <NAME>'"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unknown_flag_is_named_with_the_nearest_one() {
    let stderr = usage_error(&["plan", CIRCUIT, "--jsn"]);
    assert!(
        stderr.starts_with("error: unexpected argument '--jsn' found"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tip: a similar argument exists: '--json'"),
        "{stderr}"
    );
    let stderr = usage_error(&["gen", CIRCUIT, "--runtime-pth", "::rt"]);
    assert!(stderr.contains("'--runtime-pth'"), "{stderr}");
    assert!(stderr.contains("'--runtime-path'"), "{stderr}");
}

#[test]
fn an_unknown_command_exits_2() {
    let stderr = usage_error(&["frobnicate"]);
    assert!(
        stderr.starts_with("error: unrecognized subcommand 'frobnicate'"),
        "{stderr}"
    );
    let stderr = usage_error(&["plna"]);
    assert!(
        stderr.contains("tip: a similar subcommand exists: 'plan'"),
        "{stderr}"
    );
}

#[test]
fn a_missing_circuit_file_argument_exits_2() {
    for (args, usage) in [
        (&["plan"][..], "Usage: metrale-codegen plan <circuit.toml>"),
        (&["gen"], "Usage: metrale-codegen gen <circuit.toml>"),
        (&["check"], "Usage: metrale-codegen check <circuit.toml>..."),
    ] {
        let stderr = usage_error(args);
        assert!(
            stderr.starts_with("error: the following required arguments were not provided:"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(usage), "{args:?}: {stderr}");
    }
}

#[test]
fn an_option_given_twice_exits_2() {
    for (args, option) in [
        (
            &[
                "plan",
                CIRCUIT,
                "--checkpoint",
                "tiny",
                "--checkpoint",
                "tiny",
            ][..],
            "'--checkpoint <NAME>'",
        ),
        (
            &["plan", CIRCUIT, "--align", "64", "--align=64"],
            "'--align <N>'",
        ),
        (&["plan", CIRCUIT, "--json", "--json"], "'--json'"),
        (&["gen", CIRCUIT, "-o", "a.rs", "-o", "b.rs"], "'-o <FILE>'"),
    ] {
        let stderr = usage_error(args);
        assert!(
            stderr.starts_with(&format!(
                "error: the argument {option} cannot be used multiple times"
            )),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn help_goes_to_stdout() {
    for args in [&["help"][..], &["--help"], &["-h"]] {
        let out = run(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.stderr);
        for needle in [
            "Usage: metrale-codegen <COMMAND>",
            "check",
            "plan",
            "gen",
            "schema",
            "Exit status",
        ] {
            assert!(
                out.stdout.contains(needle),
                "{args:?}: no `{needle}` in\n{}",
                out.stdout
            );
        }
    }
    for args in [&["check", "-h"][..], &["help", "check"]] {
        let out = run(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(
            out.stdout
                .contains("Usage: metrale-codegen check <circuit.toml>..."),
            "{args:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn schema_prints_the_shipped_json_schemas() {
    for (file, shipped) in [
        ("circuit", "docs/schema/circuit.schema.json"),
        ("inputs", "docs/schema/inputs.schema.json"),
    ] {
        let out = run(&["schema", file]);
        assert_eq!(out.code, 0, "{file}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{file}: {}", out.stderr);
        let expected = std::fs::read_to_string(root().join(shipped)).expect("a shipped schema");
        assert!(
            out.stdout == expected,
            "`schema {file}` differs from {shipped}: regenerate it with \
             `metrale-codegen schema {file} > {shipped}`"
        );
        let json: Value = serde_json::from_str(&out.stdout).expect("JSON");
        assert_eq!(
            json["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
    // Any other file is a usage error naming the valid ones.
    let out = run(&["schema", "circuits"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("[possible values: circuit, inputs]"),
        "{}",
        out.stderr
    );
    let out = run(&["schema"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(&["help", "schema"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("Usage: metrale-codegen schema <FILE>"),
        "{}",
        out.stdout
    );
}

#[test]
fn plan_help_names_its_options() {
    // `-h` anywhere on the line asks for help, even after a circuit file.
    for args in [&["plan", "--help"][..], &["plan", CIRCUIT, "-h"]] {
        let out = run(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.stderr);
        for needle in [
            "Usage: metrale-codegen plan [OPTIONS] <circuit.toml>",
            "--checkpoint <NAME>",
            "--inputs <FILE>",
            "--align <N>",
            "[default: 256]",
            "--sort <ORDER>",
            "[default: offset]",
            "--group <BY>",
            "--json",
            "--svg <FILE>",
        ] {
            assert!(
                out.stdout.contains(needle),
                "{args:?}: no `{needle}` in\n{}",
                out.stdout
            );
        }
    }
    // The long help lists each value with its meaning, and the shape of the JSON totals.
    let out = run(&["plan", "--help"]);
    for needle in [
        "- offset: By space, then offset",
        "- plan:   In plan order",
        "- layer:",
        "- kind:",
        "- lifetime:",
        "`totals.lifetime.<space>.<lifetime>` and `totals.kind.<kind>` are each \
         `{\"terms\": N, \"bytes\": N}`",
    ] {
        assert!(
            out.stdout.contains(needle),
            "no `{needle}` in\n{}",
            out.stdout
        );
    }
    let out = run(&["plan", "-h"]);
    for needle in [
        "[possible values: offset, plan]",
        "[possible values: layer, kind, lifetime]",
    ] {
        assert!(
            out.stdout.contains(needle),
            "no `{needle}` in\n{}",
            out.stdout
        );
    }
    let out = run(&["gen", "--help"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in [
        "-o <FILE>",
        "--runtime-path <PATH>",
        "[default: ::metrale_circuit]",
    ] {
        assert!(
            out.stdout.contains(needle),
            "no `{needle}` in\n{}",
            out.stdout
        );
    }
}

#[test]
fn version_prints_the_name_and_version() {
    for flag in ["--version", "-V"] {
        let out = run(&[flag]);
        assert_eq!(out.code, 0, "{flag}: {}", out.stderr);
        assert_eq!(
            out.stdout,
            format!("metrale-codegen {}\n", env!("CARGO_PKG_VERSION"))
        );
        assert!(out.stderr.is_empty(), "{flag}: {}", out.stderr);
    }
}

#[test]
fn a_missing_circuit_file_is_named() {
    let out = run(&["plan", "circuits/no_such.toml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("circuits/no_such.toml"),
        "{}",
        out.stderr
    );
    let out = run(&["check", "circuits/no_such.toml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("circuits/no_such.toml"),
        "{}",
        out.stderr
    );
}

#[test]
fn check_reports_every_file() {
    let out = run(&["check", CIRCUIT]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("ok: {CIRCUIT}\n"));

    // Line 3 is an unknown top-level key, at col 1.
    let bad = scratch(
        "bad_circuit.toml",
        "schema = 1\narch = \"bad\"\nlayuot = 3\n",
    );
    let out = run(&["check", &bad, CIRCUIT]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("--> {bad}:3:1")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("did you mean `layout`?"),
        "{}",
        out.stderr
    );
    // The good file after the bad one was still checked.
    assert_eq!(out.stdout, format!("ok: {CIRCUIT}\n"));
}

#[test]
fn a_bad_inputs_file_is_located() {
    // `kv_cache_dtype = "bf61"` on line 3: the string at col 18.
    let inputs = scratch(
        "bad_inputs.toml",
        "slots = 3\n[formats]\nkv_cache_dtype = \"bf61\"\n",
    );
    let out = run(&["plan", CIRCUIT, "--inputs", &inputs]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("--> {inputs}:3:18")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("did you mean `bf16`?"),
        "{}",
        out.stderr
    );

    let out = run(&["plan", CIRCUIT, "--inputs", "no/such/inputs.toml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("no/such/inputs.toml"), "{}", out.stderr);
}

#[test]
fn a_format_key_the_inputs_lack_is_named() {
    let inputs = scratch(
        "no_conv_format.toml",
        "slots = 2\n[formats]\nkv_cache_dtype = \"fp8\"\nssm_h_storage = \"f32\"\n",
    );
    let out = run(&["plan", CIRCUIT, "--inputs", &inputs]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "error: state `l0.gdn.conv` has format `{ssm_conv_storage}` but the inputs give no \
             dtype for `ssm_conv_storage`"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("--> {inputs}")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("`[formats]` table"), "{}", out.stderr);
    // One error per key, not one per state.
    assert_eq!(
        out.stderr.matches("error: state").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn gen_prints_the_checked_in_golden_module() {
    let out = run(&["gen", CIRCUIT]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let golden = std::fs::read_to_string(root().join("tests/golden/qwen3_5.rs")).expect("golden");
    assert_eq!(
        out.stdout, golden,
        "gen and the golden (the build.rs output) differ"
    );
}

#[test]
fn gen_writes_a_file_and_takes_a_runtime_path() {
    let target = scratch("gen_out.rs", "stale");
    let out = run(&[
        "gen",
        CIRCUIT,
        "-o",
        &target,
        "--runtime-path",
        "::my_engine::rt",
    ]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&target).expect("written");
    assert!(written.starts_with(&format!(
        "// @generated by metrale-codegen {} from circuits/qwen3_5.toml",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(written.contains("use ::my_engine::rt as __rt;"));
    assert!(!written.contains("::metrale_circuit"));
    let bad = run(&["gen", CIRCUIT, "--runtime-path", "not a path"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("is not a Rust path"), "{}", bad.stderr);
    let out = run(&["gen", CIRCUIT, "-o=", "--runtime-path=::my_engine::rt"]);
    assert_eq!(out.code, 1, "an empty -o is no file: {}", out.stderr);
    assert!(out.stderr.contains("cannot write ``"), "{}", out.stderr);
}

#[test]
fn gen_on_a_bad_circuit_shows_the_located_diagnostic() {
    let bad = scratch(
        "gen_bad.toml",
        "schema = 1\narch = \"x\"\ndims = []\n[layout]\nkind = \"intervall\"\n",
    );
    let out = run(&["gen", &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!("--> {bad}:5:8")),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn plan_sizes_a_windowed_side_and_asks_for_window_inputs() {
    // Layer 0 keeps a 128-token window: min(127 + 64, 4096) = 191 tokens span 12 blocks of
    // 16, + 1: 13 per sequence, 26 for 2 sequences = 416 tokens; layer 1 the whole pool.
    let circuit = scratch(
        "sliding.toml",
        "schema = 2\narch = \"sliding\"\ndims = [\"heads\"]\n[layout]\nkind = \"interval\"\n\
         period = 2\n[layout.blocks]\nlinear_attention = [\"local\"]\nfull_attention = [\"global\"]\n\
         [[block.local.state]]\nid = \"k\"\nkind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"heads\"\n\
         window = \"128\"\n[[block.global.state]]\nid = \"k\"\nkind = \"paged_kv\"\nformat = \"bf16\"\n\
         shape = \"heads\"\n[checkpoint.small]\nlayers = 2\ndims = { heads = 2 }\n",
    );
    let pool = "slots = 1\n[kv]\nblocks = 100\nblock_size = 16\n";
    let without = scratch("pool.toml", pool);
    let out = run(&["plan", &circuit, "--inputs", &without]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("KV side `l0.local.k` keeps a sliding window but the KV inputs give no"),
        "{}",
        out.stderr
    );
    // Located at the inputs' `[kv]` table: line 2, its key at column 2.
    assert!(
        out.stderr.contains(&format!("--> {without}:2:2")),
        "{}",
        out.stderr
    );
    let with = scratch(
        "window.toml",
        &format!("{pool}sequences = 2\nchunk_tokens = 64\nmax_tokens = 4096\n"),
    );
    let out = run(&["plan", &circuit, "--inputs", &with, "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(term(&plan, "l0.local.k", "blocks")["units"], 416);
    assert_eq!(term(&plan, "l1.global.k", "blocks")["units"], 1_600);
}

/// The small inputs of `a_small_inputs_file_changes_the_figures`: 3 slots, bf16 KV of 10
/// blocks of 4 tokens, no verify, no draft KV, no caches.
fn small_inputs() -> String {
    scratch(
        "small_view.toml",
        "slots = 3\n\
         [formats]\n\
         kv_cache_dtype = \"bf16\"\n\
         ssm_h_storage = \"f32\"\n\
         ssm_conv_storage = \"f16\"\n\
         [kv]\n\
         blocks = 10\n\
         block_size = 4\n",
    )
}

/// `plan circuits/qwen3_5.toml --checkpoint tiny --inputs <small> <args>`: its table.
fn small_table(args: &[&str]) -> String {
    let inputs = small_inputs();
    let mut all = vec!["plan", CIRCUIT, "--checkpoint", "tiny", "--inputs", &inputs];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    out.stdout
}

/// The words of the row of the summary section under `heading` whose first word is `first`.
fn summary_row(table: &str, heading: &str, first: &str) -> Vec<String> {
    let section = table
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no section `{heading}` in\n{table}"))
        .1;
    section
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .find(|words| words.first().is_some_and(|w| w == first))
        .unwrap_or_else(|| panic!("no row `{first}` under `{heading}` in\n{table}"))
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

/// The lines of the term table of `space`: from its heading row to the blank line.
fn term_lines<'a>(table: &'a str, space: &str) -> Vec<&'a str> {
    let start = table
        .find(&format!("\n{space} arena: "))
        .unwrap_or_else(|| panic!("no {space} arena in\n{table}"));
    table[start + 1..]
        .lines()
        .skip(2)
        .take_while(|line| !line.is_empty())
        .collect()
}

/// The (state, holding, offset) of each term row of `space`, in table order.
fn term_rows(table: &str, space: &str) -> Vec<(String, String, u64)> {
    term_lines(table, space)
        .into_iter()
        .filter(|line| !line.starts_with("-- ") && !line.starts_with("subtotal: "))
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            let offset = w.last().and_then(|o| o.parse().ok()).expect("an offset");
            (w[0].to_owned(), w[2].to_owned(), offset)
        })
        .collect()
}

#[test]
fn the_summary_comes_first_with_figures_checked_by_hand() {
    let table = small_table(&["--terms"]);
    // The summary, then the terms.
    let summary = table.find("\nterm bytes per layer\n").expect("per layer");
    assert!(
        summary < table.find("\ndevice arena: ").expect("terms"),
        "{table}"
    );

    // Terms of tiny under the small inputs (8 layers, layers 3 and 7 full attention):
    // - model: 4 KV sides of 40 tokens x 16 bf16 = 1280 B, and each GDN layer's empty
    //   wy_table (no verify-table rows): 4 + 6 = 10 terms, 5120 B = 5.00 KiB;
    // - sequence: h (3 x 256 f32 = 3072) and conv (3 x 192 f16 = 1152) of 6 GDN layers, and the
    //   empty hidden capture: 12 + 1 = 13 terms, 6 x 4224 = 25344 B = 24.75 KiB;
    // - snapshot: 2 empty prefix snapshots per GDN layer and head.prefix_hidden: 13 terms;
    // - verify: head.accepted_hidden, empty: 1 term. All: 37 terms, 30464 B = 29.75 KiB.
    let lifetime = "term bytes per lifetime (padding excluded)";
    assert_eq!(
        summary_row(&table, lifetime, "lifetime"),
        words("lifetime terms device host")
    );
    for (row, expected) in [
        ("model", "model 10 5.00 KiB 0 B"),
        ("sequence", "sequence 13 24.75 KiB 0 B"),
        ("snapshot", "snapshot 13 0 B 0 B"),
        ("verify", "verify 1 0 B 0 B"),
        ("all", "all 37 29.75 KiB 0 B"),
    ] {
        assert_eq!(summary_row(&table, lifetime, row), words(expected));
    }
    // Only the kinds the plan has: 12 + 4 + 13 + 6 + 1 + 1 = 37 terms.
    let kind = "term bytes per kind";
    for (row, expected) in [
        ("recurrent", "recurrent device 12 24.75 KiB"),
        ("paged_kv", "paged_kv device 4 5.00 KiB"),
        ("prefix_snapshot", "prefix_snapshot device 13 0 B"),
        ("verify_table", "verify_table device 6 0 B"),
        ("accept_stash", "accept_stash device 1 0 B"),
        ("hidden_capture", "hidden_capture device 1 0 B"),
    ] {
        assert_eq!(summary_row(&table, kind, row), words(expected));
    }
    let kinds = table
        .split_once("\nterm bytes per kind\n")
        .expect("kinds")
        .1;
    let kind_rows = kinds.lines().take_while(|l| !l.is_empty()).count();
    assert_eq!(kind_rows, 1 + 6, "a heading and 6 kinds:\n{table}");
    assert!(
        !kinds
            .split("\n\n")
            .next()
            .unwrap_or("")
            .contains("ring_snapshot")
    );

    // A GDN layer: its h, conv, wy_table and two prefix snapshots, 3072 + 1152 = 4224 B =
    // 4.125 KiB, shown 4.13; a full-attention layer its k and v, 2 x 1280 = 2560 B.
    let layer_kind = "term bytes per layer kind";
    for (row, expected) in [
        ("prologue", "prologue - 0 0 B"),
        ("linear_attention", "linear_attention 6 30 24.75 KiB"),
        ("full_attention", "full_attention 2 4 5.00 KiB"),
        ("epilogue", "epilogue - 3 0 B"),
        ("draft", "draft - 0 0 B"),
    ] {
        assert_eq!(summary_row(&table, layer_kind, row), words(expected));
    }
    let layer = "term bytes per layer";
    assert_eq!(
        summary_row(&table, layer, "l0"),
        words("l0 linear_attention 5 4.13 KiB")
    );
    assert_eq!(
        summary_row(&table, layer, "l3"),
        words("l3 full_attention 2 2.50 KiB")
    );
    assert_eq!(
        summary_row(&table, layer, "l7"),
        words("l7 full_attention 2 2.50 KiB")
    );
    let layers = table
        .split_once("\nterm bytes per layer\n")
        .expect("layers")
        .1;
    assert_eq!(
        layers.lines().take_while(|l| !l.is_empty()).count(),
        1 + 8,
        "a heading and one line per layer:\n{table}"
    );

    // Qwen3.5-27B under the defaults. A GDN layer holds 13 terms: h (786432 f32 = 3145728 B a
    // unit) and conv (30720 bf16 = 61440 B) live, steps and checkpoint (9 + 36 + 9 units:
    // 173187072 B), their prefix snapshots (16 units: 51314688 B) and rings (36 units:
    // 115458048 B), the carry (9 h: 28311552 B), the carry table (288 B) and the wy table
    // (576 B): 368272224 B = 351.21 MiB. A full-attention layer: k and v of 32 MiB each.
    let out = run(&["plan", CIRCUIT, "--terms"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        summary_row(&out.stdout, layer, "l0"),
        words("l0 linear_attention 13 351.21 MiB")
    );
    assert_eq!(
        summary_row(&out.stdout, layer, "l63"),
        words("l63 full_attention 2 64.00 MiB")
    );
    // 16 x 2 KV sides of the layers, and the draft head's 2.
    assert_eq!(
        summary_row(&out.stdout, layer_kind, "full_attention"),
        words("full_attention 16 32 1.00 GiB")
    );
    assert_eq!(
        summary_row(&out.stdout, layer_kind, "draft"),
        words("draft - 2 64.00 MiB")
    );
}

#[test]
fn sort_lists_terms_by_offset_or_in_plan_order() {
    let plan = plan_json(&["--checkpoint", "tiny"]);
    let device: Vec<(String, String, u64)> = plan["terms"]
        .as_array()
        .expect("terms")
        .iter()
        .filter(|t| t["space"] == "device")
        .map(|t| {
            (
                t["state"].as_str().expect("state").to_owned(),
                t["holding"].as_str().expect("holding").to_owned(),
                u(&t["offset"]),
            )
        })
        .collect();
    // JSON terms are in plan order: `--sort plan` is that order.
    let out = run(&["plan", CIRCUIT, "--checkpoint", "tiny", "--sort", "plan"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("device arena: 89 terms, in plan order\n")
    );
    assert_eq!(term_rows(&out.stdout, "device"), device);
    // The default is by offset, plan order among equal offsets.
    let mut by_offset = device.clone();
    by_offset.sort_by_key(|(_, _, offset)| *offset);
    for args in [&["--sort", "offset"][..], &["--terms"]] {
        let mut all = vec!["plan", CIRCUIT, "--checkpoint", "tiny"];
        all.extend_from_slice(args);
        let out = run(&all);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("device arena: 89 terms, by offset\n"));
        let rows = term_rows(&out.stdout, "device");
        assert_eq!(rows, by_offset, "{args:?}");
        // The arena starts with layer 0's carry table (the model group comes first and the
        // tables of layer 0 before layer 3's KV); 288 B at 0, then its wy_table at 512.
        assert_eq!(rows[0], ("l0.gdn.carry_table".into(), "cache".into(), 0));
        assert_eq!(rows[1], ("l0.gdn.wy_table".into(), "cache".into(), 512));
    }
    let out = run(&["plan", CIRCUIT, "--sort", "size"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("invalid value 'size' for '--sort <ORDER>'"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("[possible values: offset, plan]"),
        "{}",
        out.stderr
    );
}

/// The sections of a grouped table's `space`: each heading with its subtotal's words and the
/// number of term rows in it.
fn sections(table: &str, space: &str) -> Vec<(String, Vec<String>, usize)> {
    let mut out: Vec<(String, Vec<String>, usize)> = Vec::new();
    for line in term_lines(table, space) {
        if let Some(heading) = line.strip_prefix("-- ") {
            out.push((heading.to_owned(), Vec::new(), 0));
        } else if let Some(last) = out.last_mut() {
            if line.starts_with("subtotal: ") {
                last.1 = words(line);
            } else {
                last.2 += 1;
            }
        } else {
            panic!("a row before any section: {line}");
        }
    }
    out
}

#[test]
fn group_splits_the_terms_into_sections_with_subtotals() {
    // The figures of `the_summary_comes_first_with_figures_checked_by_hand`, per section.
    let table = small_table(&["--group", "lifetime"]);
    assert!(table.contains("device arena: 37 terms, by offset, grouped by lifetime\n"));
    let expected = [
        ("lifetime model", "subtotal: 10 terms 5.00 KiB", 10),
        ("lifetime sequence", "subtotal: 13 terms 24.75 KiB", 13),
        ("lifetime snapshot", "subtotal: 13 terms 0 B", 13),
        ("lifetime verify", "subtotal: 1 term 0 B", 1),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|&(h, s, n)| (h.to_owned(), words(s), n))
        .collect();
    assert_eq!(sections(&table, "device"), expected);

    let table = small_table(&["--group", "kind"]);
    let expected = [
        ("kind recurrent", "subtotal: 12 terms 24.75 KiB", 12),
        ("kind paged_kv", "subtotal: 4 terms 5.00 KiB", 4),
        ("kind prefix_snapshot", "subtotal: 13 terms 0 B", 13),
        ("kind verify_table", "subtotal: 6 terms 0 B", 6),
        ("kind accept_stash", "subtotal: 1 term 0 B", 1),
        ("kind hidden_capture", "subtotal: 1 term 0 B", 1),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|&(h, s, n)| (h.to_owned(), words(s), n))
        .collect();
    assert_eq!(sections(&table, "device"), expected);

    // By layer: every layer in index order, then the epilogue; no prologue (no state) and no
    // draft section (no draft KV under these inputs).
    let table = small_table(&["--group", "layer", "--sort", "plan"]);
    let got = sections(&table, "device");
    let headings: Vec<&str> = got.iter().map(|(h, _, _)| h.as_str()).collect();
    assert_eq!(
        headings,
        [
            "l0 (linear_attention)",
            "l1 (linear_attention)",
            "l2 (linear_attention)",
            "l3 (full_attention)",
            "l4 (linear_attention)",
            "l5 (linear_attention)",
            "l6 (linear_attention)",
            "l7 (full_attention)",
            "epilogue",
        ]
    );
    assert_eq!(got[0].1, words("subtotal: 5 terms 4.13 KiB"));
    assert_eq!(got[3].1, words("subtotal: 2 terms 2.50 KiB"));
    assert_eq!(got[8].1, words("subtotal: 3 terms 0 B"));
    // Every term once: 6 x 5 + 2 x 2 + 3 = 37.
    assert_eq!(got.iter().map(|(_, _, n)| n).sum::<usize>(), 37);
    // Inside a section, the sort holds: layer 0 in plan order.
    let rows = term_rows(&table, "device");
    let l0: Vec<&str> = rows.iter().take(5).map(|(s, _, _)| s.as_str()).collect();
    assert_eq!(
        l0,
        [
            "l0.gdn.h",
            "l0.gdn.conv",
            "l0.gdn.h_prefix",
            "l0.gdn.conv_prefix",
            "l0.gdn.wy_table"
        ]
    );

    let twice = run(&["plan", CIRCUIT, "--group", "kind", "--group", "layer"]);
    assert_eq!(twice.code, 2, "{}", twice.stderr);
    let bad = run(&["plan", CIRCUIT, "--group", "space"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("[possible values: layer, kind, lifetime]"),
        "{}",
        bad.stderr
    );
}

/// `totals.<path>` of a plan as (terms, bytes).
fn total(plan: &Value, path: &[&str]) -> (u64, u64) {
    let mut value = &plan["totals"];
    for key in path {
        value = &value[*key];
    }
    (u(&value["terms"]), u(&value["bytes"]))
}

#[test]
fn plan_json_has_totals_per_lifetime_and_kind() {
    let inputs = small_inputs();
    let small = plan_json(&["--checkpoint", "tiny", "--inputs", &inputs]);
    // The figures of `the_summary_comes_first_with_figures_checked_by_hand`.
    for (lifetime, expected) in [
        ("model", (10, 5120)),
        ("sequence", (13, 25_344)),
        ("snapshot", (13, 0)),
        ("verify", (1, 0)),
    ] {
        assert_eq!(total(&small, &["lifetime", "device", lifetime]), expected);
        assert_eq!(total(&small, &["lifetime", "host", lifetime]), (0, 0));
    }
    assert_eq!(total(&small, &["kind", "recurrent"]), (12, 25_344));
    assert_eq!(total(&small, &["kind", "paged_kv"]), (4, 5120));
    // Every kind is there, those without a term as zeros.
    assert_eq!(
        small["totals"]["kind"].as_object().expect("kinds").len(),
        12
    );
    assert_eq!(total(&small, &["kind", "ring_snapshot"]), (0, 0));
    assert_eq!(total(&small, &["kind", "prompt_lookup_index"]), (0, 0));

    let plan = plan_json(&[]);
    // Under the defaults: 16 full-attention layers and the draft head have a k and a v of
    // 2048 x 16 tokens x 4 x 256 fp8 = 33554432 B each: 34 sides, 1140850688 B.
    assert_eq!(total(&plan, &["kind", "paged_kv"]), (34, 1_140_850_688));
    // 48 GDN layers x (h: 9 + 36 + 9 units of 786432 f32 = 169869312 B; conv: 9 + 36 + 9
    // units of 30720 bf16 = 3317760 B) = 48 x 173187072 = 8312979456 B in 288 terms.
    assert_eq!(total(&plan, &["kind", "recurrent"]), (288, 8_312_979_456));
    // The model lifetime: the KV sides, and per GDN layer a carry table (9 rows of 4 u64 =
    // 288 B) and a wy table (36 rows of 2 u64 = 576 B): 1140850688 + 48 x 864 = 1140892160 B.
    assert_eq!(
        total(&plan, &["lifetime", "device", "model"]),
        (34 + 48 + 48, 1_140_892_160)
    );
    assert_eq!(
        total(&plan, &["lifetime", "host", "sequence"]),
        (1, 1_179_776)
    );
    // The totals add up to the terms, per space and over the kinds.
    let terms = plan["terms"].as_array().expect("terms");
    for space in ["device", "host"] {
        let (count, bytes) = ["model", "sequence", "snapshot", "verify"]
            .iter()
            .map(|l| total(&plan, &["lifetime", space, l]))
            .fold((0, 0), |(c, b), (tc, tb)| (c + tc, b + tb));
        let of_space = terms.iter().filter(|t| t["space"] == space);
        assert_eq!(count, of_space.clone().count() as u64, "{space}");
        assert_eq!(
            bytes,
            of_space.map(|t| u(&t["bytes"])).sum::<u64>(),
            "{space}"
        );
    }
    let kinds = plan["totals"]["kind"].as_object().expect("kinds");
    let count: u64 = kinds.values().map(|k| u(&k["terms"])).sum();
    assert_eq!(count, terms.len() as u64);
    // Today's fields are all still there.
    for key in [
        "circuit",
        "checkpoint",
        "align",
        "terms",
        "device_bytes",
        "host_bytes",
    ] {
        assert!(plan.get(key).is_some(), "{key}");
    }
    // --sort and --group shape the table only: the JSON is the same.
    assert_eq!(plan_json(&["--sort", "plan", "--group", "kind"]), plan);
}

#[test]
fn import_prints_the_checkpoint_table_of_a_config() {
    // gpt-oss-20b's shipped config through circuits/gpt_oss.toml's [config]: the figures of the
    // published file (24 layers alternating sliding and full from layer 0, 2880 wide, 64 query
    // and 8 KV heads of 64, a 128-token window); the file has no `_name_or_path`, so the name
    // is the file's stem and there is no hf line.
    let out = run(&[
        "import",
        "circuits/gpt_oss.toml",
        "circuits/configs/gpt_oss_20b.json",
    ]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    assert_eq!(
        out.stdout,
        "[checkpoint.gpt_oss_20b]\nlayers = 24\npattern = \"SFSFSFSFSFSFSFSFSFSFSFSF\"\n\
         dims = { hidden = 2880, q_heads = 64, kv_heads = 8, head_dim = 64, sliding_window = 128 }\n"
    );
    let out = run(&[
        "import",
        "circuits/gpt_oss.toml",
        "circuits/configs/gpt_oss_20b.json",
        "--name",
        "mine",
        "--hf",
        "me/gpt-oss-20b-tuned",
    ]);
    // (An `hf` another checkpoint pins, `openai/gpt-oss-20b`, is refused: two checkpoints of one
    // id would make `Checkpoint::from_hf` ambiguous.)
    assert!(
        out.stdout
            .starts_with("[checkpoint.mine]\nhf = \"me/gpt-oss-20b-tuned\"\n"),
        "{}",
        out.stdout
    );
    // A config missing a key: exit 1, the key named at its place in the JSON.
    let bad = scratch("no_window.json", "{\n  \"num_hidden_layers\": 2\n}\n");
    let out = run(&["import", "circuits/gpt_oss.toml", &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("error: missing config key `layer_types`")
            && out.stderr.contains(&format!("--> {bad}:1:1")),
        "{}",
        out.stderr
    );
    // A circuit without [config] is bad input too; a missing argument is usage.
    let plain = scratch(
        "plain.toml",
        "schema = 1\narch = \"p\"\ndims = [\"d\"]\n[layout]\nkind = \"interval\"\nperiod = 1\n\
         [layout.blocks]\nfull_attention = [\"b\"]\n[checkpoint.c]\nlayers = 1\ndims = { d = 1 }\n\
         [[block.b.state]]\nid = \"k\"\nkind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d\"\n",
    );
    let out = run(&["import", &plain, &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("has no `[config]` table"),
        "{}",
        out.stderr
    );
    assert_eq!(run(&["import", "circuits/gpt_oss.toml"]).code, 2);
}

#[test]
fn fit_kv_blocks_is_exact_at_80_gib() {
    let fit = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "80GiB",
        "--for",
        "kv-blocks",
        "--json",
    ]);
    assert_eq!(fit.code, 0, "{}", fit.stderr);
    let fit: Value = serde_json::from_str(&fit.stdout).unwrap();
    assert_eq!(fit["for"], "kv-blocks");
    // 80 GiB = 80 x 2^30 bytes.
    assert_eq!(fit["budget"], 85_899_345_920_u64);
    let value = fit["value"].as_u64().unwrap();
    // `plan` with the default inputs but `blocks = value` fits; one more block does not, and
    // the two plans' device bytes are the ones fit printed.
    let default = include_str!("../inputs/default.toml");
    let with_blocks = |blocks: u64| {
        let text = default.replacen("blocks = 2048", &format!("blocks = {blocks}"), 1);
        assert_ne!(text, default);
        scratch(&format!("fit_{blocks}.toml"), &text)
    };
    let at = plan_json(&["--inputs", &with_blocks(value)]);
    let next = plan_json(&["--inputs", &with_blocks(value + 1)]);
    assert_eq!(at["device_bytes"], fit["device_bytes"]);
    assert_eq!(next["device_bytes"], fit["next_device_bytes"]);
    assert!(at["device_bytes"].as_u64().unwrap() <= 85_899_345_920);
    assert!(next["device_bytes"].as_u64().unwrap() > 85_899_345_920);
    // One more block of 16 tokens of 16 full-attention layers x 2 sides x 4 KV heads x 256
    // (fp8, 1 B) = 32,768 B per token, 524,288 B per block: the arena grows by exactly that.
    assert_eq!(
        next["device_bytes"].as_u64().unwrap() - at["device_bytes"].as_u64().unwrap(),
        524_288
    );
    let table = run(&["fit", CIRCUIT, "--budget", "80GiB", "--for", "kv-blocks"]);
    assert!(
        table.stdout.contains("bytes per KV token        32768 B"),
        "{}",
        table.stdout
    );
    // 48 GDN layers x (h 3,145,728 B + conv 61,440 B) = 153,944,064 B per sequence slot.
    assert!(
        table
            .stdout
            .contains("bytes per sequence slot   153944064 B"),
        "{}",
        table.stdout
    );
}

#[test]
fn fit_refuses_a_budget_too_small_and_a_malformed_size() {
    let out = run(&["fit", CIRCUIT, "--budget", "1MiB", "--for", "kv-blocks"]);
    assert_eq!(out.code, 1);
    let zero = plan_json(&[
        "--inputs",
        &scratch(
            "fit_zero.toml",
            &include_str!("../inputs/default.toml").replacen("blocks = 2048", "blocks = 0", 1),
        ),
    ]);
    assert!(
        out.stderr.contains(&format!(
            "even 0 kv-blocks need {} device bytes",
            zero["device_bytes"]
        )),
        "{}",
        out.stderr
    );
    for bad in ["80XB", "GiB", "-1", "99999999999TiB"] {
        assert_eq!(
            run(&["fit", CIRCUIT, "--budget", bad, "--for", "kv-blocks"]).code,
            2,
            "{bad}"
        );
    }
    // Units: 512MiB = 536,870,912 bytes, 80GB = 80,000,000,000.
    let budget = |size: &str| {
        let out = run(&[
            "fit",
            CIRCUIT,
            "--budget",
            size,
            "--for",
            "kv-blocks",
            "--json",
        ]);
        let out: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        out["budget"].clone()
    };
    assert_eq!(budget("80GB"), 80_000_000_000_u64);
    assert_eq!(budget("20000000000"), 20_000_000_000_u64);
}

#[test]
fn plan_json_says_unit_bytes_and_kv_blocks() {
    let plan = plan_json(&[]);
    // l0.gdn.h: 48 value heads x 128 x 128 f32 = 3,145,728 B per slot.
    assert_eq!(term(&plan, "l0.gdn.h", "live")["unit_bytes"], 3_145_728);
    // l3.attn.k: one token is 4 KV heads x 256 fp8 = 1,024 B; the default pool is 2,048
    // blocks of 16 tokens.
    let k = term(&plan, "l3.attn.k", "blocks");
    assert_eq!(
        (
            &k["unit_bytes"],
            &k["blocks"],
            &k["block_size"],
            &k["units"]
        ),
        (
            &Value::from(1_024),
            &Value::from(2_048),
            &Value::from(16),
            &Value::from(32_768)
        )
    );
    // Only paged sides have blocks.
    assert!(term(&plan, "l0.gdn.h", "live").get("blocks").is_none());
    // The lookup index's unit is one entry (2 u32 = 8 B), though its bytes follow the
    // hash-table law.
    assert_eq!(term(&plan, "head.lookup_index", "cache")["unit_bytes"], 8);
}

#[test]
fn fit_sequences_is_exact_at_80_gib_and_32k_context() {
    let fit = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "80GiB",
        "--for",
        "sequences",
        "--context",
        "32768",
        "--json",
    ]);
    assert_eq!(fit.code, 0, "{}", fit.stderr);
    let fit: Value = serde_json::from_str(&fit.stdout).unwrap();
    assert_eq!(fit["for"], "sequences");
    let value = fit["value"].as_u64().unwrap();
    // `plan` under the built-in profile at `value` sequences of 32,768 tokens fits the 80 GiB;
    // one more sequence does not, and the device bytes are the ones fit printed.
    let profile = include_str!("../inputs/serving.toml");
    let with = |sequences: u64| {
        let text = profile
            .replacen("sequences = 8", &format!("sequences = {sequences}"), 1)
            .replacen(
                "tokens_per_sequence = 4096",
                "tokens_per_sequence = 32768",
                1,
            );
        assert!(text.contains(&format!("sequences = {sequences}\n")));
        scratch(&format!("fit_seq_{sequences}.toml"), &text)
    };
    let at = plan_json(&["--inputs", &with(value)]);
    let next = plan_json(&["--inputs", &with(value + 1)]);
    assert_eq!(at["device_bytes"], fit["device_bytes"]);
    assert_eq!(next["device_bytes"], fit["next_device_bytes"]);
    assert!(at["device_bytes"].as_u64().unwrap() <= 85_899_345_920);
    assert!(next["device_bytes"].as_u64().unwrap() > 85_899_345_920);
    // The main pool of `value` sequences: value x 32768 / 16 blocks.
    assert_eq!(
        term(&at, "l3.attn.k", "blocks")["blocks"],
        value * 32_768 / 16
    );
    // `--for sequences` needs `--context` (usage), and a profile in the inputs named.
    assert_eq!(
        run(&["fit", CIRCUIT, "--budget", "80GiB", "--for", "sequences"]).code,
        2
    );
    assert_eq!(
        run(&[
            "fit",
            CIRCUIT,
            "--budget",
            "80GiB",
            "--for",
            "kv-blocks",
            "--context",
            "8"
        ])
        .code,
        2
    );
    let plain = scratch("no_profile.toml", include_str!("../inputs/default.toml"));
    let out = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "80GiB",
        "--for",
        "sequences",
        "--context",
        "8",
        "--inputs",
        &plain,
    ]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("has none"), "{}", out.stderr);
}

#[test]
fn fit_kv_blocks_under_a_profile_grows_the_tied_draft_pool() {
    // The built-in profile ties the draft pool to the main one (`draft_kv = true`).
    let profile = include_str!("../inputs/serving.toml");
    let inputs = scratch("fit_tied.toml", profile);
    let fit = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "80GiB",
        "--for",
        "kv-blocks",
        "--inputs",
        &inputs,
        "--json",
    ]);
    assert_eq!(fit.code, 0, "{}", fit.stderr);
    let fit: Value = serde_json::from_str(&fit.stdout).unwrap();
    let value = fit["value"].as_u64().unwrap();
    // `plan` with the profile's pool at `value` blocks: both pools hold them, and it is the
    // arena fit printed; one more block does not fit.
    let with = |blocks: u64| {
        let text = profile.replacen(
            "tokens_per_sequence = 4096",
            &format!("blocks = {blocks}"),
            1,
        );
        scratch(&format!("fit_tied_{blocks}.toml"), &text)
    };
    let at = plan_json(&["--inputs", &with(value)]);
    assert_eq!(at["device_bytes"], fit["device_bytes"]);
    assert_eq!(term(&at, "l3.attn.k", "blocks")["blocks"], value);
    assert_eq!(term(&at, "draft.attn.k", "blocks")["blocks"], value);
    let next = plan_json(&["--inputs", &with(value + 1)]);
    assert!(next["device_bytes"].as_u64().unwrap() > 85_899_345_920);
    // Without the tie (the default inputs' explicit draft pool of 2048 blocks), more main
    // blocks fit: the draft pool stays as given.
    let untied = run(&[
        "fit",
        CIRCUIT,
        "--budget",
        "80GiB",
        "--for",
        "kv-blocks",
        "--json",
    ]);
    let untied: Value = serde_json::from_str(&untied.stdout).unwrap();
    assert!(untied["value"].as_u64().unwrap() > value);
}

/// `fit` of Llama-3.1-8B under `inputs`, sequences of 32,768 tokens in 40 GiB.
fn fit_llama_32k(inputs: &str, json: bool) -> Run {
    let mut args = vec![
        "fit",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        inputs,
        "--for",
        "sequences",
        "--context",
        "32768",
        "--budget",
        "40GiB",
    ];
    if json {
        args.push("--json");
    }
    run(&args)
}

#[test]
fn fit_under_the_vllm_pool_reports_what_vllm_logs() {
    // Llama-3.1-8B, bf16, a default server's vLLM pool, requests of 32,768 tokens at 40 GiB:
    // pages of 16 x 8 x 128 x 2 x 2 = 65,536 B over 32 slots, 40 GiB / 2 MiB = 20,480 pages;
    // 2048 pages a request; (20,480 - 1) / 2048 = 9 at once; vLLM logs 10.00x and 327,680 tokens
    // (tests/tests/pool.rs works the same figures).
    let inputs = scratch(
        "vllm-pool.toml",
        "[formats]\nkv_cache_dtype = \"bf16\"\n[serving]\nsequences = 1\n\
         [pool]\npolicy = \"vllm\"\ncontext = 32768\n",
    );
    let out = fit_llama_32k(&inputs, true);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let fit: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(fit["policy"], "vllm");
    assert_eq!(fit["value"], 9);
    for (key, want) in [
        ("block_tokens", 16),
        ("page_bytes", 65_536),
        ("pool_slots", 32),
        ("pool_groups", 1),
        ("request_pages", 2048),
        ("pool_pages", 20_480),
        ("pool_tokens", 327_680),
        ("admitted", 9),
    ] {
        assert_eq!(fit[key], want, "{key}");
    }
    assert_eq!(fit["concurrency"], 10.0);
    // The pool's marginal figures, not the arenas': a page in each of 32 slots,
    // 32 x 65,536 = 2,097,152 B; a request's 2048 pages, 4,294,967,296 B, which is what one more
    // sequence costs. There is no arena KV block to cost.
    assert_eq!(fit["marginal_page_bytes"], 2_097_152);
    assert_eq!(fit["marginal_request_bytes"], 4_294_967_296_u64);
    assert_eq!(fit["marginal_bytes"], 4_294_967_296_u64);
    assert_eq!(fit["marginal_block_bytes"], Value::Null);
    assert_eq!(fit["pool_context"], 32_768);
    // The table says the same under vLLM's names, and `plan` shows the pool's layers.
    let table = fit_llama_32k(&inputs, false);
    for line in [
        "GPU KV cache size         327,680 tokens",
        "Maximum concurrency       10.00x for 32,768 tokens per request (2048 pages a request)",
        "one more page costs       2097152 B (a page of 65536 B in each of 32 slots)",
        "one more request costs    4294967296 B (2048 pages of 32,768 tokens)",
    ] {
        assert!(table.stdout.contains(line), "{line}\n{}", table.stdout);
    }
    // The arenas' per-block and per-slot figures mean nothing under the pool.
    for arena_only in [
        "one more KV block costs",
        "bytes per sequence slot",
        "bytes per KV token",
    ] {
        assert!(!table.stdout.contains(arena_only), "{}", table.stdout);
    }
    let plan = run(&[
        "plan",
        "circuits/llama.toml",
        "--checkpoint",
        "llama_3_1_8b",
        "--inputs",
        &inputs,
    ]);
    assert!(
        plan.stdout
            .contains("page pool (vllm) at device offset 0: 2049 pages"),
        "{}",
        plan.stdout
    );
    // Under the arenas, the answer carries the policy and no pool field.
    let arenas = scratch(
        "arenas.toml",
        "[formats]\nkv_cache_dtype = \"bf16\"\n[serving]\nsequences = 1\n\
         kv = { block_size = 16, tokens_per_sequence = 32768 }\n",
    );
    let out = fit_llama_32k(&arenas, true);
    let fit: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(
        (fit["policy"].clone(), fit.get("pool_pages")),
        ("arenas".into(), None)
    );
    assert_eq!(fit["value"], 10);
}

/// KV shared across layers: `plan` lists each side that reads another layer's KV with its
/// owner and the owner's blocks (the table) or `state` and `owner` (the JSON), and a rank that
/// holds a reader without its owner is refused, naming both, with what to change.
#[test]
fn plan_shows_each_shared_side_and_its_owner() {
    let circuit = "tests/ui/circuits/shared_kv.toml";
    let out = run(&["plan", circuit]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let table = out
        .stdout
        .split("\nKV shared across layers: 9 sides read another layer's KV, no term of their own\n")
        .nth(1)
        .expect("the section");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .take(10)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["state", "reads", "bytes", "offset"]);
    assert_eq!(rows[1][..2], ["l5.swa_reader.k", "l3.swa.k"]);
    assert_eq!(rows[9][..2], ["l7.cross.k", "l2.attn.k"]);
    let json = run(&["plan", circuit, "--json"]);
    let plan: Value = serde_json::from_str(&json.stdout).expect("JSON");
    let shared = plan["shared"].as_array().expect("`shared`");
    assert_eq!(shared.len(), 9);
    assert_eq!(
        (shared[8]["state"].as_str(), shared[8]["owner"].as_str()),
        (Some("l7.cross.k"), Some("l2.attn.k"))
    );
    // The owner's offset is the one the table shows, and no term is the reader's.
    assert_eq!(
        rows[9][4].parse::<u64>().ok(),
        Some(u(&term(&plan, "l2.attn.k", "blocks")["offset"]))
    );
    assert!(!has_term(&plan, "l7.cross.k", "blocks"));
    // A plan without readers has no `shared` key.
    assert!(plan_json(&[]).get("shared").is_none());
    let refused = run(&["plan", circuit, "--pp", "2"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.starts_with(
            "error: KV side `l5.swa_reader.k` reads the KV of `l3.swa.k`, which the plan does \
             not hold (a pipeline rank must hold the layer a shared KV is kept in)\n"
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("= help: split the layers"),
        "{}",
        refused.stderr
    );
}
