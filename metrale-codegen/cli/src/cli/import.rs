//! `metrale-codegen import <circuit.toml> <config.json> [--name NAME] [--hf ID]`: one
//! `[checkpoint.NAME]` table read from a Hugging Face config through the circuit's `[config]`.
//!
//! Invariants: stdout gets exactly the table (`metrale_circuit::config::Imported::to_toml`),
//! and only once the loader has accepted the circuit with it appended
//! (`Circuit::with_imported`): it loads and plans; every error (the circuit, the config, each
//! key, the loader's on the table) goes to stderr with exit 1. A checkpoint the circuit
//! already pins (same name, same figures) is printed for comparison with a note on stderr
//! saying so and whether its `hf` agrees: appending that table would define it twice.

use std::path::Path;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use metrale_circuit::config::{ImportOptions, Imported, import};
use metrale_circuit::load::{CheckpointSpec, Circuit, text::read_source};

use super::Outcome;

/// Print the checkpoint table a Hugging Face config.json describes.
///
/// Reads each figure (the layer count, the layer kinds, every dim) where the circuit's
/// `[config]` table says, and prints one `[checkpoint.NAME]` table that, appended to the
/// circuit, loads and plans. A key missing from the config, of the wrong type, or a layer
/// list or pattern inconsistent with the layer count is reported with its line:col in the
/// config (exit 1).
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The circuit file (it must have a `[config]` table).
    #[arg(value_name = "circuit.toml", value_parser = NonEmptyStringValueParser::new())]
    pub circuit: String,
    /// The model's config.json.
    #[arg(value_name = "config.json", value_parser = NonEmptyStringValueParser::new())]
    pub config: String,
    /// The checkpoint's name [default: from the config's `_name_or_path`, else the file stem].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The Hugging Face id written as `hf` [default: `_name_or_path` when it is `owner/name`].
    #[arg(long, value_name = "ID")]
    pub hf: Option<String>,
}

/// Runs `import`.
pub fn run(args: &ImportArgs) -> Outcome {
    let circuit = match Circuit::load(&args.circuit) {
        Ok(circuit) => circuit,
        Err(diagnostics) => return Outcome::bad_input(&diagnostics),
    };
    let config = match read_source(Path::new(&args.config), &args.config, "config") {
        Ok(config) => config,
        Err(failure) => return Outcome::bad_input(&(*failure.diagnostic).into()),
    };
    let stem = Path::new(&args.config)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let options = ImportOptions {
        name: args.name.as_deref(),
        hf: args.hf.as_deref(),
    };
    // Printed only when the loader accepts it: appended to the circuit, it loads.
    let checked = import(&circuit, &config, &stem, options)
        .and_then(|imported| circuit.with_imported(&imported, &config).map(|_| imported));
    match checked {
        Ok(imported) => {
            let mut outcome = Outcome::ok(imported.to_toml());
            if let Some(pinned) = circuit.checkpoint(&imported.name) {
                outcome.stderr = already_pinned(&circuit, pinned, &imported, &args.config);
            }
            outcome
        }
        Err(diagnostics) => Outcome::bad_input(&diagnostics),
    }
}

/// The note for a checkpoint the circuit already pins: `with_imported` accepted the config,
/// so its figures agree; its `hf` may not, and the table printed is not one to append.
fn already_pinned(
    circuit: &Circuit,
    pinned: &CheckpointSpec,
    imported: &Imported,
    config: &str,
) -> String {
    let spell = |hf: Option<&str>| hf.map_or_else(|| "none".to_owned(), |hf| format!("`{hf}`"));
    let hf = if pinned.hf() == imported.hf.as_deref() {
        format!("and so does its `hf` ({})", spell(pinned.hf()))
    } else {
        format!(
            "but its `hf` differs: {} in the circuit, {} in the config",
            spell(pinned.hf()),
            spell(imported.hf.as_deref())
        )
    };
    let name = &imported.name;
    format!(
        "note: circuit `{}` already pins checkpoint `{name}` (at {}): the layers and dims of \
         `{config}` agree with it, {hf}\n  = help: the table is printed to compare: appended, \
         it would define `{name}` twice, which the loader refuses; to change the pinned \
         checkpoint, edit its table\n",
        circuit.path(),
        pinned.origin(),
    )
}
