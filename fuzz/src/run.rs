//! The fuzzing loop: per target, `jobs` threads each with its own seed stream draw a seed
//! (or an input it already mutated and that was accepted), mutate it, run the target under
//! [`crate::guard::guarded`], time it, count it, and record every panic, violation and slow
//! execution as a finding; and the replay (and minimization) of one saved input.
//!
//! Invariants: a run is a function of its configuration (seed, execs, jobs, targets), apart
//! from the timing figures and which executions are slow; each job makes exactly its share of
//! the executions, so a run's counts do not depend on the machine's speed. An expensive target
//! (`compile`) is given inputs [`Context::worth`] running: up to `WORTH_TRIES` more draws of
//! the same stream, so that too is a function of the seed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::compare::Loaded;
use crate::corpus::Corpus;
use crate::findings::{Finding, Store};
use crate::guard::guarded;
use crate::mutate::Mutator;
use crate::report::Stats;
use crate::targets::{Context, Exec, Target};

/// How many accepted mutants a job keeps to mutate further.
const POOL: usize = 64;

/// How many more mutations a job draws for an input [`Context::worth`] running.
const WORTH_TRIES: usize = 32;

/// What a run does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The targets, in order.
    pub targets: Vec<Target>,
    /// The seed of every stream.
    pub seed: u64,
    /// Executions per target (split over the jobs).
    pub execs: u64,
    /// Threads per target.
    pub jobs: usize,
    /// Where findings are saved.
    pub findings: PathBuf,
    /// An execution slower than this is a finding.
    pub slow: Duration,
    /// The longest mutated input.
    pub max_len: usize,
}

/// The outcome of a run: each target's stats, and the signatures found with their counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Per target, in the order run.
    pub stats: Vec<(Target, Stats)>,
    /// Every finding's signature, with its count and whether it is a known defect.
    pub signatures: Vec<(String, usize, Option<&'static str>)>,
}

