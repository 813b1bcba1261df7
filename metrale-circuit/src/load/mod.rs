//! The circuit TOML loader: files in, a validated [`Circuit`] or every error out.
//!
//! This module owns the public entry points ([`Circuit::load`], [`Circuit::load_as`],
//! [`Circuit::from_source`], and [`Circuit::load_as_report`] / [`Circuit::from_source_report`],
//! which also give the files read when the circuit has errors), the error `Sink` every stage reports to, and the order of the
//! pipeline:
//!
//! 1. `read`: read the circuit and, depth first in the order written, every block library it
//!    includes (`include = ["x"]` reads `<circuit dir>/blocks/x.toml`; includes written inside a
//!    library resolve against the same folder). Each file is parsed with `toml`'s recoverable
//!    parser; a file with TOML syntax errors reports them and is not walked further.
//! 2. `validate` (top level and layout), `blocks` (block templates and states), `nodes`
//!    (which node touches which state) and `checkpoints` walk each file's spanned tree by hand,
//!    so every error of every file is collected, each located at the offending key or value.
//! 3. `validate::resolve`: the checks that need every file (a block defined twice, names of
//!    undefined blocks, dims a shape reads) and the evaluation of every shape under every
//!    checkpoint (`checkpoints::evaluate`).
//!
//! Invariants:
//! - Nothing here panics, whatever the files hold.
//! - Errors are reported in a deterministic order: file order (the circuit, then its libraries
//!   in the order read), then byte position; errors at the same position keep the order found.
//! - A [`Circuit`] is returned only when there is no error at all, so it upholds every invariant
//!   listed on [`Circuit`] (module `circuit`).

mod blocks;
mod checkpoints;
mod nodes;
mod read;
pub(crate) mod toml;
mod validate;

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::Circuit;
use crate::diag::{Diagnostic, Diagnostics, Source};

/// A span of one of the files read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    /// The file's index in [`Sink::files`].
    pub file: usize,
    /// Byte range in that file.
    pub span: Range<usize>,
}

/// Every file read and every error found so far.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    /// The files, in the order read.
    pub files: Vec<Source>,
    /// For each file, the byte offset where each of its lines starts (0 first).
    line_starts: Vec<Vec<usize>>,
    /// The errors with their sort key (file index, byte offset).
    found: Vec<(usize, usize, Diagnostic)>,
}

impl Sink {
    /// Adds a file; returns its index.
    pub(crate) fn add_file(&mut self, source: Source) -> usize {
        let starts = std::iter::once(0)
            .chain(source.text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        self.line_starts.push(starts);
        self.files.push(source);
        self.files.len() - 1
    }

    /// Locates `diagnostic` at `loc` and records it.
    pub fn report(&mut self, loc: &Loc, diagnostic: Diagnostic) {
        let diagnostic = match self.files.get(loc.file) {
            Some(source) => diagnostic.at(source, loc.span.clone()),
            None => diagnostic,
        };
        self.found.push((loc.file, loc.span.start, diagnostic));
    }

    /// Records `diagnostic` as it is (a file that cannot be read), sorted with file `file`'s
    /// errors at byte `offset`.
    fn report_unlocated(&mut self, file: usize, offset: usize, diagnostic: Diagnostic) {
        self.found.push((file, offset, diagnostic));
    }

    /// Reports each TOML syntax error of file `file` ("invalid TOML: ..."), located when the
    /// parser gave a span, else naming the file.
    pub(crate) fn report_toml_errors(&mut self, file: usize, errors: Vec<::toml::de::Error>) {
        for error in errors {
            let diagnostic =
                Diagnostic::error(format!("invalid TOML: {}", error.message())).label("here");
            if let Some(span) = error.span() {
                self.report(&Loc { file, span }, diagnostic);
            } else {
                let name = self.name(file).to_owned();
                self.report_unlocated(file, 0, diagnostic.in_file(name));
            }
        }
    }

    /// `path:line:col` of `loc`'s start.
    pub fn place(&self, loc: &Loc) -> String {
        match self.files.get(loc.file) {
            Some(source) => {
                let (line, column) = self.line_col(loc);
                format!("{}:{line}:{column}", source.name)
            }
            None => "?".to_owned(),
        }
    }

    /// The 1-based line of `loc`'s start.
    pub fn line(&self, loc: &Loc) -> usize {
        self.line_col(loc).0
    }

    /// 1-based line and column (in chars) of `loc`'s start, as [`Source::line_col`] gives
    /// them, from the file's line table (a binary search, not a scan of the file).
    fn line_col(&self, loc: &Loc) -> (usize, usize) {
        let (Some(source), Some(starts)) =
            (self.files.get(loc.file), self.line_starts.get(loc.file))
        else {
            return (1, 1);
        };
        let text = source.text.as_str();
        let mut byte = loc.span.start.min(text.len());
        while byte > 0 && !text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = starts.partition_point(|&start| start <= byte).max(1);
        let start = starts.get(line - 1).copied().unwrap_or(0);
        let column = text.get(start..byte).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    /// The display name of file `file`.
    pub fn name(&self, file: usize) -> &str {
        self.files.get(file).map_or("", |f| f.name.as_str())
    }

    /// How many errors were found so far.
    pub fn count(&self) -> usize {
        self.found.len()
    }

    /// The errors, sorted by file then position (stable).
    pub(crate) fn into_diagnostics(mut self) -> Diagnostics {
        self.found.sort_by_key(|(file, offset, _)| (*file, *offset));
        self.found.into_iter().map(|(_, _, d)| d).collect()
    }
}

/// Where the circuit comes from.
struct Root<'a> {
    /// Its display name.
    name: &'a str,
    /// Its text when given as text, else read from `path`.
    text: Option<&'a str>,
    /// The path to read when `text` is `None`.
    path: &'a Path,
    /// The folder holding `blocks/`.
    dir: PathBuf,
}

impl Circuit {
    /// Reads the circuit at `path` (named in diagnostics as given) and its includes.
    ///
    /// # Errors
    /// Every problem of every file read, in file order then position: a file that cannot be
    /// read, malformed TOML, and every rule of `docs/circuit-schema.md`.
    pub fn load(path: impl AsRef<Path>) -> Result<Circuit, Diagnostics> {
        let path = path.as_ref();
        Self::load_as(path, &path.to_string_lossy())
    }

