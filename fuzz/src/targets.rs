//! The targets: what one execution runs on one mutated input, and what it checks.
//!
//! - `shape`: `Shape::parse`, its canonical form, its dim offsets and `eval` under several dim
//!   tables;
//! - `circuit`: the loader on a mutated circuit (`CircuitSource::Text`, or `CircuitSource::File` when the bytes
//!   are not UTF-8); an accepted one has every checkpoint instantiated and planned
//!   dynamically under the default inputs, its layout checked;
//! - `library`: the same, the circuit intact and one of its block libraries mutated on disk in
//!   a scratch folder;
//! - `inputs`: `InputsFile::parse` on a mutated inputs file; an accepted one plans three real
//!   circuits (picked by the input's hash) generated and dynamic, compared ([`crate::compare`]);
//! - `generate`: an accepted mutated circuit must generate, parse with `syn`, and generate
//!   the same text twice; the macro core `expand` must give parseable tokens, with a
//!   `compile_error!` when the circuit is refused;
//! - `fit`, `plan`, `import`, `write` (`gen -o` and two `Builder`s on one folder) and
//!   `compile` (rustc on accepted generated modules): the surfaces of [`crate::surfaces`];
//! - `alloc`, `registry` and `config` (a `config.json` read at run time): what an engine calls
//!   at run time, [`crate::runtime`];
//! - `weights`: `fit --weights` on mutated safetensors headers and indexes, folders, FIFOs,
//!   symlink loops and directories, [`crate::weights`].
//!
//! Every refused input's diagnostics must be located inside the files read
//! ([`crate::invariants::located`]).
//!
//! Invariants: an execution depends only on the target, the seed it mutates and the bytes, so
//! a saved finding replays; the scratch folder is this context's alone (the `compile`
//! target's crate is this job's, under the workspace's `target/fuzz-compile/`).

use std::path::{Path, PathBuf};

use metrale_circuit::DEFAULT_ALIGN;
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::diag::{Diagnostics, Source};
use metrale_circuit::load::shape::Shape;
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::load::{CircuitSource, LoadReport, load};

use crate::compare::Loaded;
use crate::corpus::Corpus;
use crate::invariants::{first_line, layout, located, shape_error_inside};
use crate::mutate::Flavor;

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// Shape expressions.
    Shape,
    /// Circuit files.
    Circuit,
    /// Block libraries, on disk.
    Library,
    /// Inputs files, generated == dynamic.
    Inputs,
    /// The generator and the macro core.
    Generate,
    /// `metrale-codegen fit`, options and inputs files.
    Fit,
    /// `metrale-codegen plan` with ranks, JSON, terms and the SVG map.
    Plan,
    /// `metrale-codegen import` of mutated configs.
    Import,
    /// `metrale-codegen gen -o` and two `Builder`s on one folder.
    Write,
    /// rustc on accepted generated modules.
    Compile,
    /// The allocator against its reference model.
    Alloc,
    /// The registry against its documented rules.
    Registry,
    /// `config.json` read at run time.
    Config,
    /// `fit --weights` on mutated safetensors metadata and odd files.
    Weights,
}

impl Target {
    /// Every target, in the order a run goes through them.
    pub const ALL: [Target; 14] = [
        Target::Shape,
        Target::Circuit,
        Target::Library,
        Target::Inputs,
        Target::Generate,
        Target::Fit,
        Target::Plan,
        Target::Import,
        Target::Write,
        Target::Compile,
        Target::Alloc,
        Target::Registry,
        Target::Config,
        Target::Weights,
    ];

    /// Its name on the command line and in findings.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Target::Shape => "shape",
            Target::Circuit => "circuit",
            Target::Library => "library",
            Target::Inputs => "inputs",
            Target::Generate => "generate",
            Target::Fit => "fit",
            Target::Plan => "plan",
            Target::Import => "import",
            Target::Write => "write",
            Target::Compile => "compile",
            Target::Alloc => "alloc",
            Target::Registry => "registry",
            Target::Config => "config",
            Target::Weights => "weights",
        }
    }

    /// The target named `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// How its inputs are mutated.
    #[must_use]
    pub const fn flavor(self) -> Flavor {
        match self {
            Target::Shape | Target::Alloc | Target::Registry => Flavor::Shape,
            Target::Config => Flavor::Json,
            Target::Fit | Target::Plan | Target::Write => Flavor::CommandToml,
            Target::Import | Target::Weights => Flavor::CommandJson,
            _ => Flavor::Toml,
        }
    }
}

