//! KV blocks ([`KvSide`]): each paged side on the runtime's allocator (a [`BlockPool`] of
//! `KvRegions::block_count` blocks, every sequence's [`BlockTable`], a windowed side's a ring
//! of the window law's blocks), and what it leaves to the engine: which block and token a
//! position is, the window check before a full ring reuses its oldest block, the counters.
//!
//! Invariants:
//! - A block of a side is held by at most one sequence at a time (the pool), and a windowed
//!   side's sequence never holds more than its ring's `per_sequence` blocks (the table).
//! - `per_sequence` is the plan's own figure: the blocks the side gets in a plan of it alone at
//!   one sequence ([`window_per_sequence`]), not the window law restated here.
//! - Tokens are written in order: each in the sequence's newest block, or first in the next.
//! - A full ring reuses its oldest block only when that block's newest token is out of the
//!   window of the first token of the chunk being written (a chunked prefill attends to the
//!   window before the chunk while writing it). `BlockTable::append` reuses without asking, so
//!   this is checked before it; if the law's blocks did not suffice, the engine stops with
//!   [`EngineError::Invariant`] instead of dropping a token still attended to.
//! - Which block holds a position is this module's bookkeeping; where its bytes are is the
//!   layout's ([`crate::Layout::token`]).

use std::collections::{BTreeMap, VecDeque};

use metrale_circuit::alloc::{BlockPool, BlockTable};
use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl};
use metrale_circuit::inputs::{FormatChoice, WindowInputs};
use metrale_circuit::{KvInputs, KvRegions, StateInputs};

use crate::EngineError;

/// A windowed side's ring: the window and the blocks one sequence holds at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    /// The window, in tokens.
    pub window: u64,
    /// The window law's blocks per sequence.
    pub per_sequence: u64,
}

/// One paged KV side: its blocks and every sequence's table of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvSide {
    /// The side's state in the layout.
    pub state: usize,
    block_size: u64,
    pool: BlockPool,
    tables: BlockTable,
    ring: Option<Ring>,
    /// Per sequence, the blocks it started (a ring's reused ones too): where its newest block
    /// starts, and so its oldest, which the table does not say.
    started: BTreeMap<u64, u64>,
    /// Blocks taken from the pool.
    pub allocated: u64,
    /// Blocks a ring reused for a sequence's newer tokens.
    pub reused: u64,
    /// Blocks given back to the pool.
    pub freed: u64,
    /// The most blocks one sequence held at once.
    pub most_held: u64,
}

impl KvSide {
    /// Side `state` of `block_count` blocks of `block_size` tokens (both from the plan's
    /// `KvRegions`), every block free; `ring` for a windowed side.
    #[must_use]
    pub fn new(state: usize, block_size: u64, block_count: u64, ring: Option<Ring>) -> Self {
        Self {
            state,
            block_size,
            pool: BlockPool::new(block_count),
            tables: ring.map_or_else(BlockTable::new, |ring| BlockTable::ring(ring.per_sequence)),
            ring,
            started: BTreeMap::new(),
            allocated: 0,
            reused: 0,
            freed: 0,
            most_held: 0,
        }
    }

    /// Its ring, for a windowed side.
    #[must_use]
    pub fn ring(&self) -> Option<Ring> {
        self.ring
    }

    /// The tokens one sequence can hold when each of `sequences` holds its share of the
    /// blocks; `None` when no share binds (a ring that fits every sequence's window).
    #[must_use]
    pub fn tokens_per_sequence(&self, sequences: u64) -> Option<u64> {
        let share = self.pool.count().checked_div(sequences)?;
        match self.ring {
            Some(ring) if share >= ring.per_sequence => None,
            _ => Some(share.saturating_mul(self.block_size)),
        }
    }

