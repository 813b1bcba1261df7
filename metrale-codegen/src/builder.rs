//! The `build.rs` front end: [`Builder`] generates each circuit's module into `$OUT_DIR` (or a
//! folder of the caller's), writing a file only when its bytes change, and tells cargo which
//! files to watch.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - `cargo::rerun-if-changed` is printed for every file read (each circuit and its includes)
//!   and never for a file written, so an unchanged tree does not rebuild.
//! - Every circuit is tried; the error holds the located diagnostics of all that failed.
//! - An output is replaced whole (a temporary file renamed into place), and only a regular
//!   file of the output's length is read to compare ([`write_if_changed`]).
//! - No path with a line break is printed to cargo: it is an error instead.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use metrale_circuit::load::diag::{Diagnostic, Diagnostics};

use crate::{Options, generate_file};

/// Generates circuits' modules from a build script.
///
/// ```no_run
/// metrale_codegen::Builder::new()
///     .circuit("circuits/qwen3_5.toml")
///     .compile()
///     .expect("circuits generate");
/// // then, in the crate: include!(concat!(env!("OUT_DIR"), "/qwen3_5.rs"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    circuits: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    options: Options,
    no_rerun_lines: bool,
}

/// What [`Builder::compile`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// Every output file, changed or not (`<out dir>/<arch>.rs`).
    pub outputs: Vec<PathBuf>,
    /// The outputs whose bytes changed and were written.
    pub written: Vec<PathBuf>,
    /// Every file read, as printed in `cargo::rerun-if-changed` lines.
    pub read: Vec<PathBuf>,
}

/// Why [`Builder::compile`] failed: the located diagnostics, or an I/O error on the output.
/// Its `Debug` is its rendered text, so `fn main() -> Result<(), Box<dyn Error>>` shows the
/// diagnostics as rustc would.
#[derive(Clone, PartialEq, Eq)]
pub struct BuildError(pub Diagnostics);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.render())
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

impl Builder {
    /// A builder with no circuit, writing to `$OUT_DIR` with rerun lines on.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a circuit file (relative to the package root, as cargo runs build scripts there).
    #[must_use]
    pub fn circuit(mut self, path: impl AsRef<Path>) -> Self {
        self.circuits.push(path.as_ref().to_path_buf());
        self
    }

