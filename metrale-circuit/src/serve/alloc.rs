//! Handing out the units a plan sized, at run time: sequence and verify slots that never give
//! out the padding dummy ([`SlotPool`]), any numbered places (ring and prefix-snapshot slots,
//! [`IndexPool`]), KV blocks with reference counts so sequences can share a prefix's blocks
//! ([`BlockPool`]), and each sequence's block table on one KV side, a windowed side's kept as a
//! ring of the window law's blocks, a fixed token count's bounded by its blocks
//! ([`BlockTable`]). It works from the counts of a generated
//! or dynamic plan (`StateInputs::slots`, `KvRegions::block_count`) and needs nothing else.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - A place is free or held, never both; a block is free (0 references) or held by its
//!   reference count. Every failure (nothing free, a double release, an index out of range,
//!   the dummy) is an [`AllocError`], never a panic, and leaves every pool and table exactly
//!   as it was.
//! - Memory grows with what is held, never with the count: free places are kept as runs
//!   (`start..end`), of which there are at most one more than the places held, and reference
//!   counts only for held blocks. Any `u64` count is accepted.
//! - Claims take the lowest free index, so a run is deterministic and a place released is the
//!   next one handed out.
//! - A block handed out for writing (by [`BlockTable::append`]) has one reference, so it sits
//!   in no other sequence's table: a full ring reuses its oldest block only when the sequence
//!   alone holds it, and otherwise lets its share go and takes a fresh block.
//! - A ring never holds more than its per-sequence blocks; a fixed side neither, refusing the
//!   block past them.

use std::collections::{BTreeMap, VecDeque};

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
    /// A prefix adopted by a sequence that holds blocks already: a prefix comes first.
    Started {
        /// The sequence.
        sequence: u64,
        /// The blocks it holds.
        blocks: u64,
    },
    /// A prefix longer than a windowed side's ring.
    PastRing {
        /// The prefix's blocks.
        blocks: u64,
        /// The ring's blocks per sequence.
        ring: u64,
    },
    /// A block past the blocks a side of a fixed token count holds a sequence (cross-attention
    /// over an encoder's positions, written once and never grown).
    PastFixed {
        /// The blocks the sequence would hold.
        blocks: u64,
        /// The side's blocks per sequence.
        fixed: u64,
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
            AllocError::Started { sequence, blocks } => write!(
                f,
                "sequence {sequence} holds {blocks} blocks already: a prefix is adopted before \
                 any block of its own"
            ),
            AllocError::PastFixed { blocks, fixed } => write!(
                f,
                "{blocks} blocks are past the {fixed} a sequence holds of a side of a fixed token \
                 count: it is written once at prefill and never grown"
            ),
            AllocError::PastRing { blocks, ring } => write!(
                f,
                "a prefix of {blocks} blocks does not fit a ring of {ring} blocks per sequence"
            ),
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
    /// The free indices as runs, `start -> end` (exclusive), none empty, no two touching.
    free: BTreeMap<u64, u64>,
    /// How many indices the runs hold.
    free_count: u64,
}

impl IndexPool {
    /// `count` free places of `what` (named in errors: "ring slot"). Takes no memory per
    /// place: any count is accepted.
    #[must_use]
    pub fn new(what: &'static str, count: u64) -> Self {
        let mut free = BTreeMap::new();
        if count > 0 {
            free.insert(0, count);
        }
        Self {
            what,
            count,
            free,
            free_count: count,
        }
    }

    /// The lowest free index, now held.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when every index is held.
    pub fn claim(&mut self) -> Result<u64, AllocError> {
        let Some((start, end)) = self.free.pop_first() else {
            return Err(AllocError::Exhausted {
                what: self.what,
                count: self.count,
            });
        };
        if start + 1 < end {
            self.free.insert(start + 1, end);
        }
        self.free_count -= 1;
        Ok(start)
    }

