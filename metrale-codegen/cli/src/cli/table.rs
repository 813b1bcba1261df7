//! The text `plan` prints: of one plan ([`plan`]), a header, a summary (arena bytes per
//! space, term bytes per lifetime, kind, layer kind and layer), then the terms of each space,
//! in the order of [`Sort`] and, with a [`Group`], in sections with a subtotal each, then the
//! KV sides that read another layer's KV (each with its owner, when the plan has any); of every
//! rank ([`every_rank`]), a header and each rank's device and host bytes, then their sum. And
//! the text `fit` prints ([`fit`]): one `name  value` line per figure.
//!
//! Invariants:
//! - Spellings are the `name()` of each vocabulary (`paged_kv`, `blocks`, `model`, `fp8`,
//!   `device`); bytes are [`human_bytes`], and the arena sizes also exact.
//! - The term table is split by space first (an offset means something only in its arena);
//!   sections and the sort apply inside each space, and every term is listed once, empty ones
//!   included. Sorting by offset keeps plan order among equal offsets (an empty term sits at
//!   the offset of the region after it).
//! - The columns of the term table line up across spaces and sections; the summary rows are
//!   only for kinds, layer kinds and layers, never per term.
//! - Writing to a `String` cannot fail, so the `fmt::Result`s of `write!` are ignored.

use std::fmt::Write as _;

use clap::ValueEnum;
use metrale_circuit::dynamic::{Position, StateTerm};
use metrale_circuit::serving::pages::{Family, PageCosts, PagePool, PoolCapacity};
use metrale_circuit::{Lifetime, Space};

use super::report::{
    EveryRankReport, FitReport, GpuReport, ProfileReport, Report, Total, human_bytes,
};

/// The order of the terms in the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Sort {
    /// By space, then offset: each arena as it lies in memory.
    #[default]
    Offset,
    /// In plan order: declaration order, each state's holdings together.
    Plan,
}

/// What the term table is split by, each section with its subtotal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Group {
    /// The prologue, each layer, the epilogue, the draft head.
    Layer,
    /// The state's kind (`recurrent`, `paged_kv`, ...).
    Kind,
    /// The term's lifetime, in layout order (model, sequence, snapshot, verify).
    Lifetime,
}

/// The column headings of the term table.
const HEADINGS: [&str; 8] = [
    "state", "kind", "holding", "lifetime", "dtype", "units", "bytes", "offset",
];

/// The columns of the term table, from the first, that are text (left-aligned); the others are
/// numbers (right-aligned).
const TEXT_COLUMNS: usize = 5;

/// The header of `plan`'s text: what the plan was made from, one line each.
fn header(circuit: &str, checkpoint: &str, inputs: &str, align: u64) -> String {
    format!(
        "circuit     {circuit}\ncheckpoint  {checkpoint}\ninputs      {inputs}\nalign       {align} B\n"
    )
}

/// The plan as a table: the header, the summary, then the terms of each space.
pub fn plan(report: &Report, terms: Option<(Sort, Option<Group>)>) -> String {
    let mut out = header(
        &report.circuit,
        &report.checkpoint,
        &report.inputs,
        report.plan.align(),
    );
    if let Some(parallel_rank) = report.parallel_rank {
        let _ = writeln!(
            out,
            "rank        tp {} of {}, pp {} of {} (layers {}..{})",
            parallel_rank.rank.tp,
            parallel_rank.tp,
            parallel_rank.rank.pp,
            parallel_rank.pp,
            parallel_rank.stage.start,
            parallel_rank.stage.end
        );
    }
    out.push_str(&summary(report));
    if let Some((sort, group)) = terms {
        out.push_str(&per_layer(report));
        out.push_str(&self::terms(report, sort, group));
    } else {
        let count = report.plan.terms().len();
        let _ = writeln!(
            out,
            "\n{count} {} over {} layers: `--terms` prints the bytes of every layer and every \
             term's row, `--json` every figure exact",
            if count == 1 { "term" } else { "terms" },
            report.layers.len()
        );
    }
    out.push_str(&shared(report));
    if let Some(pool) = report.plan.pool() {
        out.push_str(&page_pool(pool));
    }
    out
}

