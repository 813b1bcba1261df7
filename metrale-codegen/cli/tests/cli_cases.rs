//! The command line's cases, kept as data under `tests/cli_cases/`: each case is one run of
//! `metrale-codegen` from the workspace root, beside exactly what it prints and how it exits.
//!
//! A case is `<group>/<name>.cmd`, grouped by the command it is about (`usage` for clap's
//! refusals, `help` for help and version). It holds the arguments after the binary's name as
//! shell-like words: split at white space (newlines too), `'…'` and `"…"` quote (no escapes;
//! `""` is an empty word), lines starting with `#` are comments, which say what the expected
//! files show and count its figures by hand. `$DIR` stands for the case's folder relative to the
//! workspace root (`metrale-codegen/cli/tests/cli_cases/<group>`), so a file the command reads
//! sits beside the case and is named `$DIR/<file>`; every path stays relative, and the output
//! names files as the command line gave them. Any file in a group that is not a case or an
//! expected file is such a data file, and must be named as `$DIR/<file>` by a case of its group.
//!
//! The expected output sits beside the case: `<name>.status`, the exit code on one line
//! (always there); `<name>.out`, stdout, and `<name>.err`, stderr, each only when not empty (an
//! absent one expects nothing). The one normalisation: `metrale-codegen <version>` is read as
//! `metrale-codegen $VERSION`, so a release does not rewrite the cases. What is not one run's
//! output stays in Rust, in `tests/cli.rs`: properties over every term, figures checked against
//! other runs (`fit` against `plan`), files compared with the shipped ones, runs that write files.
//!
//! One test runs every case and lists every mismatch at once, each as a line diff; a case
//! without its `.status`, an expected file without a case, and a file no case names all fail.
//! `METRALE_BLESS=1 cargo test -p metrale-cli --test cli_cases` writes the expected files (and
//! deletes an `.out` or `.err` whose stream is now empty); read each blessed file against its
//! case (exit code, message, `line:col` counted in the data file, figures of the comments)
//! before committing it.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::run;

/// The folder of the cases, and that folder relative to the workspace root.
fn cases_dir() -> (PathBuf, &'static str) {
    let relative = "metrale-codegen/cli/tests/cli_cases";
    (common::root().join(relative), relative)
}

/// The expected files of a case, by extension.
const EXPECTED: [&str; 3] = ["status", "out", "err"];

/// What the cases folder holds, each named relative to it.
#[derive(Default)]
struct Found {
    /// The `.cmd` files, without the extension: the cases.
    cases: Vec<String>,
    /// The expected files, with their extension.
    expected: Vec<String>,
    /// Any other file: a data file if a case of its folder names it.
    data: Vec<String>,
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
        match path.extension().and_then(|e| e.to_str()) {
            _ if path.is_dir() => walk(&path, &format!("{name}/"), found),
            Some("cmd") => found.cases.push(name.trim_end_matches(".cmd").to_owned()),
            Some(e) if EXPECTED.contains(&e) => found.expected.push(name),
            _ => found.data.push(name),
        }
    }
}

/// The words of a `.cmd` file, `$DIR` replaced by `dir`.
fn words(text: &str, dir: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut chars = line.chars();
        let mut word: Option<String> = None;
        while let Some(c) = chars.next() {
            match c {
                c if c.is_whitespace() => words.extend(word.take()),
                '\'' | '"' => {
                    let word = word.get_or_insert_with(String::new);
                    loop {
                        match chars.next() {
                            Some(q) if q == c => break,
                            Some(other) => word.push(other),
                            None => return Err(format!("an unclosed {c} in `{line}`")),
                        }
                    }
                }
                c => word.get_or_insert_with(String::new).push(c),
            }
        }
        words.extend(word);
    }
    Ok(words.into_iter().map(|w| w.replace("$DIR", dir)).collect())
}

