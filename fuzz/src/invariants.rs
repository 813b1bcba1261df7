//! The invariants every execution checks, each returning the violations it finds as text:
//! errors located inside the files read, a dynamic plan's layout aligned and disjoint, a
//! shape's syntax error inside its text; and for the CLI targets, a command's exit against
//! its command line ([`outcome`]), rendered locations inside the file named, `fit --json` and
//! `plan --json` read back and checked, the SVG map well-formed XML, a Builder's lines to
//! cargo, no temporary file left by a write.
//!
//! Invariants (of this module): a check never panics on what it checks, and an empty list
//! means the property holds.

use metrale_circuit::Space;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics, Source};
use metrale_circuit::load::shape::ShapeSyntaxError;
use metrale_cli::{Outcome, Status};

use crate::command::Verdict;

/// Every diagnostic points inside a file that was read: a location whose path names one of
/// `files`, with its line inside that file's text and its column inside the line (or one past
/// its end, for an end-of-line caret), its `line_text` that very line; or an explicit
/// file-level error naming one of `files` or `input` (the file given to read) whose message is
/// not about the file's content (TOML syntax, encoding), which has a place; or an error about a
/// value the command line gave, noted "given by `--<option>`". In `ordered`
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
            // A value the command line gave (`import --name`, `--hf`) has no place in a file:
            // its error names the option instead.
            (None, None) if d.notes.iter().any(|n| n.starts_with("given by `--")) => {}
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

/// The first line of each error a command printed on stderr (at most 200 chars each), for
/// the run's distinct-error counts.
#[must_use]
pub fn error_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("error") && !l.starts_with("error: aborting due to"))
        .map(|l| l.chars().take(200).collect())
        .collect()
}

/// A command's exit against its command line: a well-formed line is never a usage error and a
/// malformed one always is; bad input says why on stderr, with every control character
/// escaped (the only raw one a line break), and prints nothing on stdout.
#[must_use]
pub fn outcome(outcome: &Outcome, verdict: &Verdict) -> Vec<String> {
    let mut violations = Vec::new();
    let first = first_line(outcome.stderr.trim_start());
    match (outcome.status, verdict) {
        (Status::Usage, Verdict::WellFormed) => violations.push(format!(
            "a usage error on a well-formed command line: {first}"
        )),
        (Status::Ok | Status::BadInput, Verdict::Malformed(why)) => violations.push(format!(
            "a malformed command line ({why}) exits {}, not as a usage error",
            outcome.status.code()
        )),
        _ => {}
    }
    if outcome.status == Status::BadInput {
        if outcome.stderr.trim().is_empty() {
            violations.push("bad input with nothing on stderr".to_owned());
        }
        if !outcome.stdout.is_empty() {
            violations.push("bad input with text on stdout".to_owned());
        }
        if let Some(c) = outcome
            .stderr
            .chars()
            .find(|&c| c.is_control() && c != '\n')
        {
            violations.push(format!(
                "a diagnostic prints the control character {} raw: {first}",
                c.escape_unicode()
            ));
        }
    }
    violations
}

/// Every `--> path:line:col` of rendered diagnostics that names `path` (whose text is `text`)
/// points inside it: its line in the file, its column in the line or one past its end.
#[must_use]
pub fn rendered_locations(stderr: &str, path: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut violations = Vec::new();
    for arrow in stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
    {
        let Some(place) = arrow.strip_prefix(path).and_then(|p| p.strip_prefix(':')) else {
            continue;
        };
        let mut numbers = place.split(':').map(str::parse::<usize>);
        let (Some(Ok(line)), Some(Ok(column))) = (numbers.next(), numbers.next()) else {
            violations.push(format!("a location without line:col: `{arrow}`"));
            continue;
        };
        let Some(shown) = line.checked_sub(1).and_then(|i| lines.get(i)) else {
            violations.push(format!(
                "line {line} outside `{path}` ({} lines)",
                lines.len()
            ));
            continue;
        };
        let shown = if line < lines.len() {
            shown.strip_suffix('\r').unwrap_or(shown)
        } else {
            shown
        };
        if column == 0 || column > shown.chars().count() + 1 {
            violations.push(format!("column {column} outside line {line} of `{path}`"));
        }
    }
    violations
}

/// A JSON value's unsigned integer at `key`, or why it is missing.
fn number(value: &serde_json::Value, key: &str) -> Result<u64, String> {
    value
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| format!("no unsigned integer `{key}`"))
}

