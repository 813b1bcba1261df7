//! A file of the other kind: an inputs file given as a circuit, or a circuit given as an inputs
//! file. The top-level keys of both files (the walk of each reads its own from here, so this
//! module depends on neither), which kind a file's top-level keys say it is, and the help line naming the mix-up that
//! the first error of such a file (at its start: `missing `schema``, `missing key `slots``)
//! carries.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A file looks like the other kind only when some of its top-level keys are that kind's and
//!   none is its own (the two key sets are disjoint): a circuit or an inputs file with a typo,
//!   or an empty file, never gets the hint.
//! - The keys shown are the file's own, in file order, at most [`SHOWN`].

use crate::load::text::walk::{Table, entries};
use toml::de::DeValue;

/// The top-level keys of a circuit file.
pub(crate) const CIRCUIT_KEYS: &[&str] = &[
    "schema",
    "arch",
    "description",
    "dims",
    "include",
    "layer_module",
    "draft_module",
    "prologue",
    "epilogue",
    "draft",
    "layout",
    "derive",
    "tensor_parallel",
    "config",
    "block",
    "checkpoint",
];

/// The top-level keys of an inputs file, in documentation order.
pub(crate) const INPUTS_KEYS: [&str; 10] = [
    "slots",
    "formats",
    "verify",
    "kv",
    "draft_kv",
    "draft_kv_dtype",
    "caches",
    "serving",
    "parallel",
    "pool",
];

/// What a file was given as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A circuit (`check`, `plan`, `gen`, the `Builder`, the macro).
    Circuit,
    /// An inputs file (`--inputs`, `InputsFile::load`).
    Inputs,
}

/// The most keys of the other kind the help line names.
const SHOWN: usize = 3;

/// The help for a file given as `given` whose top-level keys say it is the other kind; `None`
/// when they do not.
pub(crate) fn help(root: &Table<'_>, given: Kind) -> Option<String> {
    let (own, other): (&[&str], &[&str]) = match given {
        Kind::Circuit => (CIRCUIT_KEYS, &INPUTS_KEYS),
        Kind::Inputs => (&INPUTS_KEYS, CIRCUIT_KEYS),
    };
    let mut found: Vec<String> = Vec::with_capacity(SHOWN);
    for (key, value) in entries(root) {
        let name: &str = key.get_ref();
        if own.contains(&name) {
            return None;
        }
        if other.contains(&name) && found.len() < SHOWN {
            found.push(match value.get_ref() {
                DeValue::Table(_) => format!("`[{name}]`"),
                _ => format!("`{name}`"),
            });
        }
    }
    if found.is_empty() {
        return None;
    }
    let found = found.join(", ");
    Some(match given {
        Kind::Circuit => format!(
            "this looks like an inputs file ({found}: an inputs file's keys), not a circuit: \
             give it as the inputs (the CLI's `--inputs FILE`), and a circuit (`schema`, \
             `arch`, `[layout]`, `[block.*]`) as the circuit"
        ),
        Kind::Inputs => format!(
            "this looks like a circuit ({found}: a circuit's keys), not an inputs file: give \
             it as the circuit, and an inputs file (`slots`, `[formats]`, `[kv]`; \
             docs/inputs.md) as the inputs"
        ),
    })
}
