//! A checkpoint of a validated circuit placed in the model: its block instances ([`Instance`],
//! [`Circuit::instances`]), every state of every instance as a [`StateDecl`] with its element
//! count evaluated ([`Circuit::instantiate`]), and the same for one tensor- and
//! pipeline-parallel rank ([`Circuit::rank_dims`], [`Circuit::instantiate_rank`]).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Instances come in plan order: prologue, each layer's blocks, epilogue, draft head; a
//!   rank keeps that order and holds what its pipeline stage holds ([`Stage::holds`]).
//! - Every shape evaluates under every checkpoint (the loader checked it), so instantiating
//!   fails only on an unknown checkpoint name or a dim a rank cannot shard.
//! - A reader (`shares`) is declared with its owner's full id, element count, format and reach
//!   ([`Circuit::owner_layer`] places the owner); a rank that holds a reader need not hold its
//!   owner (a plan of such a rank is the error, `PlanError::MissingOwner`).

use super::shape::{EvalError, Shape};
use super::sharing::{Shares, owner_layer};
use super::validated::{BlockTemplate, CheckpointSpec, Circuit, StateTemplate};
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::Origin;
use crate::model::{
    PackingDecl, PartDecl, Position, Reach, Section, StateDecl, StateFormat, UnitAxis,
};
use crate::serve::{Parallel, ParallelError, Rank, Stage, StageFault, shard};

/// The states one tensor- and pipeline-parallel rank holds, and the pipeline stage that chose
/// them ([`Circuit::rank_states`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankStates {
    /// What the rank's pipeline stage holds: its layers, and the prologue, epilogue and draft
    /// head where it holds them.
    pub stage: Stage,
    /// Every state the rank holds, in plan order, under the rank's dims.
    pub decls: Vec<StateDecl>,
}

/// One block instance: a block template placed in the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The id prefix of its states: `embed`, `l3.attn`, `draft.attn`.
    pub prefix: String,
    /// The block template's name.
    pub block: String,
    /// Where it sits: its layer, or the prologue, epilogue or draft head (which pipeline rank
    /// holds it).
    pub position: Position,
}

impl Instance {
    /// Main model or draft head.
    #[must_use]
    pub fn section(&self) -> Section {
        self.position.section()
    }
}

impl Circuit {
    /// The block instances of `checkpoint`, in plan order: prologue, each layer's blocks,
    /// epilogue, draft.
    #[must_use]
    pub fn instances(&self, checkpoint: &CheckpointSpec) -> Vec<Instance> {
        let main = |position: Position| {
            move |block: &String| Instance {
                prefix: block.clone(),
                block: block.clone(),
                position,
            }
        };
        let mut instances: Vec<Instance> =
            self.prologue.iter().map(main(Position::Prologue)).collect();
        for (layer, kind) in checkpoint.layer_kinds.iter().enumerate() {
            for block in self.layout.blocks_of(kind) {
                instances.push(Instance {
                    prefix: format!("l{layer}.{block}"),
                    block: block.clone(),
                    position: Position::Layer(layer as u64),
                });
            }
        }
        instances.extend(self.epilogue.iter().map(main(Position::Epilogue)));
        instances.extend(self.draft.iter().map(|block| Instance {
            prefix: format!("draft.{block}"),
            block: block.clone(),
            position: Position::Draft,
        }));
        instances
    }

    /// The layer whose KV a reader ([`StateTemplate::shares`]) at layer `layer` of `checkpoint`
    /// reads: the layer its `layer` expression gives under the checkpoint's dims, or the last
    /// earlier layer whose kind holds the owner's block. `None` when there is none (the
    /// loader refuses such a circuit, so not for a layer that holds the reader's block).
    #[must_use]
    pub fn owner_layer(
        &self,
        checkpoint: &CheckpointSpec,
        layer: u64,
        shares: &Shares,
    ) -> Option<u64> {
        let given = match &shares.layer {
            Some(expr) => Some(expr.eval(|dim| checkpoint.dim(dim)).ok()?),
            None => None,
        };
        let holds = |i: usize| {
            checkpoint
                .layer_kinds
                .get(i)
                .is_some_and(|kind| self.layout.blocks_of(kind).contains(&shares.block))
        };
        let owner = owner_layer(usize::try_from(layer).ok()?, given, holds).ok()?;
        u64::try_from(owner).ok()
    }

