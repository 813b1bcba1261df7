//! The prepared stage of `plan` and `fit`: what a [`Request`] names, loaded and checked once
//! ([`Prepared`]: the circuit, the checkpoint, the inputs file, the checkpoint's declarations
//! and the ranks asked for), and each rank asked for, prepared once ([`PreparedRank`]: its
//! declarations and its [`ParallelRank`], the pipeline stage `instantiate_rank` placed it by).
//!
//! Invariants:
//! - Every error of the alignment, the circuit and the inputs file is reported together; then
//!   an unknown checkpoint; then every format key the checkpoint's declarations name and the
//!   inputs lack, each once, over the whole checkpoint whatever rank is asked for.
//! - What is prepared is never changed: [`Prepared`] is made only by [`prepare`] and read
//!   through accessors; a rank's declarations are a value of their own ([`Prepared::rank`]),
//!   made once for each rank a later stage plans, never written over the checkpoint's.
//! - A rank's stage is the one the runtime placed its declarations by (`Circuit::rank_states`
//!   returns both): never computed a second time.
//! - Inputs whose vLLM pool leaves out `context` are planned only with a context the command
//!   gives ([`Prepared::require_context`]): `plan` never sizes requests of 0 tokens.

use metrale_circuit::PlanError;
use metrale_circuit::dynamic::decl::{StateDecl, StateFormat};
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::text::limits::MAX_RANKS;
use metrale_circuit::load::{Circuit, InputsFile, circuit::RankStates};
use metrale_circuit::parallel::{Rank, Stage};

use super::blame::plan_error;
use super::ranks::Ranks;
use super::request::{InputsSource, Request};

/// What `plan` and `fit` plan from: the circuit, the checkpoint, the inputs, the checkpoint's
/// declarations and the ranks asked for.
pub struct Prepared {
    /// The circuit.
    circuit: Circuit,
    /// The checkpoint's name.
    checkpoint: String,
    /// How the inputs are named (their path, or the built-in inputs' name).
    inputs_name: String,
    /// The inputs file.
    inputs: InputsFile,
    /// The sizes and ranks asked for: the request's over the inputs' `[parallel]`.
    ranks: Ranks,
    /// The whole checkpoint's states, in plan order.
    decls: Vec<StateDecl>,
}

/// Where one rank of several sits: the sizes, its indices, and what of the model it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParallelRank {
    /// Tensor-parallel ranks.
    pub tp: u64,
    /// Pipeline-parallel ranks.
    pub pp: u64,
    /// This rank.
    pub rank: Rank,
    /// Its pipeline stage: the layers `start..end` it holds (and the prologue, epilogue,
    /// draft head).
    pub stage: Stage,
}

/// One rank asked for, prepared: its place and the states it holds.
pub struct PreparedRank {
    /// Where it sits.
    pub parallel_rank: ParallelRank,
    /// Its states, in plan order, shaped by its tensor-parallel dims.
    pub decls: Vec<StateDecl>,
}

impl Prepared {
    /// The circuit.
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// The checkpoint's name.
    pub fn checkpoint(&self) -> &str {
        &self.checkpoint
    }

    /// How the inputs are named: their path as given, or the built-in inputs' name.
    pub fn inputs_name(&self) -> &str {
        &self.inputs_name
    }

    /// The inputs file.
    pub fn inputs(&self) -> &InputsFile {
        &self.inputs
    }

    /// The sizes and the ranks asked for.
    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    /// The whole checkpoint's states, in plan order (what one GPU holds).
    pub fn decls(&self) -> &[StateDecl] {
        &self.decls
    }

    /// The checkpoint's layer kinds, by layer index.
    pub fn layer_kinds(&self) -> &[String] {
        self.circuit
            .checkpoint(&self.checkpoint)
            .map_or(&[], |c| c.layer_kinds())
    }

    /// Refuses inputs whose vLLM pool leaves out `context` when the command gives none either
    /// (`context`: `fit --for sequences --context`'s; `None` for `plan` and
    /// `fit --for kv-blocks`), at the file's `[pool]`, naming both ways to give it: a plan of
    /// them would size every request's pages for 0 tokens.
    ///
    /// # Errors
    /// The refusal, when neither the inputs nor the command give the context.
    pub fn require_context(&self, context: Option<u64>) -> Result<(), Diagnostics> {
        if context.is_some() || !self.inputs.lacks_context() {
            return Ok(());
        }
        let d =
            Diagnostic::error("the vLLM pool has no `context`: the tokens one request may hold")
                .label("gives no `context`")
                .note(
                    "the pool sizes each request's pages for its context (vLLM's `max_model_len`)",
                )
                .help(
                    "add `context = N` to `[pool]`, or give it on the command line: \
             `fit --for sequences --context N`",
                );
        Err(self.inputs.locate_key_name(&["pool"], d).into())
    }

    /// Rank `rank` of the sizes asked for: its states and its stage.
    ///
    /// # Errors
    /// The circuit's error for a rank out of range, a dim that does not split or a split that
    /// does not fit the layers.
    pub fn rank(&self, rank: Rank) -> Result<PreparedRank, Diagnostics> {
        let counts = &self.ranks.counts;
        let parallel = counts.parallel();
        // The states, and the stage the runtime chose them by: computed once, there.
        let RankStates { stage, decls } =
            self.circuit
                .rank_states(&self.checkpoint, &parallel, rank)?;
        Ok(PreparedRank {
            parallel_rank: ParallelRank {
                tp: counts.tp,
                pp: counts.pp,
                rank,
                stage,
            },
            decls,
        })
    }
}

