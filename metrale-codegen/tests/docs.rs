//! The TOML blocks of the docs are true: every ```` ```toml ```` fenced block of
//! `docs/inputs.md` (inputs files) and `docs/circuit-schema.md` (circuits) is loaded by the real
//! loader, so a doc cannot show a key, a rule or an error message the code does not have.
//!
//! The convention, stated at the top of each doc; the words after `toml` in a fence's info
//! string say how its block is checked:
//!
//! - ```` ```toml ````: a complete file. It must load without error: an inputs file with
//!   [`InputsFile::parse`], a circuit with [`load`] (includes read from `circuits/blocks/`).
//! - ```` ```toml fragment ````: an excerpt spliced into the doc's base file, and the result must
//!   load without error. The base is `metrale-codegen/cli/inputs/default.toml` for inputs files and
//!   `circuits/qwen3_5.toml` for circuits. Splicing: every table of the base whose header
//!   (`[x]` or `[[x]]`) is one of the fragment's headers, or a table under one (`[x.y]`), is
//!   removed, and the fragment goes where the first removed table was (at the end if none). In a
//!   fragment, `...` on a line (before any `#`) stands for the rest of the one removed base line
//!   that starts with what the fragment shows before it: that base line is used, so what is
//!   shown must be true of the base. A fragment has no keys before its first header.
//! - ```` ```toml error ````: a complete file that must fail, followed by a ```` ```text ````
//!   block holding exactly what the loader renders for it (the file named `inputs.toml` or
//!   `circuit.toml`).
//!
//! Any other word after `toml` fails the test, so a typo cannot silently skip a block. Blocks in
//! other languages are not checked. The set of blocks is whatever the docs hold: the test only
//! requires at least one checked block per doc.
//!
//! The docs are outside this crate: when the workspace around it is absent (a packaged crate),
//! there is nothing to check and the test says so.

use std::path::{Path, PathBuf};

use metrale_circuit::load::InputsFile;
use metrale_circuit::load::{CircuitSource, load};

/// What a doc's blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doc {
    /// Inputs files, based on the CLI's default inputs.
    Inputs,
    /// Circuits, based on the Qwen3.5 circuit.
    Circuit,
}

impl Doc {
    /// The base file of fragments, from the workspace root.
    fn base(self) -> &'static str {
        match self {
            Doc::Inputs => "metrale-codegen/cli/inputs/default.toml",
            Doc::Circuit => "circuits/qwen3_5.toml",
        }
    }

    /// The file name an error block's expected text shows.
    fn file_name(self) -> &'static str {
        match self {
            Doc::Inputs => "inputs.toml",
            Doc::Circuit => "circuit.toml",
        }
    }

    /// Loads `text` as a file of this doc: `Ok` or the rendered errors.
    fn load(self, root: &Path, text: &str) -> Result<(), String> {
        let name = self.file_name();
        match self {
            Doc::Inputs => InputsFile::parse(name, text)
                .map(drop)
                .map_err(|d| d.render()),
            Doc::Circuit => {
                let dir = root.join("circuits");
                load(CircuitSource::Text {
                    name,
                    text,
                    dir: Some(&dir),
                })
                .circuit
                .map(drop)
                .map_err(|d| d.render())
            }
        }
    }
}

/// One fenced block of a doc.
#[derive(Debug)]
struct Block {
    /// The words of its info string (`["toml", "fragment"]`).
    info: Vec<String>,
    /// Its text, each line ending in `\n`.
    text: String,
    /// The 1-based line of its opening fence.
    line: usize,
}

/// Every fenced block of `doc`, in order. A fence is a line starting with three backticks; the
/// block ends at the next such line.
fn fenced_blocks(doc: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in doc.lines().enumerate() {
        let fence = line.strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.split_whitespace().map(str::to_owned).collect(),
                    text: String::new(),
                    line: i + 1,
                });
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    blocks
}

/// The header path of a table header line (`[layout.blocks]` -> `layout.blocks`), if it is one.
fn header(line: &str) -> Option<String> {
    let line = line.trim();
    let inner = line
        .strip_prefix("[[")
        .and_then(|l| l.split_once("]]"))
        .or_else(|| line.strip_prefix('[').and_then(|l| l.split_once(']')))?;
    if !inner.1.trim().is_empty() && !inner.1.trim_start().starts_with('#') {
        return None;
    }
    let path: Vec<&str> = inner.0.split('.').map(str::trim).collect();
    Some(path.join("."))
}

/// The tables of `text`: `(header path, its lines)`, the lines before the first header first
/// (path `None`).
fn sections(text: &str) -> Vec<(Option<String>, Vec<&str>)> {
    let mut sections: Vec<(Option<String>, Vec<&str>)> = vec![(None, Vec::new())];
    for line in text.lines() {
        match header(line) {
            Some(path) => sections.push((Some(path), vec![line])),
            None => sections.last_mut().unwrap().1.push(line),
        }
    }
    sections
}