    /// Gives `index` back.
    ///
    /// # Errors
    /// [`AllocError::OutOfRange`] or [`AllocError::NotHeld`].
    pub fn release(&mut self, index: u64) -> Result<(), AllocError> {
        self.check_held(index)?;
        // Join the run ending at `index` and the one starting after it, if any.
        let before = self
            .free
            .range(..index)
            .next_back()
            .filter(|(_, end)| **end == index)
            .map(|(start, _)| *start);
        let after = self.free.remove(&(index + 1));
        let start = before.unwrap_or(index);
        self.free.insert(start, after.unwrap_or(index + 1));
        self.free_count += 1;
        Ok(())
    }

    /// Whether `index` is held.
    #[must_use]
    pub fn is_held(&self, index: u64) -> bool {
        self.check_held(index).is_ok()
    }

    /// How many places there are.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// How many are held.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.count - self.free_count
    }

    /// `Ok` when `index` is held, else why not.
    fn check_held(&self, index: u64) -> Result<(), AllocError> {
        if index >= self.count {
            return Err(AllocError::OutOfRange {
                what: self.what,
                index,
                count: self.count,
            });
        }
        match self.free.range(..=index).next_back() {
            Some((_, end)) if index < *end => Err(AllocError::NotHeld {
                what: self.what,
                index,
            }),
            _ => Ok(()),
        }
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
    places: IndexPool,
    /// The reference count of each held block (never 0: a free block has no entry).
    refs: BTreeMap<u64, u32>,
}

impl BlockPool {
    /// `blocks` free blocks. Takes no memory per block: any count is accepted.
    #[must_use]
    pub fn new(blocks: u64) -> Self {
        Self {
            places: IndexPool::new("KV block", blocks),
            refs: BTreeMap::new(),
        }
    }

    /// The lowest free block, now held once.
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when none is free.
    pub fn allocate(&mut self) -> Result<u64, AllocError> {
        let block = self.places.claim()?;
        self.refs.insert(block, 1);
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
        if *refs > 0 {
            return Ok(false);
        }
        self.refs.remove(&block);
        self.places.release(block)?;
        Ok(true)
    }

    /// How many hold `block` (0: free); `None` out of range.
    #[must_use]
    pub fn refs(&self, block: u64) -> Option<u32> {
        (block < self.count()).then(|| self.refs.get(&block).copied().unwrap_or(0))
    }

    /// How many blocks are free.
    #[must_use]
    pub fn free_count(&self) -> u64 {
        self.count() - self.held()
    }

    /// How many blocks the pool has.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.places.count()
    }

    /// How many blocks are held (by one sequence or more).
    #[must_use]
    pub fn held(&self) -> u64 {
        self.places.held()
    }

    /// The reference count of a held block.
    fn held_refs(&mut self, block: u64) -> Result<&mut u32, AllocError> {
        self.places.check_held(block)?;
        self.refs.get_mut(&block).ok_or(AllocError::NotHeld {
            what: "KV block",
            index: block,
        })
    }
}

/// A block a sequence appended: the block, and the oldest block a ring gave up for it (the
/// same block, reused, when the ring was full and the sequence alone held it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The block that now holds the sequence's next tokens: held by this sequence alone.
    pub block: u64,
    /// Whether it is the sequence's oldest block, reused by a full ring.
    pub reused: bool,
    /// The oldest block a full ring let go of instead of reusing it, because other sequences
    /// (that adopted it as a prefix) still read it: they keep it, this sequence writes `block`.
    pub released: Option<u64>,
}

/// Every sequence's blocks on one KV side, in token order; a windowed side's a ring of at most
/// `per_sequence` blocks (the window law's, from a plan of the side at one sequence); a side of
/// a fixed token count's at most its `per_sequence` blocks, never reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockTable {
    bound: Bound,
    tables: BTreeMap<u64, VecDeque<u64>>,
}

/// How many blocks a sequence of a [`BlockTable`] may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// Every token's: no bound.
    Every,
    /// A window's ring: at most this many, the oldest reused past it.
    Ring(u64),
    /// A fixed token count's: at most this many, an error past it.
    Fixed(u64),
}

impl BlockTable {
    /// The tables of a side that keeps every token.
    #[must_use]
    pub fn new() -> Self {
        Self {
            bound: Bound::Every,
            tables: BTreeMap::new(),
        }
    }

