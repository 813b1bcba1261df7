//! Walking spanned TOML: the error [`Sink`] every stage of the loader and the inputs file
//! reports to, [`Loc`] (a span of one file), and [`Walk`] (one file being walked) with the typed
//! accessors over `toml`'s spanned tree (`string`, `u64`, `table`, `array`, `strings`), the
//! unknown-key check, the identifier rule for names that become Rust identifiers, and the
//! mapping of a byte offset inside a string value back into the file ([`StrAt`]).
//!
//! It also owns [`Origin`], where a validated item was declared (`file:line`), made from a
//! [`Loc`] by [`Sink::origin`].
//!
//! Owner: metrale-circuit (feature `load`). It depends only on `diag` and `limits` (and the
//! identifier rule of the vocabulary): the circuit loader (`load`), the validated circuit and
//! the inputs file all build on it.
//! Invariants:
//! - Nothing here panics on any input: every lookup is by key or iterator, integers are parsed
//!   with checked conversions, and spans are handed to [`crate::diag`], which clamps them.
//! - Each accessor reports at most one error per value it refuses, located at that value, and
//!   returns `None` (or skips the item) so the caller can go on and collect every error.
//! - Errors come out in a deterministic order: file order, then byte position; errors at the
//!   same position keep the order found.

use std::collections::BinaryHeap;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::diag::{Diagnostic, Diagnostics, Source};
use super::limits::{MAX_ERRORS, MAX_NAME_BYTES, too_many};
use crate::model::is_snake_identifier;

/// A span of one of the files read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    /// The file's index in [`Sink::files`].
    pub file: usize,
    /// Byte range in that file.
    pub span: Range<usize>,
}

/// Where an item was declared: the file as the user named it and the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The file, as given (never made absolute).
    pub path: String,
    /// 1-based line.
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path, self.line)
    }
}

/// Every file read and the first [`MAX_ERRORS`] errors found so far (in file then position
/// order), with the count of all of them: a file of a million errors costs a million cheap
/// reports, not a million kept diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    /// The files, in the order read.
    pub files: Vec<Source>,
    /// The errors kept, a max-heap on their sort key, so the one past the first
    /// [`MAX_ERRORS`] is dropped in `O(log MAX_ERRORS)`.
    found: BinaryHeap<Found>,
    /// How many errors were reported, kept or not.
    total: usize,
}

/// One error with its sort key: file index, byte offset, then the order reported.
#[derive(Debug)]
struct Found {
    key: (usize, usize, usize),
    diagnostic: Diagnostic,
}

impl PartialEq for Found {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Found {}

impl PartialOrd for Found {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Found {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl Sink {
    /// Adds a file; returns its index.
    pub(crate) fn add_file(&mut self, source: Source) -> usize {
        self.files.push(source);
        self.files.len() - 1
    }

    /// Locates `diagnostic` at `loc` and records it.
    pub fn report(&mut self, loc: &Loc, diagnostic: Diagnostic) {
        let key = (loc.file, loc.span.start, self.total);
        if self.keeps(key) {
            let diagnostic = match self.files.get(loc.file) {
                Some(source) => diagnostic.at(source, loc.span.clone()),
                None => diagnostic,
            };
            self.keep(key, diagnostic);
        }
        self.total += 1;
    }

    /// Whether an error at `key` is among the first [`MAX_ERRORS`] so far.
    fn keeps(&self, key: (usize, usize, usize)) -> bool {
        self.found.len() < MAX_ERRORS || self.found.peek().is_some_and(|last| key < last.key)
    }

    /// Keeps an error, dropping the last one kept when there are more than [`MAX_ERRORS`].
    fn keep(&mut self, key: (usize, usize, usize), diagnostic: Diagnostic) {
        self.found.push(Found { key, diagnostic });
        if self.found.len() > MAX_ERRORS {
            self.found.pop();
        }
    }

    /// How many errors were recorded so far: a stage compares it before and after to know
    /// whether its part was refused.
    pub fn error_count(&self) -> usize {
        self.total
    }