/// `fit --json`: the documented fields; a value of at least 1 whose device bytes fit the
/// budget and whose next value's do not; the marginal bytes their difference; with `--gpu` the
/// budget what the GPU leaves; over ranks, a rank inside them. Returns the violations and the
/// value and device bytes, to compare with the table.
#[must_use]
pub fn fit_json(stdout: &str, args: &[String]) -> (Vec<String>, Option<(u64, u64)>) {
    let value: serde_json::Value = match serde_json::from_str(stdout) {
        Ok(value) => value,
        Err(error) => return (vec![format!("`fit --json` is not JSON: {error}")], None),
    };
    let mut violations = Vec::new();
    let mut check = |result: Result<(), String>| {
        if let Err(problem) = result {
            violations.push(format!("`fit --json`: {problem}"));
        }
    };
    let fields = (|| {
        for key in [
            "for",
            "value",
            "budget",
            "device_bytes",
            "next_device_bytes",
            "marginal_bytes",
            "marginal_block_bytes",
            "policy",
        ] {
            if value.get(key).is_none() {
                return Err(format!("no `{key}`"));
            }
        }
        Ok((
            number(&value, "value")?,
            number(&value, "budget")?,
            number(&value, "device_bytes")?,
        ))
    })();
    let (found, budget, device) = match fields {
        Ok(fields) => fields,
        Err(problem) => {
            check(Err(problem));
            return (violations, None);
        }
    };
    let free = crate::command::option(args, "--for").unwrap_or("");
    check(if value["for"] == free {
        Ok(())
    } else {
        Err(format!("`for` is {}, not `{free}`", value["for"]))
    });
    check(if found >= 1 {
        Ok(())
    } else {
        Err("an answer of 0 (which serves nothing) exits 0".to_owned())
    });
    check(if device <= budget {
        Ok(())
    } else {
        Err(format!("{device} device bytes over the budget of {budget}"))
    });
    let next = value["next_device_bytes"].as_u64();
    check(match next {
        Some(next) if next <= budget => Err(format!(
            "one more ({next} B) fits the budget of {budget} B too"
        )),
        _ => Ok(()),
    });
    check(match (next, value["marginal_bytes"].as_u64()) {
        (Some(next), Some(marginal)) if next.checked_sub(device) != Some(marginal) => Err(format!(
            "`marginal_bytes` {marginal} is not {next} - {device}"
        )),
        (None, Some(marginal)) => Err(format!(
            "`marginal_bytes` {marginal} without `next_device_bytes`"
        )),
        _ => Ok(()),
    });
    check(match value["policy"].as_str() {
        Some("arenas") => Ok(()),
        Some("vllm") => [
            "block_tokens",
            "page_bytes",
            "pool_pages",
            "admitted",
            "marginal_page_bytes",
            "marginal_request_bytes",
        ]
        .into_iter()
        .find(|k| value.get(*k).is_none())
        .map_or(Ok(()), |k| Err(format!("policy vllm without `{k}`")))
        .and_then(|()| {
            // One more page of the pool is one more page in each of its slots, nothing else.
            let (marginal, page) = (
                value["marginal_bytes"].as_u64(),
                value["marginal_page_bytes"].as_u64(),
            );
            match (free, marginal, page) {
                ("kv-blocks", Some(m), Some(p)) if m != p => Err(format!(
                    "one more page costs {m} B, but a page of every slot is {p} B"
                )),
                _ => Ok(()),
            }
        }),
        other => Err(format!("policy {other:?}")),
    });
    check(fit_json_budget(&value, budget, args));
    (violations, Some((found, device)))
}

/// `fit --json`'s budget with `--gpu` (the usable bytes less the weights a GPU holds and the
/// reserve) and its rank over several (inside the ranks).
fn fit_json_budget(value: &serde_json::Value, budget: u64, args: &[String]) -> Result<(), String> {
    if crate::command::option(args, "--gpu").is_some() {
        let usable = number(value, "usable_bytes")?;
        let weights = number(value, "weights_per_gpu")?;
        let reserve = number(value, "reserve")?;
        let taken = u128::from(budget) + u128::from(weights) + u128::from(reserve);
        if taken != u128::from(usable) {
            return Err(format!(
                "budget {budget} + weights {weights} + reserve {reserve} is not the usable {usable}"
            ));
        }
    }
    if value.get("tp").is_some() {
        let (tp, pp) = (number(value, "tp")?, number(value, "pp")?);
        let (tp_rank, pp_rank) = (number(value, "tp_rank")?, number(value, "pp_rank")?);
        if tp_rank >= tp || pp_rank >= pp {
            return Err(format!("rank ({tp_rank}, {pp_rank}) outside {tp} x {pp}"));
        }
    }
    Ok(())
}

