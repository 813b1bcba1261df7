//! The commands of the `metrale-codegen` binary, as functions from arguments to an [`Outcome`]
//! (what to print on stdout and stderr, and the exit status), so they can be tested without a
//! process.
//!
//! Invariants:
//! - Nothing here panics or exits: every error becomes an [`Outcome`]; `main` does the I/O.
//! - Usage errors (an unknown command or flag, a missing or malformed argument) exit 2 and
//!   print [`USAGE`] on stderr; bad input (a circuit, an inputs file, a checkpoint, a plan
//!   error) exits 1 with rustc-like diagnostics on stderr; `help` prints [`USAGE`] on stdout.
//! - A command is one arm of [`dispatch`] and one module with a `run(&[String]) -> Outcome`.

mod args;
mod check;
mod generate;
mod plan;
mod table;

use metrale_circuit::diag::{Diagnostics, did_you_mean};

/// The usage text (`metrale-codegen help`).
pub const USAGE: &str = "\
metrale-codegen: check metrale circuits and size the state they keep

Usage:
  metrale-codegen check <circuit.toml>...
  metrale-codegen plan <circuit.toml> [--checkpoint NAME] [--inputs FILE] [--align N] [--json]
  metrale-codegen gen <circuit.toml> [-o FILE] [--runtime-path PATH]
  metrale-codegen help

Commands:
  check   Load each circuit and report every error of every file. Prints `ok: <path>` for
          each circuit that loads.
  plan    Size every state of one checkpoint of a circuit under the plan inputs and lay it
          out: a table of terms with totals per space and per lifetime.
  gen     Print the circuit's generated Rust module (the one the build.rs API writes), or
          write it to FILE with -o (only when its bytes change). --runtime-path names the
          runtime crate in the output (default ::metrale_circuit).
  help    Print this text (also -h, --help).

Options of plan:
  --checkpoint NAME  the checkpoint to size (default: the circuit's first)
  --inputs FILE      the plan inputs file (default: the built-in circuits/inputs/default.toml)
  --align N          the alignment of every region in bytes, a power of two (default: 256)
  --json             print the plan as JSON (exact byte counts) instead of a table

Exit status: 0 ok, 1 bad input (circuit, inputs file, checkpoint, plan), 2 usage error.
";

/// The commands, for "did you mean".
const COMMANDS: &[&str] = &["check", "plan", "gen", "help"];

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Done.
    Ok,
    /// A circuit, an inputs file, a checkpoint or a plan was refused.
    BadInput,
    /// The command line was not understood.
    Usage,
}

impl Status {
    /// The process exit code: 0, 1 or 2.
    pub const fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::BadInput => 1,
            Status::Usage => 2,
        }
    }
}

/// What a command prints and how the process ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The exit status.
    pub status: Status,
    /// Text for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
}

impl Outcome {
    /// Success printing `stdout`.
    pub fn ok(stdout: String) -> Self {
        Self {
            status: Status::Ok,
            stdout,
            stderr: String::new(),
        }
    }

    /// Bad input: the diagnostics on stderr, exit 1.
    pub fn bad_input(diagnostics: &Diagnostics) -> Self {
        Self {
            status: Status::BadInput,
            stdout: String::new(),
            stderr: format!("{}\n", diagnostics.render()),
        }
    }

    /// A usage error: the message and the usage text on stderr, exit 2.
    pub fn usage(message: &str) -> Self {
        Self {
            status: Status::Usage,
            stdout: String::new(),
            stderr: format!("error: {message}\n\n{USAGE}"),
        }
    }

    /// The usage text on stdout, exit 0.
    pub fn help() -> Self {
        Self::ok(USAGE.to_owned())
    }
}

/// Runs the command line `args` (without the program name).
pub fn run(args: &[String]) -> Outcome {
    let Some((command, rest)) = args.split_first() else {
        return Outcome::usage("no command given");
    };
    dispatch(command, rest).unwrap_or_else(|| {
        Outcome::usage(&match did_you_mean(command, COMMANDS) {
            Some(near) => format!("unknown command `{command}`; did you mean `{near}`?"),
            None => format!("unknown command `{command}`"),
        })
    })
}

/// Runs `command` on its arguments; `None` for an unknown command.
fn dispatch(command: &str, args: &[String]) -> Option<Outcome> {
    Some(match command {
        "help" | "-h" | "--help" => Outcome::help(),
        "check" => check::run(args),
        "plan" => plan::run(args),
        "gen" => generate::run(args),
        _ => return None,
    })
}