    /// Records `diagnostic` as it is (a file that cannot be read), sorted with file `file`'s
    /// errors at byte `offset`.
    pub(crate) fn report_unlocated(&mut self, file: usize, offset: usize, diagnostic: Diagnostic) {
        let key = (file, offset, self.total);
        if self.keeps(key) {
            self.keep(key, diagnostic);
        }
        self.total += 1;
    }

    /// Reports each TOML syntax error of file `file` ("invalid TOML: ..."), located when the
    /// parser gave a span, else naming the file.
    pub(crate) fn report_toml_errors(&mut self, file: usize, errors: Vec<toml::de::Error>) {
        for error in errors {
            let diagnostic =
                Diagnostic::error(format!("invalid TOML: {}", error.message())).label("here");
            let span = error.span().or_else(|| {
                let text = self.files.get(file)?.text();
                first_line_reporting(text, error.message())
            });
            if let Some(span) = span {
                self.report(&Loc { file, span }, diagnostic);
            } else {
                let name = self.name(file).to_owned();
                self.report_unlocated(file, 0, diagnostic.in_file(name));
            }
        }
    }

    /// `path:line:col` of `loc`'s start.
    pub fn place(&self, loc: &Loc) -> String {
        match self.files.get(loc.file) {
            Some(source) => {
                let (line, column) = self.line_col(loc);
                format!("{}:{line}:{column}", source.name())
            }
            None => "?".to_owned(),
        }
    }

    /// The 1-based line of `loc`'s start.
    pub fn line(&self, loc: &Loc) -> usize {
        self.line_col(loc).0
    }

    /// 1-based line and column (in chars) of `loc`'s start, from its file's line table.
    fn line_col(&self, loc: &Loc) -> (usize, usize) {
        self.files
            .get(loc.file)
            .map_or((1, 1), |source| source.line_col(loc.span.start))
    }

    /// Where `loc` was declared, for the validated circuit: the file's display name and the
    /// 1-based line.
    pub fn origin(&self, loc: &Loc) -> Origin {
        Origin {
            path: self.name(loc.file).to_owned(),
            line: self.line(loc),
        }
    }

    /// The display name of file `file`.
    pub fn name(&self, file: usize) -> &str {
        self.files.get(file).map_or("", Source::name)
    }

    /// How many errors were found so far.
    pub fn count(&self) -> usize {
        self.total
    }

