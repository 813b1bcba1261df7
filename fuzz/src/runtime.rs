//! The targets of what an engine calls at run time, each on a mutated text:
//!
//! - `alloc`: a script of allocator operations (`slots S blocks B ring R`, then `claim`,
//!   `release N`, `append N`, `adopt N M`, `drop N` a line) run on the runtime's allocator beside
//!   its reference model (`metrale_tests::alloc_model`): every answer and refusal the model's, a
//!   refusal changing nothing, a block handed out for writing its writer's alone, references
//!   equal to the tables holding a block, a ring within its blocks.
//! - `registry`: a script of circuits (`circuit ARCH`, then `NAME HF` lines, `-` for no id) and
//!   queries (`? QUERY`), resolved by `serving::registry::Registry` and by the rules it documents, stated
//!   here as plainly as they read (a name exact, an id with ASCII case ignored, `<arch>:` asking
//!   one circuit, an empty name naming nothing): the same answer, the same list of matches.
//! - `config`: a mutated `config.json` read at run time through its circuit's `[config]`
//!   (`Circuit::with_config`, `Circuit::dims_from_config`): a refusal located in the files
//!   read; an accepted checkpoint instantiates and plans; the dims for the generated plan of the
//!   config's own checkpoint make a generated plan equal to the dynamic plan of the checkpoint
//!   `with_config` added, under the default inputs ([`crate::compare`]).
//!
//! Invariants: an execution depends only on its bytes and seed (the scripts are parsed, never
//! randomised); a script's operations are bounded ([`MAX_OPS`]), so no execution runs long.

use metrale_circuit::DEFAULT_ALIGN;
use metrale_circuit::config::ImportOptions;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::Circuit;
use metrale_circuit::load::diag::Source;
use metrale_circuit::serving::registry::{CircuitEntry, Registry, RegistryError, Resolved};
use metrale_tests::alloc_model::{Allocator, Op};

use crate::invariants::{first_line, located};
use crate::targets::{Context, Exec};

/// The most operations or queries one script runs.
pub const MAX_OPS: usize = 400;

impl Context<'_> {
    /// The `alloc` target.
    pub(crate) fn alloc(bytes: &[u8]) -> Exec {
        alloc(bytes)
    }

    /// The `registry` target.
    pub(crate) fn registry(bytes: &[u8]) -> Exec {
        registry(bytes)
    }
}

/// The `alloc` target.
fn alloc(bytes: &[u8]) -> Exec {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(mut allocator) = lines.next().and_then(alloc_header) else {
        return Exec {
            accepted: false,
            errors: vec!["no `slots S blocks B ring R` header".to_owned()],
            violations: Vec::new(),
        };
    };
    let mut exec = Exec {
        accepted: true,
        ..Exec::default()
    };
    for line in lines.take(MAX_OPS) {
        let Some(op) = alloc_op(line) else {
            exec.errors.push("not an operation".to_owned());
            continue;
        };
        if let Err(violation) = allocator.step(op) {
            exec.violations.push(violation);
            break;
        }
    }
    exec
}

/// `slots S blocks B ring R` (`ring none`, or no ring, for a side that keeps every token).
fn alloc_header(line: &str) -> Option<Allocator> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |key: &str| {
        let at = words.iter().position(|w| *w == key)?;
        words.get(at + 1)?.parse::<u64>().ok()
    };
    Some(Allocator::new(
        number("slots")?,
        number("blocks")?,
        number("ring"),
    ))
}

/// One operation line.
fn alloc_op(line: &str) -> Option<Op> {
    let mut words = line.split_whitespace();
    let verb = words.next()?;
    let mut number = || words.next()?.parse::<u64>().ok();
    Some(match verb {
        "claim" => Op::Claim,
        "release" => Op::Release(number()?),
        "append" => Op::Append(number()?),
        "adopt" => Op::Adopt {
            sequence: number()?,
            from: number()?,
        },
        "drop" => Op::Drop(number()?),
        _ => return None,
    })
}

/// A circuit of a registry script, owned.
struct Entry {
    arch: String,
    checkpoints: Vec<(String, Option<String>)>,
}

