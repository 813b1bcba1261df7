//! The engine ([`Engine`]): the plan's [`Layout`] and each term's [`View`] (its units checked
//! against their shape once, at setup), one buffer per memory space ([`Memory`]), the
//! [`Ledger`] of what every unit holds, and the pools (the runtime allocator's sequence slots
//! and prefix-snapshot slots, a [`KvSide`] per paged side), with the operations a serving loop
//! runs on them: claim and release a sequence, prefill and decode (KV blocks, the rollback
//! ring, the padding dummy), take and restore a prefix snapshot, and verify with rollback.
//!
//! Invariants:
//! - Every byte the engine writes is a [`Tag`] stamped into a unit or a unit copied over
//!   another of its size, by two private functions, each unit given by an accessor of
//!   [`Layout`]; the ledger records both, so it always knows what each unit holds.
//! - Every unit stamped (the format's too) of a term addressed by element has its last element
//!   where its shape's strides put it ([`Layout::check_last_element`]), or the run stops.
//! - Verify slot `v` is sequence slot `v`: both count the sequences with the padding dummy
//!   last (`[verify] h_steps` has one entry per slot).
//! - A sequence holds at most [`Engine::capacity`] tokens: the context, or less when the KV
//!   blocks shared out among every sequence give each fewer.

use std::collections::BTreeMap;
use std::rc::Rc;

use metrale_circuit::dynamic::decl::{Reach, Section};
use metrale_circuit::{Space, StateKind};

use crate::kv::{KvSide, Ring, window_per_sequence};
use crate::layout::{Group, Layout, UnitRef, View};
use crate::memory::Memory;
use crate::tags::{Ledger, Tag, TagCheck, check};
use crate::{EngineError, Setup};
use metrale_circuit::alloc::{IndexPool, SlotPool};

/// How many of each operation a run made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Operations {
    /// Units stamped by the format of the arenas (every unit of every term).
    pub formatted: u64,
    /// Units stamped after the format.
    pub writes: u64,
    /// Units copied over others (checkpoints, rollbacks, snapshots, restores, ring copies).
    pub copies: u64,
    /// Sequence slots claimed.
    pub claimed: u64,
    /// Sequence slots released.
    pub released: u64,
    /// Claims the slot pool refused while every slot but the dummy was held.
    pub refused: u64,
    /// Batches in which the padding dummy's state was written.
    pub padding_writes: u64,
    /// Prefills.
    pub prefills: u64,
    /// Decode steps (batches).
    pub decode_steps: u64,
    /// Tokens written to the KV sides (each position once, whatever the number of sides).
    pub tokens: u64,
    /// KV blocks taken from the sides' pools.
    pub blocks_allocated: u64,
    /// KV blocks a windowed side's ring reused.
    pub blocks_reused: u64,
    /// KV blocks given back.
    pub blocks_freed: u64,
    /// Recurrent states copied into the decode-rollback ring.
    pub ring_copies: u64,
    /// Prefix snapshots taken.
    pub prefix_snapshots: u64,
    /// Prefix snapshots restored into a new sequence.
    pub prefix_restores: u64,
    /// Verifies run.
    pub verifies: u64,
    /// Verified rows accepted.
    pub accepted_rows: u64,
    /// Verifies that accepted nothing: the live state rolled back to the checkpoint.
    pub rollbacks_to_checkpoint: u64,
    /// Verifies that accepted rows: the live state set to the last accepted row's
    /// intermediate.
    pub rollbacks_to_row: u64,
}

/// A prefix snapshot taken: its slot and the tokens of the sequence at the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// The prefix-snapshot slot.
    pub slot: u64,
    /// The sequence's tokens when it was taken.
    pub tokens: u64,
}

/// What a run ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    /// The operations made.
    pub operations: Operations,
    /// The final read-back of every unit.
    pub tags: TagCheck,
}

/// A sequence being served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sequence {
    tokens: u64,
    ring_next: u64,
}

