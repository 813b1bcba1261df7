//! Reading files: the circuit, then every block library it includes, and parsing each one.
//!
//! This module owns include resolution and the include graph checks. An include name `x` reads
//! `<circuit dir>/blocks/x.toml` and is named `<circuit name's folder>/blocks/x.toml` in
//! diagnostics; includes written inside a library resolve against the same folder (the
//! circuit's `blocks/`, i.e. beside the library).
//!
//! Invariants:
//! - Libraries are read depth first, in the order their includes are written; each library is
//!   read at most once (a diamond is not an error), so [`Loaded::files`] and the sink's files
//!   are in the same order, the circuit first.
//! - An include name is a lower snake-case identifier: without `/`, `\`, or `..` it cannot
//!   leave the circuit's folder. A library included while it is being included (directly or
//!   through others) is a cycle, reported at the include string with the chain as a note.
//! - A file with TOML syntax errors reports each of them and is not walked; its includes are
//!   not followed. [`Loaded::complete`] is then false, so checks that need every file are
//!   skipped rather than reporting errors caused by the missing parts.

use std::fs;
use std::path::{Path, PathBuf};

use toml::de::DeTable;

use super::raw::{FileSyntax, Loaded};
use super::top;
use crate::load::text::diag::{Diagnostic, Source};
use crate::load::text::limits::{MAX_LIBRARIES, too_many};
use crate::load::text::source_file::{ReadFailure, read_source};
use crate::load::text::walk::{Sink, Text, Walk};
use crate::model::is_snake_identifier;

/// The state of reading one circuit and its libraries.
struct Reader<'s> {
    /// Where errors go.
    sink: &'s mut Sink,
    /// The folder holding `blocks/` on disk.
    dir: PathBuf,
    /// That folder with its symlinks resolved, once (`None` when it does not resolve: then
    /// no library can be read, and `read_source` says why).
    real_dir: Option<PathBuf>,
    /// The display name of the circuit (libraries are named beside it).
    root_name: String,
    /// What was read.
    loaded: Loaded,
    /// Libraries already read (or found unreadable), by include name.
    seen: Vec<String>,
    /// The include chain being read: (include name, display name); the circuit has no
    /// include name.
    chain: Vec<(Option<String>, String)>,
}

/// Where a circuit comes from: the one input every front end (CLI, `Builder`, macro) hands
/// the loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitSource<'a> {
    /// The circuit file at `path`, named `name` in diagnostics and in `Circuit::files` (the
    /// macro reads an absolute path and names it as the user wrote it); includes are read from
    /// beside `path` and named beside `name`.
    File {
        /// Where to read it.
        path: &'a Path,
        /// How to name it.
        name: &'a str,
    },
    /// A circuit given as `text`, named `name`; includes are read from `dir` (`None`: the
    /// folder of `name`). Nothing of the circuit itself is read from disk.
    Text {
        /// How to name it.
        name: &'a str,
        /// Its text.
        text: &'a str,
        /// The folder holding its `blocks/`.
        dir: Option<&'a Path>,
    },
}

impl<'a> CircuitSource<'a> {
    /// Its display name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        match *self {
            Self::File { name, .. } | Self::Text { name, .. } => name,
        }
    }

    /// The folder its includes' `blocks/` is in.
    fn dir(&self) -> PathBuf {
        let beside = |path: &Path| path.parent().map(Path::to_path_buf).unwrap_or_default();
        match *self {
            Self::File { path, .. } => beside(path),
            Self::Text { dir: Some(dir), .. } => dir.to_path_buf(),
            Self::Text {
                name, dir: None, ..
            } => beside(Path::new(name)),
        }
    }
}

/// Reads and walks the circuit and every library it includes.
pub(super) fn read_all(sink: &mut Sink, input: CircuitSource<'_>) -> Loaded {
    let name = input.name();
    let dir = input.dir();
    let folder = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir.as_path()
    };
    let real_dir = fs::canonicalize(folder).ok();
    let mut reader = Reader {
        sink,
        real_dir,
        dir: dir.clone(),
        root_name: name.to_owned(),
        loaded: Loaded {
            complete: true,
            dir,
            ..Loaded::default()
        },
        seen: Vec::new(),
        chain: Vec::new(),
    };
    let source = match input {
        CircuitSource::Text { text, .. } => Source::new(name, text),
        CircuitSource::File { path, .. } => match read_source(path, name, "circuit") {
            Ok(source) => {
                reader.loaded.read.push(path.to_path_buf());
                source
            }
            Err(failure) => {
                reader.loaded.complete = false;
                reader.failed(failure, None);
                return reader.loaded;
            }
        },
    };
    let text = source.text().to_owned();
    let file = reader.sink.add_file(source);
    let Some(syntax) = parse_and_walk(reader.sink, file, &text, false) else {
        reader.loaded.complete = false;
        return reader.loaded;
    };
    let includes = syntax.includes.clone();
    reader.loaded.files.push(syntax);
    reader.chain.push((None, name.to_owned()));
    reader.include_all(includes);
    reader.loaded
}

