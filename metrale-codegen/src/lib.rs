//! metrale-codegen turns a circuit into typed, statically laid-out Rust: one module per
//! circuit with `Dims`, `Formats`, `Inputs`, a `const fn` per state size, and per checkpoint a
//! `StatePlan` struct with one named `Region` field per state term and a `const fn new`.
//!
//! This crate is the generator core every front end calls (the `build.rs` [`Builder`], the
//! `metrale-codegen` CLI of the `metrale-cli` package and the `metrale_macros::circuit!`
//! macro): a loaded circuit in, [`proc_macro2::TokenStream`] out ([`tokens`]), formatted by
//! prettyplease ([`generate`]). It depends on the loader, syn, quote and prettyplease only: no
//! command-line parser and no JSON, which the CLI package owns.
//!
//! # Tutorial: a typed state plan from `build.rs`
//!
//! 1. Depend on the runtime crate, and on this one for the build script. The crates are not
//!    published yet: depend on a checkout of the repository by `path` (or on the repository
//!    with `git = "<its URL>"` in place of `path`; cargo finds each crate by its name):
//!
//!    ```toml
//!    [dependencies]
//!    metrale-circuit = { path = "../metrale/metrale-circuit" }
//!
//!    [build-dependencies]
//!    metrale-codegen = { path = "../metrale/metrale-codegen" }
//!    ```
//!
//! 2. Write `build.rs`:
//!
//!    ```no_run
//!    // build.rs, in `fn main`:
//!    if let Err(error) = metrale_codegen::Builder::new()
//!        .circuit("circuits/qwen3_5.toml")
//!        .compile()
//!    {
//!        // The located diagnostics (`--> circuits/qwen3_5.toml:12:8`, the line, a caret).
//!        eprintln!("{error}");
//!        std::process::exit(1);
//!    }
//!    ```
//!
//! 3. Include the generated module (it is written to `$OUT_DIR/<arch>.rs`):
//!
//!    ```ignore
//!    include!(concat!(env!("OUT_DIR"), "/qwen3_5.rs"));
//!    ```
//!
//! 4. Build a plan; a missing format key or a misspelled field is a compile error:
//!
//!    ```ignore
//!    use metrale_circuit::{CacheInputs, KvInputs, StateDtype};
//!    use qwen3_5::{qwen3_5_27b, Formats, Inputs};
//!
//!    let inputs = Inputs {
//!        formats: Formats {
//!            ssm_h_storage: StateDtype::F32,
//!            ssm_conv_storage: StateDtype::Bf16,
//!            kv_cache_dtype: StateDtype::Fp8,
//!        },
//!        slots: 9,
//!        verify: None,
//!        kv: Some(KvInputs { blocks: 2048, block_size: 16, window: None }),
//!        draft_kv: None,
//!        caches: CacheInputs::EMPTY,
//!    };
//!    let plan = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256)?;
//!    let k = plan.l3.attn.k.blocks; // a Region: offset, bytes, units, dtype
//!    let arena = plan.device_bytes();
//!    ```
//!
//! The whole plan can also be a constant: `const PLAN: StatePlan = match StatePlan::new(..) {
//! Ok(p) => p, Err(_) => panic!() };`.
//!
//! 5. Or choose the checkpoint at run time, from the model's name or Hugging Face id, with one
//!    code path for every checkpoint: `Checkpoint` has a variant per checkpoint, `AnyPlan` a
//!    variant per checkpoint's `StatePlan` and what every plan has (terms, regions, arena
//!    sizes, layers, the fit searches), and `Inputs::from_state_inputs` reads a loaded inputs
//!    file (a missing format key is a `MissingFormat` error naming it):
//!
//!    ```ignore
//!    use qwen3_5::{AnyPlan, Checkpoint, Inputs};
//!
//!    let file = metrale_circuit::load::InputsFile::load("inputs.toml")?;
//!    let view = file.view();
//!    let inputs = Inputs::from_state_inputs(&view.inputs())?;
//!    let checkpoint = Checkpoint::from_hf("Qwen/Qwen3.5-27B").ok_or("no such checkpoint")?;
//!    let plan = AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, 256)?;
//!    for (term, region) in plan.terms().iter().zip(plan.regions().iter()) {
//!        // one code path for every checkpoint
//!    }
//!    ```

mod builder;
mod emit;
mod expansion;
mod render;

use std::path::{Path, PathBuf};

