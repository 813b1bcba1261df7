//! The commands of the `metrale-codegen` binary: the command line as clap derive types
//! ([`Cli`], [`Command`], each command's arguments in its own module), and [`run`], a function
//! from arguments to an [`Outcome`] (what to print on stdout and stderr, and the exit status),
//! so the commands can be tested without a process.
//!
//! Invariants:
//! - Nothing here panics or exits: every error becomes an [`Outcome`]; `main` does the I/O.
//! - Usage errors (an unknown command or flag, a missing, malformed or repeated argument) are
//!   clap's: its message, a "did you mean" tip where one is near, and the usage, on stderr,
//!   exit 2. `--help`, `-h` and `help [COMMAND]` print the help on stdout and exit 0, and so
//!   does `--version`. Bad input (a circuit, an inputs file, a checkpoint, a plan error)
//!   exits 1 with rustc-like diagnostics on stderr.
//! - Every option is taken at most once: clap's default for a single-valued argument, with
//!   `args_override_self` left off, refuses a repeat.
//! - The usage line is always spelled `metrale-codegen`, whatever the binary was started as.
//! - A command is one variant of [`Command`] and one module with its arguments' struct and a
//!   `run(&Args) -> Outcome`.

mod blame;
mod check;
mod fit;
mod generate;
mod import;
mod json;
mod plan;
mod planned;
mod prepared;
mod ranks;
mod report;
mod request;
mod schema;
mod svg;
mod table;

use std::ffi::OsString;

use clap::{Parser, Subcommand};
use metrale_circuit::load::diag::Diagnostics;

/// The program name, in the usage and `--version`.
const NAME: &str = "metrale-codegen";

/// Check metrale circuits, size the state they keep, and generate their typed plans.
///
/// Every command reads circuit files (TOML, see docs/circuit-schema.md). Run
/// `metrale-codegen <COMMAND> --help` for the arguments of a command.
#[derive(Debug, Parser)]
#[command(
    name = NAME,
    version,
    after_help = "Exit status: 0 ok, 1 bad input (circuit, inputs file, checkpoint, plan), \
                  2 usage error."
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands. Their help is the doc of each one's arguments' struct: a doc comment on a
/// variant would replace it, so the variants have none.
#[derive(Debug, Subcommand)]
pub enum Command {
    Check(check::CheckArgs),
    Plan(plan::PlanArgs),
    Gen(generate::GenArgs),
    Import(import::ImportArgs),
    Fit(fit::FitArgs),
    Schema(schema::SchemaArgs),
}

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
    #[must_use]
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
    #[must_use]
    pub fn ok(stdout: String) -> Self {
        Self {
            status: Status::Ok,
            stdout,
            stderr: String::new(),
        }
    }

    /// Bad input: the diagnostics on stderr, exit 1.
    #[must_use]
    pub fn bad_input(diagnostics: &Diagnostics) -> Self {
        Self {
            status: Status::BadInput,
            stdout: String::new(),
            stderr: format!("{}\n", diagnostics.render()),
        }
    }

    /// What clap says instead of parsing: help or the version on stdout (exit 0), or a usage
    /// error on stderr (exit 2).
    #[must_use]
    pub fn clap(error: &clap::Error) -> Self {
        let text = error.render().to_string();
        if error.use_stderr() {
            Self {
                status: Status::Usage,
                stdout: String::new(),
                stderr: text,
            }
        } else {
            Self::ok(text)
        }
    }
}

/// Runs the command line `args` (without the program name).
pub fn run<I, T>(args: I) -> Outcome
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let command_line =
        std::iter::once(OsString::from(NAME)).chain(args.into_iter().map(Into::into));
    match Cli::try_parse_from(command_line) {
        Ok(cli) => dispatch(&cli.command),
        Err(error) => Outcome::clap(&error),
    }
}

