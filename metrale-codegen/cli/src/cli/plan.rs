//! `metrale-codegen plan <circuit.toml> [--checkpoint NAME] [--inputs FILE] [--align N]
//! [--sort offset|plan] [--group layer|kind|lifetime] [--json] [--svg FILE] [--tp T] [--pp P]
//! [--tp-rank R --pp-rank S]`: sizes every state of one checkpoint (or of one rank) under the
//! plan inputs, lays it out, and prints it as a table ([`super::table`]) or JSON
//! ([`super::json`]), and with `--svg` also writes its memory map ([`super::svg`]); over more
//! than one rank with none named, every rank's bytes instead.
//!
//! One straight path: the arguments make a [`Request`] ([`super::request`]), [`prepare`] loads
//! and checks what it names ([`super::prepared`]), [`planned::plan`] plans each rank asked for
//! ([`super::planned`]), and the report of that ([`super::report`]) is rendered.
//!
//! Invariants:
//! - Without `--inputs` the plan inputs are [`DEFAULT_INPUTS`], the very text of
//!   `metrale-codegen/cli/inputs/default.toml`; without `--checkpoint`, the circuit's first
//!   checkpoint; without `--align`, [`DEFAULT_ALIGN`].
//! - A malformed `--align` value is a usage error (clap's, exit 2); a non-power-of-two one is
//!   bad input (exit 1). Errors of the align, the circuit and the inputs file are reported
//!   together; every format key the inputs lack is reported, each once.
//! - `--sort` and `--group` shape the table only; `--svg` combines with every other option,
//!   `--json` included. The map is written only once the plan is made, and a file that cannot
//!   be written is bad input (exit 1, nothing on stdout), like a bad circuit.
//! - Every rank's bytes are no one plan: `--sort` and `--group` shape nothing there, and
//!   `--svg`, which would draw no map, is refused as bad input naming the way to one rank's
//!   map (`--tp-rank`, `--pp-rank`), never silently skipped.

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use metrale_circuit::DEFAULT_ALIGN;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};

use super::Outcome;
use super::planned::{self, Planned};
use super::prepared::prepare;
use super::report::{EveryRankReport, Report};
use super::request::{DEFAULT_INPUTS, InputsSource, ParallelArgs, Request};
use super::table::{Group, Sort};
use super::{json, svg, table};

/// Size every state of one checkpoint of a circuit and lay it out.
///
/// Instantiates the checkpoint's states, sizes each under the plan inputs (slots, KV blocks,
/// formats, ...) and lays the terms out in their arenas, every region aligned.
///
/// Prints a summary that fits a screen: the arena bytes per space, then the term bytes per
/// lifetime, per kind and per layer kind (the layout's kinds, with the prologue, epilogue and
/// draft as rows of their own). With --terms (or --sort, --group), also the bytes per layer
/// and the terms of each space, by offset or in plan order (--sort) and, with --group, in
/// sections with a subtotal each. With --json, the plan as JSON instead; with --svg, also its
/// memory map as a picture.
///
/// Exits 1 on a bad circuit, inputs file or checkpoint, when the inputs lack a format key the
/// states need, or when the --svg file cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
#[command(after_long_help = json::PLAN_FIELDS)]
pub struct PlanArgs {
    /// The circuit file.
    #[arg(value_name = "circuit.toml", value_parser = NonEmptyStringValueParser::new())]
    pub circuit: String,
    /// The checkpoint to size [default: the circuit's first].
    #[arg(long, value_name = "NAME")]
    pub checkpoint: Option<String>,
    /// The plan inputs file [default: the built-in metrale-codegen/cli/inputs/default.toml].
    #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
    pub inputs: Option<String>,
    /// The alignment of every region in bytes, a power of two.
    ///
    /// A value that is not a number is a usage error; a number that is not a power of two is
    /// reported with the circuit's and the inputs' errors (exit 1).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ALIGN, value_parser = align)]
    pub align: u64,
    /// After the summary, the bytes of every layer and every term's row.
    #[arg(long)]
    pub terms: bool,
    /// The order of the terms in the table (implies --terms) [default: offset].
    #[arg(long, value_name = "ORDER", value_enum)]
    pub sort: Option<Sort>,
    /// Split the term table into sections, each with a subtotal (implies --terms).
    #[arg(long, value_name = "BY", value_enum)]
    pub group: Option<Group>,
    /// Print the plan as JSON (exact byte counts) instead of a table.
    ///
    /// An object with `circuit`, `checkpoint`, `align`, `terms` (in plan order, whatever
    /// --sort and --group say; each with `state`, `kind`, `holding`, `lifetime`, `dtype`,
    /// `units`, `bytes`, `offset`, `space`), `device_bytes`, `host_bytes` (the arena sizes),
    /// and `totals`.
    ///
    /// `totals.lifetime.<space>.<lifetime>` and `totals.kind.<kind>` are each
    /// `{"terms": N, "bytes": N}`: the count of terms and their bytes, alignment padding
    /// excluded. Both spaces, every lifetime and every kind are always there, zeros included.
    #[arg(long)]
    pub json: bool,
    /// Also write the plan's memory map to FILE, as SVG.
    ///
    /// One band per memory space that holds bytes, the band's width its whole arena; each
    /// term a rectangle at its offset, as wide as its bytes, coloured by lifetime, its state,
    /// holding and bytes in its hover text; alignment padding hatched; under each band a lane
    /// per layer marking where that layer's terms lie. The table (or the JSON) still prints.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,
    /// Tensor- and pipeline-parallel ranks: with `--tp-rank` and `--pp-rank`, that rank's plan
    /// (the JSON adds `tp`, `pp`, `tp_rank`, `pp_rank` and `layers`, the layer indices it
    /// holds); without them, over more than one rank, every rank's device and host bytes and
    /// their sum.
    #[command(flatten)]
    pub parallel: ParallelArgs,
}

