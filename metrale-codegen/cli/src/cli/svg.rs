//! `plan --svg FILE` ([`svg`]): the memory map of a plan as an SVG picture.
//!
//! The design: a header (circuit, checkpoint, inputs, alignment) and a legend, then one band
//! per memory space whose arena holds bytes (device, then host; an empty arena is left out).
//! - A band is [`BAND_WIDTH`] px wide for its whole arena, on one linear scale: a byte at
//!   offset `o` of an arena of `A` bytes is at `x = LEFT + o / A * BAND_WIDTH`. Ticks above it
//!   mark each quarter of the arena with its offset in bytes.
//! - Every non-empty term is a `rect` of class `term` at its offset, as wide as its bytes,
//!   filled with its lifetime's colour; neighbouring terms alternate between two tones of it so
//!   each one's edge shows. It carries `data-state` and `data-holding`, and a `<title>` (the
//!   hover text) with its state, holding, bytes, kind, lifetime, dtype, units and offset.
//! - Every gap between regions, and the rounding of the arena's end, is a `rect` of class `pad`
//!   at its true width, hatched red, with a `<title>` giving its bytes: alignment padding.
//! - The per-layer axis, under each band: one lane per place with terms in that space
//!   (prologue, `l<i>` by index, epilogue, draft), labelled at its left. A lane has a mark of
//!   class `lane-mark` for every run of neighbouring terms of its place (terms next to each
//!   other in the arena, padding between them included), spanning the run on the band's
//!   scale. Marks, unlike terms, are at least [`MIN_MARK`] px wide, so a layer whose terms
//!   are smaller than a pixel still shows where they lie. Since an arena is laid out by
//!   lifetime, then in plan order, each lifetime group shows as a staircase of layers.
//! - A layer whose KV sides read another layer's KV (`shares`, schema 3) keeps no bytes: its
//!   lane has a hollow mark of class `lane-reader` over each region of the state it reads (the
//!   same address, not a copy), titled with the reader and its owner.
//! - Under vLLM's policy, the page pool after the device arena is a band of its own (class
//!   `pool`, on its own scale): a `rect` of class `pool-slot` per slot, titled with its pages,
//!   bytes, offset and the layers (and their groups) viewing it, and in each slot the null
//!   page (page 0) hatched as class `null-page`. Its caption states the device total, the
//!   arena and the pool together, in exact bytes: the plan's `device_bytes`.
//!
//! Invariants:
//! - The output depends only on the report: no time, no absolute path (files are named by their
//!   last component; the built-in inputs by their fixed name), coordinates printed with three
//!   decimals at most, so the same plan gives the same bytes on every machine.
//! - Every text and attribute is XML-escaped; the picture is one `svg` element a browser, a
//!   renderer and an XML parser all read.

use std::fmt::Write as _;
use std::path::Path;

use metrale_circuit::dynamic::StateTerm;
use metrale_circuit::serving::pages::PagePool;
use metrale_circuit::{Lifetime, Space};

use metrale_circuit::dynamic::Position;

use super::report::{Report, human_bytes};

/// The picture's width, px.
const WIDTH: f64 = 1200.0;
/// The left edge of every band, px (the labels are to its left).
const LEFT: f64 = 140.0;
/// The width of a band, px: the whole arena.
const BAND_WIDTH: f64 = 1000.0;
/// The height of a band, px.
const BAND_HEIGHT: f64 = 40.0;
/// The height of one lane of the per-layer axis, px.
const LANE: f64 = 10.0;
/// The narrowest a lane mark is drawn, px.
const MIN_MARK: f64 = 1.0;
/// Where the first band's block starts, px from the top.
const FIRST_BAND: f64 = 118.0;

/// Each lifetime's two tones: its colour, and the lighter one every other term takes.
fn tones(lifetime: Lifetime) -> [&'static str; 2] {
    match lifetime {
        Lifetime::Model => ["#4e79a7", "#86a8cf"],
        Lifetime::Sequence => ["#59a14f", "#8fc585"],
        Lifetime::Snapshot => ["#f28e2b", "#f7b672"],
        Lifetime::Verify => ["#b07aa1", "#d0a9c6"],
    }
}