    /// Every state of every block instance of the checkpoint `name`, in plan order, with its
    /// element count evaluated from the checkpoint's dims: [`Circuit::instantiate_rank`] on one
    /// GPU.
    ///
    /// # Errors
    /// A [`Diagnostic`] when no checkpoint is named `name` (the loader already checked that
    /// every shape evaluates under every checkpoint).
    #[allow(
        clippy::result_large_err,
        reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
    )]
    pub fn instantiate(&self, name: &str) -> Result<Vec<StateDecl>, Diagnostic> {
        self.instantiate_rank(name, &Parallel::SINGLE, Rank::default())
    }

    /// The dims of `checkpoint` on one of `tp` tensor-parallel ranks: every declared dim, those
    /// in `tensor_parallel` sharded (`shard`), then every derived dim computed from
    /// them, in the circuit's `derived` order.
    ///
    /// # Errors
    /// [`ParallelError::DimDoesNotSplit`] for the first sharded dim `tp` does not split;
    /// [`StageFault::ZeroSize`] when `tp` is 0.
    pub fn rank_dims(
        &self,
        checkpoint: &CheckpointSpec,
        tp: u64,
    ) -> Result<Vec<(String, u64)>, ParallelError> {
        if tp == 0 {
            return Err(ParallelError::Stage(StageFault::ZeroSize));
        }
        let mut dims: Vec<(String, u64)> = Vec::with_capacity(self.dims.len() + self.derived.len());
        for (name, value) in &checkpoint.dims {
            let value = if self.tensor_parallel.contains(name) {
                shard(*value, tp).ok_or_else(|| ParallelError::DimDoesNotSplit {
                    dim: name.clone(),
                    value: *value,
                    tp,
                })?
            } else {
                *value
            };
            dims.push((name.clone(), value));
        }
        for (name, shape) in &self.derived {
            let lookup = |dim: &str| dims.iter().find(|(n, _)| n == dim).map(|(_, v)| *v);
            // At tp 1 the loader evaluated it; sharded dims are smaller or equal, so only a
            // subtraction can fail (below zero).
            let value = shape
                .eval(lookup)
                .map_err(|e| ParallelError::DerivedDimFails {
                    dim: name.clone(),
                    tp,
                    reason: format!("`{shape}` {e}"),
                })?;
            dims.push((name.clone(), value));
        }
        Ok(dims)
    }

    /// Every state rank `rank` of `parallel` holds of checkpoint `name`, in plan order: the
    /// layers of its pipeline stage ([`crate::parallel::Stage::of`]), the prologue on pipeline rank 0, the
    /// epilogue and the draft head on the last, each shape evaluated under the rank's dims
    /// ([`Circuit::rank_dims`]). Ids keep the model's layer indices (`l40.attn.k`).
    ///
    /// # Errors
    /// A [`Diagnostic`] naming the circuit when no checkpoint is named `name`, a sharded dim
    /// does not split, the rank is out of range or the layers cannot be split.
    #[allow(
        clippy::result_large_err,
        reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
    )]
    pub fn instantiate_rank(
        &self,
        name: &str,
        parallel: &Parallel<'_>,
        rank: Rank,
    ) -> Result<Vec<StateDecl>, Diagnostic> {
        self.rank_states(name, parallel, rank)
            .map(|placed| placed.decls)
    }

    /// [`Circuit::instantiate_rank`] with the pipeline stage the rank was placed by, so a caller
    /// that shows the rank's layers reads the one stage the states were chosen by.
    ///
    /// # Errors
    /// As [`Circuit::instantiate_rank`].
    #[allow(
        clippy::result_large_err,
        reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
    )]
    pub fn rank_states(
        &self,
        name: &str,
        parallel: &Parallel<'_>,
        rank: Rank,
    ) -> Result<RankStates, Diagnostic> {
        let checkpoint = self.checkpoint_or_error(name)?;
        let refused = |e: ParallelError| {
            Diagnostic::error(format!(
                "checkpoint `{name}` at tp {} x pp {}: {e}",
                parallel.tp, parallel.pp
            ))
            .in_file(self.path())
        };
        let layers = checkpoint.layer_kinds.len() as u64;
        let stage = Stage::of(layers, parallel, rank).map_err(|f| refused(f.into()))?;
        let dims = self.rank_dims(checkpoint, parallel.tp).map_err(refused)?;
        let dim = |d: &str| dims.iter().find(|(n, _)| n == d).map(|(_, v)| *v);
        let mut decls = Vec::new();
        for instance in self.instances(checkpoint) {
            if !stage.holds(instance.position) {
                continue;
            }
            let Some(block) = self.block(&instance.block) else {
                continue;
            };
            for state in &block.states {
                decls.push(self.declare(checkpoint, &instance, block, state, &dim)?);
            }
        }
        Ok(RankStates { stage, decls })
    }
}