/// The value and the device bytes `fit`'s table prints (the rows named `free` and `device
/// bytes at it`).
#[must_use]
pub fn fit_table(stdout: &str, free: &str) -> Option<(u64, u64)> {
    let row = |key: &str| {
        stdout.lines().find_map(|l| {
            l.strip_prefix(key)
                .filter(|rest| rest.starts_with("  "))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok())
        })
    };
    Some((row(free)?, row("device bytes at it")?))
}

/// `plan --json`: one plan's terms inside their arenas and aligned, their bytes the totals',
/// a rank's place; or every rank's bytes, one entry a rank, their sum the total, the pipeline
/// ranks' layers contiguous from 0 and disjoint.
#[must_use]
pub fn plan_json(stdout: &str) -> Vec<String> {
    let value: serde_json::Value = match serde_json::from_str(stdout) {
        Ok(value) => value,
        Err(error) => return vec![format!("`plan --json` is not JSON: {error}")],
    };
    let checked = if value.get("ranks").is_some() {
        every_rank_json(&value)
    } else {
        one_plan_json(&value)
    };
    checked
        .err()
        .map(|problem| format!("`plan --json`: {problem}"))
        .into_iter()
        .collect()
}

/// [`plan_json`] of one plan.
fn one_plan_json(value: &serde_json::Value) -> Result<(), String> {
    let align = number(value, "align")?;
    let arena = [
        ("device", number(value, "device_bytes")?),
        ("host", number(value, "host_bytes")?),
    ];
    let terms = value["terms"].as_array().ok_or("no `terms`")?;
    let mut sums = [(0u128, 0u64); 2];
    for term in terms {
        let (offset, bytes) = (number(term, "offset")?, number(term, "bytes")?);
        let state = term["state"].as_str().unwrap_or("?");
        let space = arena
            .iter()
            .position(|(name, _)| term["space"] == *name)
            .ok_or_else(|| format!("`{state}` in space {}", term["space"]))?;
        if u128::from(offset) + u128::from(bytes) > u128::from(arena[space].1) {
            return Err(format!(
                "`{state}` at {offset} + {bytes} B past its arena of {} B",
                arena[space].1
            ));
        }
        if align != 0 && offset % align != 0 {
            return Err(format!("`{state}` at {offset}, not aligned to {align}"));
        }
        sums[space].0 += u128::from(bytes);
        sums[space].1 += 1;
    }
    for (space, (bytes, count)) in arena.iter().zip(sums) {
        let per = value["totals"]["lifetime"][space.0]
            .as_object()
            .ok_or_else(|| format!("no `totals.lifetime.{}`", space.0))?;
        let (mut total, mut terms) = (0u128, 0u64);
        for lifetime in per.values() {
            total += u128::from(number(lifetime, "bytes")?);
            terms += number(lifetime, "terms")?;
        }
        if (total, terms) != (bytes, count) {
            return Err(format!(
                "{} totals {terms} terms, {total} B; its terms {count}, {bytes} B",
                space.0
            ));
        }
    }
    if value.get("tp").is_some() {
        let (tp, pp) = (number(value, "tp")?, number(value, "pp")?);
        let (tp_rank, pp_rank) = (number(value, "tp_rank")?, number(value, "pp_rank")?);
        if tp_rank >= tp || pp_rank >= pp || value["layers"].as_array().is_none() {
            return Err(format!("rank ({tp_rank}, {pp_rank}) of {tp} x {pp}"));
        }
    }
    Ok(())
}

/// [`plan_json`] of every rank's bytes.
fn every_rank_json(value: &serde_json::Value) -> Result<(), String> {
    let (tp, pp) = (number(value, "tp")?, number(value, "pp")?);
    let ranks = value["ranks"].as_array().ok_or("no `ranks`")?;
    if u128::from(tp) * u128::from(pp) != ranks.len() as u128 {
        return Err(format!("{} ranks listed for {tp} x {pp}", ranks.len()));
    }
    let (mut device, mut host) = (0u128, 0u128);
    let mut layers = Vec::new();
    for rank in ranks {
        let (tp_rank, pp_rank) = (number(rank, "tp_rank")?, number(rank, "pp_rank")?);
        if tp_rank >= tp || pp_rank >= pp {
            return Err(format!("rank ({tp_rank}, {pp_rank}) of {tp} x {pp}"));
        }
        device += u128::from(number(rank, "device_bytes")?);
        host += u128::from(number(rank, "host_bytes")?);
        if tp_rank == 0 {
            let held = rank["layers"].as_array().ok_or("a rank without `layers`")?;
            layers.extend(held.iter().filter_map(serde_json::Value::as_u64));
        }
    }
    for (what, sum) in [("device_bytes", device), ("host_bytes", host)] {
        if let Ok(sum) = u64::try_from(sum)
            && number(value, what)? != sum
        {
            return Err(format!("`{what}` is not the ranks' sum {sum}"));
        }
    }
    layers.sort_unstable();
    if layers.iter().enumerate().any(|(i, &l)| l != i as u64) {
        return Err("the pipeline ranks' layers are not 0, 1, ... each once".to_owned());
    }
    Ok(())
}