/// The states of each role, by their index in the layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Roles {
    recurrent: Vec<usize>,
    /// Prefix snapshots, each with the recurrent state it copies (`None`: a hidden row).
    prefix: Vec<(usize, Option<usize>)>,
    /// Ring snapshots, each with the recurrent state it copies.
    ring: Vec<(usize, Option<usize>)>,
    /// Carry stashes and carry tables: one unit per verify slot.
    carry: Vec<usize>,
    verify_table: Vec<usize>,
    accept_stash: Vec<usize>,
    capture: Vec<usize>,
    lookup: Vec<usize>,
    tree: Vec<usize>,
    drafts: Vec<usize>,
}

impl Roles {
    fn of(layout: &Layout) -> Self {
        let mut roles = Roles::default();
        let states = layout.states();
        let source = |of: &Option<String>| {
            of.as_ref().and_then(|of| {
                states
                    .iter()
                    .position(|s| &s.id == of && matches!(s.group, Group::Recurrent { .. }))
            })
        };
        for (i, state) in states.iter().enumerate() {
            match state.kind {
                StateKind::Recurrent => roles.recurrent.push(i),
                StateKind::PagedKv => {}
                StateKind::PrefixSnapshot => roles.prefix.push((i, source(&state.of))),
                StateKind::RingSnapshot => roles.ring.push((i, source(&state.of))),
                StateKind::CarryStash | StateKind::CarryTable => roles.carry.push(i),
                StateKind::VerifyTable => roles.verify_table.push(i),
                StateKind::AcceptStash => roles.accept_stash.push(i),
                StateKind::HiddenCapture => roles.capture.push(i),
                StateKind::PromptLookupIndex => roles.lookup.push(i),
                StateKind::TokenTreeMask => roles.tree.push(i),
                StateKind::DraftTokens => roles.drafts.push(i),
            }
        }
        roles
    }
}

/// The engine: memory laid out by the plan, the ledger, the pools.
#[derive(Debug)]
pub struct Engine {
    layout: Layout,
    /// Per term, how its units are checked against their shape.
    views: Vec<View>,
    memory: Memory,
    ledger: Ledger,
    roles: Rc<Roles>,
    slots: SlotPool,
    prefix_slots: IndexPool,
    kv: Vec<KvSide>,
    sequences: BTreeMap<u64, Sequence>,
    chunk: u64,
    capacity: u64,
    capture_next: u64,
    ops: Operations,
}