    /// The tables of a windowed side: a sequence holds at most `per_sequence` blocks (at least
    /// 1).
    #[must_use]
    pub fn ring(per_sequence: u64) -> Self {
        Self {
            bound: Bound::Ring(per_sequence.max(1)),
            tables: BTreeMap::new(),
        }
    }

    /// The tables of a side of a fixed token count (`tokens`, schema 4: cross-attention over an
    /// encoder's positions): a sequence holds at most `per_sequence` blocks, the
    /// `ceil(tokens / block_size)` its prefill writes, and an append past them is refused.
    #[must_use]
    pub fn fixed(per_sequence: u64) -> Self {
        Self {
            bound: Bound::Fixed(per_sequence),
            tables: BTreeMap::new(),
        }
    }

    /// A block for `sequence`'s next tokens, held by it alone: a new one from `pool`, or on a
    /// full ring its own oldest, moved to the end, when no other sequence holds that block (a
    /// shared oldest block is let go of, its other holders keeping it, and a new one taken).
    ///
    /// # Errors
    /// [`AllocError::Exhausted`] when a new block is needed and the pool has none free;
    /// [`AllocError::NotHeld`] when the ring's oldest block was freed behind the table's back;
    /// [`AllocError::PastFixed`] past a fixed side's blocks. Nothing changes then.
    pub fn append(&mut self, sequence: u64, pool: &mut BlockPool) -> Result<Appended, AllocError> {
        let held = self.tables.get(&sequence).map_or(0, |t| t.len() as u64);
        let oldest = match self.bound {
            Bound::Ring(limit) if held >= limit => {
                self.tables.get(&sequence).and_then(|t| t.front())
            }
            Bound::Fixed(fixed) if held >= fixed => {
                return Err(AllocError::PastFixed {
                    blocks: held.saturating_add(1),
                    fixed,
                });
            }
            _ => None,
        }
        .copied();
        let Some(oldest) = oldest else {
            let block = pool.allocate()?;
            self.tables.entry(sequence).or_default().push_back(block);
            return Ok(Appended {
                block,
                reused: false,
                released: None,
            });
        };
        match pool.refs(oldest) {
            Some(1) => {
                let table = self.tables.entry(sequence).or_default();
                table.rotate_left(1);
                Ok(Appended {
                    block: oldest,
                    reused: true,
                    released: None,
                })
            }
            Some(0) | None => Err(AllocError::NotHeld {
                what: "KV block",
                index: oldest,
            }),
            Some(_) => {
                let block = pool.allocate()?;
                pool.free(oldest)?;
                let table = self.tables.entry(sequence).or_default();
                table.pop_front();
                table.push_back(block);
                Ok(Appended {
                    block,
                    reused: false,
                    released: Some(oldest),
                })
            }
        }
    }