/// `text` escaped for XML text and attribute values. XML 1.0 has no form at all for the
/// control characters other than tab, line feed and carriage return (not even a character
/// reference), so a file name holding one shows it as `\u{..}`, as Rust writes it.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c < ' ' && !matches!(c, '\t' | '\n' | '\r') => {
                out.push_str(&c.escape_unicode().to_string());
            }
            c => out.push(c),
        }
    }
    out
}

/// A coordinate: three decimals at most, trailing zeros dropped (`140`, `140.5`, `0.001`).
fn px(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// A file named by its last component only, so no absolute path reaches the picture.
fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or_else(
        || path.to_owned(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// One band's scale: bytes of an arena to px.
#[derive(Clone, Copy)]
struct Scale {
    arena: u64,
}

impl Scale {
    /// The px `bytes` span on the band.
    #[allow(
        clippy::cast_precision_loss,
        reason = "a byte count past 2^53 loses bits far below one px of a 1000 px band"
    )]
    fn width(self, bytes: u64) -> f64 {
        bytes as f64 / self.arena as f64 * BAND_WIDTH
    }

    /// The x of byte `offset`.
    fn x(self, offset: u64) -> f64 {
        LEFT + self.width(offset)
    }
}

/// A run of neighbouring terms of one place in one arena.
struct Run {
    place: Position,
    start: u64,
    end: u64,
    terms: usize,
    bytes: u64,
}

/// The plan's memory map as an SVG document, with a final newline.
pub fn svg(report: &Report) -> String {
    let plan = &report.plan;
    let mut body = String::new();
    let mut top = FIRST_BAND;
    for space in Space::ALL {
        let arena = plan.arena_bytes(space);
        if arena == 0 {
            continue;
        }
        top = band(&mut body, report, space, top);
    }
    if let Some(pool) = plan.pool() {
        top = pool_band(&mut body, plan.device_bytes(), pool, top);
    }
    let height = top - 8.0;

    let inputs = match &report.inputs_file {
        Some(path) => file_name(path),
        None => report.inputs.clone(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">",
        w = px(WIDTH),
        h = px(height),
    );
    let circuit = escape(&file_name(&report.circuit));
    let checkpoint = escape(&report.checkpoint);
    let _ = writeln!(
        out,
        "<title>Memory map of {circuit}, checkpoint {checkpoint}</title>"
    );
    out.push_str(
        "<defs><pattern id=\"pad\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde2e2\"/>\
         <rect width=\"2\" height=\"6\" fill=\"#d62728\"/></pattern></defs>\n",
    );
    let _ = writeln!(
        out,
        "<rect class=\"background\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>",
        px(WIDTH),
        px(height)
    );
    let _ = writeln!(
        out,
        "<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">Memory map: {circuit}, \
         checkpoint {checkpoint}</text>"
    );
    let _ = writeln!(
        out,
        "<text x=\"16\" y=\"44\" font-size=\"12\">inputs: {}; every region aligned to {} B</text>",
        escape(&inputs),
        plan.align()
    );
    legend(&mut out);
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// The legend: a swatch per lifetime, padding and lane marks, and how to read the bands.
fn legend(out: &mut String) {
    let mut x = 16.0;
    let mut swatch = |out: &mut String, fill: &str, label: &str| {
        let _ = writeln!(
            out,
            "<rect class=\"legend\" x=\"{}\" y=\"56\" width=\"12\" height=\"12\" fill=\"{fill}\"/>\
             <text x=\"{}\" y=\"66\" font-size=\"12\">{label}</text>",
            px(x),
            px(x + 16.0)
        );
        // The swatch, its gap, then about 7 px a character of 12 px sans-serif, and a space.
        x += 36.0 + 7.0 * f64::from(u32::try_from(label.len()).unwrap_or(u32::MAX));
    };
    for lifetime in Lifetime::LAYOUT_ORDER {
        swatch(
            out,
            tones(lifetime)[0],
            &format!("{} lifetime", lifetime.name()),
        );
    }
    swatch(out, "url(#pad)", "alignment padding");
    swatch(out, "#333333", "where a layer's terms lie");
    out.push_str(
        "<text x=\"16\" y=\"88\" font-size=\"11\" fill=\"#444444\">One band per arena, its \
         full width the arena's bytes; a rectangle per term at its offset, as wide as its bytes \
         (neighbours alternate two tones; hover for the state and its bytes).</text>\n\
         <text x=\"16\" y=\"102\" font-size=\"11\" fill=\"#444444\">Under each band, one lane \
         per layer (and the prologue, epilogue, draft head) marks where its terms lie, each mark \
         at least 1 px wide.</text>\n",
    );
}

/// Draws the band of `space` with its axis and lanes from `top`; returns where the next
/// band starts.
fn band(out: &mut String, report: &Report, space: Space, top: f64) -> f64 {
    let plan = &report.plan;
    let arena = plan.arena_bytes(space);
    let scale = Scale { arena };
    let mut terms: Vec<(&StateTerm, Position)> = report
        .terms()
        .filter(|(t, _)| t.space == space && t.bytes > 0)
        .collect();
    // A stable sort: plan order among equal offsets (none here: no two non-empty regions
    // share an offset).
    terms.sort_by_key(|(t, _)| t.offset);
    let name = space.name();
    let band_top = top + 36.0;

    let _ = writeln!(
        out,
        "<g class=\"space\" id=\"space-{name}\">\n<text x=\"{}\" y=\"{}\" font-size=\"13\" \
         font-weight=\"bold\">{name} arena: {} ({arena} B): {} non-empty {}, {} B; alignment \
         padding {} B</text>",
        px(LEFT),
        px(top + 12.0),
        human_bytes(arena),
        terms.len(),
        if terms.len() == 1 { "term" } else { "terms" },
        plan.term_bytes(space),
        arena.saturating_sub(plan.term_bytes(space)),
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"end\">{name}</text>",
        px(LEFT - 8.0),
        px(band_top + BAND_HEIGHT / 2.0 + 4.0)
    );
    for quarter in 0..=4_u64 {
        // At most 4 x u64::MAX: fits a u128; the quotient is at most the arena.
        let offset = u64::try_from(u128::from(arena) * u128::from(quarter) / 4).unwrap_or(arena);
        let x = scale.x(offset);
        let anchor = match quarter {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#666666\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"{anchor}\" \
             fill=\"#444444\">{}</text>",
            px(band_top - 6.0),
            px(band_top),
            px(top + 27.0),
            human_bytes(offset),
            x = px(x),
        );
    }
    let _ = writeln!(
        out,
        "<rect class=\"band\" id=\"band-{name}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
         fill=\"#ffffff\"/>",
        px(LEFT),
        px(band_top),
        px(BAND_WIDTH),
        px(BAND_HEIGHT)
    );

    let mut cursor = 0;
    for (i, &(term, _)) in terms.iter().enumerate() {
        pad(out, scale, band_top, cursor, term.offset);
        let _ = writeln!(
            out,
            "<rect class=\"term\" data-state=\"{state}\" data-holding=\"{holding}\" x=\"{}\" \
             y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{state} {holding}: {} ({} B); \
             {}, {} lifetime, {} x {} units, offset {}</title></rect>",
            px(scale.x(term.offset)),
            px(band_top),
            px(scale.width(term.bytes)),
            px(BAND_HEIGHT),
            tones(term.lifetime)[i % 2],
            human_bytes(term.bytes),
            term.bytes,
            term.kind.name(),
            term.lifetime.name(),
            term.dtype.name(),
            term.units,
            term.offset,
            state = escape(&term.state),
            holding = term.holding.name(),
        );
        cursor = term.offset.saturating_add(term.bytes);
    }
    pad(out, scale, band_top, cursor, arena);
    let _ = writeln!(
        out,
        "<rect class=\"outline\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" \
         stroke=\"#666666\" stroke-width=\"0.5\"/>",
        px(LEFT),
        px(band_top),
        px(BAND_WIDTH),
        px(BAND_HEIGHT)
    );

    let lanes_top = band_top + BAND_HEIGHT + 8.0;
    let bottom = lanes(out, report, scale, &terms, lanes_top);
    out.push_str("</g>\n");
    bottom + 28.0
}

/// Draws the page pool's band from `top`: its slots end to end, each with its null page;
/// returns where the next band starts. `device` is the plan's device total.
fn pool_band(out: &mut String, device: u64, pool: &PagePool, top: f64) -> f64 {
    let plan = &pool.plan;
    let bytes = plan.bytes();
    let scale = Scale {
        arena: bytes.max(1),
    };
    let band_top = top + 36.0;
    let page = plan.shape.page_bytes;
    let _ = writeln!(
        out,
        "<g class=\"pool\" id=\"pool\">\n<text x=\"{}\" y=\"{}\" font-size=\"13\" \
         font-weight=\"bold\">page pool (vLLM): {} ({bytes} B): {} slots x {} pages x {page} B, \
         {} groups, {} tokens a page, from device offset {}; device total {device} B (arena and \
         pool)</text>",
        px(LEFT),
        px(top + 12.0),
        human_bytes(bytes),
        plan.shape.slots,
        plan.pages,
        plan.shape.groups,
        plan.shape.block_tokens,
        plan.offset,
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"end\">pool</text>",
        px(LEFT - 8.0),
        px(band_top + BAND_HEIGHT / 2.0 + 4.0)
    );
    let slot_bytes = plan.pages.saturating_mul(page);
    for slot in 0..plan.shape.slots {
        let start = slot.saturating_mul(slot_bytes);
        let viewers: Vec<String> = pool
            .members
            .iter()
            .filter(|m| m.slot == slot)
            .map(|m| {
                let states = m.states.first().map_or("", String::as_str);
                let layer = states.rsplit_once('.').map_or(states, |(layer, _)| layer);
                format!("{} (group {})", escape(layer), m.group)
            })
            .collect();
        let _ = writeln!(
            out,
            "<rect class=\"pool-slot\" data-slot=\"{slot}\" x=\"{}\" y=\"{}\" width=\"{}\" \
             height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>slot \
             {slot}: {} pages of {page} B ({slot_bytes} B) at device offset {}; viewed by {}\
             </title></rect>",
            px(scale.x(start)),
            px(band_top),
            px(scale.width(slot_bytes)),
            px(BAND_HEIGHT),
            tones(Lifetime::Sequence)[usize::from(slot % 2 == 1)],
            plan.pages,
            plan.offset.saturating_add(start),
            if viewers.is_empty() {
                "no layer".to_owned()
            } else {
                viewers.join(", ")
            },
        );
        if plan.pages > 0 {
            let _ = writeln!(
                out,
                "<rect class=\"null-page\" data-slot=\"{slot}\" x=\"{}\" y=\"{}\" \
                 width=\"{}\" height=\"{}\" fill=\"url(#pad)\"><title>slot {slot}, page 0: \
                 the null page vLLM reserves ({page} B at device offset {})</title></rect>",
                px(scale.x(start)),
                px(band_top),
                px(scale.width(page).max(MIN_MARK)),
                px(BAND_HEIGHT),
                plan.offset.saturating_add(start),
            );
        }
    }
    let _ = writeln!(
        out,
        "<rect class=\"outline\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" \
         stroke=\"#666666\" stroke-width=\"0.5\"/>\n</g>",
        px(LEFT),
        px(band_top),
        px(BAND_WIDTH),
        px(BAND_HEIGHT)
    );
    band_top + BAND_HEIGHT + 28.0
}

/// Draws the padding from `start` to `end` on the band at `top`, if there is any.
fn pad(out: &mut String, scale: Scale, top: f64, start: u64, end: u64) {
    if end <= start {
        return;
    }
    let bytes = end - start;
    let _ = writeln!(
        out,
        "<rect class=\"pad\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#pad)\">\
         <title>alignment padding: {bytes} B at offset {start}</title></rect>",
        px(scale.x(start)),
        px(top),
        px(scale.width(bytes)),
        px(BAND_HEIGHT)
    );
}

/// Draws the per-layer axis of a band's `terms` (non-empty, in offset order) from `top`;
/// returns its bottom.
fn lanes(
    out: &mut String,
    report: &Report,
    scale: Scale,
    terms: &[(&StateTerm, Position)],
    top: f64,
) -> f64 {
    let mut runs: Vec<Run> = Vec::new();
    for &(term, place) in terms {
        let end = term.offset.saturating_add(term.bytes);
        match runs.last_mut() {
            Some(run) if run.place == place => {
                run.end = end;
                run.terms += 1;
                run.bytes = run.bytes.saturating_add(term.bytes);
            }
            _ => runs.push(Run {
                place,
                start: term.offset,
                end,
                terms: 1,
                bytes: term.bytes,
            }),
        }
    }
    // Every KV side that reads another's KV, at its place, over its owner's regions here.
    let readers: Vec<(Position, &str, &str, &StateTerm)> = report
        .plan
        .shared()
        .flat_map(|(reader, owner)| {
            let place = Position::of_prefix(reader.rsplit_once('.').map_or("", |(p, _)| p));
            terms
                .iter()
                .filter(move |(t, _)| t.state == owner)
                .map(move |&(t, _)| (place, reader, owner, t))
        })
        .collect();
    let mut places: Vec<Position> = runs
        .iter()
        .map(|r| r.place)
        .chain(readers.iter().map(|(place, ..)| *place))
        .collect();
    places.sort_unstable();
    places.dedup();
    let right = LEFT + BAND_WIDTH;
    for (row, &place) in places.iter().enumerate() {
        #[allow(clippy::cast_precision_loss, reason = "a lane index is far below 2^52")]
        let y = top + row as f64 * LANE;
        let label = escape(&report.place_label(place));
        let fill = if row % 2 == 0 { "#f1f1f1" } else { "#ffffff" };
        let _ = writeln!(
            out,
            "<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"8\" text-anchor=\"end\">{label}</text>",
            px(LEFT),
            px(y),
            px(BAND_WIDTH),
            px(LANE),
            px(LEFT - 6.0),
            px(y + 8.0)
        );
        for run in runs.iter().filter(|r| r.place == place) {
            let width = scale.width(run.end - run.start).max(MIN_MARK);
            let x = scale.x(run.start).min(right - width);
            let terms = if run.terms == 1 { "term" } else { "terms" };
            let _ = writeln!(
                out,
                "<rect class=\"lane-mark\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                 fill=\"#333333\"><title>{label}: {} {terms}, {} ({} B), offsets {} to {}\
                 </title></rect>",
                px(x),
                px(y + 1.0),
                px(width),
                px(LANE - 2.0),
                run.terms,
                human_bytes(run.bytes),
                run.bytes,
                run.start,
                run.end
            );
        }
        for &(_, reader, owner, term) in readers.iter().filter(|(p, ..)| *p == place) {
            let width = scale.width(term.bytes).max(MIN_MARK);
            let x = scale.x(term.offset).min(right - width);
            let _ = writeln!(
                out,
                "<rect class=\"lane-reader\" data-state=\"{reader}\" data-owner=\"{owner}\" \
                 x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" \
                 stroke=\"#333333\" stroke-width=\"0.75\"><title>{label}: {reader} reads \
                 {owner} {}, offset {} ({} B), no bytes of its own</title></rect>",
                px(x),
                px(y + 1.5),
                px(width),
                px(LANE - 3.0),
                term.holding.name(),
                term.offset,
                term.bytes,
                reader = escape(reader),
                owner = escape(owner),
            );
        }
    }
    #[allow(clippy::cast_precision_loss, reason = "a lane count is far below 2^52")]
    let height = places.len() as f64 * LANE;
    top + height
}

#[cfg(test)]
mod tests {
    use super::{escape, file_name, px};

    #[test]
    fn coordinates_escapes_and_names() {
        assert_eq!(px(140.0), "140");
        assert_eq!(px(140.5), "140.5");
        assert_eq!(px(0.0004), "0");
        assert_eq!(px(0.0006), "0.001");
        assert_eq!(px(12.345_67), "12.346");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        // Issue 22: a control character in a file name made the SVG ill-formed.
        assert_eq!(escape("a\u{1}b\u{1b}[0m\tc"), "a\\u{1}b\\u{1b}[0m\tc");
        assert_eq!(file_name("/abs/dir/qwen3_5.toml"), "qwen3_5.toml");
        assert_eq!(file_name("circuits/qwen3_5.toml"), "qwen3_5.toml");
        assert_eq!(file_name("small.toml"), "small.toml");
    }
}