impl Engine {
    /// An engine over `layout` (the plan of `setup`, possibly altered to inject a fault): its
    /// buffers allocated, every pool full, nothing written yet.
    ///
    /// # Errors
    /// [`EngineError::Memory`] when a buffer cannot be made; [`EngineError::Invariant`] when a
    /// term's shape disagrees with its unit ([`Layout::view`]); [`EngineError::Plan`] or
    /// [`EngineError::Invariant`] when a windowed side's per-sequence blocks cannot be asked
    /// of the plan.
    pub fn new(setup: &Setup, layout: Layout) -> Result<Self, EngineError> {
        let memory = Memory::new(
            layout.arena_bytes(Space::Device),
            layout.arena_bytes(Space::Host),
            layout.align(),
        )?;
        let views = (0..layout.term_count())
            .map(|term| layout.view(term))
            .collect::<Result<_, _>>()?;
        let formats = setup.formats();
        let mut kv = Vec::new();
        for (state, entry) in layout.states().iter().enumerate() {
            if !matches!(entry.group, Group::Kv { .. }) {
                continue;
            }
            let ring = match entry.reach {
                Some(Reach::Chunk(_)) => {
                    // Its script keeps a window's ring; a chunk frees whole chunks instead.
                    return Err(EngineError::Invariant(format!(
                        "`{}` keeps an attention chunk (chunked local attention), which the \
                         engine's script does not run",
                        entry.id
                    )));
                }
                Some(Reach::Fixed(_)) => {
                    // Its script decodes one stream; a cross-attention side is written once
                    // from an encoder the engine does not run.
                    return Err(EngineError::Invariant(format!(
                        "`{}` holds a fixed count of encoder tokens (cross-attention), which \
                         the engine's script does not run",
                        entry.id
                    )));
                }
                Some(Reach::Window(window)) => {
                    let decl = setup
                        .decls
                        .iter()
                        .find(|d| d.id == entry.id)
                        .ok_or_else(|| {
                            EngineError::Invariant(format!("no declaration for `{}`", entry.id))
                        })?;
                    let pool = match entry.section {
                        Section::Main => setup.counts.kv,
                        Section::Draft => setup.counts.draft_kv,
                    }
                    .ok_or_else(|| {
                        EngineError::Invariant(format!("no KV inputs for `{}`", entry.id))
                    })?;
                    Some(Ring {
                        window,
                        per_sequence: window_per_sequence(decl, &formats, pool)?,
                    })
                }
                None => None,
            };
            kv.push(KvSide::new(
                state,
                layout.block_size(state)?,
                layout.block_count(state)?,
                ring,
            ));
        }
        let sequences = setup.sequences();
        let capacity = kv
            .iter()
            .filter_map(|side| side.tokens_per_sequence(sequences))
            .fold(setup.context, u64::min);
        let chunk = setup
            .profile
            .kv
            .and_then(|kv| kv.chunk_tokens)
            .unwrap_or(setup.context)
            .max(1);
        Ok(Self {
            roles: Rc::new(Roles::of(&layout)),
            memory,
            ledger: Ledger::default(),
            slots: SlotPool::new(setup.counts.slots),
            prefix_slots: IndexPool::new(
                "prefix-snapshot slot",
                setup.counts.caches.prefix_snapshot_slots,
            ),
            kv,
            views,
            sequences: BTreeMap::new(),
            chunk,
            capacity,
            capture_next: 0,
            ops: Operations::default(),
            layout,
        })
    }

    /// The layout the engine addresses through.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The most tokens a sequence holds.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The KV sides.
    #[must_use]
    pub fn kv_sides(&self) -> &[KvSide] {
        &self.kv
    }

    /// How each term's units are checked against their shape.
    #[must_use]
    pub fn views(&self) -> &[View] {
        &self.views
    }

    /// The operations so far, the KV sides' block counts summed in.
    #[must_use]
    pub fn operations(&self) -> Operations {
        let mut ops = self.ops;
        for side in &self.kv {
            ops.blocks_allocated += side.allocated;
            ops.blocks_reused += side.reused;
            ops.blocks_freed += side.freed;
        }
        ops
    }

    /// Stamps every unit of every term with its first tag, the way an engine clears its pools
    /// before serving; from here on the ledger knows every unit.
    ///
    /// # Errors
    /// [`EngineError::Memory`] for a unit outside its arena, [`EngineError::Invariant`] for one
    /// not where its shape's strides put it.
    pub fn format(&mut self) -> Result<(), EngineError> {
        for term in 0..self.layout.term_count() {
            let space = self.layout.space(term);
            let mut units = 0;
            for unit in self.layout.units(term) {
                let tag = Tag {
                    term: u32::try_from(term).map_err(|_| {
                        EngineError::Invariant(format!("term {term} does not fit a tag"))
                    })?,
                    unit: unit.index,
                    write: 0,
                };
                self.check_shape(&unit)?;
                tag.fill(self.memory.buffer_mut(space).get_mut(&unit.region)?);
                units += 1;
            }
            self.ledger.add_term(units);
            self.ops.formatted += units as u64;
        }
        Ok(())
    }

