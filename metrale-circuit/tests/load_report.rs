//! `load::load`'s report: the files a load read, also when
//! the circuit has errors (what a compiler front end tracks for rebuilds).

use std::path::Path;

mod common;

use common::TempDir;

const QWEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/qwen3_5.toml");

/// A circuit whose one block lives in library `lib`.
const CIRCUIT: &str = r#"schema = 1
arch = "t"
include = ["lib"]
dims = ["d"]
[layout]
kind = "interval"
period = 1
[layout.blocks]
full_attention = ["b"]
[checkpoint.c]
layers = 1
dims = { d = 2 }
"#;

const LIB: &str = r#"[[block.b.state]]
id = "s"
kind = "carry_stash"
format = "f32"
shape = "d"
"#;

#[test]
fn report_of_a_valid_circuit_matches_the_circuit() {
    let report = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: Path::new(QWEN),
        name: "circuits/qwen3_5.toml",
    });
    let circuit = report.circuit.unwrap();
    assert_eq!(report.read, circuit.read());
    assert_eq!(report.files, circuit.files());
    assert_eq!(report.read.len(), 2);
}

#[test]
fn errors_in_a_library_still_report_both_files() {
    let dir = TempDir::new("lib-error");
    let root = dir.write("c.toml", CIRCUIT);
    let lib = dir.write("blocks/lib.toml", &LIB.replace("carry_stash", "carry_stsh"));
    let report = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: &root,
        name: "c.toml",
    });
    let errors = report.circuit.unwrap_err();
    assert_eq!(errors.len(), 1, "{errors}");
    assert_eq!(report.read, [root, lib]);
    let names: Vec<&str> = report
        .files
        .iter()
        .map(metrale_circuit::load::diag::Source::name)
        .collect();
    assert_eq!(names, ["c.toml", "blocks/lib.toml"]);
}

#[test]
fn an_error_in_the_circuit_still_reports_its_libraries() {
    let dir = TempDir::new("root-error");
    let lib = dir.write("blocks/lib.toml", LIB);
    let text = CIRCUIT.replace("period = 1", "period = 0");
    let report = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::Text {
        name: "<inline>",
        text: &text,
        dir: Some(&dir),
    });
    assert!(report.circuit.is_err());
    assert_eq!(report.read, [lib], "a circuit given as text is not read");
    assert_eq!(report.files[0].text(), text);
}

#[test]
fn a_missing_file_reads_nothing() {
    let report = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: Path::new("no/such.toml"),
        name: "no/such.toml",
    });
    assert!(report.circuit.is_err());
    assert!(report.read.is_empty());
    assert!(report.files.is_empty());
}

#[test]
fn a_missing_library_reports_the_circuit() {
    let dir = TempDir::new("missing-lib");
    let root = dir.write("c.toml", CIRCUIT);
    let report = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: &root,
        name: "c.toml",
    });
    assert!(report.circuit.is_err());
    assert_eq!(report.read, [root]);
}
