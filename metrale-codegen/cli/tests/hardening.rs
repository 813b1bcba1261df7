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