    /// Writes `unit` with its next tag, once its shape's strides agree on where it is.
    fn stamp(&mut self, unit: UnitRef) -> Result<(), EngineError> {
        self.check_shape(&unit)?;
        let tag = self.ledger.stamp(&unit)?;
        let space = self.layout.space(unit.term);
        tag.fill(self.memory.buffer_mut(space).get_mut(&unit.region)?);
        self.ops.writes += 1;
        Ok(())
    }

    /// Checks that a unit about to be written is where its shape's strides put it.
    fn check_shape(&self, unit: &UnitRef) -> Result<(), EngineError> {
        match self.views.get(unit.term) {
            Some(View::Elements(element)) => self.layout.check_last_element(unit, *element),
            _ => Ok(()),
        }
    }

    /// Copies unit `from` over unit `to` (the same size).
    fn copy(&mut self, from: UnitRef, to: UnitRef) -> Result<(), EngineError> {
        self.memory.copy(
            self.layout.space(from.term),
            &from.region,
            self.layout.space(to.term),
            &to.region,
        )?;
        self.ledger.copy(&from, &to)?;
        self.ops.copies += 1;
        Ok(())
    }

    /// A slot for a new sequence, its recurrent states and its prompt-lookup table written
    /// fresh; `Ok(None)` when every slot but the padding dummy is held.
    ///
    /// # Errors
    /// [`EngineError::Memory`] for a unit outside its arena.
    pub fn claim(&mut self) -> Result<Option<u64>, EngineError> {
        let Ok(slot) = self.slots.claim() else {
            self.ops.refused += 1;
            return Ok(None);
        };
        let roles = Rc::clone(&self.roles);
        for &state in &roles.recurrent {
            self.stamp(self.layout.live(state, slot)?)?;
        }
        self.stamp_lookup(slot)?;
        self.sequences.insert(slot, Sequence::default());
        self.ops.claimed += 1;
        Ok(Some(slot))
    }

    /// Gives the sequence in `slot` up: its KV blocks back to their free lists, its slot back
    /// to the pool.
    ///
    /// # Errors
    /// [`EngineError::Pool`] for a slot no sequence holds.
    pub fn release(&mut self, slot: u64) -> Result<(), EngineError> {
        self.sequences
            .remove(&slot)
            .ok_or_else(|| not_served(slot))?;
        for side in &mut self.kv {
            side.release(slot)?;
        }
        self.slots.release(slot)?;
        self.ops.released += 1;
        Ok(())
    }

    /// Prefills `tokens` prompt tokens of the sequence in `slot` (at most to its capacity) in
    /// chunks of the profile's `chunk_tokens`: KV for every token, each token's hidden row
    /// captured, then the recurrent states after the prompt and its prompt-lookup table.
    ///
    /// # Errors
    /// [`EngineError::Memory`] for a unit outside its arena, and the KV sides' errors
    /// ([`KvSide::block_for`]).
    pub fn prefill(&mut self, slot: u64, tokens: u64) -> Result<(), EngineError> {
        self.append(slot, tokens, self.chunk, true)?;
        let roles = Rc::clone(&self.roles);
        for &state in &roles.recurrent {
            self.stamp(self.layout.live(state, slot)?)?;
        }
        self.stamp_lookup(slot)?;
        self.ops.prefills += 1;
        Ok(())
    }

