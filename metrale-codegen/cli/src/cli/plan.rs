//! `metrale-codegen plan <circuit.toml> [--checkpoint NAME] [--inputs FILE] [--align N]
//! [--sort offset|plan] [--group layer|kind|lifetime] [--json] [--svg FILE]`: sizes every
//! state of one checkpoint under the plan inputs, lays it out, and prints it as a table
//! ([`super::table`]) or JSON ([`super::json`]), and with `--svg` also writes its memory map
//! ([`super::svg`]).
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

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use metrale_circuit::DEFAULT_ALIGN;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::Diagnostic;
use metrale_circuit::load::diag::Diagnostics;
use metrale_circuit::parallel::Rank;
use serde_json::json;

use super::Outcome;
use super::blame::located_plan_error;
use super::prepared::Prepared;
use super::prepared::prepare;
use super::ranks::Asked;
use super::report::human_bytes;
use super::report::{self, Report};
use super::request::{DEFAULT_INPUTS, Inputs, ParallelArgs, Request};
use super::table::push_cells;
use super::table::{Group, Sort};
use super::{json, svg, table};

/// Size every state of one checkpoint of a circuit and lay it out.
///
/// Instantiates the checkpoint's states, sizes each under the plan inputs (slots, KV blocks,
/// formats, ...) and lays the terms out in their arenas, every region aligned.
///
/// Prints a summary first: the arena bytes per space, then the term bytes per lifetime, per
/// kind, per layer kind (the layout's kinds, with the prologue, epilogue and draft as rows of
/// their own) and per layer; then the terms of each space, by offset or in plan order
/// (--sort) and, with --group, in sections with a subtotal each. With --json, the plan as
/// JSON instead; with --svg, also its memory map as a picture.
///
/// Exits 1 on a bad circuit, inputs file or checkpoint, when the inputs lack a format key the
/// states need, or when the --svg file cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
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
    /// The order of the terms in the table.
    #[arg(long, value_name = "ORDER", value_enum, default_value_t = Sort::Offset)]
    pub sort: Sort,
    /// Split the term table into sections, each with a subtotal.
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
    fn request(&self) -> Request {
        Request {
            circuit: self.circuit.clone(),
            checkpoint: self.checkpoint.clone(),
            inputs: self
                .inputs
                .clone()
                .map_or(Inputs::BuiltIn(DEFAULT_INPUTS), Inputs::File),
            align: self.align,
            parallel: self.parallel.clone(),
        }
    }
}

/// Reads an `--align` value: a number of bytes (whether it is a power of two is checked by
/// [`plan`], as bad input).
fn align(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| "expected a number of bytes, a power of two such as 256".to_owned())
}

/// Runs `plan`.
pub fn run(args: &PlanArgs) -> Outcome {
    let report = match plan(&args.request(), args.json) {
        Ok(Planned::Rank(report)) => *report,
        Ok(Planned::AllRanks(text)) => return Outcome::ok(text),
        Err(diagnostics) => return Outcome::bad_input(&diagnostics),
    };
    if let Some(target) = &args.svg
        && let Err(error) = std::fs::write(target, svg::svg(&report))
    {
        return Outcome::bad_input(
            &Diagnostic::error(format!(
                "cannot write the memory map to `{target}`: {error}"
            ))
            .help("`--svg FILE` names a file to create or overwrite, in a folder that exists")
            .into(),
        );
    }
    if args.json {
        Outcome::ok(json::json(&report))
    } else {
        Outcome::ok(table::table(&report, args.sort, args.group))
    }
}

/// What `plan` made: one rank's report, or the table of every rank.
pub enum Planned {
    /// The plan of one rank (the only one on one GPU).
    Rank(Box<Report>),
    /// Every rank's bytes ([`all_ranks`]), as printed.
    AllRanks(String),
}

