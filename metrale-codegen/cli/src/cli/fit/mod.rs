//! `metrale-codegen fit <circuit.toml> (--budget SIZE | --gpu SIZE [--weights SIZE|PATH]
//! [--reserve SIZE] [--utilization F]) (--for kv-blocks | --for sequences --context TOKENS)
//! [--checkpoint NAME] [--inputs FILE] [--align N] [--json] [--tp T] [--pp P] [--tp-rank R
//! --pp-rank S]`: the largest value of one free input whose plan's device arena fits a byte
//! budget, exact to the byte, before any weight is loaded; over several ranks, that of the
//! rank that binds first. With `--gpu`, the budget is what the GPU leaves the state
//! ([`GpuMemory::state_budget`]): its usable share less the weights (read from a checkpoint's
//! safetensors metadata by `metrale_circuit::weights::read`, split evenly over the ranks by
//! `GpuMemory::sharded`) and a reserve. Every figure is the runtime's (`serving::Capacity`,
//! `PoolCapacity`, `GpuMemory`): this command reads, fits and renders, computing no size.
//!
//! The path of `plan` ([`super::plan`]) up to its plans: the arguments make a [`Request`], and
//! [`prepare`] loads and checks what it names; then each rank asked for is prepared and fitted
//! in turn, and the answer ([`FitReport`]) is rendered by [`super::table`] or [`super::json`].
//!
//! Its options are `args.rs`'s, its refusals of a budget that answers nothing `refusals.rs`'s.
//!
//! Invariants:
//! - The circuit, checkpoint and inputs are read and checked exactly as `plan` reads them; the
//!   answer is `metrale_circuit::dynamic::fit_kv_blocks` or `fit_profile`, whose search the
//!   generated plans' `fit_kv_blocks` and `fit_sequences` share.
//! - `--for sequences` varies the inputs' `[serving]` profile at `--context` tokens per
//!   sequence; without `--inputs` it reads the built-in [`SERVING_INPUTS`] (the default server
//!   as a profile). `--context` is required with it and refused without it (usage, exit 2).
//! - `--budget` takes bytes or a number with a unit (`B`, `KB` `MB` `GB` `TB` in powers of
//!   1000, `KiB` `MiB` `GiB` `TiB` in powers of 1024), with a decimal fraction that comes to
//!   whole bytes (`16.2GB`); `--context` a count, `32k` (32,000) or `32Ki` (32,768); a
//!   malformed or overflowing size or count is a usage error (exit 2).
//! - A budget too small for even 0, or one that holds 0 (no sequence, no KV block: it serves
//!   nothing), is bad input (exit 1) naming the bytes 0 and 1 need; so are weights and a
//!   reserve that take the whole GPU.
//! - A question no budget answers is refused, never answered with the search's own limit:
//!   `--context 0` (usage, exit 2), and a free input nothing in the plan grows with, where one
//!   more than the answer cannot be planned (bad input, exit 1: a circuit that keeps no KV
//!   asked for KV blocks, sequences that hold nothing).
//! - The answer says what one more of the free input costs: the plan's device bytes at one
//!   more less those at the answer (`Fit::marginal_bytes`), every term that grows with it.

use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl, fit_kv_blocks, fit_profile};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::serving::{
    Capacity, FitError, GpuMemory, ProfileFree, Utilization, pages::PoolCapacity,
};
use metrale_circuit::{KvInputs, PlanError, StateInputs};

mod args;
mod refusals;

pub use args::{FitArgs, Free};
use refusals::{budget_refused, unbounded};

use super::Outcome;
use super::blame::located_plan_error;
use super::prepared::{ParallelRank, Prepared, prepare};
use super::report::{FitAnswer, FitReport, GpuReport, ProfileReport};
use super::request::Request;
use super::{json, table};
use metrale_circuit::weights::{self, Weights};

