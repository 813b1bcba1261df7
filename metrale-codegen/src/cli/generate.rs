//! `metrale-codegen gen <circuit.toml> [-o FILE] [--runtime-path PATH]`: the same formatted
//! module the `build.rs` API writes, on stdout or into a file.
//!
//! Invariants: the text is exactly `metrale_codegen::generate` of the circuit named as given,
//! so `gen` and `Builder` agree byte for byte; a file is written only when its bytes change.

use std::path::Path;

use metrale_circuit::diag::Diagnostic;

use super::Outcome;
use super::args::{self, Spec};
use metrale_codegen::{Options, generate_file, write_if_changed};

/// `gen` takes an output file and a runtime path.
const SPEC: Spec = Spec {
    options: &["-o", "--runtime-path"],
    switches: &[],
};

/// Runs `gen` on its arguments.
pub fn run(args: &[String]) -> Outcome {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(message) => return Outcome::usage(&message),
    };
    if parsed.help {
        return Outcome::help();
    }
    let [circuit] = parsed.positional.as_slice() else {
        return Outcome::usage("`gen` takes exactly one circuit file");
    };
    let mut options = Options::default();
    if let Some(path) = parsed.option("--runtime-path") {
        path.clone_into(&mut options.runtime_path);
    }
    let generated = match generate_file(Path::new(circuit), &options) {
        Ok(generated) => generated,
        Err(diagnostics) => return Outcome::bad_input(&diagnostics),
    };
    match parsed.option("-o") {
        None => Outcome::ok(generated.code),
        Some(target) => match write_if_changed(Path::new(target), &generated.code) {
            Ok(_) => Outcome::ok(String::new()),
            Err(error) => Outcome::bad_input(
                &Diagnostic::error(format!("cannot write `{target}`: {error}")).into(),
            ),
        },
    }
}
