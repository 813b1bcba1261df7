//! The `metrale-codegen` command line: `check` circuits, `plan` their state, `gen` their code (see
//! [`cli::USAGE`]).
//!
//! This file only does I/O: it collects the arguments, hands them to [`cli::run`] (which
//! returns what to print and the exit status as values) and writes the result. Exit status: 0
//! ok, 1 bad input (a circuit, an inputs file, a checkpoint, a plan error), 2 usage.

mod cli;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = match std::env::args_os()
        .skip(1)
        .map(std::ffi::OsString::into_string)
        .collect::<Result<Vec<String>, _>>()
    {
        Ok(args) => cli::run(&args),
        Err(arg) => cli::Outcome::usage(&format!(
            "argument `{}` is not valid UTF-8",
            arg.to_string_lossy()
        )),
    };
    // A closed pipe (`| head`) is not an error of ours: write what we can, never panic.
    let _ = std::io::stdout()
        .lock()
        .write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr()
        .lock()
        .write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.status.code())
}
