//! A reference model of the runtime allocator (`metrale_circuit::alloc`), and one step of the
//! real allocator checked against it: the property test (`tests/alloc.rs`) and the fuzzer's
//! `alloc` target drive both with the same operations.
//!
//! The model keeps what the allocator's rules say in the plainest form: the held slots as a
//! set, and each sequence's blocks as a list. A block's holders are counted from the lists, the
//! lowest free block is found by counting up from 0, and a full ring's oldest block is reused
//! only when its sequence alone holds it.
//!
//! Invariants checked after every step ([`Allocator::step`]): each answer (value or refusal) is
//! the model's; a refusal leaves the pools and tables exactly as they were; a block handed out
//! for writing has one reference and sits in one table; every held block's reference count is
//! the number of times the tables hold it, and the pool's held and free counts are the model's;
//! every table is the model's list, a ring's no longer than the ring.

use std::collections::{BTreeMap, BTreeSet};

use metrale_circuit::alloc::{AllocError, Appended, BlockPool, BlockTable, SlotPool};

/// One operation on the allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A slot for a new sequence.
    Claim,
    /// A slot given back.
    Release(u64),
    /// A block for a sequence's next tokens.
    Append(u64),
    /// `sequence` starts with `from`'s blocks.
    Adopt {
        /// The sequence that adopts.
        sequence: u64,
        /// The sequence whose blocks it adopts.
        from: u64,
    },
    /// Every block of a sequence given back.
    Drop(u64),
}

/// The real allocator: a slot pool, one KV side's block pool and its tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Real {
    slots: SlotPool,
    blocks: BlockPool,
    tables: BlockTable,
}

/// The real allocator beside its model.
#[derive(Debug, Clone)]
pub struct Allocator {
    real: Real,
    slots: u64,
    held_slots: BTreeSet<u64>,
    blocks: u64,
    ring: Option<u64>,
    tables: BTreeMap<u64, Vec<u64>>,
}

impl Allocator {
    /// `slots` slots (the dummy included) and `blocks` KV blocks, a windowed side's tables a
    /// ring of `ring` blocks a sequence.
    #[must_use]
    pub fn new(slots: u64, blocks: u64, ring: Option<u64>) -> Self {
        Self {
            real: Real {
                slots: SlotPool::new(slots),
                blocks: BlockPool::new(blocks),
                tables: ring.map_or_else(BlockTable::new, BlockTable::ring),
            },
            slots,
            held_slots: BTreeSet::new(),
            blocks,
            ring: ring.map(|r| r.max(1)),
            tables: BTreeMap::new(),
        }
    }

    /// Applies `op` to the real allocator and the model.
    ///
    /// # Errors
    /// Every way the real allocator departed from the model, described.
    pub fn step(&mut self, op: Op) -> Result<(), String> {
        let before = self.real.clone();
        let refused = match op {
            Op::Claim => self.claim()?,
            Op::Release(slot) => self.release(slot)?,
            Op::Append(sequence) => self.append(sequence)?,
            Op::Adopt { sequence, from } => self.adopt(sequence, from)?,
            Op::Drop(sequence) => self.drop_sequence(sequence)?,
        };
        if refused && self.real != before {
            return Err(format!("{op:?} was refused but changed the allocator"));
        }
        self.check()
    }

    fn claim(&mut self) -> Result<bool, String> {
        let dummy = self.slots.checked_sub(1);
        let lowest = (0..dummy.unwrap_or(0)).find(|s| !self.held_slots.contains(s));
        let expected = lowest.ok_or(AllocError::Exhausted {
            what: "slot",
            count: dummy.unwrap_or(0),
        });
        let got = self.real.slots.claim();
        same("claim", &got, &expected)?;
        if let Ok(slot) = got {
            self.held_slots.insert(slot);
        }
        Ok(got.is_err())
    }

    fn release(&mut self, slot: u64) -> Result<bool, String> {
        let dummy = self.slots.checked_sub(1);
        let expected = if Some(slot) == dummy {
            Err(AllocError::Dummy { slot })
        } else if slot >= dummy.unwrap_or(0) {
            Err(AllocError::OutOfRange {
                what: "slot",
                index: slot,
                count: dummy.unwrap_or(0),
            })
        } else if self.held_slots.contains(&slot) {
            Ok(())
        } else {
            Err(AllocError::NotHeld {
                what: "slot",
                index: slot,
            })
        };
        let got = self.real.slots.release(slot);
        same(&format!("release slot {slot}"), &got, &expected)?;
        if got.is_ok() {
            self.held_slots.remove(&slot);
        }
        Ok(got.is_err())
    }

    /// How many times the tables hold `block`.
    fn holders(&self, block: u64) -> u32 {
        let times = self
            .tables
            .values()
            .flatten()
            .filter(|b| **b == block)
            .count();
        u32::try_from(times).unwrap_or(u32::MAX)
    }

    /// The lowest block no table holds.
    fn lowest_free(&self) -> Option<u64> {
        let held: BTreeSet<u64> = self.tables.values().flatten().copied().collect();
        (0..self.blocks).find(|b| !held.contains(b))
    }

