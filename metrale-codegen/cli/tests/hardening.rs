//! The CLI's regression tests of the hardening issue: a plan that overflows names the inputs
//! key or the `--align` that caused it, located (class 10), and an empty circuit or inputs
//! path is a usage error rather than an empty location (class 12). The generator's classes are
//! in `metrale-codegen/tests/hardening.rs`. Issue 22 (the second round): output that cannot be
//! written is exit 1 with its I/O error, and `gen -o` to a pipe or device writes without
//! reading it.

mod common;

use std::path::PathBuf;

use metrale_circuit::load::{CircuitSource, load};

/// `plan` of `circuit` with the inputs `inputs` (written to a scratch file) and `extra` args.
fn plan_with(name: &str, circuit: &str, inputs: &str, extra: &[&str]) -> common::Run {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.toml"));
    std::fs::write(&path, inputs).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let mut args = vec!["plan", circuit, "--inputs", &path];
    args.extend_from_slice(extra);
    common::run(&args)
}

const LLAMA_INPUTS: &str =
    "slots = 8\n[formats]\nkv_cache_dtype = \"fp8\"\n[kv]\nblocks = 64\nblock_size = 16\n";

#[test]
fn a_plan_overflow_names_the_inputs_key_that_caused_it() {
    // Class 10: the overflow once named the circuit, without a line, and blamed "the counts".
    let inputs = LLAMA_INPUTS.replace("blocks = 64", "blocks = 18446744073709551615");
    let run = plan_with("overflow-blocks", "circuits/llama.toml", &inputs, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("overflow-blocks.toml");
    // `blocks` is line 5, its value at column 10.
    assert!(
        run.stderr
            .contains(&format!("--> {}:5:10\n", path.display())),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("with `[kv] blocks` at 1 the plan fits"));
    assert!(run.stderr.contains("help: lower `[kv] blocks`"));
    // A block size that overflows is named instead.
    let inputs = LLAMA_INPUTS.replace("block_size = 16", "block_size = 1152921504606846976");
    let run = plan_with("overflow-block-size", "circuits/llama.toml", &inputs, &[]);
    assert!(
        run.stderr.contains("help: lower `[kv] block_size`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_layout_overflow_from_the_alignment_names_align() {
    let run = plan_with(
        "overflow-align",
        "circuits/llama.toml",
        LLAMA_INPUTS,
        &["--align", "1152921504606846976"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("overflows u64 at `--align 1152921504606846976`"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("help: lower `--align`"));
    // The same inputs fit at the default alignment.
    let run = plan_with("fits", "circuits/llama.toml", LLAMA_INPUTS, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn an_empty_path_is_a_usage_error() {
    // Class 12: an empty circuit or inputs path once printed an empty location.
    for args in [
        &["check", ""][..],
        &["plan", "circuits/llama.toml", "--inputs", ""],
    ] {
        let run = common::run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("a value is required"), "{}", run.stderr);
    }
    // The library refuses it in words too, naming no file.
    let report = load(CircuitSource::File {
        path: std::path::Path::new(""),
        name: "",
    });
    let errors = report.circuit.unwrap_err();
    assert_eq!(
        errors.0[0].message,
        "cannot read circuit: its path is empty"
    );
}

/// Issue 22: output that cannot be written is exit 1 with the I/O error (`gen > /dev/full`
/// once exited 0 with nothing on stderr), for every command that prints.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_exit_1_with_the_error() {
    let full = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_metrale-codegen"))
            .args(args)
            .current_dir(common::root())
            .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
            .output()
            .expect("the binary runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let config = "circuits/configs/llama_3_1_8b.json";
    for args in [
        &["gen", "circuits/llama.toml"][..],
        &["plan", "circuits/llama.toml"],
        &[
            "fit",
            "circuits/llama.toml",
            "--for",
            "kv-blocks",
            "--budget",
            "1GiB",
            "--json",
        ],
        &["import", "circuits/llama.toml", config],
        &["schema", "circuit"],
    ] {
        let (code, stderr) = full(args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write the output to stdout: No space left on device"),
            "{args:?}: {stderr}"
        );
    }
    // `-o` to a device: the same error, from the writer.
    let run = common::run(&["gen", "circuits/llama.toml", "-o", "/dev/full"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
}

/// Issue 22: `gen -o` to a pipe writes the module and ends (it once read its target first,
/// and `gen -o /dev/stdout | wc -c` never ended).
#[cfg(target_os = "linux")]
#[test]
fn gen_to_a_pipe_writes_and_ends() {
    let run = common::run(&["gen", "circuits/llama.toml", "-o", "/dev/stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let module = common::run(&["gen", "circuits/llama.toml"]);
    assert_eq!(run.stdout, module.stdout);
}

/// Issue 22: a rank count is held to `MAX_RANKS` before any rank is collected (`fit --pp
/// 18446744073709551615` once grew memory until it aborted), from an option or the inputs
/// file (located there), and every rank is planned once per pipeline stage, its tensor-
/// parallel ranks summarized in the table (4,096 ranks once took 5.5 s, one row each).
#[test]
fn rank_counts_are_bounded_before_anything_is_collected() {
    for args in [
        &[
            "fit",
            "circuits/llama.toml",
            "--for",
            "kv-blocks",
            "--budget",
            "1GiB",
            "--pp",
            "18446744073709551615",
        ][..],
        &["plan", "circuits/llama.toml", "--tp", "1099511627776"],
        &["plan", "circuits/llama.toml", "--tp", "65536", "--pp", "2"],
    ] {
        let run = common::run(args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("more ranks than the limit of 65536"),
            "{}",
            run.stderr
        );
    }
    let inputs = format!("{LLAMA_INPUTS}[parallel]\ntp = 1099511627776\npp = 1\n");
    let run = plan_with("too-many-ranks", "circuits/llama.toml", &inputs, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "`parallel` is tp 1099511627776 x pp 1, 1099511627776 ranks, past the limit of 65536"
        ) && run.stderr.contains("too-many-ranks.toml:9:6"),
        "{}",
        run.stderr
    );

    // 4,096 tensor-parallel ranks: one row (every rank holds the same plan), their sum, and
    // one JSON entry per rank. Llama 3.1 8B's kv_heads (8) divides 4,096: each rank holds all
    // 8 heads' share, 1 head, replicated.
    let run = plan_with(
        "many-ranks",
        "circuits/llama.toml",
        LLAMA_INPUTS,
        &["--tp", "4096"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("0..4095"))
        .collect();
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    let run = plan_with(
        "many-ranks",
        "circuits/llama.toml",
        LLAMA_INPUTS,
        &["--tp", "4096", "--json"],
    );
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let ranks = json["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4096);
    assert_eq!(ranks[4095]["tp_rank"], 4095);
    let one = ranks[0]["device_bytes"].as_u64().unwrap();
    assert!(
        ranks
            .iter()
            .all(|r| r["device_bytes"].as_u64() == Some(one))
    );
    assert_eq!(json["device_bytes"].as_u64(), Some(4096 * one));
}

/// `import CIRCUIT CONFIG [extra]` of the published config `config` with `from` replaced by
/// `to` (written to a scratch file).
fn import_with(
    name: &str,
    circuit: &str,
    config: &str,
    from: &str,
    to: &str,
    extra: &[&str],
) -> common::Run {
    let text = std::fs::read_to_string(common::root().join(config)).unwrap();
    assert_eq!(text.matches(from).count(), 1, "`{from}` once in {config}");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.json"));
    std::fs::write(&path, text.replace(from, to)).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let mut args = vec!["import", circuit, &path];
    args.extend_from_slice(extra);
    common::run(&args)
}

/// `import` of `config` (with `from` replaced by `to`) into `circuit` is refused, printing
/// nothing, with an error that says `says`.
fn import_refused(
    name: &str,
    (circuit, config): (&str, &str),
    edit: (&str, &str),
    extra: &[&str],
    says: &str,
) {
    let run = import_with(name, circuit, config, edit.0, edit.1, extra);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, ""),
        "{name}: {}",
        run.stderr
    );
    assert!(run.stderr.contains(says), "{name}: {}", run.stderr);
}

/// Issue 22: `import` prints only a table the loader accepts (it once printed, with exit 0,
/// tables with a keyword, reserved, duplicate or 200-byte name, a conv kernel or window of 0,
/// a dim at `u64::MAX`), and refuses a key written twice in one object at the second.
#[test]
fn import_prints_only_what_loads() {
    let nemotron = (
        "circuits/nemotron_h.toml",
        "circuits/configs/nemotron_h_8b.json",
    );
    let gpt = ("circuits/gpt_oss.toml", "circuits/configs/gpt_oss_20b.json");
    let (kernel, same) = (
        "\"conv_kernel\": 4",
        ("\"conv_kernel\": 4", "\"conv_kernel\": 4"),
    );
    import_refused(
        "import-keyword",
        nemotron,
        same,
        &["--name", "fn"],
        "keyword",
    );
    import_refused(
        "import-reserved",
        nemotron,
        same,
        &["--name", "blocks"],
        "blocks",
    );
    import_refused(
        "import-duplicate",
        nemotron,
        same,
        &["--name", "tiny"],
        "already has a checkpoint `tiny`",
    );
    let long = "a".repeat(200);
    import_refused(
        "import-long",
        nemotron,
        same,
        &["--name", &long],
        "200 bytes long, the limit is 64",
    );
    // The loader's error on the derived dim says where the config gave the dim it reads.
    let conv = (kernel, "\"conv_kernel\": 0");
    import_refused("import-conv", nemotron, conv, &[], "conv_window");
    import_refused(
        "import-conv",
        nemotron,
        conv,
        &[],
        "`conv_kernel` is 0, read at",
    );
    import_refused("import-conv", nemotron, conv, &[], "import-conv.json:6:18");
    let window = ("\"sliding_window\": 128", "\"sliding_window\": 0");
    import_refused("import-window", gpt, window, &[], "window");
    let huge = (kernel, "\"conv_kernel\": 18446744073709551615");
    import_refused("import-huge", nemotron, huge, &[], "overflow");
    // A key written twice: refused at the second, naming the first.
    let run = import_with(
        "import-twice",
        "circuits/nemotron_h.toml",
        "circuits/configs/nemotron_h_8b.json",
        "\"conv_kernel\": 4,",
        "\"conv_kernel\": 4, \"conv_kernel\": 8,",
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("config key `conv_kernel` is written twice in one object")
            && run.stderr.contains("import-twice.json:6:21")
            && run.stderr.contains("first written at"),
        "{}",
        run.stderr
    );
}

/// Issue 22: a `[serving]` profile whose counts overflow is blamed on the count that alone
/// causes it, at its value (it once read "the size of state `the serving profile`", at the
/// table header), and a `--context` whose one sequence overflows says so instead of asking for
/// a budget of 2^64 - 1 bytes.
#[test]
fn a_profile_overflow_names_its_count() {
    let serving =
        std::fs::read_to_string(common::root().join("metrale-codegen/cli/inputs/serving.toml"))
            .unwrap();
    let huge = serving.replace(
        "tokens_per_sequence = 4096",
        "tokens_per_sequence = 18446744073709551615",
    );
    assert_ne!(huge, serving);
    let run = plan_with("profile-overflow", "circuits/qwen3_5.toml", &huge, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the serving profile's counts overflow u64")
            && run
                .stderr
                .contains("help: lower `[serving] kv.tokens_per_sequence`")
            && !run.stderr.contains("state `the serving profile`"),
        "{}",
        run.stderr
    );
    let line = huge.lines().position(|l| l.starts_with("kv = ")).unwrap() + 1;
    assert!(
        run.stderr
            .contains(&format!("profile-overflow.toml:{line}:47")),
        "{}",
        run.stderr
    );

    let run = common::run(&[
        "fit",
        "circuits/qwen3_5.toml",
        "--for",
        "sequences",
        "--context",
        "18446744073709551615",
        "--budget",
        "80GiB",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("the plan of one overflows u64")
            && run
                .stderr
                .contains("lower `--context 18446744073709551615`"),
        "{}",
        run.stderr
    );
}

/// Issue 22: an overflow caused by a window input or an `h_steps` entry names that key, at its
/// value, as one caused by `slots` does.
#[test]
fn window_and_h_steps_overflows_name_their_key() {
    let window = "slots = 8\n[formats]\nkv_cache_dtype = \"fp8\"\n[kv]\nblocks = 64\nblock_size = 16\n\
                  sequences = 4\nchunk_tokens = 18446744073709551615\nmax_tokens = 18446744073709551615\n";
    let run = plan_with("overflow-window", "circuits/gpt_oss.toml", window, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("overflow-window.toml:8:16")
            && run.stderr.contains("lower `[kv] chunk_tokens`"),
        "{}",
        run.stderr
    );
    let steps = "slots = 8\n[verify]\nh_steps = [18446744073709551615, 2]\nconv_steps = 4\n[formats]\n\
                 kv_cache_dtype = \"fp8\"\nssm_h_storage = \"f32\"\nssm_conv_storage = \"bf16\"\n\
                 [kv]\nblocks = 64\nblock_size = 16\n";
    let run = plan_with("overflow-steps", "circuits/qwen3_5.toml", steps, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("overflow-steps.toml:3:11")
            && run.stderr.contains("lower `[verify] h_steps`"),
        "{}",
        run.stderr
    );
}
