//! The config import cases, kept as data under `tests/import_cases/`: each case is a circuit
//! and a Hugging Face config.json, beside exactly what `metrale-codegen import` makes of them:
//! the checkpoint table it prints, or the diagnostics it renders (`path:line:col`, excerpt,
//! carets, notes, help).
//!
//! A case is a folder `<group>/<name>/` holding `circuit.toml` (it must load) and
//! `config.json`, and, when the case needs them, `options.toml`: `name` and `hf` (strings) are
//! [`ImportOptions`]; `like = "<checkpoint>"` reads the config for that checkpoint's generated
//! plan instead (`Circuit::dims_from_config`). The config is
//! read as the command reads it: [`import`] (the file stem, `config`, the name of last resort),
//! then `Circuit::with_imported`, so a table is printed only
//! once it loads. The expected output sits beside the folder: `<group>/<name>.out`, the table
//! (with `like`, one `dim = value` line per dim), when it imports; `<group>/<name>.stderr`,
//! the rendered diagnostics, when it fails. Files are named relative to `tests/import_cases/`
//! (`keys/missing/config.json`), so the positions in an expected file are those of the case
//! files. Sweeps over many configs and the command's own output stay in `metrale-cli`'s
//! `tests/import.rs`.
//!
//! One test runs every case and lists every mismatch at once, each as a line diff; a case
//! without its expected file (or with the other one), an expected file without a case, a
//! circuit that does not load, an unknown option and any other file all fail.
//! `METRALE_BLESS=1 cargo test -p metrale-circuit --features config --test import_cases`
//! writes the expected files (and deletes the other one of a case); read each blessed file
//! against its case (figures, message, `line:col` counted in the case files, help) before
//! committing it.

#[path = "support/diff.rs"]
mod diff;

use std::path::{Path, PathBuf};

use metrale_circuit::config::{ImportOptions, import};
use metrale_circuit::load::diag::Source;
use metrale_circuit::load::{CircuitSource, load};
use toml::de::DeTable;

/// The folder of the cases.
fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/import_cases")
}

/// The files a case folder may hold.
const CASE_FILES: [&str; 3] = ["circuit.toml", "config.json", "options.toml"];

/// What the cases folder holds, each named relative to it.
#[derive(Default)]
struct Found {
    /// The case folders.
    cases: Vec<String>,
    /// The expected files, with their extension.
    expected: Vec<String>,
    /// Files that are neither a case's nor an expected file.
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
        let name = format!(
            "{prefix}{}",
            path.file_name().expect("a name").to_string_lossy()
        );
        if !path.is_dir() {
            match path.extension().and_then(|e| e.to_str()) {
                Some("out" | "stderr") => found.expected.push(name),
                _ => found.stray.push(name),
            }
        } else if path.join("circuit.toml").is_file() {
            walk_case(&path, &name, found);
            found.cases.push(name);
        } else {
            walk(&path, &format!("{name}/"), found);
        }
    }
}

/// The files of the case folder `dir` (named `name`) that no case holds.
fn walk_case(dir: &Path, name: &str, found: &mut Found) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let file = entry.expect("a readable entry").file_name();
        let file = file.to_string_lossy();
        if !CASE_FILES.contains(&file.as_ref()) {
            found.stray.push(format!("{name}/{file}"));
        }
    }
}

