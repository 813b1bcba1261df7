//! `check` and `gen` accept exactly the same circuits: run as the binary on every circuit of
//! the compile-fail suite (`tests/ui/fail`), of the loader's case files
//! (`metrale-circuit/tests/cases`) and of the names rules, and through the library
//! (the functions the two commands call) on every one-line deletion of the real circuits. Each
//! pair must agree on the exit code and print the same diagnostics.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use metrale_circuit::load::{CircuitSource, load};
use metrale_codegen::{Options, tokens};

use common::root;

/// Exit code and stderr of `metrale-codegen <command> <circuit>`.
fn run(command: &str, circuit: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_metrale-codegen"))
        .args([command, circuit.to_str().expect("utf-8 path")])
        .current_dir(root())
        .output()
        .expect("the binary runs");
    (
        output.status.code().expect("exited"),
        String::from_utf8(output.stderr).expect("utf-8 stderr"),
    )
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-agree");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The circuit a compile-fail case hands the macro: its inline text written beside the case
/// (so its includes resolve as they do for the macro), or the path it names.
fn circuit_of(case: &Path) -> Option<PathBuf> {
    let source = std::fs::read_to_string(case).expect("case readable");
    let call = &source[source.find("circuit!(")? + "circuit!(".len()..];
    if let Some(start) = call.find("inline = r#\"") {
        let text = &call[start + "inline = r#\"".len()..];
        let text = &text[..text.find("\"#")?];
        let path = case.with_extension("inline.toml");
        std::fs::write(&path, text).expect("written");
        Some(path)
    } else {
        let quoted = &call[call.find('"')? + 1..];
        Some(case.parent()?.join(&quoted[..quoted.find('"')?]))
    }
}

#[test]
fn check_and_gen_agree_on_the_compile_fail_suite() {
    let fail = root().join("tests/ui/fail");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&fail)
        .expect("the suite")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 6, "{} cases", cases.len());
    let mut refused = 0;
    for case in &cases {
        let Some(circuit) = circuit_of(case) else {
            panic!("no circuit in {}", case.display());
        };
        let check = run("check", &circuit);
        let generated = run("gen", &circuit);
        assert_eq!(check, generated, "{}", case.display());
        if check.0 == 1 {
            refused += 1;
        }
        if circuit.extension().is_some_and(|e| e == "toml")
            && circuit.to_string_lossy().ends_with(".inline.toml")
        {
            std::fs::remove_file(&circuit).expect("removed");
        }
    }
    // Every case but the two whose circuit is valid (the error is in the user's code).
    assert_eq!(refused, cases.len() - 2);
}

/// Every circuit of the loader's case files (`<group>/<name>.toml`, or
/// `<group>/<name>/circuit.toml` beside its `blocks/`): each is refused, by both alike.
#[test]
fn check_and_gen_agree_on_the_loader_cases() {
    let mut folders = vec![root().join("metrale-circuit/tests/cases")];
    let mut circuits = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("the cases") {
            let path = entry.expect("entry").path();
            if path.join("circuit.toml").is_file() {
                circuits.push(path.join("circuit.toml"));
            } else if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                circuits.push(path);
            }
        }
    }
    assert!(circuits.len() >= 100, "{} cases", circuits.len());
    for circuit in &circuits {
        let check = run("check", circuit);
        assert_eq!(check.0, 1, "{}: {}", circuit.display(), check.1);
        assert_eq!(check, run("gen", circuit), "{}", circuit.display());
    }
}

#[test]
fn check_and_gen_agree_on_the_names_rules() {
    let base = std::fs::read_to_string(root().join("circuits/nemotron_h.toml")).expect("read");
    let renamed = [
        (
            "[checkpoint.",
            "[checkpoint.units]\nlayers = 1\npattern = \"-\"\n[checkpoint.",
            "checkpoint `units` cannot be a module of the generated code",
        ),
        (
            "[layout.blocks]\n",
            "[layout.blocks]\nself = [\"mlp\"]\n",
            "`self` cannot name a Rust type",
        ),
    ];
    for (from, to, message) in renamed {
        assert!(base.contains(from), "{from}");
        let path = scratch().join("renamed.toml");
        std::fs::write(&path, base.replacen(from, to, 1)).expect("written");
        let check = run("check", &path);
        assert_eq!(check.0, 1, "{}", check.1);
        assert!(check.1.contains(message), "{}", check.1);
        assert_eq!(check, run("gen", &path));
    }
}

#[test]
fn the_library_paths_agree_on_every_line_deleted() {
    let mut compared = 0;
    for circuit in ["circuits/qwen3_5.toml", "circuits/nemotron_h.toml"] {
        let text = std::fs::read_to_string(root().join(circuit)).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        let dir = root().join("circuits");
        for skip in 0..lines.len() {
            // Deleting a blank line or a comment gives the same circuit again.
            let line = lines[skip].trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut mutant = lines[..skip].join("\n");
            mutant.push('\n');
            mutant.push_str(&lines[skip + 1..].join("\n"));
            let input = CircuitSource::Text {
                name: circuit,
                text: &mutant,
                dir: Some(&dir),
            };
            // `check` is the load; `gen` is the load, then the generator (its tokens: the
            // formatting after them cannot refuse a circuit).
            let checked = load(input).circuit;
            let generated = load(input)
                .circuit
                .and_then(|c| tokens(&c, &Options::default()));
            match (&checked, &generated) {
                (Ok(_), Ok(_)) => {}
                (Err(a), Err(b)) => assert_eq!(a.render(), b.render()),
                _ => panic!("line {} of {circuit}: check {checked:?}", skip + 1),
            }
            compared += 1;
        }
    }
    assert!(compared > 300, "{compared}");
}
