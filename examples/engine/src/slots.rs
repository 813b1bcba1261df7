//! Pools of numbered places: a [`FreeList`] hands out each index of `0..count` at most once
//! until it comes back (KV blocks, prefix-snapshot slots), and the sequence slots
//! ([`SlotPool`]) are one whose padding dummy, the last slot, is never handed out.
//!
//! Invariants:
//! - An index is either free or held, never both: a claim takes a free one, a release takes a
//!   held one back, and anything else (a double release, an index out of range, the dummy) is
//!   an [`EngineError::Pool`].
//! - Claims take the lowest free index, so a run is deterministic and a released slot is the
//!   next one handed out.

use std::collections::BTreeSet;

use crate::EngineError;

/// Each index of `0..count`, free or held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeList {
    what: &'static str,
    count: u64,
    /// The free indices, in ascending order.
    free: BTreeSet<u64>,
}

impl FreeList {
    /// `count` free indices of `what` (for errors: "KV block").
    #[must_use]
    pub fn new(what: &'static str, count: u64) -> Self {
        Self {
            what,
            count,
            free: (0..count).collect(),
        }
    }

    /// The lowest free index, now held; `None` when every index is held.
    pub fn claim(&mut self) -> Option<u64> {
        self.free.pop_first()
    }

    /// Gives `index` back.
    ///
    /// # Errors
    /// [`EngineError::Pool`] when `index` is out of range or not held.
    pub fn release(&mut self, index: u64) -> Result<(), EngineError> {
        if index >= self.count {
            return Err(EngineError::Pool(format!(
                "{} {index} is out of range: there are {}",
                self.what, self.count
            )));
        }
        if !self.free.insert(index) {
            return Err(EngineError::Pool(format!(
                "{} {index} is released but was not held",
                self.what
            )));
        }
        Ok(())
    }

    /// How many indices there are.
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

/// The sequence slots: `slots` of them, the last the padding dummy batched kernels may write
/// into, which no sequence is ever given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPool {
    list: FreeList,
    dummy: Option<u64>,
}

impl SlotPool {
    /// `slots` sequence slots, the dummy included (as the plan inputs count them).
    #[must_use]
    pub fn new(slots: u64) -> Self {
        let dummy = slots.checked_sub(1);
        Self {
            list: FreeList::new("sequence slot", dummy.unwrap_or(0)),
            dummy,
        }
    }

    /// The padding dummy's slot; `None` for a plan of no slot at all.
    #[must_use]
    pub fn dummy(&self) -> Option<u64> {
        self.dummy
    }

    /// A free slot for a new sequence; `None` when every slot but the dummy is held.
    pub fn claim(&mut self) -> Option<u64> {
        self.list.claim()
    }

    /// Gives a sequence's slot back.
    ///
    /// # Errors
    /// [`EngineError::Pool`] for the dummy, a slot out of range or one not held.
    pub fn release(&mut self, slot: u64) -> Result<(), EngineError> {
        if Some(slot) == self.dummy {
            return Err(EngineError::Pool(format!(
                "sequence slot {slot} is the padding dummy: it is never handed out, so never released"
            )));
        }
        self.list.release(slot)
    }

    /// Slots held by sequences.
    #[must_use]
    pub fn held(&self) -> u64 {
        self.list.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dummy_is_never_handed_out() {
        let mut pool = SlotPool::new(3);
        assert_eq!(pool.dummy(), Some(2));
        assert_eq!(
            (pool.claim(), pool.claim(), pool.claim()),
            (Some(0), Some(1), None)
        );
        assert!(pool.release(2).is_err(), "the dummy");
        pool.release(0).unwrap();
        assert!(pool.release(0).is_err(), "twice");
        assert_eq!(pool.claim(), Some(0));
        assert_eq!(pool.held(), 2);
        let mut empty = SlotPool::new(0);
        assert_eq!((empty.dummy(), empty.claim()), (None, None));
        let mut only_dummy = SlotPool::new(1);
        assert_eq!(only_dummy.claim(), None);
    }

    #[test]
    fn a_free_list_hands_each_index_out_once() {
        let mut list = FreeList::new("KV block", 2);
        assert_eq!(
            (list.claim(), list.claim(), list.claim()),
            (Some(0), Some(1), None)
        );
        assert!(list.release(2).is_err());
        list.release(1).unwrap();
        assert_eq!(list.held(), 1);
        assert_eq!(list.claim(), Some(1));
        assert_eq!(list.count(), 2);
    }
}