use metrale_circuit::load::Circuit;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use proc_macro2::TokenStream;

pub use builder::{BuildError, Builder, Compiled, write_if_changed};
pub use metrale_circuit::load::CircuitSource;
pub use render::{header, render};

/// The `circuit!` macro's plumbing: what `metrale-macros` calls (and the workspace's fuzzer,
/// which checks the macro's expansion), nothing else.
///
/// Not API: hidden from the docs, and free to change in any release. `metrale-macros` pins
/// this crate with `=`, so the macro and this module always come from the same version.
/// The macro returns [`expand`](__macro::expand)'s tokens: the module, or the diagnostics as
/// `compile_error!`s, plus an `include_str!` per file read so the compiler rebuilds when a
/// circuit changes.
#[doc(hidden)]
pub mod __macro {
    pub use crate::expansion::{Expansion, arch_of, compile_error, compile_errors, expand};

    /// Whether `path` can name the runtime crate ([`Options::runtime_path`](crate::Options)),
    /// or the diagnostic [`tokens`](crate::tokens) would report: what the macro checks first,
    /// to point at the path's own literal.
    ///
    /// # Errors
    /// The one diagnostic, when `path` is not a path or has generic arguments.
    pub fn check_runtime_path(path: &str) -> Result<(), metrale_circuit::load::diag::Diagnostics> {
        crate::runtime_path(path).map(drop)
    }
}

/// The runtime crate's path in generated code, unless [`Options::runtime_path`] says otherwise.
pub const DEFAULT_RUNTIME_PATH: &str = "::metrale_circuit";

/// How to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// The path generated code names the runtime crate by (`::metrale_circuit`, or the path of
    /// a re-export such as `::my_engine::metrale`).
    pub runtime_path: String,
}

impl Options {
    /// These options with generated code naming the runtime crate by `path`.
    #[must_use]
    pub fn with_runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = path.into();
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            runtime_path: DEFAULT_RUNTIME_PATH.to_owned(),
        }
    }
}

/// The module of `circuit`, as tokens. Its doc lines are already safe (no circuit text in
/// them can end a comment or start a line): whichever front end prints or expands them.
///
/// # Errors
/// A diagnostic when the runtime path is not a Rust path (nothing of a loaded circuit can fail:
/// the loader checked every name the generated code spells).
pub fn tokens(circuit: &Circuit, options: &Options) -> Result<TokenStream, Diagnostics> {
    let runtime = runtime_path(&options.runtime_path)?;
    Ok(emit::Emitter::new(circuit, runtime).module())
}

/// The tokens of the runtime path `path`, or why it cannot name the runtime crate.
fn runtime_path(path: &str) -> Result<TokenStream, Diagnostics> {
    let error = match emit::names::path(path) {
        Ok(tokens) => return Ok(tokens),
        Err(error) => error,
    };
    Err(match error {
        emit::names::PathError::NotAPath => {
            Diagnostic::error(format!("runtime path `{path}` is not a Rust path"))
                .help("write it like `::metrale_circuit` or `::my_crate::metrale`")
        }
        emit::names::PathError::GenericArguments => {
            Diagnostic::error(format!("runtime path `{path}` has generic arguments"))
                .help("the runtime path names a crate or module: `::metrale_circuit`, `crate::rt`")
        }
    }
    .into())
}

/// The formatted module of `circuit`, header included ([`render`]: prettyplease with the
/// feature `pretty`, else the built-in printer).
///
/// # Errors
/// As [`tokens`] and [`render`].
pub fn generate(circuit: &Circuit, options: &Options) -> Result<String, Diagnostics> {
    render::render(tokens(circuit, options)?, circuit.path())
}

/// A circuit file's generated module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The circuit's `arch`: the module's name and the output file's stem.
    pub arch: String,
    /// The formatted module.
    pub code: String,
    /// Every file read (the circuit and its includes), for rebuild tracking.
    pub read: Vec<PathBuf>,
}

/// Loads the circuit at `path` and generates its module.
///
/// # Errors
/// The loader's located diagnostics, or [`tokens`]'s.
pub fn generate_file(path: &Path, options: &Options) -> Result<Generated, Diagnostics> {
    let circuit = Circuit::load(path)?;
    Ok(Generated {
        code: generate(&circuit, options)?,
        arch: circuit.arch().to_owned(),
        read: circuit.read().to_vec(),
    })
}
