//! The architecture document cannot drift from the tree (rust-analyzer's tidy checks, here):
//! every source file of every crate is in `docs/architecture.md`'s map, and every path the map
//! names exists.
//!
//! The map's rule, as the document states it: a crate's section (its `###` heading names the
//! crate) names each file of the crate's `src/` in backticks by its path under `src/`
//! (`load/checkpoints.rs`, or with the `src/` prefix), by its module path without `.rs`
//! (`corpus`), or, for a file in a folder the section names (`model/`), by its path under that
//! folder (`kinds.rs`); a folder's `mod.rs` is named by the folder. A backticked token is a
//! path when it has a folder and ends in `/` or in a file extension the workspace uses, or is a
//! source or script file's bare name, and holds no placeholder (`<arch>.rs`), glob or `::`; it
//! must exist under the workspace root, `scripts/`, `circuits/`, a crate's folder, its `src/`
//! or `tests/`, or a folder its section names (a bare name anywhere in those).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each crate section's heading name and its folder.
const CRATES: [(&str, &str); 6] = [
    ("metrale-circuit", "metrale-circuit"),
    ("metrale-codegen", "metrale-codegen"),
    ("metrale-cli", "metrale-codegen/cli"),
    ("metrale-macros", "metrale-macros"),
    ("examples/engine", "examples/engine"),
    ("fuzz", "fuzz"),
];

