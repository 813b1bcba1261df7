//! A Hugging Face `config.json` read through a circuit's `[config]` map (schema 2): one
//! checkpoint out, as the `[checkpoint.NAME]` table `metrale-codegen import` prints
//! ([`import`], [`Imported::to_toml`]), or added to the circuit at run time
//! ([`Circuit::with_config`]), or as the declared dims of a generated checkpoint's plan
//! ([`Circuit::dims_from_config`]), so no checkpoint figure is copied by hand and an engine
//! plans a fine-tune the build never saw. Feature `config`.
//!
//! This module owns the reading of a config (a spanned JSON tree from `jsonc-parser`, strict
//! JSON), the lookup of dotted key paths in it, the evaluation of each `[config]` source (the
//! layer count, the layer kinds, the interval check, every dim with its fallback), the checks
//! of the layer kinds against a fixed layout (an interval's period; a pattern layout's own
//! pattern, which must divide the depth and agree with the config's kinds) and the rendering
//! of the table. The layer kinds by rule (`[config.layer_rules]`, schema 3) are evaluated in
//! `rules`.
//!
//! Invariants:
//! - Every error names the config.json key at fault and is located in the config (its
//!   line:col): at the value for a wrong type or an inconsistency, at the object that lacks
//!   it for a missing key; an error about a circuit's rule also names the rule's `file:line`.
//!   All errors of one import are reported together.
//! - Nothing here panics, whatever the config holds (JSON nesting is bounded by the parser; a
//!   layer count past the loader's [`MAX_LAYERS`] is refused before any per-layer work).
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

mod rules;

use std::ops::Range;

use crate::load::json_schema::json::quote;
use crate::load::text::diag::{Diagnostic, Diagnostics, Source};
use crate::load::text::limits::MAX_LAYERS;
use crate::load::{
    Circuit, CircuitSource, ConfigMap, LayerKindsSource, LayerRule, is_snake_identifier, load,
};
use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

/// What the caller may set instead of reading it from the config.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// The checkpoint's name; default: the last segment of the config's `_name_or_path`,
    /// else the config file's stem, in lower snake case.
    pub name: Option<&'a str>,
    /// The Hugging Face id written as `hf`; default: `_name_or_path` when it reads
    /// `owner/name`, else none.
    pub hf: Option<&'a str>,
}

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
    read_at: Vec<(String, usize)>,
    /// Where each figure of the table came from, to locate an error about it in the config.
    origins: Origins,
}

/// Where a figure of an imported table came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// A span of the config (a key's value, or the object that lacks a key).
    Config(Range<usize>),
    /// Given by the caller: what gave it, as a note says it (`--name`, ...).
    Given(&'static str),
    /// The config file itself (a name from its stem, an `hf` it does not give).
    File(&'static str),
}

/// Where each figure of an imported table came from in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origins {
    name: Origin,
    hf: Origin,
    /// The layer count's value.
    layers: Range<usize>,
    /// Each layer's kind, when the config gives it per layer (else empty).
    kinds: Vec<Range<usize>>,
    /// Each declared dim: its value, or (a fallback) the null or the object that lacks it.
    dims: Vec<(String, Range<usize>)>,
}

