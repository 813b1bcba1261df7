//! Handing out the units a plan sized, at run time: sequence and verify slots that never give
//! out the padding dummy ([`SlotPool`]), any numbered places (ring and prefix-snapshot slots,
//! [`IndexPool`]), KV blocks with reference counts so sequences can share a prefix's blocks
//! ([`BlockPool`]), and each sequence's block table on one KV side, a windowed side's kept as a
//! ring of the window law's blocks ([`BlockTable`]). It works from the counts of a generated
//! or dynamic plan (`StateInputs::slots`, `KvRegions::block_count`) and needs nothing else.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - A place is free or held, never both; a block is free (0 references) or held by its
//!   reference count. Every failure (nothing free, a double release, an index out of range,
//!   the dummy) is an [`AllocError`], never a panic.
//! - Claims take the lowest free index, so a run is deterministic and a place released is the
//!   next one handed out.
//! - A ring never holds more than its per-sequence blocks: at the limit, appending reuses the
//!   sequence's oldest block (whose tokens the caller knows have left the window).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Why a unit could not be claimed or given back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocError {
    /// Every place of `what` is held.
    Exhausted {
        /// What ran out ("KV block").
        what: &'static str,
        /// How many there are.
        count: u64,
    },
    /// An index past the places of `what`.
    OutOfRange {
        /// What it indexes.
        what: &'static str,
        /// The index.
        index: u64,
        /// How many there are.
        count: u64,
    },
    /// A place given back, or shared, that is not held.
    NotHeld {
        /// What it is.
        what: &'static str,
        /// The index.
        index: u64,
    },
    /// The padding dummy slot, which is never handed out.
    Dummy {
        /// Its index (the last slot).
        slot: u64,
    },
    /// A block's reference count would pass `u32::MAX`.
    TooShared {
        /// The block.
        block: u64,
    },
    /// A sequence that holds no blocks of this side.
    UnknownSequence {
        /// The sequence.
        sequence: u64,
    },
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::Exhausted { what, count } => {
                write!(f, "every {what} is held (there are {count})")
            }
            AllocError::OutOfRange { what, index, count } => {
                write!(f, "{what} {index} is out of range: there are {count}")
            }
            AllocError::NotHeld { what, index } => write!(f, "{what} {index} is not held"),
            AllocError::Dummy { slot } => write!(
                f,
                "slot {slot} is the padding dummy: it is never handed out, so never released"
            ),
            AllocError::TooShared { block } => {
                write!(f, "KV block {block} has u32::MAX references already")
            }
            AllocError::UnknownSequence { sequence } => {
                write!(f, "sequence {sequence} holds no block of this side")
            }
        }
    }
}

impl std::error::Error for AllocError {}

/// Each index of `0..count`, free or held: ring slots, prefix-snapshot slots, anything
/// numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexPool {
    what: &'static str,
    count: u64,
    free: BTreeSet<u64>,
}

impl IndexPool {
    /// `count` free places of `what` (named in errors: "ring slot").
    #[must_use]
    pub fn new(what: &'static str, count: u64) -> Self {
        Self {
            what,
            count,
            free: (0..count).collect(),
        }
    }

    /// The lowest free index, now held.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when every index is held.
    pub fn claim(&mut self) -> Result<u64, AllocError> {
        self.free.pop_first().ok_or(AllocError::Exhausted {
            what: self.what,
            count: self.count,
        })
    }

    /// Gives `index` back.
    ///
    /// # Errors
    /// [`AllocError::OutOfRange`] or [`AllocError::NotHeld`].
    pub fn release(&mut self, index: u64) -> Result<(), AllocError> {
        if index >= self.count {
            return Err(AllocError::OutOfRange {
                what: self.what,
                index,
                count: self.count,
            });
        }
        if self.free.insert(index) {
            Ok(())
        } else {
            Err(AllocError::NotHeld {
                what: self.what,
                index,
            })
        }
    }

    /// Whether `index` is held.
    #[must_use]
    pub fn is_held(&self, index: u64) -> bool {
        index < self.count && !self.free.contains(&index)
    }

    /// How many places there are.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// How many are held.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.count - self.free.len() as u64
    }
}

/// Sequence (or verify) slots: `slots` of them as the plan inputs count them, the last the
/// padding dummy batched kernels may write into, which is never handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPool {
    pool: IndexPool,
    dummy: Option<u64>,
}

impl SlotPool {
    /// `slots` slots, the dummy included (`StateInputs::slots`, or a verify pool's count).
    #[must_use]
    pub fn new(slots: u64) -> Self {
        let dummy = slots.checked_sub(1);
        Self {
            pool: IndexPool::new("slot", dummy.unwrap_or(0)),
            dummy,
        }
    }

    /// The padding dummy's slot (`StateInputs::dummy_slot`); `None` without slots.
    #[must_use]
    pub fn dummy(&self) -> Option<u64> {
        self.dummy
    }

