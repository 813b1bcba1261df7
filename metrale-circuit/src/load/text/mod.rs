//! The loader's lowest layer: text in, located values and errors out. The one bounded read of
//! a file (`source_file`), the limits on what is read (`limits`), rustc-like diagnostics
//! against a file's one line table (`diag`), and the walk over `toml`'s spanned tree with the
//! error sink every stage reports to (`walk`), and the one quoting of a string as JSON and TOML
//! write it (`quote`, for the schemas and the config reader). The circuit loader and the inputs file both
//! read through it, so their errors look alike.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Nothing here panics on any bytes: spans are clamped, integers converted with checks, a
//!   file over its limit refused with a located error.
//! - It knows no circuit: it reads only the vocabulary's identifier rule, nothing above.

pub mod diag;
#[cfg(any(feature = "config", feature = "weights"))]
pub(crate) mod json;
pub mod limits;
#[cfg(any(feature = "schema", feature = "config"))]
pub(crate) mod quote;
mod size;
pub(crate) mod source_file;
pub(crate) mod walk;

pub use size::{parse_count, parse_size};
pub use source_file::{ReadFailure, read_source};
pub use walk::Origin;