    /// The block and the token in it that hold token `position` of the sequence in `slot`,
    /// written in a chunk whose first token is `chunk_start`: the sequence's newest block, or
    /// at a block's first token a new one (from the pool, or a full ring's oldest).
    ///
    /// # Errors
    /// [`EngineError::Pool`] when the pool has no free block; [`EngineError::Invariant`] when
    /// tokens are not written in order or a ring would reuse a block still in the window.
    pub fn block_for(
        &mut self,
        slot: u64,
        position: u64,
        chunk_start: u64,
    ) -> Result<(u64, u64), EngineError> {
        let out_of_order = || {
            EngineError::Invariant(format!(
                "token {position} of sequence slot {slot} is written out of order"
            ))
        };
        let token = position
            .checked_rem(self.block_size)
            .ok_or_else(|| EngineError::Invariant("a KV side of 0-token blocks".to_owned()))?;
        let started = self.started.get(&slot).copied().unwrap_or(0);
        // The sequence's block `position` falls in: its newest, or at token 0 the next.
        if position / self.block_size + u64::from(token > 0) != started {
            return Err(out_of_order());
        }
        if token > 0 {
            let newest = self.tables.blocks(slot).and_then(VecDeque::back);
            return newest.map(|&block| (block, token)).ok_or_else(out_of_order);
        }
        let held = self.held_by(slot) as u64;
        if let Some(ring) = self.ring
            && held >= ring.per_sequence
        {
            // Full: `append` will reuse the oldest block, the `held`-th newest started.
            let newest = (started - held) * self.block_size + (self.block_size - 1);
            if newest
                .checked_add(ring.window)
                .is_none_or(|reach| reach > chunk_start)
            {
                return Err(EngineError::Invariant(format!(
                    "sequence slot {slot} holds {} blocks of a {}-token window and needs \
                     another at token {position}: its oldest block ends at token {newest}, \
                     still in the window of the chunk from token {chunk_start}",
                    ring.per_sequence, ring.window
                )));
            }
        }
        let appended = self.tables.append(slot, &mut self.pool).map_err(|_| {
            EngineError::Pool(format!(
                "no free KV block for token {position} of sequence slot {slot}: all {} are held",
                self.pool.count()
            ))
        })?;
        if appended.reused {
            self.reused += 1;
        } else {
            self.allocated += 1;
        }
        self.started.insert(slot, started + 1);
        self.most_held = self.most_held.max(self.held_by(slot) as u64);
        Ok((appended.block, 0))
    }

    /// The blocks the sequence in `slot` holds.
    #[must_use]
    pub fn held_by(&self, slot: u64) -> usize {
        self.tables.blocks(slot).map_or(0, VecDeque::len)
    }

    /// Blocks held by any sequence.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.pool.held()
    }

    /// Gives every block of the sequence in `slot` back (none for a sequence that wrote no
    /// token here).
    ///
    /// # Errors
    /// [`EngineError::Pool`] when a block was not held (not for blocks this side gave).
    pub fn release(&mut self, slot: u64) -> Result<(), EngineError> {
        // `BlockTable::release` refuses a sequence that never started a block.
        if self.started.remove(&slot).is_some() {
            self.freed += self.tables.release(slot, &mut self.pool)?;
        }
        Ok(())
    }
}

/// The blocks the window law gives one sequence on windowed side `decl`, under the pool `kv`
/// (the plan's KV inputs for its section): the side planned alone at one sequence from an
/// unbounded pool, so the figure is the plan's, not restated.
///
/// # Errors
/// [`EngineError::Invariant`] for KV inputs without window inputs; [`EngineError::Plan`]
/// when that plan fails.
pub fn window_per_sequence(
    decl: &StateDecl,
    formats: &[(&str, FormatChoice<&str>)],
    kv: KvInputs,
) -> Result<u64, EngineError> {
    let window = kv.window.ok_or_else(|| {
        EngineError::Invariant(format!(
            "KV side `{}` keeps a window but the KV inputs have no window inputs",
            decl.id
        ))
    })?;
    let one = KvInputs {
        blocks: u64::MAX,
        window: Some(WindowInputs {
            sequences: 1,
            ..window
        }),
        ..kv
    };
    let inputs = StateInputs {
        formats,
        kv: Some(one),
        draft_kv: Some(one),
        ..StateInputs::EMPTY
    };
    let plan = DynamicPlan::new(std::slice::from_ref(decl), &inputs, 1)?;
    let term = plan.terms().first().ok_or_else(|| {
        EngineError::Invariant(format!("KV side `{}` has no term alone", decl.id))
    })?;
    Ok(KvRegions {
        blocks: term.region(),
    }
    .block_count())
}

