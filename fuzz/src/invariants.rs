//! The invariants every execution checks, each returning the violations it finds as text:
//! errors located inside the files read, a dynamic plan's layout aligned and disjoint, a
//! shape's syntax error inside its text.
//!
//! Invariants (of this module): a check never panics on what it checks, and an empty list
//! means the property holds.

use metrale_circuit::Space;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics, Source};
use metrale_circuit::load::shape::ShapeSyntaxError;

/// Every diagnostic points inside a file that was read: a location whose path names one of
/// `files`, with its line inside that file's text and its column inside the line (or one past
/// its end, for an end-of-line caret), its `line_text` that very line; or an explicit
/// file-level error naming one of `files` or `input` (the file given to read) whose message is
/// not about the file's content (TOML syntax, encoding), which has a place. In `ordered`
/// mode the located ones also come in file order, then position.
#[must_use]
pub fn located(
    diagnostics: &Diagnostics,
    files: &[Source],
    input: &str,
    ordered: bool,
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut last: Option<(usize, usize, usize)> = None;
    for d in diagnostics {
        let headline = first_line(&d.message);
        if d.message.is_empty() {
            violations.push("a diagnostic with an empty message".to_owned());
        }
        match (&d.location, &d.file) {
            (Some(loc), _) => {
                let Some(index) = files.iter().position(|f| f.name() == loc.path) else {
                    violations.push(format!(
                        "located in `{}`, a file that was not read: {headline}",
                        loc.path
                    ));
                    continue;
                };
                if let Some(problem) = place_problem(d, &files[index]) {
                    let line = files[index]
                        .text()
                        .split('\n')
                        .nth(loc.line.saturating_sub(1));
                    let cr = if line.is_some_and(|l| l.contains('\r')) {
                        " (a `\\r` in the line)"
                    } else {
                        ""
                    };
                    violations.push(format!("{problem}{cr}: {headline}"));
                }
                let here = (index, loc.line, loc.column);
                if ordered && last.is_some_and(|before| before > here) {
                    violations.push(format!(
                        "out of order: `{}`:{}:{} after an error further on: {headline}",
                        loc.path, loc.line, loc.column
                    ));
                }
                last = Some(here);
            }
            (None, Some(file)) => {
                // A file-level error is for a file that cannot be read at all; what is wrong
                // inside a file (its TOML, its encoding) has a place in it.
                let lower = d.message.to_lowercase();
                if lower.contains("invalid toml") || lower.contains("utf-8") {
                    violations.push(format!(
                        "an unlocated error (file-level only, in `{file}`): {headline}"
                    ));
                } else if file != input && !files.iter().any(|f| f.name() == file) {
                    violations.push(format!(
                        "names `{file}`, a file that was not read: {headline}"
                    ));
                }
            }
            (None, None) => violations.push(format!("an unlocated error: {headline}")),
        }
    }
    violations
}

/// What is wrong with a located diagnostic's place in `source`, if anything.
fn place_problem(d: &Diagnostic, source: &Source) -> Option<String> {
    let loc = d.location.as_ref()?;
    let lines: Vec<&str> = source.text().split('\n').collect();
    if loc.line == 0 || loc.line > lines.len() {
        return Some(format!(
            "line {} outside `{}` ({} lines)",
            loc.line,
            loc.path,
            lines.len()
        ));
    }
    // A line's terminator is `\n` or `\r\n`; a lone `\r` (at the end of the file) is text.
    let line = lines[loc.line - 1];
    let line = if loc.line < lines.len() {
        line.strip_suffix('\r').unwrap_or(line)
    } else {
        line
    };
    let chars = line.chars().count();
    if loc.column == 0 || loc.column > chars + 1 {
        return Some(format!(
            "column {} outside line {} of `{}` ({chars} chars)",
            loc.column, loc.line, loc.path
        ));
    }
    // The whole line, or (a long line) the excerpt of it from column `line_text_from`.
    let shown = loc.line_text.chars().count();
    let excerpt: String = line
        .chars()
        .skip(loc.line_text_from.saturating_sub(1))
        .take(shown)
        .collect();
    let ends_early = loc.line_text_from.saturating_sub(1) + shown < chars;
    let cut = loc.line_text_from > 1 || ends_early;
    if loc.line_text_from == 0
        || loc.line_text != excerpt
        || ends_early != loc.line_continues
        || (cut && shown > metrale_circuit::load::diag::MAX_SHOWN_CHARS)
    {
        return Some(format!(
            "line_text of `{}`:{} is not that line (or its excerpt)",
            loc.path, loc.line
        ));
    }
    if loc.column < loc.line_text_from || loc.column > loc.line_text_from + shown {
        return Some(format!(
            "column {} of `{}`:{} outside its excerpt",
            loc.column, loc.path, loc.line
        ));
    }
    if loc.width == 0 {
        return Some(format!("zero caret width at `{}`:{}", loc.path, loc.line));
    }
    None
}

