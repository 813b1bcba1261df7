//! The targets of the CLI's commands and of what a build does with generated code, each run
//! in process on a `#!` command line and the file after it ([`crate::command`]):
//!
//! - `fit`: the inputs file written to scratch, `metrale_cli::run(["fit", ...])`; a well-formed
//!   line is never a usage error, a malformed one always is; bad input says why (escaped) on
//!   stderr, nothing on stdout, its locations inside the inputs file; an answer prints as JSON
//!   with the documented fields ([`invariants::fit_json`]: at least 1, inside the budget, one
//!   more outside it, the GPU's budget its usable bytes less weights and reserve) and the table
//!   gives the same value and device bytes as the JSON.
//! - `plan`: the same exits; `--json` read back ([`invariants::plan_json`]: terms inside their
//!   arenas, totals their sums, every rank listed once and the pipeline's layers split); the
//!   `--svg` map well-formed XML, also of a circuit whose file name holds control characters,
//!   and under vLLM's policy drawing the page pool with the JSON's device total.
//! - `import`: the mutated config written to scratch, `metrale_cli::run(["import", ...])`; the
//!   library (`import`, `Circuit::with_imported`) gives the same answer: the same table, or a
//!   refusal located in the files read ([`located`]); the table printed, appended to the
//!   circuit, loads, a re-read checkpoint with its own figures, and every checkpoint
//!   instantiates and plans (an overflow under the default inputs aside).
//! - `write`: the mutated circuit written to scratch (also under names with a line break and
//!   control characters); `gen` (to stdout or `-o` a file) exits as `generate_file` answers
//!   and writes its very text, which parses, a second time without rewriting it; then two
//!   `Builder`s with different runtime paths generate into one folder at once, each reading
//!   the module while the other writes: every read sees a whole module, every line to cargo is
//!   one instruction, no temporary file is left.
//! - `compile`: an accepted circuit's generated module checked by rustc in a scratch crate
//!   (`target/fuzz-compile/job<N>`, its own workspace, depending on `metrale-circuit` by path
//!   without `load`, `#![deny(warnings, missing_docs)]`, one target folder shared by the
//!   jobs); a module that does not compile is a finding.
//!
//! Invariants: no command writes outside the scratch folder (an output option's value that is
//! not a scratch path or `/dev/null` is redirected there, `Context::expand`); every path an
//! execution uses is made afresh by it (`Context::fresh`), so a finding replays alone.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use metrale_circuit::config::{ImportOptions, import};
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::Source;
use metrale_circuit::load::{Circuit, CircuitSource, load, text::read_source};
use metrale_circuit::{DEFAULT_ALIGN, PlanError};
use metrale_cli::{Outcome, Status};
use metrale_codegen::{Builder, DEFAULT_RUNTIME_PATH, Options, generate_file};

use crate::command::{self, Verdict};
use crate::invariants::{self, first_line, located};
use crate::targets::{Context, Exec, Target};

/// Control characters, XML markup, quotes and a line break: what a file name may hold that no
/// output may print raw.
const ODD_NAME: &str = "\u{1}<&>\"'\u{1b}[1m\n\u{7}\u{7f}\u{85}";

/// How many times each `Builder` generates into the shared folder.
const BUILDER_ROUNDS: usize = 3;

/// How many times a `Builder` thread reads the module after each generation.
const READS: usize = 4;

/// The longest a `cargo check` of one module may take before it is killed (a finding).
const RUSTC_LIMIT: Duration = Duration::from_secs(600);