/// Loads the circuit and the inputs, instantiates the checkpoint (on the rank asked for) and
/// makes its plan; over more than one rank with none asked for, every rank's bytes.
///
/// (With `json`, the table of every rank as JSON.)
///
/// # Errors
/// As [`prepare`], a rank that cannot be made, or the plan's error.
pub fn plan(request: &Request, json: bool) -> Result<Planned, Diagnostics> {
    let prepared = prepare(request)?;
    let held;
    let (placement, decls) = match prepared.ranks().asked {
        Asked::Whole => (None, prepared.decls()),
        Asked::One(rank) => {
            held = prepared.rank(rank)?;
            (Some(held.placement), held.decls.as_slice())
        }
        Asked::Every => {
            return all_ranks(request, &prepared, json).map(Planned::AllRanks);
        }
    };
    let view = prepared.inputs().view();
    let plan = DynamicPlan::new(decls, &view.inputs(), request.align)
        .map_err(|error| located_plan_error(&error, request, prepared.inputs(), decls))?;
    Ok(Planned::Rank(Box::new(Report {
        rank: placement,
        circuit: request.circuit.clone(),
        inputs_file: request.inputs_file().map(str::to_owned),
        layers: prepared.layer_kinds().to_vec(),
        layer_kinds: report::layer_kinds(prepared.circuit()),
        checkpoint: prepared.checkpoint().to_owned(),
        inputs: prepared.inputs_name().to_owned(),
        plan,
    })))
}

/// One rank's row of [`all_ranks`].
struct Row {
    rank: Rank,
    layers: (u64, u64),
    device: u64,
    host: u64,
}

/// `plan` without ranks over more than one: each rank's device and host bytes, then the sum
/// over ranks, as a table or (`json`) an object with `circuit`, `checkpoint`, `align`, `tp`,
/// `pp`, `ranks` (each `tp_rank`, `pp_rank`, `layers`, `device_bytes`, `host_bytes`) and the
/// sums `device_bytes`, `host_bytes`.
///
/// # Errors
/// The first rank's error that cannot be planned.
fn all_ranks(request: &Request, prepared: &Prepared, json: bool) -> Result<String, Diagnostics> {
    let (circuit, align) = (&request.circuit, request.align);
    let counts = &prepared.ranks().counts;
    let view = prepared.inputs().view();
    let mut rows = Vec::new();
    for rank in prepared.ranks().listed().unwrap_or_default() {
        let held = prepared.rank(rank)?;
        let plan = DynamicPlan::new(&held.decls, &view.inputs(), align).map_err(|error| {
            located_plan_error(&error, request, prepared.inputs(), prepared.decls())
        })?;
        rows.push(Row {
            rank,
            layers: (held.placement.stage.start, held.placement.stage.end),
            device: plan.device_bytes(),
            host: plan.host_bytes(),
        });
    }
    let device = rows.iter().fold(0u64, |s, r| s.saturating_add(r.device));
    let host = rows.iter().fold(0u64, |s, r| s.saturating_add(r.host));
    if json {
        let ranks: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "tp_rank": r.rank.tp,
                    "pp_rank": r.rank.pp,
                    "layers": (r.layers.0..r.layers.1).collect::<Vec<u64>>(),
                    "device_bytes": r.device,
                    "host_bytes": r.host,
                })
            })
            .collect();
        let value = json!({
            "circuit": circuit,
            "checkpoint": prepared.checkpoint(),
            "align": align,
            "tp": counts.tp,
            "pp": counts.pp,
            "ranks": ranks,
            "device_bytes": device,
            "host_bytes": host,
        });
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    }
    let mut out = format!(
        "circuit     {circuit}\ncheckpoint  {}\ninputs      {}\nalign       {align} B\nparallel    tp {} x pp {}\n\n",
        prepared.checkpoint(),
        prepared.inputs_name(),
        counts.tp,
        counts.pp
    );
    let mut table = vec![
        ["tp_rank", "pp_rank", "layers", "device", "host"]
            .map(str::to_owned)
            .to_vec(),
    ];
    let bytes = |n: u64| format!("{} ({n} B)", human_bytes(n));
    for r in &rows {
        table.push(vec![
            r.rank.tp.to_string(),
            r.rank.pp.to_string(),
            format!("{}..{}", r.layers.0, r.layers.1),
            bytes(r.device),
            bytes(r.host),
        ]);
    }
    table.push(vec![
        "sum".to_owned(),
        String::new(),
        String::new(),
        bytes(device),
        bytes(host),
    ]);
    // The ranks and layers as text, the bytes aligned right.
    push_cells(&mut out, &table, 3);
    Ok(out)
}