/// The `registry` target.
fn registry(bytes: &[u8]) -> Exec {
    let text = String::from_utf8_lossy(bytes);
    let mut entries: Vec<Entry> = Vec::new();
    let mut queries: Vec<&str> = Vec::new();
    for line in text.lines().take(MAX_OPS) {
        if let Some(query) = line.strip_prefix("? ") {
            queries.push(query);
        } else if let Some(arch) = line.strip_prefix("circuit ") {
            entries.push(Entry {
                arch: arch.to_owned(),
                checkpoints: Vec::new(),
            });
        } else if let (Some(entry), Some((name, hf))) = (entries.last_mut(), line.split_once(' ')) {
            let hf = (hf != "-").then(|| hf.to_owned());
            entry.checkpoints.push((name.to_owned(), hf));
        }
    }
    let lists: Vec<Vec<(&str, Option<&str>)>> = entries
        .iter()
        .map(|e| {
            e.checkpoints
                .iter()
                .map(|(name, hf)| (name.as_str(), hf.as_deref()))
                .collect()
        })
        .collect();
    let circuits: Vec<CircuitEntry<'_>> = entries
        .iter()
        .zip(&lists)
        .map(|(e, list)| CircuitEntry {
            arch: &e.arch,
            checkpoints: list,
        })
        .collect();
    let registry = Registry {
        circuits: &circuits,
    };
    let mut exec = Exec {
        accepted: !circuits.is_empty(),
        ..Exec::default()
    };
    for query in queries {
        let got = registry.resolve(query);
        if let Err(error) = &got {
            // The kind of refusal, not the list of names it carries.
            let message = error.to_string();
            let kind = message.split(';').next().unwrap_or(&message);
            exec.errors.push(first_line(kind).to_owned());
        }
        let expected = resolve_by_the_rules(&circuits, query);
        if got != expected {
            exec.violations.push(format!(
                "`{}` resolves to {got:?}, the documented rules give {expected:?}",
                query.escape_debug()
            ));
        }
    }
    exec
}

/// What `query` names by the rules `Registry::resolve` documents.
fn resolve_by_the_rules<'a>(
    circuits: &[CircuitEntry<'a>],
    query: &str,
) -> Result<Resolved<'a>, RegistryError> {
    let (arch, wanted) = match query.find(':') {
        Some(at) => (Some(&query[..at]), &query[at + 1..]),
        None => (None, query),
    };
    let mut every = Vec::new();
    let mut matches = Vec::new();
    for (circuit, entry) in circuits.iter().enumerate() {
        for (checkpoint, (name, hf)) in entry.checkpoints.iter().enumerate() {
            let resolved = Resolved {
                circuit,
                arch: entry.arch,
                checkpoint,
                name,
            };
            every.push(format!("{}:{name}", entry.arch));
            let asked = arch.is_none_or(|a| a == entry.arch);
            let named = *name == wanted || hf.is_some_and(|id| id.eq_ignore_ascii_case(wanted));
            if asked && !wanted.is_empty() && named {
                matches.push(resolved);
            }
        }
    }
    match matches[..] {
        [one] => Ok(one),
        [] => Err(RegistryError::Unknown {
            query: query.to_owned(),
            known: every,
        }),
        _ => Err(RegistryError::Ambiguous {
            query: query.to_owned(),
            matches: matches
                .iter()
                .map(|r| format!("{}:{}", r.arch, r.name))
                .collect(),
        }),
    }
}

impl Context<'_> {
    /// The `config` target: seed `index`'s config mutated to `bytes`, read at run time.
    pub(crate) fn config_at_run_time(&self, index: usize, bytes: &[u8]) -> Exec {
        let seed = &self.corpus.configs[index];
        let path = self.corpus.root.join(&seed.circuit);
        let Some(loaded) = self.loaded(&seed.circuit) else {
            return Exec {
                accepted: false,
                errors: Vec::new(),
                violations: vec![format!("{} is not a generated circuit", seed.circuit)],
            };
        };
        let circuit = match Circuit::load(&path) {
            Ok(circuit) => circuit,
            Err(error) => {
                return Exec {
                    violations: vec![format!("{} does not load: {error}", seed.circuit)],
                    ..Exec::default()
                };
            }
        };
        let name = "config.json";
        let text = String::from_utf8_lossy(bytes);
        let config = Source::new(name, text.into_owned());
        // Read as the config's own checkpoint again (compared with the pinned one), and as a
        // checkpoint of its own: the one the generated plan on its dims is compared with.
        let reread = circuit.with_config(&config, &seed.stem, ImportOptions::default());
        let fresh_name = fresh_name(&circuit);
        let fresh = circuit.with_config(
            &config,
            &seed.stem,
            ImportOptions {
                name: Some(&fresh_name),
                hf: None,
            },
        );
        let dims = circuit.dims_from_config(&seed.stem, &config);
        let mut files = vec![config.clone()];
        files.extend(circuit.files().iter().cloned());
        let mut exec = Exec::default();
        for diagnostics in [
            reread.as_ref().err(),
            fresh.as_ref().err(),
            dims.as_ref().err(),
        ]
        .into_iter()
        .flatten()
        {
            exec.errors.extend(
                diagnostics
                    .iter()
                    .map(|d| first_line(&d.message).to_owned()),
            );
            // Inside the config or the circuit's files: never past a file's end (C9).
            exec.violations
                .extend(located(diagnostics, &files, name, false));
        }
        let Ok((with, added)) = fresh else {
            for (what, accepted) in [
                ("dims_from_config", dims.is_ok()),
                ("a re-read", reread.is_ok()),
            ] {
                if accepted {
                    exec.violations.push(format!(
                        "{what} accepts a config that with_config refuses as a checkpoint of its own"
                    ));
                }
            }
            return exec;
        };
        exec.accepted = true;
        let decls = match with.instantiate(&added) {
            Ok(decls) => decls,
            Err(error) => {
                exec.violations.push(format!(
                    "the checkpoint `{added}` with_config added does not instantiate: {error}"
                ));
                return exec;
            }
        };
        let view = self.default_inputs.view();
        let inputs = view.inputs();
        let dynamic = DynamicPlan::new(&decls, &inputs, DEFAULT_ALIGN);
        if let Ok(dims) = dims
            && let Err(difference) =
                (loaded.agrees_with_config)(&seed.stem, &dims, &inputs, &dynamic)
        {
            exec.violations.push(difference);
        }
        exec
    }

    /// The real circuit at `path` (relative to the workspace), loaded for comparisons.
    fn loaded(&self, path: &str) -> Option<&crate::compare::Loaded> {
        self.real.iter().find(|l| l.path == path)
    }
}