/// Whether a line holds no TOML key (blank or a comment).
fn is_blank(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

/// `fragment` spliced into `base` (the rule is in the module doc).
fn splice(base: &str, fragment: &str) -> Result<String, String> {
    let fragment_sections = sections(fragment);
    if let Some(line) = fragment_sections[0].1.iter().find(|l| !is_blank(l)) {
        return Err(format!(
            "a fragment has a key before its first header: `{line}`"
        ));
    }
    let headers: Vec<&str> = fragment_sections
        .iter()
        .filter_map(|(path, _)| path.as_deref())
        .collect();
    if headers.is_empty() {
        return Err("a fragment has no table header".to_owned());
    }
    let replaced = |path: &str| {
        headers
            .iter()
            .any(|h| path == *h || path.strip_prefix(h).is_some_and(|r| r.starts_with('.')))
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    let mut at: Option<usize> = None;
    for (path, lines) in sections(base) {
        if path.as_deref().is_some_and(replaced) {
            at.get_or_insert(kept.len());
            removed.extend(lines);
        } else {
            kept.extend(lines);
        }
    }
    let mut spliced: Vec<String> = Vec::new();
    for line in fragment.lines() {
        let ellipsis = line.find("...").filter(|&i| !line[..i].contains('#'));
        let Some(i) = ellipsis else {
            spliced.push(line.to_owned());
            continue;
        };
        let shown = line[..i].trim();
        let matches: Vec<&&str> = removed
            .iter()
            .filter(|l| l.trim_start().starts_with(shown))
            .collect();
        match matches.as_slice() {
            [one] => spliced.push((**one).to_owned()),
            _ => {
                return Err(format!(
                    "`{shown} ...` must start exactly one line of the replaced base tables, \
                     found {}",
                    matches.len()
                ));
            }
        }
    }
    let at = at.unwrap_or(kept.len());
    let mut out: Vec<String> = kept[..at].iter().map(|l| (*l).to_owned()).collect();
    out.extend(spliced);
    out.extend(kept[at..].iter().map(|l| (*l).to_owned()));
    Ok(out.join("\n") + "\n")
}

/// How many blocks of each kind a doc had checked.
#[derive(Debug, Default)]
struct Counts {
    complete: usize,
    fragment: usize,
    error: usize,
}

/// Checks every `toml` block of the doc at `path` (from the workspace root): the counts, or
/// every failure.
fn check_doc(root: &Path, path: &str, doc: Doc) -> Result<Counts, Vec<String>> {
    let text = std::fs::read_to_string(root.join(path))
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let base = std::fs::read_to_string(root.join(doc.base()))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", doc.base()));
    let blocks = fenced_blocks(&text);
    let mut counts = Counts::default();
    let mut failures = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if block.info.first().map(String::as_str) != Some("toml") {
            continue;
        }
        let at = format!("{path}:{}", block.line);
        let flags: Vec<&str> = block.info[1..].iter().map(String::as_str).collect();
        let result = match flags.as_slice() {
            [] => {
                counts.complete += 1;
                doc.load(root, &block.text)
                    .map_err(|e| format!("{at}: a complete file must load:\n{e}"))
            }
            ["fragment"] => {
                counts.fragment += 1;
                splice(&base, &block.text)
                    .map_err(|e| format!("{at}: {e}"))
                    .and_then(|spliced| {
                        doc.load(root, &spliced).map_err(|e| {
                            format!(
                                "{at}: the fragment spliced into {} must load (lines are \
                                 the spliced file's):\n{e}",
                                doc.base()
                            )
                        })
                    })
            }
            ["error"] => {
                counts.error += 1;
                let expected = blocks
                    .get(i + 1)
                    .filter(|next| next.info == ["text"])
                    .map(|next| next.text.trim_end());
                match (expected, doc.load(root, &block.text)) {
                    (None, _) => Err(format!(
                        "{at}: an error block must be followed by a ```text block of its message"
                    )),
                    (Some(_), Ok(())) => Err(format!("{at}: the file must fail, and it loads")),
                    (Some(expected), Err(found)) if found != expected => Err(format!(
                        "{at}: the error differs from the doc's\n--- doc ---\n{expected}\n\
                         --- loader ---\n{found}"
                    )),
                    (Some(_), Err(_)) => Ok(()),
                }
            }
            _ => Err(format!(
                "{at}: unknown fence `{}`: use ```toml, ```toml fragment or ```toml error",
                block.info.join(" ")
            )),
        };
        failures.extend(result.err());
    }
    if counts.complete + counts.fragment + counts.error == 0 {
        failures.push(format!("{path}: no ```toml block found"));
    }
    if failures.is_empty() {
        Ok(counts)
    } else {
        Err(failures)
    }
}

/// The workspace root, or `None` outside the workspace.
fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_owned();
    root.join("docs").is_dir().then_some(root)
}

fn check(path: &str, doc: Doc) {
    let Some(root) = workspace_root() else {
        eprintln!("{path}: not in the workspace, nothing to check");
        return;
    };
    match check_doc(&root, path, doc) {
        Ok(counts) => eprintln!("{path}: {counts:?}"),
        Err(failures) => panic!("{}", failures.join("\n\n")),
    }
}

#[test]
fn the_inputs_doc_blocks_load() {
    check("docs/inputs.md", Doc::Inputs);
}

#[test]
fn the_circuit_schema_blocks_load() {
    check("docs/circuit-schema.md", Doc::Circuit);
}

#[test]
fn splicing_replaces_tables_and_fills_ellipses() {
    let base = "a = 1\n[x]\nk = { p = 1, q = 2 }\n[x.y]\nz = 3\n[w]\nv = 4\n";
    let spliced = splice(base, "[x]\nk = { p = 1, ... }  # more\n").unwrap();
    assert_eq!(spliced, "a = 1\n[x]\nk = { p = 1, q = 2 }\n[w]\nv = 4\n");
    assert!(splice(base, "[x]\nk = { p = 9, ... }\n").is_err());
    assert!(splice(base, "a = 2\n[x]\n").is_err());
    assert_eq!(
        splice(base, "[n]\nm = 5\n").unwrap(),
        format!("{base}[n]\nm = 5\n")
    );
}