    /// The errors kept, sorted by file then position (stable), then, when more were found
    /// than kept, one last error naming the first file that says how many more there are.
    pub(crate) fn into_diagnostics(self) -> Diagnostics {
        let more = self.total - self.found.len();
        let mut out: Diagnostics = self
            .found
            .into_sorted_vec()
            .into_iter()
            .map(|f| f.diagnostic)
            .collect();
        if more > 0 {
            let name = self.files.first().map_or("", Source::name).to_owned();
            out.push(
                Diagnostic::error(format!(
                    "and {more} more error{} (only the first {MAX_ERRORS} are shown)",
                    if more == 1 { "" } else { "s" }
                ))
                .in_file(name)
                .help("fix these and run again to see the rest"),
            );
        }
        out
    }
}

/// The first line of `text` at which the TOML parser reports `message`, for an error it gives
/// without a span (its recursion limit on a long dotted key): the shortest prefix of whole
/// lines whose parse reports it, found by bisection (`O(log lines)` parses). `None` when no
/// prefix reports it (the error needs the whole file).
fn first_line_reporting(text: &str, message: &str) -> Option<Range<usize>> {
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain((!text.ends_with('\n')).then_some(text.len()))
        .collect();
    let reports = |lines: usize| {
        let prefix = ends
            .get(lines.wrapping_sub(1))
            .map_or("", |&end| &text[..end]);
        let (_, errors) = DeTable::parse_recoverable(prefix);
        errors
            .iter()
            .any(|e| e.span().is_none() && e.message() == message)
    };
    // The smallest count of lines whose prefix reports the error.
    let (mut low, mut high) = (1, ends.len());
    if high == 0 || !reports(high) {
        return None;
    }
    while low < high {
        let mid = low + (high - low) / 2;
        if reports(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    let start = if low >= 2 { ends[low - 2] } else { 0 };
    let end = ends[low - 1];
    let line = &text[start..end];
    Some(start..start + line.trim_end_matches(['\n', '\r']).len())
}

/// A table of the spanned tree.
pub(crate) type Table<'i> = DeTable<'i>;

/// A table's entries in the order the file writes them (by each key's position): the order
/// every stage reads a table in, whatever order the map keeps its keys in.
pub(crate) fn entries<'t, 'i>(
    table: &'t Table<'i>,
) -> Vec<(&'t Spanned<std::borrow::Cow<'i, str>>, &'t Value<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}
/// A spanned value of the spanned tree.
pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// Every Rust keyword, strict and reserved, in every edition: none may name a generated item.
pub(crate) const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try",
];

/// A string read from a file, with where it was written.
#[derive(Debug, Clone)]
pub(crate) struct Text {
    /// The decoded string.
    pub text: String,
    /// The span of the value (quotes included) or of the key.
    pub loc: Loc,
}

/// Where a string value sits in its file, to point inside it.
#[derive(Debug, Clone)]
pub(crate) struct StrAt {
    /// The whole value, quotes included.
    pub loc: Loc,
    /// The byte offset in the file of the string's first char, when every byte of the decoded
    /// string is the same byte of the file (a one-line string without escapes).
    pub content: Option<usize>,
}

impl StrAt {
    /// The file span of `len` bytes at byte `offset` of the decoded string, or the whole value
    /// when offsets do not map one to one.
    pub fn inner(&self, offset: usize, len: usize) -> Loc {
        match self.content {
            Some(start) => {
                let begin = start.saturating_add(offset);
                Loc {
                    file: self.loc.file,
                    span: begin..begin.saturating_add(len),
                }
            }
            None => self.loc.clone(),
        }
    }
}

/// One file being walked: its index in the sink and the sink its errors go to.
pub(crate) struct Walk<'a> {
    /// Where every error goes.
    pub sink: &'a mut Sink,
    /// The file's index in [`Sink::files`].
    pub file: usize,
}

impl Walk<'_> {
    /// The location of `span` in this file.
    pub fn loc(&self, span: Range<usize>) -> Loc {
        Loc {
            file: self.file,
            span,
        }
    }

    /// Locates `diagnostic` at `span` of this file and records it.
    pub fn report(&mut self, span: Range<usize>, diagnostic: Diagnostic) {
        let loc = self.loc(span);
        self.sink.report(&loc, diagnostic);
    }

    /// Reports `message` at `again`, a name declared a second time in this file, noting where
    /// its first declaration (`first`) is: the one form of every "duplicate ..." error.
    pub fn duplicate(&mut self, again: Range<usize>, first: &Loc, message: String) {
        let place = self.sink.place(first);
        self.report(
            again,
            Diagnostic::error(message)
                .label("declared again")
                .note(format!("first declared at {place}")),
        );
    }

    /// `path:line:col` of `span`'s start in this file.
    pub fn place(&self, span: Range<usize>) -> String {
        self.sink.place(&self.loc(span))
    }

    /// A [`Text`] of `text` at `span` of this file.
    pub fn text(&self, text: &str, span: Range<usize>) -> Text {
        Text {
            text: text.to_owned(),
            loc: self.loc(span),
        }
    }

    /// Where the string value at `span` sits, with the file offset of its first char when the
    /// decoded `decoded` maps one to one onto the file (a one-line basic or literal string
    /// without escapes).
    pub fn str_at(&self, span: Range<usize>, decoded: &str) -> StrAt {
        let raw = self
            .sink
            .files
            .get(self.file)
            .and_then(|f| f.text().get(span.clone()))
            .unwrap_or("");
        let one_to_one = !raw.starts_with("\"\"\"")
            && !raw.starts_with("'''")
            && (raw.starts_with('"') || raw.starts_with('\''))
            && raw.get(1..raw.len().saturating_sub(1)) == Some(decoded);
        StrAt {
            content: one_to_one.then(|| span.start.saturating_add(1)),
            loc: self.loc(span),
        }
    }

    /// Reports every key of `table` outside `allowed` ("unknown key `x` in `what`", with the
    /// valid keys and the nearest one).
    pub fn check_keys(&mut self, table: &Table<'_>, allowed: &[&str], what: &str) {
        self.check_keys_renamed(table, allowed, &[], what);
    }

    /// [`Walk::check_keys`], where each `(old, new)` of `renamed` is a key renamed since a
    /// schema: the old key is refused at itself, naming the new one.
    pub fn check_keys_renamed(
        &mut self,
        table: &Table<'_>,
        allowed: &[&str],
        renamed: &[(&str, &str)],
        what: &str,
    ) {
        for (key, _) in entries(table) {
            let name: &str = key.get_ref();
            if let Some((_, new)) = renamed.iter().find(|(old, _)| *old == name) {
                self.report(
                    key.span(),
                    Diagnostic::error(format!("the key `{name}` in {what} is now `{new}`"))
                        .label(format!("renamed `{new}`"))
                        .help(format!(
                            "write `{new}` for `{name}`: the same value, a new name"
                        )),
                );
            } else if !allowed.contains(&name) {
                self.report(
                    key.span(),
                    Diagnostic::error(format!("unknown key `{name}` in {what}"))
                        .label("unknown key")
                        .expected_one_of("keys", name, allowed),
                );
            }
        }
    }

    /// The string of `value`, or an error naming `key` and the type found.
    pub fn string<'v>(&mut self, key: &str, value: &'v Value<'_>) -> Option<&'v str> {
        if let DeValue::String(s) = value.get_ref() {
            Some(s)
        } else {
            self.wrong_type(key, "a string", value);
            None
        }
    }

    /// The string of `value` as a [`Text`], or an error naming `key` and the type found.
    pub fn string_text(&mut self, key: &str, value: &Value<'_>) -> Option<Text> {
        let s = self.string(key, value)?;
        Some(self.text(s, value.span()))
    }

    /// The table of `value`, or an error naming `key` and the type found.
    pub fn table<'v, 'i>(&mut self, key: &str, value: &'v Value<'i>) -> Option<&'v Table<'i>> {
        if let DeValue::Table(t) = value.get_ref() {
            Some(t)
        } else {
            self.wrong_type(key, "a table", value);
            None
        }
    }

    /// The items of the array `value`, or an error naming `key` and the type found.
    pub fn array<'v, 'i>(&mut self, key: &str, value: &'v Value<'i>) -> Option<&'v [Value<'i>]> {
        if let DeValue::Array(a) = value.get_ref() {
            Some(a)
        } else {
            self.wrong_type(key, "an array", value);
            None
        }
    }

