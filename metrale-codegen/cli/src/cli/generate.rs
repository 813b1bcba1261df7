//! `metrale-codegen gen <circuit.toml> [-o FILE] [--runtime-path PATH]`: the same formatted
//! module the `build.rs` API writes, on stdout or into a file.
//!
//! Invariants: the text is exactly `metrale_codegen::generate` of the circuit named as given,
//! so `gen` and `Builder` agree byte for byte; a file is written only when its bytes change;
//! `--runtime-path` defaults to [`DEFAULT_RUNTIME_PATH`], and a path that is not a Rust path is
//! bad input (exit 1), not a usage error.

use std::path::Path;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use metrale_circuit::load::diag::Diagnostic;

use super::Outcome;
use metrale_codegen::{DEFAULT_RUNTIME_PATH, Options, generate_file, write_if_changed};

/// Print the circuit's generated Rust module, or write it to a file.
///
/// The module is the one the build.rs API (`metrale_codegen::Builder`) writes, byte for byte:
/// a typed, statically laid-out plan per checkpoint. Exits 1 on a bad circuit or when the
/// file cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct GenArgs {
    /// The circuit file.
    #[arg(value_name = "circuit.toml", value_parser = NonEmptyStringValueParser::new())]
    pub circuit: String,
    /// Write the module to FILE instead of stdout (only when its bytes change).
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// The path of the runtime crate in the generated code.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_RUNTIME_PATH)]
    pub runtime_path: String,
}

/// Runs `gen`.
pub fn run(args: &GenArgs) -> Outcome {
    let mut options = Options::default();
    args.runtime_path.clone_into(&mut options.runtime_path);
    let generated = match generate_file(Path::new(&args.circuit), &options) {
        Ok(generated) => generated,
        Err(diagnostics) => return Outcome::bad_input(&diagnostics),
    };
    match &args.output {
        None => Outcome::ok(generated.code),
        Some(target) => match write_if_changed(Path::new(target), &generated.code) {
            Ok(_) => Outcome::ok(String::new()),
            Err(error) => Outcome::bad_input(
                &Diagnostic::error(format!("cannot write `{target}`: {error}")).into(),
            ),
        },
    }
}
