//! The dynamic (run-time) plan: every declared state stored as `sizing::term_dtype` says, sized by
//! [`size_term`] and laid out by [`place_all`]. It is the reference the generated const plans
//! are checked against.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - [`DynamicPlan::new`] is the one function that sizes every term of a list of declarations;
//!   terms come in plan order (declaration order, then [`Holding::of_kind`] order).
//! - Offsets follow the layout law of [`crate::law::layout`]; arena sizes are rounded up to
//!   `align`.
//! - Errors come in a fixed order (per declaration: format, unit bytes in its format then as
//!   stored, its terms; then layout), which the generated plans follow too.

use super::error::PlanError;
use super::pool::{PagePool, PoolBuilder};
use super::regions::{CacheRegions, GroupOf, KvRegions, RecurrentRegions, Unit};
use crate::law::layout::{Arena, LayoutKey, check_align, layout_order, place_all};
use crate::law::sizing::{TermSpec, held_in_pool, size_term};
use crate::law::{Holding, Region, Space};
use crate::model::{
    Lifetime, PoolPolicy, Position, StateDecl, StateDtype, StateFormat, StateInputs, StateKind,
};

/// One sized term: a state, what it holds, its units and bytes, and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTerm {
    /// The state's id (`l0.gdn.h`).
    pub state: String,
    /// Where its block instance sits in the model (its declaration's position).
    pub position: Position,
    /// The state's kind.
    pub kind: StateKind,
    /// What this term holds.
    pub holding: Holding,
    /// How long its units live ([`Holding::lifetime`]).
    pub lifetime: Lifetime,
    /// The element type: its format resolved, or the inputs' `draft_kv_dtype` for a draft KV
    /// side (the sizing law's `term_dtype`).
    pub dtype: StateDtype,
    /// Units (slots, tokens, rows, entries).
    pub units: u64,
    /// Bytes.
    pub bytes: u64,
    /// Bytes of one unit (for the prompt-lookup index, of one entry: its bytes follow the
    /// hash-table law, not `units x unit_bytes`).
    pub unit_bytes: u64,
    /// Units per outer index of its grid ([`Region::inner`]).
    pub inner: u64,
    /// Bytes from the start of its space's arena.
    pub offset: u64,
    /// The arena it sits in.
    pub space: Space,
}

impl StateTerm {
    /// Its region: where it sits and the byte range of each unit ([`Region::unit`]).
    #[must_use]
    pub fn region(&self) -> Region {
        Region {
            offset: self.offset,
            bytes: self.bytes,
            units: self.units,
            dtype: self.dtype,
            unit_bytes: self.unit_bytes,
            inner: self.inner,
        }
    }
}

/// Every state of a circuit, sized and laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicPlan {
    terms: Vec<StateTerm>,
    arena: Arena,
    /// Boxed: a plan is moved about whole, and most have no pool.
    pool: Option<Box<PagePool>>,
}