/// The KV sides that read another layer's KV (`shares`), in plan order: each one's owner and
/// the owner's KV blocks it reads (`-` where the owner has no term); nothing for a plan
/// without one.
fn shared(report: &Report) -> String {
    let plan = &report.plan;
    let readers: Vec<(&str, &str)> = plan.shared().collect();
    if readers.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\nKV shared across layers: {} {} another layer's KV, no term of {} own\n",
        readers.len(),
        if readers.len() == 1 {
            "side reads"
        } else {
            "sides read"
        },
        if readers.len() == 1 { "its" } else { "their" }
    );
    let mut rows = vec![cells(["state", "reads", "bytes", "offset"])];
    for (reader, owner) in readers {
        let term = plan.term(owner, metrale_circuit::Holding::Blocks);
        rows.push(vec![
            reader.to_owned(),
            owner.to_owned(),
            term.map_or_else(|| "-".to_owned(), |t| human_bytes(t.bytes)),
            term.map_or_else(|| "-".to_owned(), |t| t.offset.to_string()),
        ]);
    }
    push_cells(&mut out, &rows, 2);
    out
}

/// A vLLM page pool: its shape, its buffer's slots, and each group's layers.
fn page_pool(pool: &PagePool) -> String {
    let shape = &pool.plan.shape;
    let mut out = format!(
        "
page pool (vllm) at device offset {}: {} pages (page 0 the null page) of {} B, {} tokens \
         a page; {} slots; {} groups; a request of {} tokens holds {} pages\n",
        pool.plan.offset,
        pool.plan.pages,
        shape.page_bytes,
        shape.block_tokens,
        shape.slots,
        shape.groups,
        pool.plan.context,
        shape.request_pages
    );
    let mut rows = vec![cells(["group", "slot", "spec", "states", "offset"])];
    for member in &pool.members {
        let spec = match member.layer.family {
            Family::Attention {
                token_bytes,
                reach,
                latent,
            } => format!(
                "{} {token_bytes} B/token{}",
                if latent { "mla" } else { "attention" },
                reach.map_or_else(String::new, |r| format!(" {} {}", r.key(), r.tokens()))
            ),
            Family::Recurrent { state_bytes } => format!("recurrent {state_bytes} B"),
        };
        rows.push(vec![
            member.group.to_string(),
            member.slot.to_string(),
            spec,
            member.states.join(" "),
            pool.plan
                .slot(member.slot)
                .map_or(0, |r| r.offset)
                .to_string(),
        ]);
    }
    push_cells(&mut out, &rows, 4);
    out
}

/// Every rank's bytes as a table: the header, then each rank's layers, device and host bytes,
/// then their sum; the ranks and layers as text, the bytes aligned right.
pub fn every_rank(report: &EveryRankReport) -> String {
    let mut out = header(
        &report.circuit,
        &report.checkpoint,
        &report.inputs,
        report.align,
    );
    let _ = writeln!(out, "parallel    tp {} x pp {}\n", report.tp, report.pp);
    let bytes = |n: u64| format!("{} ({n} B)", human_bytes(n));
    let mut rows = vec![cells(["tp_rank", "pp_rank", "layers", "device", "host"])];
    // One row per pipeline stage: its tensor-parallel ranks hold the same plan.
    let tp_ranks = match report.tp {
        1 => "0".to_owned(),
        tp => format!("0..{} (each)", tp - 1),
    };
    for r in &report.ranks {
        let (rank, stage) = (r.parallel_rank.rank, r.parallel_rank.stage);
        rows.push(vec![
            tp_ranks.clone(),
            rank.pp.to_string(),
            format!("{}..{}", stage.start, stage.end),
            bytes(r.plan.device_bytes()),
            bytes(r.plan.host_bytes()),
        ]);
    }
    rows.push(vec![
        "sum".to_owned(),
        String::new(),
        String::new(),
        bytes(report.device_bytes()),
        bytes(report.host_bytes()),
    ]);
    push_cells(&mut out, &rows, 3);
    out
}