/// Runs `fit`.
pub fn run(args: &FitArgs) -> Outcome {
    if args.free == Free::KvBlocks && args.context.is_some() {
        return Outcome {
            status: super::Status::Usage,
            stdout: String::new(),
            stderr: "error: `--context` is for `--for sequences`: with `--for kv-blocks` the \
                     context is the inputs' own\n"
                .to_owned(),
        };
    }
    if args.context == Some(0) {
        return Outcome {
            status: super::Status::Usage,
            stdout: String::new(),
            stderr: "error: `--context 0`: a sequence holds at least one token, and no budget \
                     bounds sequences of none; give the KV tokens each sequence holds, e.g. \
                     `--context 32768`\n"
                .to_owned(),
        };
    }
    // clap drops a `requires` of an argument that `--budget` conflicts with: checked here.
    let gpu_only = [
        ("--weights", args.weights.is_some()),
        ("--reserve", args.reserve.is_some()),
        ("--utilization", args.utilization.is_some()),
    ];
    if args.gpu.is_none()
        && let Some((flag, _)) = gpu_only.iter().find(|(_, given)| *given)
    {
        return Outcome {
            status: super::Status::Usage,
            stdout: String::new(),
            stderr: format!(
                "error: `{flag}` is for `--gpu`: it says what else the GPU holds, and `--budget` \
                 is the state's budget already\n"
            ),
        };
    }
    match fit_report(args) {
        Ok(report) if args.json => Outcome::ok(json::fit(&report)),
        Ok(report) => Outcome::ok(table::fit(&report)),
        Err(diagnostics) => Outcome::bad_input(&diagnostics),
    }
}

/// What `fit` found: the request, prepared as `plan` prepares it, fitted (on each rank asked
/// for), with what the outputs print beside the answer.
///
/// # Errors
/// As [`prepare`], a rank that cannot be placed, or the fit's error, located.
fn fit_report(args: &FitArgs) -> Result<FitReport, Diagnostics> {
    let request = args.request();
    let prepared = prepare(&request)?;
    // A vLLM pool without `context` needs `--for sequences --context`.
    prepared.require_context(args.context)?;
    let gpu = gpu(args, &prepared)?;
    let budget = match &gpu {
        Some(gpu) => gpu.budget,
        None => args.budget.unwrap_or(0),
    };
    let answer = fit(args, budget, &request, &prepared)?;
    if answer.fit.next_device_bytes.is_none() {
        return Err(unbounded(args, &answer).into());
    }
    Ok(FitReport {
        circuit: request.circuit,
        checkpoint: prepared.checkpoint().to_owned(),
        inputs: prepared.inputs_name().to_owned(),
        align: request.align,
        budget,
        gpu,
        free: args.free.name(),
        context: args.context,
        answer,
        profile: profile_report(&prepared),
    })
}

/// The serving profile of the prepared inputs, as the outputs state it.
fn profile_report(prepared: &Prepared) -> Option<ProfileReport> {
    let profile = prepared.inputs().serving()?;
    let view = prepared.inputs().view();
    Some(ProfileReport {
        source: prepared.inputs_name().to_owned(),
        verify_rows: profile.verify_rows,
        ring_depth: profile.ring_depth,
        prefix_snapshots: profile.prefix_snapshots,
        draft_kv: profile.draft_kv,
        tree_nodes: profile.tree_nodes,
        kv_block_size: profile.kv.map(|kv| kv.block_size),
        formats: view
            .inputs()
            .formats
            .iter()
            .map(|(key, choice)| ((*key).to_owned(), choice.to_string()))
            .collect(),
    })
}

/// With `--gpu`: the GPU, the weights read and split over the ranks, and the state's budget.
///
/// # Errors
/// Weights that cannot be read, or weights and a reserve that take the whole usable share.
fn gpu(args: &FitArgs, prepared: &Prepared) -> Result<Option<GpuReport>, Diagnostics> {
    let Some(total) = args.gpu else {
        return Ok(None);
    };
    let weights = match &args.weights {
        Some(arg) => weights::read(arg)?,
        None => Weights {
            bytes: 0,
            source: "none given".to_owned(),
        },
    };
    // Every GPU of `tp x pp` holds its share of the weights.
    let ranks = prepared
        .ranks()
        .counts
        .tp
        .saturating_mul(prepared.ranks().counts.pp);
    let memory = GpuMemory::sharded(
        total,
        args.utilization.unwrap_or(Utilization::VLLM_DEFAULT),
        weights.bytes,
        ranks,
        args.reserve.unwrap_or(0),
    );
    let budget = memory.state_budget().map_err(|shortfall| {
        Diagnostic::error(format!(
            "the GPU leaves the state nothing: {shortfall}"
        ))
        .note(format!(
            "usable: {} B of {total} B ({} of it); weights {} B a GPU ({}); reserve {} B",
            shortfall.usable, memory.utilization, memory.weights, weights.source, memory.reserve
        ))
        .help("a larger `--gpu`, a higher `--utilization`, a smaller `--reserve`, or more ranks (`--tp`, `--pp`)")
    })?;
    Ok(Some(GpuReport {
        memory,
        ranks,
        weights_total: weights.bytes,
        weights_source: weights.source,
        budget,
    }))
}

