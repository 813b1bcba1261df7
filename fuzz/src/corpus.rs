//! The seed corpus: the real files of the workspace, read once at start from the workspace
//! root, and the dictionary the token-level mutations draw words from.
//!
//! Owns which files seed which target:
//! - circuits: `circuits/*.toml`, `tests/ui/circuits/*.toml`, every inline circuit of the test
//!   suites (a raw string `r#"..."#` holding `schema = `), every TOML block of `docs/*.md`
//!   that holds `schema`, and the one-file loader cases `metrale-circuit/tests/cases/*/*.toml`;
//! - block libraries: each circuit of `circuits/` and `tests/ui/circuits/` that includes one,
//!   with the library it includes (`include = ["x"]` reads `<circuit dir>/blocks/x.toml`);
//! - inputs files: `metrale-codegen/cli/inputs/*.toml` and the TOML blocks of `docs/inputs.md`;
//! - shapes: every `shape = "..."` and `window = "..."` string of the circuits.
//!
//! Invariants: every list is sorted by path and deduplicated, so a seed gives the same run on
//! every machine; nothing here depends on the order `read_dir` returns.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use metrale_circuit::dynamic::StateAccess;
use metrale_circuit::{Holding, Lifetime, Space, StateDtype, StateKind};

/// One seed file: where it came from (relative to the workspace root, with `#N` for the N-th
/// snippet of a file) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The path it is named by in diagnostics and findings.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// A circuit that includes a block library: the library target mutates the library on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibrarySeed {
    /// The circuit, named as in the workspace (`circuits/qwen3_5.toml`).
    pub circuit: Seed,
    /// The folder holding the circuit's `blocks/`.
    pub dir: PathBuf,
    /// The include name of the library mutated (`qwen3_attention`).
    pub library: String,
    /// The library's text.
    pub text: String,
}

/// Every seed, and the words mutations draw from.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The workspace root.
    pub root: PathBuf,
    /// Circuit texts.
    pub circuits: Vec<Seed>,
    /// Circuits with a library each.
    pub libraries: Vec<LibrarySeed>,
    /// Inputs files.
    pub inputs: Vec<Seed>,
    /// Shape strings.
    pub shapes: Vec<Seed>,
    /// Keys, kinds, dtypes, dims, layer kinds and names found in the corpus, sorted.
    pub words: Vec<String>,
    /// Every line of every seed, for splicing lines across files.
    pub lines: Vec<String>,
}

/// The workspace root: the parent of this crate's manifest folder.
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

impl Corpus {
    /// Reads the corpus under `root`.
    ///
    /// # Errors
    /// When a folder of the corpus cannot be read, or a list comes out empty.
    pub fn read(root: &Path) -> Result<Corpus, String> {
        let mut circuits = Vec::new();
        for folder in ["circuits", "tests/ui/circuits"] {
            for path in files_in(root, folder, "toml")? {
                circuits.push(seed(root, &path)?);
            }
        }
        for folder in [
            "metrale-circuit/tests",
            "metrale-codegen/tests",
            "metrale-codegen/cli/tests",
            "tests/tests",
            "tests/ui/pass",
            "tests/ui/fail",
        ] {
            for path in files_in(root, folder, "rs")? {
                let file = seed(root, &path)?;
                for (i, snippet) in raw_strings(&file.text).into_iter().enumerate() {
                    if snippet.contains("schema = ") {
                        circuits.push(Seed {
                            name: format!("{}#{i}", file.name),
                            text: snippet,
                        });
                    }
                }
            }
        }
        let mut inputs = Vec::new();
        for path in files_in(root, "metrale-codegen/cli/inputs", "toml")? {
            inputs.push(seed(root, &path)?);
        }
        for path in files_in(root, "docs", "md")? {
            let file = seed(root, &path)?;
            for (i, block) in toml_blocks(&file.text).into_iter().enumerate() {
                let named = Seed {
                    name: format!("{}#{i}", file.name),
                    text: block,
                };
                if named.text.contains("schema") {
                    circuits.push(named);
                } else if file.name.ends_with("inputs.md") {
                    inputs.push(named);
                }
            }
        }
        let libraries = library_seeds(root, &circuits)?;
        // The loader's error cases, after the libraries: a case may include a missing library.
        let cases = root.join("metrale-circuit/tests/cases");
        let mut groups: Vec<PathBuf> = std::fs::read_dir(&cases)
            .map_err(|e| format!("cannot read {}: {e}", cases.display()))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        groups.sort();
        for group in groups {
            for path in files_in(&group, "", "toml")? {
                circuits.push(seed(root, &path)?);
            }
        }
        let shapes = shape_strings(&circuits);
        let all: Vec<&Seed> = circuits
            .iter()
            .chain(&inputs)
            .chain(libraries.iter().map(|l| &l.circuit))
            .collect();
        let mut lines: BTreeSet<String> = all
            .iter()
            .flat_map(|s| s.text.lines())
            .chain(libraries.iter().flat_map(|l| l.text.lines()))
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        lines.insert(String::new());
        let corpus = Corpus {
            root: root.to_path_buf(),
            words: dictionary(all.iter().map(|s| s.text.as_str())),
            lines: lines.into_iter().collect(),
            circuits,
            libraries,
            inputs,
            shapes,
        };
        for (what, empty) in [
            ("circuits", corpus.circuits.is_empty()),
            ("block libraries", corpus.libraries.is_empty()),
            ("inputs files", corpus.inputs.is_empty()),
            ("shapes", corpus.shapes.is_empty()),
        ] {
            if empty {
                return Err(format!("the corpus has no {what} under {}", root.display()));
            }
        }
        Ok(corpus)
    }
}