    /// Reads the file at `path` but names it `name` in diagnostics and in `files` (the macro
    /// passes an absolute path and the path the user wrote); includes are read from beside
    /// `path` and named beside `name`.
    ///
    /// # Errors
    /// As [`Circuit::load`].
    pub fn load_as(path: &Path, name: &str) -> Result<Circuit, Diagnostics> {
        Self::load_as_report(path, name).circuit
    }

    /// A circuit given as text named `name`; includes are read from `dir` (`None`: the parent
    /// of `name`). [`Circuit::read`] then lists only the includes.
    ///
    /// # Errors
    /// As [`Circuit::load`].
    pub fn from_source(name: &str, text: &str, dir: Option<&Path>) -> Result<Circuit, Diagnostics> {
        Self::from_source_report(name, text, dir).circuit
    }
}

/// The outcome of one load together with what it read, for front ends that track rebuilds:
/// a compiler front end must recompile when any file it read changes, also (especially) when
/// the circuit had errors, so it needs the files read whatever the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    /// The circuit, or every error found.
    pub circuit: Result<Circuit, Diagnostics>,
    /// The real path of every file read from disk, in the order read (as
    /// [`Circuit::read`] on success; on error, the files read before and while failing).
    pub read: Vec<PathBuf>,
    /// Every file read, named as given, in the order read (the circuit first, when it could
    /// be read): on error, what a front end can still look into (e.g. the `arch`).
    pub files: Vec<Source>,
}

impl Circuit {
    /// As [`Circuit::load_as`], reporting the files read also when the circuit has errors.
    #[must_use]
    pub fn load_as_report(path: &Path, name: &str) -> LoadReport {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        run_report(&Root {
            name,
            text: None,
            path,
            dir,
        })
    }

    /// As [`Circuit::from_source`], reporting the files read also when the circuit has
    /// errors.
    #[must_use]
    pub fn from_source_report(name: &str, text: &str, dir: Option<&Path>) -> LoadReport {
        let dir = dir.map_or_else(
            || {
                Path::new(name)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            },
            Path::to_path_buf,
        );
        run_report(&Root {
            name,
            text: Some(text),
            path: Path::new(name),
            dir,
        })
    }
}

/// The whole pipeline, with what it read.
fn run_report(root: &Root<'_>) -> LoadReport {
    let mut sink = Sink::default();
    let loaded = read::read_all(&mut sink, root);
    let read = loaded.read.clone();
    let circuit = validate::resolve(&mut sink, loaded);
    let files = sink.files.clone();
    let diagnostics = sink.into_diagnostics();
    let circuit = match circuit {
        Some(circuit) if diagnostics.is_empty() => Ok(circuit),
        _ if diagnostics.is_empty() => Err(Diagnostic::error(format!(
            "circuit `{}` could not be loaded",
            root.name
        ))
        .in_file(root.name)
        .into()),
        _ => Err(diagnostics),
    };
    LoadReport {
        circuit,
        read,
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::{Loc, Sink};
    use crate::diag::Source;

    #[test]
    fn line_table_agrees_with_source_line_col() {
        let mut sink = Sink::default();
        let text = "a\té = \"ü€𝄞\"\r\n\r\n\tx\n𝄞\n";
        let source = Source::new("t.toml", text);
        let file = sink.add_file(source.clone());
        for byte in 0..text.len() + 3 {
            let loc = Loc {
                file,
                span: byte..byte,
            };
            let (line, column) = source.line_col(byte);
            assert_eq!(sink.line_col(&loc), (line, column), "byte {byte}");
            assert_eq!(sink.place(&loc), format!("t.toml:{line}:{column}"));
        }
    }
}
