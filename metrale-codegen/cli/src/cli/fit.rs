//! `metrale-codegen fit <circuit.toml> (--budget SIZE | --gpu SIZE [--weights SIZE|PATH]
//! [--reserve SIZE] [--utilization F]) (--for kv-blocks | --for sequences --context TOKENS)
//! [--checkpoint NAME] [--inputs FILE] [--align N] [--json] [--tp T] [--pp P] [--tp-rank R
//! --pp-rank S]`: the largest value of one free input whose plan's device arena fits a byte
//! budget, exact to the byte, before any weight is loaded; over several ranks, that of the
//! rank that binds first. With `--gpu`, the budget is what the GPU leaves the state
//! ([`GpuMemory::state_budget`]): its usable share less the weights (read from a checkpoint's
//! safetensors metadata by [`super::weights`], split evenly over the ranks) and a reserve.
//!
//! The path of `plan` ([`super::plan`]) up to its plans: the arguments make a [`Request`], and
//! [`prepare`] loads and checks what it names; then each rank asked for is prepared and fitted
//! in turn, and the answer ([`FitReport`]) is rendered by [`super::table`] or [`super::json`].
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

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, ValueEnum};
use metrale_circuit::dynamic::{DynamicPlan, StateDecl, fit_kv_blocks, fit_profile};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::serving::{
    Capacity, FitError, GpuMemory, PoolCapacity, ProfileFree, Utilization,
};
use metrale_circuit::{DEFAULT_ALIGN, KvInputs, PlanError, StateInputs};

use super::Outcome;
use super::blame::located_plan_error;
use super::prepared::{Placement, Prepared, prepare};
use super::report::{FitAnswer, FitReport, GpuReport, ProfileReport};
use super::request::{DEFAULT_INPUTS, Inputs, ParallelArgs, Request, SERVING_INPUTS};
use super::weights::Weights;
use super::{json, table};

/// Find the most of one input a device budget holds.
///
/// Sizes the checkpoint's plan under the inputs with one input free and prints its largest
/// value whose device arena (alignment padding included) fits the budget, the device bytes at
/// that value and at one more, and the bytes one sequence slot and one KV token take. With
/// `--for kv-blocks` the free input is the main KV pool's `blocks` (a draft pool stays as
/// given, unless the inputs' `[serving]` profile ties it to the main pool with `draft_kv`);
/// with `--for sequences --context TOKENS`, the `sequences` of the inputs' `[serving]`
/// profile, each holding TOKENS KV tokens, so slots, verify, caches and the KV pool all scale
/// (without `--inputs`, the built-in metrale-codegen/cli/inputs/serving.toml). Exits 1 on a bad
/// circuit or inputs, or when even 0 exceeds the budget.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
#[command(after_long_help = json::FIT_FIELDS)]
pub struct FitArgs {
    /// The circuit file.
    #[arg(value_name = "circuit.toml", value_parser = NonEmptyStringValueParser::new())]
    pub circuit: String,
    /// The device byte budget of the state alone: bytes, or a number with a unit (80GiB, 80GB,
    /// 512MiB). Or give `--gpu`.
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = size,
        required_unless_present = "gpu",
        conflicts_with = "gpu"
    )]
    pub budget: Option<u64>,
    /// The GPU's memory (24GiB, 80GiB): the state's budget is then `--utilization` of it less
    /// the weights and the reserve.
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub gpu: Option<u64>,
    /// The weights, with `--gpu`: bytes, or read from safetensors metadata (a
    /// model.safetensors.index.json, a .safetensors file, or a checkpoint's folder); over
    /// several ranks, split evenly [default: 0].
    #[arg(long, value_name = "SIZE|PATH")]
    pub weights: Option<String>,
    /// With `--gpu`: bytes kept for activations, CUDA graphs and workspace [default: 0].
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub reserve: Option<u64>,
    /// With `--gpu`: the share of its memory the server may use, vLLM's
    /// `gpu_memory_utilization` [default: 0.92, vLLM's].
    #[arg(long, value_name = "FRACTION", value_parser = Utilization::parse)]
    pub utilization: Option<Utilization>,
    /// The free input.
    #[arg(long = "for", value_name = "INPUT")]
    pub free: Free,
    /// KV tokens per sequence, for `--for sequences` (required with it): a count, or with a
    /// unit (`32k` = 32,000, `32Ki` = 32,768).
    #[arg(
        long,
        value_name = "TOKENS",
        required_if_eq("free", "sequences"),
        value_parser = metrale_circuit::load::parse_count
    )]
    pub context: Option<u64>,
    /// The checkpoint to size [default: the circuit's first].
    #[arg(long, value_name = "NAME")]
    pub checkpoint: Option<String>,
    /// The plan inputs file [default: the built-in metrale-codegen/cli/inputs/default.toml, or
    /// inputs/serving.toml for `--for sequences`].
    #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
    pub inputs: Option<String>,
    /// The alignment of every region in bytes, a power of two.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ALIGN)]
    pub align: u64,
    /// Print the answer as JSON: `{"for", "value", "budget", "device_bytes",
    /// "next_device_bytes"}`, over several ranks with `tp`, `pp`, `tp_rank`, `pp_rank` (the
    /// rank that binds).
    #[arg(long)]
    pub json: bool,
    /// Tensor- and pipeline-parallel ranks: the budget is per GPU, so over several ranks the
    /// answer is that of the rank that binds first (or of the rank given).
    #[command(flatten)]
    pub parallel: ParallelArgs,
}