    /// One decode step of every sequence in `batch`: a token of KV each, the recurrent states
    /// after it, a copy of each into the sequence's next ring slot; and, as a batched kernel
    /// pads its batch, the padding dummy's states written too. An empty batch is no step.
    ///
    /// # Errors
    /// As [`Engine::prefill`].
    pub fn decode(&mut self, batch: &[u64]) -> Result<(), EngineError> {
        if batch.is_empty() {
            return Ok(());
        }
        let roles = Rc::clone(&self.roles);
        for &slot in batch {
            self.append(slot, 1, 1, false)?;
            for &state in &roles.recurrent {
                self.stamp(self.layout.live(state, slot)?)?;
            }
            let mut ring_slot = self.sequence(slot)?.ring_next;
            for &(state, source) in &roles.ring {
                let target = if let Some(unit) = self.layout.ring(state, slot, ring_slot)? {
                    Some(unit)
                } else {
                    // Past the last ring slot: the ring wraps.
                    ring_slot = 0;
                    self.layout.ring(state, slot, 0)?
                };
                let Some(target) = target else {
                    continue;
                };
                match source {
                    Some(source) => {
                        self.copy(self.layout.live(source, slot)?, target)?;
                        self.ops.ring_copies += 1;
                    }
                    None => self.stamp(target)?,
                }
            }
            self.sequence_mut(slot)?.ring_next = ring_slot + 1;
        }
        if let Some(dummy) = self.slots.dummy() {
            for &state in &roles.recurrent {
                self.stamp(self.layout.live(state, dummy)?)?;
            }
            self.ops.padding_writes += 1;
        }
        self.ops.decode_steps += 1;
        Ok(())
    }

    /// Takes a prefix snapshot of the sequence in `slot`: claims a prefix-snapshot slot and
    /// copies each recurrent state that has a prefix snapshot into it (a snapshot of the last
    /// hidden row is written); `Ok(None)` when the plan has no prefix snapshot or every slot is
    /// held.
    ///
    /// # Errors
    /// [`EngineError::Memory`] for a unit outside its arena, [`EngineError::Invariant`] for a
    /// snapshot whose units are not the size of the state's.
    pub fn snapshot_prefix(&mut self, slot: u64) -> Result<Option<Snapshot>, EngineError> {
        let tokens = self.sequence(slot)?.tokens;
        if self.roles.prefix.is_empty() {
            return Ok(None);
        }
        let Ok(prefix) = self.prefix_slots.claim() else {
            return Ok(None);
        };
        let roles = Rc::clone(&self.roles);
        for &(state, source) in &roles.prefix {
            let target = self.prefix_unit(state, prefix)?;
            match source {
                Some(source) => self.copy(self.layout.live(source, slot)?, target)?,
                None => self.stamp(target)?,
            }
        }
        self.ops.prefix_snapshots += 1;
        Ok(Some(Snapshot {
            slot: prefix,
            tokens,
        }))
    }

    /// Restores `snapshot` into the new sequence in `slot`: each snapshotted recurrent state
    /// copied into its live state; the prefix's KV, which this engine does not share between
    /// sequences, written again.
    ///
    /// # Errors
    /// As [`Engine::prefill`].
    pub fn restore_prefix(&mut self, snapshot: &Snapshot, slot: u64) -> Result<(), EngineError> {
        if self.sequence(slot)?.tokens > 0 {
            return Err(EngineError::Invariant(format!(
                "a prefix is restored into a new sequence, and slot {slot}'s has tokens"
            )));
        }
        let roles = Rc::clone(&self.roles);
        for &(state, source) in &roles.prefix {
            if let Some(source) = source {
                let from = self.prefix_unit(state, snapshot.slot)?;
                self.copy(from, self.layout.live(source, slot)?)?;
            }
        }
        self.append(slot, snapshot.tokens, self.chunk, false)?;
        self.ops.prefix_restores += 1;
        Ok(())
    }

    /// Gives a prefix snapshot's slot back.
    ///
    /// # Errors
    /// [`EngineError::Pool`] for a slot not held.
    pub fn release_prefix(&mut self, snapshot: &Snapshot) -> Result<(), EngineError> {
        Ok(self.prefix_slots.release(snapshot.slot)?)
    }