    fn append(&mut self, sequence: u64) -> Result<bool, String> {
        let mine = self.tables.get(&sequence).cloned().unwrap_or_default();
        let exhausted = AllocError::Exhausted {
            what: "KV block",
            count: self.blocks,
        };
        let full = self.ring.is_some_and(|limit| mine.len() as u64 >= limit);
        let expected = match mine.first() {
            Some(&oldest) if full && self.holders(oldest) == 1 => Ok(Appended {
                block: oldest,
                reused: true,
                released: None,
            }),
            Some(&oldest) if full => self.lowest_free().ok_or(exhausted).map(|block| Appended {
                block,
                reused: false,
                released: Some(oldest),
            }),
            _ => self.lowest_free().ok_or(exhausted).map(|block| Appended {
                block,
                reused: false,
                released: None,
            }),
        };
        let got = self.real.tables.append(sequence, &mut self.real.blocks);
        same(&format!("append to sequence {sequence}"), &got, &expected)?;
        let Ok(appended) = got else {
            return Ok(true);
        };
        let table = self.tables.entry(sequence).or_default();
        if full {
            table.remove(0);
        }
        table.push(appended.block);
        // Handed out for writing: this sequence's alone.
        if self.holders(appended.block) != 1 || self.real.blocks.refs(appended.block) != Some(1) {
            return Err(format!(
                "block {} was handed to sequence {sequence} for writing but another holds it",
                appended.block
            ));
        }
        Ok(false)
    }

    fn adopt(&mut self, sequence: u64, from: u64) -> Result<bool, String> {
        let prefix = self.tables.get(&from).cloned().unwrap_or_default();
        let held = self.tables.get(&sequence).map_or(0, Vec::len) as u64;
        let expected = if held > 0 {
            Err(AllocError::Started {
                sequence,
                blocks: held,
            })
        } else if let Some(ring) = self.ring
            && prefix.len() as u64 > ring
        {
            Err(AllocError::PastRing {
                blocks: prefix.len() as u64,
                ring,
            })
        } else {
            Ok(())
        };
        let got = self
            .real
            .tables
            .adopt(sequence, &prefix, &mut self.real.blocks);
        same(
            &format!("sequence {sequence} adopting {prefix:?}"),
            &got,
            &expected,
        )?;
        if got.is_ok() {
            self.tables.entry(sequence).or_default().extend(prefix);
        }
        Ok(got.is_err())
    }

    fn drop_sequence(&mut self, sequence: u64) -> Result<bool, String> {
        let expected = match self.tables.remove(&sequence) {
            None => Err(AllocError::UnknownSequence { sequence }),
            Some(blocks) => {
                let distinct: BTreeSet<u64> = blocks.into_iter().collect();
                Ok(distinct.iter().filter(|b| self.holders(**b) == 0).count() as u64)
            }
        };
        let got = self.real.tables.release(sequence, &mut self.real.blocks);
        same(&format!("release sequence {sequence}"), &got, &expected)?;
        Ok(got.is_err())
    }

    /// The invariants that hold between steps.
    fn check(&self) -> Result<(), String> {
        let mut holders: BTreeMap<u64, u32> = BTreeMap::new();
        for block in self.tables.values().flatten() {
            *holders.entry(*block).or_default() += 1;
        }
        for (block, times) in &holders {
            let refs = self.real.blocks.refs(*block);
            if refs != Some(*times) {
                return Err(format!(
                    "block {block} is in {times} tables but has {refs:?} references"
                ));
            }
        }
        // A free block has no reference (the lowest few, and the last).
        let free = (0..self.blocks.min(64))
            .chain(self.blocks.checked_sub(1))
            .filter(|b| !holders.contains_key(b));
        for block in free {
            if self.real.blocks.refs(block) != Some(0) {
                return Err(format!("free block {block} has references"));
            }
        }
        let held = holders.len() as u64;
        if (self.real.blocks.held(), self.real.blocks.free_count()) != (held, self.blocks - held) {
            return Err(format!(
                "the pool says {} held and {} free, the tables hold {held} of {}",
                self.real.blocks.held(),
                self.real.blocks.free_count(),
                self.blocks
            ));
        }
        for (sequence, blocks) in &self.tables {
            let got: Vec<u64> = self
                .real
                .tables
                .blocks(*sequence)
                .map(|b| b.iter().copied().collect())
                .unwrap_or_default();
            if &got != blocks {
                return Err(format!(
                    "sequence {sequence} holds {got:?}, the model {blocks:?}"
                ));
            }
            if self.ring.is_some_and(|ring| blocks.len() as u64 > ring) {
                return Err(format!("sequence {sequence}'s ring holds {blocks:?}"));
            }
        }
        if self.real.slots.held() != self.held_slots.len() as u64 {
            return Err(format!(
                "{} slots held, the model {}",
                self.real.slots.held(),
                self.held_slots.len()
            ));
        }
        Ok(())
    }
}

/// `Ok` when the real answer is the model's.
fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &Result<T, AllocError>,
    expected: &Result<T, AllocError>,
) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, the model {expected:?}"))
    }
}