/// The files of `root/folder` whose name ends in `.ext`, sorted.
fn files_in(root: &Path, folder: &str, ext: &str) -> Result<Vec<PathBuf>, String> {
    let dir = root.join(folder);
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// A file of the workspace as a seed named by its path relative to `root`.
fn seed(root: &Path, path: &Path) -> Result<Seed, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    Ok(Seed { name, text })
}

/// Every `r#"..."#` raw string of a Rust file, in order.
fn raw_strings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("r#\"") {
        let body = &rest[start + 3..];
        let Some(end) = body.find("\"#") else {
            break;
        };
        found.push(body[..end].to_owned());
        rest = &body[end + 2..];
    }
    found
}

/// Every fenced TOML block of a Markdown file, in order.
fn toml_blocks(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start();
        match &mut current {
            None if fence.starts_with("```toml") => current = Some(String::new()),
            Some(block) if fence.starts_with("```") => {
                found.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    found
}

/// The circuits of the workspace's folders that include a library, each with every library
/// it includes directly.
fn library_seeds(root: &Path, circuits: &[Seed]) -> Result<Vec<LibrarySeed>, String> {
    let mut seeds = Vec::new();
    for circuit in circuits.iter().filter(|c| !c.name.contains('#')) {
        let Ok(table) = circuit.text.parse::<toml::Table>() else {
            continue;
        };
        let Some(includes) = table.get("include").and_then(toml::Value::as_array) else {
            continue;
        };
        let dir = root.join(
            Path::new(&circuit.name)
                .parent()
                .unwrap_or_else(|| Path::new("")),
        );
        for include in includes.iter().filter_map(toml::Value::as_str) {
            let path = dir.join("blocks").join(format!("{include}.toml"));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            seeds.push(LibrarySeed {
                circuit: circuit.clone(),
                dir: dir.clone(),
                library: include.to_owned(),
                text,
            });
        }
    }
    Ok(seeds)
}

/// Every distinct `shape = "..."` and `window = "..."` string of the circuits.
fn shape_strings(circuits: &[Seed]) -> Vec<Seed> {
    let mut shapes = BTreeSet::new();
    for circuit in circuits {
        for line in circuit.text.lines() {
            let line = line.trim();
            for key in ["shape", "window"] {
                if let Some(rest) = line.strip_prefix(key)
                    && let Some(value) = rest.trim_start().strip_prefix('=')
                    && let Some(quoted) = value.trim().strip_prefix('"')
                    && let Some(end) = quoted.find('"')
                {
                    shapes.insert(quoted[..end].to_owned());
                }
            }
        }
    }
    shapes
        .into_iter()
        .enumerate()
        .map(|(i, text)| Seed {
            name: format!("shape#{i}"),
            text,
        })
        .collect()
}

/// The words of the schema: every bare key and every short string of `texts`, and every
/// spelling of the runtime's enums.
fn dictionary<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut words = BTreeSet::new();
    for text in texts {
        let mut word = String::new();
        let mut quoted = false;
        for c in text.chars() {
            if c == '"' {
                if quoted && !word.is_empty() && word.len() <= 40 {
                    words.insert(std::mem::take(&mut word));
                }
                word.clear();
                quoted = !quoted;
            } else if quoted || c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                if word.len() > 1 && word.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    words.insert(word.clone());
                }
                word.clear();
            }
            if c == '\n' {
                quoted = false;
                word.clear();
            }
        }
    }
    let spellings = StateKind::SPELLINGS
        .iter()
        .chain(&StateDtype::SPELLINGS)
        .chain(&Lifetime::SPELLINGS)
        .chain(&Holding::SPELLINGS)
        .chain(&Space::SPELLINGS)
        .chain(&StateAccess::SPELLINGS);
    words.extend(spellings.map(|s| (*s).to_owned()));
    words.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_strings_and_toml_blocks_are_found() {
        assert_eq!(raw_strings("a r#\"x\"# b r#\"y\ny\"#"), ["x", "y\ny"]);
        assert_eq!(
            toml_blocks("t\n```toml\na = 1\n```\n```\nb\n```\n"),
            ["a = 1\n"]
        );
    }

    #[test]
    fn the_workspace_corpus_has_every_kind_of_seed() {
        let corpus = Corpus::read(&workspace_root()).expect("corpus");
        assert!(
            corpus
                .circuits
                .iter()
                .any(|c| c.name == "circuits/qwen3_5.toml")
        );
        assert!(
            corpus
                .libraries
                .iter()
                .any(|l| l.library == "qwen3_attention")
        );
        assert!(corpus.words.iter().any(|w| w == "paged_kv"));
        assert!(
            corpus
                .shapes
                .iter()
                .any(|s| s.text == "kv_heads x head_dim")
        );
    }
}