    /// One verify of the sequence in `slot` (verify slot `slot`) that accepts its first
    /// `accepted` rows: the drafts and the token tree's mask written; each recurrent state
    /// copied into its checkpoint (the state before the verify); the verify tables and the
    /// carry stash written; every row's intermediate written, and the live state as the pass
    /// leaves it; then the rollback: the live state set to the last accepted row's
    /// intermediate, or to the checkpoint when nothing is accepted; the accepted rows' hidden
    /// rows stashed and their tokens' KV written. Without verify inputs, nothing.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] when `accepted` is more than the slot's rows; as
    /// [`Engine::prefill`].
    pub fn verify(&mut self, slot: u64, accepted: u64) -> Result<(), EngineError> {
        let Some(h_steps) = self.layout.h_steps() else {
            return Ok(());
        };
        self.sequence(slot)?;
        let no_slot = || EngineError::Address(format!("no verify slot {slot}"));
        let rows = h_steps.rows_of(slot).ok_or_else(no_slot)?;
        let first_row = h_steps.rows_before(slot).ok_or_else(no_slot)?;
        if accepted > rows {
            return Err(EngineError::Invariant(format!(
                "a verify of {rows} rows cannot accept {accepted}"
            )));
        }
        let roles = Rc::clone(&self.roles);
        // The proposals.
        for &state in &roles.drafts {
            for position in 0.. {
                let Some(unit) = self.layout.draft(state, slot, position)? else {
                    break;
                };
                self.stamp(unit)?;
            }
        }
        for &state in &roles.tree {
            for from in 0.. {
                if self.layout.tree_cell(state, slot, from, 0)?.is_none() {
                    break;
                }
                for to in 0.. {
                    let Some(unit) = self.layout.tree_cell(state, slot, from, to)? else {
                        break;
                    };
                    self.stamp(unit)?;
                }
            }
        }
        // The state before the verify.
        for &state in &roles.recurrent {
            if let Some(checkpoint) = self.layout.checkpoint(state, slot)? {
                self.copy(self.layout.live(state, slot)?, checkpoint)?;
            }
        }
        // The carried-state verify's stash and table row, the verify tables' rows.
        for &state in &roles.carry {
            if let Some(unit) = self.layout.cache_unit(state, slot)? {
                self.stamp(unit)?;
            }
        }
        self.stamp_rows(&roles.verify_table, first_row, rows)?;
        // The pass over the rows: each row's intermediate, and the state the pass leaves.
        for &state in &roles.recurrent {
            for row in 0.. {
                let Some(unit) = self.layout.step(state, slot, row)? else {
                    break;
                };
                self.stamp(unit)?;
            }
            self.stamp(self.layout.live(state, slot)?)?;
        }
        // Accept a prefix, roll the rest back.
        for &state in &roles.recurrent {
            let live = self.layout.live(state, slot)?;
            let source = match accepted.checked_sub(1) {
                None => self.layout.checkpoint(state, slot)?,
                Some(row) => self.layout.step(state, slot, row)?,
            }
            .ok_or_else(|| {
                EngineError::Address(format!(
                    "`{}` has no intermediate of row {accepted} of verify slot {slot}",
                    self.layout.states()[state].id
                ))
            })?;
            self.copy(source, live)?;
        }
        if !roles.recurrent.is_empty() {
            if accepted == 0 {
                self.ops.rollbacks_to_checkpoint += 1;
            } else {
                self.ops.rollbacks_to_row += 1;
            }
        }
        self.stamp_rows(&roles.accept_stash, first_row, accepted)?;
        self.append(slot, accepted, accepted.max(1), false)?;
        self.ops.verifies += 1;
        self.ops.accepted_rows += accepted;
        Ok(())
    }

    /// Ends the run: every sequence, block and snapshot slot must be back in its pool, and
    /// every unit of every term is read back.
    ///
    /// # Errors
    /// [`EngineError::Pool`] for anything still held; as [`check`].
    pub fn finish(self) -> Result<Finish, EngineError> {
        if let Some(slot) = self.sequences.keys().next() {
            return Err(EngineError::Pool(format!(
                "sequence slot {slot} is still held at the end"
            )));
        }
        for side in &self.kv {
            if side.held() > 0 {
                return Err(EngineError::Pool(format!(
                    "`{}` still has {} KV blocks held at the end",
                    self.layout.states()[side.state].id,
                    side.held()
                )));
            }
        }
        if self.prefix_slots.held() > 0 {
            return Err(EngineError::Pool(format!(
                "{} prefix-snapshot slots are still held at the end",
                self.prefix_slots.held()
            )));
        }
        let tags = check(&self.layout, &self.memory, &self.ledger)?;
        Ok(Finish {
            operations: self.operations(),
            tags,
        })
    }