/// The expected files of one run: (extension, text), `None` for an empty stream.
fn outputs(args: &[String]) -> [(&'static str, Option<String>); 3] {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    let version = format!("metrale-codegen {}", env!("CARGO_PKG_VERSION"));
    let normal =
        |s: String| (!s.is_empty()).then(|| s.replace(&version, "metrale-codegen $VERSION"));
    [
        ("status", Some(format!("{}\n", out.code))),
        ("out", normal(out.stdout)),
        ("err", normal(out.stderr)),
    ]
}

/// A line diff of `want` and `got`: `-` lines only expected, `+` lines only printed, each
/// change with two unchanged lines around it.
fn diff(want: &str, got: &str) -> String {
    let diff = similar::TextDiff::from_lines(want, got);
    let shown = diff.unified_diff().context_radius(2).to_string();
    if shown.is_empty() {
        "(every line is the same: the files differ in their line endings)".to_owned()
    } else {
        shown
    }
}

#[test]
fn every_case_prints_its_expected_output() {
    let bless = std::env::var_os("METRALE_BLESS").is_some();
    let (dir, relative) = cases_dir();
    let mut found = Found::default();
    walk(&dir, "", &mut found);
    assert!(!found.cases.is_empty(), "no case under {}", dir.display());
    let mut failures = Vec::new();
    let mut named = BTreeSet::new();
    for name in &found.cases {
        let group = name.rsplit_once('/').map_or("", |(group, _)| group);
        let (group_dir, group) = match group {
            "" => (relative.to_owned(), String::new()),
            group => (format!("{relative}/{group}"), format!("{group}/")),
        };
        let text = std::fs::read_to_string(dir.join(format!("{name}.cmd")))
            .unwrap_or_else(|e| panic!("{name}.cmd: {e}"));
        let args = match words(&text, &group_dir) {
            Ok(args) => args,
            Err(problem) => {
                failures.push(format!("{name}.cmd: {problem}"));
                continue;
            }
        };
        for arg in &args {
            if let Some((_, file)) = arg.split_once(&format!("{group_dir}/")) {
                named.insert(format!("{group}{file}"));
            }
        }
        for (extension, printed) in outputs(&args) {
            let path = dir.join(format!("{name}.{extension}"));
            let expected = std::fs::read_to_string(&path).ok();
            if expected == printed {
                continue;
            }
            if bless {
                match &printed {
                    Some(text) => std::fs::write(&path, text),
                    None => std::fs::remove_file(&path),
                }
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                continue;
            }
            let what = match extension {
                "status" => "the exit code",
                "out" => "stdout",
                _ => "stderr",
            };
            let problem = match (&expected, &printed, extension) {
                (None, _, "status") => format!("there is no expected file {name}.status"),
                (None, _, _) => format!("{what} is not empty, and there is no {name}.{extension}"),
                (Some(_), None, _) => format!("{what} is empty, and {name}.{extension} is not"),
                (Some(_), Some(_), _) => format!("{what} differs from {name}.{extension}"),
            };
            failures.push(format!(
                "{name}: {problem} (- expected, + printed):\n{}",
                diff(&expected.unwrap_or_default(), &printed.unwrap_or_default())
            ));
        }
    }
    for file in &found.expected {
        let case = file.rsplit_once('.').map_or(file.as_str(), |(c, _)| c);
        if !found.cases.iter().any(|name| name == case) {
            failures.push(format!(
                "{file}: no case `{case}.cmd` (delete it if the case was renamed)"
            ));
        }
    }
    for file in &found.data {
        if !named.contains(file) {
            failures.push(format!(
                "{file}: neither a case (`.cmd`), an expected file (`.status`, `.out`, `.err`) \
                 nor a file a case of its folder names as `$DIR/…`"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) among the {} command-line cases of metrale-codegen/cli/tests/cli_cases:\
         \n\n{}\n\nif every change is intended, bless with METRALE_BLESS=1 cargo test -p \
         metrale-cli --test cli_cases and read the new files",
        failures.len(),
        found.cases.len(),
        failures.join("\n\n")
    );
}
