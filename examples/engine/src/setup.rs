//! From the command line to a plan ([`Setup::prepare`]): the circuit loaded
//! (`Circuit::load`) and instantiated at the checkpoint, the serving profile read from the
//! inputs file's `[serving]` with the flags over it, the fit (`fit_sequences`: the most
//! sequences the budget holds at the profile's context), and the dynamic plan at that count.
//!
//! Invariants:
//! - Every count of the plan is the profile's at the fitted sequences
//!   (`ServingProfile::at(..).inputs()`), and the plan's device arena is the fit's, checked.
//! - The arenas together are at most `--max-memory` before anything is allocated.
//! - A profile that tiers its verify slots (`h_steps`) is refused: the script verifies up to
//!   `verify_rows` rows in each.

use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl, fit_sequences};
use metrale_circuit::inputs::FormatChoice;
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::serving::{Capacity, KvTokens, ProfileKv};
use metrale_circuit::{
    Space, StateInputs,
    serving::{Fit, FitError, ServingProfile},
};

use crate::{Args, EngineError};

/// Everything the engine is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint's name.
    pub checkpoint: String,
    /// Where the profile came from: the inputs file, or the flags alone.
    pub source: String,
    /// The checkpoint's state declarations.
    pub decls: Vec<StateDecl>,
    /// The dtype of each format key.
    pub formats: Vec<(String, FormatChoice<String>)>,
    /// The profile at the fitted number of sequences.
    pub profile: ServingProfile<'static>,
    /// KV tokens per sequence.
    pub context: u64,
    /// The device budget.
    pub budget: u64,
    /// The fit: the most sequences, the device bytes at them and at one more.
    pub fit: Fit,
    /// The plan inputs at the fit (formats left out: see [`Setup::formats`]).
    pub counts: StateInputs<'static>,
    /// The plan at the fit.
    pub plan: DynamicPlan,
    /// What the plan at the fit holds per unit and what one more costs: the runtime's figures,
    /// the ones `metrale-codegen fit` prints.
    pub costs: Capacity,
}

impl Setup {
    /// Loads, fits and plans what `args` name.
    ///
    /// # Errors
    /// [`EngineError::Input`] for a circuit, checkpoint or inputs file the loader refuses;
    /// [`EngineError::Profile`] for flags that describe no profile; [`EngineError::Fit`] when
    /// not even 0 sequences fit, [`EngineError::NoSequence`] when only 0 do;
    /// [`EngineError::Plan`]; [`EngineError::TooLarge`] when the arenas exceed
    /// `--max-memory`.
    pub fn prepare(args: &Args) -> Result<Setup, EngineError> {
        let circuit = Circuit::load(&args.circuit).map_err(|d| EngineError::Input(d.render()))?;
        let decls = circuit
            .instantiate(&args.checkpoint)
            .map_err(|d| EngineError::Input(d.render()))?;
        let (profile, formats, source) = profile(args)?;
        let context = context(args, &profile)?;
        let borrowed = borrow(&formats);
        let fit = fit_sequences(
            &decls,
            &borrowed,
            &profile,
            context,
            args.align,
            args.budget,
        )
        .map_err(|error| match error {
            FitError::Plan(error) => EngineError::Plan(error),
            // The runtime refuses a budget that holds no sequence: nothing to serve.
            FitError::NoneFits { empty, needs } => EngineError::NoSequence {
                context,
                fixed: empty,
                one: (needs != u64::MAX).then_some(needs),
            },
            other => EngineError::Fit(other),
        })?;
        let profile = profile.at(fit.value, context);
        let counts = profile.inputs().map_err(|fault| {
            EngineError::Plan(metrale_circuit::PlanError::of_fault(
                fault,
                "the serving profile".to_owned(),
            ))
        })?;
        let plan = DynamicPlan::new(
            &decls,
            &StateInputs {
                formats: &borrowed,
                ..counts
            },
            args.align,
        )?;
        if plan.device_bytes() != fit.device_bytes {
            return Err(EngineError::Invariant(format!(
                "the plan at {} sequences has a device arena of {} bytes, the fit said {}",
                fit.value,
                plan.device_bytes(),
                fit.device_bytes
            )));
        }
        let bytes = plan
            .arena_bytes(Space::Device)
            .saturating_add(plan.arena_bytes(Space::Host));
        if bytes > args.max_memory {
            return Err(EngineError::TooLarge {
                bytes,
                max: args.max_memory,
            });
        }
        let costs = Capacity::of(
            &plan,
            &decls,
            &StateInputs {
                formats: &borrowed,
                ..counts
            },
            args.align,
        );
        Ok(Setup {
            costs,
            circuit: args.circuit.clone(),
            checkpoint: args.checkpoint.clone(),
            source,
            decls,
            formats,
            profile,
            context,
            budget: args.budget,
            fit,
            counts,
            plan,
        })
    }

    /// The formats as plan inputs take them.
    #[must_use]
    pub fn formats(&self) -> Vec<(&str, FormatChoice<&str>)> {
        borrow(&self.formats)
    }

    /// The number of sequences the fit gave.
    #[must_use]
    pub fn sequences(&self) -> u64 {
        self.profile.sequences
    }
}

fn borrow(formats: &[(String, FormatChoice<String>)]) -> Vec<(&str, FormatChoice<&str>)> {
    formats
        .iter()
        .map(|(k, choice)| (k.as_str(), choice.as_ref()))
        .collect()
}

/// A serving profile, what each format key holds, and where they came from.
type Profile = (
    ServingProfile<'static>,
    Vec<(String, FormatChoice<String>)>,
    String,
);

