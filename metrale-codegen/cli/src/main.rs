//! The `metrale-codegen` command line (the binary of the `metrale-cli` package): `check`
//! circuits, `plan` their state, `gen` their code, `import` a checkpoint from a `config.json`,
//! `fit` a budget, print the JSON `schema` of circuit and inputs files for editors (see
//! `metrale-codegen --help`, or [`cli::Cli`]).
//!
//! This file only does I/O: it hands the arguments, as the OS gave them, to [`cli::run`]
//! (which parses them with clap and returns what to print and the exit status as values) and
//! writes the result. Exit status: 0 ok (and `--help`, `--version`), 1 bad input (a circuit,
//! an inputs file, a checkpoint, a plan error), 2 usage (clap's errors, a non-UTF-8 argument
//! among them).

mod cli;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = cli::run(std::env::args_os().skip(1));
    // A closed pipe (`| head`) is not an error of ours: write what we can, never panic.
    let _ = std::io::stdout()
        .lock()
        .write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr()
        .lock()
        .write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.status.code())
}
