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
//! - Errors come in a fixed order (first a reader whose owner is not declared; then per
//!   declaration: format, unit bytes in its format then as stored, its terms; then layout),
//!   which the generated plans follow too.
//! - A KV side that reads another's KV (`StateDecl::shares`) has no term and no page of the
//!   pool: its regions are its owner's ([`DynamicPlan::owner_of`], [`DynamicPlan::states`]).

use super::error::PlanError;
use super::parts::{Part, placed};
use super::pool::{PagePool, PoolBuilder};
use super::regions::{CacheRegions, GroupOf, KvRegions, RecurrentRegions, Unit};
use crate::law::layout::{Arena, LayoutKey, check_align, layout_order, place_all};
use crate::law::sizing::{TermSpec, held_in_pool, size_term};
use crate::law::{Holding, Region, Space};
use crate::model::{
    FormatChoice, HSteps, Lifetime, PoolPolicy, Position, Reach, StateDecl, StateDtype,
    StateFormat, StateInputs, StateKind, StepCounts, UnitAxis, strides_into,
};
use std::collections::{HashMap, HashSet};

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
    /// The packing its unit is made of, with each part placed (schema 3); `None` for a unit of
    /// one dtype.
    pub packing: Option<UnitPacking>,
    /// Its unit's tensor shape (the state's `StateDecl::axes`): the term is the tensor
    /// `[units, axes...]` of its dtype.
    pub axes: Vec<UnitAxis>,
    /// What a KV side keeps of a sequence (its sliding window, attention chunk or fixed token
    /// count); `None`: every token, or not a KV side.
    pub reach: Option<Reach>,
}

/// The packing a term's unit is made of: its name and its parts, placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitPacking {
    /// Its name (`fp8_ds_mla`).
    pub name: String,
    /// Its parts, in unit order.
    pub parts: Vec<Part<String>>,
}

/// The unit `decl`'s format gives under `inputs` (before `Unit::stored`), and its packing when
/// it is made of one.
fn unit_of(
    decl: &StateDecl,
    inputs: &StateInputs<'_>,
) -> Result<(Unit, Option<UnitPacking>), PlanError<String>> {
    let fault = |fault| PlanError::of_fault(fault, decl.id.clone());
    let name = match &decl.format {
        StateFormat::Fixed(dtype) => {
            return Ok((Unit::of(Ok(decl.elements), *dtype).map_err(fault)?, None));
        }
        StateFormat::Packing(name) => name.as_str(),
        StateFormat::Keyed(key) => match inputs.format(key) {
            None => {
                return Err(PlanError::MissingFormat {
                    state: decl.id.clone(),
                    key: key.clone(),
                });
            }
            Some(FormatChoice::Dtype(dtype)) => {
                return Ok((Unit::of(Ok(decl.elements), dtype).map_err(fault)?, None));
            }
            Some(FormatChoice::Packing(name)) => name,
        },
    };
    let packing = decl
        .packing(name)
        .ok_or_else(|| PlanError::UnknownPacking {
            state: decl.id.clone(),
            packing: name.to_owned(),
        })?;
    let parts = placed(packing).map_err(fault)?;
    let unit = Unit::of_packing(parts.last().map_or(0, Part::end));
    let packing = UnitPacking {
        name: packing.name.clone(),
        parts,
    };
    Ok((unit, Some(packing)))
}

impl StateTerm {
    /// Row-major element strides of its unit's axes (`model::strides_into`, as a generated
    /// `Axes::strides`); `None` on overflow.
    #[must_use]
    pub fn strides(&self) -> Option<Vec<u64>> {
        let extents: Vec<u64> = self.axes.iter().map(|a| a.extent).collect();
        let mut out = vec![0; extents.len()];
        strides_into(&extents, &mut out).map(|_| out)
    }

    /// Its region: where it sits and the byte range of each unit ([`Region::unit`]).
    #[must_use]
    pub fn region(&self) -> Region {
        Region {
            offset: self.offset,
            bytes: self.bytes,
            units: self.units,
            dtype: self.dtype,
            unit_bytes: self.unit_bytes,
            space: self.space,
            inner: self.inner,
        }
    }
}

/// A KV side that reads another's KV (`shares`): no term of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reader {
    /// Its id (`l20.shared.k`).
    state: String,
    /// Its owner's id (`l14.attn.k`).
    owner: String,
    /// The terms before it in plan order: where [`DynamicPlan::states`] gives it.
    at: usize,
    /// Its owner's terms in [`DynamicPlan::terms`] (empty when the owner has none).
    terms: std::ops::Range<usize>,
}

