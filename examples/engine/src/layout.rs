//! The plan as the engine reads it ([`Layout`]): every term of the dynamic
//! [`DynamicPlan`] (`StateTerm::region()`) wrapped in the field group of its kind
//! ([`RecurrentRegions`], [`KvRegions`], [`CacheRegions`]), the same groups a generated plan's
//! fields are, so that every address the engine touches comes from a plan [`Region`] and the
//! address API: `slot`, `checkpoint_of`, `step` (`[verify slot][step]`), `token`
//! (`[block][token]`), `ring` (`[sequence slot][ring slot]`), `tree_cell`, `draft`, `unit` and
//! `lookup_table`. It also keeps each state's unit as a kernel views it ([`Shape`]: the
//! term's `axes` and `strides()`), to check the plan's units against it ([`Layout::view`],
//! [`Layout::check_last_element`]).
//!
//! Invariants:
//! - A term's index is its index in `DynamicPlan::terms()` (plan order); a tag names it.
//! - Each region is kept once, in its state's field group: [`Layout::region`] reads it there,
//!   and [`Layout::relocate`] (to inject a fault) changes it there, so every accessor sees the
//!   change.
//! - Every accessor returns a [`UnitRef`]: the region the API gives, and the unit's index by the
//!   documented order of its kind (docs/circuit-schema.md, "The twelve kinds"), which is what
//!   the unit's tag names. The final check reads unit `i` back through `Region::unit(i)`, so an
//!   accessor that disagreed with the documented order would fail it.
//! - Nothing here computes an address the engine writes through: the strides address a unit's
//!   last element only to check that it lies in the bytes the address API gave.

use std::collections::HashMap;

use metrale_circuit::dynamic::{
    DynamicPlan, FieldGroup,
    decl::{Reach, Section, StateDecl},
};
use metrale_circuit::inputs::HSteps;
use metrale_circuit::{
    CacheRegions, Holding, KvRegions, RecurrentRegions, Region, Space, StateKind,
};

use crate::EngineError;

/// One unit the engine reads or writes: which term, its index in the term's unit order, and
/// where it is (from the address API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitRef {
    /// The term's index in plan order.
    pub term: usize,
    /// The unit's index in the term's documented order (for the prompt-lookup index, the
    /// sequence whose table it is).
    pub index: u64,
    /// Its bytes in the term's arena.
    pub region: Region,
}

/// The regions of one state, in its kind's field group, with the plan index of each term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Group {
    /// A recurrent state: the live pool, and with verify inputs its intermediates and
    /// checkpoints.
    Recurrent {
        /// The regions, [`Region::EMPTY`] for an absent term.
        regions: RecurrentRegions,
        /// The live term.
        live: usize,
        /// The verify intermediates' term, with verify inputs.
        steps: Option<usize>,
        /// The pre-verify checkpoints' term, with verify inputs.
        checkpoint: Option<usize>,
    },
    /// One side of a paged KV cache.
    Kv {
        /// Its blocks.
        regions: KvRegions,
        /// Its term.
        term: usize,
    },
    /// A cache.
    Cache {
        /// Its units.
        regions: CacheRegions,
        /// Its term.
        term: usize,
    },
}

/// A state's unit as a kernel views it, from the dynamic plan (`StateTerm::axes`,
/// `StateTerm::strides`): each of its terms is the tensor `[units, extents...]` of its dtype.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Each axis's extent, outermost first (empty: no shape declared).
    pub extents: Vec<u64>,
    /// Each axis's row-major element stride.
    pub strides: Vec<u64>,
}

impl Shape {
    /// The unit's elements: the extents' product; `None` on overflow.
    #[must_use]
    pub fn elements(&self) -> Option<u64> {
        self.extents
            .iter()
            .try_fold(1_u64, |n, &e| n.checked_mul(e))
    }

    /// The element index in its term of unit `unit`'s last element, `[unit, e1 - 1, ...,
    /// en - 1]` through the strides; `None` on overflow or for an axis of extent 0.
    #[must_use]
    pub fn last_element(&self, unit: u64) -> Option<u64> {
        let first = unit.checked_mul(self.elements()?)?;
        self.extents
            .iter()
            .zip(&self.strides)
            .try_fold(first, |at, (&extent, &stride)| {
                at.checked_add(extent.checked_sub(1)?.checked_mul(stride)?)
            })
    }
}