impl DynamicPlan {
    /// Sizes every term of `decls` under `inputs` and lays them out with every offset a multiple
    /// of `align`.
    ///
    /// # Errors
    /// [`PlanError::BadAlign`] when `align` is not a nonzero power of two;
    /// [`PlanError::MissingFormat`] for a format key the inputs lack;
    /// [`PlanError::MissingVerify`] for a recurrent state without `verify` under verify inputs;
    /// [`PlanError::Overflow`] when any size or offset overflows `u64`.
    pub fn new(
        decls: &[StateDecl],
        inputs: &StateInputs<'_>,
        align: u64,
    ) -> Result<Self, PlanError<String>> {
        if !check_align(align) {
            return Err(PlanError::BadAlign { align });
        }
        let mut terms = Vec::new();
        let mut pool = PoolBuilder::default();
        for decl in decls {
            let dtype = match &decl.format {
                StateFormat::Fixed(dtype) => *dtype,
                StateFormat::Keyed(key) => {
                    inputs.format(key).ok_or_else(|| PlanError::MissingFormat {
                        state: decl.id.clone(),
                        key: key.clone(),
                    })?
                }
            };
            let fault = |fault| PlanError::of_fault(fault, decl.id.clone());
            // The unit of its format, then as its terms store it: a generated plan's order.
            let unit = Unit::of(Ok(decl.elements), dtype)
                .and_then(|unit| unit.stored(decl.kind, decl.section(), inputs))
                .map_err(fault)?;
            let (dtype, unit_bytes) = (unit.dtype, unit.bytes);
            for &holding in Holding::of_kind(decl.kind) {
                if held_in_pool(decl.kind, holding, decl.section(), inputs) {
                    let attention = decl.kind == StateKind::PagedKv;
                    pool.add(&decl.id, decl.position, attention, unit_bytes, decl.reach)?;
                }
                let spec = TermSpec {
                    kind: decl.kind,
                    holding,
                    section: decl.section(),
                    verify: decl.verify,
                    unit_bytes,
                    reach: decl.reach,
                };
                if let Some(size) = size_term(&spec, inputs).map_err(fault)? {
                    terms.push(StateTerm {
                        state: decl.id.clone(),
                        position: decl.position,
                        kind: decl.kind,
                        holding,
                        lifetime: holding.lifetime(decl.lifetime),
                        dtype,
                        units: size.units,
                        bytes: size.bytes,
                        unit_bytes,
                        inner: size.inner,
                        offset: 0,
                        space: Space::of_kind(decl.kind),
                    });
                }
            }
        }
        let arena = lay_out(&mut terms, align)?;
        let pool = match &inputs.pool {
            PoolPolicy::Arenas => None,
            PoolPolicy::Vllm(vllm) => Some(Box::new(pool.finish(vllm, arena.device_bytes)?)),
        };
        Ok(Self { terms, arena, pool })
    }

    /// Every term, in plan order.
    #[must_use]
    pub fn terms(&self) -> &[StateTerm] {
        &self.terms
    }

    /// The term of `state` holding `holding`, if the plan has it.
    #[must_use]
    pub fn term(&self, state: &str, holding: Holding) -> Option<&StateTerm> {
        self.terms
            .iter()
            .find(|t| t.state == state && t.holding == holding)
    }

    /// The alignment every offset is a multiple of.
    #[must_use]
    pub fn align(&self) -> u64 {
        self.arena.align
    }

    /// The device bytes: the device arena (the end of its last region, rounded up to the
    /// alignment) and, under a unified policy, the page pool after it.
    #[must_use]
    pub fn device_bytes(&self) -> u64 {
        match &self.pool {
            // Its end was checked when the pool was made.
            Some(pool) => pool.offset + pool.bytes(),
            None => self.arena.device_bytes,
        }
    }

    /// The unified page pool, under [`PoolPolicy::Vllm`].
    #[must_use]
    pub fn pool(&self) -> Option<&PagePool> {
        self.pool.as_deref()
    }

    /// The host arena's size: the end of its last region, rounded up to the alignment.
    #[must_use]
    pub fn host_bytes(&self) -> u64 {
        self.arena.host_bytes
    }

    /// The arena size of `space`.
    #[must_use]
    pub fn arena_bytes(&self, space: Space) -> u64 {
        self.arena.bytes(space)
    }

    /// The arena sizes and per-lifetime totals.
    #[must_use]
    pub fn arena(&self) -> &Arena {
        &self.arena
    }

    /// The bytes the terms of `space` hold, alignment padding excluded (never more than its
    /// arena, so the sum cannot overflow).
    #[must_use]
    pub fn term_bytes(&self, space: Space) -> u64 {
        self.arena.term_bytes(space)
    }

    /// The bytes the terms of `space` with `lifetime` hold, alignment padding excluded.
    #[must_use]
    pub fn lifetime_bytes(&self, space: Space, lifetime: Lifetime) -> u64 {
        self.arena.lifetime_bytes(space, lifetime)
    }