impl Context<'_> {
    /// The scratch path an `@` token of a header names.
    fn at_path(&self, token: &str) -> Option<PathBuf> {
        let s = &self.scratch;
        Some(match token {
            "@inputs" => s.join("inputs.toml"),
            "@svg" => s.join("out/map.svg"),
            "@out" => s.join("out/module.rs"),
            "@dir" => s.join("out"),
            "@nodir" => s.join("no/such/folder/file"),
            "@circuit" => s.join("named/circuit.toml"),
            "@circuit-nl" => s.join("named/circ\nuit.toml"),
            "@circuit-ctl" => s.join(format!("named/{ODD_NAME}.toml")),
            _ => return None,
        })
    }

    /// Empties what executions write: `out/`, `build/`, the circuits of `named/` (not its
    /// `blocks/`), the inputs file and configs.
    pub(crate) fn fresh(&self) {
        for dir in ["out", "build"] {
            let dir = self.scratch.join(dir);
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::create_dir_all(&dir);
        }
        for dir in [self.scratch.clone(), self.scratch.join("named")] {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.filter_map(Result::ok) {
                    if entry.file_type().is_ok_and(|t| t.is_file()) {
                        let _ = std::fs::remove_file(entry.path());
                    }
                }
            }
        }
    }

    /// Writes `bytes` to `path`, a scratch file; a failure is the harness's (a panic, caught as
    /// a finding by the runner).
    pub(crate) fn put(path: &Path, bytes: &[u8]) {
        if let Err(error) = std::fs::write(path, bytes) {
            panic!("cannot write {}: {error}", path.display());
        }
    }

    /// The arguments of a header: `@` tokens as scratch paths (`@config` as `config`,
    /// `@ctl:FILE` a copy of the workspace's FILE under a name with control characters), a
    /// relative path of a workspace file under the root, anything else as written. The value
    /// of `-o` or `--svg` (also attached: `--svg=`, `-oFILE`) that is not a scratch path or
    /// `/dev/null` is redirected into scratch: no command writes into the workspace.
    pub(crate) fn expand(&self, tokens: &[String], config: Option<&Path>) -> Vec<OsString> {
        let elsewhere = self.scratch.join("out/elsewhere");
        let safe = |path: &Path| path.starts_with(&self.scratch) || path == Path::new("/dev/null");
        let mut args: Vec<OsString> = Vec::with_capacity(tokens.len());
        for (i, token) in tokens.iter().enumerate() {
            let path = self.expand_one(token, config);
            let output = i > 0 && matches!(tokens[i - 1].as_str(), "-o" | "--svg");
            args.push(if output && !safe(Path::new(&path)) {
                elsewhere.clone().into_os_string()
            } else if token.starts_with("--svg=") || (token.starts_with("-o") && token.len() > 2) {
                let flag = if token.starts_with("-o") {
                    "-o"
                } else {
                    "--svg="
                };
                let mut attached = OsString::from(flag);
                attached.push(&elsewhere);
                attached
            } else {
                path
            });
        }
        args
    }

    /// One header token as an argument ([`Context::expand`]).
    fn expand_one(&self, token: &str, config: Option<&Path>) -> OsString {
        if let (Some(config), "@config") = (config, token) {
            return config.into();
        }
        if let Some(path) = self.at_path(token) {
            return path.into();
        }
        if let Some(relative) = token.strip_prefix("@ctl:") {
            let name = Path::new(relative)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let to = self.scratch.join("named").join(format!("{ODD_NAME}{name}"));
            if std::fs::copy(self.corpus.root.join(relative), &to).is_ok() {
                return to.into();
            }
        }
        let relative = Path::new(token);
        let file = relative
            .extension()
            .is_some_and(|e| e == "toml" || e == "json");
        if (token.contains('/') || file)
            && relative.is_relative()
            && self.corpus.root.join(relative).exists()
        {
            return self.corpus.root.join(relative).into();
        }
        token.into()
    }

    /// The `fit` target.
    pub(crate) fn fit(&self, bytes: &[u8]) -> Exec {
        let (tokens, body) = command::split(bytes);
        self.fresh();
        let inputs = self.scratch.join("inputs.toml");
        Self::put(&inputs, body);
        let args = self.expand(&tokens, None);
        let verdict = command::verdict(&tokens);
        let first = metrale_cli::run(args.clone());
        let mut violations = invariants::outcome(&first, &verdict);
        violations.extend(located_in(&first, &inputs, body));
        if first.status == Status::Ok {
            // The same question in the other form: the table and the JSON must agree. The
            // switch goes right after the command, before any `--` that ends the options.
            let at = tokens.iter().position(|t| t == "--json");
            let mut other = args;
            match at {
                Some(at) => {
                    other.remove(at);
                }
                None => other.insert(1.min(other.len()), "--json".into()),
            }
            let second = metrale_cli::run(other);
            if second.status == first.status {
                let (json, table) = if at.is_some() {
                    (&first, &second)
                } else {
                    (&second, &first)
                };
                let (found, answer) = invariants::fit_json(&json.stdout, &tokens);
                violations.extend(found);
                let free = command::option(&tokens, "--for").unwrap_or("");
                let printed = invariants::fit_table(&table.stdout, free);
                if answer.is_some() && printed != answer {
                    violations.push(format!(
                        "`fit` prints (value, device bytes) {printed:?} in its table, {answer:?} in its JSON"
                    ));
                }
            } else {
                violations.push(format!(
                    "`fit` exits {} with `--json` toggled, {} without",
                    second.status.code(),
                    first.status.code()
                ));
            }
        }
        cli_exec(&first, violations)
    }

    /// The `plan` target.
    pub(crate) fn plan(&self, bytes: &[u8]) -> Exec {
        let (tokens, body) = command::split(bytes);
        self.fresh();
        let inputs = self.scratch.join("inputs.toml");
        Self::put(&inputs, body);
        let args = self.expand(&tokens, None);
        let verdict = command::verdict(&tokens);
        let outcome = metrale_cli::run(args);
        let mut violations = invariants::outcome(&outcome, &verdict);
        violations.extend(located_in(&outcome, &inputs, body));
        if outcome.status == Status::Ok && verdict == Verdict::WellFormed {
            if tokens.iter().any(|t| t == "--json") {
                violations.extend(invariants::plan_json(&outcome.stdout));
            }
            if command::option(&tokens, "--svg") == Some("@svg") {
                match std::fs::read_to_string(self.scratch.join("out/map.svg")) {
                    Ok(svg) => {
                        violations.extend(invariants::svg(&svg));
                        violations.extend(invariants::svg_shows_the_pool(&svg, &outcome.stdout));
                    }
                    Err(error) => {
                        violations.push(format!("`plan --svg` exits 0 and wrote no map: {error}"));
                    }
                }
            }
        }
        cli_exec(&outcome, violations)
    }

    /// The `import` target.
    pub(crate) fn import(&self, index: usize, bytes: &[u8]) -> Exec {
        let (tokens, body) = command::split(bytes);
        self.fresh();
        let (name, _) = self.seed(Target::Import, index);
        let stem = Path::new(name)
            .file_stem()
            .map_or_else(|| "config".to_owned(), |s| s.to_string_lossy().into_owned());
        let config = self.scratch.join(format!("{stem}.json"));
        Self::put(&config, body);
        let args = self.expand(&tokens, Some(&config));
        let verdict = command::verdict(&tokens);
        let outcome = metrale_cli::run(args.clone());
        let mut violations = invariants::outcome(&outcome, &verdict);
        let positionals = command::positionals(&tokens);
        if tokens.first().is_some_and(|c| c == "import")
            && verdict == Verdict::WellFormed
            && let [circuit, config] = positionals[..]
        {
            // The options as the command got them (an `@` token expanded).
            let given: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let options = ImportOptions {
                name: command::option(&given, "--name"),
                hf: command::option(&given, "--hf"),
            };
            let (circuit, config) = (
                args[circuit].to_string_lossy(),
                args[config].to_string_lossy(),
            );
            violations.extend(self.import_agrees(&circuit, &config, options, &outcome));
        }
        cli_exec(&outcome, violations)
    }

    /// `import`'s answer against the library's (the same table, or a located refusal), and
    /// the table loading appended to the circuit.
    fn import_agrees(
        &self,
        circuit_path: &str,
        config_path: &str,
        options: ImportOptions<'_>,
        outcome: &Outcome,
    ) -> Vec<String> {
        let exits = outcome.status.code();
        let circuit = match Circuit::load(circuit_path) {
            Ok(circuit) => circuit,
            Err(_) if outcome.status == Status::Ok => {
                return vec!["`import` exits 0 on a circuit that does not load".to_owned()];
            }
            Err(_) => return Vec::new(),
        };
        let config = match read_source(Path::new(config_path), config_path, "config") {
            Ok(config) => config,
            Err(_) if outcome.status == Status::Ok => {
                return vec!["`import` exits 0 on a config that cannot be read".to_owned()];
            }
            Err(_) => return Vec::new(),
        };
        let stem = Path::new(config_path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let imported = import(&circuit, &config, &stem, options);
        let checked = imported
            .clone()
            .and_then(|i| circuit.with_imported(&i, &config).map(|_| i));
        match (checked, outcome.status) {
            (Ok(imported), Status::Ok) => {
                let mut violations = Vec::new();
                if outcome.stdout != imported.to_toml() {
                    violations.push("`import` prints other than the library's table".to_owned());
                }
                violations.extend(self.table_loads(&circuit, &outcome.stdout));
                violations
            }
            (Err(diagnostics), Status::BadInput) => {
                // The loader's errors on the table are located in the circuit with the table
                // appended (under a name of its own when it re-reads a checkpoint).
                let mut files = vec![config.clone()];
                let sources = circuit.files();
                if let (Ok(mut imported), Some(first)) = (imported, sources.first()) {
                    if circuit.checkpoint(&imported.name).is_some() {
                        "imported".clone_into(&mut imported.name);
                        while circuit.checkpoint(&imported.name).is_some() {
                            imported.name.push('_');
                        }
                    }
                    let text = format!("{}\n{}", first.text(), imported.to_toml());
                    files.push(Source::new(first.name(), text));
                }
                files.extend(sources.iter().cloned());
                located(&diagnostics, &files, config_path, false)
            }
            (Ok(_), _) => vec![format!(
                "`import` exits {exits} where the library accepts the config"
            )],
            (Err(diagnostics), _) => vec![format!(
                "`import` exits {exits} where the library refuses the config: {}",
                diagnostics
                    .iter()
                    .next()
                    .map_or("", |d| first_line(&d.message))
            )],
        }
    }

    /// The table `import` printed, appended to the circuit's text, loads; a checkpoint the
    /// circuit has is re-read with its own figures; every checkpoint instantiates and plans
    /// under the default inputs (an overflow of their counts aside).
    fn table_loads(&self, circuit: &Circuit, table: &str) -> Vec<String> {
        let Some(name) = table
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("[checkpoint."))
            .and_then(|l| l.strip_suffix(']'))
        else {
            return vec!["`import` prints no `[checkpoint.NAME]` first".to_owned()];
        };
        let existing = circuit.checkpoint(name);
        let mut fresh = name.to_owned();
        let mut table = table.to_owned();
        if existing.is_some() {
            // A re-read: checked under a name of its own, then compared with the circuit's.
            "fuzz_reimported".clone_into(&mut fresh);
            while circuit.checkpoint(&fresh).is_some() {
                fresh.push('_');
            }
            table = table.replacen(name, &fresh, 1);
            // Its `hf` is the pinned checkpoint's: one id names one checkpoint, so the
            // re-read goes without it.
            let kept: Vec<&str> = table
                .lines()
                .filter(|line| !line.starts_with("hf = "))
                .collect();
            table = kept.join("\n") + "\n";
        }
        let Some(file) = circuit.files().first() else {
            return vec!["a loaded circuit has no file".to_owned()];
        };
        let text = format!("{}\n{table}", file.text());
        let dir = Path::new(file.name()).parent().unwrap_or(Path::new("."));
        let report = load(CircuitSource::Text {
            name: file.name(),
            text: &text,
            dir: Some(dir),
        });
        let with = match report.circuit {
            Ok(with) => with,
            Err(diagnostics) => {
                return vec![format!(
                    "what `import` printed does not load appended to the circuit: {}",
                    diagnostics
                        .iter()
                        .next()
                        .map_or("", |d| first_line(&d.message))
                )];
            }
        };
        let mut violations = Vec::new();
        match (with.checkpoint(&fresh), existing) {
            (None, _) => violations.push(format!("the table's checkpoint `{fresh}` is not loaded")),
            (Some(read), Some(existing))
                if read.layer_kinds() != existing.layer_kinds()
                    || read.dims() != existing.dims() =>
            {
                violations.push(format!(
                    "`import` re-reads checkpoint `{name}` with other figures and exits 0"
                ));
            }
            _ => {}
        }
        violations.extend(self.plan_every_checkpoint(&with));
        if let Ok(decls) = with.instantiate(&fresh) {
            let view = self.default_inputs.view();
            match DynamicPlan::new(&decls, &view.inputs(), DEFAULT_ALIGN) {
                Ok(_) | Err(PlanError::Overflow { .. }) => {}
                Err(error) => violations.push(format!(
                    "the imported checkpoint does not plan under the default inputs: {error}"
                )),
            }
        }
        violations
    }

    /// The `write` target.
    pub(crate) fn write(&self, bytes: &[u8]) -> Exec {
        let (tokens, body) = command::split(bytes);
        self.fresh();
        // The mutated circuit under every name a header may give it.
        for token in ["@circuit", "@circuit-nl", "@circuit-ctl"] {
            if let Some(path) = self.at_path(token) {
                Self::put(&path, body);
            }
        }
        let args = self.expand(&tokens, None);
        let verdict = command::verdict(&tokens);
        let outcome = metrale_cli::run(args.clone());
        let mut violations = invariants::outcome(&outcome, &verdict);
        // The runtime path as the command got it (an `@` token expanded).
        let given: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let runtime = command::option(&given, "--runtime-path").unwrap_or(DEFAULT_RUNTIME_PATH);
        let options = Options::default().with_runtime_path(runtime);
        let circuit = command::positionals(&tokens)
            .first()
            .map(|&i| PathBuf::from(&args[i]));
        if tokens.first().is_some_and(|c| c == "gen")
            && verdict == Verdict::WellFormed
            && let Some(circuit) = &circuit
        {
            let output = tokens.iter().position(|t| t == "-o").map(|i| i + 1);
            violations.extend(self.gen_agrees(circuit, &options, &tokens, &args, output, &outcome));
        }
        for dir in ["out", "named"] {
            violations.extend(invariants::no_temporaries(&self.scratch.join(dir)));
        }
        // The Builders build the mutated circuit under the name the header gives it.
        let built = tokens
            .iter()
            .find(|t| t.starts_with("@circuit"))
            .and_then(|t| self.at_path(t))
            .or_else(|| self.at_path("@circuit"));
        if let Some(built) = built {
            violations.extend(self.builders(&built, runtime));
        }
        cli_exec(&outcome, violations)
    }

    /// `gen`'s exit and text against `generate_file`'s: the same module, parsing, written
    /// once (a second `gen -o` leaves the file as it is).
    fn gen_agrees(
        &self,
        circuit: &Path,
        options: &Options,
        tokens: &[String],
        args: &[OsString],
        output: Option<usize>,
        outcome: &Outcome,
    ) -> Vec<String> {
        let mut violations = Vec::new();
        let expected = generate_file(circuit, options);
        match (outcome.status, &expected) {
            (Status::Ok, Ok(generated)) => {
                let into = output.map(|i| tokens[i].as_str());
                let written = match into {
                    None => Some(outcome.stdout.clone()),
                    Some("@out") => {
                        let path = self.scratch.join("out/module.rs");
                        match std::fs::read_to_string(&path) {
                            Ok(text) => Some(text),
                            Err(error) => {
                                violations
                                    .push(format!("`gen -o` exits 0 and wrote nothing: {error}"));
                                None
                            }
                        }
                    }
                    Some(_) => None,
                };
                if written.is_some_and(|w| w != generated.code) {
                    violations.push("`gen` writes other text than `generate_file`".to_owned());
                }
                if let Err(error) = syn::parse_file(&generated.code) {
                    violations.push(format!("the generated code does not parse: {error}"));
                }
                if into == Some("@out") {
                    violations.extend(self.written_once(args));
                }
            }
            (Status::Ok, Err(diagnostics)) => violations.push(format!(
                "`gen` exits 0 where `generate_file` refuses: {}",
                diagnostics
                    .iter()
                    .next()
                    .map_or("", |d| first_line(&d.message))
            )),
            (Status::BadInput, Ok(_)) if !outcome.stderr.contains("cannot write") => {
                violations.push(format!(
                    "`gen` refuses a circuit `generate_file` generates: {}",
                    first_line(&outcome.stderr)
                ));
            }
            _ => {}
        }
        violations
    }

    /// A second `gen -o` of the same module exits 0 and leaves the file (its inode) as it is.
    fn written_once(&self, args: &[OsString]) -> Vec<String> {
        let path = self.scratch.join("out/module.rs");
        let before = std::fs::metadata(&path).ok().map(|m| identity(&m));
        let again = metrale_cli::run(args.to_vec());
        let after = std::fs::metadata(&path).ok().map(|m| identity(&m));
        if again.status != Status::Ok {
            vec![format!(
                "a second `gen -o` exits {}: {}",
                again.status.code(),
                first_line(&again.stderr)
            )]
        } else if before != after {
            vec!["a second `gen -o` of the same module rewrites the file".to_owned()]
        } else {
            Vec::new()
        }
    }

    /// Two `Builder`s (runtime paths `runtime` and another) generate `circuit` into one folder
    /// at once, each reading the module while the other writes it.
    fn builders(&self, circuit: &Path, runtime: &str) -> Vec<String> {
        let dir = self.scratch.join("build");
        let other = if runtime == DEFAULT_RUNTIME_PATH {
            "crate::rt"
        } else {
            DEFAULT_RUNTIME_PATH
        };
        let runtimes = [runtime, other];
        let expected: Vec<Option<String>> = runtimes
            .iter()
            .map(|rt| {
                generate_file(circuit, &Options::default().with_runtime_path(*rt))
                    .ok()
                    .map(|g| g.code)
            })
            .collect();
        let results: Vec<Vec<String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = runtimes
                .iter()
                .enumerate()
                .map(|(mine, rt)| {
                    let (dir, expected) = (&dir, &expected);
                    scope.spawn(move || {
                        crate::guard::guarded(|| builder_rounds(circuit, rt, dir, expected, mine))
                            .unwrap_or_else(|panic| vec![format!("a Builder thread {panic}")])
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| vec!["a Builder thread died".to_owned()])
                })
                .collect()
        });
        let mut violations: Vec<String> = results.into_iter().flatten().collect();
        violations.extend(invariants::no_temporaries(&dir));
        violations.sort();
        violations.dedup();
        violations
    }

    /// The `compile` target.
    pub(crate) fn compile(&self, index: usize, bytes: &[u8]) -> Exec {
        let (name, _) = self.seed(Target::Compile, index);
        let text = String::from_utf8_lossy(bytes);
        let dir = self.dir_of(name);
        let report = load(CircuitSource::Text {
            name,
            text: &text,
            dir: Some(&dir),
        });
        let Ok(circuit) = &report.circuit else {
            return self.check_report(name, &report);
        };
        let violations = match metrale_codegen::generate(circuit, &Options::default()) {
            Err(diagnostics) => vec![format!(
                "a loaded circuit does not generate: {}",
                diagnostics
                    .iter()
                    .next()
                    .map_or("", |d| first_line(&d.message))
            )],
            Ok(code) => self.rustc(&code),
        };
        Exec {
            accepted: true,
            errors: Vec::new(),
            violations,
        }
    }

    /// `cargo check` of `code` as this job's scratch crate's module.
    fn rustc(&self, code: &str) -> Vec<String> {
        let base = self.corpus.root.join("target/fuzz-compile");
        let krate = base.join(format!("job{}", self.job));
        let runtime = self.corpus.root.join("metrale-circuit");
        let manifest = format!(
            "[package]\nname = \"metrale-fuzz-compile\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             # Not a member of the metrale workspace.\n[workspace]\n\n\
             [dependencies]\nmetrale-circuit = {{ path = {:?}, default-features = false }}\n",
            runtime.display().to_string()
        );
        let lib = "//! metrale-fuzz's `compile` target: one generated module, as a user crate compiles it.\n\
                   #![deny(warnings, missing_docs)]\n\ninclude!(\"generated.rs\");\n";
        let generated = krate.join("src/generated.rs");
        let log = krate.join("check.log");
        let setup = std::fs::create_dir_all(krate.join("src"))
            .and_then(|()| write_if_other(&krate.join("Cargo.toml"), &manifest))
            .and_then(|()| write_if_other(&krate.join("src/lib.rs"), lib))
            .and_then(|()| std::fs::write(&generated, code))
            .and_then(|()| std::fs::File::create(&log));
        let log_file = match setup {
            Ok(file) => file,
            Err(error) => panic!("cannot set up {}: {error}", krate.display()),
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let child = Command::new(cargo)
            .args([
                "check",
                "--offline",
                "-q",
                "-j",
                "1",
                "--message-format",
                "short",
            ])
            .current_dir(&krate)
            .env("CARGO_TARGET_DIR", base.join("target"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(error) => panic!("cannot run cargo: {error}"),
        };
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > RUSTC_LIMIT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return vec![format!(
                        "`cargo check` of a generated module ran over {} s",
                        RUSTC_LIMIT.as_secs()
                    )];
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(error) => panic!("cannot wait for cargo: {error}"),
            }
        };
        if status.success() {
            return Vec::new();
        }
        // Another process on this job's crate (a second run) may have replaced the module:
        // then nothing is known of this one.
        if std::fs::read_to_string(&generated).ok().as_deref() != Some(code) {
            return Vec::new();
        }
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let mut errors: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("error"))
            .take(3)
            .collect();
        if errors.is_empty() {
            errors.push(first_line(&text));
        }
        vec![format!(
            "an accepted module does not compile: {}",
            errors.join(" | ")
        )]
    }
}

