//! Tensor- and pipeline-parallel ranks in the CLI: the sizes the `--tp`, `--pp`, `--tp-rank`
//! and `--pp-rank` options ([`ParallelArgs`]) resolve to
//! (the options over the inputs file's `[parallel]`), one rank's declarations, and `plan`'s
//! table of every rank ([`all_ranks`]).
//!
//! Invariants:
//! - An option given wins over the inputs file; a size not given anywhere is 1.
//! - `--tp-rank` and `--pp-rank` come together (clap refuses one alone); without them a plan
//!   over more than one rank is the table of every rank, in (pp rank, tp rank) order.

use metrale_circuit::dynamic::{DynamicPlan, StateDecl};
use metrale_circuit::load::ParallelCounts;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::parallel::{Parallel, Rank, Stage};
use serde_json::json;

use super::blame::located_plan_error;
use super::prepare::Prepared;
use super::report::human_bytes;
use super::request::{ParallelArgs, Request};
use super::table::push_cells;

/// The sizes and the rank asked for: the options over the inputs file's `[parallel]`.
pub struct Resolved {
    /// The sizes (and the file's `pp_layers`, kept only when `--pp` does not change `pp`).
    pub counts: ParallelCounts,
    /// The rank asked for.
    pub rank: Option<Rank>,
}

impl ParallelArgs {
    /// The sizes and rank these options ask for over `file` (the inputs' `[parallel]`).
    #[must_use]
    pub fn resolve(&self, file: &ParallelCounts) -> Resolved {
        let tp = self.tp.unwrap_or(file.tp);
        let pp = self.pp.unwrap_or(file.pp);
        // A split by hand is for the file's own pipeline size.
        let pp_layers = file.pp_layers.clone().filter(|_| pp == file.pp);
        Resolved {
            counts: ParallelCounts { tp, pp, pp_layers },
            rank: self
                .tp_rank
                .zip(self.pp_rank)
                .map(|(tp, pp)| Rank { tp, pp }),
        }
    }
}

/// Every rank of `counts`, in (pp rank, tp rank) order.
pub fn every_rank(counts: &ParallelCounts) -> impl Iterator<Item = Rank> + use<> {
    let (tp, pp) = (counts.tp, counts.pp);
    (0..pp).flat_map(move |pp| (0..tp).map(move |tp| Rank { tp, pp }))
}

/// What one rank holds: its declarations and the model's layers `[start, end)` in it.
pub struct RankDecls {
    /// The rank's states.
    pub decls: Vec<StateDecl>,
    /// The layers it holds.
    pub layers: (u64, u64),
}

/// Rank `rank`'s declarations of the prepared checkpoint under `parallel`.
///
/// # Errors
/// The circuit's error for a rank out of range, a dim that does not split or a split that
/// does not fit the layers.
pub fn rank_decls(
    prepared: &Prepared,
    parallel: &Parallel<'_>,
    rank: Rank,
) -> Result<RankDecls, Diagnostics> {
    let decls = prepared
        .circuit
        .instantiate_rank(&prepared.checkpoint, parallel, rank)?;
    let layers = prepared
        .circuit
        .checkpoint(&prepared.checkpoint)
        .map_or(0, |c| c.layer_kinds().len() as u64);
    // The stage `instantiate_rank` placed the rank by: it cannot fail once that succeeded.
    let held = Stage::of(layers, parallel, rank).map_err(|e| {
        Diagnostics::from(Diagnostic::error(e.to_string()).in_file(prepared.circuit.path()))
    })?;
    Ok(RankDecls {
        decls,
        layers: (held.start, held.end),
    })
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
pub fn all_ranks(
    request: &Request,
    prepared: &Prepared,
    counts: &ParallelCounts,
    json: bool,
) -> Result<String, Diagnostics> {
    let (circuit, align) = (&request.circuit, request.align);
    let parallel = counts.parallel();
    let view = prepared.inputs.view();
    let mut rows = Vec::new();
    for rank in every_rank(counts) {
        let held = rank_decls(prepared, &parallel, rank)?;
        let plan = DynamicPlan::new(&held.decls, &view.inputs(), align).map_err(|error| {
            located_plan_error(&error, request, &prepared.inputs, &prepared.decls)
        })?;
        rows.push(Row {
            rank,
            layers: held.layers,
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
            "checkpoint": prepared.checkpoint,
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
        prepared.checkpoint, prepared.inputs_name, counts.tp, counts.pp
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