impl PlanArgs {
    /// The facts of this command line `plan` plans from.
    pub fn request(&self) -> Request {
        Request {
            circuit: self.circuit.clone(),
            checkpoint: self.checkpoint.clone(),
            inputs: self
                .inputs
                .clone()
                .map_or(InputsSource::BuiltIn(DEFAULT_INPUTS), InputsSource::File),
            align: self.align,
            parallel: self.parallel.clone(),
        }
    }
}

/// Reads an `--align` value: a number of bytes (whether it is a power of two is checked by
/// [`prepare`], as bad input).
fn align(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| "expected a number of bytes, a power of two such as 256".to_owned())
}

/// Runs `plan`: the request, prepared, planned, rendered.
pub fn run(args: &PlanArgs) -> Outcome {
    match plan(args) {
        Ok(text) => Outcome::ok(text),
        Err(diagnostics) => Outcome::bad_input(&diagnostics),
    }
}

/// What `plan` prints: one plan as a table or JSON (with `--svg`, its map written first), or
/// every rank's bytes.
///
/// # Errors
/// As [`prepare`] and [`planned::plan`], or the `--svg` file that cannot be written.
fn plan(args: &PlanArgs) -> Result<String, Diagnostics> {
    let request = args.request();
    let prepared = prepare(&request)?;
    // `plan` has no `--context`: the inputs must give it.
    prepared.require_context(None)?;
    match planned::plan(&request, &prepared)? {
        Planned::Every(_) if args.svg.is_some() => Err(Diagnostic::error(
            "`--svg` draws the memory map of one plan, and every rank's bytes are not one",
        )
        .help("name the rank to draw with `--tp-rank R --pp-rank S`")
        .into()),
        Planned::Every(ranks) => {
            let report = EveryRankReport::new(&request, &prepared, ranks);
            Ok(if args.json {
                json::every_rank(&report)
            } else {
                table::every_rank(&report)
            })
        }
        Planned::One {
            parallel_rank,
            plan,
        } => {
            let report = Report::new(&request, &prepared, parallel_rank, plan);
            if let Some(target) = &args.svg {
                std::fs::write(target, svg::svg(&report)).map_err(|error| {
                    Diagnostic::error(format!(
                        "cannot write the memory map to `{target}`: {error}"
                    ))
                    .help(
                        "`--svg FILE` names a file to create or overwrite, in a folder that exists",
                    )
                })?;
            }
            Ok(if args.json {
                json::plan(&report)
            } else {
                // --sort and --group shape the term table: asking for them asks for it.
                let terms = (args.terms || args.sort.is_some() || args.group.is_some())
                    .then(|| (args.sort.unwrap_or(Sort::Offset), args.group));
                table::plan(&report, terms)
            })
        }
    }
}
