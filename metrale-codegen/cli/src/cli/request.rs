//! The request of `plan` and `fit`: the facts of their command line read once ([`Request`]):
//! the circuit path, the checkpoint asked for, the inputs (a file, or a built-in text:
//! [`InputsSource`]), the alignment and the parallel options ([`ParallelArgs`], which both commands
//! flatten into their arguments).
//!
//! Invariants:
//! - A command builds its [`Request`] once from its parsed arguments; the later stages
//!   (prepared, planned, render) read these facts from it, never from the arguments again.
//! - Without `--inputs` the inputs are a [`BuiltIn`]: [`DEFAULT_INPUTS`], or for
//!   `fit --for sequences` [`SERVING_INPUTS`], each the text of a file of this crate's
//!   `inputs/`, embedded from inside the crate (so the published package builds; the one copy
//!   of each).
//! - Nothing here is checked beyond clap's parsing: an alignment that is not a power of two, a
//!   file that cannot be read, an unknown checkpoint or rank is bad input of the later stages
//!   (exit 1).

use clap::Args;

/// Plan inputs built into the binary: how they are named (in errors and in the outputs) and
/// their text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltIn {
    /// Their name, in errors and in the outputs' headers.
    pub name: &'static str,
    /// The inputs file's text.
    pub text: &'static str,
}

/// The default plan inputs: the text of `metrale-codegen/cli/inputs/default.toml`.
pub const DEFAULT_INPUTS: BuiltIn = BuiltIn {
    name: "built-in default inputs (metrale-codegen/cli/inputs/default.toml)",
    text: include_str!("../../inputs/default.toml"),
};

/// The built-in serving profile `fit --for sequences` reads without `--inputs`: the text of
/// `metrale-codegen/cli/inputs/serving.toml`.
pub const SERVING_INPUTS: BuiltIn = BuiltIn {
    name: "built-in serving profile (metrale-codegen/cli/inputs/serving.toml)",
    text: include_str!("../../inputs/serving.toml"),
};

/// The plan inputs a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputsSource {
    /// `--inputs FILE`: the path, as given.
    File(String),
    /// No `--inputs`: the command's built-in inputs.
    BuiltIn(BuiltIn),
}

/// The parallel options of `plan` and `fit`.
#[derive(Debug, Clone, PartialEq, Eq, Args, Default)]
pub struct ParallelArgs {
    /// Tensor-parallel ranks [default: the inputs' `[parallel] tp`, else 1].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..))]
    pub tp: Option<u64>,
    /// Pipeline-parallel ranks [default: the inputs' `[parallel] pp`, else 1].
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u64).range(1..))]
    pub pp: Option<u64>,
    /// The tensor-parallel rank to plan (with --pp-rank).
    #[arg(long, value_name = "R", requires = "pp_rank")]
    pub tp_rank: Option<u64>,
    /// The pipeline-parallel rank to plan (with --tp-rank).
    #[arg(long, value_name = "S", requires = "tp_rank")]
    pub pp_rank: Option<u64>,
}

/// What `plan` and `fit` are asked to plan: the facts of their command line they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint asked for (`None`: the circuit's first).
    pub checkpoint: Option<String>,
    /// The plan inputs.
    pub inputs: InputsSource,
    /// The alignment of every region in bytes (a power of two once prepared).
    pub align: u64,
    /// The parallel sizes and rank asked for (over the inputs' `[parallel]`).
    pub parallel: ParallelArgs,
}

impl Request {
    /// The inputs file as given; `None` for built-in inputs.
    #[must_use]
    pub fn inputs_file(&self) -> Option<&str> {
        match &self.inputs {
            InputsSource::File(path) => Some(path),
            InputsSource::BuiltIn(_) => None,
        }
    }
}
