//! The `metrale-fuzz` command line: which targets, the seed, the executions per target, the
//! jobs, where findings go, and `--replay FILE` for one saved input. Prints a paragraph per
//! target, then a Markdown table of the run; exits 1 when there is a finding (with
//! `--skip-known`, one that is not a known defect), 2 on a usage or setup error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use metrale_fuzz::corpus::{Corpus, workspace_root};
use metrale_fuzz::report::TABLE_HEADER;
use metrale_fuzz::run::{Config, replay, run};
use metrale_fuzz::targets::Target;

/// A target on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    /// Shape expressions: parse, canonical form, eval.
    Shape,
    /// Circuit files: load, instantiate, plan, layout.
    Circuit,
    /// Block libraries on disk under an intact circuit.
    Library,
    /// Inputs files: parse, generated plans == dynamic plans.
    Inputs,
    /// The generator and the macro core.
    Generate,
    /// `metrale-codegen fit`: options, inputs files with `[serving]` and `[parallel]`.
    Fit,
    /// `metrale-codegen plan`: ranks, JSON, terms, the SVG map.
    Plan,
    /// `metrale-codegen import` of mutated configs: what it prints loads.
    Import,
    /// `metrale-codegen gen -o` and two `Builder`s on one folder.
    Write,
    /// rustc on accepted generated modules (slow: a `cargo check` each).
    Compile,
    /// The allocator against its reference model: aliasing, references, refusals.
    Alloc,
    /// The registry of checkpoints against its documented rules: names, ids, ambiguity.
    Registry,
    /// `config.json` read at run time: `with_config`, `dims_from_config`, generated == dynamic.
    Config,
    /// `fit --weights` on mutated safetensors headers and indexes, FIFOs, loops, folders.
    Weights,
    /// Every target, in that order.
    All,
}

/// Fuzzes metrale's loader, plans, generator, macro core, CLI commands and Builder in-process,
/// and rustc on the modules it generates.
#[derive(Debug, Parser)]
#[command(name = "metrale-fuzz", version)]
struct Args {
    /// The target to fuzz.
    #[arg(long, value_enum, default_value_t = Which::All)]
    target: Which,
    /// The seed of every random stream: the same seed, execs and jobs give the same run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Executions per target.
    #[arg(long, default_value_t = 10_000)]
    execs: u64,
    /// Threads per target, each with its own stream.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Where failing inputs are saved.
    #[arg(long, value_name = "DIR")]
    findings: Option<PathBuf>,
    /// An execution slower than this many milliseconds is a finding.
    #[arg(long, default_value_t = 2000)]
    slow_ms: u64,
    /// The longest mutated input, in bytes.
    #[arg(long, default_value_t = 256 * 1024)]
    max_len: usize,
    /// Findings of the known defects (listed in fuzz/KNOWN.md) do not fail the run.
    #[arg(long)]
    skip_known: bool,
    /// Re-run one saved input instead of fuzzing.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
    /// With --replay: shrink the input while it gives the same finding, and save the result.
    #[arg(long, requires = "replay")]
    minimize: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match fuzz(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("metrale-fuzz: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs what `args` say; `Ok(false)` when there is a finding that fails the run.
fn fuzz(args: &Args) -> Result<bool, String> {
    let root = workspace_root();
    let corpus = Corpus::read(&root)?;
    let real = metrale_fuzz::compare::load_all(&root)?;
    let targets = match args.target {
        Which::Shape => vec![Target::Shape],
        Which::Circuit => vec![Target::Circuit],
        Which::Library => vec![Target::Library],
        Which::Inputs => vec![Target::Inputs],
        Which::Generate => vec![Target::Generate],
        Which::Fit => vec![Target::Fit],
        Which::Plan => vec![Target::Plan],
        Which::Import => vec![Target::Import],
        Which::Write => vec![Target::Write],
        Which::Compile => vec![Target::Compile],
        Which::Alloc => vec![Target::Alloc],
        Which::Registry => vec![Target::Registry],
        Which::Config => vec![Target::Config],
        Which::Weights => vec![Target::Weights],
        Which::All => Target::ALL.to_vec(),
    };
    let config = Config {
        targets: targets.clone(),
        seed: args.seed,
        execs: args.execs,
        jobs: args.jobs,
        findings: args
            .findings
            .clone()
            .unwrap_or_else(|| root.join("fuzz/findings")),
        slow: Duration::from_millis(args.slow_ms),
        max_len: args.max_len,
    };
    if let Some(path) = &args.replay {
        let chosen = (args.target != Which::All).then(|| targets[0]);
        let (findings, text) = replay(&config, &corpus, &real, path, chosen, args.minimize)?;
        print!("{text}");
        for finding in &findings {
            let known = finding
                .known()
                .map_or(String::new(), |k| format!(" [known: {k}]"));
            println!("finding{known}: {}", finding.message);
        }
        return Ok(findings.is_empty()
            || (args.skip_known && findings.iter().all(|f| f.known().is_some())));
    }
    println!(
        "metrale-fuzz: seed {}, {} execs per target, {} jobs, {} circuits, {} libraries, {} inputs files, {} shapes, {} configs, {} words",
        config.seed,
        config.execs,
        config.jobs,
        corpus.circuits.len(),
        corpus.libraries.len(),
        corpus.inputs.len(),
        corpus.shapes.len(),
        corpus.configs.len(),
        corpus.words.len()
    );
    let outcome = run(&config, &corpus, &real)?;
    for (target, stats) in &outcome.stats {
        print!("{}", stats.paragraph(target.name()));
    }
    let mut failing = 0;
    if !outcome.signatures.is_empty() {
        println!("\nfindings (saved under {}):", config.findings.display());
        for (signature, count, known) in &outcome.signatures {
            let skipped = args.skip_known && known.is_some();
            let known = known.map_or(String::new(), |k| format!(" [known: {k}]"));
            println!("  {count:>6} x {signature}{known}");
            if !skipped {
                failing += count;
            }
        }
    }
    println!("\n{TABLE_HEADER}");
    for (target, stats) in &outcome.stats {
        println!("{}", stats.row(target.name(), config.jobs));
    }
    Ok(failing == 0)
}