/// What one execution found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exec {
    /// Whether the input was accepted (loaded, parsed).
    pub accepted: bool,
    /// The first line of each error the input was refused with.
    pub errors: Vec<String>,
    /// Every invariant it broke.
    pub violations: Vec<String>,
}

impl Exec {
    pub(crate) fn refused(diagnostics: &Diagnostics, violations: Vec<String>) -> Exec {
        Exec {
            accepted: false,
            errors: diagnostics
                .iter()
                .map(|d| first_line(&d.message).to_owned())
                .collect(),
            violations,
        }
    }
}

/// What the targets of one thread share: the corpus, the default inputs, the real circuits
/// loaded for the comparison, a scratch folder, and the job's index (its `compile` crate).
pub struct Context<'c> {
    pub(crate) corpus: &'c Corpus,
    pub(crate) real: &'c [Loaded],
    pub(crate) default_inputs: InputsFile,
    pub(crate) scratch: PathBuf,
    pub(crate) job: usize,
    /// The circuits the loader accepts as they are: the `compile` and `write` targets' seeds
    /// (read on first use, so other targets do not pay for it).
    compilable: std::sync::OnceLock<Vec<usize>>,
}

impl<'c> Context<'c> {
    /// A context of job `job` writing into `scratch` (created, and emptied first), with
    /// `scratch/named/blocks` holding the workspace's block libraries (for circuits written
    /// there under odd names).
    ///
    /// # Errors
    /// When the default inputs do not parse or the scratch folder cannot be made.
    pub fn new(
        corpus: &'c Corpus,
        real: &'c [Loaded],
        scratch: PathBuf,
        job: usize,
    ) -> Result<Self, String> {
        let path = corpus.root.join("metrale-codegen/cli/inputs/default.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let default_inputs = InputsFile::parse("metrale-codegen/cli/inputs/default.toml", &text)
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join("blocks"))
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        for blocks in ["circuits/blocks", "tests/ui/circuits/blocks"] {
            copy_blocks(&corpus.root.join(blocks), &scratch.join("named/blocks"))
                .map_err(|e| format!("cannot copy {blocks}: {e}"))?;
        }
        Ok(Self {
            corpus,
            real,
            default_inputs,
            scratch,
            job,
            compilable: std::sync::OnceLock::new(),
        })
    }

    /// The indices of the circuits the loader accepts as they are.
    fn compilable(&self) -> &[usize] {
        self.compilable.get_or_init(|| {
            let circuits = &self.corpus.circuits;
            (0..circuits.len())
                .filter(|&i| {
                    let seed = &circuits[i];
                    load(CircuitSource::Text {
                        name: &seed.name,
                        text: &seed.text,
                        dir: Some(&self.dir_of(&seed.name)),
                    })
                    .circuit
                    .is_ok()
                })
                .collect()
        })
    }

    /// The scratch folder.
    #[must_use]
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    /// How many seeds `target` has.
    #[must_use]
    pub fn seed_count(&self, target: Target) -> usize {
        match target {
            Target::Shape => self.corpus.shapes.len(),
            Target::Circuit | Target::Generate => self.corpus.circuits.len(),
            Target::Library => self.corpus.libraries.len(),
            Target::Inputs => self.corpus.inputs.len(),
            Target::Fit => self.corpus.fits.len(),
            Target::Plan => self.corpus.plans.len(),
            Target::Import => self.corpus.imports.len(),
            Target::Compile | Target::Write => self.compilable().len(),
            Target::Alloc => self.corpus.allocs.len(),
            Target::Registry => self.corpus.registries.len(),
            Target::Config => self.corpus.configs.len(),
            Target::Weights => self.corpus.weights.len(),
        }
    }

