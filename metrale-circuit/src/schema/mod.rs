//! JSON Schemas (draft 2020-12) of the circuit file and of the inputs file, so editors built on
//! taplo (Even Better TOML, and others reading `#:schema`) complete, document and check them as
//! they are typed. The repository ships them in `docs/schema/`; `metrale-codegen schema
//! circuit|inputs` prints them.
//!
//! ```
//! use metrale_circuit::schema::Schema;
//!
//! let text = Schema::Circuit.text();
//! assert!(text.contains("\"$schema\": \"https://json-schema.org/draft/2020-12/schema\""));
//! assert_eq!(Schema::parse("inputs"), Some(Schema::Inputs));
//! ```
//!
//! Owner: metrale-circuit (feature `schema`, off by default: a `build.rs` user and the
//! `circuit!` macro compile none of it). It sits beside the loader, above it: it reads the
//! loader's key tables and limits, and the loader reads nothing of it. `spec` holds the kinds
//! of doc line, `circuit` and `inputs` the doc lines, `build` the generator, `json` the text.
//!
//! Invariants:
//! - One source of truth: each table's keys are the loader's own key tables, each spelling list
//!   an enum's `SPELLINGS` or a loader table, each limit `limits`'. A key a loader stage adds is
//!   in the schema at once, and [`gaps`] names it until it has a doc line (a test holds it
//!   empty); a test fails when the shipped files differ from [`Schema::text`].
//! - The schemas accept every file the loader loads (a test runs a validator over every circuit
//!   and inputs file of the repository) and refuse what one file shows wrong by itself: an
//!   unknown key, a wrong type, a misspelled kind or dtype, a missing required key, a key of the
//!   wrong layout, kind or schema version, a malformed name or shape. What needs another file,
//!   the values of other keys or arithmetic (an undefined block, a dim a checkpoint lacks, a
//!   shape that overflows) is the loader's alone.
//! - The text is deterministic, and nothing here panics.

mod build;
mod circuit;
mod inputs;
pub(crate) mod json;
mod spec;

use crate::model::spelled::spelled_enum;

spelled_enum! {
    /// A file format with a JSON Schema.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Schema {
        /// A circuit (docs/circuit-schema.md), and a block library.
        Circuit = "circuit",
        /// An inputs file (docs/inputs.md).
        Inputs = "inputs",
    }
}

impl Schema {
    /// Its JSON Schema, as the shipped file holds it (ending in a newline).
    #[must_use]
    pub fn text(self) -> String {
        build::generate(self.document()).schema.to_text()
    }

    /// Where the repository ships it, from the workspace root.
    #[must_use]
    pub const fn shipped(self) -> &'static str {
        match self {
            Schema::Circuit => "docs/schema/circuit.schema.json",
            Schema::Inputs => "docs/schema/inputs.schema.json",
        }
    }

    /// Its doc lines.
    const fn document(self) -> &'static spec::Document {
        match self {
            Schema::Circuit => &circuit::CIRCUIT,
            Schema::Inputs => &inputs::INPUTS,
        }
    }
}

/// Every gap between the doc lines and the loader's tables, one sentence each naming the
/// schema, the table and the key: a key the loader reads without a doc line, a doc line naming
/// no key the loader reads, a key documented twice, a condition or rule naming a key or a
/// spelling its table does not have. Empty when the schemas say everything the loader reads.
#[must_use]
pub fn gaps() -> Vec<String> {
    Schema::ALL
        .iter()
        .flat_map(|schema| {
            build::generate(schema.document())
                .gaps
                .into_iter()
                .map(move |gap| format!("{} schema: {gap}", schema.name()))
        })
        .collect()
}

#[cfg(test)]
mod tests;