/// Fits what `prepared` asks for: on one GPU, or on each rank asked for (every rank when none
/// is), one rank after the other, keeping the smallest answer (the first of equal ones).
fn fit(
    args: &FitArgs,
    budget: u64,
    request: &Request,
    prepared: &Prepared,
) -> Result<FitAnswer, Diagnostics> {
    let Some(ranks) = prepared.ranks().listed() else {
        return fit_rank(args, budget, request, prepared, prepared.decls(), None);
    };
    let mut binding: Option<FitAnswer> = None;
    for rank in ranks {
        let held = prepared.rank(rank)?;
        let answer = fit_rank(
            args,
            budget,
            request,
            prepared,
            &held.decls,
            Some(held.parallel_rank),
        )?;
        if binding
            .as_ref()
            .is_none_or(|b| answer.fit.value < b.fit.value)
        {
            binding = Some(answer);
        }
    }
    binding.ok_or_else(|| Diagnostics::from(Diagnostic::error("no rank to fit")))
}

/// Fits `decls`, the prepared checkpoint's states on one GPU or those of the rank `parallel_rank`.
fn fit_rank(
    args: &FitArgs,
    budget: u64,
    request: &Request,
    prepared: &Prepared,
    decls: &[StateDecl],
    parallel_rank: Option<ParallelRank>,
) -> Result<FitAnswer, Diagnostics> {
    let view = prepared.inputs().view();
    let inputs = view.inputs();
    let plan_error = |error| located_plan_error(&error, request, prepared.inputs(), decls);
    let context = args.context.unwrap_or(0);
    let profile = prepared.inputs().serving();
    // Under a profile the free input is the profile's (a draft pool it ties to the main one
    // grows with it); without one, only the main pool's blocks can be free.
    let free = match args.free {
        Free::KvBlocks => ProfileFree::KvBlocks,
        Free::Sequences => ProfileFree::Sequences { context },
    };
    let fit = match (args.free, &profile) {
        (_, Some(profile)) => fit_profile(decls, inputs.formats, profile, free, args.align, budget),
        (Free::KvBlocks, None) => fit_kv_blocks(decls, &inputs, args.align, budget),
        (Free::Sequences, None) => {
            let d = Diagnostic::error(format!(
                "`--for sequences` varies the inputs' `[serving]` profile, and `{}` has none",
                prepared.inputs_name()
            ))
            .help("add a `[serving]` table (docs/inputs.md), or leave out `--inputs` for the built-in profile");
            return Err(d.in_file(prepared.inputs_name()).into());
        }
    };
    let fit = fit.map_err(|error| match error {
        FitError::Plan(error) => plan_error(error),
        FitError::NoKvPool => {
            let d = Diagnostic::error("`--for kv-blocks` needs a `[kv]` pool in the inputs").help(
                "add `[kv]` with `blocks` and `block_size` (its `blocks` is what fit solves for)",
            );
            match &args.inputs {
                Some(path) => d.in_file(path),
                None => d,
            }
        }
        FitError::TooSmall { needs } => budget_refused(args, budget, None, needs),
        FitError::NoneFits { empty, needs } => budget_refused(args, budget, Some(empty), needs),
    })?;
    // The per-unit figures, from the plan at the answer.
    let counts = match &profile {
        Some(profile) => profile.varied(free, fit.value).inputs().map_err(|fault| {
            plan_error(PlanError::of_fault(fault, "the serving profile".to_owned()))
        })?,
        None => StateInputs {
            kv: inputs.kv.map(|kv| KvInputs {
                blocks: fit.value,
                ..kv
            }),
            ..inputs
        },
    };
    let plan = DynamicPlan::new(
        decls,
        &StateInputs {
            formats: inputs.formats,
            ..counts
        },
        args.align,
    )
    .map_err(plan_error)?;
    let capacity = Capacity::of(
        &plan,
        decls,
        &StateInputs {
            formats: inputs.formats,
            ..counts
        },
        args.align,
    );
    let pool = plan.pool().map(|pool| PoolCapacity::of(pool, budget));
    Ok(FitAnswer {
        parallel_rank,
        fit,
        capacity,
        pool,
    })
}