/// Every state of a circuit, sized and laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicPlan {
    terms: Vec<StateTerm>,
    /// Every KV side that reads another's KV, in plan order.
    readers: Vec<Reader>,
    arena: Arena,
    /// Boxed: a plan is moved about whole, and most have no pool.
    pool: Option<Box<PagePool>>,
    /// The verify rows it was made with, which say where each verify slot's `h_steps` rows
    /// start ([`StateRegions::step`]).
    h_steps: StepCounts,
}

impl DynamicPlan {
    /// Sizes every term of `decls` under `inputs` and lays them out with every offset a multiple
    /// of `align`.
    ///
    /// # Errors
    /// [`PlanError::MissingOwner`] for a KV side that reads the KV of a state `decls` do not
    /// declare (a pipeline rank that holds the reader but not its owner);
    /// [`PlanError::BadAlign`] when `align` is not a nonzero power of two;
    /// [`PlanError::MissingFormat`] for a format key the inputs lack;
    /// [`PlanError::UnknownPacking`] for a format naming a packing its state does not declare;
    /// [`PlanError::MissingVerify`] for a recurrent state without `verify` under verify inputs;
    /// [`PlanError::Overflow`] when any size or offset overflows `u64`.
    pub fn new(
        decls: &[StateDecl],
        inputs: &StateInputs<'_>,
        align: u64,
    ) -> Result<Self, PlanError<String>> {
        owners_held(decls)?;
        if !check_align(align) {
            return Err(PlanError::BadAlign { align });
        }
        let mut terms = Vec::new();
        let mut readers = Vec::new();
        let mut pool = PoolBuilder::default();
        for decl in decls {
            if let Some(owner) = &decl.shares {
                readers.push(Reader {
                    state: decl.id.clone(),
                    owner: owner.clone(),
                    at: terms.len(),
                    terms: 0..0,
                });
                continue;
            }
            let fault = |fault| PlanError::of_fault(fault, decl.id.clone());
            // The unit of its format, then as its terms store it: a generated plan's order.
            let (unit, packing) = unit_of(decl, inputs)?;
            let unit = unit
                .stored(decl.kind, decl.section(), inputs)
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
                        packing: packing.clone(),
                        axes: decl.axes.clone(),
                        reach: decl.reach,
                    });
                }
            }
        }
        let arena = lay_out(&mut terms, align)?;
        let pool = match &inputs.pool {
            PoolPolicy::Arenas => None,
            PoolPolicy::Vllm(vllm) => Some(Box::new(pool.finish(vllm, arena.device_bytes)?)),
        };
        // Each owner's terms, consecutive in plan order.
        let mut ranges: HashMap<&str, std::ops::Range<usize>> = HashMap::new();
        for (i, term) in terms.iter().enumerate() {
            ranges
                .entry(term.state.as_str())
                .and_modify(|range| range.end = i + 1)
                .or_insert(i..i + 1);
        }
        for reader in &mut readers {
            reader.terms = ranges.get(reader.owner.as_str()).cloned().unwrap_or(0..0);
        }
        Ok(Self {
            terms,
            readers,
            arena,
            pool,
            h_steps: StepCounts::from(inputs.verify.map_or(HSteps::NONE, |v| v.h_steps)),
        })
    }

    /// The verify rows the plan was made with (`inputs.verify`'s `h_steps`; no slot without
    /// verify inputs).
    #[must_use]
    pub fn h_steps(&self) -> HSteps<'_> {
        self.h_steps.as_h_steps()
    }

    /// Every term, in plan order.
    #[must_use]
    pub fn terms(&self) -> &[StateTerm] {
        &self.terms
    }

    /// The term of `state` holding `holding`, if the plan has it: for a KV side that reads
    /// another's KV (`shares`), its owner's term (the same address, not a copy).
    #[must_use]
    pub fn term(&self, state: &str, holding: Holding) -> Option<&StateTerm> {
        let state = self.owner_of(state).unwrap_or(state);
        self.terms
            .iter()
            .find(|t| t.state == state && t.holding == holding)
    }

    /// The state whose KV `state` reads, when `state` is a KV side that reads another's KV
    /// instead of keeping its own (`StateDecl::shares`): `owner_of("l20.shared.k")` is
    /// `Some("l14.attn.k")`. `None` for every other state.
    #[must_use]
    pub fn owner_of(&self, state: &str) -> Option<&str> {
        self.readers
            .iter()
            .find(|r| r.state == state)
            .map(|r| r.owner.as_str())
    }

    /// Every KV side that reads another's KV, and the state it reads, in plan order.
    pub fn shared(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.readers
            .iter()
            .map(|r| (r.state.as_str(), r.owner.as_str()))
    }

    /// The regions of `state` in the field group of its kind, if it has a term: for a KV side
    /// that reads another's KV, its owner's ([`StateRegions::owner`] names it).
    #[must_use]
    pub fn state(&self, state: &str) -> Option<StateRegions<'_>> {
        self.states().find(|s| s.state() == state)
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
            Some(pool) => pool.plan.end(),
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
    /// engine on the dynamic plan reads the same groups and address API. A KV side that reads
    /// another's KV (`shares`) comes at its own place with its owner's terms, as its generated
    /// field holds its owner's regions ([`StateRegions::owner`] says whose).
    pub fn states(&self) -> impl Iterator<Item = StateRegions<'_>> + '_ {
        let mut first = 0;
        let mut readers = self.readers.iter().peekable();
        std::iter::from_fn(move || {
            // A reader whose owner has no term (no KV inputs) has none either.
            while let Some(reader) = readers.next_if(|r| r.at <= first) {
                if let Some(terms) = self.terms.get(reader.terms.clone())
                    && !terms.is_empty()
                {
                    return Some(StateRegions {
                        first_term: reader.terms.start,
                        terms,
                        reader: Some(reader.state.as_str()),
                        h_steps: self.h_steps(),
                    });
                }
            }
            let state = &self.terms.get(first)?.state;
            let count = self.terms[first..]
                .iter()
                .take_while(|t| t.state == *state)
                .count();
            let regions = StateRegions {
                first_term: first,
                terms: &self.terms[first..first + count],
                reader: None,
                h_steps: self.h_steps(),
            };
            first += count;
            Some(regions)
        })
    }
}