/// A shape syntax error's span lies within the text, or is the single position past its end.
#[must_use]
pub fn shape_error_inside(error: &ShapeSyntaxError, text: &str) -> Vec<String> {
    let inside = error.len >= 1
        && (error.offset + error.len <= text.len()
            || (error.offset == text.len() && error.len == 1));
    if inside {
        Vec::new()
    } else {
        vec![format!(
            "shape error span {}+{} outside a text of {} bytes: {}",
            error.offset,
            error.len,
            text.len(),
            first_line(&error.message)
        )]
    }
}

/// A dynamic plan's layout: every offset a multiple of the alignment, the terms of one arena
/// pairwise disjoint and inside it, each arena a multiple of the alignment, and bytes at
/// least units times unit bytes for dense terms.
#[must_use]
pub fn layout(plan: &DynamicPlan, what: &str) -> Vec<String> {
    let mut violations = Vec::new();
    let align = plan.align();
    if !align.is_power_of_two() {
        violations.push(format!("{what}: alignment {align} is not a power of two"));
        return violations;
    }
    for space in Space::ALL {
        let total = plan.arena_bytes(space);
        if !total.is_multiple_of(align) {
            violations.push(format!(
                "{what}: {} arena of {total} B is not a multiple of {align}",
                space.name()
            ));
        }
        let mut terms: Vec<_> = plan.terms().iter().filter(|t| t.space == space).collect();
        terms.sort_by_key(|t| (t.offset, t.bytes));
        let mut end_before: Option<(u64, &str)> = None;
        for term in terms {
            if !term.offset.is_multiple_of(align) {
                violations.push(format!(
                    "{what}: `{}` {:?} at offset {} is not aligned to {align}",
                    term.state, term.holding, term.offset
                ));
            }
            let Some(end) = term.offset.checked_add(term.bytes) else {
                violations.push(format!(
                    "{what}: `{}` {:?} ends past u64",
                    term.state, term.holding
                ));
                continue;
            };
            if end > total {
                violations.push(format!(
                    "{what}: `{}` {:?} ends at {end}, past its arena of {total} B",
                    term.state, term.holding
                ));
            }
            if term.bytes == 0 {
                continue;
            }
            if let Some((before, state)) = end_before
                && term.offset < before
            {
                violations.push(format!(
                    "{what}: `{}` {:?} at {} overlaps `{state}`, which ends at {before}",
                    term.state, term.holding, term.offset
                ));
            }
            end_before = Some((end, &term.state));
        }
    }
    violations
}

/// The first line of a message.
#[must_use]
pub fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlocated_error_and_a_line_past_the_end_are_violations() {
        let source = Source::new("c.toml", "a = 1\nb = 2\n");
        let good = Diagnostic::error("x").at(&source, 6..7);
        let file_level = Diagnostic::error("y").in_file("c.toml");
        let ok = Diagnostics(vec![good.clone(), file_level]);
        assert!(located(&ok, std::slice::from_ref(&source), "c.toml", true).is_empty());
        let mut far = good.clone();
        far.location.as_mut().expect("located").line = 9;
        let bad = Diagnostics(vec![Diagnostic::error("z"), far, good]);
        let found = located(&bad, &[source], "c.toml", true);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].starts_with("an unlocated error"));
        assert!(found[1].starts_with("line 9 outside"));
        // Line 2 after the (bad) line 9: out of order too.
        assert!(found[2].starts_with("out of order"));
    }
}