/// A checkpoint name `circuit` does not have.
fn fresh_name(circuit: &Circuit) -> String {
    let mut name = "from_config".to_owned();
    while circuit.checkpoint(&name).is_some() {
        name.push('_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load_all;
    use crate::corpus::{Corpus, workspace_root};
    use crate::targets::Target;

    #[test]
    fn every_runtime_seed_passes_unmutated() {
        let root = workspace_root();
        let corpus = Corpus::read(&root).expect("corpus");
        let real = load_all(&root).expect("the real circuits");
        let scratch =
            std::env::temp_dir().join(format!("metrale-fuzz-runtime-{}", std::process::id()));
        let context = Context::new(&corpus, &real, scratch.clone(), 0).expect("context");
        for target in [Target::Alloc, Target::Registry, Target::Config] {
            let seeds = context.seed_count(target);
            assert!(seeds >= 2, "{}: {seeds} seeds", target.name());
            for index in 0..seeds {
                let (name, text) = context.seed(target, index);
                let exec = context.exec(target, index, text.as_bytes());
                assert!(
                    exec.accepted && exec.violations.is_empty(),
                    "{} on {name}: {exec:?}",
                    target.name()
                );
            }
        }
        let _ = std::fs::remove_dir_all(scratch);
    }

    #[test]
    fn a_generated_plan_on_other_dims_than_the_dynamic_plan_is_a_finding() {
        let root = workspace_root();
        let real = load_all(&root).expect("the real circuits");
        let llama = real
            .iter()
            .find(|l| l.path == "circuits/llama.toml")
            .expect("llama");
        let circuit = Circuit::load(root.join(llama.path)).expect("loads");
        let config = metrale_circuit::load::text::read_source(
            &root.join("circuits/configs/llama_3_1_8b.json"),
            "config.json",
            "config",
        )
        .expect("reads");
        let mut dims = circuit
            .dims_from_config("llama_3_1_8b", &config)
            .expect("the 8B's own config");
        let decls = circuit.instantiate("llama_3_1_8b").expect("instantiates");
        let text = std::fs::read_to_string(root.join("metrale-codegen/cli/inputs/default.toml"))
            .expect("default inputs");
        let file = metrale_circuit::load::InputsFile::parse("default.toml", &text).expect("parses");
        let view = file.view();
        let dynamic = DynamicPlan::new(&decls, &view.inputs(), DEFAULT_ALIGN);
        assert_eq!(
            (llama.agrees_with_config)("llama_3_1_8b", &dims, &view.inputs(), &dynamic),
            Ok(())
        );
        // Half the KV heads: the generated plan's KV sides halve, the dynamic plan's do not.
        let kv_heads = dims
            .iter_mut()
            .find(|(name, _)| name == "kv_heads")
            .expect("kv_heads");
        kv_heads.1 /= 2;
        assert!(
            (llama.agrees_with_config)("llama_3_1_8b", &dims, &view.inputs(), &dynamic).is_err()
        );
    }
}