/// One `Builder`'s rounds on the shared folder: generate, then read every module there,
/// which must be one of the two whole modules (`expected`, `None` for a runtime path or
/// circuit that does not generate); its lines to cargo one instruction each; its answer
/// `generate_file`'s (a path with a line break refused, as cargo could not watch it).
fn builder_rounds(
    circuit: &Path,
    runtime: &str,
    dir: &Path,
    expected: &[Option<String>],
    mine: usize,
) -> Vec<String> {
    let builder = Builder::new()
        .circuit(circuit)
        .out_dir(dir)
        .runtime_path(runtime);
    let breaks = circuit.to_string_lossy().contains(['\n', '\r']);
    let mut violations = Vec::new();
    for _ in 0..BUILDER_ROUNDS {
        let mut out = Vec::new();
        let result = builder.compile_to(&mut out);
        violations.extend(invariants::rerun_lines(&out));
        match (&result, expected.get(mine).and_then(Option::as_ref)) {
            (Ok(_), Some(_)) if breaks => violations.push(
                "a Builder accepts a circuit whose path holds a line break (cargo cannot watch it)"
                    .to_owned(),
            ),
            (Ok(_), None) => {
                violations.push("a Builder generates where `generate_file` refuses".to_owned());
            }
            (Err(error), Some(_)) if !breaks => violations.push(format!(
                "a Builder fails on a circuit that generates: {}",
                first_line(&error.to_string())
            )),
            _ => {}
        }
        for _ in 0..READS {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let Ok(read) = std::fs::read(&path) else {
                    continue;
                };
                if !expected.iter().flatten().any(|e| e.as_bytes() == read) {
                    let whole: Vec<usize> = expected.iter().flatten().map(String::len).collect();
                    violations.push(format!(
                        "a reader saw a torn module: {} bytes, the whole ones {whole:?}",
                        read.len()
                    ));
                }
            }
        }
    }
    violations
}

