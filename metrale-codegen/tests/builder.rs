//! The `build.rs` API: output file, write-only-on-change, rerun lines for what was read and
//! never for what was written, the options, and located diagnostics on a bad circuit.

use std::path::{Path, PathBuf};

use metrale_codegen::{Builder, Options, generate_file};

/// A fresh folder under the target dir, removed first if a previous run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn qwen() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/qwen3_5.toml")
}

fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn writes_arch_rs_and_watches_every_file_read() {
    let out_dir = scratch("builder_writes");
    let mut out = Vec::new();
    let compiled = Builder::new()
        .circuit(qwen())
        .out_dir(&out_dir)
        .compile_to(&mut out)
        .expect("compiles");
    let target = out_dir.join("qwen3_5.rs");
    assert_eq!(compiled.outputs, std::slice::from_ref(&target));
    assert_eq!(compiled.written, std::slice::from_ref(&target));
    let expected = generate_file(&qwen(), &Options::default()).expect("generates");
    assert_eq!(
        std::fs::read_to_string(&target).expect("written"),
        expected.code
    );
    // The circuit and its one library, and nothing under OUT_DIR.
    let rerun = lines(&out);
    assert_eq!(rerun.len(), 2, "{rerun:?}");
    assert!(rerun[0].starts_with("cargo::rerun-if-changed=") && rerun[0].ends_with("qwen3_5.toml"));
    assert!(
        rerun[1].ends_with("blocks/qwen3_attention.toml"),
        "{rerun:?}"
    );
    assert!(
        rerun
            .iter()
            .all(|l| !l.contains(out_dir.to_string_lossy().as_ref()))
    );
}

#[test]
fn rewrites_only_when_the_bytes_change() {
    let out_dir = scratch("builder_unchanged");
    let builder = Builder::new().circuit(qwen()).out_dir(&out_dir);
    builder.compile_to(&mut Vec::new()).expect("first");
    let target = out_dir.join("qwen3_5.rs");
    let first = std::fs::metadata(&target)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = builder.compile_to(&mut Vec::new()).expect("second");
    assert!(
        again.written.is_empty(),
        "unchanged bytes are not rewritten"
    );
    let second = std::fs::metadata(&target)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(first, second);
    std::fs::write(&target, "stale").expect("spoil");
    let third = builder.compile_to(&mut Vec::new()).expect("third");
    assert_eq!(third.written, [target]);
}

#[test]
fn rerun_lines_can_be_turned_off_and_the_runtime_path_changed() {
    let out_dir = scratch("builder_options");
    let mut out = Vec::new();
    Builder::new()
        .circuit(qwen())
        .out_dir(&out_dir)
        .rerun_if_changed(false)
        .runtime_path("crate::rt")
        .compile_to(&mut out)
        .expect("compiles");
    assert!(out.is_empty());
    let code = std::fs::read_to_string(out_dir.join("qwen3_5.rs")).expect("written");
    assert!(code.contains("use crate::rt as __rt;"));
    assert!(!code.contains("::metrale_circuit"));
    let bad = Builder::new()
        .circuit(qwen())
        .out_dir(&out_dir)
        .runtime_path("not a path")
        .compile_to(&mut Vec::new())
        .expect_err("refused");
    assert!(
        bad.to_string()
            .contains("runtime path `not a path` is not a Rust path")
    );
}

#[test]
fn a_bad_circuit_fails_with_its_located_diagnostic() {
    let dir = scratch("builder_bad");
    let circuit = dir.join("bad.toml");
    let good = std::fs::read_to_string(qwen()).expect("qwen");
    // One misspelled kind, a few lines into the file.
    let bad = good.replacen("kind = \"paged_kv\"", "kind = \"paged_kvv\"", 1);
    let bad = if bad == good {
        good.replacen("kind = \"recurrent\"", "kind = \"recurent\"", 1)
    } else {
        bad
    };
    assert_ne!(bad, good);
    std::fs::write(&circuit, &bad).expect("write");
    std::fs::create_dir_all(dir.join("blocks")).expect("blocks");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/blocks/qwen3_attention.toml"),
        dir.join("blocks/qwen3_attention.toml"),
    )
    .expect("library");
    let line = bad
        .lines()
        .position(|l| l.contains("recurent") || l.contains("paged_kvv"))
        .expect("line")
        + 1;
    let mut out = Vec::new();
    let error = Builder::new()
        .circuit(&circuit)
        .out_dir(dir.join("out"))
        .compile_to(&mut out)
        .expect_err("refused");
    let text = format!("{error:?}");
    assert!(
        text.contains(&format!("--> {}:{line}:8", circuit.display())),
        "{text}"
    );
    assert!(text.contains("did you mean"), "{text}");
    // The failed circuit is still watched, so fixing it reruns the build script.
    assert_eq!(lines(&out).len(), 1);
    assert!(!dir.join("out/qwen3_5.rs").exists());
}

