//! Rustc-like diagnostics for circuit TOML files.
//!
//! This module owns the error type every loader stage reports through: a [`Diagnostic`] (one
//! error with an optional file position, a caret label, notes and help lines), the ordered
//! collection [`Diagnostics`] (all errors of one or more files), the [`Source`] a position is
//! resolved against, and the spelling suggester [`did_you_mean`].
//!
//! Invariants:
//!
//! - Nothing here panics, whatever the input: byte spans may be reversed, past the end of the
//!   text, or not on a `char` boundary; they are clamped to the text and snapped to boundaries
//!   (a start snaps back, an end snaps forward).
//! - Lines and columns are 1-based; columns count `char`s, not bytes. A [`Location`]'s
//!   `line_text` never holds the line terminator (neither `\n` nor the `\r` of `\r\n`; a lone `\r`
//!   is text, drawn as `␍`), and its
//!   `width` is at least 1 and covers only the part of the span on the first line.
//! - Paths are kept exactly as the user gave them; nothing is made absolute.
//! - Rendering is plain text (no ANSI colours) with no trailing newline. A tab in a source line
//!   is rendered as four spaces, and the carets are shifted and widened to match.
//! - Rendering is the one place user text reaches a terminal, so it escapes it there: every
//!   control character (a NUL, an ESC sequence, a bell, C1) and bidirectional control in the
//!   message, the path, the source line, the label, the notes and the help is drawn as its
//!   `\u{1b}` escape (`escaped`); the only line breaks are the renderer's own (its lines, and
//!   a note's or help's lines, which it indents under the first). The [`Diagnostic`] keeps the
//!   text as given.

use std::fmt;
use std::ops::Range;

/// A source file as the user named it (path as given, never made absolute), its text, and the
/// table of where its lines start: the one line table every location is computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    name: String,
    text: String,
    /// The byte offset where each line starts (0 first), ascending.
    line_starts: Vec<usize>,
    /// How many UTF-8 continuation bytes the text holds before each multiple of
    /// [`CHUNK`] bytes: a column is then counted in at most `CHUNK` bytes, whatever the
    /// length of the line (a one-line file of a megabyte costs no more per error).
    continuations: Vec<usize>,
}

/// The stride of [`Source`]'s continuation-byte counts.
const CHUNK: usize = 64;

/// The most chars of a source line a diagnostic keeps: a longer line is shown as an excerpt
/// around the caret, so an error never copies a whole megabyte-long line.
pub const MAX_SHOWN_CHARS: usize = 120;

/// Whether `b` continues a UTF-8 sequence (is not the first byte of a char).
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

impl Source {
    /// A source named `name` (kept as given) holding `text`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut continuations = Vec::with_capacity(text.len() / CHUNK + 1);
        let mut count = 0;
        for chunk in text.as_bytes().chunks(CHUNK) {
            continuations.push(count);
            count += chunk.iter().filter(|&&b| is_continuation(b)).count();
        }
        continuations.push(count);
        Self {
            name: name.into(),
            text,
            line_starts,
            continuations,
        }
    }

    /// The path as the user gave it.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text of the file.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// 1-based line and 1-based column (column counted in chars) of a byte offset (clamped to
    /// the text, snapped back to a char boundary), from the line table (a binary search). A
    /// byte of the line terminator is one column past the line's last char (the `\n` of a
    /// `\r\n` too).
    #[must_use]
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = floor_boundary(&self.text, byte);
        let line = self
            .line_starts
            .partition_point(|&start| start <= byte)
            .max(1);
        let bounds = self.line_bounds(byte);
        let column = self.chars_between(bounds.start, byte.min(bounds.end)) + 1;
        (line, column)
    }

    /// How many chars the text holds from byte `from` to byte `to` (both char boundaries,
    /// `from <= to`): the bytes less the continuation bytes, from the per-chunk counts.
    fn chars_between(&self, from: usize, to: usize) -> usize {
        (to - from) - (self.continuations_before(to) - self.continuations_before(from))
    }

    /// How many continuation bytes the text holds before byte `byte`.
    fn continuations_before(&self, byte: usize) -> usize {
        let chunk = byte / CHUNK;
        let counted = self.continuations.get(chunk).copied().unwrap_or(0);
        let rest = self
            .text
            .as_bytes()
            .get(chunk * CHUNK..byte)
            .map_or(0, |bytes| {
                bytes.iter().filter(|&&b| is_continuation(b)).count()
            });
        counted + rest
    }

    /// The byte range of the line holding byte `byte` (already a boundary), without its line
    /// terminator (`\n`, or `\r\n`), from the line table.
    fn line_bounds(&self, byte: usize) -> Range<usize> {
        let line = self.line_starts.partition_point(|&start| start <= byte);
        let start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        let next = self.line_starts.get(line);
        let end = next.map_or(self.text.len(), |&next| next - 1);
        // Only the `\r` of a `\r\n` ends a line; a lone `\r` at the end of the text is text.
        let end =
            if next.is_some() && end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
                end - 1
            } else {
                end
            };
        start..end
    }
}