    /// A free slot for a new sequence.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when every slot but the dummy is held.
    pub fn claim(&mut self) -> Result<u64, AllocError> {
        self.pool.claim()
    }

    /// Gives a sequence's slot back.
    ///
    /// # Errors
    /// [`AllocError::Dummy`] for the dummy; [`AllocError::OutOfRange`] or
    /// [`AllocError::NotHeld`] otherwise.
    pub fn release(&mut self, slot: u64) -> Result<(), AllocError> {
        if Some(slot) == self.dummy {
            return Err(AllocError::Dummy { slot });
        }
        self.pool.release(slot)
    }

    /// Slots held by sequences.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.pool.held()
    }
}

/// The blocks of one KV side (`KvRegions::block_count`), each free or held by a reference
/// count: a prefix's blocks can be shared by the sequences that start with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPool {
    refs: Vec<u32>,
    free: BTreeSet<u64>,
}

impl BlockPool {
    /// `blocks` free blocks.
    #[must_use]
    pub fn new(blocks: u64) -> Self {
        Self {
            refs: (0..blocks).map(|_| 0).collect(),
            free: (0..blocks).collect(),
        }
    }

    /// The lowest free block, now held once.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when none is free.
    pub fn allocate(&mut self) -> Result<u64, AllocError> {
        let block = self.free.pop_first().ok_or(AllocError::Exhausted {
            what: "KV block",
            count: self.refs.len() as u64,
        })?;
        if let Some(refs) = self.slot(block) {
            *refs = 1;
        }
        Ok(block)
    }

    /// One more holder of held block `block` (a sequence sharing a prefix's block).
    ///
    /// # Errors
    /// [`AllocError::OutOfRange`], [`AllocError::NotHeld`] for a free block,
    /// [`AllocError::TooShared`] past `u32::MAX` holders.
    pub fn share(&mut self, block: u64) -> Result<(), AllocError> {
        let refs = self.held_refs(block)?;
        *refs = refs.checked_add(1).ok_or(AllocError::TooShared { block })?;
        Ok(())
    }

    /// One holder fewer of `block`; it is free again when none is left. Returns whether it
    /// is.
    ///
    /// # Errors
    /// [`AllocError::OutOfRange`], [`AllocError::NotHeld`] for a free block.
    pub fn free(&mut self, block: u64) -> Result<bool, AllocError> {
        let refs = self.held_refs(block)?;
        *refs -= 1;
        let freed = *refs == 0;
        if freed {
            self.free.insert(block);
        }
        Ok(freed)
    }

    /// How many hold `block` (0: free); `None` out of range.
    #[must_use]
    pub fn refs(&self, block: u64) -> Option<u32> {
        usize::try_from(block)
            .ok()
            .and_then(|b| self.refs.get(b))
            .copied()
    }

    /// How many blocks are free.
    #[must_use]
    pub fn free_count(&self) -> u64 {
        self.free.len() as u64
    }

    /// How many blocks the pool has.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.refs.len() as u64
    }

    /// How many blocks are held (by one sequence or more).
    #[must_use]
    pub fn held(&self) -> u64 {
        self.count() - self.free_count()
    }

    /// The reference count of a held block.
    fn held_refs(&mut self, block: u64) -> Result<&mut u32, AllocError> {
        let count = self.refs.len() as u64;
        match self.slot(block) {
            None => Err(AllocError::OutOfRange {
                what: "KV block",
                index: block,
                count,
            }),
            Some(0) => Err(AllocError::NotHeld {
                what: "KV block",
                index: block,
            }),
            Some(refs) => Ok(refs),
        }
    }

    fn slot(&mut self, block: u64) -> Option<&mut u32> {
        usize::try_from(block)
            .ok()
            .and_then(|b| self.refs.get_mut(b))
    }
}

/// A block a sequence appended: the block, and the oldest block a ring gave up for it (the
/// same block, reused, when the ring was full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The block that now holds the sequence's next tokens.
    pub block: u64,
    /// Whether it is the sequence's oldest block, reused by a full ring.
    pub reused: bool,
}

/// Every sequence's blocks on one KV side, in token order; a windowed side's a ring of at most
/// `per_sequence` blocks (the window law's, from a plan of the side at one sequence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockTable {
    ring: Option<u64>,
    tables: BTreeMap<u64, VecDeque<u64>>,
}

impl BlockTable {
    /// The tables of a side that keeps every token.
    #[must_use]
    pub fn new() -> Self {
        Self {
            ring: None,
            tables: BTreeMap::new(),
        }
    }

    /// The tables of a windowed side: a sequence holds at most `per_sequence` blocks (at least
    /// 1).
    #[must_use]
    pub fn ring(per_sequence: u64) -> Self {
        Self {
            ring: Some(per_sequence.max(1)),
            tables: BTreeMap::new(),
        }
    }