/// The profile of the inputs file (or an empty one) with the flags over it, its formats, and
/// where it came from.
fn profile(args: &Args) -> Result<Profile, EngineError> {
    let (mut profile, mut formats, source) = match &args.inputs {
        Some(path) => {
            let file = InputsFile::load(path).map_err(|d| EngineError::Input(d.render()))?;
            let profile = file.serving().ok_or_else(|| {
                EngineError::Profile(format!(
                    "the inputs file `{path}` has no `[serving]` profile: the engine fits \
                     sequences, so it needs one (docs/inputs.md)"
                ))
            })?;
            let profile = untiered(profile, path)?;
            (profile, file.formats, path.clone())
        }
        None => (
            ServingProfile::EMPTY,
            Vec::new(),
            "the command line's flags".to_owned(),
        ),
    };
    let flags = &args.profile;
    for (key, choice) in &flags.formats {
        match formats.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = choice.clone(),
            None => formats.push((key.clone(), choice.clone())),
        }
    }
    let set = |field: &mut u64, flag: Option<u64>| {
        if let Some(value) = flag {
            *field = value;
        }
    };
    set(&mut profile.verify_rows, flags.verify_rows);
    set(&mut profile.prefix_snapshots, flags.prefix_snapshots);
    set(&mut profile.ring_depth, flags.ring_depth);
    set(&mut profile.tree_nodes, flags.tree_nodes);
    set(&mut profile.capture_rows, flags.capture_rows);
    set(&mut profile.lookup_history, flags.lookup_history);
    if let Some(carry) = flags.carry {
        profile.carry = carry;
    }
    if let Some(draft_kv) = flags.draft_kv {
        profile.draft_kv = draft_kv;
    }
    profile.kv = match (profile.kv, flags.block_size) {
        (Some(kv), block_size) => Some(ProfileKv {
            block_size: block_size.unwrap_or(kv.block_size),
            chunk_tokens: flags.chunk_tokens.or(kv.chunk_tokens),
            ..kv
        }),
        (None, Some(block_size)) => Some(ProfileKv {
            block_size,
            tokens: KvTokens::PerSequence(flags.context.unwrap_or(0)),
            chunk_tokens: flags.chunk_tokens,
        }),
        (None, None) if flags.chunk_tokens.is_some() => {
            return Err(EngineError::Profile(
                "`--chunk-tokens` needs KV blocks: give `--block-size`, or a profile with `kv`"
                    .to_owned(),
            ));
        }
        (None, None) => None,
    };
    Ok((profile, formats, source))
}

/// `profile` without its borrow of the inputs file. The engine's script verifies up to
/// `verify_rows` rows in every verify slot, so a profile that tiers them (`h_steps`) is refused,
/// and reads its states in the arenas, so is one under vLLM's page pool.
fn untiered(
    profile: ServingProfile<'_>,
    path: &str,
) -> Result<ServingProfile<'static>, EngineError> {
    // Every field named: a field the profile gains is a decision here too.
    let ServingProfile {
        sequences,
        verify_rows,
        verify_batch,
        h_steps,
        table_rows,
        ring_dummy,
        kv,
        draft_kv,
        draft_kv_dtype,
        prefix_snapshots,
        ring_depth,
        carry,
        tree_nodes,
        capture_rows,
        lookup_history,
        pool,
    } = profile;
    if pool.is_some() {
        // Its script reads each layer's KV and recurrent regions in the arena.
        return Err(EngineError::Profile(format!(
            "`{path}` lays requests out in vLLM's page pool (`[pool]`): the engine's script \
             reads its states in the arenas, so remove `[pool]`"
        )));
    }
    if h_steps.is_some() {
        return Err(EngineError::Profile(format!(
            "the `[serving]` profile of `{path}` tiers its verify slots (`h_steps`): the engine's \
             script verifies `verify_rows` rows in each, so give `verify_rows` alone"
        )));
    }
    Ok(ServingProfile {
        sequences,
        verify_rows,
        verify_batch,
        h_steps: None,
        table_rows,
        ring_dummy,
        kv,
        draft_kv,
        draft_kv_dtype,
        prefix_snapshots,
        ring_depth,
        carry,
        tree_nodes,
        capture_rows,
        lookup_history,
        pool: None,
    })
}

/// The KV tokens per sequence: `--context`, else the profile's `tokens_per_sequence`; 0 for a
/// profile without KV blocks.
fn context(args: &Args, profile: &ServingProfile<'_>) -> Result<u64, EngineError> {
    match (args.profile.context, profile.kv) {
        (Some(context), _) => Ok(context),
        (None, None) => Ok(0),
        (None, Some(kv)) => match kv.tokens {
            KvTokens::PerSequence(tokens) => Ok(tokens),
            KvTokens::Pool(_) => Err(EngineError::Profile(
                "the profile's KV is a fixed number of blocks: give `--context TOKENS`, \
                 the tokens each sequence holds"
                    .to_owned(),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_that_tiers_its_verify_slots_is_refused() {
        let tiers = [3, 3];
        let tiered = ServingProfile {
            sequences: 1,
            verify_rows: 3,
            h_steps: Some(&tiers),
            ..ServingProfile::EMPTY
        };
        assert!(matches!(
            untiered(tiered, "in.toml"),
            Err(EngineError::Profile(message)) if message.contains("`h_steps`")
        ));
        let uniform = ServingProfile {
            h_steps: None,
            ..tiered
        };
        assert_eq!(untiered(uniform, "in.toml").ok(), Some(uniform));
    }
}