/// What a line of the table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableLine {
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
    fn table_lines(&self) -> Vec<(TableLine, String)> {
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
    fn dim_at_column(&self, column: usize) -> Option<&str> {
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

    /// Where in the config the figure on a table line of kind `line`, at its 1-based `column`,
    /// came from.
    fn origin_of(&self, line: TableLine, column: usize) -> Origin {
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
    fn blame(
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
}

impl Imported {
    /// `diagnostic`, found by the loader with this table appended, with a note for each dim
    /// read from a key that it names (in its message or the line it shows): its value and
    /// where in the config it was read.
    fn noted(&self, mut diagnostic: Diagnostic, config: &Source) -> Diagnostic {
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
    fn summary_at(&self, header: Diagnostic, found: &[Diagnostic], config: &Source) -> Diagnostic {
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
    fn dim_span_from(&self, start: usize) -> usize {
        self.origins
            .dims
            .iter()
            .find(|(_, at)| at.start == start)
            .map_or(start + 1, |(_, at)| at.end)
    }

    /// Where `dim` was read (its value, or what its fallback stood in for).
    fn dim_span(&self, dim: &str) -> Range<usize> {
        self.origins
            .dims
            .iter()
            .find(|(d, _)| d == dim)
            .map_or_else(|| self.origins.layers.clone(), |(_, at)| at.clone())
    }

    /// Where the config's layers (`theirs`) first differ from `ours`: the layer count when
    /// the counts do, else the first differing layer's kind when the config gives it per
    /// layer, else the layer count.
    fn layers_span(&self, theirs: &[String], ours: &[String]) -> Range<usize> {
        let first_kind = theirs.iter().zip(ours).position(|(a, b)| a != b);
        match first_kind.and_then(|i| self.origins.kinds.get(i)) {
            Some(at) if theirs.len() == ours.len() => at.clone(),
            _ => self.origins.layers.clone(),
        }
    }
}

/// `note` with every place `circuit:LINE[:COLUMN]` at or past `first_line` (a line of the
/// table appended, past the circuit's end) said as what it is: the table read from `config`.
fn unplaced(note: &str, circuit: &str, first_line: usize, config: &str) -> String {
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

/// The table's `dims` line before its first entry, and between two entries.
const DIMS_OPEN: &str = "dims = { ";
const DIMS_SEP: &str = ", ";

/// One entry of the table's `dims` line.
fn dim_entry(dim: &str, value: u64) -> String {
    format!("{dim} = {value}")
}

/// Reads the checkpoint that `config` (a config.json's text, named as the user gave it)
/// describes, through `circuit`'s `[config]`. `stem` is the config file's stem, the name of
/// last resort.
///
/// # Errors
/// A circuit without `[config]`; malformed JSON; and, each naming the config key and located
/// in the config, a key that is missing or of the wrong type, a layer list or pattern whose
/// length is not the layer count, an entry the map does not know, an interval or layer kind
/// that contradicts the layout; a name that is not a valid checkpoint name.
pub fn import(
    circuit: &Circuit,
    config: &Source,
    stem: &str,
    options: ImportOptions<'_>,
) -> Result<Imported, Diagnostics> {
    let Some(map) = circuit.config() else {
        return Err(Diagnostic::error(format!(
            "circuit `{}` has no `[config]` table",
            circuit.path()
        ))
        .in_file(circuit.path())
        .help("add `[config]` (schema 2) saying which config.json key gives each figure; see docs/circuit-schema.md")
        .into());
    };
    let strict = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        // Python's json module writes these for non-finite floats; no figure read is one.
        allow_non_finite_numbers: true,
        allow_extended_string_escapes: false,
    };
    let parsed = match parse_to_ast(config.text(), &CollectOptions::default(), &strict) {
        Ok(parsed) => parsed,
        Err(error) => {
            let range = error.range();
            return Err(Diagnostic::error(format!("invalid JSON: {}", error.kind()))
                .at(config, range.start..range.end)
                .label("here")
                .into());
        }
    };
    let Some(root) = parsed.value else {
        return Err(Diagnostic::error("the config is empty")
            .at(config, 0..0)
            .label("no JSON value")
            .into());
    };
    let mut reader = Reader {
        config,
        root: &root,
        errors: Vec::new(),
    };
    reader.unique_keys(&root);
    let imported = reader.checkpoint(circuit, map, stem, options);
    // In the config's order, whatever order the circuit reads its keys in.
    reader.errors.sort_by_key(|(at, _)| *at);
    match imported {
        Some(imported) if reader.errors.is_empty() => Ok(imported),
        _ => Err(reader.errors.into_iter().map(|(_, d)| d).collect()),
    }
}

impl Circuit {
    /// This circuit with one more checkpoint: the one `config` (a `config.json`'s text, named
    /// as the user gave it) describes, read through `[config]` as [`import`] reads it and named
    /// as `options` say (`stem`, the config file's stem, is the name of last resort). Returns
    /// the circuit and the new checkpoint's name, which [`Circuit::instantiate`] and the
    /// dynamic plan take.
    ///
    /// The circuit is loaded again with the table [`Imported::to_toml`] prints appended to its
    /// text (its includes read from the same folder), so the checkpoint passes every check of
    /// the loader: names, limits, derived dims, windows, every shape evaluated without
    /// overflow.
    ///
    /// # Errors
    /// Those of [`import`]; a checkpoint of that name already in the circuit; and every error
    /// the loader finds in the circuit with the table, after one that names the config and
    /// shows the table.
    pub fn with_config(
        &self,
        config: &Source,
        stem: &str,
        options: ImportOptions<'_>,
    ) -> Result<(Circuit, String), Diagnostics> {
        let imported = import(self, config, stem, options)?;
        let with = self.with_imported(&imported, config)?;
        Ok((with, imported.name))
    }

    /// This circuit with the checkpoint `imported` (read from `config`) added, through every
    /// check of the loader: [`Circuit::with_config`] once the config is read. `metrale-codegen
    /// import` prints a table only when this accepts it. A checkpoint of the same name that
    /// the circuit already has is accepted when its figures (layer kinds and dims) are the
    /// config's: the config re-reads it (the zoo's configs pin its checkpoints that way).
    ///
    /// # Errors
    /// A checkpoint of that name already in the circuit with other figures; every error the
    /// loader finds in the circuit with the table, after one that names the config and shows
    /// the table.
    pub fn with_imported(
        &self,
        imported: &Imported,
        config: &Source,
    ) -> Result<Circuit, Diagnostics> {
        let Some(existing) = self.checkpoint(&imported.name) else {
            return self.with_table(imported, config);
        };
        // Checked under a name of its own, then compared with the one written.
        let mut renamed = imported.clone();
        renamed.name = self.unused_checkpoint_name();
        // Its id is the pinned one's: kept, the loader would refuse it as given twice (the
        // `hf` is compared apart).
        renamed.hf = None;
        let with = self.with_table(&renamed, config)?;
        let read = with.checkpoint_or_error(&renamed.name)?;
        if read.layer_kinds() == existing.layer_kinds() && read.dims() == existing.dims() {
            return Ok(self.clone());
        }
        let (differs, at) = if read.layer_kinds() == existing.layer_kinds() {
            let differing: Vec<(&String, u64, u64)> = read
                .dims()
                .iter()
                .zip(existing.dims())
                .filter(|(a, b)| a != b)
                .map(|((dim, theirs), (_, ours))| (dim, *theirs, *ours))
                .collect();
            let dims: Vec<String> = differing
                .iter()
                .map(|(dim, theirs, ours)| format!("`{dim}` {theirs}, not {ours}"))
                .collect();
            let first = differing.first().map_or("", |(dim, _, _)| dim.as_str());
            (
                format!("its dims: {}", dims.join(", ")),
                imported.dim_span(first),
            )
        } else {
            let (theirs, ours) = (read.layer_kinds(), existing.layer_kinds());
            (
                format!(
                    "its layers: {} in the config, {} in the circuit",
                    theirs.len(),
                    ours.len()
                ),
                imported.layers_span(theirs, ours),
            )
        };
        Err(Diagnostic::error(format!(
            "circuit `{}` already has a checkpoint `{}`, and the config differs in {differs}",
            self.path(),
            imported.name
        ))
        .at(config, at)
        .label("differs from the circuit's")
        .note(format!(
            "`{}` is defined at {}",
            imported.name,
            existing.origin()
        ))
        .help("name the config's checkpoint otherwise (`--name`, `ImportOptions::name`)")
        .into())
    }

    /// A checkpoint name the circuit does not have, short enough for any limit: `imported`,
    /// with as many `_` after it as it takes.
    fn unused_checkpoint_name(&self) -> String {
        let mut name = String::from("imported");
        while self.checkpoint(&name).is_some() {
            name.push('_');
        }
        name
    }

    /// The circuit loaded again with `imported`'s table appended to its text.
    fn with_table(&self, imported: &Imported, config: &Source) -> Result<Circuit, Diagnostics> {
        let Some(circuit) = self.files().first() else {
            return Err(
                Diagnostic::error("the circuit has no file to add a checkpoint to")
                    .in_file(self.path())
                    .into(),
            );
        };
        let table = imported.to_toml();
        let text = format!("{}\n{table}", circuit.text());
        // The table's first line: after the circuit's lines and the one blank line between.
        let first_line = circuit.text().matches('\n').count() + 2;
        let report = load(CircuitSource::Text {
            name: circuit.name(),
            text: &text,
            dir: Some(&self.dir),
        });
        report.circuit.map_err(|found| {
            let found: Vec<Diagnostic> = found
                .into_iter()
                .map(|d| {
                    imported.blame(
                        imported.noted(d, config),
                        circuit.name(),
                        first_line,
                        config,
                    )
                })
                .collect();
            let header = Diagnostic::error(format!(
                "the checkpoint `{}` read from `{}` does not load in circuit `{}`",
                imported.name,
                config.name(),
                self.path()
            ))
            .note(format!("the table read, appended to the circuit:\n{table}"));
            let mut all: Diagnostics = imported.summary_at(header, &found, config).into();
            all.extend(found);
            all
        })
    }

    /// The declared dims `config` gives, for the generated plan of checkpoint `like`: what a
    /// generated `Dims::try_from(&dims[..])` takes, so `AnyPlan::new(checkpoint, dims, ..)`
    /// plans a fine-tune of `like` with other dims. The config is read and checked as
    /// [`Circuit::with_config`] does, and must give `like`'s layers, kind for kind: a generated
    /// plan's layers are fixed when it is generated.
    ///
    /// # Errors
    /// Those of [`Circuit::with_config`]; no checkpoint `like`; a layer count or a layer kind
    /// other than `like`'s.
    pub fn dims_from_config(
        &self,
        like: &str,
        config: &Source,
    ) -> Result<Vec<(String, u64)>, Diagnostics> {
        let spec = self.checkpoint_or_error(like)?;
        // A name the circuit does not have: the checkpoint is only read, never kept.
        let name = self.unused_checkpoint_name();
        let options = ImportOptions {
            name: Some(&name),
            hf: None,
        };
        let imported = import(self, config, "", options)?;
        let with = self.with_imported(&imported, config)?;
        let read = with.checkpoint_or_error(&imported.name)?;
        let (theirs, ours) = (read.layer_kinds(), spec.layer_kinds());
        let at = imported.layers_span(theirs, ours);
        let differ = |what: String| -> Diagnostics {
            Diagnostic::error(format!(
                "`{}` describes {what}: the generated plan of checkpoint `{like}` cannot hold it",
                config.name()
            ))
            .at(config, at.clone())
            .label(format!("differs from `{like}`"))
            .help(format!(
                "a generated plan's layers are fixed: add the model as a checkpoint of its own \
                 (`metrale-codegen import {} {}`) and generate it, or plan it dynamically \
                 (`Circuit::with_config`)",
                self.path(),
                config.name()
            ))
            .into()
        };
        if theirs.len() != ours.len() {
            return Err(differ(format!(
                "{} layers, `{like}` has {}",
                theirs.len(),
                ours.len()
            )));
        }
        if let Some((i, (a, b))) = theirs
            .iter()
            .zip(ours)
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(differ(format!("layer {i} as `{a}`, `{like}` has `{b}`")));
        }
        Ok(read.dims().to_vec())
    }
}

/// One import in progress: the config, its tree and the errors found so far.
struct Reader<'a> {
    config: &'a Source,
    root: &'a Value<'a>,
    /// Each error with the byte offset it is sorted by.
    errors: Vec<(usize, Diagnostic)>,
}

/// The layer count as read: its value, its key and where the value is.
struct Depth {
    /// The layer count, 1 to [`MAX_LAYERS`].
    layers: u64,
    /// Its key path.
    key: String,
    /// Its value in the config.
    at: Range<usize>,
}

/// One layer's kind as read, with what decided it.
struct Layer {
    /// The layer kind.
    kind: String,
    /// Where in the config it was decided: the list entry, the pattern character, the index, a
    /// rule's value, or the layer count for a rule written in the circuit.
    at: Range<usize>,
    /// What decided it, as a message says it: "in the config", "by rule 1 of ...".
    by: String,
}

impl Layer {
    /// A layer given by a per-layer source of the config.
    fn in_config(kind: String, at: Range<usize>) -> Self {
        Self {
            kind,
            at,
            by: "in the config".to_owned(),
        }
    }
}

/// What a key path leads to.
enum Found<'a> {
    /// The value.
    Value(&'a Value<'a>),
    /// No such key: the span of the object or array that lacks it.
    Missing(Range<usize>),
}

impl<'a> Reader<'a> {
    /// Refuses a key written twice in one object, at the second: JSON leaves it undefined and
    /// Python's `json` (what wrote most configs) keeps the last silently, so a figure read from
    /// either would be a guess. One pass over the tree, whose depth the parser bounds.
    fn unique_keys(&mut self, value: &Value<'_>) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(object) => {
                    let mut seen: std::collections::HashMap<&str, Range<usize>> =
                        std::collections::HashMap::new();
                    for property in &object.properties {
                        let name = prop_name(&property.name);
                        let at = match &property.name {
                            ObjectPropName::String(s) => s.range.start..s.range.end,
                            ObjectPropName::Word(w) => w.range.start..w.range.end,
                        };
                        if let Some(first) = seen.get(name) {
                            let (line, column) = self.config.line_col(first.start);
                            self.report(
                                at,
                                Diagnostic::error(format!(
                                    "config key `{name}` is written twice in one object"
                                ))
                                .label("written again")
                                .note(format!(
                                    "first written at {}:{line}:{column}",
                                    self.config.name()
                                ))
                                .help("keep one: which one a JSON reader takes is not defined"),
                            );
                        } else {
                            seen.insert(name, at);
                        }
                        stack.push(&property.value);
                    }
                }
                Value::Array(array) => stack.extend(array.elements.iter()),
                _ => {}
            }
        }
    }

    /// Records an error at `span` of the config.
    fn report(&mut self, span: Range<usize>, diagnostic: Diagnostic) {
        self.errors
            .push((span.start, diagnostic.at(self.config, span)));
    }

    /// Follows a dotted path: object keys, and number segments into arrays.
    fn find(&self, path: &str) -> Found<'a> {
        let mut at: &'a Value<'a> = self.root;
        for segment in path.split('.') {
            let next = match at {
                Value::Object(object) => object
                    .properties
                    .iter()
                    .rev()
                    .find(|p| prop_name(&p.name) == segment)
                    .map(|p| &p.value),
                Value::Array(array) => segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| array.elements.get(i)),
                _ => None,
            };
            match next {
                Some(value) => at = value,
                None => return Found::Missing(span(at)),
            }
        }
        Found::Value(at)
    }

    /// The value at `path`, or an error naming it (`None`).
    fn require(&mut self, path: &str, help: &str) -> Option<&'a Value<'a>> {
        match self.find(path) {
            Found::Value(Value::NullKeyword(null)) => {
                self.report(
                    null.range.start..null.range.end,
                    Diagnostic::error(format!("config key `{path}` is null"))
                        .label("null")
                        .help(help.to_owned()),
                );
                None
            }
            Found::Value(v) => Some(v),
            Found::Missing(parent) => {
                self.report(
                    parent.start..parent.start.saturating_add(1),
                    Diagnostic::error(format!("missing config key `{path}`"))
                        .label("not in this object")
                        .help(help.to_owned()),
                );
                None
            }
        }
    }

    /// The non-negative integer at `value`, or an error naming `path`.
    fn integer(&mut self, path: &str, value: &Value<'_>) -> Option<u64> {
        if let Value::NumberLit(n) = value
            && let Ok(v) = n.value.parse::<u64>()
        {
            return Some(v);
        }
        if past_u64(value) {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{path}` is past u64::MAX ({}), the largest figure read",
                    u64::MAX
                ))
                .label("past u64::MAX"),
            );
            return None;
        }
        self.report(
            span(value),
            Diagnostic::error(format!(
                "config key `{path}` must be a non-negative integer, found {}",
                describe(value)
            ))
            .label("not a non-negative integer"),
        );
        None
    }

    /// The whole checkpoint.
    fn checkpoint(
        &mut self,
        circuit: &Circuit,
        map: &ConfigMap,
        stem: &str,
        options: ImportOptions<'_>,
    ) -> Option<Imported> {
        let depth = self.layers(map);
        let interval = self.interval(circuit, map);
        let kinds = depth
            .as_ref()
            .and_then(|depth| self.kinds(circuit, map, depth));
        let dims = self.dims(map);
        let name = self.name(stem, options.name);
        let (hf, hf_origin) = match (options.hf, self.hf()) {
            (Some(given), _) => (
                Some(given.to_owned()),
                Origin::Given("`--hf` (`ImportOptions::hf`)"),
            ),
            (None, Some(read)) => (Some(read), self.name_or_path_origin()),
            (None, None) => (None, Origin::File("no `hf`")),
        };
        interval?;
        let read_at = map
            .dims()
            .iter()
            .filter_map(|dim| match self.find(dim.key()) {
                Found::Value(Value::NullKeyword(_)) | Found::Missing(_) => None,
                Found::Value(value) => Some((dim.dim().to_owned(), span(value).start)),
            })
            .collect();
        let dims_at = map
            .dims()
            .iter()
            .map(|dim| (dim.dim().to_owned(), self.missing_span(dim.key())))
            .collect();
        let (name, name_origin) = name?;
        let depth = depth?;
        let (kinds, kinds_at) = kinds?;
        Some(Imported {
            name,
            hf,
            layers: depth.layers,
            kinds,
            dims: dims?,
            read_at,
            origins: Origins {
                name: name_origin,
                hf: hf_origin,
                layers: depth.at,
                kinds: kinds_at,
                dims: dims_at,
            },
        })
    }

    /// The layer count: an integer from 1 to the loader's [`MAX_LAYERS`].
    fn layers(&mut self, map: &ConfigMap) -> Option<Depth> {
        let key = map.layers();
        let value = self.require(key, "`[config] layers` names the key of the layer count")?;
        let n = self.integer(key, value)?;
        if n == 0 {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` is 0: a model has at least one layer"
                ))
                .label("zero layers"),
            );
            return None;
        }
        if n > MAX_LAYERS {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` is {n}, past the loader's limit of {MAX_LAYERS} layers"
                ))
                .label("too many layers")
                .help(format!(
                    "a checkpoint has 1 to {MAX_LAYERS} layers: see \"Limits\" in docs/circuit-schema.md"
                )),
            );
            return None;
        }
        Some(Depth {
            layers: n,
            key: key.to_owned(),
            at: span(value),
        })
    }

    /// The interval check: `Some(())` when there is none or it holds.
    fn interval(&mut self, circuit: &Circuit, map: &ConfigMap) -> Option<()> {
        let Some(key) = map.interval() else {
            return Some(());
        };
        let value = self.require(
            key,
            "`[config] interval` names the key of the layer interval",
        )?;
        let n = self.integer(key, value)?;
        let (expected, what) = match circuit.layout().rule() {
            LayerRule::Interval { period } => (*period, "the layout's `period`"),
            LayerRule::Pattern {
                pattern: Some(p), ..
            } => (
                p.chars().count() as u64,
                "the length of the layout's `pattern`",
            ),
            _ => return Some(()),
        };
        if n == expected {
            return Some(());
        }
        self.report(
            span(value),
            Diagnostic::error(format!(
                "config key `{key}` is {n}, but {what} is {expected}"
            ))
            .label(format!("expected {expected}"))
            .help("this config describes another layout than the circuit's"),
        );
        None
    }

    /// The layers' kinds, checked against the layout and put the way the layout writes them,
    /// with where the config gives each layer's kind (none when the layout alone decides).
    fn kinds(
        &mut self,
        circuit: &Circuit,
        map: &ConfigMap,
        depth: &Depth,
    ) -> Option<(ImportedKinds, Vec<Range<usize>>)> {
        let layers = depth.layers;
        let given = match map.layer_kinds() {
            None => None,
            Some(source) => Some(match source {
                LayerKindsSource::Types { key, map, or } => match (self.find(key), or) {
                    // No list in the config: the rules its config class fills it in by.
                    (Found::Missing(_) | Found::Value(Value::NullKeyword(_)), Some(rules)) => {
                        self.layer_rules(rules, depth)
                    }
                    _ => self.layer_types(key, map, layers),
                },
                LayerKindsSource::Pattern { key } => {
                    self.pattern(key, circuit.layout().rule(), layers)
                }
                LayerKindsSource::Indices { base, kinds } => self.indices(*base, kinds, layers),
                LayerKindsSource::Rules(rules) => self.layer_rules(rules, depth),
            }?),
        };
        let at = given.iter().flatten().map(|l| l.at.clone()).collect();
        let kinds = self.in_layout(circuit.layout().rule(), depth, given)?;
        Some((kinds, at))
    }

    /// The layers' kinds the config gives (`given`), checked against the layout `rule` and
    /// put the way it writes them.
    fn in_layout(
        &mut self,
        rule: &LayerRule,
        depth: &Depth,
        given: Option<Vec<Layer>>,
    ) -> Option<ImportedKinds> {
        match rule {
            LayerRule::Interval { period } => {
                for (i, layer) in given.iter().flatten().enumerate() {
                    let expected = if (i as u64 + 1).is_multiple_of(*period) {
                        "full_attention"
                    } else {
                        "linear_attention"
                    };
                    if layer.kind != expected {
                        self.report(
                            layer.at.clone(),
                            Diagnostic::error(format!(
                                "layer {i} is `{}` {}, but the layout (period {period}) makes it `{expected}`",
                                layer.kind, layer.by
                            ))
                            .label("contradicts the layout")
                            .help("this config describes another layout than the circuit's"),
                        );
                        return None;
                    }
                }
                Some(ImportedKinds::Layout)
            }
            LayerRule::List => Some(ImportedKinds::List(
                given?.into_iter().map(|layer| layer.kind).collect(),
            )),
            LayerRule::Pattern { symbols, pattern } => {
                if let Some(pattern) = pattern
                    && !self.fixed_pattern(pattern, symbols, depth, given.as_deref())
                {
                    return None;
                }
                let Some(given) = given else {
                    return Some(ImportedKinds::Layout);
                };
                let pattern = given
                    .iter()
                    .filter_map(|layer| {
                        symbols
                            .iter()
                            .find(|(_, k)| *k == layer.kind)
                            .map(|(c, _)| *c)
                    })
                    .collect();
                Some(ImportedKinds::Pattern(pattern))
            }
        }
    }

    /// A pattern layout's own pattern: it must divide the depth (it is repeated whole, never
    /// cut), and the config's kinds, when it gives them, must be the pattern's. `false` when
    /// refused (reported).
    fn fixed_pattern(
        &mut self,
        pattern: &str,
        symbols: &[(char, String)],
        depth: &Depth,
        given: Option<&[Layer]>,
    ) -> bool {
        let kinds: Vec<&str> = pattern
            .chars()
            .filter_map(|c| {
                symbols
                    .iter()
                    .find(|(s, _)| *s == c)
                    .map(|(_, k)| k.as_str())
            })
            .collect();
        let period = kinds.len() as u64;
        if period == 0 {
            return true;
        }
        let mut valid = true;
        let (layers, key) = (depth.layers, &depth.key);
        if !layers.is_multiple_of(period) {
            let below = layers - layers % period;
            let above = below.saturating_add(period);
            let fit = if below == 0 {
                format!("{above} layers would fit")
            } else {
                format!("{below} or {above} layers would fit")
            };
            self.report(
                depth.at.clone(),
                Diagnostic::error(format!(
                    "config key `{key}` is {layers}: not a whole number of the layout's pattern `{pattern}` ({period} layers)"
                ))
                .label("the pattern would be cut")
                .help(format!(
                    "{fit}; a model of another depth needs its own pattern: remove `[layout] pattern` and give the layer kinds in `[config]` (by rule: `[config.layer_rules]`, schema 3)"
                )),
            );
            valid = false;
        }
        for (i, layer) in given.into_iter().flatten().enumerate() {
            let expected = kinds.get(i % kinds.len()).copied().unwrap_or_default();
            if layer.kind != expected {
                self.report(
                    layer.at.clone(),
                    Diagnostic::error(format!(
                        "layer {i} is `{}` {}, but the layout's pattern `{pattern}` makes it `{expected}`",
                        layer.kind, layer.by
                    ))
                    .label("contradicts the layout")
                    .help("this config describes another layout than the circuit's"),
                );
                return false;
            }
        }
        valid
    }

    /// The span of the value at `key` (the object that lacks it, when missing).
    fn key_span(&self, key: &str) -> Range<usize> {
        match self.find(key) {
            Found::Value(v) => span(v),
            Found::Missing(parent) => parent,
        }
    }

    /// A list of one entry per layer, each mapped to a layer kind.
    fn layer_types(
        &mut self,
        key: &str,
        map: &[(String, String)],
        layers: u64,
    ) -> Option<Vec<Layer>> {
        let value = self.require(
            key,
            "`[config] layer_types` names the key of the per-layer list",
        )?;
        let Value::Array(array) = value else {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` must be a list of layer types, found {}",
                    describe(value)
                ))
                .label("not a list"),
            );
            return None;
        };
        if array.elements.len() as u64 != layers {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` has {} entries, but the model has {layers} layers",
                    array.elements.len()
                ))
                .label("one entry per layer expected"),
            );
            return None;
        }
        let entries: Vec<&str> = map.iter().map(|(e, _)| e.as_str()).collect();
        let mut out = Vec::with_capacity(array.elements.len());
        for (i, element) in array.elements.iter().enumerate() {
            let spelled = match element {
                Value::StringLit(s) => Some(s.value.to_string()),
                Value::NumberLit(n) => Some(n.value.to_owned()),
                _ => None,
            };
            let kind =
                spelled.and_then(|s| map.iter().find(|(e, _)| *e == s).map(|(_, k)| k.clone()));
            if let Some(kind) = kind {
                out.push(Layer::in_config(kind, span(element)));
                continue;
            }
            let found = match element {
                Value::StringLit(s) => format!("`{}`", s.value),
                Value::NumberLit(n) => format!("`{}`", n.value),
                other => describe(other).to_owned(),
            };
            let shown = found.trim_matches('`').to_owned();
            self.report(
                span(element),
                Diagnostic::error(format!(
                    "entry {i} of config key `{key}` is {found}, which `[config] layer_types.map` does not map"
                ))
                .label("unknown layer type")
                .expected_one_of("entries", &shown, &entries),
            );
        }
        (out.len() == array.elements.len()).then_some(out)
    }

    /// A pattern string, one symbol per layer.
    fn pattern(&mut self, key: &str, rule: &LayerRule, layers: u64) -> Option<Vec<Layer>> {
        let value = self.require(key, "`[config] pattern` names the key of the layer pattern")?;
        let Value::StringLit(text) = value else {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` must be a pattern string, found {}",
                    describe(value)
                ))
                .label("not a string"),
            );
            return None;
        };
        let LayerRule::Pattern { symbols, .. } = rule else {
            return None;
        };
        let pattern: &str = &text.value;
        let count = pattern.chars().count() as u64;
        let at = span(value);
        if count != layers {
            self.report(
                at,
                Diagnostic::error(format!(
                    "config key `{key}` has {count} characters, but the model has {layers} layers"
                ))
                .label("one character per layer expected"),
            );
            return None;
        }
        // The string's characters sit one to one after its opening quote when it has no
        // escapes: then an unknown character is pointed at exactly.
        let raw = self.config.text().get(at.clone()).unwrap_or("");
        let one_to_one = raw.get(1..raw.len().saturating_sub(1)) == Some(pattern);
        let known: Vec<String> = symbols.iter().map(|(c, _)| c.to_string()).collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let mut out = Vec::with_capacity(pattern.len());
        for (offset, c) in pattern.char_indices() {
            let place = if one_to_one {
                let start = at.start + 1 + offset;
                start..start + c.len_utf8()
            } else {
                at.clone()
            };
            if let Some((_, kind)) = symbols.iter().find(|(s, _)| *s == c) {
                out.push(Layer::in_config(kind.clone(), place));
                continue;
            }
            self.report(
                place,
                Diagnostic::error(format!(
                    "character `{c}` of config key `{key}` is not a `[layout.symbols]` symbol"
                ))
                .label("unknown symbol")
                .expected_one_of("symbols", &c.to_string(), &known),
            );
        }
        (out.len() as u64 == layers).then_some(out)
    }

    /// Per layer kind, the list of its layers' indices; together exactly the layers.
    fn indices(
        &mut self,
        base: u64,
        kinds: &[(String, String)],
        layers: u64,
    ) -> Option<Vec<Layer>> {
        let count = usize::try_from(layers).ok()?;
        let mut of: Vec<Option<(String, Range<usize>)>> = vec![None; count];
        let mut valid = true;
        for (kind, key) in kinds {
            let Some(value) = self.require(
                key,
                "`[config] layer_indices` names one list of layer indices per layer kind",
            ) else {
                valid = false;
                continue;
            };
            let Value::Array(array) = value else {
                self.report(
                    span(value),
                    Diagnostic::error(format!(
                        "config key `{key}` must be a list of layer indices, found {}",
                        describe(value)
                    ))
                    .label("not a list"),
                );
                valid = false;
                continue;
            };
            for element in &array.elements {
                let Some(index) = self.integer(key, element) else {
                    valid = false;
                    continue;
                };
                let layer = index
                    .checked_sub(base)
                    .filter(|l| *l < layers)
                    .and_then(|l| usize::try_from(l).ok());
                let Some(layer) = layer else {
                    self.report(
                        span(element),
                        Diagnostic::error(format!(
                            "config key `{key}` lists layer {index}, outside {base}..={}",
                            layers - 1 + base
                        ))
                        .label("no such layer")
                        .note(format!(
                            "`[config.layer_indices] base = {base}` and {layers} layers"
                        )),
                    );
                    valid = false;
                    continue;
                };
                let slot = of.get_mut(layer)?;
                if let Some((first, _)) = slot {
                    let first = first.clone();
                    self.report(
                        span(element),
                        Diagnostic::error(format!(
                            "layer {index} is listed twice: in config key `{key}` and for `{first}`"
                        ))
                        .label("listed again"),
                    );
                    valid = false;
                } else {
                    *slot = Some((kind.clone(), span(element)));
                }
            }
        }
        if !valid {
            return None;
        }
        let missing: Vec<String> = of
            .iter()
            .enumerate()
            .filter(|(_, k)| k.is_none())
            .map(|(i, _)| (i as u64 + base).to_string())
            .collect();
        if !missing.is_empty() {
            let keys: Vec<String> = kinds.iter().map(|(_, k)| format!("`{k}`")).collect();
            let first = kinds.first().map_or(String::new(), |(_, key)| key.clone());
            self.report(
                self.key_span(&first),
                Diagnostic::error(format!(
                    "layer{} {} {} in none of the config keys {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    if missing.len() == 1 { "is" } else { "are" },
                    keys.join(", ")
                ))
                .label("these lists do not cover every layer"),
            );
            return None;
        }
        Some(
            of.into_iter()
                .filter_map(|k| k.map(|(kind, at)| Layer::in_config(kind, at)))
                .collect(),
        )
    }

    /// Every declared dim: its key's integer, or its fallback over the others.
    fn dims(&mut self, map: &ConfigMap) -> Option<Vec<(String, u64)>> {
        let mut values: Vec<(String, Option<u64>)> = Vec::with_capacity(map.dims().len());
        let mut pending: Vec<usize> = Vec::new();
        let mut valid = true;
        for (i, dim) in map.dims().iter().enumerate() {
            let key = dim.key();
            let value = match self.find(key) {
                Found::Value(Value::NullKeyword(_)) | Found::Missing(_)
                    if dim.fallback().is_some() =>
                {
                    pending.push(i);
                    None
                }
                Found::Value(v) if !matches!(v, Value::NullKeyword(_)) => {
                    let n = self.integer(key, v);
                    valid &= n.is_some();
                    n
                }
                _ => {
                    let help = format!(
                        "`[config.dims]` reads `{}` from it; if configs may omit it, give a fallback: `{} = {{ key = \"{key}\", or = \"<expression>\" }}`",
                        dim.dim(),
                        dim.dim()
                    );
                    self.require(key, &help);
                    valid = false;
                    None
                }
            };
            values.push((dim.dim().to_owned(), value));
        }
        // Fallbacks may read each other's results: evaluate until nothing more resolves.
        while !pending.is_empty() {
            let before = pending.len();
            let mut still = Vec::new();
            for &i in &pending {
                let dim = &map.dims()[i];
                let (text, shape) = dim.fallback()?;
                let lookup =
                    |name: &str| values.iter().find(|(d, _)| d == name).and_then(|(_, v)| *v);
                let unresolved = shape.dims().iter().any(|r| lookup(&r.name).is_none());
                if unresolved {
                    still.push(i);
                    continue;
                }
                match shape.eval(lookup) {
                    Ok(v) => values[i].1 = Some(v),
                    Err(error) => {
                        let key = dim.key();
                        let at = self.missing_span(key);
                        self.report(
                            at,
                            Diagnostic::error(format!(
                                "config key `{key}` is absent and its fallback `{text}` fails: {error}"
                            ))
                            .label("absent or null"),
                        );
                        valid = false;
                    }
                }
            }
            pending = still;
            // A fallback that reads a dim refused above says nothing more.
            if pending.len() == before && !valid {
                return None;
            }
            if pending.len() == before {
                for &i in &pending {
                    let dim = &map.dims()[i];
                    let key = dim.key();
                    let at = self.missing_span(key);
                    let text = dim.fallback().map_or("", |(t, _)| t);
                    self.report(
                        at,
                        Diagnostic::error(format!(
                            "config key `{key}` is absent and its fallback `{text}` reads a dim the config does not give either"
                        ))
                        .label("absent or null"),
                    );
                }
                return None;
            }
        }
        if !valid {
            return None;
        }
        values.into_iter().map(|(d, v)| Some((d, v?))).collect()
    }

    /// Where an absent or null key is pointed at: the null, or the object that lacks it.
    fn missing_span(&self, key: &str) -> Range<usize> {
        match self.find(key) {
            Found::Value(v) => span(v),
            Found::Missing(parent) => parent.start..parent.start.saturating_add(1),
        }
    }

    /// `_name_or_path` when it is a string.
    fn name_or_path(&self) -> Option<String> {
        match self.find("_name_or_path") {
            Found::Value(Value::StringLit(s)) if !s.value.is_empty() => Some(s.value.to_string()),
            _ => None,
        }
    }

    /// The Hugging Face id: `_name_or_path` when it reads `owner/name`.
    fn hf(&self) -> Option<String> {
        let path = self.name_or_path()?;
        let mut parts = path.split('/');
        let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        (ok(owner) && ok(name)).then_some(path)
    }

    /// The checkpoint's name and where it came from: as given, else from `_name_or_path` or
    /// the file stem.
    fn name(&mut self, stem: &str, given: Option<&str>) -> Option<(String, Origin)> {
        let read = self
            .name_or_path()
            .and_then(|p| p.rsplit('/').next().map(str::to_owned))
            .filter(|s| !s.is_empty());
        let (name, origin) = match (given, read) {
            (Some(name), _) => (
                name.to_owned(),
                Origin::Given("`--name` (`ImportOptions::name`)"),
            ),
            (None, Some(read)) => (snake_case(&read), self.name_or_path_origin()),
            (None, None) => (
                snake_case(stem),
                Origin::File("the name is the config file's stem"),
            ),
        };
        if is_snake_identifier(&name) {
            return Some((name, origin));
        }
        let d = Diagnostic::error(format!("`{name}` is not a valid checkpoint name")).help(
            "a checkpoint name is lower snake case (`[a-z][a-z0-9_]*`): give one with `--name`",
        );
        match origin {
            Origin::Config(at) => self.report(at, d.label("the name is read from here")),
            Origin::Given(by) => self.errors.push((0, d.note(format!("given by {by}")))),
            Origin::File(what) => self
                .errors
                .push((0, d.in_file(self.config.name()).note(what))),
        }
        None
    }

    /// `_name_or_path`'s value, where a name or an `hf` read from it came from.
    fn name_or_path_origin(&self) -> Origin {
        Origin::Config(self.missing_span("_name_or_path"))
    }
}

