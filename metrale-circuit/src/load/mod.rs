//! The circuit TOML loader: files in, a validated [`Circuit`] or every error out.
//!
//! One entry point, [`load`] (a [`CircuitSource`] in, a [`LoadReport`] out: the circuit or every
//! error, and the files read either way), which every front end calls; [`Circuit::load`] is
//! its shorthand for a file. The pipeline, each stage only pointing down to the ones after it:
//!
//! 1. `read`: read the circuit and, depth first in the order written, every block library it
//!    includes (`include = ["x"]` reads `<circuit dir>/blocks/x.toml`; includes written inside a
//!    library resolve against the same folder). Each file is parsed with `toml`'s recoverable
//!    parser; a file with TOML syntax errors reports them and is not walked further.
//! 2. walk: `top` (top level and layout), `blocks` (block templates and states), `nodes`
//!    (which node touches which state) and `checkpoints` walk each file's spanned tree by hand
//!    (with `text::walk`) into the raw model (`raw`), so every error of every file is
//!    collected, each located at the offending key or value.
//! 3. `resolve`: the checks that need every file (a block defined twice, names of undefined
//!    blocks, dims a shape reads, the names the generated code needs: `names`), the
//!    evaluation of every shape under every checkpoint (`checkpoints::evaluate`) and of every
//!    reader's owner (`sharing`: KV shared across layers), then the validated [`Circuit`].
//!
//! Beneath the stages sit `text` (the one bounded read, the limits, diagnostics, the walk over
//! spanned TOML and its error sink) and `circuit` (the validated model the stages build, with
//! the shape grammar); beside them, `inputs_file` reads the plan inputs through `text` too,
//! and `mixup` tells both readers when a file looks like the other kind.
//! Two products of the crate read the loader from above and live beside it, each behind its
//! feature: `crate::schema` (feature `schema`) generates the JSON Schemas of both files from the
//! stages' own key tables, for editors, and `crate::config` (feature `config`) reads a Hugging
//! Face `config.json` through a circuit's `[config]` (the CLI's `import`, and a checkpoint or
//! dims added at run time). The loader reads neither, so a build script compiles neither.
//!
//! Invariants:
//! - Nothing here panics, whatever the files hold.
//! - Errors are reported in a deterministic order: file order (the circuit, then its libraries
//!   in the order read), then byte position; errors at the same position keep the order found.
//! - A [`Circuit`] is returned only when there is no error at all, so it upholds every invariant
//!   listed on [`Circuit`] (module `circuit`).

// Beneath the stages: text in, located values and errors out; then the validated model.
pub mod text;

pub mod circuit;

// The stages of the pipeline above. The key tables of `blocks`, `checkpoints`, `config`,
// `names`, `nodes` and `top` are read by `crate::schema`, the raw model by `crate::config`.
pub(crate) mod blocks;
pub(crate) mod checkpoints;
pub(crate) mod config;
mod derive;
pub mod names;
pub(crate) mod nodes;
mod raw;
mod read;
mod resolve;
mod sharing;
pub(crate) mod top;

// Beside the stages: the inputs file, and a file of one kind given as the other.
pub mod inputs_file;
mod mixup;

use std::path::{Path, PathBuf};

use text::diag::{Diagnostic, Diagnostics, Source};
use text::walk::Sink;

pub use circuit::{CheckpointSpec, Circuit, shape};
pub use inputs_file::InputsFile;
pub use read::CircuitSource;
pub use text::diag;

/// Loads a circuit: reads it and its includes, walks every file, resolves, and returns the
/// validated circuit or every error, with the files read either way. Every front end calls
/// this.
#[must_use]
pub fn load(input: CircuitSource<'_>) -> LoadReport {
    let mut sink = Sink::default();
    let loaded = read::read_all(&mut sink, input);
    let read = loaded.read.clone();
    let circuit = resolve::resolve(&mut sink, loaded);
    let files = sink.files.clone();
    let diagnostics = sink.into_diagnostics();
    let circuit = match circuit {
        Some(circuit) if diagnostics.is_empty() => Ok(circuit),
        _ if diagnostics.is_empty() => Err(Diagnostic::error(format!(
            "circuit `{}` could not be loaded",
            input.name()
        ))
        .in_file(input.name())
        .into()),
        _ => Err(diagnostics),
    };
    LoadReport {
        circuit,
        read,
        files,
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
    /// Reads the circuit at `path` (named in diagnostics as given) and its includes: [`load`]
    /// of the file named as given, for callers that need only the circuit.
    ///
    /// # Errors
    /// Every problem of every file read, in file order then position: a file that cannot be
    /// read, malformed TOML, and every rule of `docs/circuit-schema.md`.
    pub fn load(path: impl AsRef<Path>) -> Result<Circuit, Diagnostics> {
        let path = path.as_ref();
        let name = path.to_string_lossy();
        load(CircuitSource::File { path, name: &name }).circuit
    }
}
