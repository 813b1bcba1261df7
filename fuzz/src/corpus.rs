//! The seed corpus: the real files of the workspace, read once at start from the workspace
//! root, and the dictionary the token-level mutations draw words from.
//!
//! Owns which files seed which target:
//! - circuits: `circuits/*.toml`, `tests/ui/circuits/*.toml`, every inline circuit of the test
//!   suites (a raw string `r#"..."#` holding `schema = `), every TOML block of `docs/*.md`
//!   that holds `schema`, the one-file loader cases `metrale-circuit/tests/cases/*/*.toml`,
//!   the circuits of the import cases `metrale-circuit/tests/import_cases/*/*/`, and the
//!   circuits the CLI's cases read (`metrale-codegen/cli/tests/cli_cases/*/*.toml`);
//! - block libraries: each circuit of `circuits/` and `tests/ui/circuits/` that includes one,
//!   with the library it includes (`include = ["x"]` reads `<circuit dir>/blocks/x.toml`);
//! - inputs files: `metrale-codegen/cli/inputs/*.toml`, the same with a `[parallel]` table
//!   added, the TOML blocks of `docs/inputs.md` (so `[serving]` and `[parallel]` are
//!   mutated), the inputs file's cases `metrale-circuit/tests/inputs_cases/*/*.toml`, and
//!   the inputs files the CLI's cases read;
//! - shapes: every `shape = "..."` and `window = "..."` string of the circuits;
//! - configs: `circuits/configs/*.json`, each with the circuit of its checkpoint (and, for
//!   `import` only, each import case's config with its circuit);
//! - command inputs (a `#!` command line, then a file: [`crate::command`]): `fit` and `plan`
//!   lines before every inputs file, `import` lines before every config, `gen` lines before
//!   every circuit.
//!
//! The schema-3 keys (`packings`, `layer_rules`, `shares`, chunked windows) are in the
//! circuits of `circuits/` (`gemma2`, `gemma3`, `gemma3n`, `llama4`, `deepseek_v32`) and the loader's
//! cases; schema 4's config expressions and conditions in the import cases
//! (`import_cases/expressions/`) and the loader's (`cases/config_expressions/`); a test below
//! keeps each reachable.
//!
//! Invariants: every list is sorted by path and deduplicated, so a seed gives the same run on
//! every machine; nothing here depends on the order `read_dir` returns.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use metrale_circuit::dynamic::decl::StateAccess;
use metrale_circuit::{Holding, Lifetime, Space, StateDtype, StateKind};

/// The command lines of the `fit` target's seeds, each paired with every inputs seed: every
/// way to give the budget, both free inputs, ranks (one named, every one, huge), the schema-3
/// circuits, built-in inputs.
const FIT_LINES: [&str; 11] = [
    "fit circuits/qwen3_5.toml --for kv-blocks --budget 80GiB --inputs @inputs",
    "fit circuits/qwen3_5.toml --for sequences --context 32768 --gpu 80GiB --weights 54GiB --reserve 4GiB --inputs @inputs --json",
    "fit circuits/nemotron_h.toml --checkpoint nemotron_h_47b --for sequences --context 8192 --budget 40GiB --tp 4 --pp 2 --inputs @inputs",
    "fit circuits/llama.toml --for kv-blocks --gpu 24GiB --utilization 0.9 --tp 2 --tp-rank 1 --pp-rank 0 --inputs @inputs --json",
    "fit circuits/gpt_oss.toml --for sequences --context 4096 --budget 16GiB --inputs @inputs",
    "fit circuits/gemma3n.toml --for sequences --context 2048 --budget 8GiB --align 4096 --inputs @inputs --json",
    "fit circuits/deepseek_v32.toml --for kv-blocks --budget 1TB --pp 2 --inputs @inputs",
    "fit circuits/llama4.toml --for sequences --context 131072 --gpu 80GiB --tp 8 --inputs @inputs",
    "fit circuits/gemma2.toml --checkpoint tiny --for kv-blocks --budget 16MiB --inputs @inputs --json",
    "fit circuits/qwen3_next.toml --for sequences --context 4096 --budget 40GiB",
    "fit circuits/qwen3_5.toml --checkpoint tiny --for kv-blocks --budget 1GiB --pp 18446744073709551615 --inputs @inputs",
];

