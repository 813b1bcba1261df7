//! What `plan` made ([`Report`]) and how it is printed: a table of terms per space with totals
//! per space and per lifetime ([`table`]), or JSON with exact byte counts ([`json()`]); and
//! [`human_bytes`].
//!
//! Invariants:
//! - Spellings are the `name()` of each vocabulary (`paged_kv`, `blocks`, `model`, `fp8`,
//!   `device`), in both forms; JSON numbers are integers, byte counts exact.
//! - Rows come in plan order within each space; the columns line up across spaces.
//! - Writing to a `String` cannot fail, so the `fmt::Result`s of `write!` are ignored.

use std::fmt::Write as _;

use metrale_circuit::{Lifetime, Space, StatePlan, StateTerm};
use serde_json::json;

/// A plan made, with what it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint sized.
    pub checkpoint: String,
    /// The inputs file, as given, or the name of the built-in default inputs.
    pub inputs: String,
    /// The plan.
    pub plan: StatePlan,
}

/// The column headings of the table.
const HEADINGS: [&str; 8] = [
    "state", "kind", "holding", "lifetime", "dtype", "units", "bytes", "offset",
];

/// Binary units above bytes.
const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `bytes` for a human: `512 B` below 1 KiB, else two decimals of the largest binary unit it
/// reaches (`1.50 MiB`), rounded half up.
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let bytes = u128::from(bytes);
    let mut unit = 0;
    let mut scale: u128 = 1024;
    while unit + 1 < UNITS.len() && bytes >= scale * 1024 {
        scale *= 1024;
        unit += 1;
    }
    let mut hundredths = (bytes * 100 + scale / 2) / scale;
    // 1023.999 KiB rounds to 1024.00 KiB: say 1.00 MiB instead.
    if hundredths >= 1024 * 100 && unit + 1 < UNITS.len() {
        scale *= 1024;
        unit += 1;
        hundredths = (bytes * 100 + scale / 2) / scale;
    }
    format!(
        "{}.{:02} {}",
        hundredths / 100,
        hundredths % 100,
        UNITS[unit]
    )
}

/// The cells of one term's row.
fn row(term: &StateTerm) -> [String; 8] {
    [
        term.state.clone(),
        term.kind.name().to_owned(),
        term.holding.name().to_owned(),
        term.lifetime.name().to_owned(),
        term.dtype.name().to_owned(),
        term.units.to_string(),
        human_bytes(term.bytes),
        term.offset.to_string(),
    ]
}

/// Appends `cells` padded to `widths`: text columns left-aligned, numbers right-aligned.
fn push_row(out: &mut String, cells: &[String; 8], widths: &[usize; 8]) {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        if i >= 5 {
            let _ = write!(line, "{cell:>width$}");
        } else {
            let _ = write!(line, "{cell:<width$}");
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// The plan as a table: a header, the terms of each space, then the totals.
pub fn table(report: &Report) -> String {
    let plan = &report.plan;
    let rows: Vec<(Space, [String; 8])> = plan.terms().iter().map(|t| (t.space, row(t))).collect();
    let mut widths = HEADINGS.map(str::len);
    for (_, cells) in &rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let headings = HEADINGS.map(str::to_owned);
    let mut out = format!(
        "circuit     {}\ncheckpoint  {}\ninputs      {}\nalign       {} B\n",
        report.circuit,
        report.checkpoint,
        report.inputs,
        plan.align()
    );
    for space in Space::ALL {
        let count = rows.iter().filter(|(s, _)| *s == space).count();
        if count == 0 {
            continue;
        }
        let terms = if count == 1 { "term" } else { "terms" };
        let _ = writeln!(out, "\n{} arena: {count} {terms}", space.name());
        push_row(&mut out, &headings, &widths);
        for (_, cells) in rows.iter().filter(|(s, _)| *s == space) {
            push_row(&mut out, cells, &widths);
        }
    }
    out.push_str(&totals(report));
    out
}

/// The totals: arena bytes per space, then term bytes per lifetime and space.
fn totals(report: &Report) -> String {
    let plan = &report.plan;
    let mut out = String::from("\narena bytes per space (alignment padding included)\n");
    let human = |bytes: u64| human_bytes(bytes);
    let arenas: Vec<[String; 3]> = Space::ALL
        .iter()
        .map(|&s| {
            let bytes = plan.arena_bytes(s);
            [s.name().to_owned(), human(bytes), format!("{bytes} B")]
        })
        .collect();
    push_cells(&mut out, &arenas);
    out.push_str("\nterm bytes per lifetime (padding excluded)\n");
    let mut lifetimes = vec![[String::from("lifetime"), "device".into(), "host".into()]];
    for lifetime in Lifetime::LAYOUT_ORDER {
        lifetimes.push([
            lifetime.name().to_owned(),
            human(plan.lifetime_bytes(Space::Device, lifetime)),
            human(plan.lifetime_bytes(Space::Host, lifetime)),
        ]);
    }
    push_cells(&mut out, &lifetimes);
    out
}

/// Appends rows of three cells, indented: the first left-aligned, the others right-aligned.
fn push_cells(out: &mut String, rows: &[[String; 3]]) {
    let mut widths = [0; 3];
    for cells in rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for [name, a, b] in rows {
        let [w0, w1, w2] = widths;
        let _ = writeln!(out, "  {name:<w0$}  {a:>w1$}  {b:>w2$}");
    }
}

/// The plan as JSON: `circuit`, `checkpoint`, `align`, `terms` (each with `state`, `kind`,
/// `holding`, `lifetime`, `dtype`, `units`, `bytes`, `offset`, `space`), `device_bytes`,
/// `host_bytes`. Pretty-printed, with a final newline.
pub fn json(report: &Report) -> String {
    let plan = &report.plan;
    let terms: Vec<serde_json::Value> = plan
        .terms()
        .iter()
        .map(|t| {
            json!({
                "state": t.state,
                "kind": t.kind.name(),
                "holding": t.holding.name(),
                "lifetime": t.lifetime.name(),
                "dtype": t.dtype.name(),
                "units": t.units,
                "bytes": t.bytes,
                "offset": t.offset,
                "space": t.space.name(),
            })
        })
        .collect();
    let value = json!({
        "circuit": report.circuit,
        "checkpoint": report.checkpoint,
        "align": plan.align(),
        "terms": terms,
        "device_bytes": plan.device_bytes(),
        "host_bytes": plan.host_bytes(),
    });
    format!("{value:#}\n")
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_bytes_by_hand() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(3 << 19), "1.50 MiB");
        // 1048575 B = 1023.999 KiB, rounded: 1.00 MiB, not 1024.00 KiB.
        assert_eq!(human_bytes((1 << 20) - 1), "1.00 MiB");
        // 28311552 = 27 MiB exactly.
        assert_eq!(human_bytes(28_311_552), "27.00 MiB");
        assert_eq!(human_bytes(u64::MAX), "16.00 EiB");
    }
}