    /// The name and the text of seed `index` of `target`.
    #[must_use]
    pub fn seed(&self, target: Target, index: usize) -> (&'c str, &'c str) {
        let corpus = self.corpus;
        match target {
            Target::Shape => (&corpus.shapes[index].name, &corpus.shapes[index].text),
            Target::Circuit | Target::Generate => {
                (&corpus.circuits[index].name, &corpus.circuits[index].text)
            }
            Target::Compile => {
                let seed = &corpus.circuits[self.compilable()[index]];
                (&seed.name, &seed.text)
            }
            Target::Library => (
                &corpus.libraries[index].circuit.name,
                &corpus.libraries[index].text,
            ),
            Target::Inputs => (&corpus.inputs[index].name, &corpus.inputs[index].text),
            Target::Fit => (&corpus.fits[index].name, &corpus.fits[index].text),
            Target::Plan => (&corpus.plans[index].name, &corpus.plans[index].text),
            Target::Import => (&corpus.imports[index].name, &corpus.imports[index].text),
            Target::Alloc => (&corpus.allocs[index].name, &corpus.allocs[index].text),
            Target::Registry => (
                &corpus.registries[index].name,
                &corpus.registries[index].text,
            ),
            Target::Config => (
                &corpus.configs[index].config.name,
                &corpus.configs[index].config.text,
            ),
            Target::Weights => (&corpus.weights[index].name, &corpus.weights[index].text),
            // `writes[i]` is `circuits[i]` after a command line.
            Target::Write => {
                let seed = &corpus.writes[self.compilable()[index]];
                (&seed.name, &seed.text)
            }
        }
    }

    /// The index of the seed named `name` (for a library seed, `circuit:library`).
    #[must_use]
    pub fn seed_named(&self, target: Target, name: &str) -> Option<usize> {
        (0..self.seed_count(target)).find(|&i| self.seed_label(target, i) == name)
    }

    /// How seed `index` is named in findings: a library seed `circuit:library`, a command seed
    /// `file@index` (its command line is the input's first line, the file names the seed).
    #[must_use]
    pub fn seed_label(&self, target: Target, index: usize) -> String {
        match target {
            Target::Library => {
                let seed = &self.corpus.libraries[index];
                format!("{}:{}", seed.circuit.name, seed.library)
            }
            Target::Fit | Target::Plan | Target::Import | Target::Write | Target::Weights => {
                format!("{}@{index}", self.seed(target, index).0)
            }
            _ => self.seed(target, index).0.to_owned(),
        }
    }

    /// Runs `target` on `bytes`, a mutation of seed `index`.
    #[must_use]
    pub fn exec(&self, target: Target, index: usize, bytes: &[u8]) -> Exec {
        match target {
            Target::Shape => shape(bytes),
            Target::Circuit => {
                let (name, _) = self.seed(target, index);
                let dir = self.dir_of(name);
                let report = self.load_bytes(name, bytes, &dir);
                self.check_report(name, &report)
            }
            Target::Library => self.library(index, bytes),
            Target::Inputs => self.inputs(index, bytes),
            Target::Generate => self.generate(index, bytes),
            Target::Fit => self.fit(bytes),
            Target::Plan => self.plan(bytes),
            Target::Import => self.import(index, bytes),
            Target::Write => self.write(bytes),
            Target::Compile => self.compile(index, bytes),
            Target::Alloc => Self::alloc(bytes),
            Target::Registry => Self::registry(bytes),
            Target::Config => self.config_at_run_time(index, bytes),
            Target::Weights => self.weights(bytes),
        }
    }

    /// Whether `bytes`, a mutation of seed `index`, is worth one of `target`'s executions, so
    /// that the run draws again for an expensive target: `compile` runs rustc only on circuits
    /// the loader accepts (a refused one would cost a load, an accepted one a `cargo check`);
    /// `write` writes mostly circuits that generate (three in four, by the input's hash: the
    /// others keep the refusals of `gen` and the `Builder` in the run); every other input is.
    #[must_use]
    pub fn worth(&self, target: Target, index: usize, bytes: &[u8]) -> bool {
        let (text, dir) = match target {
            Target::Compile => {
                let (name, _) = self.seed(target, index);
                (String::from_utf8_lossy(bytes), self.dir_of(name))
            }
            Target::Write if !crate::findings::hash(bytes).is_multiple_of(4) => (
                String::from_utf8_lossy(crate::command::split(bytes).1),
                self.scratch.join("named"),
            ),
            _ => return true,
        };
        load(CircuitSource::Text {
            name: "worth.toml",
            text: &text,
            dir: Some(&dir),
        })
        .circuit
        .is_ok()
    }

    /// The folder a circuit seed's includes are read from: its own for a file of the
    /// workspace, `circuits/` for a snippet.
    pub(crate) fn dir_of(&self, name: &str) -> PathBuf {
        match Path::new(name).parent() {
            Some(parent) if !name.contains('#') => self.corpus.root.join(parent),
            _ => self.corpus.root.join("circuits"),
        }
    }