/// How a term's units are checked against their shape ([`Layout::view`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Elements of this many bytes: each unit written has its last element addressed.
    Elements(u64),
    /// Not addressed by element, and why.
    Skipped(&'static str),
}

/// One state that has at least one term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateEntry {
    /// Its id (`l0.gdn.h`).
    pub id: String,
    /// Its id inside its block (`h`).
    pub local: String,
    /// Its kind.
    pub kind: StateKind,
    /// Main model or draft head.
    pub section: Section,
    /// For a copy (a prefix or ring snapshot), the id of the state it copies.
    pub of: Option<String>,
    /// For a KV side that keeps part of a sequence, its sliding window or attention chunk.
    pub reach: Option<Reach>,
    /// Its regions.
    pub group: Group,
    /// Its unit's shape.
    pub shape: Shape,
}

/// One term: which state it belongs to, what it holds, where it lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TermEntry {
    state: usize,
    holding: Holding,
    space: Space,
    /// Its unit is made of a packing's parts, each of its own dtype.
    composite: bool,
}

/// Every term of a plan, by state, in field groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    states: Vec<StateEntry>,
    terms: Vec<TermEntry>,
    h_steps: Option<HSteps<'static>>,
    align: u64,
    device_bytes: u64,
    host_bytes: u64,
}

impl Layout {
    /// The terms of `plan`, made from `decls` with `h_steps` as its verify inputs (`None`
    /// without verify), grouped by state.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] when a term names no state of `decls` (not for a plan
    /// `DynamicPlan::new` made from them).
    pub fn new(
        plan: &DynamicPlan,
        decls: &[StateDecl],
        h_steps: Option<HSteps<'static>>,
    ) -> Result<Self, EngineError> {
        let decl_of: HashMap<&str, &StateDecl> = decls.iter().map(|d| (d.id.as_str(), d)).collect();
        let mut states = Vec::new();
        let mut terms = vec![None; plan.terms().len()];
        // The plan's own field-group view: each state's terms, grouped as a generated plan's
        // fields are.
        for regions in plan.states() {
            // A KV side that reads another layer's KV (`shares`) has its owner's regions: the
            // owner's entry writes and reads them.
            if regions.owner().is_some() {
                continue;
            }
            let Some(decl) = decl_of.get(regions.state()) else {
                return Err(EngineError::Invariant(format!(
                    "state `{}` of the plan is not declared",
                    regions.state()
                )));
            };
            let group = match regions.group() {
                FieldGroup::Recurrent(group) => {
                    let Some(live) = regions.term(Holding::Live) else {
                        continue;
                    };
                    Group::Recurrent {
                        regions: group,
                        live,
                        steps: regions.term(Holding::Steps),
                        checkpoint: regions.term(Holding::Checkpoint),
                    }
                }
                FieldGroup::Kv(group) => Group::Kv {
                    regions: group,
                    term: regions.first_term,
                },
                FieldGroup::Cache(group) => Group::Cache {
                    regions: group,
                    term: regions.first_term,
                },
            };
            let state = states.len();
            let mut shape = None;
            for (term, holding) in group_terms(&group) {
                let Some(planned) = plan.terms().get(term) else {
                    continue;
                };
                // Every term of a state has its declaration's axes. Strides that overflow are
                // left empty, which `view` refuses.
                shape.get_or_insert_with(|| Shape {
                    extents: planned.axes.iter().map(|axis| axis.extent).collect(),
                    strides: planned.strides().unwrap_or_default(),
                });
                terms[term] = Some(TermEntry {
                    state,
                    holding,
                    space: planned.space,
                    composite: planned.packing.is_some(),
                });
            }
            states.push(StateEntry {
                id: decl.id.clone(),
                local: decl.local.clone(),
                kind: decl.kind,
                section: decl.section(),
                of: decl.of.clone(),
                reach: decl.reach,
                group,
                shape: shape.unwrap_or_default(),
            });
        }
        let terms = terms
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                t.ok_or_else(|| {
                    EngineError::Invariant(format!(
                        "term {i} (`{}`) belongs to no declared state",
                        plan.terms()[i].state
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            states,
            terms,
            h_steps,
            align: plan.align(),
            device_bytes: plan.device_bytes(),
            host_bytes: plan.host_bytes(),
        })
    }

    /// The states with at least one term, in declaration order.
    #[must_use]
    pub fn states(&self) -> &[StateEntry] {
        &self.states
    }

    /// The number of terms.
    #[must_use]
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// The alignment of every region and of each arena's start.
    #[must_use]
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The arena size of `space`.
    #[must_use]
    pub fn arena_bytes(&self, space: Space) -> u64 {
        match space {
            Space::Device => self.device_bytes,
            Space::Host => self.host_bytes,
        }
    }

    /// The verify inputs' rows per verify slot; `None` without verify.
    #[must_use]
    pub fn h_steps(&self) -> Option<HSteps<'static>> {
        self.h_steps
    }

    /// Term `term`'s region, read from its state's field group.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    #[must_use]
    pub fn region(&self, term: usize) -> Region {
        let entry = self.terms[term];
        match (&self.states[entry.state].group, entry.holding) {
            (Group::Recurrent { regions, .. }, Holding::Live) => regions.live,
            (Group::Recurrent { regions, .. }, Holding::Steps) => regions.steps,
            (Group::Recurrent { regions, .. }, Holding::Checkpoint) => regions.checkpoint,
            (Group::Kv { regions, .. }, _) => regions.blocks,
            (Group::Cache { regions, .. }, _) => regions.cache,
            (Group::Recurrent { .. }, _) => Region::EMPTY,
        }
    }

    /// The memory space term `term` lives in.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    #[must_use]
    pub fn space(&self, term: usize) -> Space {
        self.terms[term].space
    }

    /// Term `term` as `state holding` (`l0.gdn.h live`), for reports.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    #[must_use]
    pub fn term_name(&self, term: usize) -> String {
        let entry = self.terms[term];
        format!("{} {}", self.states[entry.state].id, entry.holding.name())
    }

    /// Moves term `term` to `offset` in its arena: a fault to inject (two terms made to
    /// overlap), which the tag check must catch. Its bytes, units and unit size stay.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    pub fn relocate(&mut self, term: usize, offset: u64) {
        let entry = self.terms[term];
        let region = match (&mut self.states[entry.state].group, entry.holding) {
            (Group::Recurrent { regions, .. }, Holding::Live) => &mut regions.live,
            (Group::Recurrent { regions, .. }, Holding::Steps) => &mut regions.steps,
            (Group::Recurrent { regions, .. }, Holding::Checkpoint) => &mut regions.checkpoint,
            (Group::Kv { regions, .. }, _) => &mut regions.blocks,
            (Group::Cache { regions, .. }, _) => &mut regions.cache,
            (Group::Recurrent { .. }, _) => return,
        };
        region.offset = offset;
    }