    /// A block for `sequence`'s next tokens: a new one from `pool`, or on a full ring its own
    /// oldest, moved to the end.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when the pool has no free block.
    pub fn append(&mut self, sequence: u64, pool: &mut BlockPool) -> Result<Appended, AllocError> {
        let table = self.tables.entry(sequence).or_default();
        if let Some(limit) = self.ring
            && table.len() as u64 >= limit
            && let Some(oldest) = table.pop_front()
        {
            table.push_back(oldest);
            return Ok(Appended {
                block: oldest,
                reused: true,
            });
        }
        let block = pool.allocate()?;
        table.push_back(block);
        Ok(Appended {
            block,
            reused: false,
        })
    }

    /// `sequence` starts with `prefix`'s blocks (a prefix-cache hit): each shared, one more
    /// holder, before any block of its own.
    ///
    /// # Errors
    /// As [`BlockPool::share`], for a block that is not held; nothing is shared then.
    pub fn adopt(
        &mut self,
        sequence: u64,
        prefix: &[u64],
        pool: &mut BlockPool,
    ) -> Result<(), AllocError> {
        for (i, block) in prefix.iter().enumerate() {
            if let Err(error) = pool.share(*block) {
                // Undo the shares taken: all or nothing.
                for taken in prefix.iter().take(i) {
                    let _ = pool.free(*taken);
                }
                return Err(error);
            }
        }
        self.tables
            .entry(sequence)
            .or_default()
            .extend(prefix.iter().copied());
        Ok(())
    }

    /// `sequence`'s blocks, in token order (a ring's oldest first).
    #[must_use]
    pub fn blocks(&self, sequence: u64) -> Option<&VecDeque<u64>> {
        self.tables.get(&sequence)
    }

    /// Gives every block of `sequence` back (a shared one loses one holder). Returns how many
    /// became free.
    ///
    /// # Errors
    /// [`AllocError::UnknownSequence`] when it holds none.
    pub fn release(&mut self, sequence: u64, pool: &mut BlockPool) -> Result<u64, AllocError> {
        let table = self
            .tables
            .remove(&sequence)
            .ok_or(AllocError::UnknownSequence { sequence })?;
        let mut freed = 0;
        for block in table {
            if pool.free(block)? {
                freed += 1;
            }
        }
        Ok(freed)
    }
}

impl Default for BlockTable {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_never_give_out_the_dummy() {
        let mut slots = SlotPool::new(3);
        assert_eq!(slots.dummy(), Some(2));
        assert_eq!((slots.claim(), slots.claim()), (Ok(0), Ok(1)));
        assert_eq!(
            slots.claim(),
            Err(AllocError::Exhausted {
                what: "slot",
                count: 2
            })
        );
        assert_eq!(slots.release(2), Err(AllocError::Dummy { slot: 2 }));
        assert_eq!(slots.release(0), Ok(()));
        assert!(matches!(slots.release(0), Err(AllocError::NotHeld { .. })));
        assert_eq!(slots.claim(), Ok(0));
        assert_eq!(SlotPool::new(0).dummy(), None);
        assert!(SlotPool::new(1).claim().is_err());
    }

    #[test]
    fn shared_blocks_are_freed_by_their_last_holder() {
        let mut pool = BlockPool::new(4);
        let mut table = BlockTable::new();
        let a = table.append(7, &mut pool).unwrap();
        let b = table.append(7, &mut pool).unwrap();
        assert_eq!((a.block, b.block, pool.free_count()), (0, 1, 2));
        assert_eq!((pool.count(), pool.held()), (4, 2));
        // Sequence 8 starts with 7's prefix.
        table.adopt(8, &[0, 1], &mut pool).unwrap();
        assert_eq!(pool.refs(0), Some(2));
        assert_eq!(table.release(7, &mut pool), Ok(0));
        assert_eq!(pool.refs(0), Some(1));
        assert_eq!(table.release(8, &mut pool), Ok(2));
        assert_eq!(pool.free_count(), 4);
        assert_eq!(
            table.release(8, &mut pool),
            Err(AllocError::UnknownSequence { sequence: 8 })
        );
        assert!(matches!(pool.free(9), Err(AllocError::OutOfRange { .. })));
        assert!(matches!(pool.share(0), Err(AllocError::NotHeld { .. })));
        // Adopting a free block shares nothing.
        let held = pool.allocate().unwrap();
        assert!(table.adopt(9, &[held, 3], &mut pool).is_err());
        assert_eq!(pool.refs(held), Some(1));
    }

    #[test]
    fn a_ring_reuses_its_oldest_block() {
        let mut pool = BlockPool::new(8);
        let mut ring = BlockTable::ring(2);
        let blocks: Vec<Appended> = (0..4).map(|_| ring.append(1, &mut pool).unwrap()).collect();
        assert_eq!(
            blocks
                .iter()
                .map(|a| (a.block, a.reused))
                .collect::<Vec<_>>(),
            [(0, false), (1, false), (0, true), (1, true)]
        );
        assert_eq!(pool.free_count(), 6);
        assert_eq!(ring.blocks(1).map(VecDeque::len), Some(2));
    }
}