/// `Qwen3.5-27B` -> `qwen3_5_27b`: ASCII letters and digits kept (lowercased), every other run
/// of characters one `_`, none at either end; a leading digit gets an `m` (a name starts with a
/// letter).
fn snake_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'm');
    }
    out
}

/// Whether `text` names `word` as a whole identifier (not inside a longer one).
fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// A property's name.
fn prop_name<'n>(name: &'n ObjectPropName<'_>) -> &'n str {
    match name {
        ObjectPropName::String(s) => &s.value,
        ObjectPropName::Word(w) => w.value,
    }
}

/// A value's byte span in the config.
fn span(value: &Value<'_>) -> Range<usize> {
    let range = match value {
        Value::StringLit(v) => v.range,
        Value::NumberLit(v) => v.range,
        Value::BooleanLit(v) => v.range,
        Value::Object(v) => v.range,
        Value::Array(v) => v.range,
        Value::NullKeyword(v) => v.range,
    };
    range.start..range.end
}

/// Whether `value` is a non-negative integer (digits only) too large for u64.
fn past_u64(value: &Value<'_>) -> bool {
    matches!(value, Value::NumberLit(n)
        if n.value.bytes().all(|b| b.is_ascii_digit()) && n.value.parse::<u64>().is_err())
}

/// "a string", "a float", ... for error messages.
fn describe(value: &Value<'_>) -> &'static str {
    match value {
        _ if past_u64(value) => "an integer past u64::MAX",
        Value::StringLit(_) => "a string",
        Value::NumberLit(n) if n.value.starts_with('-') => "a negative number",
        Value::NumberLit(_) => "a number that is not an integer",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "a list",
        Value::NullKeyword(_) => "null",
    }
}

#[cfg(test)]
mod tests {
    use super::snake_case;

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

    #[test]
    fn names_from_repository_names() {
        assert_eq!(snake_case("Qwen3.5-27B"), "qwen3_5_27b");
        assert_eq!(snake_case("gpt-oss-120b"), "gpt_oss_120b");
        assert_eq!(snake_case("--Mistral-7B-v0.1--"), "mistral_7b_v0_1");
        assert_eq!(snake_case("3b"), "m3b");
        assert_eq!(snake_case("é"), "");
    }
}
