//! The command line of `engine` ([`Args`]): a circuit file, a checkpoint by name, a device
//! budget, and a serving profile: an inputs file with `[serving]` (and `[formats]`), flags over
//! it, or flags alone ([`ProfileFlags`]).
//!
//! Invariants:
//! - Parsing is clap's: a malformed, unknown or missing argument is a usage error (exit 2);
//!   tests build [`Args`] with `Args::try_parse_from`, the same parser as the binary.
//! - A size (`--budget`, `--max-memory`) is bytes or a number with a unit, `KB` `MB` `GB` `TB`
//!   in powers of 1000 or `KiB` `MiB` `GiB` `TiB` in powers of 1024, as `metrale-codegen fit`
//!   takes it.

use clap::Parser;
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::{DEFAULT_ALIGN, StateDtype};

/// Run a worked engine on a circuit's plan and prove that no two units alias.
///
/// Fits the most sequences the device budget holds at the profile's context
/// (`fit_sequences`), plans at that count, allocates one aligned host buffer per memory space
/// as a stand-in for device memory, and runs sequence slots, KV blocks, prefix snapshots and
/// verifies through the plan's addresses, stamping every unit it writes with a tag. Exit
/// status: 0 when every tag reads back intact, 1 on any failure, 2 on a usage error.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "engine", version)]
pub struct Args {
    /// The circuit file.
    #[arg(value_name = "circuit.toml")]
    pub circuit: String,
    /// The checkpoint to run, by name (e.g. `tiny`).
    #[arg(long, value_name = "NAME")]
    pub checkpoint: String,
    /// The device byte budget: bytes, or a number with a unit (16MiB, 64MB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub budget: u64,
    /// An inputs file with a `[serving]` profile (e.g. metrale-codegen/cli/inputs/serving.toml);
    /// the flags below override its fields.
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<String>,
    /// The serving profile's fields.
    #[command(flatten)]
    pub profile: ProfileFlags,
    /// The alignment of every region in bytes, a power of two.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ALIGN)]
    pub align: u64,
    /// The most bytes the arenas may take together: the engine allocates them for real.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256MiB")]
    pub max_memory: u64,
}

/// The fields of a serving profile (docs/inputs.md, `[serving]`), each overriding the inputs
/// file's; `sequences` is not one of them: the fit decides it.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct ProfileFlags {
    /// KV tokens per sequence, the context the fit sizes each sequence at (`32k` = 32,000,
    /// `32Ki` = 32,768, as `metrale-codegen fit --context` reads it) [default: the profile's
    /// `tokens_per_sequence`].
    #[arg(long, value_name = "TOKENS", value_parser = metrale_circuit::load::text::parse_count)]
    pub context: Option<u64>,
    /// Rows a speculative step verifies (K); 0 for no verify.
    #[arg(long, value_name = "K")]
    pub verify_rows: Option<u64>,
    /// Tokens per KV block (gives the profile KV blocks if it has none).
    #[arg(long, value_name = "TOKENS")]
    pub block_size: Option<u64>,
    /// Tokens one chunked-prefill step writes (needed by sliding-window sides).
    #[arg(long, value_name = "TOKENS")]
    pub chunk_tokens: Option<u64>,
    /// Whether the draft head's KV blocks are as many as the main ones.
    #[arg(long, value_name = "BOOL")]
    pub draft_kv: Option<bool>,
    /// Prefix-cache snapshots per sequence.
    #[arg(long, value_name = "N")]
    pub prefix_snapshots: Option<u64>,
    /// Decode-rollback ring slots per sequence slot; 0 for no ring.
    #[arg(long, value_name = "N")]
    pub ring_depth: Option<u64>,
    /// Whether the verify is carried (a stash and a table row per verify slot).
    #[arg(long, value_name = "BOOL")]
    pub carry: Option<bool>,
    /// Token-tree nodes per verify slot; 0 for no tree.
    #[arg(long, value_name = "N")]
    pub tree_nodes: Option<u64>,
    /// Hidden rows captured for the draft head.
    #[arg(long, value_name = "ROWS")]
    pub capture_rows: Option<u64>,
    /// Prompt-lookup history tokens per sequence; 0 for no lookup index.
    #[arg(long, value_name = "TOKENS")]
    pub lookup_history: Option<u64>,
    /// What a format key holds (`kv_cache_dtype=fp8`, or a packing its states declare:
    /// `kv_cache_dtype=fp8_ds_mla`); may be repeated, and overrides the inputs file's
    /// `[formats]`.
    #[arg(long = "format", value_name = "KEY=DTYPE", value_parser = parse_format)]
    pub formats: Vec<(String, FormatChoice<String>)>,
}

/// Reads a size: [`metrale_circuit::load::text::parse_size`], the one the CLI's `fit --budget` reads.
///
/// # Errors
/// The message clap prints for a malformed or overflowing size.
pub fn parse_size(text: &str) -> Result<u64, String> {
    metrale_circuit::load::text::parse_size(text)
}

/// Reads `KEY=DTYPE` or `KEY=LAYOUT`.
///
/// # Errors
/// The message clap prints for a missing `=`, or a value that is neither a dtype nor a layout
/// name.
pub fn parse_format(text: &str) -> Result<(String, FormatChoice<String>), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=DTYPE, found `{text}`"))?;
    let choice = match FormatChoice::parse(value) {
        Some(FormatChoice::Dtype(dtype)) => FormatChoice::Dtype(dtype),
        Some(FormatChoice::Packing(layout)) => FormatChoice::Packing(layout.to_owned()),
        None => {
            return Err(format!(
                "unknown dtype `{value}`: expected one of {}, or a packing's name",
                StateDtype::SPELLINGS.join(", ")
            ));
        }
    };
    Ok((key.to_owned(), choice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_formats() {
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("64MB"), Ok(64_000_000));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("16 mib").is_err());
        assert!(parse_size("99999999TiB").is_err());
        assert_eq!(
            parse_format("kv_cache_dtype=fp8"),
            Ok((
                "kv_cache_dtype".to_owned(),
                FormatChoice::Dtype(StateDtype::Fp8)
            ))
        );
        assert!(parse_format("kv_cache_dtype").is_err());
        // A name that is no dtype is a layout; the plan checks that the key's states have it.
        assert_eq!(
            parse_format("kv=fp8_ds_mla"),
            Ok((
                "kv".to_owned(),
                FormatChoice::Packing("fp8_ds_mla".to_owned())
            ))
        );
        assert!(parse_format("kv=fp-9").is_err());
    }

    #[test]
    fn the_command_line() {
        let args = Args::try_parse_from([
            "engine",
            "c.toml",
            "--checkpoint",
            "tiny",
            "--budget",
            "16MiB",
            "--carry",
            "false",
            "--format",
            "a=f32",
            "--format",
            "b=u8",
        ])
        .unwrap();
        assert_eq!(args.budget, 16 << 20);
        assert_eq!(args.profile.carry, Some(false));
        assert_eq!(args.profile.formats.len(), 2);
        assert_eq!(args.align, DEFAULT_ALIGN);
        assert!(Args::try_parse_from(["engine", "c.toml", "--budget", "1"]).is_err());
    }
}