#[cfg(test)]
mod tests {
    use metrale_circuit::dynamic::decl::StateFormat;
    use metrale_circuit::{StateDtype, StateKind};

    use super::*;

    #[test]
    fn full_sides_take_a_block_per_block_size_tokens() {
        let mut side = KvSide::new(0, 4, 3, None);
        assert_eq!(side.block_for(5, 0, 0).unwrap(), (0, 0));
        assert_eq!(side.block_for(5, 3, 0).unwrap(), (0, 3));
        assert_eq!(side.block_for(7, 0, 0).unwrap(), (1, 0));
        assert_eq!(side.block_for(5, 4, 4).unwrap(), (2, 0));
        assert_eq!(side.block_for(5, 6, 4).unwrap(), (2, 2));
        // Token 9 is in the sequence's block 2 (tokens 8..=11), never started; token 12
        // would start block 3 with block 2 missing.
        assert!(side.block_for(5, 9, 4).is_err());
        assert!(side.block_for(5, 12, 12).is_err());
        assert!(matches!(side.block_for(7, 4, 4), Err(EngineError::Pool(_))));
        assert_eq!((side.held_by(5), side.held()), (2, 3));
        side.release(5).unwrap();
        assert_eq!((side.held(), side.freed), (1, 2));
        assert_eq!(side.block_for(7, 4, 4).unwrap(), (0, 0));
        assert_eq!(side.tokens_per_sequence(2), Some(4));
    }

    #[test]
    fn a_windowed_side_reuses_its_own_oldest_block() {
        // A 5-token window in blocks of 4, written one token at a time: 3 blocks suffice.
        let ring = Ring {
            window: 5,
            per_sequence: 3,
        };
        let mut side = KvSide::new(0, 4, 10, Some(ring));
        for position in 0..12 {
            side.block_for(1, position, position).unwrap();
        }
        assert_eq!((side.held_by(1), side.allocated, side.reused), (3, 3, 0));
        // Token 12 needs a fourth block: block 0 (tokens 0..=3) is out of token 12's window.
        assert_eq!(side.block_for(1, 12, 12).unwrap(), (0, 0));
        assert_eq!((side.held_by(1), side.reused, side.most_held), (3, 1, 3));
        assert_eq!(side.tokens_per_sequence(3), None);
        assert_eq!(side.tokens_per_sequence(4), Some(8));
        // With a window of 9, 3 blocks are too few: at token 12, in a chunk from token 4,
        // block 0's token 3 is still in the window of token 4 (tokens -4..=4).
        let tight = Ring {
            window: 9,
            per_sequence: 3,
        };
        let mut side = KvSide::new(0, 4, 10, Some(tight));
        for position in 0..12 {
            side.block_for(1, position, 0).unwrap();
        }
        assert!(matches!(
            side.block_for(1, 12, 4),
            Err(EngineError::Invariant(_))
        ));
    }

    #[test]
    fn the_window_law_is_asked_of_the_plan() {
        let decl = StateDecl::new(
            "l0.swa.k",
            StateKind::PagedKv,
            StateFormat::Fixed(StateDtype::Fp8),
            32,
        )
        .with_window(16);
        let kv = KvInputs {
            blocks: 100,
            block_size: 16,
            window: Some(WindowInputs {
                sequences: 4,
                chunk_tokens: 32,
                max_tokens: 512,
            }),
        };
        // ceil(min(15 + 32, 512) / 16) + 1 = 3 + 1.
        assert_eq!(window_per_sequence(&decl, &[], kv).unwrap(), 4);
        assert!(window_per_sequence(&decl, &[], KvInputs::blocks(1, 16)).is_err());
    }
}