    /// `sequence` starts with `prefix`'s blocks (a prefix-cache hit): each shared, one more
    /// holder, before any block of its own.
    ///
    /// # Errors
    /// [`AllocError::Started`] when the sequence holds blocks already,
    /// [`AllocError::PastRing`] for a prefix longer than a ring, [`AllocError::PastFixed`] for
    /// one longer than a fixed side's blocks, and as [`BlockPool::share`] for a block that is
    /// not held. Nothing changes then.
    pub fn adopt(
        &mut self,
        sequence: u64,
        prefix: &[u64],
        pool: &mut BlockPool,
    ) -> Result<(), AllocError> {
        let held = self.tables.get(&sequence).map_or(0, VecDeque::len);
        if held > 0 {
            return Err(AllocError::Started {
                sequence,
                blocks: held as u64,
            });
        }
        match self.bound {
            Bound::Ring(ring) if prefix.len() as u64 > ring => {
                return Err(AllocError::PastRing {
                    blocks: prefix.len() as u64,
                    ring,
                });
            }
            Bound::Fixed(fixed) if prefix.len() as u64 > fixed => {
                return Err(AllocError::PastFixed {
                    blocks: prefix.len() as u64,
                    fixed,
                });
            }
            _ => {}
        }
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
    /// [`AllocError::UnknownSequence`] when it holds none; as [`BlockPool::free`] when one of
    /// its blocks has fewer holders in `pool` than times in its table (the table and the pool
    /// disagree). Nothing changes then: the sequence keeps every block.
    pub fn release(&mut self, sequence: u64, pool: &mut BlockPool) -> Result<u64, AllocError> {
        let table = self
            .tables
            .get(&sequence)
            .ok_or(AllocError::UnknownSequence { sequence })?;
        let mut times: BTreeMap<u64, u32> = BTreeMap::new();
        for block in table {
            *times.entry(*block).or_default() += 1;
        }
        for (block, times) in &times {
            match pool.refs(*block) {
                None => {
                    return Err(AllocError::OutOfRange {
                        what: "KV block",
                        index: *block,
                        count: pool.count(),
                    });
                }
                Some(refs) if refs < *times => {
                    return Err(AllocError::NotHeld {
                        what: "KV block",
                        index: *block,
                    });
                }
                Some(_) => {}
            }
        }
        let mut freed = 0;
        for block in self.tables.remove(&sequence).into_iter().flatten() {
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

    #[test]
    fn any_count_is_a_pool_without_memory_per_place() {
        // C10: these panicked ("capacity overflow") or aborted, allocating per place.
        let mut slots = SlotPool::new(u64::MAX);
        assert_eq!(slots.dummy(), Some(u64::MAX - 1));
        assert_eq!((slots.claim(), slots.claim()), (Ok(0), Ok(1)));
        assert_eq!(
            slots.release(u64::MAX - 1),
            Err(AllocError::Dummy { slot: u64::MAX - 1 })
        );
        let mut blocks = BlockPool::new(u64::MAX);
        assert_eq!((blocks.allocate(), blocks.count()), (Ok(0), u64::MAX));
        assert_eq!(
            (blocks.refs(u64::MAX - 1), blocks.refs(u64::MAX)),
            (Some(0), None)
        );
        assert_eq!(blocks.free_count(), u64::MAX - 1);
        let mut places = IndexPool::new("ring slot", 1 << 40);
        assert_eq!(places.claim(), Ok(0));
        assert!(matches!(
            places.release(1 << 39),
            Err(AllocError::NotHeld { .. })
        ));
        assert!(matches!(
            places.release(1 << 40),
            Err(AllocError::OutOfRange { .. })
        ));
        assert_eq!(places.held(), 1);
    }

    #[test]
    fn released_places_join_their_neighbours() {
        let mut places = IndexPool::new("place", 6);
        for i in 0..6 {
            assert_eq!(places.claim(), Ok(i));
        }
        // Free 1, 3, 2 (joining both sides), then 0 and 5: runs 0..4 and 5..6.
        for i in [1, 3, 2, 0, 5] {
            assert_eq!(places.release(i), Ok(()));
        }
        assert_eq!(
            places
                .free
                .iter()
                .map(|(s, e)| (*s, *e))
                .collect::<Vec<_>>(),
            [(0, 4), (5, 6)]
        );
        assert_eq!(
            (places.held(), places.is_held(4), places.is_held(3)),
            (1, true, false)
        );
        assert_eq!(places.claim(), Ok(0));
    }

    #[test]
    fn a_full_ring_never_writes_a_block_another_sequence_reads() {
        // C2: sequence 2 adopts sequence 1's two blocks; sequence 1's full ring then gave its
        // oldest block (0) back for writing while 2 still read it.
        let mut pool = BlockPool::new(4);
        let mut ring = BlockTable::ring(2);
        ring.append(1, &mut pool).unwrap();
        ring.append(1, &mut pool).unwrap();
        ring.adopt(2, &[0, 1], &mut pool).unwrap();
        let next = ring.append(1, &mut pool).unwrap();
        assert_eq!(
            next,
            Appended {
                block: 2,
                reused: false,
                released: Some(0)
            }
        );
        assert_eq!((pool.refs(0), pool.refs(2)), (Some(1), Some(1)));
        assert_eq!(ring.blocks(1).unwrap(), &[1, 2]);
        assert_eq!(ring.blocks(2).unwrap(), &[0, 1]);
        // Block 1 is still shared: another fresh block; then 2, held alone, is reused.
        assert_eq!(ring.append(1, &mut pool).unwrap().block, 3);
        let reused = ring.append(1, &mut pool).unwrap();
        assert_eq!((reused.block, reused.reused), (2, true));
        // With no block free, a shared oldest block cannot be replaced: nothing changes.
        let mut ring = BlockTable::ring(1);
        let mut pool = BlockPool::new(1);
        ring.append(1, &mut pool).unwrap();
        ring.adopt(2, &[0], &mut pool).unwrap();
        let before = (ring.clone(), pool.clone());
        assert!(matches!(
            ring.append(1, &mut pool),
            Err(AllocError::Exhausted { .. })
        ));
        assert_eq!((ring, pool), before);
    }

    #[test]
    fn a_fixed_side_holds_its_blocks_and_no_more() {
        // Whisper's 1,500 encoder positions in 16-token blocks: 94 blocks a sequence.
        let mut cross = BlockTable::fixed(94);
        let mut pool = BlockPool::new(200);
        for expected in 0..94 {
            assert_eq!(cross.append(7, &mut pool).unwrap().block, expected);
        }
        let before = (cross.clone(), pool.clone());
        assert_eq!(
            cross.append(7, &mut pool),
            Err(AllocError::PastFixed {
                blocks: 95,
                fixed: 94
            })
        );
        assert_eq!((cross.clone(), pool.clone()), before, "nothing changes");
        // Another sequence has its own 94; released, every block is free again.
        assert_eq!(cross.append(8, &mut pool).unwrap().block, 94);
        assert_eq!(cross.release(7, &mut pool), Ok(94));
        assert_eq!(cross.release(8, &mut pool), Ok(1));
        // A prefix longer than the side's blocks is refused; one that fits is shared.
        let mut small = BlockTable::fixed(2);
        let mut pool = BlockPool::new(4);
        small.append(1, &mut pool).unwrap();
        small.append(1, &mut pool).unwrap();
        assert_eq!(
            small.adopt(2, &[0, 1, 0], &mut pool),
            Err(AllocError::PastFixed {
                blocks: 3,
                fixed: 2
            })
        );
        small.adopt(2, &[0, 1], &mut pool).unwrap();
        assert_eq!(pool.refs(0), Some(2));
        assert!(matches!(
            small.append(2, &mut pool),
            Err(AllocError::PastFixed { .. })
        ));
        assert!(
            AllocError::PastFixed {
                blocks: 95,
                fixed: 94
            }
            .to_string()
            .contains("written once at prefill")
        );
    }

    #[test]
    fn a_prefix_comes_first_and_fits_its_ring() {
        let mut pool = BlockPool::new(4);
        let mut ring = BlockTable::ring(1);
        ring.append(1, &mut pool).unwrap();
        ring.append(3, &mut pool).unwrap();
        assert_eq!(
            ring.adopt(1, &[1], &mut pool),
            Err(AllocError::Started {
                sequence: 1,
                blocks: 1
            })
        );
        assert_eq!(
            ring.adopt(2, &[0, 1], &mut pool),
            Err(AllocError::PastRing { blocks: 2, ring: 1 })
        );
        assert_eq!((pool.refs(0), pool.refs(1)), (Some(1), Some(1)));
    }

    #[test]
    fn a_failed_release_keeps_the_sequence_and_its_blocks() {
        // C13: the table was removed before its blocks were freed, so an error forgot them.
        let mut pool = BlockPool::new(4);
        let mut table = BlockTable::new();
        table.append(1, &mut pool).unwrap();
        table.append(1, &mut pool).unwrap();
        // Block 1 freed behind the table's back: the table and the pool disagree.
        pool.free(1).unwrap();
        let before = (table.clone(), pool.clone());
        assert_eq!(
            table.release(1, &mut pool),
            Err(AllocError::NotHeld {
                what: "KV block",
                index: 1
            })
        );
        assert_eq!((table, pool), before);
        // A failed append on a new sequence leaves no empty table behind.
        let mut pool = BlockPool::new(0);
        let mut table = BlockTable::new();
        assert!(table.append(5, &mut pool).is_err());
        assert_eq!(table.blocks(5), None);
    }
}