    /// Checks, once, that term `term`'s unit is its state's shape: the extents' product times
    /// the element's bytes is the unit's bytes, and says whether its units are addressed by
    /// element ([`View::Elements`]) or not and why.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] when the shape and the unit disagree.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    pub fn view(&self, term: usize) -> Result<View, EngineError> {
        let entry = self.terms[term];
        let shape = &self.states[entry.state].shape;
        let region = self.region(term);
        if shape.extents.is_empty() {
            return Ok(View::Skipped("no shape declared"));
        }
        if entry.composite {
            // A packing's parts each have a dtype of their own; the region's is `u8`.
            return Ok(View::Skipped("a unit made of a packing's parts"));
        }
        let bits = region.dtype.bits();
        if !bits.is_multiple_of(8) {
            // Packed elements have no byte offset of their own.
            return Ok(View::Skipped("sub-byte elements"));
        }
        let element = bits / 8;
        if shape.elements().and_then(|n| n.checked_mul(element)) != Some(region.unit_bytes)
            || shape.strides.len() != shape.extents.len()
        {
            return Err(EngineError::Invariant(format!(
                "`{}`'s unit is {:?} of {} (strides {:?}), but its region's units are {} bytes",
                self.term_name(term),
                shape.extents,
                region.dtype.name(),
                shape.strides,
                region.unit_bytes
            )));
        }
        if !region.is_dense() {
            return Ok(View::Skipped("hashed entries, written a table at a time"));
        }
        Ok(View::Elements(element))
    }

    /// Checks that `unit`'s last element, addressed through its shape's strides from its
    /// term's first byte (`[index, e1 - 1, ..., en - 1]`, elements of `element` bytes), lies in
    /// the bytes the address API gave it: the kernel's view and the plan's agree on the unit.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] when it does not.
    pub fn check_last_element(&self, unit: &UnitRef, element: u64) -> Result<(), EngineError> {
        let shape = &self.states[self.terms[unit.term].state].shape;
        let at = shape
            .last_element(unit.index)
            .and_then(|last| last.checked_mul(element))
            .and_then(|bytes| bytes.checked_add(self.region(unit.term).offset));
        match at {
            Some(at)
                if at >= unit.region.offset
                    && at.checked_add(element) <= Some(unit.region.end()) =>
            {
                Ok(())
            }
            _ => Err(EngineError::Invariant(format!(
                "`{}` unit {}: its last element by the strides {:?} is at byte {at:?}, outside \
                 the unit's bytes {}..{}",
                self.term_name(unit.term),
                unit.index,
                shape.strides,
                unit.region.offset,
                unit.region.end()
            ))),
        }
    }

    /// Every unit of term `term` in its order, through `Region::unit(i)` (for the
    /// prompt-lookup index, whose entries are hashed, each sequence's table through
    /// `Region::group(i)`), until the API says there is none.
    ///
    /// # Panics
    /// When `term` is not below [`Layout::term_count`].
    pub fn units(&self, term: usize) -> impl Iterator<Item = UnitRef> + use<> {
        let region = self.region(term);
        let dense = region.is_dense();
        (0_u64..).map_while(move |index| {
            let unit = if dense {
                region.unit(index)
            } else {
                region.group(index)
            };
            unit.map(|region| UnitRef {
                term,
                index,
                region,
            })
        })
    }

    /// The recurrent regions of state `state` and their terms.
    fn recurrent(&self, state: usize) -> Result<RecurrentTerms<'_>, EngineError> {
        match &self.states[state].group {
            Group::Recurrent {
                regions,
                live,
                steps,
                checkpoint,
            } => Ok((regions, *live, *steps, *checkpoint)),
            _ => Err(self.wrong_group(state, "recurrent")),
        }
    }

    fn kv(&self, state: usize) -> Result<(&KvRegions, usize), EngineError> {
        match &self.states[state].group {
            Group::Kv { regions, term } => Ok((regions, *term)),
            _ => Err(self.wrong_group(state, "paged KV")),
        }
    }

    fn cache(&self, state: usize) -> Result<(&CacheRegions, usize), EngineError> {
        match &self.states[state].group {
            Group::Cache { regions, term } => Ok((regions, *term)),
            _ => Err(self.wrong_group(state, "cache")),
        }
    }

    fn wrong_group(&self, state: usize, wanted: &str) -> EngineError {
        EngineError::Invariant(format!(
            "state `{}` is not a {wanted} state",
            self.states[state].id
        ))
    }

    /// Sequence slot `slot`'s live state (`RecurrentRegions::slot`, `[slot]`).
    ///
    /// # Errors
    /// [`EngineError::Address`] out of range, [`EngineError::Invariant`] for a state that is
    /// not recurrent.
    pub fn live(&self, state: usize, slot: u64) -> Result<UnitRef, EngineError> {
        let (regions, live, ..) = self.recurrent(state)?;
        let region = regions
            .slot(slot)
            .ok_or_else(|| self.no_unit(state, &format!("sequence slot {slot}")))?;
        Ok(UnitRef {
            term: live,
            index: slot,
            region,
        })
    }

    /// The state of verify slot `slot` before its verify (`RecurrentRegions::checkpoint_of`,
    /// `[verify slot]`); `Ok(None)` when the plan has no verify terms.
    ///
    /// # Errors
    /// As [`Layout::live`].
    pub fn checkpoint(&self, state: usize, slot: u64) -> Result<Option<UnitRef>, EngineError> {
        let (regions, _, _, checkpoint) = self.recurrent(state)?;
        let Some(term) = checkpoint else {
            return Ok(None);
        };
        let region = regions
            .checkpoint_of(slot)
            .ok_or_else(|| self.no_unit(state, &format!("checkpoint of verify slot {slot}")))?;
        Ok(Some(UnitRef {
            term,
            index: slot,
            region,
        }))
    }

    /// Verified row `row` of verify slot `slot` (`RecurrentRegions::step`: `[verify
    /// slot][step]` for `conv_steps`, slot-major rows of `h_steps`); `Ok(None)` past the slot's
    /// rows or without verify terms.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] for a state that is not recurrent.
    pub fn step(&self, state: usize, slot: u64, row: u64) -> Result<Option<UnitRef>, EngineError> {
        let (regions, _, steps, _) = self.recurrent(state)?;
        let (Some(term), Some(h_steps)) = (steps, self.h_steps) else {
            return Ok(None);
        };
        let Some(region) = regions.step(slot, row, &h_steps) else {
            return Ok(None);
        };
        // The documented order: `[verify slot][step]` when every slot has `inner` steps, else
        // each slot's `h_steps` rows after those of the slots before it.
        let first = if regions.steps.inner > 0 {
            slot.checked_mul(regions.steps.inner)
        } else {
            h_steps.rows_before(slot)
        };
        let index = first
            .and_then(|first| first.checked_add(row))
            .ok_or_else(|| self.no_unit(state, &format!("row {row} of verify slot {slot}")))?;
        Ok(Some(UnitRef {
            term,
            index,
            region,
        }))
    }

    /// Tokens per block of KV side `state` (`KvRegions::block_size`).
    ///
    /// # Errors
    /// [`EngineError::Invariant`] for a state that is not a KV side.
    pub fn block_size(&self, state: usize) -> Result<u64, EngineError> {
        Ok(self.kv(state)?.0.block_size())
    }

    /// The blocks KV side `state` holds (`KvRegions::block_count`; for a windowed side what
    /// the window law gives).
    ///
    /// # Errors
    /// As [`Layout::block_size`].
    pub fn block_count(&self, state: usize) -> Result<u64, EngineError> {
        Ok(self.kv(state)?.0.block_count())
    }

    /// Token `token` of block `block` of KV side `state` (`KvRegions::token`, `[block][token
    /// in block]`).
    ///
    /// # Errors
    /// [`EngineError::Address`] out of range, [`EngineError::Invariant`] for a state that is
    /// not a KV side.
    pub fn token(&self, state: usize, block: u64, token: u64) -> Result<UnitRef, EngineError> {
        let (regions, term) = self.kv(state)?;
        let what = || format!("token {token} of block {block}");
        let region = regions
            .token(block, token)
            .ok_or_else(|| self.no_unit(state, &what()))?;
        let index = block
            .checked_mul(regions.block_size())
            .and_then(|first| first.checked_add(token))
            .ok_or_else(|| self.no_unit(state, &what()))?;
        Ok(UnitRef {
            term,
            index,
            region,
        })
    }

    /// Row or slot `index` of a flat cache (`CacheRegions::unit`, `[row]`); `Ok(None)` out of
    /// range.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] for a state that is not a cache.
    pub fn cache_unit(&self, state: usize, index: u64) -> Result<Option<UnitRef>, EngineError> {
        let (regions, term) = self.cache(state)?;
        Ok(regions.unit(index).map(|region| UnitRef {
            term,
            index,
            region,
        }))
    }

    /// Ring slot `ring_slot` of sequence slot `seq_slot` (`CacheRegions::ring`, `[sequence
    /// slot][ring slot]`); `Ok(None)` out of range.
    ///
    /// # Errors
    /// As [`Layout::cache_unit`].
    pub fn ring(
        &self,
        state: usize,
        seq_slot: u64,
        ring_slot: u64,
    ) -> Result<Option<UnitRef>, EngineError> {
        let (regions, term) = self.cache(state)?;
        let Some(region) = regions.ring(seq_slot, ring_slot) else {
            return Ok(None);
        };
        let index = seq_slot
            .checked_mul(regions.cache.inner)
            .and_then(|first| first.checked_add(ring_slot));
        Ok(index.map(|index| UnitRef {
            term,
            index,
            region,
        }))
    }

    /// The (`from`, `to`) cell of verify slot `slot`'s token-tree mask
    /// (`CacheRegions::tree_cell`, `[verify slot][node][node]`); `Ok(None)` out of range.
    ///
    /// # Errors
    /// As [`Layout::cache_unit`].
    pub fn tree_cell(
        &self,
        state: usize,
        slot: u64,
        from: u64,
        to: u64,
    ) -> Result<Option<UnitRef>, EngineError> {
        let (regions, term) = self.cache(state)?;
        let Some(region) = regions.tree_cell(slot, from, to) else {
            return Ok(None);
        };
        let nodes = regions.cache.inner;
        let index = slot
            .checked_mul(nodes)
            .and_then(|row| row.checked_add(from))
            .and_then(|row| row.checked_mul(nodes))
            .and_then(|first| first.checked_add(to));
        Ok(index.map(|index| UnitRef {
            term,
            index,
            region,
        }))
    }

    /// Draft position `position` of verify slot `slot` (`CacheRegions::draft`, `[verify
    /// slot][position]`); `Ok(None)` out of range.
    ///
    /// # Errors
    /// As [`Layout::cache_unit`].
    pub fn draft(
        &self,
        state: usize,
        slot: u64,
        position: u64,
    ) -> Result<Option<UnitRef>, EngineError> {
        let (regions, term) = self.cache(state)?;
        let Some(region) = regions.draft(slot, position) else {
            return Ok(None);
        };
        let index = slot
            .checked_mul(regions.cache.inner)
            .and_then(|first| first.checked_add(position));
        Ok(index.map(|index| UnitRef {
            term,
            index,
            region,
        }))
    }

    /// Sequence `sequence`'s prompt-lookup table (`CacheRegions::lookup_table`, `[sequence]`
    /// tables); `Ok(None)` out of range.
    ///
    /// # Errors
    /// As [`Layout::cache_unit`].
    pub fn lookup_table(
        &self,
        state: usize,
        sequence: u64,
    ) -> Result<Option<UnitRef>, EngineError> {
        let (regions, term) = self.cache(state)?;
        Ok(regions.lookup_table(sequence).map(|region| UnitRef {
            term,
            index: sequence,
            region,
        }))
    }

    fn no_unit(&self, state: usize, what: &str) -> EngineError {
        EngineError::Address(format!(
            "the plan has no {what} for `{}`",
            self.states[state].id
        ))
    }
}