/// The part of a line a diagnostic shows.
struct Excerpt {
    /// Its bytes in the text.
    bytes: Range<usize>,
    /// How many chars of the line it leaves out before it.
    chars_before: usize,
    /// Where the line ends.
    line_end: usize,
}

/// The excerpt of the line `bounds` shown for a caret at byte `at` (a boundary inside or at
/// the end of the line): the whole line when it has at most [`MAX_SHOWN_CHARS`] chars, else
/// [`MAX_SHOWN_CHARS`] chars starting up to a third of them before the caret. Linear in the
/// excerpt, not the line.
fn excerpt(source: &Source, bounds: Range<usize>, at: usize) -> Excerpt {
    let text = source.text.as_str();
    let line = text.get(bounds.clone()).unwrap_or("");
    let whole = Excerpt {
        bytes: bounds.clone(),
        chars_before: 0,
        line_end: bounds.end,
    };
    if line.len() <= MAX_SHOWN_CHARS {
        return whole;
    }
    let before = text.get(bounds.start..at).unwrap_or("");
    let lead = before
        .char_indices()
        .rev()
        .take(MAX_SHOWN_CHARS / 3)
        .last()
        .map_or(at, |(i, _)| bounds.start + i);
    let tail = text.get(lead..bounds.end).unwrap_or("");
    let end = tail
        .char_indices()
        .nth(MAX_SHOWN_CHARS)
        .map_or(bounds.end, |(i, _)| lead + i);
    if lead == bounds.start && end == bounds.end {
        return whole;
    }
    Excerpt {
        bytes: lead..end,
        chars_before: source.chars_between(bounds.start, lead),
        line_end: bounds.end,
    }
}

/// The largest char boundary of `text` at or before `byte` (clamped to the text).
fn floor_boundary(text: &str, byte: usize) -> usize {
    let mut b = byte.min(text.len());
    while b > 0 && !text.is_char_boundary(b) {
        b -= 1;
    }
    b
}

/// The smallest char boundary of `text` at or after `byte` (clamped to the text).
fn ceil_boundary(text: &str, byte: usize) -> usize {
    let mut b = byte.min(text.len());
    while b < text.len() && !text.is_char_boundary(b) {
        b += 1;
    }
    b
}

/// Where a diagnostic points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file's path, as the user gave it.
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in chars.
    pub column: usize,
    /// The text of the line, without its line terminator: the whole line, or for a line
    /// longer than [`MAX_SHOWN_CHARS`] the excerpt around the caret.
    pub line_text: String,
    /// The 1-based column of the line where `line_text` starts (1: from the line's start).
    pub line_text_from: usize,
    /// Whether the line goes on after `line_text` (an excerpt that ends early).
    pub line_continues: bool,
    /// How many carets to draw, in chars: at least 1, limited to the rest of the line.
    pub width: usize,
}

/// One error: a message, where it points, a label after the carets, notes and help lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The headline, e.g. "unknown state kind `paged_kvv`".
    pub message: String,
    /// Where the error points; `None` when there is no file position (e.g. a file that cannot
    /// be read, see [`Diagnostic::in_file`]).
    pub location: Option<Location>,
    /// Text after the carets; may be empty.
    pub label: String,
    /// Rendered as "= note: ...".
    pub notes: Vec<String>,
    /// Rendered as "= help: ...".
    pub help: Vec<String>,
    /// A file named without a position, rendered as "--> path" (set by
    /// [`Diagnostic::in_file`], cleared by [`Diagnostic::at`]); ignored when `location` is
    /// `Some`.
    pub file: Option<String>,
}