/// Loads the circuit and the inputs `request` names, instantiates its checkpoint (`None`:
/// the first) and resolves the ranks it asks for.
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
        InputsSource::File(path) => (path.clone(), InputsFile::load(path)),
        InputsSource::BuiltIn(built_in) => (
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
    // What the file gives the keys, checked against the states first, then the keys it lacks.
    let mut formats = inputs.check_formats(&decls).err().unwrap_or_default();
    formats.extend(missing_formats(&decls, &inputs, request));
    formats.into_result(())?;
    let ranks = Ranks::resolve(&request.parallel, &inputs.parallel);
    let (tp, pp) = (ranks.counts.tp, ranks.counts.pp);
    // The file's `[parallel]` was held to the limit when read; the options are held here,
    // before any rank is placed.
    if tp.checked_mul(pp).is_none_or(|n| n > MAX_RANKS) {
        return Err(Diagnostic::error(format!(
            "tp {tp} x pp {pp} is more ranks than the limit of {MAX_RANKS}"
        ))
        .help(format!(
            "give `--tp` and `--pp` whose product is 1 to {MAX_RANKS} (ranks, i.e. GPUs)"
        ))
        .into());
    }
    Ok(Prepared {
        circuit,
        checkpoint,
        inputs_name,
        inputs,
        ranks,
        decls,
    })
}

/// One error per format key the declarations name and `inputs` lacks (but for one it misspells,
/// refused at the misspelling), naming the first state that uses it and how to give it.
fn missing_formats(decls: &[StateDecl], inputs: &InputsFile, request: &Request) -> Diagnostics {
    let mut seen: Vec<&str> = Vec::new();
    let mut diagnostics = Diagnostics::new();
    for decl in decls {
        let StateFormat::Keyed(key) = &decl.format else {
            continue;
        };
        // A key the file misspells is refused at the misspelling (`check_formats`).
        if inputs.format(key).is_some()
            || seen.contains(&key.as_str())
            || inputs.near_miss(key, decls).is_some()
        {
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

#[cfg(test)]
mod tests {
    use metrale_circuit::dynamic::Position;

    use super::*;
    use crate::cli::ranks::Asked;
    use crate::cli::request::{BuiltIn, ParallelArgs};

    /// The default inputs over 2 x 2 ranks, the 48 layers split by hand as 10 and 38.
    const SPLIT: BuiltIn = BuiltIn {
        name: "split",
        text: concat!(
            include_str!("../../inputs/default.toml"),
            "\n[parallel]\ntp = 2\npp = 2\npp_layers = [10, 38]\n"
        ),
    };

    fn prepared() -> Prepared {
        let request = Request {
            circuit: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../circuits/qwen3_next.toml"
            )
            .to_owned(),
            checkpoint: None,
            inputs: InputsSource::BuiltIn(SPLIT),
            align: 256,
            parallel: ParallelArgs::default(),
        };
        match prepare(&request) {
            Ok(prepared) => prepared,
            Err(diagnostics) => panic!("{}", diagnostics.render()),
        }
    }

    #[test]
    fn each_rank_is_prepared_with_the_stage_it_was_placed_by() {
        let prepared = prepared();
        let circuit = prepared.circuit();
        assert_eq!(prepared.ranks().asked, Asked::Every);
        // The checkpoint's own states stay the whole model's, whatever ranks are asked for.
        assert_eq!(
            prepared.decls(),
            circuit.instantiate(prepared.checkpoint()).unwrap()
        );
        let parallel = prepared.ranks().counts.parallel();
        for rank in (0..2).flat_map(|pp| (0..2).map(move |tp| Rank { tp, pp })) {
            let held = prepared.rank(rank).unwrap();
            assert_eq!(
                held.decls,
                circuit
                    .instantiate_rank(prepared.checkpoint(), &parallel, rank)
                    .unwrap()
            );
            let parallel_rank = held.parallel_rank;
            assert_eq!(
                (parallel_rank.tp, parallel_rank.pp, parallel_rank.rank),
                (2, 2, rank)
            );
            // The file's split, not vLLM's 24 and 24.
            let stage = parallel_rank.stage;
            let (start, end) = if rank.pp == 0 { (0, 10) } else { (10, 48) };
            assert_eq!((stage.start, stage.end), (start, end), "{rank:?}");
            assert_eq!((stage.first, stage.last), (rank.pp == 0, rank.pp == 1));
            // Its states are exactly those of its stage: every one held, its first and last
            // layers present.
            assert!(held.decls.iter().all(|d| stage.holds(d.position)));
            let layers: Vec<u64> = held
                .decls
                .iter()
                .filter_map(|d| match d.position {
                    Position::Layer(i) => Some(i),
                    _ => None,
                })
                .collect();
            assert_eq!(layers.iter().min(), Some(&start));
            assert_eq!(layers.iter().max(), Some(&(end - 1)));
        }
        // A rank outside the sizes is the circuit's error, naming the sizes.
        let Err(outside) = prepared.rank(Rank { tp: 2, pp: 0 }) else {
            panic!("rank tp 2 of 2 was prepared");
        };
        assert!(
            outside.render().contains("at tp 2 x pp 2"),
            "{}",
            outside.render()
        );
    }
}
