//! The checkpoint table read from a config, [`Imported`], and its text: the
//! `[checkpoint.NAME]` table `metrale-codegen import` prints ([`Imported::to_toml`]), line by
//! line with what each line says, and where each figure of it came from in the config
//! ([`Origins`]), which `blame` locates the loader's errors by.
//!
//! Invariants:
//! - The table lists the dims in the circuit's declaration order; its pattern (pattern
//!   layouts) uses the first `[layout.symbols]` character of each layer kind.
//! - Every string is written by the one quoting (`load::text::quote`): the table is valid TOML
//!   whatever the config's names hold.
//! - The text is a function of the table alone: the same table prints the same text.

use std::ops::Range;

use crate::load::text::quote::quote;

/// How the imported checkpoint says its layers' kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportedKinds {
    /// The layout decides them (an interval layout, or a pattern layout's own pattern).
    Layout,
    /// A pattern layout's checkpoint `pattern`, one symbol per layer.
    Pattern(String),
    /// A list layout's `layer_kinds`.
    List(Vec<String>),
}

/// One checkpoint read from a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The checkpoint's name.
    pub name: String,
    /// Its Hugging Face id, if known.
    pub hf: Option<String>,
    /// Its layer count.
    pub layers: u64,
    /// Its layers' kinds.
    pub kinds: ImportedKinds,
    /// Every declared dim's value, in declaration order.
    pub dims: Vec<(String, u64)>,
    /// Where in the config each dim read from a key was (its value's first byte), for errors
    /// the loader finds in the table: a dim given by its fallback has none.
    pub(super) read_at: Vec<(String, usize)>,
    /// Where each figure of the table came from, to locate an error about it in the config.
    pub(super) origins: Origins,
}

/// Where a figure of an imported table came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// A span of the config (a key's value, or the object that lacks a key).
    Config(Range<usize>),
    /// Given by the caller: what gave it, as a note says it (`--name`, ...).
    Given(&'static str),
    /// The config file itself (a name from its stem, an `hf` it does not give).
    File(&'static str),
}

/// Where each figure of an imported table came from in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Origins {
    pub(super) name: Origin,
    pub(super) hf: Origin,
    /// The layer count's value.
    pub(super) layers: Range<usize>,
    /// Each layer's kind, when the config gives it per layer (else empty).
    pub(super) kinds: Vec<Range<usize>>,
    /// Each declared dim: its value, or (a fallback) the null or the object that lacks it.
    pub(super) dims: Vec<(String, Range<usize>)>,
}

/// What a line of the table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TableLine {
    Name,
    Hf,
    Layers,
    Dims,
}

impl Imported {
    /// The `[checkpoint.NAME]` table, ending in a newline.
    #[must_use]
    pub fn to_toml(&self) -> String {
        let mut lines: Vec<String> = self.table_lines().into_iter().map(|(_, l)| l).collect();
        lines.push(String::new());
        lines.join("\n")
    }

    /// The table's lines, each with what it says.
    pub(super) fn table_lines(&self) -> Vec<(TableLine, String)> {
        let mut lines = vec![(TableLine::Name, format!("[checkpoint.{}]", self.name))];
        if let Some(hf) = &self.hf {
            lines.push((TableLine::Hf, format!("hf = {}", quote(hf))));
        }
        match &self.kinds {
            ImportedKinds::List(kinds) => {
                let list: Vec<String> = kinds.iter().map(|k| quote(k)).collect();
                lines.push((
                    TableLine::Layers,
                    format!("layer_kinds = [{}]", list.join(", ")),
                ));
            }
            ImportedKinds::Pattern(pattern) => {
                lines.push((TableLine::Layers, format!("layers = {}", self.layers)));
                lines.push((TableLine::Layers, format!("pattern = {}", quote(pattern))));
            }
            ImportedKinds::Layout => {
                lines.push((TableLine::Layers, format!("layers = {}", self.layers)));
            }
        }
        let dims: Vec<String> = self.dims.iter().map(|(d, v)| dim_entry(d, *v)).collect();
        lines.push((
            TableLine::Dims,
            format!("{DIMS_OPEN}{} }}", dims.join(DIMS_SEP)),
        ));
        lines
    }

    /// The dim whose entry of the table's `dims` line holds 1-based `column`.
    pub(super) fn dim_at_column(&self, column: usize) -> Option<&str> {
        let mut start = DIMS_OPEN.len() + 1;
        for (dim, value) in &self.dims {
            let end = start + dim_entry(dim, *value).len();
            if (start..end).contains(&column) {
                return Some(dim);
            }
            start = end + DIMS_SEP.len();
        }
        None
    }
}

/// The table's `dims` line before its first entry, and between two entries.
pub(super) const DIMS_OPEN: &str = "dims = { ";
pub(super) const DIMS_SEP: &str = ", ";

/// One entry of the table's `dims` line.
pub(super) fn dim_entry(dim: &str, value: u64) -> String {
    format!("{dim} = {value}")
}