impl Diagnostic {
    /// An error with `message` and nothing else.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            location: None,
            label: String::new(),
            notes: Vec::new(),
            help: Vec::new(),
            file: None,
        }
    }

    /// Points at a byte span of `source` (line/column of `span.start`; width = chars of the span
    /// on that line, at least 1). The span is clamped to the text and snapped to char
    /// boundaries; a reversed span points at its start.
    #[must_use]
    pub fn at(mut self, source: &Source, span: Range<usize>) -> Self {
        let text = source.text.as_str();
        let start = floor_boundary(text, span.start);
        let end = ceil_boundary(text, span.end).max(start);
        let (line, column) = source.line_col(start);
        let bounds = source.line_bounds(start);
        let start = start.min(bounds.end);
        let end_on_line = end.min(bounds.end).max(start);
        let width = source.chars_between(start, end_on_line).max(1);
        let excerpt = excerpt(source, bounds, start);
        self.location = Some(Location {
            path: source.name.clone(),
            line,
            column,
            line_text: text.get(excerpt.bytes.clone()).unwrap_or("").to_owned(),
            line_text_from: excerpt.chars_before + 1,
            line_continues: excerpt.bytes.end < excerpt.line_end,
            width,
        });
        self.file = None;
        self
    }

    /// Points at a file with no position (path only), e.g. a missing file: "--> path".
    /// Replaces any location set before.
    #[must_use]
    pub fn in_file(mut self, path: impl Into<String>) -> Self {
        self.location = None;
        self.file = Some(path.into());
        self
    }

    /// Sets the text drawn after the carets. Without a position there are no carets, and a
    /// non-empty label is rendered as the first note instead.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Adds a "= note: ..." line.
    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Adds a "= help: ..." line.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Adds "valid `what`: `a`, `b`, `c`" (what would be valid, with `what` e.g. "state kinds")
    /// as a help line, and "did you mean `x`?" as another help line when a near spelling of
    /// `found` exists (see [`did_you_mean`]). With no candidates the first line reads
    /// "valid `what`: none".
    #[must_use]
    pub fn expected_one_of(self, what: &str, found: &str, candidates: &[&str]) -> Self {
        let valid = if candidates.is_empty() {
            "none".to_owned()
        } else {
            candidates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let this = self.help(format!("valid {what}: {valid}"));
        match did_you_mean(found, candidates) {
            Some(near) => this.help(format!("did you mean `{near}`?")),
            None => this,
        }
    }

    /// The rendered text, no trailing newline, no ANSI colours.
    #[must_use]
    pub fn render(&self) -> String {
        let mut lines = vec![format!("error: {}", escaped(&self.message))];
        // The gutter is as wide as the line number; without a line number it is one column.
        let gutter = self.location.as_ref().map_or(1, |l| digits(l.line));
        let pad = " ".repeat(gutter);
        let mut notes: Vec<(&str, &str)> = Vec::new();
        match (&self.location, &self.file) {
            (Some(loc), _) => {
                lines.push(format!(
                    "{pad}--> {}:{}:{}",
                    escaped(&loc.path),
                    loc.line,
                    loc.column
                ));
                lines.push(format!("{pad} |"));
                let cut_before = loc.line_text_from > 1;
                let mut shown = drawn_line(&loc.line_text);
                if cut_before {
                    shown.insert_str(0, ELLIPSIS);
                }
                if loc.line_continues {
                    shown.push_str(ELLIPSIS);
                }
                if shown.is_empty() {
                    lines.push(format!("{} |", loc.line));
                } else {
                    lines.push(format!("{} | {shown}", loc.line));
                }
                let (offset, carets) = caret_extent(loc);
                let offset = offset + if cut_before { ELLIPSIS.len() } else { 0 };
                let mut caret_line =
                    format!("{pad} | {}{}", " ".repeat(offset), "^".repeat(carets));
                if !self.label.is_empty() {
                    caret_line.push(' ');
                    caret_line.push_str(&escaped(&self.label));
                }
                lines.push(caret_line);
            }
            (None, Some(path)) => {
                lines.push(format!("{pad}--> {}", escaped(path)));
                if !self.label.is_empty() {
                    notes.push(("note", &self.label));
                }
            }
            (None, None) => {
                if !self.label.is_empty() {
                    notes.push(("note", &self.label));
                }
            }
        }
        notes.extend(self.notes.iter().map(|n| ("note", n.as_str())));
        notes.extend(self.help.iter().map(|h| ("help", h.as_str())));
        if !notes.is_empty() && (self.location.is_some() || self.file.is_some()) {
            lines.push(format!("{pad} |"));
        }
        for (kind, text) in notes {
            // Continuation lines of a multi-line note line up under its first line.
            let indent = " ".repeat(gutter + 1 + "= ".len() + kind.len() + ": ".len());
            let mut parts = text.split('\n').map(escaped);
            let first = parts.next().unwrap_or_default();
            lines.push(format!("{pad} = {kind}: {first}"));
            for rest in parts {
                lines.push(format!("{indent}{rest}").trim_end().to_owned());
            }
        }
        lines.join("\n")
    }
}

