//! `metrale-codegen check <circuit.toml>...`: loads every circuit named and reports every error
//! of every file together.
//!
//! Invariants: at least one file is named (clap refuses none, exit 2); every file is checked
//! even after a bad one; stdout gets `ok: <path>` for each circuit that loads, in argument
//! order; stderr gets all diagnostics (one "aborting" line at the end); the status is 1 when
//! any file failed.

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use metrale_circuit::load::Circuit;
use metrale_circuit::load::diag::Diagnostics;

use super::Outcome;

/// Load each circuit and report every error of every file.
///
/// Every file is checked, even after a bad one, and all the diagnostics are printed together
/// on stderr. Prints `ok: <path>` on stdout for each circuit that loads, in argument order.
/// Exits 1 when any file failed.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The circuit files to check.
    #[arg(value_name = "circuit.toml", required = true, value_parser = NonEmptyStringValueParser::new())]
    pub circuits: Vec<String>,
}

/// Runs `check`.
pub fn run(args: &CheckArgs) -> Outcome {
    check(&args.circuits)
}

/// Loads each circuit of `paths`: `ok: <path>` lines for the good ones, every diagnostic of the
/// bad ones.
pub fn check(paths: &[String]) -> Outcome {
    let mut ok = String::new();
    let mut diagnostics = Diagnostics::new();
    for path in paths {
        match Circuit::load(path) {
            Ok(_) => {
                ok.push_str("ok: ");
                ok.push_str(path);
                ok.push('\n');
            }
            Err(found) => diagnostics.extend(found),
        }
    }
    if diagnostics.is_empty() {
        Outcome::ok(ok)
    } else {
        Outcome {
            stdout: ok,
            ..Outcome::bad_input(&diagnostics)
        }
    }
}