/// A recurrent state's regions, with the terms of its live pool, its intermediates and its
/// checkpoints.
type RecurrentTerms<'a> = (&'a RecurrentRegions, usize, Option<usize>, Option<usize>);

/// The terms of a field group with what each holds.
fn group_terms(group: &Group) -> Vec<(usize, Holding)> {
    match group {
        Group::Recurrent {
            live,
            steps,
            checkpoint,
            ..
        } => {
            let mut terms = vec![(*live, Holding::Live)];
            terms.extend(steps.map(|t| (t, Holding::Steps)));
            terms.extend(checkpoint.map(|t| (t, Holding::Checkpoint)));
            terms
        }
        Group::Kv { term, .. } => vec![(*term, Holding::Blocks)],
        Group::Cache { term, .. } => vec![(*term, Holding::Cache)],
    }
}

#[cfg(test)]
mod tests {
    use metrale_circuit::dynamic::decl::{StateFormat, UnitAxis, VerifySteps};
    use metrale_circuit::inputs::HSteps;
    use metrale_circuit::{KvInputs, StateDtype, StateInputs, VerifyInputs};

    use super::*;

    fn plan() -> (DynamicPlan, Vec<StateDecl>, HSteps<'static>) {
        let f32 = StateFormat::Fixed(StateDtype::F32);
        let decls = vec![
            StateDecl::new("l0.gdn.h", StateKind::Recurrent, f32.clone(), 4)
                .with_verify(VerifySteps::HSteps),
            StateDecl::new("l0.gdn.conv", StateKind::Recurrent, f32.clone(), 2)
                .with_verify(VerifySteps::ConvSteps),
            StateDecl::new("l1.attn.k", StateKind::PagedKv, f32, 2),
        ];
        planned(decls)
    }