/// What a CLI target's execution found: accepted when the command exits 0.
pub(crate) fn cli_exec(outcome: &Outcome, violations: Vec<String>) -> Exec {
    Exec {
        accepted: outcome.status == Status::Ok,
        errors: invariants::error_lines(&outcome.stderr),
        violations,
    }
}

/// The rendered locations of `outcome`'s diagnostics in the inputs file at `path` (whose
/// bytes are `body`) inside it (a text of other bytes than UTF-8 is not checked: the loader
/// shows it decoded).
fn located_in(outcome: &Outcome, path: &Path, body: &[u8]) -> Vec<String> {
    match std::str::from_utf8(body) {
        Ok(text) if outcome.status == Status::BadInput => {
            invariants::rendered_locations(&outcome.stderr, &path.display().to_string(), text)
        }
        _ => Vec::new(),
    }
}

/// A file's identity, to tell a rewrite (a new file renamed into place) from none.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// A file's identity: elsewhere its modification time.
#[cfg(not(unix))]
fn identity(meta: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    meta.modified().ok()
}

/// Writes `text` to `path` unless it holds it already (a rewrite would rebuild the crate).
fn write_if_other(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, workspace_root};

    /// Runs `target` on each seed `pick` chooses, unmutated: each must pass every invariant;
    /// returns how many were accepted.
    fn run_seeds(target: Target, pick: impl Fn(&str, &str) -> bool) -> (usize, usize) {
        let corpus = Corpus::read(&workspace_root()).expect("corpus");
        let scratch = std::env::temp_dir().join(format!(
            "metrale-fuzz-seeds-{}-{}",
            std::process::id(),
            target.name()
        ));
        let context = Context::new(&corpus, &[], scratch.clone(), 0).expect("context");
        let (mut ran, mut accepted) = (0, 0);
        for index in 0..context.seed_count(target) {
            let (name, text) = context.seed(target, index);
            if !pick(name, text) {
                continue;
            }
            let exec = context.exec(target, index, text.as_bytes());
            assert!(
                exec.violations.is_empty(),
                "{} on {name}@{index}: {:?}\n{}",
                target.name(),
                exec.violations,
                text.lines().next().unwrap_or("")
            );
            ran += 1;
            accepted += usize::from(exec.accepted);
        }
        let _ = std::fs::remove_dir_all(scratch);
        (ran, accepted)
    }

    #[test]
    fn the_fit_and_plan_seeds_pass_with_the_clis_inputs() {
        let cli = |name: &str, _: &str| name.starts_with("metrale-codegen/cli/inputs/");
        let (ran, accepted) = run_seeds(Target::Fit, cli);
        assert!(ran >= 40 && accepted >= ran / 2, "{accepted} of {ran}");
        let (ran, accepted) = run_seeds(Target::Plan, cli);
        assert!(ran >= 40 && accepted >= ran / 2, "{accepted} of {ran}");
    }

    #[test]
    fn every_import_seed_passes_and_loads() {
        // Every zoo config imports and loads; an import case may be refused, never a finding.
        let zoo = |name: &str, _: &str| name.starts_with("circuits/configs/");
        assert_eq!(run_seeds(Target::Import, zoo), (52, 52));
        let cases = |name: &str, _: &str| name.starts_with("metrale-circuit/tests/import_cases/");
        let (ran, accepted) = run_seeds(Target::Import, cases);
        assert!(
            ran >= 60 && accepted > 0 && accepted < ran,
            "{accepted} of {ran}"
        );
    }

    #[test]
    fn the_write_seeds_of_three_circuits_pass() {
        let some = |name: &str, _: &str| {
            [
                "circuits/gemma2.toml",
                "circuits/llama.toml",
                "circuits/mistral.toml",
            ]
            .contains(&name)
        };
        let (ran, accepted) = run_seeds(Target::Write, some);
        assert_eq!((ran, accepted), (3, 3));
    }
}
