//! What `plan` and `fit` make a plan from ([`Prepared`]: the circuit, the checkpoint's
//! declarations and the inputs, read by [`prepare`] with every error of them together), the
//! built-in default inputs, and a plan error as a located diagnostic ([`located_plan_error`]).
//!
//! Invariants:
//! - Without an inputs file the inputs are [`DEFAULT_INPUTS`] (or the text a caller gives to
//!   [`prepare_with`]): the one copy of the defaults, embedded from inside this crate.
//! - Every format key the declarations name and the inputs lack is reported, each once.

use metrale_circuit::PlanError;
use metrale_circuit::dynamic::{Section, StateDecl, StateFormat};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::{Circuit, InputsFile};

use super::blame::{self, Cause};

/// The default plan inputs: the text of `metrale-codegen/cli/inputs/default.toml`.
pub const DEFAULT_INPUTS: &str = include_str!("../../inputs/default.toml");

/// How the default inputs are named in errors and in the table's header.
pub const DEFAULT_INPUTS_NAME: &str =
    "built-in default inputs (metrale-codegen/cli/inputs/default.toml)";

/// What `plan` and `fit` make a plan from: the circuit, the checkpoint's declarations and the
/// inputs.
pub struct Prepared {
    /// The circuit.
    pub circuit: Circuit,
    /// The checkpoint's name.
    pub checkpoint: String,
    /// How the inputs are named (their path, or the built-in defaults).
    pub inputs_name: String,
    /// The inputs file.
    pub inputs: InputsFile,
    /// The checkpoint's instantiated states.
    pub decls: Vec<StateDecl>,
}

/// Loads the circuit and the inputs and instantiates the checkpoint (`None`: the first).
///
/// # Errors
/// Every diagnostic of the alignment, the circuit and the inputs file together; else an
/// unknown checkpoint (with the nearest name) or the format keys the inputs lack.
pub fn prepare(
    circuit_path: &str,
    checkpoint: Option<&str>,
    inputs_path: Option<&str>,
    align: u64,
) -> Result<Prepared, Diagnostics> {
    prepare_with(
        circuit_path,
        checkpoint,
        inputs_path,
        (DEFAULT_INPUTS_NAME, DEFAULT_INPUTS),
        align,
    )
}

/// [`prepare`] with `default` (its name in errors, its text) read when no inputs file is named.
///
/// # Errors
/// As [`prepare`].
pub fn prepare_with(
    circuit_path: &str,
    checkpoint: Option<&str>,
    inputs_path: Option<&str>,
    default: (&str, &str),
    align: u64,
) -> Result<Prepared, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    if !align.is_power_of_two() {
        diagnostics.push(
            Diagnostic::error(format!("`--align {align}` is not a power of two"))
                .help("every region starts at a multiple of the alignment: use 64, 256, 4096, ..."),
        );
    }
    let circuit = Circuit::load(circuit_path)
        .map_err(|found| diagnostics.extend(found))
        .ok();
    let (inputs_name, inputs) = match inputs_path {
        Some(path) => (path.to_owned(), InputsFile::load(path)),
        None => (
            default.0.to_owned(),
            InputsFile::parse(default.0, default.1),
        ),
    };
    let inputs = inputs.map_err(|found| diagnostics.extend(found)).ok();
    let (Some(circuit), Some(inputs)) = (circuit, inputs) else {
        return Err(diagnostics);
    };
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let checkpoint = match checkpoint {
        Some(name) => circuit.checkpoint_or_error(name)?.name().to_owned(),
        None => circuit
            .default_checkpoint()
            .ok_or_else(|| {
                Diagnostic::error(format!("circuit `{circuit_path}` has no checkpoint"))
                    .in_file(circuit_path)
            })?
            .name()
            .to_owned(),
    };
    let decls = circuit.instantiate(&checkpoint)?;
    missing_formats(&decls, &inputs, inputs_path).into_result(())?;
    Ok(Prepared {
        circuit,
        checkpoint,
        inputs_name,
        inputs,
        decls,
    })
}