    /// `decls` planned at 3 slots (`h_steps` 3, 1, 2; 2 conv steps) and 4 KV blocks of 8.
    fn planned(decls: Vec<StateDecl>) -> (DynamicPlan, Vec<StateDecl>, HSteps<'static>) {
        let h_steps = HSteps::PerSlot(&[3, 1, 2]);
        let inputs = StateInputs {
            slots: 3,
            verify: Some(VerifyInputs {
                h_steps,
                conv_steps: 2,
            }),
            kv: Some(KvInputs::blocks(4, 8)),
            ..StateInputs::EMPTY
        };
        (
            DynamicPlan::new(&decls, &inputs, 64).unwrap(),
            decls,
            h_steps,
        )
    }

    #[test]
    fn accessors_name_units_by_the_documented_order() {
        let (plan, decls, h_steps) = plan();
        let layout = Layout::new(&plan, &decls, Some(h_steps)).unwrap();
        assert_eq!(layout.states().len(), 3);
        assert_eq!(layout.term_count(), plan.terms().len());
        // Each accessor's unit is the one the term's flat order puts at that index.
        let check = |unit: UnitRef| {
            assert_eq!(layout.region(unit.term).unit(unit.index), Some(unit.region));
        };
        check(layout.live(0, 2).unwrap());
        check(layout.checkpoint(0, 1).unwrap().unwrap());
        // h_steps 3, 1, 2: slot 2's row 1 is unit 3 + 1 + 1 = 5.
        let row = layout.step(0, 2, 1).unwrap().unwrap();
        assert_eq!(row.index, 5);
        check(row);
        assert_eq!(layout.step(0, 1, 1).unwrap(), None, "slot 1 has one row");
        // conv_steps: [verify slot][step], 2 per slot.
        let conv = layout.step(1, 2, 1).unwrap().unwrap();
        assert_eq!(conv.index, 5);
        check(conv);
        let token = layout.token(2, 3, 7).unwrap();
        assert_eq!(token.index, 31);
        check(token);
        assert!(layout.token(2, 4, 0).is_err());
        assert_eq!(layout.block_count(2).unwrap(), 4);
        assert!(layout.live(2, 0).is_err(), "a KV side has no live slots");
    }

