//! An error the loader finds in the table appended to the circuit, blamed on the config: each
//! located where the figure it points at came from (the config key, `_name_or_path` for a name
//! or `hf` read from it, or the option that gave it: then it has no place and says so), each
//! dim it names noted with its value and place, a note naming a line of the table said as the
//! table, and the summary over them located at the key the first comes from.
//!
//! Invariants:
//! - No error points past the end of a file read: a place at or past the table's first line is
//!   moved to the config, or said as "the table read from the config".
//! - A diagnostic that is not about the table is returned as it is.
//! - A dim is named only as a whole identifier (`conv_kernel` is not in `conv_kernel_size`).

use std::ops::Range;

use super::table::{Imported, Origin, TableLine};
use crate::load::text::diag::{Diagnostic, Source};

impl Imported {
    /// Where in the config the figure on a table line of kind `line`, at its 1-based `column`,
    /// came from.
    pub(super) fn origin_of(&self, line: TableLine, column: usize) -> Origin {
        let origins = &self.origins;
        match line {
            TableLine::Name => origins.name.clone(),
            TableLine::Hf => origins.hf.clone(),
            TableLine::Layers => Origin::Config(origins.layers.clone()),
            TableLine::Dims => self
                .dim_at_column(column)
                .and_then(|dim| origins.dims.iter().find(|(d, _)| d == dim))
                .map_or(Origin::File("the dims"), |(_, at)| {
                    Origin::Config(at.clone())
                }),
        }
    }

    /// `diagnostic`, found by the loader in this table appended to the circuit `circuit` (its
    /// first line `first_line`), located where the figure it points at came from instead: a
    /// config key, the caller's option, or the config file; never a line past the circuit's
    /// end. A diagnostic elsewhere is returned as it is.
    pub(super) fn blame(
        &self,
        mut diagnostic: Diagnostic,
        circuit: &str,
        first_line: usize,
        config: &Source,
    ) -> Diagnostic {
        for note in &mut diagnostic.notes {
            *note = unplaced(note, circuit, first_line, config.name());
        }
        let Some((line, column)) = diagnostic
            .location
            .as_ref()
            .filter(|l| l.path == circuit && l.line >= first_line)
            .map(|l| (l.line - first_line, l.column))
        else {
            return diagnostic;
        };
        let lines = self.table_lines();
        let Some((line, text)) = lines.get(line) else {
            return diagnostic.in_file(config.name());
        };
        let diagnostic = diagnostic.note(format!("in the table read from the config: `{text}`"));
        match self.origin_of(*line, column) {
            Origin::Config(span) => diagnostic.at(config, span),
            Origin::Given(by) => {
                let mut diagnostic =
                    diagnostic.note(format!("given by {by}, not read from `{}`", config.name()));
                diagnostic.location = None;
                diagnostic.file = None;
                diagnostic
            }
            Origin::File(what) => diagnostic
                .in_file(config.name())
                .note(format!("{what}: from the config file itself")),
        }
    }
    /// `diagnostic`, found by the loader with this table appended, with a note for each dim
    /// read from a key that it names (in its message or the line it shows): its value and
    /// where in the config it was read.
    pub(super) fn noted(&self, mut diagnostic: Diagnostic, config: &Source) -> Diagnostic {
        for (dim, at) in &self.read_at {
            let shown = diagnostic.location.as_ref().map_or("", |l| &l.line_text);
            if mentions(&diagnostic.message, dim) || mentions(shown, dim) {
                let value = self
                    .dims
                    .iter()
                    .find(|(d, _)| d == dim)
                    .map_or(0, |(_, v)| *v);
                let (line, column) = config.line_col(*at);
                diagnostic = diagnostic.note(format!(
                    "`{dim}` is {value}, read at {}:{line}:{column}",
                    config.name()
                ));
            }
        }
        diagnostic
    }