    /// Writes into `dir` instead of `$OUT_DIR`.
    #[must_use]
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Names the runtime crate by `path` in generated code (for crates that re-export
    /// metrale-circuit), instead of `::metrale_circuit`.
    #[must_use]
    pub fn runtime_path(mut self, path: &str) -> Self {
        path.clone_into(&mut self.options.runtime_path);
        self
    }

    /// Turns the `cargo::rerun-if-changed` lines on (the default) or off.
    #[must_use]
    pub fn rerun_if_changed(mut self, on: bool) -> Self {
        self.no_rerun_lines = !on;
        self
    }

    /// Generates every circuit, printing the rerun lines to stdout for cargo.
    ///
    /// # Errors
    /// [`BuildError`] with the diagnostics of every circuit that failed, or of an output that
    /// could not be written; `$OUT_DIR` unset without [`Builder::out_dir`].
    pub fn compile(&self) -> Result<Compiled, BuildError> {
        self.compile_to(&mut std::io::stdout().lock())
    }

    /// [`Builder::compile`], printing the rerun lines to `out`.
    ///
    /// # Errors
    /// As [`Builder::compile`].
    pub fn compile_to(&self, out: &mut dyn Write) -> Result<Compiled, BuildError> {
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    BuildError(
                        Diagnostic::error("OUT_DIR is not set")
                            .help("call the builder from a build script, or give it `.out_dir(..)`")
                            .into(),
                    )
                })?,
        };
        let mut compiled = Compiled {
            outputs: Vec::new(),
            written: Vec::new(),
            read: Vec::new(),
        };
        let mut problems = Diagnostics::new();
        // Which circuit wrote each module: a second circuit of the same arch would overwrite it.
        let mut written_by: Vec<(String, &PathBuf)> = Vec::new();
        for circuit in &self.circuits {
            match generate_file(circuit, &self.options) {
                Ok(generated) => {
                    compiled.read.extend(generated.read);
                    if let Some((_, first)) = written_by.iter().find(|(a, _)| *a == generated.arch)
                    {
                        problems.push(
                            Diagnostic::error(format!(
                                "circuits `{}` and `{}` both generate module `{}`",
                                first.display(),
                                circuit.display(),
                                generated.arch
                            ))
                            .in_file(circuit.display().to_string())
                            .help("each module is written to `<arch>.rs`: give one circuit another `arch`, or build them in two builders with their own `out_dir`"),
                        );
                        continue;
                    }
                    written_by.push((generated.arch.clone(), circuit));
                    let target = out_dir.join(format!("{}.rs", generated.arch));
                    match write_if_changed(&target, &generated.code) {
                        Ok(true) => compiled.written.push(target.clone()),
                        Ok(false) => {}
                        Err(error) => problems.push(
                            Diagnostic::error(format!(
                                "cannot write `{}`: {error}",
                                target.display()
                            ))
                            .in_file(circuit.display().to_string()),
                        ),
                    }
                    compiled.outputs.push(target);
                }
                Err(diagnostics) => {
                    // Watch the circuit even when it fails, so fixing it reruns the build.
                    compiled.read.push(circuit.clone());
                    problems.extend(diagnostics);
                }
            }
        }
        if !self.no_rerun_lines {
            for path in &compiled.read {
                let shown = path.display().to_string();
                // Cargo reads one instruction a line, with no escapes: a line break in a path
                // would split it into a second instruction.
                if shown.contains(['\n', '\r']) {
                    problems.push(
                        Diagnostic::error(format!(
                            "cargo cannot watch `{}`: its path holds a line break",
                            shown.escape_debug()
                        ))
                        .help("rename the file or its folder without line breaks"),
                    );
                    continue;
                }
                // A failed write to cargo's pipe cannot be reported better than by the build.
                let _ = writeln!(out, "cargo::rerun-if-changed={shown}");
            }
        }
        problems.into_result(compiled).map_err(BuildError)
    }
}

/// Writes `text` to `path` unless the file already holds exactly it (so tools watching its
/// modification time see no change); `true` when written.
///
/// Only a regular file of `text`'s length is read to compare, so the work is bounded by the
/// output, never by the target: a device or a pipe (`/dev/stdout`, `/dev/zero`) is written
/// straight, never read. A file is written to a temporary file in the same folder, then
/// renamed into place, so a reader sees the old bytes or the new, never a torn file, and two
/// writers racing on one folder leave one whole file.
///
/// # Errors
/// The I/O error of reading the old file, creating the folder, or writing, syncing or renaming
/// the new one (its temporary file is removed then).
pub fn write_if_changed(path: &Path, text: &str) -> std::io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            if meta.len() == text.len() as u64 && holds(path, text)? {
                return Ok(false);
            }
        }
        Ok(_) => {
            // Not a regular file: a device or a pipe the user named (`-o /dev/stdout`).
            let mut target = std::fs::OpenOptions::new().write(true).open(path)?;
            target.write_all(text.as_bytes())?;
            target.flush()?;
            return Ok(true);
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let temporary = parent.join(temporary_name(path));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map(|()| true)
}

/// Whether the regular file at `path` holds exactly `text`, reading at most one byte more.
fn holds(path: &Path, text: &str) -> std::io::Result<bool> {
    use std::io::Read;
    let mut old = Vec::with_capacity(text.len());
    std::fs::File::open(path)?
        .take(text.len() as u64 + 1)
        .read_to_end(&mut old)?;
    Ok(old == text.as_bytes())
}

/// A name in the target's folder no other writer uses: the target's, the process and a count.
fn temporary_name(path: &Path) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy());
    format!(".{name}.{}.{count}.tmp", std::process::id())
}