/// What stands for the part of a long line an excerpt leaves out.
const ELLIPSIS: &str = "...";

/// The number of decimal digits of `n` (1 for 0).
fn digits(mut n: usize) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// The escape a char of user text is drawn as, `\u{1b}`: for a control character (C0, DEL and
/// C1: a NUL, an ESC that starts a terminal sequence, a bell) and a bidirectional control
/// (which reorders what a terminal shows); `None` for any other char, drawn as itself.
fn escape(c: char) -> Option<std::char::EscapeUnicode> {
    let bidi = matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    );
    (c.is_control() || bidi).then(|| c.escape_unicode())
}

/// `text` as a diagnostic draws it: each char [`escape`] escapes as its escape, a newline
/// included (a line break in a message, a path or a label is the text's, not the renderer's).
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match escape(c) {
            Some(escape) => out.extend(escape),
            None => out.push(c),
        }
    }
    out
}

/// How a char of a source line is drawn: a tab as four spaces, a lone `\r` (not a line
/// terminator there, but a terminal would return the cursor on it) as the one-column `␍`, any
/// other char as [`escaped`] draws it.
fn drawn(c: char, out: &mut String) {
    match (c, escape(c)) {
        ('\t', _) => out.push_str("    "),
        ('\r', _) => out.push('\u{240d}'),
        (_, Some(escape)) => out.extend(escape),
        (c, None) => out.push(c),
    }
}

/// How many columns [`drawn`] draws `c` in.
fn drawn_width(c: char) -> usize {
    match (c, escape(c)) {
        ('\t', _) => 4,
        ('\r', _) | (_, None) => 1,
        (_, Some(escape)) => escape.count(),
    }
}

/// A source line as drawn, char by char ([`drawn`]).
fn drawn_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        drawn(c, &mut out);
    }
    out
}

/// Where the carets of `loc` start (in drawn columns after the gutter) and how many there are.
/// A hand-built location is clamped like one made by [`Diagnostic::at`]: the carets start at
/// most one past the end of the line and cover at most the rest of it (at least one caret).
fn caret_extent(loc: &Location) -> (usize, usize) {
    let line_chars = loc.line_text.chars().count();
    let before = loc
        .column
        .saturating_sub(loc.line_text_from.max(1))
        .min(line_chars);
    let width = loc.width.clamp(1, (line_chars - before).max(1));
    let mut chars = loc.line_text.chars();
    let offset: usize = chars.by_ref().take(before).map(drawn_width).sum();
    let carets: usize = chars.take(width).map(drawn_width).sum();
    (offset, carets.max(1))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostic {}

/// Every error of one or more files, in the order found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// No errors yet.
    #[must_use]
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// Appends one error.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    /// Whether there are no errors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many errors there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The errors, in the order found.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// `Ok(value)` when there are no errors.
    ///
    /// # Errors
    ///
    /// `Err(self)` when there is at least one error.
    pub fn into_result<T>(self, value: T) -> Result<T, Diagnostics> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }

    /// Each error rendered, separated by a blank line, then a final line
    /// "error: aborting due to N previous errors" ("... due to 1 previous error" for one).
    /// Empty when there are no errors. No trailing newline.
    #[must_use]
    pub fn render(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let mut parts: Vec<String> = self.0.iter().map(Diagnostic::render).collect();
        parts.push(match self.0.len() {
            1 => "error: aborting due to 1 previous error".to_owned(),
            n => format!("error: aborting due to {n} previous errors"),
        });
        parts.join("\n\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(diagnostic: Diagnostic) -> Self {
        Self(vec![diagnostic])
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The nearest candidate within an edit-distance budget that scales with the word's length.
///
/// The budget is `max(1, chars / 3)` of `found`; the distance is the Damerau-Levenshtein
/// distance of the lower-cased words, so a case-only difference is a distance-0 suggestion.
/// Ties go to the first candidate. An exact match among the candidates means `found` is valid,
/// so there is no suggestion (`None`); an empty `found` and empty candidates never match.
#[must_use]
pub fn did_you_mean<'a>(found: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if found.is_empty() || candidates.contains(&found) {
        return None;
    }
    let budget = (found.chars().count() / 3).max(1);
    let found_lower = found.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for &candidate in candidates {
        if candidate.is_empty() {
            continue;
        }
        let distance = strsim::damerau_levenshtein(&found_lower, &candidate.to_lowercase());
        if distance <= budget && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests;
