//! The `metrale-codegen` command line's library: [`import`], a Hugging Face `config.json` read
//! through a circuit's `[config]` into one `[checkpoint.NAME]` table.
//!
//! This package is the CLI product (the `metrale-codegen` binary: `check`, `plan`, `gen`,
//! `import`, `fit`, `schema`; see `metrale-codegen --help`). It owns what only the CLI needs:
//! clap, the plan's table, JSON and SVG output, and `config.json` reading (`serde_json`,
//! `jsonc-parser`), so that the generator library `metrale_codegen`, which every `build.rs`
//! user and the `circuit!` macro compile, depends on none of them.
//!
//! Invariants: the binary generates only through `metrale_codegen`'s public API
//! (`generate_file`, `Options`, `write_if_changed`), so `gen` writes exactly what the
//! `build.rs` `Builder` writes; `import` is a library module so its tests and the zoo's call it
//! without a process.

pub mod import;
