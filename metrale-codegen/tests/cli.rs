//! The `metrale-codegen` binary, run from the workspace root: `plan` figures checked by hand
//! under the default and a small inputs file, the exit codes (clap's usage errors exit 2,
//! `--help` and `--version` exit 0 on stdout), and located errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const CIRCUIT: &str = "circuits/qwen3_5.toml";

/// What one run printed and how it ended.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
}

fn run(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_metrale-codegen"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    Run {
        code: output.status.code().expect("exited"),
        stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
    }
}

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
fn the_table_names_everything() {
    let out = run(&["plan", CIRCUIT, "--checkpoint", "tiny"]);
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
    // l0.gdn.h of tiny under the defaults: 9216 B = 9.00 KiB.
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("l0.gdn.h "))
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
            "--json",
        ] {
            assert!(
                out.stdout.contains(needle),
                "{args:?}: no `{needle}` in\n{}",
                out.stdout
            );
        }
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
        "openai/gpt-oss-20b",
    ]);
    assert!(
        out.stdout
            .starts_with("[checkpoint.mine]\nhf = \"openai/gpt-oss-20b\"\n"),
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