    /// Loads circuit bytes named `name`, includes from `dir`: as text, or from a scratch file
    /// when they are not UTF-8 (so the reader's own decoding runs).
    fn load_bytes(&self, name: &str, bytes: &[u8], dir: &Path) -> LoadReport {
        if let Some(text) = text_of(bytes) {
            load(CircuitSource::Text {
                name,
                text: &text,
                dir: Some(dir),
            })
        } else {
            let path = self.scratch.join("circuit.toml");
            if let Err(error) = std::fs::write(&path, bytes) {
                panic!("cannot write {}: {error}", path.display());
            }
            load(CircuitSource::File { path: &path, name })
        }
    }

    /// The checks of a load: located errors, or an accepted circuit's checkpoints planned.
    pub(crate) fn check_report(&self, name: &str, report: &LoadReport) -> Exec {
        match &report.circuit {
            Err(diagnostics) => {
                let violations = located(diagnostics, &report.files, name, true);
                // Rendering is part of what a front end does with the errors (and is timed).
                let _ = diagnostics.render();
                Exec::refused(diagnostics, violations)
            }
            Ok(circuit) => Exec {
                accepted: true,
                errors: Vec::new(),
                violations: self.plan_every_checkpoint(circuit),
            },
        }
    }

    /// Instantiates and plans (under the default inputs) every checkpoint of a loaded
    /// circuit, checking each layout.
    pub(crate) fn plan_every_checkpoint(&self, circuit: &Circuit) -> Vec<String> {
        let view = self.default_inputs.view();
        let mut violations = Vec::new();
        for checkpoint in circuit.checkpoints() {
            match circuit.instantiate(checkpoint.name()) {
                Err(error) => violations.push(format!(
                    "a loaded circuit's checkpoint `{}` does not instantiate: {}",
                    checkpoint.name(),
                    first_line(&error.message)
                )),
                Ok(decls) => {
                    if let Ok(plan) = DynamicPlan::new(&decls, &view.inputs(), DEFAULT_ALIGN) {
                        violations.extend(layout(&plan, checkpoint.name()));
                    }
                }
            }
        }
        violations
    }

    /// The library target: the seed circuit's folder copied to scratch, one library replaced
    /// by `bytes`, the circuit loaded from there.
    fn library(&self, index: usize, bytes: &[u8]) -> Exec {
        let seed = &self.corpus.libraries[index];
        let blocks = self.scratch.join("blocks");
        let _ = std::fs::remove_dir_all(&blocks);
        if let Err(error) = copy_blocks(&seed.dir.join("blocks"), &blocks)
            .and_then(|()| std::fs::write(blocks.join(format!("{}.toml", seed.library)), bytes))
        {
            panic!("cannot lay out {}: {error}", blocks.display());
        }
        let name = seed.circuit.name.as_str();
        let report = load(CircuitSource::Text {
            name,
            text: &seed.circuit.text,
            dir: Some(&self.scratch),
        });
        self.check_report(name, &report)
    }

    /// The inputs target.
    fn inputs(&self, index: usize, bytes: &[u8]) -> Exec {
        let (name, _) = self.seed(Target::Inputs, index);
        let (parsed, name, files) = if let Some(text) = text_of(bytes) {
            (
                InputsFile::parse(name, &text),
                name.to_owned(),
                vec![Source::new(name, text.as_ref())],
            )
        } else {
            let path = self.scratch.join("inputs.toml");
            if let Err(error) = std::fs::write(&path, bytes) {
                panic!("cannot write {}: {error}", path.display());
            }
            // The loader locates an encoding error in the text as far as it decodes, the
            // rest replaced: the same text the check reads.
            let name = path.display().to_string();
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            (
                InputsFile::load(&path),
                name.clone(),
                vec![Source::new(name, lossy)],
            )
        };
        let file = match parsed {
            Err(diagnostics) => {
                let violations = located(&diagnostics, &files, &name, true);
                let _ = diagnostics.render();
                return Exec::refused(&diagnostics, violations);
            }
            Ok(file) => file,
        };
        let view = file.view();
        let inputs = view.inputs();
        let hash = crate::findings::hash(bytes);
        let align = [256, 256, 256, 1, 64, 4096, 0, 3][usize::try_from(hash >> 61).unwrap_or(0)];
        let mut picked: Vec<usize> = [hash, hash >> 16, hash >> 32]
            .iter()
            .map(|h| usize::try_from(h % self.real.len() as u64).unwrap_or(0))
            .collect();
        picked.dedup();
        let mut violations = Vec::new();
        for i in picked {
            let loaded = &self.real[i];
            if let Err(difference) = (loaded.compare)(loaded, &inputs, align) {
                violations.push(format!("generated != dynamic: {difference}"));
            }
        }
        Exec {
            accepted: true,
            errors: Vec::new(),
            violations,
        }
    }

