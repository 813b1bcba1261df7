//! What `plan` and `fit` make a plan from ([`Prepared`]: the circuit, the checkpoint's
//! declarations and the inputs a [`Request`] names, read by [`prepare`] with every error of
//! them together).
//!
//! Invariants:
//! - Without an inputs file the inputs are the request's built-in ones.
//! - Every format key the declarations name and the inputs lack is reported, each once.

use metrale_circuit::PlanError;
use metrale_circuit::dynamic::{StateDecl, StateFormat};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::{Circuit, InputsFile};

use super::blame::plan_error;
use super::request::{Inputs, Request};

/// What `plan` and `fit` make a plan from: the circuit, the checkpoint's declarations and the
/// inputs.
pub struct Prepared {
    /// The circuit.
    pub circuit: Circuit,
    /// The checkpoint's name.
    pub checkpoint: String,
    /// How the inputs are named (their path, or the built-in inputs' name).
    pub inputs_name: String,
    /// The inputs file.
    pub inputs: InputsFile,
    /// The checkpoint's instantiated states.
    pub decls: Vec<StateDecl>,
}

/// Loads the circuit and the inputs `request` names and instantiates its checkpoint (`None`:
/// the first).
///
/// # Errors
/// Every diagnostic of the alignment, the circuit and the inputs file together; else an
/// unknown checkpoint (with the nearest name) or the format keys the inputs lack.
pub fn prepare(request: &Request) -> Result<Prepared, Diagnostics> {
    let mut diagnostics = Diagnostics::new();
    let align = request.align;
    if !align.is_power_of_two() {
        diagnostics.push(
            Diagnostic::error(format!("`--align {align}` is not a power of two"))
                .help("every region starts at a multiple of the alignment: use 64, 256, 4096, ..."),
        );
    }
    let circuit_path = request.circuit.as_str();
    let circuit = Circuit::load(circuit_path)
        .map_err(|found| diagnostics.extend(found))
        .ok();
    let (inputs_name, inputs) = match &request.inputs {
        Inputs::File(path) => (path.clone(), InputsFile::load(path)),
        Inputs::BuiltIn(built_in) => (
            built_in.name.to_owned(),
            InputsFile::parse(built_in.name, built_in.text),
        ),
    };
    let inputs = inputs.map_err(|found| diagnostics.extend(found)).ok();
    let (Some(circuit), Some(inputs)) = (circuit, inputs) else {
        return Err(diagnostics);
    };
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let checkpoint = match &request.checkpoint {
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
    missing_formats(&decls, &inputs, request).into_result(())?;
    Ok(Prepared {
        circuit,
        checkpoint,
        inputs_name,
        inputs,
        decls,
    })
}

/// One error per format key the declarations name and `inputs` lacks, naming the first state
/// that uses it and how to give it.
fn missing_formats(decls: &[StateDecl], inputs: &InputsFile, request: &Request) -> Diagnostics {
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
        diagnostics.push(plan_error(&error, request));
    }
    diagnostics
}