    #[test]
    fn units_walk_every_unit_and_relocate_moves_them() {
        let (plan, decls, h_steps) = plan();
        let mut layout = Layout::new(&plan, &decls, Some(h_steps)).unwrap();
        let k = plan.terms().len() - 1;
        assert_eq!(layout.term_name(k), "l1.attn.k blocks");
        assert_eq!(layout.units(k).count(), 32);
        let first = layout.units(k).next().unwrap().region.offset;
        layout.relocate(k, first + 8);
        assert_eq!(layout.token(2, 0, 0).unwrap().region.offset, first + 8);
        assert_eq!(layout.units(k).next().unwrap().region.offset, first + 8);
    }

    fn axes(extents: &[u64]) -> Vec<UnitAxis> {
        extents
            .iter()
            .map(|&extent| UnitAxis {
                name: format!("{extent}"),
                extent,
            })
            .collect()
    }

    #[test]
    fn units_are_checked_against_their_shape() {
        let (_, mut decls, h_steps) = plan();
        // h: 4 f32 as [2, 2]; the KV side's 2 f32 a token as [1, 2]; conv left without one.
        decls[0].axes = axes(&[2, 2]);
        decls[2].axes = axes(&[1, 2]);
        let (plan, mut decls, _) = planned(decls);
        let layout = Layout::new(&plan, &decls, Some(h_steps)).unwrap();
        assert_eq!(layout.states()[0].shape.strides, [2, 1]);
        let live = layout.live(0, 2).unwrap();
        assert_eq!(layout.view(live.term).unwrap(), View::Elements(4));
        let conv = layout.live(1, 0).unwrap().term;
        assert!(matches!(layout.view(conv).unwrap(), View::Skipped(_)));
        // Slot 2's last element, [2, 1, 1], is element 8 + 2 + 1 = 11: its unit's last 4 bytes.
        assert_eq!(layout.states()[0].shape.last_element(2), Some(11));
        layout.check_last_element(&live, 4).unwrap();
        let token = layout.token(2, 3, 7).unwrap();
        layout.check_last_element(&token, 4).unwrap();
        // A unit named by another index than its bytes' is refused.
        let misnamed = UnitRef { index: 1, ..live };
        assert!(matches!(
            layout.check_last_element(&misnamed, 4),
            Err(EngineError::Invariant(_))
        ));
        // A shape whose extents do not multiply to the unit's elements is refused.
        decls[0].axes = axes(&[2, 3]);
        let (plan, decls, _) = planned(decls);
        let layout = Layout::new(&plan, &decls, Some(h_steps)).unwrap();
        assert!(matches!(
            layout.view(live.term),
            Err(EngineError::Invariant(message)) if message.contains("[2, 3]")
        ));
    }
}