/// Runs one parsed command.
fn dispatch(command: &Command) -> Outcome {
    match command {
        Command::Check(args) => check::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Gen(args) => generate::run(args),
        Command::Import(args) => import::run(args),
        Command::Fit(args) => fit::run(args),
        Command::Schema(args) => schema::run(args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use clap::error::ErrorKind;
    use metrale_circuit::DEFAULT_ALIGN;

    use super::request::{DEFAULT_INPUTS, InputsSource, ParallelArgs, Request, SERVING_INPUTS};
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once(NAME).chain(args.iter().copied())).map(|c| c.command)
    }

    fn plan(args: &[&str]) -> plan::PlanArgs {
        match parse(args) {
            Ok(Command::Plan(plan)) => plan,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn fit(args: &[&str]) -> fit::FitArgs {
        match parse(args) {
            Ok(Command::Fit(fit)) => fit,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    /// The kind of usage error `args` is; it must be one (exit 2, on stderr).
    fn refused(args: &[&str]) -> ErrorKind {
        let error = parse(args).expect_err("a usage error");
        assert_eq!(error.exit_code(), 2, "{args:?}: {error}");
        assert!(error.use_stderr(), "{args:?}");
        error.kind()
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn options_switches_and_positionals() {
        let defaults = plan(&["plan", "c.toml"]);
        assert_eq!(defaults.circuit, "c.toml");
        assert_eq!(defaults.checkpoint, None);
        assert_eq!(defaults.inputs, None);
        assert_eq!(defaults.align, DEFAULT_ALIGN);
        assert_eq!((defaults.sort, defaults.terms), (None, false));
        assert_eq!(defaults.group, None);
        assert!(!defaults.json);
        assert_eq!(defaults.svg, None);

        let given = plan(&[
            "plan",
            "--align",
            "64",
            "c.toml",
            "--json",
            "--checkpoint=tiny",
            "--inputs",
            "-",
            "--sort=plan",
            "--group",
            "lifetime",
            "--svg",
            "map.svg",
        ]);
        assert_eq!(given.circuit, "c.toml");
        assert_eq!(given.align, 64);
        assert_eq!(given.checkpoint.as_deref(), Some("tiny"));
        assert_eq!(given.inputs.as_deref(), Some("-"));
        assert!(given.json);
        assert_eq!(given.sort, Some(table::Sort::Plan));
        assert_eq!(given.group, Some(table::Group::Lifetime));
        assert_eq!(given.svg.as_deref(), Some("map.svg"));

        // `--` ends the options; a lone `-` is a positional.
        match parse(&["check", "a.toml", "--", "--x", "-"]) {
            Ok(Command::Check(check)) => assert_eq!(check.circuits, ["a.toml", "--x", "-"]),
            other => panic!("{other:?}"),
        }
        match parse(&["gen", "c.toml", "-o=out.rs", "--runtime-path", "::rt"]) {
            Ok(Command::Gen(generate)) => {
                assert_eq!(generate.output.as_deref(), Some("out.rs"));
                assert_eq!(generate.runtime_path, "::rt");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plan_and_fit_read_the_same_request() {
        let shared = [
            "c.toml",
            "--checkpoint",
            "tiny",
            "--inputs",
            "in.toml",
            "--align",
            "64",
            "--tp",
            "2",
            "--pp-rank",
            "1",
            "--tp-rank",
            "0",
        ];
        let from_plan = plan(&[&["plan"][..], &shared].concat()).request();
        let budget = ["--budget", "1GiB", "--for", "kv-blocks"];
        let from_fit = fit(&[&["fit"][..], &shared, &budget].concat()).request();
        assert_eq!(from_plan, from_fit);
        assert_eq!(
            from_plan,
            Request {
                circuit: "c.toml".to_owned(),
                checkpoint: Some("tiny".to_owned()),
                inputs: InputsSource::File("in.toml".to_owned()),
                align: 64,
                parallel: ParallelArgs {
                    tp: Some(2),
                    pp: None,
                    tp_rank: Some(0),
                    pp_rank: Some(1),
                },
            }
        );
        // Without `--inputs`: the built-in defaults, or the serving profile `--for sequences`
        // varies.
        let built_in = |request: Request| match request.inputs {
            InputsSource::BuiltIn(built_in) => built_in,
            InputsSource::File(path) => panic!("{path}"),
        };
        assert_eq!(
            built_in(plan(&["plan", "c.toml"]).request()),
            DEFAULT_INPUTS
        );
        let kv = fit(&["fit", "c.toml", "--budget", "1", "--for", "kv-blocks"]);
        assert_eq!(built_in(kv.request()), DEFAULT_INPUTS);
        let sequences = [
            "fit",
            "c.toml",
            "--budget",
            "1",
            "--for",
            "sequences",
            "--context",
            "8",
        ];
        assert_eq!(built_in(fit(&sequences).request()), SERVING_INPUTS);
    }

    #[test]
    fn refusals() {
        let c = "c.toml";
        assert_eq!(
            refused(&[]),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        assert_eq!(refused(&["plna"]), ErrorKind::InvalidSubcommand);
        assert_eq!(
            refused(&["plan", c, "--algin", "4"]),
            ErrorKind::UnknownArgument
        );
        assert_eq!(refused(&["plan", c, "-x"]), ErrorKind::UnknownArgument);
        assert_eq!(refused(&["plan", c, "--align"]), ErrorKind::InvalidValue);
        assert_eq!(
            refused(&["plan", c, "--align", "abc"]),
            ErrorKind::ValueValidation
        );
        assert_eq!(refused(&["plan", c, "--json=1"]), ErrorKind::TooManyValues);
        assert_eq!(
            refused(&["plan", c, "--sort", "size"]),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            refused(&["plan", c, "--group", "space"]),
            ErrorKind::InvalidValue
        );
        assert_eq!(refused(&["plan", c, "--svg"]), ErrorKind::InvalidValue);
        let twice = ["plan", c, "--svg", "a.svg", "--svg", "b.svg"];
        assert_eq!(refused(&twice), ErrorKind::ArgumentConflict);
        assert_eq!(
            refused(&["plan", c, "--json", "--json"]),
            ErrorKind::ArgumentConflict
        );
        let twice = ["plan", c, "--align", "1", "--align=2"];
        assert_eq!(refused(&twice), ErrorKind::ArgumentConflict);
        let twice = ["gen", c, "-o", "a.rs", "-o", "b.rs"];
        assert_eq!(refused(&twice), ErrorKind::ArgumentConflict);
        assert_eq!(refused(&["plan"]), ErrorKind::MissingRequiredArgument);
        assert_eq!(refused(&["plan", c, "d.toml"]), ErrorKind::UnknownArgument);
        assert_eq!(refused(&["check"]), ErrorKind::MissingRequiredArgument);
        assert_eq!(refused(&["gen"]), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn help_and_version_go_to_stdout_with_exit_0() {
        for args in [
            &["--help"][..],
            &["-h"],
            &["help"],
            &["help", "plan"],
            &["plan", "-h"],
        ] {
            let out = run(args.iter().copied());
            assert_eq!(out.status, Status::Ok, "{args:?}: {}", out.stderr);
            assert!(
                out.stdout.contains("Usage: metrale-codegen"),
                "{args:?}: {}",
                out.stdout
            );
            assert!(out.stderr.is_empty(), "{args:?}");
        }
        let out = run(["--version"]);
        assert_eq!(out.status, Status::Ok);
        assert_eq!(
            out.stdout,
            format!("{NAME} {}\n", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn a_usage_error_goes_to_stderr_with_exit_2() {
        let out = run(["plan", "c.toml", "--jsn"]);
        assert_eq!(out.status, Status::Usage);
        assert_eq!(out.status.code(), 2);
        assert!(out.stdout.is_empty());
        assert!(
            out.stderr.starts_with("error: unexpected argument '--jsn'"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("'--json'"), "{}", out.stderr);
    }
}
