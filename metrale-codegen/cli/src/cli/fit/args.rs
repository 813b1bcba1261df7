//! `fit`'s command line: its options (clap's [`FitArgs`]), the free input ([`Free`]), and the
//! [`Request`] they make, read once and never changed after.
//!
//! Invariants: without `--inputs`, `--for kv-blocks` plans from the built-in default inputs
//! and `--for sequences` from the built-in serving profile; `--context` is a count of at least
//! one (`parse_count`), sizes are `parse_size`'s.

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, ValueEnum};
use metrale_circuit::DEFAULT_ALIGN;
use metrale_circuit::serving::Utilization;

use super::super::json;
use super::super::request::{DEFAULT_INPUTS, InputsSource, ParallelArgs, Request, SERVING_INPUTS};

/// Find the most of one input a device budget holds.
///
/// Sizes the checkpoint's plan under the inputs with one input free and prints its largest
/// value whose device arena (alignment padding included) fits the budget, the device bytes at
/// that value and at one more, and the bytes one sequence slot and one KV token take. With
/// `--for kv-blocks` the free input is the main KV side's `blocks` (a draft pool stays as
/// given, unless the inputs' `[serving]` profile ties it to the main pool with `draft_kv`);
/// with `--for sequences --context TOKENS`, the `sequences` of the inputs' `[serving]`
/// profile, each holding TOKENS KV tokens, so slots, verify, caches and the KV blocks all scale
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
        value_parser = metrale_circuit::load::text::parse_count
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
    /// The main KV blocks.
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

/// Reads a `--budget`: [`metrale_circuit::load::text::parse_size`].
pub fn size(text: &str) -> Result<u64, String> {
    metrale_circuit::load::text::parse_size(text)
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
                .map_or(InputsSource::BuiltIn(built_in), InputsSource::File),
            align: self.align,
            parallel: self.parallel.clone(),
        }
    }
}