/// The summary: bytes per space (under vLLM's policy the device's page pool after its arena, the
/// device total on the device line, the figure `--json` and the map state), then term bytes per
/// lifetime, kind, layer kind and layer.
fn summary(report: &Report) -> String {
    let plan = &report.plan;
    let mut out = String::from(match plan.pool() {
        None => "\narena bytes per space (alignment padding included)\n",
        Some(_) => {
            "\nbytes per space (alignment padding included; the device's page pool after its arena)\n"
        }
    });
    let arenas: Vec<Vec<String>> = Space::ALL
        .iter()
        .map(|&s| {
            let arena = plan.arena_bytes(s);
            let total = match s {
                Space::Device => plan.device_bytes(),
                Space::Host => arena,
            };
            let mut row = vec![
                s.name().to_owned(),
                human_bytes(total),
                format!("{total} B"),
            ];
            if let (Space::Device, Some(pool)) = (s, plan.pool()) {
                row.push(format!(
                    "the arena's {arena} B and the page pool's {} B",
                    pool.plan.bytes()
                ));
            }
            row
        })
        .collect();
    push_cells(&mut out, &arenas, 1);

    out.push_str("\nterm bytes per lifetime (padding excluded)\n");
    let mut rows = vec![cells(["lifetime", "terms", "device", "host"])];
    for lifetime in Lifetime::LAYOUT_ORDER {
        let [device, host] = Space::ALL.map(|s| report.by_lifetime(s, lifetime));
        rows.push(vec![
            lifetime.name().to_owned(),
            (device.terms + host.terms).to_string(),
            human_bytes(device.bytes),
            human_bytes(host.bytes),
        ]);
    }
    rows.push(vec![
        "all".to_owned(),
        plan.terms().len().to_string(),
        human_bytes(plan.term_bytes(Space::Device)),
        human_bytes(plan.term_bytes(Space::Host)),
    ]);
    push_cells(&mut out, &rows, 1);

    out.push_str("\nterm bytes per kind\n");
    let mut rows = vec![cells(["kind", "space", "terms", "bytes"])];
    for (kind, total) in report.by_kind() {
        // Only the kinds the plan has: the vocabulary has twelve.
        if total.terms > 0 {
            rows.push(vec![
                kind.name().to_owned(),
                Space::of_kind(kind).name().to_owned(),
                total.terms.to_string(),
                human_bytes(total.bytes),
            ]);
        }
    }
    push_cells(&mut out, &rows, 2);

    out.push_str("\nterm bytes per layer kind\n");
    let mut rows = vec![cells(["layer kind", "layers", "terms", "bytes"])];
    for row in report.by_layer_kind() {
        rows.push(vec![
            row.name,
            row.layers.map_or_else(|| "-".to_owned(), |n| n.to_string()),
            row.total.terms.to_string(),
            human_bytes(row.total.bytes),
        ]);
    }
    push_cells(&mut out, &rows, 1);
    out
}

/// The bytes of every layer, one row each.
fn per_layer(report: &Report) -> String {
    let mut out = String::from("\nterm bytes per layer\n");
    let mut rows = vec![cells(["layer", "layer kind", "terms", "bytes"])];
    for (i, total) in (0u64..).zip(report.by_layer()) {
        rows.push(vec![
            format!("l{i}"),
            report.layer_kind(i).to_owned(),
            total.terms.to_string(),
            human_bytes(total.bytes),
        ]);
    }
    push_cells(&mut out, &rows, 2);
    out
}

/// Owned cells from text.
fn cells<const N: usize>(text: [&str; N]) -> Vec<String> {
    text.iter().map(|&t| t.to_owned()).collect()
}