/// The extensions of the files a map may name.
const EXTENSIONS: [&str; 8] = [
    ".rs", ".md", ".toml", ".py", ".json", ".svg", ".stderr", ".txt",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One crate's section of the document: its backticked tokens.
struct Section {
    folder: &'static str,
    ticks: BTreeSet<String>,
}

/// The sections of `doc` of the crates in [`CRATES`], and the tokens of the whole document.
fn sections(doc: &str) -> (Vec<Section>, BTreeSet<String>) {
    let mut found = Vec::new();
    for part in doc.split("\n### ").skip(1) {
        let heading = part.lines().next().unwrap_or_default();
        let name = heading.split('`').nth(1).unwrap_or_default();
        if let Some((_, folder)) = CRATES.iter().find(|(crate_name, _)| *crate_name == name) {
            found.push(Section {
                folder,
                ticks: ticks(part),
            });
        }
    }
    (found, ticks(doc))
}

/// Every backticked token of `text`.
fn ticks(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Every `.rs` file under `dir`, as paths relative to it with `/`.
fn sources(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// The folders a section names, as paths under its crate's `src/`: a token `dir/` under
/// `src/`, or under a folder named before it (`shape/` beside `load/circuit/`).
fn folders(section: &Section, root: &Path) -> Vec<String> {
    let src = root.join(section.folder).join("src");
    let tokens: Vec<&str> = section
        .ticks
        .iter()
        .map(|t| t.trim_start_matches("src/"))
        .filter(|t| t.ends_with('/'))
        .collect();
    let mut found: Vec<String> = Vec::new();
    loop {
        let before = found.len();
        for token in &tokens {
            let candidates: Vec<String> = std::iter::once((*token).to_owned())
                .chain(found.iter().map(|f| format!("{f}{token}")))
                .collect();
            for candidate in candidates {
                if src.join(&candidate).is_dir() && !found.contains(&candidate) {
                    found.push(candidate);
                }
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// Whether `section` names the file at `relative` (under its crate's `src/`), its folders
/// `folders`.
fn names(section: &Section, folders: &[String], relative: &str) -> bool {
    let stem = relative.trim_end_matches(".rs");
    let mut spellings = vec![
        relative.to_owned(),
        format!("src/{relative}"),
        stem.to_owned(),
    ];
    if let Some(folder) = relative.strip_suffix("mod.rs") {
        spellings.push(folder.to_owned());
    }
    if spellings.iter().any(|s| section.ticks.contains(s)) {
        return true;
    }
    folders.iter().any(|folder| {
        relative
            .strip_prefix(folder.as_str())
            .is_some_and(|inner| section.ticks.contains(inner))
    })
}

/// The files of each crate the document's map leaves out.
fn unmapped(doc: &str, root: &Path) -> Vec<String> {
    let (sections, _) = sections(doc);
    let mut missing = Vec::new();
    for (name, folder) in CRATES {
        let Some(section) = sections.iter().find(|s| s.folder == folder) else {
            missing.push(format!("no section for crate `{name}`"));
            continue;
        };
        let named_folders = folders(section, root);
        for file in sources(&root.join(folder).join("src")) {
            if !names(section, &named_folders, &file) {
                missing.push(format!("{folder}/src/{file}"));
            }
        }
    }
    missing
}

/// Whether `token` is a path the document names: a path with a folder, or a source or script
/// file's bare name (a bare `config.json` or `circuit.toml` names a kind of file, not one).
fn is_path(token: &str) -> bool {
    let plain = !token.contains(['<', '>', '*', ' ', '{', '$', '#', '=', '(', '@'])
        && !token.contains("::")
        && !token.starts_with('-')
        && !token.starts_with('.');
    let folder = token.contains('/')
        && (token.ends_with('/') || EXTENSIONS.iter().any(|e| token.ends_with(e)));
    let source = Path::new(token)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("rs") || e.eq_ignore_ascii_case("py"));
    plain && (folder || source)
}

/// The paths the document names that exist nowhere they could be read from: the workspace
/// root, `scripts/`, `circuits/`, each crate's folder, `src/`, `tests/` and the folders its section names;
/// a bare file name anywhere in those.
fn stale(doc: &str, root: &Path) -> Vec<String> {
    let (sections, all) = sections(doc);
    let mut bases: Vec<PathBuf> = vec![
        root.to_path_buf(),
        root.join("scripts"),
        root.join("circuits"),
    ];
    for section in &sections {
        let crate_dir = root.join(section.folder);
        for folder in folders(section, root) {
            bases.push(crate_dir.join("src").join(folder));
        }
        bases.extend([crate_dir.join("src"), crate_dir.join("tests"), crate_dir]);
    }
    let everywhere: BTreeSet<String> = bases
        .iter()
        .flat_map(|base| sources(base))
        .filter_map(|f| f.rsplit('/').next().map(str::to_owned))
        .collect();
    all.iter()
        .filter(|token| is_path(token))
        .filter(|token| {
            let bare = !token.contains('/');
            let found = bases.iter().any(|base| base.join(token).exists())
                || (bare && everywhere.contains(token.as_str()));
            !found
        })
        .cloned()
        .collect()
}

#[test]
fn every_source_file_is_in_the_map_and_every_path_it_names_exists() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the document");
    let missing = unmapped(&doc, &root);
    assert!(
        missing.is_empty(),
        "files docs/architecture.md's map leaves out (name each in its crate's section):\n{}",
        missing.join("\n")
    );
    let gone = stale(&doc, &root);
    assert!(
        gone.is_empty(),
        "paths docs/architecture.md names that do not exist:\n{}",
        gone.join("\n")
    );
}

#[test]
fn a_planted_stale_path_and_a_planted_file_fail() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the document");
    let planted = doc.replacen("`load/checkpoints.rs`", "`load/checkpoint_gone.rs`", 1);
    assert_eq!(stale(&planted, &root), ["load/checkpoint_gone.rs"]);
    assert!(
        unmapped(&planted, &root).contains(&"metrale-circuit/src/load/checkpoints.rs".to_owned())
    );
    // A file the tree gains and the map does not name.
    let scratch = std::env::temp_dir().join(format!("metrale-architecture-{}", std::process::id()));
    let src = scratch.join("fuzz/src");
    std::fs::create_dir_all(&src).expect("scratch");
    std::fs::write(src.join("unmapped_target.rs"), "").expect("scratch file");
    let missing = unmapped(&doc, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        missing.contains(&"fuzz/src/unmapped_target.rs".to_owned()),
        "{missing:?}"
    );
}