impl Reader<'_> {
    /// Reads every library `includes` names (written in the circuit), depth first in the
    /// order written, each library's own includes before the next. The walk keeps its own stack
    /// of (includes of a file, how many were read), one frame per entry of `chain`.
    fn include_all(&mut self, includes: Vec<Text>) {
        let mut stack: Vec<(Vec<Text>, usize)> = vec![(includes, 0)];
        while let Some((list, next)) = stack.last_mut() {
            let Some(include) = list.get(*next).cloned() else {
                stack.pop();
                self.chain.pop();
                continue;
            };
            *next += 1;
            if let Some((display, includes)) = self.include(&include) {
                self.chain.push((Some(include.text.clone()), display));
                stack.push((includes, 0));
            }
        }
    }

    /// Reads the library `include` names (written in an already-read file): its display name
    /// and its own includes, or `None` when it is not read (already read, refused, or with
    /// errors).
    fn include(&mut self, include: &Text) -> Option<(String, Vec<Text>)> {
        let name = include.text.as_str();
        if !self.include_name_is_valid(include) {
            return None;
        }
        let display = library_name(&self.root_name, name);
        if self.chain.iter().any(|(n, _)| n.as_deref() == Some(name)) {
            let chain: Vec<&str> = self
                .chain
                .iter()
                .map(|(_, d)| d.as_str())
                .chain([display.as_str()])
                .collect();
            self.sink.report(
                &include.loc,
                Diagnostic::error(format!("include cycle: `{display}` includes itself"))
                    .label("included while it is being included")
                    .note(format!("include chain: {}", chain.join(" -> "))),
            );
            return None;
        }
        if self.seen.iter().any(|s| s == name) {
            return None;
        }
        if self.seen.len() >= MAX_LIBRARIES {
            self.sink
                .report(&include.loc, too_many("block libraries", MAX_LIBRARIES));
            self.loaded.complete = false;
            return None;
        }
        self.seen.push(name.to_owned());
        let path = self.dir.join("blocks").join(format!("{name}.toml"));
        let source = self
            .inside_folder(&path, include, &display)
            .and_then(|()| read_source(&path, &display, "block library"));
        let source = match source {
            Ok(source) => source,
            Err(failure) => {
                self.loaded.complete = false;
                self.failed(failure, Some(include));
                return None;
            }
        };
        self.loaded.read.push(path);
        let text = source.text().to_owned();
        let file = self.sink.add_file(source);
        let Some(syntax) = parse_and_walk(self.sink, file, &text, true) else {
            self.loaded.complete = false;
            return None;
        };
        let includes = syntax.includes.clone();
        self.loaded.files.push(syntax);
        Some((display, includes))
    }

    /// `Ok` when the library at `path` is, after following symlinks, inside the circuit's
    /// folder; else the error (naming where it leads, never its content).
    fn inside_folder(&self, path: &Path, include: &Text, display: &str) -> Result<(), ReadFailure> {
        let (Ok(real), Some(folder)) = (fs::canonicalize(path), &self.real_dir) else {
            // Missing: read_source says so.
            return Ok(());
        };
        if real.starts_with(folder) {
            return Ok(());
        }
        Err(ReadFailure {
            diagnostic: Box::new(Diagnostic::error(format!(
                "cannot read block library `{display}`: it resolves outside the circuit's folder"
            ))
            .note(format!(
                "`blocks/{}.toml` leads to `{}`, outside `{}`",
                include.text,
                real.display(),
                folder.display()
            ))
            .help("a block library is a file under the circuit's `blocks/` folder")),
            source: None,
        })
    }

    /// Reports a file that could not be read: located in its text when it was read but is
    /// not UTF-8 (the text becomes one of the files), else at the include that names it (or
    /// naming the circuit).
    fn failed(&mut self, failure: ReadFailure, include: Option<&Text>) {
        let ReadFailure { diagnostic, source } = failure;
        let diagnostic = *diagnostic;
        if let Some(source) = source {
            let file = self.sink.add_file(*source);
            self.sink.report_unlocated(file, 0, diagnostic);
            return;
        }
        match include {
            Some(include) => {
                let name = include.text.as_str();
                let mut diagnostic = diagnostic.label("included here");
                diagnostic.file = None;
                self.sink.report(
                    &include.loc,
                    diagnostic.note(format!(
                        "include `{name}` reads `blocks/{name}.toml` beside the circuit"
                    )),
                );
            }
            None => self.sink.report_unlocated(0, 0, diagnostic),
        }
    }

    /// Checks an include name; reports it when it could leave the circuit's folder or is not
    /// a lower snake-case name.
    fn include_name_is_valid(&mut self, include: &Text) -> bool {
        let name = include.text.as_str();
        if name.contains(['/', '\\']) || name.contains("..") {
            self.sink.report(
                &include.loc,
                Diagnostic::error(format!("include `{name}` leaves the circuit's folder"))
                    .label("not a library name")
                    .help(
                        "an include names a block library `blocks/<name>.toml` beside the \
                         circuit: write just `<name>`, without `/`, `\\` or `..`",
                    ),
            );
            return false;
        }
        if !is_snake_identifier(name) {
            self.sink.report(
                &include.loc,
                Diagnostic::error(format!("include `{name}` is not a valid library name"))
                    .label("not lower snake case")
                    .help(
                        "an include names a block library `blocks/<name>.toml` beside the \
                         circuit, `<name>` in `[a-z][a-z0-9_]*`",
                    ),
            );
            return false;
        }
        true
    }
}

/// Parses `text` (file `file` of the sink) and walks it as a circuit or a library. `None`
/// when it has TOML syntax errors (each reported).
fn parse_and_walk(sink: &mut Sink, file: usize, text: &str, library: bool) -> Option<FileSyntax> {
    let (tree, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        sink.report_toml_errors(file, errors);
        return None;
    }
    let mut walk = Walk { sink, file };
    Some(if library {
        top::walk_library(&mut walk, tree.get_ref())
    } else {
        top::walk_circuit(&mut walk, tree.get_ref())
    })
}

/// The display name of library `include`: `blocks/<include>.toml` beside the circuit's name.
fn library_name(root_name: &str, include: &str) -> String {
    let parent = Path::new(root_name)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    if parent.is_empty() {
        format!("blocks/{include}.toml")
    } else {
        format!("{parent}/blocks/{include}.toml")
    }
}
