//! `metrale-codegen plan <circuit.toml> [--checkpoint NAME] [--inputs FILE] [--align N]
//! [--json]`: sizes every state of one checkpoint under the plan inputs and lays it out.
//!
//! Invariants:
//! - Without `--inputs` the plan inputs are [`DEFAULT_INPUTS`], the very text of
//!   `circuits/inputs/default.toml` (embedded, one source of truth); without `--checkpoint`,
//!   the circuit's first checkpoint; without `--align`, [`DEFAULT_ALIGN`].
//! - A malformed `--align` value is a usage error; a non-power-of-two one is bad input. Errors
//!   of the align, the circuit and the inputs file are reported together; every format key the
//!   inputs lack is reported, each once.

use metrale_circuit::diag::{Diagnostic, Diagnostics};
use metrale_circuit::{
    Circuit, DEFAULT_ALIGN, InputsFile, StateDecl, StateError, StateFormat, StatePlan,
};

use super::args::{self, Spec};
use super::{Outcome, table};

/// The default plan inputs: the text of `circuits/inputs/default.toml`.
pub const DEFAULT_INPUTS: &str = include_str!("../../../circuits/inputs/default.toml");

/// How the default inputs are named in errors and in the table's header.
pub const DEFAULT_INPUTS_NAME: &str = "built-in default inputs (circuits/inputs/default.toml)";

/// The flags of `plan`.
const SPEC: Spec = Spec {
    options: &["--checkpoint", "--inputs", "--align"],
    switches: &["--json"],
};

/// What `plan` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanArgs {
    /// The circuit file, as given.
    pub circuit: String,
    /// `--checkpoint`; `None`: the circuit's first.
    pub checkpoint: Option<String>,
    /// `--inputs`; `None`: [`DEFAULT_INPUTS`].
    pub inputs: Option<String>,
    /// `--align` (not yet checked to be a power of two).
    pub align: u64,
    /// `--json`.
    pub json: bool,
}

/// A plan made, with what it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint sized.
    pub checkpoint: String,
    /// The inputs file, as given, or [`DEFAULT_INPUTS_NAME`].
    pub inputs: String,
    /// The plan.
    pub plan: StatePlan,
}

/// Runs `plan` on its arguments.
pub fn run(args: &[String]) -> Outcome {
    match plan_args(args) {
        Err(message) => Outcome::usage(&message),
        Ok(None) => Outcome::help(),
        Ok(Some(args)) => match plan(&args) {
            Ok(report) if args.json => Outcome::ok(table::json(&report)),
            Ok(report) => Outcome::ok(table::table(&report)),
            Err(diagnostics) => Outcome::bad_input(&diagnostics),
        },
    }
}

/// Reads the command line of `plan`; `Ok(None)` when help was asked for.
///
/// # Errors
/// A usage message: a bad flag, no or several circuit files, an `--align` that is not a number.
pub fn plan_args(args: &[String]) -> Result<Option<PlanArgs>, String> {
    let parsed = args::parse(args, &SPEC)?;
    if parsed.help {
        return Ok(None);
    }
    let circuit = match parsed.positional.as_slice() {
        [] => return Err("`plan` needs a circuit file".to_owned()),
        [circuit] => circuit.clone(),
        [_, extra, ..] => {
            return Err(format!(
                "`plan` takes one circuit file; unexpected argument `{extra}`"
            ));
        }
    };
    let align = match parsed.option("--align") {
        None => DEFAULT_ALIGN,
        Some(text) => text.parse::<u64>().map_err(|_| {
            format!("`--align` takes a number of bytes (a power of two), found `{text}`")
        })?,
    };
    Ok(Some(PlanArgs {
        circuit,
        checkpoint: parsed.option("--checkpoint").map(str::to_owned),
        inputs: parsed.option("--inputs").map(str::to_owned),
        align,
        json: parsed.switch("--json"),
    }))
}

/// Loads the circuit and the inputs, instantiates the checkpoint and makes its plan.
///
/// # Errors
/// Every diagnostic of the alignment, the circuit and the inputs file together; else an
/// unknown checkpoint (with the nearest name), the format keys the inputs lack, or another
/// plan error.
pub fn plan(args: &PlanArgs) -> Result<Report, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    if !args.align.is_power_of_two() {
        diagnostics.push(
            Diagnostic::error(format!("`--align {}` is not a power of two", args.align))
                .help("every region starts at a multiple of the alignment: use 64, 256, 4096, ..."),
        );
    }
    let circuit = Circuit::load(&args.circuit)
        .map_err(|found| diagnostics.extend(found))
        .ok();
    let (inputs_name, inputs) = match &args.inputs {
        Some(path) => (path.clone(), InputsFile::load(path)),
        None => (
            DEFAULT_INPUTS_NAME.to_owned(),
            InputsFile::parse(DEFAULT_INPUTS_NAME, DEFAULT_INPUTS),
        ),
    };
    let inputs = inputs.map_err(|found| diagnostics.extend(found)).ok();
    let (Some(circuit), Some(inputs)) = (circuit, inputs) else {
        return Err(diagnostics);
    };
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let checkpoint = match &args.checkpoint {
        Some(name) => circuit.checkpoint_or_error(name)?.name.clone(),
        None => circuit
            .default_checkpoint()
            .ok_or_else(|| {
                Diagnostic::error(format!("circuit `{}` has no checkpoint", args.circuit))
                    .in_file(&args.circuit)
            })?
            .name
            .clone(),
    };
    let decls = circuit.instantiate(&checkpoint)?;
    missing_formats(&decls, &inputs, args.inputs.as_deref()).into_result(())?;
    let view = inputs.view();
    let plan = StatePlan::new(&decls, &view.inputs(), args.align)
        .map_err(|error| plan_error(&error, &args.circuit, args.inputs.as_deref()))?;
    Ok(Report {
        circuit: args.circuit.clone(),
        checkpoint,
        inputs: inputs_name,
        plan,
    })
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
        let error = StateError::MissingFormat {
            state: decl.id.clone(),
            key: key.clone(),
        };
        diagnostics.push(plan_error(&error, "", path));
    }
    diagnostics
}

/// A plan error as a diagnostic: a missing format key names the inputs file and how to give
/// the key; any other error names the circuit file.
fn plan_error(error: &StateError, circuit: &str, inputs: Option<&str>) -> Diagnostic {
    let diagnostic = Diagnostic::error(error.to_string());
    match error {
        StateError::MissingFormat { key, .. } => {
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
        StateError::MissingVerify { .. } => diagnostic.in_file(circuit).help(
            "declare `verify = \"h_steps\"` or `verify = \"conv_steps\"` on the state, or drop \
             `[verify]` from the inputs",
        ),
        StateError::Overflow { .. } => diagnostic
            .in_file(circuit)
            .help("the inputs are too large for this state: lower the counts of the inputs"),
        _ => diagnostic.in_file(circuit),
    }
}
