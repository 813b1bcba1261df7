//! The `metrale-codegen` command line as a library: [`run`] takes the arguments and returns
//! what to print and the exit status as values ([`Outcome`]), so the binary (`src/main.rs`)
//! only writes them, and tests and the fuzzer run every command in process.
//!
//! This package is the CLI product (the `metrale-codegen` binary: `check`, `plan`, `gen`,
//! `import`, `fit`, `schema`; see `metrale-codegen --help`). It owns what only the CLI needs,
//! clap, the plan's table, JSON and SVG output, so that the generator library
//! `metrale_codegen`, which every `build.rs` user and the `circuit!` macro compile, depends on
//! none of them.
//!
//! Invariants: every command generates only through `metrale_codegen`'s public API
//! (`generate_file`, `Options`, `write_if_changed`), so `gen` writes exactly what the
//! `build.rs` `Builder` writes; [`run`] prints nothing itself.

mod cli;

pub use cli::{Outcome, Status, run};
