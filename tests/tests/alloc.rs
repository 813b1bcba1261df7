//! The runtime allocator (`metrale_circuit::alloc`) driven by random claims and releases against
//! a model: slots are handed out once and never the dummy; a KV block's reference count is the
//! number of sequence tables that hold it, a free block is in none, and no two sequences hold a
//! block unless one adopted it; a ring never holds more than its blocks. Every refusal is the
//! one the model predicts.

use std::collections::{BTreeMap, BTreeSet};

use metrale_circuit::alloc::{AllocError, BlockPool, BlockTable, SlotPool};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Claim,
    Release(u64),
    Append(u64),
    Adopt { sequence: u64, from: u64 },
    Drop(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Claim),
        (0u64..8).prop_map(Op::Release),
        (0u64..6).prop_map(Op::Append),
        ((0u64..6), (0u64..6)).prop_map(|(sequence, from)| Op::Adopt { sequence, from }),
        (0u64..6).prop_map(Op::Drop),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_claims_and_releases_never_alias(
        slots in 0u64..6,
        blocks in 0u64..10,
        ring in proptest::option::of(1u64..4),
        ops in proptest::collection::vec(op(), 0..80),
    ) {
        let mut pool = SlotPool::new(slots);
        let mut held_slots: BTreeSet<u64> = BTreeSet::new();
        let mut block_pool = BlockPool::new(blocks);
        let mut table = ring.map_or_else(BlockTable::new, BlockTable::ring);
        let mut model: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Claim => match pool.claim() {
                    Ok(slot) => {
                        prop_assert!(Some(slot) != pool.dummy(), "the dummy was handed out");
                        prop_assert!(held_slots.insert(slot), "slot {slot} handed out twice");
                        // The lowest free one.
                        prop_assert!((0..slot).all(|s| held_slots.contains(&s)));
                    }
                    Err(error) => {
                        prop_assert_eq!(held_slots.len() as u64, slots.saturating_sub(1));
                        let is_exhausted = matches!(error, AllocError::Exhausted { .. });
                        prop_assert!(is_exhausted);
                    }
                },
                Op::Release(slot) => {
                    let result = pool.release(slot);
                    if Some(slot) == pool.dummy() {
                        prop_assert_eq!(result, Err(AllocError::Dummy { slot }));
                    } else if held_slots.remove(&slot) {
                        prop_assert_eq!(result, Ok(()));
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                Op::Append(sequence) => {
                    let mine = model.entry(sequence).or_default();
                    match table.append(sequence, &mut block_pool) {
                        Ok(appended) if appended.reused => {
                            let limit = ring.expect("only a ring reuses");
                            prop_assert_eq!(mine.len() as u64, limit);
                            prop_assert_eq!(mine.remove(0), appended.block);
                            mine.push(appended.block);
                        }
                        Ok(appended) => {
                            prop_assert!(ring.is_none_or(|limit| (mine.len() as u64) < limit));
                            mine.push(appended.block);
                        }
                        Err(error) => {
                            prop_assert_eq!(block_pool.free_count(), 0);
                            let is_exhausted = matches!(error, AllocError::Exhausted { .. });
                            prop_assert!(is_exhausted);
                        }
                    }
                }
                Op::Adopt { sequence, from } => {
                    let prefix: Vec<u64> = model.get(&from).cloned().unwrap_or_default();
                    // A ring's table is its own window: adopting is for a side that keeps all.
                    if ring.is_none() && sequence != from {
                        prop_assert_eq!(table.adopt(sequence, &prefix, &mut block_pool), Ok(()));
                        model.entry(sequence).or_default().extend(prefix);
                    }
                }
                Op::Drop(sequence) => {
                    let result = table.release(sequence, &mut block_pool);
                    if model.remove(&sequence).is_some() {
                        prop_assert!(result.is_ok());
                    } else {
                        prop_assert_eq!(result, Err(AllocError::UnknownSequence { sequence }));
                    }
                }
            }
            // A block's references are the tables holding it; a free block is in none.
            let mut holders: BTreeMap<u64, u32> = BTreeMap::new();
            for blocks in model.values() {
                for block in blocks {
                    *holders.entry(*block).or_default() += 1;
                }
            }
            for block in 0..blocks {
                prop_assert_eq!(block_pool.refs(block), Some(holders.get(&block).copied().unwrap_or(0)));
            }
            let held = holders.len() as u64;
            prop_assert_eq!(block_pool.free_count(), blocks - held);
            for (sequence, blocks) in &model {
                let got: Vec<u64> = table.blocks(*sequence).map(|b| b.iter().copied().collect()).unwrap_or_default();
                prop_assert_eq!(&got, blocks);
                if let Some(limit) = ring {
                    prop_assert!(blocks.len() as u64 <= limit);
                }
            }
            prop_assert_eq!(pool.held(), held_slots.len() as u64);
        }
    }
}
