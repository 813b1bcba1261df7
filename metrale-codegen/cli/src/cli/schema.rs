//! `metrale-codegen schema circuit|inputs`: the JSON Schema of the circuit file (a block
//! library's too) or of the inputs file, for editors: what `docs/schema/` ships.
//!
//! Invariants: stdout is exactly `metrale_circuit::schema::Schema::text`, so
//! `metrale-codegen schema circuit > docs/schema/circuit.schema.json` regenerates the shipped
//! file byte for byte; the argument's spellings are the schemas' own (`Schema::SPELLINGS`), and
//! any other is a usage error (exit 2, with the valid ones).

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use metrale_circuit::schema::Schema;

use super::Outcome;

/// Print the JSON Schema of circuit files or of inputs files.
///
/// The schema (JSON Schema draft 2020-12) is generated from the loader's own key tables: every
/// key with its meaning, its type and spellings, and which keys a layout, kind or schema
/// version requires or refuses. Editors built on taplo (Even Better TOML) use it to complete
/// and check files: write `#:schema <path or URL>` on a file's first line, or map files to it
/// in `.taplo.toml`. The repository ships both in docs/schema/.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct SchemaArgs {
    /// Which files: `circuit` (circuits and block libraries) or `inputs` (inputs files).
    #[arg(
        value_name = "FILE",
        value_parser = PossibleValuesParser::new(Schema::SPELLINGS)
            .try_map(|s| Schema::parse(&s).ok_or("not a schema"))
    )]
    pub file: Schema,
}

/// Runs `schema`.
pub fn run(args: &SchemaArgs) -> Outcome {
    Outcome::ok(args.file.text())
}
