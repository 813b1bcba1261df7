//! `metrale-fuzz`: an in-process fuzzer for metrale that runs on stable Rust.
//!
//! It mutates the real circuits, block libraries, inputs files and shapes of the workspace
//! ([`corpus`], [`mutate`]), runs the loader, the dynamic plan, the generated plans, the
//! generator and the macro core on each mutant with panics caught ([`guard`], [`targets`]),
//! checks their invariants ([`invariants`], [`compare`]), and saves every failing input
//! ([`findings`]). [`run`] is the loop, [`report`] what it prints; the binary's `main.rs` is the
//! command line.
//!
//! Modules, each pointing only at the ones listed after it: `run` → `targets` → `compare` →
//! `invariants`; `targets` → `mutate` → `corpus`; `run` → `findings`, `report`, `guard`.

pub mod compare;
pub mod corpus;
pub mod findings;
pub mod guard;
pub mod invariants;
pub mod mutate;
pub mod report;
pub mod run;
pub mod targets;
