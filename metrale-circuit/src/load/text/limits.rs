//! The loader's limits: how large a circuit (and an inputs file) it accepts.
//!
//! Each limit is chosen so that everything the loader accepts, the generator turns into a
//! module in linear time and memory and rustc compiles (`scripts/limits.py` builds the largest
//! circuit at each limit and compiles its module; BENCHMARKS.md has the figures), while the
//! largest real model is far inside every one: in the zoo, the most layers of a checkpoint are
//! 98 (Nemotron-H-47B), the most state instances 472 (Qwen3.5-27B: 664 terms with their
//! verify and cache holdings), the most states of a circuit 17 (Qwen3.5, its library's
//! included), the longest shape 6 factors, and the largest circuit file 16 KB.
//!
//! Invariants:
//! - A circuit over a limit gets one located error that names the limit and its value, at
//!   the first item past it (the items past it are not walked, so a huge file costs no more
//!   than its read); the file is never silently truncated.
//! - Every count here bounds what the generated code repeats: struct fields (layers per
//!   checkpoint, blocks per layer kind, states per block, dims), enum variants (layer kinds,
//!   checkpoints), table rows (state terms) and expression depth (shape terms).

use super::diag::Diagnostic;

/// The most bytes of one file the loader reads (the circuit, each block library, an inputs
/// file).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most block libraries one circuit reads.
pub const MAX_LIBRARIES: usize = 64;

/// The most errors kept and shown for one load; the rest are counted in a last line
/// ("and N more errors").
pub const MAX_ERRORS: usize = 100;

/// The most bytes of a name that becomes a Rust identifier (arch, dim, block, state id, format
/// key, layer kind, checkpoint, include).
pub const MAX_NAME_BYTES: usize = 64;

/// The most terms (dims and numbers) of one shape or dim expression.
pub const MAX_SHAPE_TERMS: usize = 32;

/// The most layers of one checkpoint. rustc compiles a plan struct of one field per layer;
/// from about 6,000 fields its derives overflow rustc's stack.
pub const MAX_LAYERS: u64 = 1024;

/// The most ranks (GPUs) of one tensor- and pipeline-parallel layout, `tp x pp`: the CLI lists
/// every rank in `plan --json`, so this bounds its output; a hundred times the largest
/// deployments (a few thousand GPUs serve one model).
pub const MAX_RANKS: u64 = 1 << 16;

/// The most checkpoints of one circuit.
pub const MAX_CHECKPOINTS: usize = 64;

/// The most blocks defined over the circuit and its libraries.
pub const MAX_BLOCKS: usize = 256;

/// The most states declared over every block: each is a unit function and a struct field of
/// its block in the generated code, and rustc's time grows faster than their count (a module of
/// 1,024 distinct states builds in about 11 s, debug; BENCHMARKS.md).
pub const MAX_STATES: usize = 1024;

/// The most states of one block.
pub const MAX_STATES_PER_BLOCK: usize = 64;

/// The most packings of one state (schema 3).
pub const MAX_PACKINGS_PER_STATE: usize = 16;

/// The most parts of one packing (schema 3).
pub const MAX_PARTS_PER_PACKING: usize = 16;

/// The most nodes of one block.
pub const MAX_NODES_PER_BLOCK: usize = 256;

/// The most blocks in one list: `prologue`, `epilogue`, `draft`, or a layer kind's blocks.
pub const MAX_BLOCKS_PER_LIST: usize = 64;

/// The most layer kinds of a layout.
pub const MAX_LAYER_KINDS: usize = 64;

/// The most dims: declared ones, and derived ones, each.
pub const MAX_DIMS: usize = 256;

/// The most state terms (one per state per block instance of every layer) over all the
/// checkpoints of a circuit: the rows of the generated tables.
pub const MAX_TERMS: usize = 32_768;

/// The error for an item past a limit: "too many `what`: the limit is `max`", with a help
/// line saying why there is one.
pub(crate) fn too_many(what: &str, max: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(format!("too many {what}: the limit is {max}"))
        .label("past the limit")
        .help(
            "the loader's limits keep every accepted circuit's generated module compilable: \
             see \"Limits\" in docs/circuit-schema.md",
        )
}