#[test]
fn without_out_dir_it_needs_the_build_script_environment() {
    if std::env::var_os("OUT_DIR").is_some() {
        return;
    }
    let error = Builder::new().circuit(qwen()).compile_to(&mut Vec::new());
    assert!(
        error
            .expect_err("no OUT_DIR")
            .to_string()
            .contains("OUT_DIR is not set")
    );
}

/// Issue 22: the writer compares only with a regular file of the output's length, so a target
/// that is a device is written, never read (`gen -o /dev/zero` once read until memory ran out),
/// and leaves no temporary file behind.
#[test]
fn the_writer_reads_no_more_than_the_output() {
    use metrale_codegen::write_if_changed;
    let dir = scratch("writer_bounded");
    let target = dir.join("out.rs");
    assert_eq!(write_if_changed(&target, "first").ok(), Some(true));
    assert_eq!(write_if_changed(&target, "first").ok(), Some(false));
    // A longer file whose first bytes are the text is not the text.
    std::fs::write(&target, "first and more").unwrap();
    assert_eq!(write_if_changed(&target, "first").ok(), Some(true));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "first");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.rs"], "no temporary file is left");
    #[cfg(unix)]
    {
        // An endless device: written, not read.
        assert_eq!(
            write_if_changed(Path::new("/dev/zero"), "x").ok(),
            Some(true)
        );
        // A full one: the error, not a silent success.
        if Path::new("/dev/full").exists() {
            assert!(write_if_changed(Path::new("/dev/full"), "x").is_err());
        }
    }
}

/// Issue 22: two writers on one folder and a reader: every read sees one whole module, never
/// a truncated one (a write that truncated then wrote showed a torn file thousands of times).
#[test]
fn a_reader_never_sees_a_torn_output() {
    use metrale_codegen::write_if_changed;
    let dir = scratch("writer_torn");
    let target = dir.join("module.rs");
    let (a, b) = ("a".repeat(1 << 16), "b".repeat(1 << 16));
    let (a, b) = (a.as_str(), b.as_str());
    write_if_changed(&target, a).unwrap();
    std::thread::scope(|scope| {
        for (first, second) in [(a, b), (b, a)] {
            let target = &target;
            scope.spawn(move || {
                for _ in 0..200 {
                    write_if_changed(target, first).expect("written");
                    write_if_changed(target, second).expect("written");
                }
            });
        }
        for _ in 0..2000 {
            let read = std::fs::read_to_string(&target).expect("always there");
            assert!(
                read == a || read == b,
                "a torn read of {} bytes",
                read.len()
            );
        }
    });
}

/// Issue 22: a circuit path with a line break would split a `cargo::rerun-if-changed=` line
/// into a second instruction; it is an error instead, and no line holds it.
#[cfg(unix)]
#[test]
fn no_rerun_line_is_split_by_a_line_break() {
    let dir = scratch("builder_line_break").join("a\ncargo::rustc-cfg=evil");
    std::fs::create_dir_all(&dir).unwrap();
    let circuit = dir.join("llama.toml");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/llama.toml"),
    )
    .unwrap();
    std::fs::write(&circuit, text).unwrap();
    let mut out = Vec::new();
    let error = Builder::new()
        .circuit(&circuit)
        .out_dir(dir.join("out"))
        .compile_to(&mut out)
        .expect_err("refused");
    assert!(error.to_string().contains("line break"), "{error}");
    assert!(
        lines(&out)
            .iter()
            .all(|l| l.starts_with("cargo::rerun-if-changed=")),
        "{:?}",
        lines(&out)
    );
    assert!(!String::from_utf8_lossy(&out).contains("rustc-cfg"));
}
