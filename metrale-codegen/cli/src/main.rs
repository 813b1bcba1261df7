//! The `metrale-codegen` command line (the binary of the `metrale-cli` package): `check`
//! circuits, `plan` their state, `gen` their code, `import` a checkpoint from a `config.json`,
//! `fit` a budget, print the JSON `schema` of circuit and inputs files for editors (see
//! `metrale-codegen --help`).
//!
//! This file only does I/O: it hands the arguments, as the OS gave them, to `metrale_cli::run`
//! (which parses them with clap and returns what to print and the exit status as values) and
//! writes the result. Exit status: 0 ok (and `--help`, `--version`), 1 bad input (a circuit,
//! an inputs file, a checkpoint, a plan error) or output that could not be written (stdout
//! full or closed: the I/O error on stderr), 2 usage (clap's errors, a non-UTF-8 argument
//! among them).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = metrale_cli::run(std::env::args_os().skip(1));
    let written = write_out(&mut std::io::stdout().lock(), &outcome.stdout);
    let mut stderr = std::io::stderr().lock();
    // Nothing is left to report a failed write to stderr on.
    let _ = stderr.write_all(outcome.stderr.as_bytes());
    match written {
        Ok(()) => ExitCode::from(outcome.status.code()),
        Err(error) => {
            // The output is incomplete: exit 1 whatever the command decided. A reader that
            // closed the pipe (`| head`) chose to stop reading, so that is not worth a line.
            if error.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = writeln!(stderr, "error: cannot write the output to stdout: {error}");
            }
            ExitCode::from(1)
        }
    }
}

/// Writes `text` and flushes it, so a full disk or a closed pipe is seen here.
fn write_out(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
}
