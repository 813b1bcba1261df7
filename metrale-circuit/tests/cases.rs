//! The loader's error cases, kept as data under `tests/cases/`: each case is a circuit the
//! loader refuses, beside the exact text its diagnostics render (`path:line:col`, excerpt,
//! carets, notes, help).
//!
//! A case is `<group>/<name>.toml` (a whole circuit), or `<group>/<name>/circuit.toml` with the
//! block libraries it includes under `<group>/<name>/blocks/`; its expected output is
//! `<group>/<name>.stderr`. Each is loaded from disk and named relative to `tests/cases/`
//! (`nodes/kv_side_updated.toml`), so the positions in an expected file are those of the case
//! file beside it. One test runs every case and lists every mismatch at once, each as a line
//! diff; a case without an expected file, an expected file without a case and a case that
//! loads all fail. `METRALE_BLESS=1 cargo test -p metrale-circuit --test cases` writes the
//! expected files; read each blessed file against its case (message, `line:col` counted in the
//! case, help) before committing it.

#[path = "support/diff.rs"]
mod diff;

use std::path::{Path, PathBuf};

use metrale_circuit::load::{CircuitSource, load};

/// The folder of the cases.
fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

/// One case: `<group>/<name>`, and the circuit file to load.
struct Case {
    name: String,
    circuit: PathBuf,
    /// The circuit's name in diagnostics: its path relative to the cases folder.
    shown: String,
}

/// What the cases folder holds.
#[derive(Default)]
struct Found {
    cases: Vec<Case>,
    /// The names of the `.stderr` files (without the extension).
    expected: Vec<String>,
    /// Files that are neither a case nor an expected file.
    stray: Vec<String>,
}

/// `dir` (named `prefix` relative to the cases folder) and the groups below it.
fn walk(dir: &Path, prefix: &str, found: &mut Found) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let file = path.file_name().expect("a name").to_string_lossy();
        let stem = path.file_stem().expect("a name").to_string_lossy();
        let extension = path.extension().and_then(|e| e.to_str());
        if path.is_dir() {
            let name = format!("{prefix}{file}");
            if path.join("circuit.toml").is_file() {
                found.cases.push(Case {
                    shown: format!("{name}/circuit.toml"),
                    circuit: path.join("circuit.toml"),
                    name,
                });
            } else {
                walk(&path, &format!("{name}/"), found);
            }
        } else if extension == Some("toml") {
            found.cases.push(Case {
                name: format!("{prefix}{stem}"),
                circuit: path.clone(),
                shown: format!("{prefix}{file}"),
            });
        } else if extension == Some("stderr") {
            found.expected.push(format!("{prefix}{stem}"));
        } else {
            found.stray.push(format!("{prefix}{file}"));
        }
    }
}

/// The rendered diagnostics of `case`, ending in a newline as the expected files do; `Err`
/// when the circuit loads.
fn render(case: &Case) -> Result<String, String> {
    match load(CircuitSource::File {
        path: &case.circuit,
        name: &case.shown,
    })
    .circuit
    {
        Ok(_) => Err("the circuit loads: a case is a circuit the loader refuses".to_owned()),
        Err(diagnostics) => Ok(diagnostics.render() + "\n"),
    }
}

#[test]
fn every_case_renders_its_expected_diagnostics() {
    let bless = std::env::var_os("METRALE_BLESS").is_some();
    let dir = cases_dir();
    let mut found = Found::default();
    walk(&dir, "", &mut found);
    assert!(!found.cases.is_empty(), "no case under {}", dir.display());
    let mut failures = Vec::new();
    for case in &found.cases {
        let rendered = match render(case) {
            Ok(rendered) => rendered,
            Err(problem) => {
                failures.push(format!("{}: {problem}", case.shown));
                continue;
            }
        };
        let path = dir.join(format!("{}.stderr", case.name));
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == rendered => {}
            _ if bless => std::fs::write(&path, &rendered)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            Ok(expected) => failures.push(format!(
                "{}: the diagnostics differ from {}.stderr (- expected, + rendered):\n{}",
                case.shown,
                case.name,
                diff::lines(&expected, &rendered)
            )),
            Err(_) => failures.push(format!(
                "{}: no expected file {}.stderr",
                case.shown, case.name
            )),
        }
    }
    for name in &found.expected {
        if !found.cases.iter().any(|case| &case.name == name) {
            failures.push(format!(
                "{name}.stderr: no case `{name}.toml` or `{name}/circuit.toml` (delete it if the case was renamed)"
            ));
        }
    }
    for name in &found.stray {
        failures.push(format!(
            "{name}: neither a case (`.toml`), an expected file (`.stderr`) nor a folder"
        ));
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) among the {} loader cases of metrale-circuit/tests/cases:\n\n{}\n\nif every \
         change is intended, bless with METRALE_BLESS=1 cargo test -p metrale-circuit --test \
         cases and read the new files",
        failures.len(),
        found.cases.len(),
        failures.join("\n\n")
    );
}