    /// The strings of the array `value`: each item that is not a string is reported and
    /// skipped. `None` (reported) when `value` is not an array.
    pub fn strings(&mut self, key: &str, value: &Value<'_>) -> Option<Vec<Text>> {
        let items = self.array(key, value)?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if let DeValue::String(s) = item.get_ref() {
                out.push(self.text(s, item.span()));
            } else {
                let found = type_name(item.get_ref());
                self.report(
                    item.span(),
                    Diagnostic::error(format!(
                        "each item of `{key}` must be a string, found {found}"
                    ))
                    .label("not a string"),
                );
            }
        }
        Some(out)
    }

    /// [`Walk::strings`], keeping at most `max` items: the first item past it is reported
    /// ("too many `what`") and the rest are not read.
    pub fn strings_at_most(
        &mut self,
        key: &str,
        value: &Value<'_>,
        max: usize,
        what: &str,
    ) -> Option<Vec<Text>> {
        if let Some(items) = self.array(key, value)
            && let Some(past) = items.get(max)
        {
            self.report(past.span(), too_many(what, max));
            let mut out = Vec::with_capacity(max);
            for item in items.iter().take(max) {
                if let DeValue::String(s) = item.get_ref() {
                    out.push(self.text(s, item.span()));
                } else {
                    self.string(key, item);
                }
            }
            return Some(out);
        }
        self.strings(key, value)
    }