/// A memory map: well-formed XML whose root is `<svg>`.
#[must_use]
pub fn svg(text: &str) -> Vec<String> {
    match roxmltree::Document::parse(text) {
        Err(error) => vec![format!("the SVG map is not well-formed XML: {error}")],
        Ok(document) if document.root_element().tag_name().name() != "svg" => {
            vec!["the SVG map's root is not <svg>".to_owned()]
        }
        Ok(_) => Vec::new(),
    }
}

/// `plan --json --svg`: the map of a plan whose JSON has a vLLM page pool draws it, its caption
/// stating the JSON's `device_bytes` (C12: the map left the pool out).
#[must_use]
pub fn svg_shows_the_pool(svg: &str, stdout: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(stdout) else {
        return Vec::new();
    };
    let (Some(pool), Some(device)) = (value.get("pool"), value.get("device_bytes")) else {
        return Vec::new();
    };
    let mut violations = Vec::new();
    if !svg.contains("<g class=\"pool\"") {
        violations.push("`plan --svg` draws no page pool for a plan with one".to_owned());
    }
    if !svg.contains(&format!("device total {device} B")) {
        violations.push(format!(
            "`plan --svg` does not state the device total {device} B of `--json`"
        ));
    }
    let slots = pool.get("slots").and_then(serde_json::Value::as_u64);
    let drawn = svg.matches("class=\"pool-slot\"").count() as u64;
    if slots != Some(drawn) {
        violations.push(format!(
            "`plan --svg` draws {drawn} pool slots of {slots:?}"
        ));
    }
    violations
}

/// A build script's output to cargo: every line one `cargo::rerun-if-changed=` instruction.
#[must_use]
pub fn rerun_lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| !l.starts_with("cargo::rerun-if-changed="))
        .take(1)
        .map(|l| {
            format!(
                "the Builder prints a line cargo reads as another instruction: `{}`",
                l.escape_debug()
            )
        })
        .collect()
}