/// Appends rows of cells, indented, in columns: the first `text` columns left-aligned, the
/// others right-aligned.
fn push_cells(out: &mut String, rows: &[Vec<String>], text: usize) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for cells in rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for cells in rows {
        let mut line = String::new();
        for (i, (cell, &width)) in cells.iter().zip(&widths).enumerate() {
            line.push_str("  ");
            if i < text {
                let _ = write!(line, "{cell:<width$}");
            } else {
                let _ = write!(line, "{cell:>width$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// A section of the term table: what its terms share, in the order sections are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Place(Position),
    /// The kind's index in `StateKind::ALL`.
    Kind(usize),
    /// The lifetime's index in `Lifetime::LAYOUT_ORDER`.
    Lifetime(usize),
}

impl Key {
    /// The section of `term` at `place` under `group`.
    fn of(group: Group, term: &StateTerm, place: Position) -> Self {
        match group {
            Group::Layer => Key::Place(place),
            Group::Kind => Key::Kind(term.kind as usize),
            Group::Lifetime => Key::Lifetime(
                Lifetime::LAYOUT_ORDER
                    .iter()
                    .position(|&l| l == term.lifetime)
                    .unwrap_or(Lifetime::LAYOUT_ORDER.len()),
            ),
        }
    }

    /// The section's heading, from one of its terms.
    fn heading(self, report: &Report, term: &StateTerm) -> String {
        match self {
            Key::Place(place) => report.place_label(place),
            Key::Kind(_) => format!("kind {}", term.kind.name()),
            Key::Lifetime(_) => format!("lifetime {}", term.lifetime.name()),
        }
    }
}

/// `fit --gpu`'s rows, before the budget's (which they explain): the GPU, the weights, the
/// reserve.
fn gpu_rows(rows: &mut Vec<(&str, String)>, gpu: &GpuReport, budget: u64) {
    let memory = &gpu.memory;
    let at = rows
        .iter()
        .position(|(k, _)| *k == "budget")
        .unwrap_or(rows.len());
    if let Some(row) = rows.get_mut(at) {
        row.1 = format!(
            "{budget} B for the state: {} B usable, less the weights and the reserve",
            memory.usable()
        );
    }
    let split = if gpu.ranks > 1 {
        format!(
            ", {} B a GPU over {} GPUs (an even split)",
            memory.weights, gpu.ranks
        )
    } else {
        String::new()
    };
    let new = [
        (
            "gpu",
            format!(
                "{} B, utilization {} (usable {} B)",
                memory.total,
                memory.utilization,
                memory.usable()
            ),
        ),
        (
            "weights",
            format!("{} B ({}){split}", gpu.weights_total, gpu.weights_source),
        ),
        ("reserve", format!("{} B", memory.reserve)),
    ];
    for (i, row) in new.into_iter().enumerate() {
        rows.insert(at + i, row);
    }
}

/// The cells of one term's row.
fn row(term: &StateTerm) -> [String; 8] {
    [
        term.state.clone(),
        term.kind.name().to_owned(),
        term.holding.name().to_owned(),
        term.lifetime.name().to_owned(),
        // A unit made of a packing: its name (its parts are in `--json`).
        term.packing
            .as_ref()
            .map_or_else(|| term.dtype.name().to_owned(), |l| l.name.clone()),
        term.units.to_string(),
        human_bytes(term.bytes),
        term.offset.to_string(),
    ]
}

/// A section's subtotal row: its term count under `state`, its bytes under `bytes`.
fn subtotal_row(total: Total) -> [String; 8] {
    let terms = if total.terms == 1 { "term" } else { "terms" };
    let mut cells: [String; 8] = Default::default();
    cells[0] = format!("subtotal: {} {terms}", total.terms);
    cells[6] = human_bytes(total.bytes);
    cells
}

/// Appends `cells` padded to `widths`: text columns left-aligned, numbers right-aligned.
fn push_row(out: &mut String, cells: &[String; 8], widths: &[usize; 8]) {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        if i >= TEXT_COLUMNS {
            let _ = write!(line, "{cell:>width$}");
        } else {
            let _ = write!(line, "{cell:<width$}");
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// One block of lines of the term table: a section's heading, or a row.
enum Line {
    Heading(String),
    Row([String; 8]),
}

/// The term table: per space, its terms in `sort` order, in sections of `group`.
fn terms(report: &Report, sort: Sort, group: Option<Group>) -> String {
    let mut order: Vec<(&StateTerm, Position)> = report.terms().collect();
    if sort == Sort::Offset {
        // A stable sort: equal offsets keep plan order.
        order.sort_by_key(|(t, _)| t.offset);
    }
    let mut spaces: Vec<(Space, usize, Vec<Line>)> = Vec::new();
    for space in Space::ALL {
        let in_space: Vec<(&StateTerm, Position)> = order
            .iter()
            .copied()
            .filter(|(t, _)| t.space == space)
            .collect();
        if in_space.is_empty() {
            continue;
        }
        let mut lines = Vec::new();
        match group {
            None => lines.extend(in_space.iter().map(|(t, _)| Line::Row(row(t)))),
            Some(group) => {
                let mut keys: Vec<Key> = in_space
                    .iter()
                    .map(|&(t, p)| Key::of(group, t, p))
                    .collect();
                keys.sort_unstable();
                keys.dedup();
                for key in keys {
                    let members: Vec<&StateTerm> = in_space
                        .iter()
                        .filter(|&&(t, p)| Key::of(group, t, p) == key)
                        .map(|&(t, _)| t)
                        .collect();
                    lines.push(Line::Heading(key.heading(report, members[0])));
                    lines.extend(members.iter().map(|t| Line::Row(row(t))));
                    lines.push(Line::Row(subtotal_row(Total::of(members.iter().copied()))));
                }
            }
        }
        spaces.push((space, in_space.len(), lines));
    }

    let mut widths = HEADINGS.map(str::len);
    for (_, _, lines) in &spaces {
        for line in lines {
            if let Line::Row(cells) = line {
                for (width, cell) in widths.iter_mut().zip(cells) {
                    *width = (*width).max(cell.chars().count());
                }
            }
        }
    }
    let headings = HEADINGS.map(str::to_owned);
    let order = match sort {
        Sort::Offset => "by offset",
        Sort::Plan => "in plan order",
    };
    let grouped = match group {
        None => String::new(),
        Some(group) => group.to_possible_value().map_or_else(String::new, |value| {
            format!(", grouped by {}", value.get_name())
        }),
    };
    let mut out = String::new();
    for (space, count, lines) in spaces {
        let terms = if count == 1 { "term" } else { "terms" };
        let _ = writeln!(
            out,
            "\n{} arena: {count} {terms}, {order}{grouped}",
            space.name()
        );
        push_row(&mut out, &headings, &widths);
        for line in lines {
            match line {
                Line::Heading(heading) => {
                    let _ = writeln!(out, "-- {heading}");
                }
                Line::Row(cells) => push_row(&mut out, &cells, &widths),
            }
        }
    }
    out
}

/// `n` with a comma every three digits, as vLLM's log writes its counts (`f"{n:,}"`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The serving profile a fit varied, on one line: what each sequence carries besides its KV
/// (the inputs line says where it was read).
fn profile_line(profile: &ProfileReport) -> String {
    format!(
        "[serving]: {} verify rows, a rollback ring of {}, {} prefix snapshots, {}, {} tree \
         nodes, {}",
        profile.verify_rows,
        profile.ring_depth,
        profile.prefix_snapshots,
        if profile.draft_kv {
            "draft KV blocks"
        } else {
            "no draft KV"
        },
        profile.tree_nodes,
        profile.kv_block_size.map_or_else(
            || "no KV".to_owned(),
            |b| format!("KV blocks of {b} tokens")
        ),
    )
}

/// The profile's formats: each key and the dtype or layout it names.
fn formats_line(profile: &ProfileReport) -> String {
    if profile.formats.is_empty() {
        return "none".to_owned();
    }
    let formats: Vec<String> = profile
        .formats
        .iter()
        .map(|(key, value)| format!("{key} {value}"))
        .collect();
    formats.join(", ")
}

/// `fit`'s rows under vLLM's page pool: what one more page and one more request cost, the pool
/// the budget's rest makes, and the two figures vLLM logs under the names it logs them by
/// ("GPU KV cache size", "Maximum concurrency"), in place of the arenas' per-block and per-slot
/// figures, which the pool does not have.
fn pool_rows(rows: &mut Vec<(&str, String)>, pool: &PoolCapacity, costs: Option<&PageCosts>) {
    let shape = &pool.shape;
    let bytes = |b: Option<u64>| b.map_or_else(|| "overflows".to_owned(), |b| format!("{b} B"));
    rows.extend([
        (
            "one more page costs",
            format!(
                "{} (a page of {} B in each of {} slots)",
                bytes(costs.and_then(|c| c.page_bytes)),
                shape.page_bytes,
                shape.slots
            ),
        ),
        (
            "one more request costs",
            format!(
                "{} ({} pages of {} tokens)",
                bytes(costs.and_then(|c| c.request_bytes)),
                shape.request_pages,
                thousands(pool.context)
            ),
        ),
        (
            "page pool (vllm)",
            format!(
                "{} tokens a page of {} B, {} slots, {} groups",
                shape.block_tokens, shape.page_bytes, shape.slots, shape.groups
            ),
        ),
        (
            "pool pages",
            format!("{} (the budget's rest; one is the null page)", pool.pages),
        ),
        (
            "GPU KV cache size",
            pool.tokens.map_or_else(
                || "overflows".to_owned(),
                |t| format!("{} tokens", thousands(t)),
            ),
        ),
        (
            "Maximum concurrency",
            format!(
                "{:.2}x for {} tokens per request ({} pages a request)",
                pool.concurrency(),
                thousands(pool.context),
                shape.request_pages
            ),
        ),
        ("requests at once", pool.admitted.to_string()),
    ]);
}

/// `fit`'s text: the answer, the device bytes around it, the per-unit figures, one `name  value`
/// line each (over several ranks, with the rank whose answer it is).
pub fn fit(report: &FitReport) -> String {
    let answer = &report.answer;
    let fit = &answer.fit;
    let next = fit.next_device_bytes.map_or_else(
        || "cannot be planned".to_owned(),
        |b| format!("{b} B (over the budget)"),
    );
    let mut rows = vec![
        ("circuit", report.circuit.clone()),
        ("checkpoint", report.checkpoint.clone()),
        ("inputs", report.inputs.clone()),
        ("align", report.align.to_string()),
        ("budget", format!("{} B", report.budget)),
        (
            "context",
            report.context.map_or_else(
                || "the inputs'".to_owned(),
                |c| format!("{c} tokens per sequence"),
            ),
        ),
        (report.free, fit.value.to_string()),
        ("device bytes at it", format!("{} B", fit.device_bytes)),
        ("device bytes at one more", next),
        (
            "one more costs",
            fit.marginal_bytes().map_or_else(
                || "cannot be planned".to_owned(),
                |b| format!("{b} B (every term that grows with it, padding included)"),
            ),
        ),
    ];
    if let Some(pool) = &answer.pool {
        pool_rows(&mut rows, pool, answer.capacity.pages.as_ref());
    } else {
        let capacity = &answer.capacity;
        rows.extend([
            (
                "one more KV block costs",
                capacity
                    .block_bytes
                    .map_or_else(|| "no KV blocks".to_owned(), |b| format!("{b} B")),
            ),
            (
                "bytes per sequence slot",
                format!("{} B", capacity.per_slot),
            ),
            ("bytes per KV token", format!("{} B", capacity.per_token)),
        ]);
        if capacity.per_request > 0 {
            rows.push((
                "fixed KV a request",
                format!(
                    "{} B (its encoder's tokens, whatever it decodes)",
                    capacity.per_request
                ),
            ));
        }
    }
    if let Some(profile) = &report.profile {
        rows.insert(3, ("profile", profile_line(profile)));
        rows.insert(4, ("formats", formats_line(profile)));
    }
    // With `--gpu`: where the budget comes from, before it.
    if let Some(gpu) = &report.gpu {
        gpu_rows(&mut rows, gpu, report.budget);
    }
    // Over several ranks: the one whose answer this is.
    if let Some(parallel_rank) = answer.parallel_rank {
        rows.insert(
            1,
            (
                "rank",
                format!(
                    "tp {} of {}, pp {} of {} (the rank that binds first)",
                    parallel_rank.rank.tp,
                    parallel_rank.tp,
                    parallel_rank.rank.pp,
                    parallel_rank.pp
                ),
            ),
        );
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in &rows {
        let _ = writeln!(out, "{k:<width$}  {v}");
    }
    out
}
