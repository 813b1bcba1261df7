//! `metrale-codegen check <circuit.toml>...`: loads every circuit named and reports every error
//! of every file together.
//!
//! Invariants: every file is checked even after a bad one; stdout gets `ok: <path>` for each
//! circuit that loads, in argument order; stderr gets all diagnostics (one "aborting" line at
//! the end); the status is 1 when any file failed.

use metrale_circuit::Circuit;
use metrale_circuit::diag::Diagnostics;

use super::Outcome;
use super::args::{self, Spec};

/// `check` takes no flags.
const SPEC: Spec = Spec {
    options: &[],
    switches: &[],
};

/// Runs `check` on its arguments.
pub fn run(args: &[String]) -> Outcome {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(message) => return Outcome::usage(&message),
    };
    if parsed.help {
        return Outcome::help();
    }
    if parsed.positional.is_empty() {
        return Outcome::usage("`check` needs at least one circuit file");
    }
    check(&parsed.positional)
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