/// The command lines of the `plan` target's seeds, each paired with every inputs seed: JSON,
/// the term table, the SVG map (also of a circuit whose file name holds control characters),
/// ranks (one, every one, huge), the schema-3 circuits, built-in inputs.
const PLAN_LINES: [&str; 11] = [
    "plan circuits/qwen3_5.toml --inputs @inputs --json --svg @svg",
    "plan circuits/nemotron_h.toml --checkpoint nemotron_h_47b --tp 4 --pp 2 --inputs @inputs",
    "plan circuits/nemotron_h.toml --checkpoint nemotron_h_47b --tp 4 --pp 2 --tp-rank 3 --pp-rank 1 --json --svg @svg --inputs @inputs",
    "plan circuits/qwen3_5.toml --tp 1099511627776 --inputs @inputs --json",
    "plan @ctl:circuits/qwen3_5.toml --svg @svg --terms --inputs @inputs",
    "plan @ctl:circuits/gemma3n.toml --svg @svg --json --inputs @inputs",
    "plan circuits/deepseek_v32.toml --terms --sort plan --group kind --inputs @inputs --svg @svg",
    "plan circuits/llama4.toml --tp 8 --pp 4 --json --inputs @inputs",
    "plan circuits/gemma2.toml --checkpoint tiny --align 64 --terms --group layer --inputs @inputs --svg @svg",
    "plan circuits/gpt_oss.toml --pp 18446744073709551615 --inputs @inputs",
    "plan circuits/qwen3_next.toml --tp 4 --tp-rank 3 --pp-rank 0 --json",
];

/// The command lines of the `write` target's seeds, taken in turn by the circuits: `gen` into
/// a file, with another runtime path, to stdout.
const WRITE_LINES: [&str; 3] = [
    "gen @circuit -o @out",
    "gen @circuit -o @out --runtime-path crate::rt",
    "gen @circuit",
];

/// Tables added to the CLI's inputs files, so mutation reaches them: `[parallel]`, and
/// vLLM's page pool (`[pool]`) sized by requests, by pages, and by the serving profile.
const ADDED_TABLES: [(&str, &str, &str); 5] = [
    ("default.toml", "parallel", "\n[parallel]\ntp = 2\npp = 2\n"),
    ("serving.toml", "parallel", "\n[parallel]\ntp = 4\npp = 1\n"),
    (
        "default.toml",
        "pool",
        "\n[pool]\npolicy = \"vllm\"\ncontext = 4096\nrequests = 4\n",
    ),
    (
        "default.toml",
        "pool-pages",
        "\n[pool]\npolicy = \"vllm\"\ncontext = 32768\npages = 4097\nkernel_block = 32\n\
         prefix_caching = false\nspeculative_tokens = 2\n",
    ),
    (
        "serving.toml",
        "pool",
        "\n[pool]\npolicy = \"vllm\"\ncontext = 8192\n",
    ),
];

/// The command lines of the `weights` target's seeds, each paired with every weights body:
/// every layout of [`crate::weights`].
const WEIGHTS_LINES: [&str; 9] = [
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:file --json",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:short --json",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:long",
    "fit circuits/qwen3_5.toml --for sequences --context 4096 --gpu 80GiB --weights @w:index --json",
    "fit circuits/llama.toml --for kv-blocks --gpu 24GiB --weights @w:folder --json",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:fifo",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:fifo-folder",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:loop",
    "fit circuits/llama.toml --for kv-blocks --gpu 80GiB --weights @w:dir-shard --json",
];

/// The bodies the `weights` target lays out: safetensors headers (with `__metadata__`, two
/// tensors in reverse order, a sub-byte dtype, an empty one) and indexes (a total past 2^53).
const WEIGHTS_BODIES: [&str; 5] = [
    r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}}"#,
    r#"{"z":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},"y":{"dtype":"F8_E4M3","shape":[4,4],"data_offsets":[0,16]},"x":{"dtype":"F4","shape":[0],"data_offsets":[24,24]}}"#,
    "{}",
    r#"{"metadata":{"total_size":16106127360},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}"#,
    r#"{"metadata":{"total_size":9007199254740993,"format":"pt"},"weight_map":{}}"#,
];