/// The stream seed of job `job` of `target`: `SplitMix64` of the three.
fn stream_seed(seed: u64, target: Target, job: usize) -> u64 {
    let mut z = seed
        ^ (target as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (job as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A scratch folder for one job, unique in the process.
fn scratch(target: Target, job: usize) -> PathBuf {
    std::env::temp_dir().join(format!(
        "metrale-fuzz-{}-{}-{job}",
        std::process::id(),
        target.name()
    ))
}

/// Runs `config` over `corpus`, `real` the circuits compared with their generated modules.
///
/// # Errors
/// When a job cannot set up (scratch folder, default inputs) or a finding cannot be saved.
pub fn run(config: &Config, corpus: &Corpus, real: &[Loaded]) -> Result<Outcome, String> {
    crate::guard::install_quiet_hook();
    let store = Store::new(config.findings.clone());
    let mut stats = Vec::new();
    for &target in &config.targets {
        let started = Instant::now();
        let jobs = config.jobs.max(1);
        let results: Vec<Result<Stats, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..jobs)
                .map(|job| {
                    let share = config.execs / jobs as u64
                        + u64::from((job as u64) < config.execs % jobs as u64);
                    let store = &store;
                    scope.spawn(move || {
                        let context = Context::new(corpus, real, scratch(target, job), job)?;
                        let mut mutator =
                            Mutator::new(stream_seed(config.seed, target, job), corpus);
                        mutator.max_len = config.max_len;
                        let result = job_loop(config, target, share, &context, &mut mutator, store);
                        let _ = std::fs::remove_dir_all(context.scratch());
                        result
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a job panicked outside an execution".to_owned()))
                })
                .collect()
        });
        let mut total = Stats::default();
        for result in results {
            total.merge(result?);
        }
        total.elapsed = started.elapsed();
        stats.push((target, total));
    }
    let signatures = store
        .signatures()
        .into_iter()
        .map(|(signature, (count, known))| (signature, count, known))
        .collect();
    Ok(Outcome { stats, signatures })
}

/// One job: `execs` executions of `target`.
fn job_loop(
    config: &Config,
    target: Target,
    execs: u64,
    context: &Context<'_>,
    mutator: &mut Mutator<'_>,
    store: &Store,
) -> Result<Stats, String> {
    let mut stats = Stats::default();
    let mut pool: Vec<(usize, Vec<u8>)> = Vec::new();
    let seeds = context.seed_count(target);
    for _ in 0..execs {
        let (index, base) = if !pool.is_empty() && mutator.below(10) < 3 {
            let (index, bytes) = &pool[mutator.below(pool.len())];
            (*index, bytes.clone())
        } else {
            let index = mutator.below(seeds);
            (index, context.seed(target, index).1.as_bytes().to_vec())
        };
        let mut input = mutator.mutate(&base, target.flavor());
        // An expensive target runs only inputs worth it: a few more draws to find one.
        for _ in 0..WORTH_TRIES {
            if context.worth(target, index, &input) {
                break;
            }
            input = mutator.mutate(&base, target.flavor());
        }
        let label = context.seed_label(target, index);
        let (exec, findings) = execute(config, target, context, index, &label, &input);
        stats.execs += 1;
        if exec.accepted {
            stats.accepted += 1;
            if pool.len() < POOL {
                pool.push((index, input.clone()));
            } else {
                let slot = mutator.below(POOL);
                pool[slot] = (index, input.clone());
            }
        } else {
            stats.refused += 1;
        }
        for line in &exec.errors {
            stats.error(line);
        }
        stats.timed(exec.took, &label);
        for finding in findings {
            stats.findings += 1;
            if finding.known().is_some() {
                stats.known += 1;
            }
            store.record(&finding)?;
        }
    }
    Ok(stats)
}

/// One execution's result, with its time.
pub struct Timed {
    /// Whether it was accepted.
    pub accepted: bool,
    /// Its error lines.
    pub errors: Vec<String>,
    /// How long it took.
    pub took: Duration,
}

/// Runs one input and turns what went wrong into findings.
#[must_use]
pub fn execute(
    config: &Config,
    target: Target,
    context: &Context<'_>,
    index: usize,
    label: &str,
    input: &[u8],
) -> (Timed, Vec<Finding>) {
    let started = Instant::now();
    let result = guarded(|| context.exec(target, index, input));
    let took = started.elapsed();
    let finding = |message: String| Finding {
        target: target.name(),
        seed: label.to_owned(),
        message,
        input: input.to_vec(),
    };
    let (exec, mut findings) = match result {
        Ok(exec) => {
            let findings = exec.violations.iter().cloned().map(finding).collect();
            (exec, findings)
        }
        Err(panic) => (Exec::default(), vec![finding(panic)]),
    };
    if took > config.slow {
        findings.push(finding(format!(
            "slow: {} ms with {} errors on {} bytes",
            took.as_millis(),
            exec.errors.len(),
            input.len()
        )));
    }
    (
        Timed {
            accepted: exec.accepted,
            errors: exec.errors,
            took,
        },
        findings,
    )
}

/// Replays the saved input at `path` (its target from the `.txt` beside it or its name, or
/// `target` when given); with `minimize`, also shrinks it while it still gives a finding of the
/// same signature and saves the smallest beside the findings. Returns the findings of the
/// (possibly minimized) input and a report to print.
///
/// # Errors
/// When the file cannot be read, names no known target or seed, or a job cannot set up.
pub fn replay(
    config: &Config,
    corpus: &Corpus,
    real: &[Loaded],
    path: &Path,
    target: Option<Target>,
    minimize: bool,
) -> Result<(Vec<Finding>, String), String> {
    crate::guard::install_quiet_hook();
    let (input, saved_target, seed) = crate::findings::read_saved(path)?;
    let target = target
        .or_else(|| saved_target.as_deref().and_then(Target::from_name))
        .ok_or_else(|| format!("{}: no target: pass --target", path.display()))?;
    let context = Context::new(corpus, real, scratch(target, 0), 0)?;
    let index = seed
        .as_deref()
        .and_then(|s| context.seed_named(target, s))
        .unwrap_or(0);
    let label = context.seed_label(target, index);
    let run = |bytes: &[u8]| execute(config, target, &context, index, &label, bytes);
    let (timed, mut findings) = run(&input);
    let mut text = format!(
        "{}: target {}, seed {label}, {} bytes: {} in {} ms, {} errors{}\n",
        path.display(),
        target.name(),
        input.len(),
        if timed.accepted {
            "accepted"
        } else {
            "refused"
        },
        timed.took.as_millis(),
        timed.errors.len(),
        timed
            .errors
            .first()
            .map_or(String::new(), |e| format!(" (first: {e})"))
    );
    if minimize && let Some(first) = findings.first().cloned() {
        let signature = first.signature();
        let small = shrink(&input, |bytes| {
            run(bytes).1.iter().any(|f| f.signature() == signature)
        });
        let (_, again) = run(&small);
        if let Some(kept) = again.into_iter().find(|f| f.signature() == signature) {
            let saved = crate::findings::save(&config.findings, &kept)?;
            let _ = writeln!(
                text,
                "minimized to {} bytes: {}",
                small.len(),
                saved.display()
            );
            findings = vec![kept];
        }
    }
    let _ = std::fs::remove_dir_all(context.scratch());
    Ok((findings, text))
}

/// The smallest input found, by removing chunks (halves, then quarters, ... down to single
/// bytes) while `keeps` holds; at most a few thousand tries.
fn shrink(input: &[u8], keeps: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut current = input.to_vec();
    let mut tries = 0;
    let mut chunk = current.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        let mut removed = false;
        while start < current.len() && tries < 4000 {
            let end = (start + chunk).min(current.len());
            let mut candidate = current[..start].to_vec();
            candidate.extend_from_slice(&current[end..]);
            tries += 1;
            if keeps(&candidate) {
                current = candidate;
                removed = true;
            } else {
                start = end;
            }
        }
        if tries >= 4000 || (chunk == 1 && !removed) {
            break;
        }
        if !removed {
            chunk = chunk.div_ceil(2);
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_keeps_what_matters() {
        let small = shrink(b"aaaaXbbbbYcccc", |b| {
            b.contains(&b'X') && b.contains(&b'Y')
        });
        assert_eq!(small, b"XY");
    }

    #[test]
    fn stream_seeds_differ_by_target_and_job() {
        let a = stream_seed(1, Target::Shape, 0);
        assert_ne!(a, stream_seed(1, Target::Shape, 1));
        assert_ne!(a, stream_seed(1, Target::Circuit, 0));
        assert_ne!(a, stream_seed(2, Target::Shape, 0));
    }
}