/// No temporary file (`.<name>.<pid>.<n>.tmp`, as writes through a renamed file leave on
/// failure) in `dir`.
#[must_use]
pub fn no_temporaries(dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.starts_with('.')
                && std::path::Path::new(name)
                    .extension()
                    .is_some_and(|e| e == "tmp")
        })
        .take(1)
        .map(|name| format!("a temporary file is left: `{}`", name.escape_debug()))
        .collect()
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

    fn outcome_of(status: Status, stdout: &str, stderr: &str) -> Outcome {
        Outcome {
            status,
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
        }
    }

    #[test]
    fn exits_are_checked_against_the_command_line() {
        let well = Verdict::WellFormed;
        let usage = outcome_of(
            Status::Usage,
            "",
            "error: unexpected argument
",
        );
        assert_eq!(outcome(&usage, &well).len(), 1);
        let malformed = Verdict::Malformed("`--tp 0`".to_owned());
        assert!(outcome(&usage, &malformed).is_empty());
        assert_eq!(
            outcome(&outcome_of(Status::Ok, "x", ""), &malformed).len(),
            1
        );
        // Bad input: silent, with stdout, or with a raw ESC on stderr.
        assert_eq!(
            outcome(&outcome_of(Status::BadInput, "", " \n"), &well).len(),
            1
        );
        assert_eq!(
            outcome(&outcome_of(Status::BadInput, "x", "error: e"), &well).len(),
            1
        );
        let raw = outcome_of(Status::BadInput, "", "error: a\u{1b}[31m");
        assert!(outcome(&raw, &well)[0].contains("control character"));
        let escaped = outcome_of(Status::BadInput, "", "error: a\\u{1b}[31m\n  --> f:1:1");
        assert!(outcome(&escaped, &well).is_empty());
    }

    #[test]
    fn rendered_locations_stay_inside_the_file() {
        let text = "a = 1\nbb = 2\n";
        let good = "error: x\n --> in.toml:2:3\n";
        assert!(rendered_locations(good, "in.toml", text).is_empty());
        assert!(rendered_locations(" --> other.toml:9:9", "in.toml", text).is_empty());
        assert_eq!(
            rendered_locations(" --> in.toml:9:1", "in.toml", text).len(),
            1
        );
        assert_eq!(
            rendered_locations(" --> in.toml:1:9", "in.toml", text).len(),
            1
        );
    }

    #[test]
    fn fit_json_and_its_table_are_read_and_checked() {
        let args: Vec<String> = ["fit", "c.toml", "--for", "kv-blocks", "--budget", "100"]
            .map(str::to_owned)
            .to_vec();
        let json = |value: u64, device: u64, next: &str, marginal: &str| {
            format!(
                r#"{{"for": "kv-blocks", "value": {value}, "budget": 100, "device_bytes": {device},
                "next_device_bytes": {next}, "marginal_bytes": {marginal},
                "marginal_block_bytes": 7, "policy": "arenas"}}"#
            )
        };
        let (good, answer) = fit_json(&json(3, 90, "110", "20"), &args);
        assert!(good.is_empty(), "{good:?}");
        assert_eq!(answer, Some((3, 90)));
        assert_eq!(fit_json(&json(3, 120, "130", "10"), &args).0.len(), 1);
        assert_eq!(fit_json(&json(0, 90, "110", "20"), &args).0.len(), 1);
        assert_eq!(fit_json(&json(3, 90, "100", "10"), &args).0.len(), 1);
        assert_eq!(fit_json(&json(3, 90, "110", "19"), &args).0.len(), 1);
        assert_eq!(fit_json("{", &args).0.len(), 1);
        let table = "circuit             c.toml\nkv-blocks           3\ndevice bytes at it  90 B\n";
        assert_eq!(fit_table(table, "kv-blocks"), Some((3, 90)));
        assert_eq!(fit_table(table, "sequences"), None);
    }

    #[test]
    fn plan_json_checks_terms_totals_and_ranks() {
        let plan = |offset: u64| {
            format!(
                r#"{{"align": 256, "device_bytes": 512, "host_bytes": 0,
                "terms": [{{"state": "a", "space": "device", "offset": {offset}, "bytes": 256}}],
                "totals": {{"lifetime": {{"device": {{"model": {{"terms": 1, "bytes": 256}}}},
                "host": {{"model": {{"terms": 0, "bytes": 0}}}}}}}}}}"#
            )
        };
        assert!(
            plan_json(&plan(256)).is_empty(),
            "{:?}",
            plan_json(&plan(256))
        );
        assert_eq!(plan_json(&plan(512)).len(), 1);
        assert_eq!(plan_json(&plan(128)).len(), 1);
        let ranks = |layers: &str| {
            format!(
                r#"{{"tp": 1, "pp": 2, "device_bytes": 3, "host_bytes": 0, "ranks": [
                {{"tp_rank": 0, "pp_rank": 0, "layers": [0, 1], "device_bytes": 1, "host_bytes": 0}},
                {{"tp_rank": 0, "pp_rank": 1, "layers": {layers}, "device_bytes": 2, "host_bytes": 0}}]}}"#
            )
        };
        assert!(plan_json(&ranks("[2]")).is_empty());
        assert_eq!(plan_json(&ranks("[1, 2]")).len(), 1);
    }

    #[test]
    fn maps_builder_lines_and_temporaries_are_checked() {
        assert!(
            svg("<svg xmlns='http://www.w3.org/2000/svg'><text>a&amp;b</text></svg>").is_empty()
        );
        assert_eq!(svg("<svg><text>a\u{1}b</text></svg>").len(), 1);
        assert_eq!(svg("<svg><text>a&b</text></svg>").len(), 1);
        assert!(rerun_lines(b"cargo::rerun-if-changed=a\ncargo::rerun-if-changed=b\n").is_empty());
        assert_eq!(rerun_lines(b"cargo::rerun-if-changed=a\nb.toml\n").len(), 1);
        let dir = std::env::temp_dir().join(format!("metrale-fuzz-tmp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("m.rs"), "x").expect("file");
        assert!(no_temporaries(&dir).is_empty());
        std::fs::write(dir.join(".m.rs.7.0.tmp"), "x").expect("file");
        assert_eq!(no_temporaries(&dir).len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