/// The `alloc` target's scripts: a plain side, a ring whose prefix is adopted (the case of
/// issue 28's C2), a pool of `u64::MAX` blocks and slots, an empty pool.
const ALLOC_SCRIPTS: [&str; 4] = [
    "slots 5 blocks 12\nclaim\nclaim\nappend 0\nappend 0\nappend 1\nadopt 2 0\nappend 2\n\
     drop 0\nrelease 0\nclaim\nappend 2\ndrop 2\ndrop 1\nrelease 4\n",
    "slots 3 blocks 6 ring 2\nappend 1\nappend 1\nadopt 2 1\nappend 1\nappend 1\nappend 1\n\
     append 2\nadopt 3 2\ndrop 1\nappend 3\nappend 3\ndrop 2\ndrop 3\n",
    "slots 18446744073709551615 blocks 18446744073709551615 ring 1\nclaim\nrelease 18446744073709551614\n\
     append 7\nadopt 8 7\nappend 7\nappend 8\ndrop 7\ndrop 8\n",
    "slots 0 blocks 0 ring 0\nclaim\nappend 1\nadopt 1 1\ndrop 1\nrelease 0\n",
];

/// A registry script of names that meet: a checkpoint in two circuits, ids equal but for ASCII
/// case, an empty name and id, a name holding `:`, with queries at each.
const REGISTRY_SCRIPT: &str = "circuit qwen3_5\nqwen3_5_27b Qwen/Qwen3.5-27B\ntiny -\n\
     circuit llama\nllama_3_1_8b meta-llama/Llama-3.1-8B\ntiny -\nshout META-LLAMA/LLAMA-3.1-8B\n\
     circuit odd\n a:b\n\n? tiny\n? llama:tiny\n? \n? llama:\n? :\n? odd:\n? meta-llama/llama-3.1-8b\n\
     ? qwen3_5:QWEN/qwen3.5-27b\n? a:b\n? odd:a:b\n";

/// One seed file: where it came from (relative to the workspace root, with `#N` for the N-th
/// snippet of a file) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The path it is named by in diagnostics and findings.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// A circuit that includes a block library: the library target mutates the library on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibrarySeed {
    /// The circuit, named as in the workspace (`circuits/qwen3_5.toml`).
    pub circuit: Seed,
    /// The folder holding the circuit's `blocks/`.
    pub dir: PathBuf,
    /// The include name of the library mutated (`qwen3_attention`).
    pub library: String,
    /// The library's text.
    pub text: String,
}

/// A config.json and the circuit that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSeed {
    /// The config, named as in the workspace (`circuits/configs/gemma_2_2b.json`).
    pub config: Seed,
    /// The circuit holding its checkpoint (`circuits/gemma2.toml`).
    pub circuit: String,
    /// The config file's stem, its checkpoint's name (`gemma_2_2b`).
    pub stem: String,
}

/// Every seed, and the words mutations draw from.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The workspace root.
    pub root: PathBuf,
    /// Circuit texts.
    pub circuits: Vec<Seed>,
    /// Circuits with a library each.
    pub libraries: Vec<LibrarySeed>,
    /// Inputs files.
    pub inputs: Vec<Seed>,
    /// Shape strings.
    pub shapes: Vec<Seed>,
    /// Configs, each with its circuit.
    pub configs: Vec<ConfigSeed>,
    /// `fit` command inputs.
    pub fits: Vec<Seed>,
    /// `plan` command inputs.
    pub plans: Vec<Seed>,
    /// `import` command inputs.
    pub imports: Vec<Seed>,
    /// `gen` command inputs (the circuit is the file).
    pub writes: Vec<Seed>,
    /// The `weights` target's command inputs (a safetensors header or index is the file).
    pub weights: Vec<Seed>,
    /// The `alloc` target's scripts.
    pub allocs: Vec<Seed>,
    /// The `registry` target's scripts: names that meet, and every generated circuit's.
    pub registries: Vec<Seed>,
    /// Keys, kinds, dtypes, dims, layer kinds and names found in the corpus, sorted.
    pub words: Vec<String>,
    /// Every line of every seed, for splicing lines across files.
    pub lines: Vec<String>,
}

/// The workspace root: the parent of this crate's manifest folder.
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