    /// The generate target.
    fn generate(&self, index: usize, bytes: &[u8]) -> Exec {
        let (name, _) = self.seed(Target::Generate, index);
        let text = String::from_utf8_lossy(bytes);
        let dir = self.dir_of(name);
        let input = CircuitSource::Text {
            name,
            text: &text,
            dir: Some(&dir),
        };
        let report = load(input);
        let mut exec = match &report.circuit {
            Err(_) => self.check_report(name, &report),
            Ok(circuit) => Exec {
                accepted: true,
                errors: Vec::new(),
                violations: generated_code(circuit),
            },
        };
        let options = metrale_codegen::Options::default();
        let tokens =
            metrale_codegen::__macro::expand(input, &options, proc_macro2::Span::call_site());
        let printed = tokens.to_string();
        if let Err(error) = syn::parse2::<syn::File>(tokens) {
            exec.violations
                .push(format!("the expansion does not parse: {error}"));
        }
        if !exec.accepted && !printed.contains("compile_error") {
            exec.violations
                .push("a refused circuit expands without a compile_error!".to_owned());
        }
        exec
    }
}

/// The text of `bytes` as handed to a `&str` API: `None` (read them from a file, so the
/// reader's own decoding runs) for one in eight inputs that are not UTF-8, by their hash; the
/// others have their bad bytes replaced, so that the non-UTF-8 path does not drown the rest.
fn text_of(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(std::borrow::Cow::Borrowed(text)),
        Err(_) if crate::findings::hash(bytes).is_multiple_of(8) => None,
        Err(_) => Some(String::from_utf8_lossy(bytes)),
    }
}

/// A loaded circuit must generate, the code must parse, and a second generation must give the
/// same text.
fn generated_code(circuit: &Circuit) -> Vec<String> {
    let options = metrale_codegen::Options::default();
    match metrale_codegen::generate(circuit, &options) {
        Err(diagnostics) => vec![format!(
            "a loaded circuit does not generate: {}",
            diagnostics
                .iter()
                .next()
                .map_or("", |d| first_line(&d.message))
        )],
        Ok(code) => {
            let mut violations = Vec::new();
            if let Err(error) = syn::parse_file(&code) {
                violations.push(format!("the generated code does not parse: {error}"));
            }
            if metrale_codegen::generate(circuit, &options).ok().as_ref() != Some(&code) {
                violations.push("generating twice gives different code".to_owned());
            }
            violations
        }
    }
}

/// The shape target.
fn shape(bytes: &[u8]) -> Exec {
    let text = String::from_utf8_lossy(bytes);
    match Shape::parse(&text) {
        Err(error) => Exec {
            accepted: false,
            errors: vec![first_line(&error.message).to_owned()],
            violations: shape_error_inside(&error, &text),
        },
        Ok(shape) => {
            let mut violations = Vec::new();
            for dim in shape.dims() {
                if !shape
                    .text
                    .get(dim.offset..)
                    .is_some_and(|t| t.starts_with(&dim.name))
                {
                    violations.push(format!(
                        "dim `{}` is not at its offset {}",
                        dim.name, dim.offset
                    ));
                }
            }
            let canonical = shape.to_string();
            match Shape::parse(&canonical) {
                Err(error) => violations.push(format!(
                    "the canonical form `{canonical}` does not parse: {}",
                    error.message
                )),
                Ok(again) => {
                    if again.to_string() != canonical {
                        violations.push(format!("the canonical form `{canonical}` is not stable"));
                    }
                    let ones = |_: &str| Some(1);
                    if again.eval(ones) != shape.eval(ones) {
                        violations.push("the canonical form evaluates differently".to_owned());
                    }
                }
            }
            for value in [0, 1, 7, 1 << 32, u64::MAX] {
                let _ = shape.eval(|_| Some(value));
            }
            let _ = shape.eval(|name| (name.len() % 2 == 0).then_some(3));
            Exec {
                accepted: true,
                errors: Vec::new(),
                violations,
            }
        }
    }
}

/// Copies every file of `from` into `to` (created).
pub(crate) fn copy_blocks(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