/// The input `fit` solves for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Free {
    /// The main KV pool's blocks.
    KvBlocks,
    /// The serving profile's concurrent sequences, at `--context` tokens each.
    Sequences,
}

impl Free {
    /// Its spelling on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Free::KvBlocks => "kv-blocks",
            Free::Sequences => "sequences",
        }
    }
}

/// Reads a `--budget`: [`metrale_circuit::load::parse_size`].
pub fn size(text: &str) -> Result<u64, String> {
    metrale_circuit::load::parse_size(text)
}

impl FitArgs {
    /// The facts of this command line `fit` plans from: without `--inputs`, the built-in
    /// default inputs, or for `--for sequences` the built-in serving profile.
    pub fn request(&self) -> Request {
        let built_in = match self.free {
            Free::KvBlocks => DEFAULT_INPUTS,
            Free::Sequences => SERVING_INPUTS,
        };
        Request {
            circuit: self.circuit.clone(),
            checkpoint: self.checkpoint.clone(),
            inputs: self
                .inputs
                .clone()
                .map_or(Inputs::BuiltIn(built_in), Inputs::File),
            align: self.align,
            parallel: self.parallel.clone(),
        }
    }
}

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

/// The refusal of an answer the budget does not bound: the search reached the plan's own
/// limit (one more cannot be planned, its sizes past u64) with the budget still unspent, so
/// nothing in the plan grows with the free input and the "answer" would be that limit.
fn unbounded(args: &FitArgs, answer: &FitAnswer) -> Diagnostic {
    let free = args.free.name();
    let d = Diagnostic::error(format!(
        "`--for {free}` has no answer: no budget bounds it, the plan's device bytes are {} B at \
         {} {free} and one more cannot be planned (its sizes pass u64)",
        answer.fit.device_bytes, answer.fit.value
    ));
    let d = match args.free {
        Free::KvBlocks => d.note(
            "no state of the checkpoint is kept per KV block: its KV (if any) does not grow \
             with the pool's `blocks`",
        ),
        Free::Sequences => d.note(format!(
            "no state of the checkpoint grows with the sequences at `--context {}`",
            args.context.unwrap_or(0)
        )),
    };
    let d = d.help("fit the input the checkpoint's states grow with (`--for kv-blocks` or `--for sequences --context TOKENS`)");
    match &args.inputs {
        Some(path) => d.in_file(path),
        None => d,
    }
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
        Some(arg) => super::weights::weights(arg)?,
        None => Weights {
            bytes: 0,
            source: "none given".to_owned(),
        },
    };
    // Every GPU of `tp x pp` holds its share of the weights, evenly split.
    let ranks = prepared
        .ranks()
        .counts
        .tp
        .saturating_mul(prepared.ranks().counts.pp)
        .max(1);
    let memory = GpuMemory {
        total,
        utilization: args.utilization.unwrap_or(Utilization::VLLM_DEFAULT),
        weights: weights.bytes.div_ceil(ranks),
        reserve: args.reserve.unwrap_or(0),
    };
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
            Some(held.placement),
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

/// Fits `decls`, the prepared checkpoint's states on one GPU or those of the rank `placement`.
fn fit_rank(
    args: &FitArgs,
    budget: u64,
    request: &Request,
    prepared: &Prepared,
    decls: &[StateDecl],
    placement: Option<Placement>,
) -> Result<FitAnswer, Diagnostics> {
    let view = prepared.inputs().view();
    let inputs = view.inputs();
    let plan_error = |error| located_plan_error(&error, request, prepared.inputs(), decls);
    let context = args.context.unwrap_or(0);
    let profile = prepared.inputs().serving();
    // Under a profile the free input is the profile's (a draft pool it ties to the main one
    // grows with it); without one, only the main pool's blocks can be free.
    let free = match args.free {
        Free::KvBlocks => ProfileFree::PoolBlocks,
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
        placement,
        fit,
        capacity,
        pool,
    })
}

/// Why `budget` holds nothing: even 0 needs `needs` device bytes (`empty` `None`), or 0 takes
/// `empty` and 1 needs `needs` (`u64::MAX`: the plan of one could not be made).
fn budget_refused(args: &FitArgs, budget: u64, empty: Option<u64>, needs: u64) -> Diagnostic {
    let Some(empty) = empty else {
        return Diagnostic::error(format!(
            "a budget of {budget} bytes is too small: even 0 {} need {needs} device bytes",
            args.free.name()
        ))
        .help(format!(
            "the smallest budget that fits anything is {needs} bytes"
        ));
    };
    let one = match args.free {
        Free::KvBlocks => "KV block",
        Free::Sequences => "sequence",
    };
    if needs == u64::MAX {
        let lower = match args.free {
            Free::KvBlocks => "the counts of the inputs".to_owned(),
            Free::Sequences => format!("`--context {}`", args.context.unwrap_or(0)),
        };
        return Diagnostic::error(format!(
            "no budget holds one {one}: the plan of one overflows u64 (0 take {empty} device \
             bytes)"
        ))
        .help(format!("lower {lower}"));
    }
    Diagnostic::error(format!(
        "a budget of {budget} bytes holds no {one}: 0 take {empty} device bytes, 1 needs {needs}"
    ))
    .help(format!(
        "the smallest budget that serves one is {needs} bytes ({} more)",
        needs.saturating_sub(budget)
    ))
}