    /// Whether `count` items fit under `max`; else reports the first one past it, at `past`.
    pub fn at_most(&mut self, count: usize, max: usize, past: Range<usize>, what: &str) -> bool {
        if count > max {
            self.report(past, too_many(what, max));
            return false;
        }
        true
    }

    /// The non-negative integer of `value`, or an error (wrong type, negative, too large).
    pub fn u64(&mut self, key: &str, value: &Value<'_>) -> Option<u64> {
        let DeValue::Integer(int) = value.get_ref() else {
            self.wrong_type(key, "an integer", value);
            return None;
        };
        if let Ok(n) = u64::from_str_radix(int.as_str(), int.radix()) {
            return Some(n);
        }
        let message = if int.as_str().starts_with('-') {
            format!("`{key}` must not be negative")
        } else {
            format!("`{key}` is too large (at most {})", u64::MAX)
        };
        self.report(
            value.span(),
            Diagnostic::error(message).label("out of range"),
        );
        None
    }

    /// Reports "`key` must be `expected`, found a ...".
    pub fn wrong_type(&mut self, key: &str, expected: &str, value: &Value<'_>) {
        let found = type_name(value.get_ref());
        self.report(
            value.span(),
            Diagnostic::error(format!("`{key}` must be {expected}, found {found}"))
                .label(format!("expected {expected}")),
        );
    }

    /// Checks that `name` may become a Rust identifier (lower snake case, not a keyword);
    /// reports at `span` otherwise. `what` names the item ("dim", "block name").
    pub fn identifier(&mut self, name: &str, span: Range<usize>, what: &str) -> bool {
        if !is_snake_identifier(name) {
            self.report(
                span,
                Diagnostic::error(format!("invalid {what} `{name}`: not lower snake case"))
                    .label("not lower snake case")
                    .help(format!(
                        "the {what} becomes a Rust identifier: use `[a-z][a-z0-9_]*`"
                    )),
            );
            return false;
        }
        if name.len() > MAX_NAME_BYTES {
            self.report(
                span,
                Diagnostic::error(format!(
                    "invalid {what}: {} bytes long, the limit is {MAX_NAME_BYTES}",
                    name.len()
                ))
                .label("too long")
                .help(format!("the {what} becomes a Rust identifier: shorten it")),
            );
            return false;
        }
        if RUST_KEYWORDS.contains(&name) {
            self.report(
                span,
                Diagnostic::error(format!("invalid {what} `{name}`: a Rust keyword"))
                    .label("a Rust keyword")
                    .help(format!(
                        "the {what} becomes a Rust identifier: e.g. `{name}_`"
                    )),
            );
            return false;
        }
        true
    }
}

/// The value of `key` in `table`, with the key's span.
pub(crate) fn field<'t, 'i>(
    table: &'t Table<'i>,
    key: &str,
) -> Option<(Range<usize>, &'t Value<'i>)> {
    table.get_key_value(key).map(|(k, v)| (k.span(), v))
}

/// "a string", "an integer", ... for `value`.
pub(crate) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The first byte offset at which `key` or its value (or anything inside it) is written: where
/// an item made of several tables (a block split over `[[block.x.state]]` headers) first appears.
pub(crate) fn first_offset(key: Range<usize>, value: &Value<'_>) -> usize {
    let mut first = key.start.min(value.span().start);
    let mut stack: Vec<&Value<'_>> = vec![value];
    while let Some(v) = stack.pop() {
        first = first.min(v.span().start);
        match v.get_ref() {
            DeValue::Table(t) => {
                for (k, child) in t {
                    first = first.min(k.span().start);
                    stack.push(child);
                }
            }
            DeValue::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    first
}
