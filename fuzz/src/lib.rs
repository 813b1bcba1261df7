//! `metrale-fuzz`: an in-process fuzzer for metrale that runs on stable Rust.
//!
//! It mutates the real circuits, block libraries, inputs files, configs, shapes and command
//! lines of the workspace ([`corpus`], [`mutate`], [`json`], [`command`]), runs the loader, the
//! dynamic plan, the generated plans, the generator, the macro core, the CLI's commands
//! (`fit`, `plan`, `import`, `gen`), the `Builder`, rustc on generated modules, and what an
//! engine calls at run time (the allocator, the registry, a `config.json`) on each mutant with
//! panics caught ([`guard`], [`targets`], [`surfaces`], [`runtime`], [`weights`]), checks their invariants
//! ([`invariants`], [`compare`]), and saves every failing input ([`findings`]). [`run`] is the
//! loop, [`report`] what it prints; the binary's `main.rs` is the command line.
//!
//! Modules, each pointing only at the ones listed after it: `run` → `targets` (with
//! `surfaces`, `runtime` and `weights`, which hold the other targets' methods of the same `Context`) →
//! `compare` → `invariants` → `command`; `targets` → `mutate` → `json`, `corpus` → `compare`,
//! `command`; `run` → `findings`, `report`, `guard`.

pub mod command;
pub mod compare;
pub mod corpus;
pub mod findings;
pub mod guard;
pub mod invariants;
pub mod json;
pub mod mutate;
pub mod report;
pub mod run;
pub mod runtime;
pub mod surfaces;
pub mod targets;
pub mod weights;