impl Corpus {
    /// Reads the corpus under `root`.
    ///
    /// # Errors
    /// When a folder of the corpus cannot be read, or a list comes out empty.
    pub fn read(root: &Path) -> Result<Corpus, String> {
        let mut circuits = Vec::new();
        for folder in ["circuits", "tests/ui/circuits"] {
            for path in files_in(root, folder, "toml")? {
                circuits.push(seed(root, &path)?);
            }
        }
        circuits.extend(inline_circuits(root)?);
        let mut inputs = cli_inputs(root)?;
        // The inputs file's error cases, and the circuits and configs of the import cases.
        inputs.extend(case_seeds(root, "metrale-circuit/tests/inputs_cases")?);
        // The files the CLI's cases read: circuits (they hold `schema`) and inputs files.
        for file in case_seeds(root, "metrale-codegen/cli/tests/cli_cases")? {
            if file.text.contains("schema") {
                circuits.push(file);
            } else {
                inputs.push(file);
            }
        }
        let (import_circuits, case_imports) = import_case_seeds(root)?;
        circuits.extend(import_circuits);
        for path in files_in(root, "docs", "md")? {
            let file = seed(root, &path)?;
            for (i, block) in toml_blocks(&file.text).into_iter().enumerate() {
                let named = Seed {
                    name: format!("{}#{i}", file.name),
                    text: block,
                };
                if named.text.contains("schema") {
                    circuits.push(named);
                } else if file.name.ends_with("inputs.md") {
                    inputs.push(named);
                }
            }
        }
        let libraries = library_seeds(root, &circuits)?;
        // The loader's error cases, after the libraries: a case may include a missing library.
        circuits.extend(case_seeds(root, "metrale-circuit/tests/cases")?);
        let shapes = shape_strings(&circuits);
        let configs = config_seeds(root, &circuits)?;
        // One line each, in turn: `writes[i]` is `circuits[i]` after a command line.
        let writes = WRITE_LINES
            .iter()
            .cycle()
            .zip(&circuits)
            .map(|(line, circuit)| Seed {
                name: circuit.name.clone(),
                text: format!("{} {line}\n{}", crate::command::HEADER, circuit.text),
            })
            .collect();
        let all: Vec<&Seed> = circuits
            .iter()
            .chain(&inputs)
            .chain(libraries.iter().map(|l| &l.circuit))
            .collect();
        let mut lines: BTreeSet<String> = all
            .iter()
            .flat_map(|s| s.text.lines())
            .chain(libraries.iter().flat_map(|l| l.text.lines()))
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        lines.insert(String::new());
        let (allocs, registries, weights) = script_seeds();
        let corpus = Corpus {
            root: root.to_path_buf(),
            words: dictionary(all.iter().map(|s| s.text.as_str())),
            lines: lines.into_iter().collect(),
            fits: command_seeds(&FIT_LINES, &inputs),
            plans: command_seeds(&PLAN_LINES, &inputs),
            imports: import_seeds(&configs)
                .into_iter()
                .chain(case_imports)
                .collect(),
            writes,
            weights,
            allocs,
            registries,
            circuits,
            libraries,
            inputs,
            shapes,
            configs,
        };
        for (what, empty) in [
            ("circuits", corpus.circuits.is_empty()),
            ("block libraries", corpus.libraries.is_empty()),
            ("inputs files", corpus.inputs.is_empty()),
            ("shapes", corpus.shapes.is_empty()),
            ("configs", corpus.configs.is_empty()),
        ] {
            if empty {
                return Err(format!("the corpus has no {what} under {}", root.display()));
            }
        }
        Ok(corpus)
    }
}

/// The files of `root/folder` whose name ends in `.ext`, sorted.
fn files_in(root: &Path, folder: &str, ext: &str) -> Result<Vec<PathBuf>, String> {
    let dir = root.join(folder);
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// A file of the workspace as a seed named by its path relative to `root`.
fn seed(root: &Path, path: &Path) -> Result<Seed, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    Ok(Seed { name, text })
}

/// Every `r#"..."#` raw string of a Rust file, in order.
fn raw_strings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("r#\"") {
        let body = &rest[start + 3..];
        let Some(end) = body.find("\"#") else {
            break;
        };
        found.push(body[..end].to_owned());
        rest = &body[end + 2..];
    }
    found
}