impl Circuit {
    /// The declaration of `state` of `block` at `instance` of `checkpoint`, its units evaluated
    /// under a rank's dims (`dim`); a reader (`shares`) with its owner's id, units, format and
    /// reach.
    #[allow(
        clippy::result_large_err,
        reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
    )]
    fn declare(
        &self,
        checkpoint: &CheckpointSpec,
        instance: &Instance,
        block: &BlockTemplate,
        state: &StateTemplate,
        dim: &impl Fn(&str) -> Option<u64>,
    ) -> Result<StateDecl, Diagnostic> {
        let fault = |what: &str, e: EvalError| {
            Diagnostic::error(format!(
                "{what} of `{}.{}` cannot be evaluated under checkpoint `{}`: {e}",
                instance.prefix, state.local, checkpoint.name
            ))
            .in_file(state.origin.to_string())
        };
        let evaluated = |what: &str, shape: &Shape| shape.eval(dim).map_err(|e| fault(what, e));
        // A reader declares its owner's unit: the owner's block, state and layer.
        let (owner, unit_block, unit_state) = match &state.shares {
            Some(shares) => {
                let owner = instance
                    .position
                    .layer()
                    .and_then(|layer| self.owner_layer(checkpoint, layer, shares))
                    .ok_or_else(|| {
                        Diagnostic::error(format!(
                            "`{}.{}` reads `{}.{}` of no earlier layer under checkpoint `{}`",
                            instance.prefix,
                            state.local,
                            shares.block,
                            shares.state,
                            checkpoint.name
                        ))
                        .in_file(state.origin.to_string())
                    })?;
                let of = self
                    .block(&shares.block)
                    .and_then(|b| Some((b, b.state(&shares.state)?)))
                    .ok_or_else(|| shape_missing(&state.origin, &state.local))?;
                (
                    Some(format!("l{owner}.{}.{}", shares.block, shares.state)),
                    of.0,
                    of.1,
                )
            }
            None => (None, block, state),
        };
        // A state stored in one packing has no shape: its unit is the packing's parts.
        let (elements, axes) = match unit_block.shape_of(unit_state) {
            Some(shape) => {
                let extents = shape
                    .eval_axes(dim)
                    .map_err(|e| fault("an axis of the shape", e))?;
                (evaluated("shape", shape)?, axes_of(shape, extents))
            }
            None if matches!(unit_state.format, StateFormat::Packing(_)) => (0, Vec::new()),
            None => return Err(shape_missing(&state.origin, &state.local)),
        };
        let packings = packings_of(unit_state, &evaluated)?;
        let reach = match &unit_state.reach {
            Some(Reach::Window(window)) => Some(Reach::Window(evaluated("window", window)?)),
            Some(Reach::Chunk(chunk)) => Some(Reach::Chunk(evaluated("chunk", chunk)?)),
            Some(Reach::Fixed(tokens)) => Some(Reach::Fixed(evaluated("tokens", tokens)?)),
            None => None,
        };
        Ok(StateDecl {
            id: format!("{}.{}", instance.prefix, state.local),
            local: state.local.clone(),
            block: block.name.clone(),
            position: instance.position,
            kind: state.kind,
            format: unit_state.format.clone(),
            elements,
            verify: state.verify,
            lifetime: state.lifetime,
            of: state
                .of
                .as_ref()
                .map(|of| format!("{}.{of}", instance.prefix)),
            reach,
            shares: owner,
            packings,
            axes,
        })
    }
}

/// A unit's tensor shape: each axis of `shape` as written, with its extent.
fn axes_of(shape: &Shape, extents: Vec<u64>) -> Vec<UnitAxis> {
    shape
        .axes
        .iter()
        .zip(extents)
        .map(|(axis, extent)| UnitAxis {
            name: axis.to_string(),
            extent,
        })
        .collect()
}

/// The packings of `state`, each part's elements `evaluated`.
#[allow(
    clippy::result_large_err,
    reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
)]
fn packings_of(
    state: &StateTemplate,
    evaluated: &impl Fn(&str, &Shape) -> Result<u64, Diagnostic>,
) -> Result<Vec<PackingDecl>, Diagnostic> {
    state
        .packings
        .iter()
        .map(|layout| {
            Ok(PackingDecl {
                name: layout.name.clone(),
                parts: layout
                    .parts
                    .iter()
                    .map(|part| {
                        let what = format!("part `{}.{}`", layout.name, part.name);
                        Ok(PartDecl {
                            name: part.name.clone(),
                            dtype: part.dtype,
                            elements: evaluated(&what, &part.shape)?,
                        })
                    })
                    .collect::<Result<Vec<_>, Diagnostic>>()?,
            })
        })
        .collect()
}

/// A state that has neither a shape nor a copied one (the loader refuses such a circuit).
fn shape_missing(origin: &Origin, local: &str) -> Diagnostic {
    Diagnostic::error(format!("state `{local}` has no shape")).in_file(origin.to_string())
}
