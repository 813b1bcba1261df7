//! A Hugging Face `config.json` read through a circuit's `[config]` map (schema 2): one
//! checkpoint out, as the `[checkpoint.NAME]` table `metrale-codegen import` prints
//! ([`import`], [`Imported::to_toml`]), or added to the circuit at run time
//! ([`Circuit::with_config`]), or as the declared dims of a generated checkpoint's plan
//! ([`Circuit::dims_from_config`]), so no checkpoint figure is copied by hand and an engine
//! plans a fine-tune the build never saw. Feature `config`.
//!
//! It sits beside the loader, above it: it reads the loader and reloads the circuit, and the
//! loader reads nothing of it. Its stages, each a file, each only reading the ones before it:
//! - `json`: the config's JSON tree (a spanned tree from `jsonc-parser`, strict JSON), the one
//!   lookup of a dotted key path, the typed reads, and the located values the stages pass on.
//! - `table`: the checkpoint table [`Imported`] and its text, [`Imported::to_toml`].
//! - `rules`, `kinds`: the layer kinds, by rule (`[config.layer_rules]`, schema 3: the layers a
//!   rule names come from the loader's one law, `load::circuit::layer_law`) and every other
//!   way `[config]` gives them, checked against the layout.
//! - `import`: the `[config]` map evaluated into the table, [`import`].
//! - `blame`: an error the loader finds in the table, located where its figure came from.
//! - `check`: the table checked by reloading the circuit with it, [`Circuit::with_config`],
//!   [`Circuit::with_imported`], [`Circuit::dims_from_config`].
//!
//! Invariants:
//! - Every error names the config.json key at fault and is located in the config (its
//!   line:col): at the value for a wrong type or an inconsistency, at the object that lacks
//!   it for a missing key; an error about a circuit's rule also names the rule's `file:line`.
//!   All errors of one import are reported together.
//! - Nothing here panics, whatever the config holds (JSON nesting is bounded by the parser; a
//!   layer count past the loader's limit is refused before any per-layer work).
//! - A fixed pattern is only ever repeated whole, never cut: a depth it does not divide is
//!   refused with both figures and the depths that would fit.
//! - The table lists the dims in the circuit's declaration order; its pattern (pattern
//!   layouts) uses the first `[layout.symbols]` character of each layer kind.
//! - A checkpoint added at run time passes every check of the loader: the circuit is loaded
//!   again with the table appended, so it is accepted exactly when `import`'s table would be.
//! - No error points past the end of a file read: an error the loader finds in the appended
//!   table is located where its figure came from (the config key, `_name_or_path` for a name
//!   or `hf` read from it, or the option that gave it: then it has no place and says so), and
//!   a note naming a line of the table names the table read from the config instead. A
//!   refusal of the whole checkpoint (its name, figures that differ from a checkpoint of the
//!   same name or from a generated plan's, the table not loading) is located at the key it
//!   comes from.
//! - An integer past `u64::MAX` is said to be, not called "not an integer".

mod blame;
mod check;
mod figure;
mod import;
mod json;
mod kinds;
mod rules;
mod table;

pub use import::{ImportOptions, import};
pub use table::{Imported, ImportedKinds};

#[cfg(doc)]
use crate::load::Circuit;