/// A plan error as a located diagnostic: [`plan_error`], a missing window at the inputs'
/// `[kv]` (or `[draft_kv]`) table that lacks the window keys, an overflow at the input that
/// alone caused it (`--align`, or a count of the inputs file: [`blame::overflow_cause`]).
pub fn located_plan_error(
    error: &PlanError<String>,
    circuit: &str,
    inputs_path: Option<&str>,
    prepared: &Prepared,
    align: u64,
) -> Diagnostic {
    let diagnostic = plan_error(error, circuit, inputs_path);
    let inputs = &prepared.inputs;
    match error {
        PlanError::Overflow { state } => {
            let view = inputs.view();
            match blame::overflow_cause(&prepared.decls, &view.inputs(), align) {
                Some(Cause::Align) => Diagnostic::error(format!(
                    "the layout of state `{state}` overflows u64 at `--align {align}`"
                ))
                .note("the plan fits at `--align 1`: the alignment padding overflows")
                .help("lower `--align` (the default is 256)"),
                Some(Cause::Input(path)) => {
                    let key = blame::key_name(path);
                    inputs.locate_key(
                        path,
                        Diagnostic::error(error.to_string())
                            .label("this count")
                            .note(format!("with {key} at 1 the plan fits"))
                            .help(format!("lower {key}")),
                    )
                }
                None => diagnostic,
            }
        }
        PlanError::MissingWindow { state } => {
            let section = if state.starts_with("draft.") {
                Section::Draft
            } else {
                Section::Main
            };
            inputs.locate_kv(section, diagnostic)
        }
        _ => diagnostic,
    }
}

/// One error per format key the declarations name and `inputs` lacks, naming the first state
/// that uses it and how to give it.
fn missing_formats(decls: &[StateDecl], inputs: &InputsFile, path: Option<&str>) -> Diagnostics {
    let mut seen: Vec<&str> = Vec::new();
    let mut diagnostics = Diagnostics::new();
    for decl in decls {
        let StateFormat::Keyed(key) = &decl.format else {
            continue;
        };
        if inputs.format(key).is_some() || seen.contains(&key.as_str()) {
            continue;
        }
        seen.push(key);
        let error = PlanError::MissingFormat {
            state: decl.id.clone(),
            key: key.clone(),
        };
        diagnostics.push(plan_error(&error, "", path));
    }
    diagnostics
}

/// A plan error as a diagnostic: a missing format key names the inputs file and how to give
/// the key; any other error names the circuit file.
fn plan_error(error: &PlanError<String>, circuit: &str, inputs: Option<&str>) -> Diagnostic {
    let diagnostic = Diagnostic::error(error.to_string());
    match error {
        PlanError::MissingFormat { key, .. } => {
            let give = format!("`{key} = \"<dtype>\"` (e.g. \"bf16\")");
            match inputs {
                Some(path) => diagnostic
                    .in_file(path)
                    .help(format!("add {give} to the `[formats]` table of `{path}`")),
                None => diagnostic.help(format!(
                    "the {DEFAULT_INPUTS_NAME} do not give it: pass `--inputs FILE` whose \
                     `[formats]` table has {give}"
                )),
            }
        }
        PlanError::MissingVerify { .. } => diagnostic.in_file(circuit).help(
            "declare `verify = \"h_steps\"` or `verify = \"conv_steps\"` on the state, or drop \
             `[verify]` from the inputs",
        ),
        PlanError::Overflow { .. } => diagnostic
            .in_file(circuit)
            .help("the inputs are too large for this state: lower the counts of the inputs"),
        PlanError::MissingWindow { .. } => {
            let give = "`sequences`, `chunk_tokens` and `max_tokens`";
            match inputs {
                Some(path) => diagnostic.in_file(path).help(format!(
                    "add {give} to the `[kv]` (or `[draft_kv]`) table of `{path}`"
                )),
                None => diagnostic.help(format!(
                    "the {DEFAULT_INPUTS_NAME} do not give them: pass `--inputs FILE` whose \
                     `[kv]` table has {give}"
                )),
            }
        }
        _ => diagnostic.in_file(circuit),
    }
}
