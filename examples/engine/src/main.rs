//! `engine <circuit.toml> --checkpoint NAME --budget SIZE [--inputs FILE] [profile flags]`:
//! the worked engine's command line, a shell over [`metrale_engine::run()`]. It prints the
//! report on stdout and exits 0 when every tag reads back intact, 1 on any failure (the
//! error, or the report with the broken tags), 2 on a usage error (clap's).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = metrale_engine::Args::parse();
    match metrale_engine::run(&args) {
        Ok(report) => {
            print!("{report}");
            if report.intact() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprint!("{}", error.render());
            ExitCode::FAILURE
        }
    }
}
