//! Whether what an inputs file's `[formats]` gives its keys suits a circuit's states: a layout
//! named there must be one every state of its key declares ([`InputsFile::check_formats`]).
//! The file alone cannot tell a layout's name from a misspelled dtype (`bf61`); once its
//! states are known, the value is refused located, with the dtypes and layouts that are valid.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A key no state names is ignored, as the plans ignore it; a missing key is the plan's
//!   error (`PlanError::MissingFormat`), not this check's.
//! - It refuses exactly the values a plan would refuse with `PlanError::UnknownLayout`.

use super::InputsFile;
use crate::load::text::diag::{Diagnostic, Diagnostics};
use crate::model::{FormatChoice, StateDecl, StateDtype, StateFormat};

impl InputsFile {
    /// Checks that every layout this file's `[formats]` names is declared by each state of
    /// `decls` (a checkpoint's, `Circuit::instantiate`) that its key stores.
    ///
    /// # Errors
    /// One diagnostic per refused value, located at it in the file: its dtypes and the layouts
    /// its key's first state declares are what would be valid.
    pub fn check_formats(&self, decls: &[StateDecl]) -> Result<(), Diagnostics> {
        let mut diagnostics = Diagnostics::new();
        for (key, choice) in &self.formats {
            let FormatChoice::Layout(name) = choice else {
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
                .find(|decl| decl.layout(name).is_none());
            let Some(lacking) = lacking else {
                continue;
            };
            let mut valid: Vec<&str> = StateDtype::spellings().to_vec();
            valid.extend(first.layouts.iter().map(|l| l.name.as_str()));
            let diagnostic = if first.layouts.is_empty() {
                Diagnostic::error(format!("unknown dtype `{name}` for format key `{key}`"))
                    .label("not a dtype")
                    .expected_one_of("dtypes", name, &valid)
                    .note(format!(
                        "the states of `{{{key}}}` (`{}` first) declare no layouts",
                        first.id
                    ))
            } else {
                Diagnostic::error(format!(
                    "format key `{key}` holds `{name}`, not a dtype or a layout of `{}`",
                    lacking.id
                ))
                .label("not a dtype or a layout its states declare")
                .expected_one_of("formats", name, &valid)
            };
            diagnostics.push(self.locate_key(&["formats", key], diagnostic));
        }
        diagnostics.into_result(())
    }
}