    /// The summary of the loader's errors `found` (already blamed), located at the config
    /// key the first of them comes from: where the first is located in the config, else the
    /// first dim read from a key that one names; else the config file.
    pub(super) fn summary_at(
        &self,
        header: Diagnostic,
        found: &[Diagnostic],
        config: &Source,
    ) -> Diagnostic {
        let label = "read here; the errors below say why";
        let in_config = found
            .iter()
            .find_map(|d| d.location.as_ref().filter(|l| l.path == config.name()));
        if let Some(location) = in_config {
            let mut header = header.label(label);
            header.location = Some(location.clone());
            return header;
        }
        let named = self.read_at.iter().find_map(|(dim, at)| {
            found
                .iter()
                .any(|d| {
                    let shown = d.location.as_ref().map_or("", |l| &l.line_text);
                    mentions(&d.message, dim) || mentions(shown, dim)
                })
                .then_some(*at)
        });
        match named {
            Some(at) => {
                let end = self.dim_span_from(at);
                header.at(config, at..end).label(label)
            }
            None => header.in_file(config.name()),
        }
    }

    /// The end of the dim value starting at byte `start`.
    pub(super) fn dim_span_from(&self, start: usize) -> usize {
        self.origins
            .dims
            .iter()
            .find(|(_, at)| at.start == start)
            .map_or(start + 1, |(_, at)| at.end)
    }

    /// Where `dim` was read (its value, or what its fallback stood in for).
    pub(super) fn dim_span(&self, dim: &str) -> Range<usize> {
        self.origins
            .dims
            .iter()
            .find(|(d, _)| d == dim)
            .map_or_else(|| self.origins.layers.clone(), |(_, at)| at.clone())
    }

    /// Where the config's layers (`theirs`) first differ from `ours`: the layer count when
    /// the counts do, else the first differing layer's kind when the config gives it per
    /// layer, else the layer count.
    pub(super) fn layers_span(&self, theirs: &[String], ours: &[String]) -> Range<usize> {
        let first_kind = theirs.iter().zip(ours).position(|(a, b)| a != b);
        match first_kind.and_then(|i| self.origins.kinds.get(i)) {
            Some(at) if theirs.len() == ours.len() => at.clone(),
            _ => self.origins.layers.clone(),
        }
    }
}

/// `note` with every place `circuit:LINE[:COLUMN]` at or past `first_line` (a line of the
/// table appended, past the circuit's end) said as what it is: the table read from `config`.
pub(super) fn unplaced(note: &str, circuit: &str, first_line: usize, config: &str) -> String {
    let prefix = format!("{circuit}:");
    let mut out = String::with_capacity(note.len());
    let mut rest = note;
    while let Some(at) = rest.find(&prefix) {
        let after = &rest[at + prefix.len()..];
        let place_len = after
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .unwrap_or(after.len());
        let place = after[..place_len].trim_end_matches(':');
        let line = place
            .split(':')
            .next()
            .and_then(|l| l.parse::<usize>().ok());
        out.push_str(&rest[..at]);
        match line {
            Some(line) if line >= first_line => {
                out.push_str("the table read from `");
                out.push_str(config);
                out.push('`');
                rest = &after[place.len()..];
            }
            _ => {
                out.push_str(&prefix);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` names `word` as a whole identifier (not inside a longer one).
pub(super) fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_dim_is_mentioned_as_a_whole_identifier() {
        assert!(super::mentions(
            "`conv_kernel - 1` is below zero",
            "conv_kernel"
        ));
        assert!(!super::mentions("`conv_kernel_size` is 0", "conv_kernel"));
        assert!(!super::mentions("`d_conv_kernel` is 0", "conv_kernel"));
    }

    #[test]
    fn places_in_the_appended_table_are_said_as_the_config() {
        let note = "under checkpoint `x`, defined at c.toml:32:1; see c.toml:4";
        assert_eq!(
            super::unplaced(note, "c.toml", 32, "config.json"),
            "under checkpoint `x`, defined at the table read from `config.json`; see c.toml:4"
        );
        assert_eq!(super::unplaced("c.toml:", "c.toml", 1, "j"), "c.toml:");
    }
}
