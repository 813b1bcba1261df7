//! The `metrale-codegen` binary, run from the workspace root, where a check is not one run's
//! exact output (those are the cases of `tests/cli_cases/`, run by `cli_cases.rs`): properties
//! over every term of a plan, `fit`'s answers checked against the plans at and past them, and
//! output compared with the shipped files or written to one.

mod common;

use std::path::PathBuf;

use common::{root, run};

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

    // No KV is read across layers: no `shared` (its readers: the case `plan/shared_kv_json`).
    assert!(plan.get("shared").is_none());

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
fn the_default_table_fits_a_screen() {
    // Qwen3.5-27B, the README's first command: a summary, not 664 term rows (its text is the
    // case `plan/default`).
    let out = run(&["plan", CIRCUIT]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = out.stdout.lines().count();
    assert!(lines <= 45, "{lines} lines:\n{}", out.stdout);
}
#[test]
fn align_aligns_every_offset() {
    // (An align that is no power of two is refused: the cases `plan/align_*`.)
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
    // (The small inputs' totals, by hand, are in the case `plan/small`.)
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
    // (Its table's bytes per KV token and per slot, by hand: the case `fit/kv_blocks_table`.)
}

#[test]
fn fit_refuses_a_budget_too_small_for_0_kv_blocks() {
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
    // (Malformed sizes and units: the cases `usage/fit_budget_*` and `fit/budget_in_*`.)
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
    // (Without `--context`, or a profile in the inputs: the cases `usage/fit_*_context` and
    // `fit/inputs_without_profile`.)
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