    /// Every state with a term, in plan order, its regions in the field group of its kind: the
    /// view a generated plan's fields give (`plan.l0.gdn.h` is a `RecurrentRegions`), so an
    /// engine on the dynamic plan reads the same groups and address API.
    pub fn states(&self) -> impl Iterator<Item = StateRegions<'_>> + '_ {
        let mut first = 0;
        std::iter::from_fn(move || {
            let state = &self.terms.get(first)?.state;
            let count = self.terms[first..]
                .iter()
                .take_while(|t| t.state == *state)
                .count();
            let regions = StateRegions {
                first_term: first,
                terms: &self.terms[first..first + count],
            };
            first += count;
            Some(regions)
        })
    }
}

/// One state of a [`DynamicPlan`]: its terms (consecutive in plan order) and their regions in
/// the field group of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRegions<'p> {
    /// The index of its first term in [`DynamicPlan::terms`].
    pub first_term: usize,
    /// Its terms, in [`Holding::of_kind`] order (absent ones left out).
    pub terms: &'p [StateTerm],
}

impl StateRegions<'_> {
    /// The state's id (`l0.gdn.h`).
    #[must_use]
    pub fn state(&self) -> &str {
        self.terms.first().map_or("", |t| t.state.as_str())
    }

    /// The state's kind.
    #[must_use]
    pub fn kind(&self) -> StateKind {
        self.terms.first().map_or(StateKind::Recurrent, |t| t.kind)
    }

    /// The plan index of its term holding `holding`, if the plan has it.
    #[must_use]
    pub fn term(&self, holding: Holding) -> Option<usize> {
        self.terms
            .iter()
            .position(|t| t.holding == holding)
            .map(|i| self.first_term + i)
    }

    /// Its regions in its kind's field group; a term the plan lacks is [`Region::EMPTY`].
    #[must_use]
    pub fn group(&self) -> FieldGroup {
        let region = |holding| {
            self.terms
                .iter()
                .find(|t| t.holding == holding)
                .map_or(Region::EMPTY, StateTerm::region)
        };
        match GroupOf::kind(self.kind()) {
            GroupOf::Kv => FieldGroup::Kv(KvRegions {
                blocks: region(Holding::Blocks),
            }),
            GroupOf::Cache => FieldGroup::Cache(CacheRegions {
                cache: region(Holding::Cache),
            }),
            GroupOf::Recurrent => FieldGroup::Recurrent(RecurrentRegions {
                live: region(Holding::Live),
                steps: region(Holding::Steps),
                checkpoint: region(Holding::Checkpoint),
            }),
        }
    }
}

/// A state's regions in the field group of its kind, as a generated plan's field holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldGroup {
    /// A recurrent state: its live pool, verify intermediates and checkpoints.
    Recurrent(RecurrentRegions),
    /// One side of a paged KV cache.
    Kv(KvRegions),
    /// A cache.
    Cache(CacheRegions),
}

/// Gives the terms their offsets by the shared layout law ([`layout_order`], [`place_all`]).
fn lay_out(terms: &mut [StateTerm], align: u64) -> Result<Arena, PlanError<String>> {
    let keys: Vec<LayoutKey> = terms
        .iter()
        .map(|t| LayoutKey {
            space: t.space,
            lifetime: t.lifetime,
        })
        .collect();
    let mut order = vec![0; terms.len()];
    layout_order(&keys, &mut order);
    let mut regions: Vec<Region> = terms.iter().map(StateTerm::region).collect();
    let present = vec![true; terms.len()];
    let arena = place_all(&keys, &present, &order, align, &mut regions).map_err(|i| {
        PlanError::Overflow {
            state: terms.get(i).map_or_else(String::new, |t| t.state.clone()),
        }
    })?;
    for (term, region) in terms.iter_mut().zip(&regions) {
        term.offset = region.offset;
    }
    Ok(arena)
}
