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
use crate::diag::{Diagnostic, Source};
use crate::is_snake_identifier;
use crate::walk::{Sink, Text, Walk};

/// The state of reading one circuit and its libraries.
struct Reader<'s> {
    /// Where errors go.
    sink: &'s mut Sink,
    /// The folder holding `blocks/` on disk.
    dir: PathBuf,
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
pub enum Input<'a> {
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

impl<'a> Input<'a> {
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
pub(super) fn read_all(sink: &mut Sink, input: Input<'_>) -> Loaded {
    let name = input.name();
    let mut reader = Reader {
        sink,
        dir: input.dir(),
        root_name: name.to_owned(),
        loaded: Loaded {
            complete: true,
            ..Loaded::default()
        },
        seen: Vec::new(),
        chain: Vec::new(),
    };
    let text = match input {
        Input::Text { text, .. } => text.to_owned(),
        Input::File { path, .. } => match fs::read_to_string(path) {
            Ok(text) => {
                reader.loaded.read.push(path.to_path_buf());
                text
            }
            Err(e) => {
                reader.sink.report_unlocated(
                    0,
                    0,
                    Diagnostic::error(format!("cannot read circuit `{name}`: {}", io_message(&e)))
                        .in_file(name),
                );
                reader.loaded.complete = false;
                return reader.loaded;
            }
        },
    };
    let file = reader.sink.add_file(Source::new(name, text.clone()));
    let Some(syntax) = parse_and_walk(reader.sink, file, &text, false) else {
        reader.loaded.complete = false;
        return reader.loaded;
    };
    let includes = syntax.includes.clone();
    reader.loaded.files.push(syntax);
    reader.chain.push((None, name.to_owned()));
    for include in &includes {
        reader.include(include);
    }
    reader.loaded
}

impl Reader<'_> {
    /// Reads the library `include` names (written in an already-read file), then its own
    /// includes.
    fn include(&mut self, include: &Text) {
        let name = include.text.as_str();
        if !self.include_name_is_valid(include) {
            return;
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
            return;
        }
        if self.seen.iter().any(|s| s == name) {
            return;
        }
        self.seen.push(name.to_owned());
        let path = self.dir.join("blocks").join(format!("{name}.toml"));
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                self.sink.report(
                    &include.loc,
                    Diagnostic::error(format!(
                        "cannot read block library `{display}`: {}",
                        io_message(&e)
                    ))
                    .label("included here")
                    .note(format!(
                        "include `{name}` reads `blocks/{name}.toml` beside the circuit"
                    )),
                );
                self.loaded.complete = false;
                return;
            }
        };
        self.loaded.read.push(path);
        let file = self
            .sink
            .add_file(Source::new(display.clone(), text.clone()));
        let Some(syntax) = parse_and_walk(self.sink, file, &text, true) else {
            self.loaded.complete = false;
            return;
        };
        let includes = syntax.includes.clone();
        self.loaded.files.push(syntax);
        self.chain.push((Some(name.to_owned()), display));
        for next in &includes {
            self.include(next);
        }
        self.chain.pop();
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

/// An I/O error's text without the trailing " (os error N)".
fn io_message(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(i) => text.get(..i).unwrap_or(&text).to_owned(),
        None => text,
    }
}
