//! Whether what an inputs file's `[formats]` gives its keys suits a circuit's states: a packing
//! named there must be one every state of its key declares ([`InputsFile::check_formats`]).
//! The file alone cannot tell a packing's name from a misspelled dtype (`bf61`); once its
//! states are known, the value is refused located, with the dtypes and packings that are valid.
//! Likewise a key no state names that is a near spelling of a key the states need and the file
//! lacks (`kv_cache_dtyp`) is refused at the key ([`InputsFile::near_miss`]).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A key no state names is ignored, as the plans ignore it, unless it is a near miss of a
//!   missing key (the plan would fail anyway); a missing key without a near miss is the plan's
//!   error (`PlanError::MissingFormat`), not this check's.
//! - It refuses exactly the values a plan would refuse with `PlanError::UnknownPacking`.

use super::InputsFile;
use crate::load::text::diag::{Diagnostic, Diagnostics, did_you_mean};
use crate::model::{FormatChoice, StateDecl, StateDtype, StateFormat};

impl InputsFile {
    /// Checks that every packing this file's `[formats]` names is declared by each state of
    /// `decls` (a checkpoint's, `Circuit::instantiate`) that its key stores.
    ///
    /// # Errors
    /// One diagnostic per refused value, located at it in the file: its dtypes and the packings
    /// its key's first state declares are what would be valid.
    pub fn check_formats(&self, decls: &[StateDecl]) -> Result<(), Diagnostics> {
        let mut diagnostics = Diagnostics::new();
        for (key, choice) in &self.formats {
            let FormatChoice::Packing(name) = choice else {
                continue;
            };
            let mut states = decls.iter().filter(|decl| {
                decl.shares.is_none() && matches!(&decl.format, StateFormat::Keyed(k) if k == key)
            });
            let Some(first) = states.next() else {
                continue;
            };
            let lacking = std::iter::once(first)
                .chain(states)
                .find(|decl| decl.packing(name).is_none());
            let Some(lacking) = lacking else {
                continue;
            };
            let mut valid: Vec<&str> = StateDtype::spellings().to_vec();
            valid.extend(first.packings.iter().map(|l| l.name.as_str()));
            let diagnostic = if first.packings.is_empty() {
                Diagnostic::error(format!("unknown dtype `{name}` for format key `{key}`"))
                    .label("not a dtype")
                    .expected_one_of("dtypes", name, &valid)
                    .note(format!(
                        "the states of `{{{key}}}` (`{}` first) declare no packings",
                        first.id
                    ))
            } else {
                Diagnostic::error(format!(
                    "format key `{key}` holds `{name}`, not a dtype or a packing of `{}`",
                    lacking.id
                ))
                .label("not a dtype or a packing its states declare")
                .expected_one_of("formats", name, &valid)
            };
            diagnostics.push(self.locate_key(&["formats", key], diagnostic));
        }
        for needed in missing_keys(self, decls) {
            let Some(near) = self.near_miss(needed, decls) else {
                continue;
            };
            let first = decls
                .iter()
                .find(|decl| matches!(&decl.format, StateFormat::Keyed(k) if k == needed))
                .map_or("?", |decl| decl.id.as_str());
            let diagnostic = Diagnostic::error(format!(
                "format key `{near}` names no state; `{needed}` is missing"
            ))
            .label(format!("no state has format `{{{near}}}`"))
            .note(format!(
                "state `{first}` has format `{{{needed}}}`, which the inputs do not give"
            ))
            .help(format!("did you mean `{needed}`?"));
            diagnostics.push(self.locate_key_name(&["formats", near], diagnostic));
        }
        diagnostics.into_result(())
    }

    /// The key of this file's `[formats]` that `needed` (a key `decls` name and this file lacks)
    /// is likely misspelled as: one no state of `decls` names, near `needed` by
    /// [`did_you_mean`]'s budget. `None` when the file gives `needed` or has no such key.
    #[must_use]
    pub fn near_miss(&self, needed: &str, decls: &[StateDecl]) -> Option<&str> {
        if self.format(needed).is_some() {
            return None;
        }
        let named = |key: &str| {
            decls
                .iter()
                .any(|decl| matches!(&decl.format, StateFormat::Keyed(k) if k == key))
        };
        self.formats
            .iter()
            .map(|(key, _)| key.as_str())
            .filter(|key| !named(key))
            .find(|key| did_you_mean(key, &[needed]).is_some())
    }
}

/// The format keys `decls` name that `file` does not give, each once, in plan order.
fn missing_keys<'d>(file: &InputsFile, decls: &'d [StateDecl]) -> Vec<&'d str> {
    let mut missing: Vec<&str> = Vec::new();
    for decl in decls {
        if let StateFormat::Keyed(key) = &decl.format
            && file.format(key).is_none()
            && !missing.contains(&key.as_str())
        {
            missing.push(key);
        }
    }
    missing
}