/// Every KV side of `decls` that reads another's KV (`shares`) reads a state `decls` declare,
/// one that keeps its own.
///
/// # Errors
/// [`PlanError::MissingOwner`] naming the first reader, in plan order, whose owner is not
/// declared: a pipeline rank that holds the reader's layer but not its owner's.
pub(crate) fn owners_held(decls: &[StateDecl]) -> Result<(), PlanError<String>> {
    if decls.iter().all(|d| d.shares.is_none()) {
        return Ok(());
    }
    let owners: HashSet<&str> = decls
        .iter()
        .filter(|d| d.shares.is_none())
        .map(|d| d.id.as_str())
        .collect();
    for decl in decls {
        if let Some(owner) = &decl.shares
            && !owners.contains(owner.as_str())
        {
            return Err(PlanError::MissingOwner {
                state: decl.id.clone(),
                owner: owner.clone(),
            });
        }
    }
    Ok(())
}

/// One state of a [`DynamicPlan`]: its terms (consecutive in plan order) and their regions in
/// the field group of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRegions<'p> {
    /// The index of its first term in [`DynamicPlan::terms`].
    pub first_term: usize,
    /// Its terms, in [`Holding::of_kind`] order (absent ones left out); for a KV side that
    /// reads another's KV, its owner's.
    pub terms: &'p [StateTerm],
    /// For a KV side that reads another's KV (`shares`), its own id: `terms` and
    /// `first_term` are then its owner's.
    pub reader: Option<&'p str>,
    /// The verify rows of its plan ([`DynamicPlan::h_steps`]), for [`StateRegions::step`].
    pub h_steps: HSteps<'p>,
}

impl<'p> StateRegions<'p> {
    /// The state's id (`l0.gdn.h`; a reader's own, `l20.shared.k`).
    #[must_use]
    pub fn state(&self) -> &'p str {
        match self.reader {
            Some(reader) => reader,
            None => self.terms.first().map_or("", |t| t.state.as_str()),
        }
    }

    /// For a KV side that reads another's KV, the state it reads (`l14.attn.k`), whose
    /// regions these are; `None` for a state with terms of its own.
    #[must_use]
    pub fn owner(&self) -> Option<&'p str> {
        self.reader?;
        self.terms.first().map(|t| t.state.as_str())
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

    /// Verified row `row` of verify slot `slot` of a recurrent state, under the verify rows its
    /// plan was made with ([`RecurrentRegions::step`]); `None` out of range or for a state of
    /// another group.
    #[must_use]
    pub fn step(&self, slot: u64, row: u64) -> Option<Region> {
        match self.group() {
            FieldGroup::Recurrent(regions) => regions.step(slot, row, &self.h_steps),
            FieldGroup::Kv(_) | FieldGroup::Cache(_) => None,
        }
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