/// Every fenced TOML block of a Markdown file, in order.
fn toml_blocks(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start();
        match &mut current {
            None if fence.starts_with("```toml") => current = Some(String::new()),
            Some(block) if fence.starts_with("```") => {
                found.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    found
}

/// The circuits of the workspace's folders that include a library, each with every library
/// it includes directly.
fn library_seeds(root: &Path, circuits: &[Seed]) -> Result<Vec<LibrarySeed>, String> {
    let mut seeds = Vec::new();
    for circuit in circuits.iter().filter(|c| !c.name.contains('#')) {
        let Ok(table) = circuit.text.parse::<toml::Table>() else {
            continue;
        };
        let Some(includes) = table.get("include").and_then(toml::Value::as_array) else {
            continue;
        };
        let dir = root.join(
            Path::new(&circuit.name)
                .parent()
                .unwrap_or_else(|| Path::new("")),
        );
        for include in includes.iter().filter_map(toml::Value::as_str) {
            let path = dir.join("blocks").join(format!("{include}.toml"));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            seeds.push(LibrarySeed {
                circuit: circuit.clone(),
                dir: dir.clone(),
                library: include.to_owned(),
                text,
            });
        }
    }
    Ok(seeds)
}

/// The CLI's inputs files, then each of them with a `[parallel]` table added.
fn cli_inputs(root: &Path) -> Result<Vec<Seed>, String> {
    let mut inputs = Vec::new();
    for path in files_in(root, "metrale-codegen/cli/inputs", "toml")? {
        inputs.push(seed(root, &path)?);
    }
    for (file, what, table) in ADDED_TABLES {
        if let Some(base) = inputs.iter().find(|s| s.name.ends_with(file)).cloned() {
            inputs.push(Seed {
                name: format!("{}+{what}", base.name),
                text: format!("{}{table}", base.text),
            });
        }
    }
    Ok(inputs)
}

/// Every inline circuit of the test suites: a raw string `r#"..."#` holding `schema = `.
fn inline_circuits(root: &Path) -> Result<Vec<Seed>, String> {
    let mut circuits = Vec::new();
    for folder in [
        "metrale-circuit/tests",
        "metrale-codegen/tests",
        "metrale-codegen/cli/tests",
        "tests/tests",
        "tests/ui/pass",
        "tests/ui/fail",
    ] {
        for path in files_in(root, folder, "rs")? {
            let file = seed(root, &path)?;
            for (i, snippet) in raw_strings(&file.text).into_iter().enumerate() {
                if snippet.contains("schema = ") {
                    circuits.push(Seed {
                        name: format!("{}#{i}", file.name),
                        text: snippet,
                    });
                }
            }
        }
    }
    Ok(circuits)
}

/// The one-file cases of a case folder (`<folder>/*/*.toml`: the loader's, the inputs
/// file's), sorted.
fn case_seeds(root: &Path, folder: &str) -> Result<Vec<Seed>, String> {
    let cases = root.join(folder);
    let mut groups: Vec<PathBuf> = std::fs::read_dir(&cases)
        .map_err(|e| format!("cannot read {}: {e}", cases.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    groups.sort();
    let mut seeds = Vec::new();
    for group in groups {
        for path in files_in(&group, "", "toml")? {
            seeds.push(seed(root, &path)?);
        }
    }
    Ok(seeds)
}

/// The import cases (`metrale-circuit/tests/import_cases/<group>/<name>/`): each case's
/// circuit, and its config after `import <that circuit> @config --name fuzzed`.
fn import_case_seeds(root: &Path) -> Result<(Vec<Seed>, Vec<Seed>), String> {
    let cases = root.join("metrale-circuit/tests/import_cases");
    let mut folders = Vec::new();
    for group in
        std::fs::read_dir(&cases).map_err(|e| format!("cannot read {}: {e}", cases.display()))?
    {
        let group = group.map_err(|e| e.to_string())?.path();
        if group.is_dir() {
            for case in std::fs::read_dir(&group)
                .map_err(|e| format!("cannot read {}: {e}", group.display()))?
            {
                let case = case.map_err(|e| e.to_string())?.path();
                if case.join("circuit.toml").is_file() && case.join("config.json").is_file() {
                    folders.push(case);
                }
            }
        }
    }
    folders.sort();
    let (mut circuits, mut imports) = (Vec::new(), Vec::new());
    for case in folders {
        let circuit = seed(root, &case.join("circuit.toml"))?;
        let config = seed(root, &case.join("config.json"))?;
        imports.push(Seed {
            name: config.name,
            text: format!(
                "{} import {} @config --name fuzzed\n{}",
                crate::command::HEADER,
                circuit.name,
                config.text
            ),
        });
        circuits.push(circuit);
    }
    Ok((circuits, imports))
}

/// Every config of `circuits/configs/`, with the circuit holding its checkpoint (the config's
/// stem names it: `[checkpoint.<stem>]`).
fn config_seeds(root: &Path, circuits: &[Seed]) -> Result<Vec<ConfigSeed>, String> {
    let mut configs = Vec::new();
    for path in files_in(root, "circuits/configs", "json")? {
        let config = seed(root, &path)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let header = format!("[checkpoint.{stem}]");
        let Some(circuit) = circuits
            .iter()
            .find(|c| c.name.starts_with("circuits/") && c.text.contains(&header))
        else {
            return Err(format!("no circuit of circuits/ holds `{header}`"));
        };
        configs.push(ConfigSeed {
            config,
            circuit: circuit.name.clone(),
            stem,
        });
    }
    Ok(configs)
}

/// A registry script of every generated circuit's checkpoints, with a query at each name, each
/// id in lower case, each `<arch>:<name>` and each bare `<arch>:`.
fn zoo_registry() -> String {
    let mut circuits = String::new();
    let mut queries = String::new();
    for entry in crate::compare::ENTRIES {
        let _ = writeln!(circuits, "circuit {}", entry.arch);
        let _ = writeln!(queries, "? {}:", entry.arch);
        for (name, hf) in entry.checkpoints {
            let _ = writeln!(circuits, "{name} {}", hf.unwrap_or("-"));
            let _ = writeln!(queries, "? {name}\n? {}:{name}", entry.arch);
            if let Some(hf) = hf {
                let _ = writeln!(queries, "? {}", hf.to_ascii_lowercase());
            }
        }
    }
    circuits + &queries
}

/// The `alloc` and `registry` targets' scripts, and the `weights` target's command inputs.
fn script_seeds() -> (Vec<Seed>, Vec<Seed>, Vec<Seed>) {
    let allocs = ALLOC_SCRIPTS
        .iter()
        .enumerate()
        .map(|(i, text)| Seed {
            name: format!("alloc#{i}"),
            text: (*text).to_owned(),
        })
        .collect();
    let registries = vec![
        Seed {
            name: "registry#names".to_owned(),
            text: REGISTRY_SCRIPT.to_owned(),
        },
        Seed {
            name: "registry#zoo".to_owned(),
            text: zoo_registry(),
        },
    ];
    let bodies: Vec<Seed> = WEIGHTS_BODIES
        .iter()
        .enumerate()
        .map(|(i, text)| Seed {
            name: format!("weights#{i}"),
            text: (*text).to_owned(),
        })
        .collect();
    (allocs, registries, command_seeds(&WEIGHTS_LINES, &bodies))
}

/// The seeds of the command targets: each command line of `lines` before each file of
/// `files` (a command line, then the file, as [`crate::command::split`] reads them).
fn command_seeds(lines: &[&str], files: &[Seed]) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for line in lines {
        for file in files {
            seeds.push(Seed {
                name: file.name.clone(),
                text: format!("{} {line}\n{}", crate::command::HEADER, file.text),
            });
        }
    }
    seeds
}

/// The `import` seeds: each config after `import <its circuit> @config`, with `--name` (a
/// new checkpoint) and without (the config's stem: it re-reads the circuit's own).
fn import_seeds(configs: &[ConfigSeed]) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for config in configs {
        for name in [" --name fuzzed", ""] {
            seeds.push(Seed {
                name: config.config.name.clone(),
                text: format!(
                    "{} import {} @config{name}\n{}",
                    crate::command::HEADER,
                    config.circuit,
                    config.config.text
                ),
            });
        }
    }
    seeds
}

/// Every distinct `shape = "..."` and `window = "..."` string of the circuits.
fn shape_strings(circuits: &[Seed]) -> Vec<Seed> {
    let mut shapes = BTreeSet::new();
    for circuit in circuits {
        for line in circuit.text.lines() {
            let line = line.trim();
            for key in ["shape", "window"] {
                if let Some(rest) = line.strip_prefix(key)
                    && let Some(value) = rest.trim_start().strip_prefix('=')
                    && let Some(quoted) = value.trim().strip_prefix('"')
                    && let Some(end) = quoted.find('"')
                {
                    shapes.insert(quoted[..end].to_owned());
                }
            }
        }
    }
    shapes
        .into_iter()
        .enumerate()
        .map(|(i, text)| Seed {
            name: format!("shape#{i}"),
            text,
        })
        .collect()
}

/// The words of the schema: every bare key and every short string of `texts`, and every
/// spelling of the runtime's enums.
fn dictionary<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut words = BTreeSet::new();
    for text in texts {
        let mut word = String::new();
        let mut quoted = false;
        for c in text.chars() {
            if c == '"' {
                if quoted && !word.is_empty() && word.len() <= 40 {
                    words.insert(std::mem::take(&mut word));
                }
                word.clear();
                quoted = !quoted;
            } else if quoted || c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                if word.len() > 1 && word.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    words.insert(word.clone());
                }
                word.clear();
            }
            if c == '\n' {
                quoted = false;
                word.clear();
            }
        }
    }
    let spellings = StateKind::SPELLINGS
        .iter()
        .chain(&StateDtype::SPELLINGS)
        .chain(&Lifetime::SPELLINGS)
        .chain(&Holding::SPELLINGS)
        .chain(&Space::SPELLINGS)
        .chain(&StateAccess::SPELLINGS);
    words.extend(spellings.map(|s| (*s).to_owned()));
    words.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_strings_and_toml_blocks_are_found() {
        assert_eq!(raw_strings("a r#\"x\"# b r#\"y\ny\"#"), ["x", "y\ny"]);
        assert_eq!(
            toml_blocks("t\n```toml\na = 1\n```\n```\nb\n```\n"),
            ["a = 1\n"]
        );
    }

    #[test]
    fn the_workspace_corpus_has_every_kind_of_seed() {
        let corpus = Corpus::read(&workspace_root()).expect("corpus");
        assert!(
            corpus
                .circuits
                .iter()
                .any(|c| c.name == "circuits/qwen3_5.toml")
        );
        assert!(
            corpus
                .libraries
                .iter()
                .any(|l| l.library == "qwen3_attention")
        );
        assert!(corpus.words.iter().any(|w| w == "paged_kv"));
        assert!(
            corpus
                .shapes
                .iter()
                .any(|s| s.text == "kv_heads x head_dim")
        );
        assert!(
            corpus
                .configs
                .iter()
                .any(|c| c.stem == "gemma_2_2b" && c.circuit == "circuits/gemma2.toml")
        );
        // Two per zoo config, and one per import case.
        let cases = corpus
            .imports
            .iter()
            .filter(|s| s.name.starts_with("metrale-circuit/tests/import_cases/"))
            .count();
        assert!(cases >= 60, "{cases} import cases");
        assert_eq!(corpus.imports.len(), 2 * corpus.configs.len() + cases);
        assert!(
            corpus
                .inputs
                .iter()
                .any(|s| s.name.starts_with("metrale-circuit/tests/inputs_cases/"))
        );
        assert_eq!(corpus.writes.len(), corpus.circuits.len());
    }

    #[test]
    fn mutation_reaches_serving_parallel_and_the_schema_3_keys() {
        let corpus = Corpus::read(&workspace_root()).expect("corpus");
        let has =
            |seeds: &[Seed], text: &str| seeds.iter().filter(|s| s.text.contains(text)).count();
        // Inputs files (and so the fit and plan inputs) with each table.
        for table in ["[serving]", "[parallel]"] {
            assert!(has(&corpus.inputs, table) >= 2, "{table}");
            assert!(has(&corpus.fits, table) >= 2 * FIT_LINES.len(), "{table}");
        }
        // Circuits with each schema-3 key, among them the zoo's.
        for key in [
            "schema = 3",
            "packings",
            "layer_rules",
            "shares = ",
            "chunk = ",
        ] {
            assert!(has(&corpus.circuits, key) >= 2, "{key}");
        }
        for zoo in ["gemma3n", "deepseek_v32", "llama4", "gemma2"] {
            let name = format!("circuits/{zoo}.toml");
            let circuit = corpus
                .circuits
                .iter()
                .find(|c| c.name == name)
                .expect("zoo circuit");
            assert!(circuit.text.contains("schema = 3"), "{name}");
        }
        // Circuits with each schema-4 form, and configs read through them by `import`.
        for form in [
            "schema = 4",
            "{ if = ",
            "_factor\"",
            "offset = \"",
            "[*].",
            "tokens = ",
        ] {
            assert!(has(&corpus.circuits, form) >= 1, "{form}");
        }
        assert!(
            corpus
                .imports
                .iter()
                .any(|s| s.text.contains("import_cases/expressions/")),
            "a schema-4 circuit imported with its config"
        );
    }
}