    /// Appends up to `tokens` tokens to the sequence in `slot` (never past its capacity) in
    /// chunks of `chunk`: every KV side's unit of each token, and with `capture` each token's
    /// hidden row. Returns the tokens written.
    fn append(
        &mut self,
        slot: u64,
        tokens: u64,
        chunk: u64,
        capture: bool,
    ) -> Result<u64, EngineError> {
        let start = self.sequence(slot)?.tokens;
        let end = start + tokens.min(self.capacity.saturating_sub(start));
        let roles = Rc::clone(&self.roles);
        let mut chunk_start = start;
        while chunk_start < end {
            let chunk_end = end.min(chunk_start.saturating_add(chunk.max(1)));
            for position in chunk_start..chunk_end {
                for side in 0..self.kv.len() {
                    let state = self.kv[side].state;
                    let (block, token) = self.kv[side].block_for(slot, position, chunk_start)?;
                    self.stamp(self.layout.token(state, block, token)?)?;
                }
                if capture {
                    for &state in &roles.capture {
                        let next = self.layout.cache_unit(state, self.capture_next)?;
                        let unit = if next.is_some() {
                            next
                        } else {
                            // Past the last row: the capture wraps.
                            self.capture_next = 0;
                            self.layout.cache_unit(state, 0)?
                        };
                        if let Some(unit) = unit {
                            self.stamp(unit)?;
                        }
                    }
                    self.capture_next += 1;
                }
            }
            chunk_start = chunk_end;
        }
        self.sequence_mut(slot)?.tokens = end;
        self.ops.tokens += end - start;
        Ok(end - start)
    }

    /// Stamps the prompt-lookup table of the sequence in `slot` (the dummy has none).
    fn stamp_lookup(&mut self, slot: u64) -> Result<(), EngineError> {
        let roles = Rc::clone(&self.roles);
        for &state in &roles.lookup {
            if let Some(unit) = self.layout.lookup_table(state, slot)? {
                self.stamp(unit)?;
            }
        }
        Ok(())
    }

    /// Stamps rows `first..first + count` of each flat cache in `states`.
    fn stamp_rows(&mut self, states: &[usize], first: u64, count: u64) -> Result<(), EngineError> {
        for &state in states {
            for row in first..first.saturating_add(count) {
                let unit = self.layout.cache_unit(state, row)?.ok_or_else(|| {
                    EngineError::Address(format!(
                        "`{}` has no row {row}",
                        self.layout.states()[state].id
                    ))
                })?;
                self.stamp(unit)?;
            }
        }
        Ok(())
    }

    /// Prefix-snapshot slot `slot` of snapshot state `state`.
    fn prefix_unit(&self, state: usize, slot: u64) -> Result<UnitRef, EngineError> {
        self.layout.cache_unit(state, slot)?.ok_or_else(|| {
            EngineError::Address(format!(
                "`{}` has no prefix-snapshot slot {slot}",
                self.layout.states()[state].id
            ))
        })
    }

    fn sequence(&self, slot: u64) -> Result<&Sequence, EngineError> {
        self.sequences.get(&slot).ok_or_else(|| not_served(slot))
    }

    fn sequence_mut(&mut self, slot: u64) -> Result<&mut Sequence, EngineError> {
        self.sequences
            .get_mut(&slot)
            .ok_or_else(|| not_served(slot))
    }
}

fn not_served(slot: u64) -> EngineError {
    EngineError::Pool(format!("sequence slot {slot} serves no sequence"))
}
