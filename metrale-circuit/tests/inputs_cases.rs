//! The inputs file's error cases, kept as data under `tests/inputs_cases/`: each case is an
//! inputs file that [`InputsFile::parse`] refuses, beside the exact text its diagnostics render
//! (`path:line:col`, excerpt, carets, notes, help).
//!
//! A case is `<group>/<name>.toml`, grouped by the table it is about (`top` for the top-level
//! keys and the file as a whole); its expected output is `<group>/<name>.stderr`. Each is read
//! from disk and parsed under its path relative to `tests/inputs_cases/`
//! (`verify/more_entries_than_slots.toml`), so the positions in an expected file are those of
//! the case file beside it. A case is the file alone: errors that need the circuit's states
//! (`InputsFile::check_formats`) stay in `inputs_file.rs`, with the parsed values. One test
//! runs every case and lists every mismatch at once, each as a line diff; a case without an
//! expected file, an expected file without a case, any other file and a case that parses all
//! fail. `METRALE_BLESS=1 cargo test -p metrale-circuit --test inputs_cases` writes the
//! expected files; read each blessed file against its case (message, `line:col` counted in
//! the case, help) before committing it.

#[path = "support/diff.rs"]
mod diff;

use std::path::{Path, PathBuf};

use metrale_circuit::load::InputsFile;

/// The folder of the cases.
fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs_cases")
}

/// What the cases folder holds, each named relative to it without its extension.
#[derive(Default)]
struct Found {
    /// The `.toml` files: the cases.
    cases: Vec<String>,
    /// The `.stderr` files: the expected outputs.
    expected: Vec<String>,
    /// Files that are neither a case nor an expected file (named with their extension).
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
        match path.extension().and_then(|e| e.to_str()) {
            _ if path.is_dir() => walk(&path, &format!("{prefix}{file}/"), found),
            Some("toml") => found.cases.push(format!("{prefix}{stem}")),
            Some("stderr") => found.expected.push(format!("{prefix}{stem}")),
            _ => found.stray.push(format!("{prefix}{file}")),
        }
    }
}

/// The rendered diagnostics of the case `name`, ending in a newline as the expected files do;
/// `Err` when the file parses.
fn render(dir: &Path, name: &str) -> Result<String, String> {
    let shown = format!("{name}.toml");
    let path = dir.join(&shown);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    match InputsFile::parse(&shown, &text) {
        Ok(_) => Err("the file parses: a case is an inputs file the parser refuses".to_owned()),
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
    for name in &found.cases {
        let rendered = match render(&dir, name) {
            Ok(rendered) => rendered,
            Err(problem) => {
                failures.push(format!("{name}.toml: {problem}"));
                continue;
            }
        };
        let path = dir.join(format!("{name}.stderr"));
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == rendered => {}
            _ if bless => std::fs::write(&path, &rendered)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            Ok(expected) => failures.push(format!(
                "{name}.toml: the diagnostics differ from {name}.stderr (- expected, + rendered):\n{}",
                diff::lines(&expected, &rendered)
            )),
            Err(_) => failures.push(format!("{name}.toml: no expected file {name}.stderr")),
        }
    }
    for name in &found.expected {
        if !found.cases.contains(name) {
            failures.push(format!(
                "{name}.stderr: no case `{name}.toml` (delete it if the case was renamed)"
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
        "{} problem(s) among the {} inputs-file cases of metrale-circuit/tests/inputs_cases:\n\n{}\n\n\
         if every change is intended, bless with METRALE_BLESS=1 cargo test -p metrale-circuit \
         --test inputs_cases and read the new files",
        failures.len(),
        found.cases.len(),
        failures.join("\n\n")
    );
}