/// What the case `name` makes: the extension of its expected file and the text; `Err` for a
/// case that cannot run.
fn run(dir: &Path, name: &str) -> Result<(&'static str, String), String> {
    let read = |file: &str| std::fs::read_to_string(dir.join(name).join(file));
    let shown = format!("{name}/circuit.toml");
    let circuit = load(CircuitSource::File {
        path: &dir.join(&shown),
        name: &shown,
    })
    .circuit
    .map_err(|d| format!("the circuit does not load:\n{}", d.render()))?;
    let config = read("config.json").map_err(|e| format!("config.json: {e}"))?;
    let config = Source::new(format!("{name}/config.json"), config);
    let options = read("options.toml").unwrap_or_default();
    let options = DeTable::parse(&options).map_err(|e| format!("options.toml: {e}"))?;
    let (mut given, mut like) = (ImportOptions::default(), None);
    for (key, value) in options.get_ref() {
        let value = value.get_ref().as_str();
        match (key.get_ref().as_ref(), value) {
            ("name", Some(value)) => given.name = Some(value),
            ("hf", Some(value)) => given.hf = Some(value),
            ("like", Some(value)) => like = Some(value),
            (key, _) => {
                return Err(format!(
                    "options.toml: `{key}` is not `name`, `hf` or `like` with a string"
                ));
            }
        }
    }
    let made = match like {
        Some(like) => circuit.dims_from_config(like, &config).map(|dims| {
            let lines: Vec<String> = dims.iter().map(|(d, v)| format!("{d} = {v}\n")).collect();
            lines.concat()
        }),
        None => import(&circuit, &config, "config", given).and_then(|imported| {
            circuit.with_imported(&imported, &config)?;
            Ok(imported.to_toml())
        }),
    };
    Ok(match made {
        Ok(out) => ("out", out),
        Err(diagnostics) => ("stderr", diagnostics.render() + "\n"),
    })
}

#[test]
fn every_case_makes_its_expected_output() {
    let bless = std::env::var_os("METRALE_BLESS").is_some();
    let dir = cases_dir();
    let mut found = Found::default();
    walk(&dir, "", &mut found);
    assert!(!found.cases.is_empty(), "no case under {}", dir.display());
    let mut failures = Vec::new();
    for name in &found.cases {
        let (extension, made) = match run(&dir, name) {
            Ok(made) => made,
            Err(problem) => {
                failures.push(format!("{name}: {problem}"));
                continue;
            }
        };
        let other = if extension == "out" { "stderr" } else { "out" };
        let (path, other_path) = (
            dir.join(format!("{name}.{extension}")),
            dir.join(format!("{name}.{other}")),
        );
        let what = if extension == "out" {
            "it imports"
        } else {
            "it fails"
        };
        if other_path.is_file() {
            if bless {
                std::fs::remove_file(&other_path)
                    .unwrap_or_else(|e| panic!("{}: {e}", other_path.display()));
            } else {
                let expected = std::fs::read_to_string(&other_path).unwrap_or_default();
                let shown = if expected == made {
                    "(the same text: only the extension is wrong)".to_owned()
                } else {
                    diff::lines(&expected, &made)
                };
                failures.push(format!(
                    "{name}: {what}, but {name}.{other} is expected (- expected, + made):\n{shown}"
                ));
                continue;
            }
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == made => {}
            _ if bless => {
                std::fs::write(&path, &made).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            Ok(expected) => failures.push(format!(
                "{name}: {what}, and differs from {name}.{extension} (- expected, + made):\n{}",
                diff::lines(&expected, &made)
            )),
            Err(_) => failures.push(format!(
                "{name}: {what}, and there is no expected file {name}.{extension}"
            )),
        }
    }
    for file in &found.expected {
        let case = file
            .rsplit_once('.')
            .map_or(file.as_str(), |(case, _)| case);
        if !found.cases.iter().any(|name| name == case) {
            failures.push(format!(
                "{file}: no case folder `{case}/` with a `circuit.toml` (delete it if the case was renamed)"
            ));
        }
    }
    for file in &found.stray {
        failures.push(format!(
            "{file}: neither a case file ({}), an expected file (`.out`, `.stderr`) nor a folder",
            CASE_FILES.map(|f| format!("`{f}`")).join(", ")
        ));
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) among the {} import cases of metrale-circuit/tests/import_cases:\n\n{}\n\n\
         if every change is intended, bless with METRALE_BLESS=1 cargo test -p metrale-circuit \
         --features config --test import_cases and read the new files",
        failures.len(),
        found.cases.len(),
        failures.join("\n\n")
    );
}
