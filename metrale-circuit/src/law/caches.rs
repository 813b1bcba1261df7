//! Cache sizing: how many units each cache kind has from the cache inputs, and the host
//! hash-table law of the prompt-lookup index.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Every function is a checked `const fn`: overflow is `None`, never a wrap or a panic, so the
//!   generated const plan and the dynamic plan size caches with the same code.
//! - A cache whose input group is absent (`None`) has no units (`Ok(None)`); a plain count that
//!   is zero gives a term of zero units.

use crate::model::{CacheInputs, StateKind};

/// Units of a cache kind under `caches`: `Ok(None)` when its input group is absent, `Err(())` on
/// overflow. Non-cache kinds have no cache units (`Ok(None)`).
///
/// # Errors
/// `Err(())` when a product overflows `u64`.
#[allow(clippy::result_unit_err)] // the one failure is overflow; callers name the state.
#[inline]
pub const fn cache_units(kind: StateKind, caches: &CacheInputs) -> Result<Option<u64>, ()> {
    let units = match kind {
        StateKind::Recurrent | StateKind::PagedKv => return Ok(None),
        StateKind::PrefixSnapshot => Some(caches.prefix_snapshot_slots),
        StateKind::RingSnapshot => match caches.ring {
            Some(ring) => ring.ring_slots.checked_mul(ring.seq_slots),
            None => return Ok(None),
        },
        StateKind::CarryStash => match caches.carry {
            Some(carry) => Some(carry.slots),
            None => return Ok(None),
        },
        StateKind::CarryTable => match caches.carry {
            Some(carry) => Some(carry.table_rows),
            None => return Ok(None),
        },
        StateKind::VerifyTable | StateKind::AcceptStash => Some(caches.verify_table_rows),
        StateKind::HiddenCapture => Some(caches.capture_rows),
        StateKind::PromptLookupIndex => match caches.lookup {
            Some(lookup) => lookup.sequences.checked_mul(lookup.history_tokens),
            None => return Ok(None),
        },
        StateKind::TokenTreeMask => match caches.tree {
            Some(tree) => match tree.slots.checked_mul(tree.nodes) {
                Some(pairs) => pairs.checked_mul(tree.nodes),
                None => None,
            },
            None => return Ok(None),
        },
        StateKind::DraftTokens => match caches.drafts {
            Some(drafts) => drafts.slots.checked_mul(drafts.positions),
            None => return Ok(None),
        },
    };
    match units {
        Some(units) => Ok(Some(units)),
        None => Err(()),
    }
}

/// Host bytes of one hash table of `entries` entries of `entry_bytes` each, by the growth law
/// of a `SwissTable` (modelled on hashbrown's): no allocation for no entries; 4 buckets below 4
/// entries, 8 below 8, else the next power of two of `entries * 8 / 7` (a 7/8 load factor);
/// each bucket holds an entry and one control byte, plus 16 trailing control bytes.
/// `None` on overflow.
#[must_use]
pub const fn hash_table_bytes(entries: u64, entry_bytes: u64) -> Option<u64> {
    if entries == 0 {
        return Some(0);
    }
    let buckets = if entries < 4 {
        4
    } else if entries < 8 {
        8
    } else {
        match entries.checked_mul(8) {
            Some(eighths) => match (eighths / 7).checked_next_power_of_two() {
                Some(buckets) => buckets,
                None => return None,
            },
            None => return None,
        }
    };
    let Some(bucket_bytes) = entry_bytes.checked_add(1) else {
        return None;
    };
    match buckets.checked_mul(bucket_bytes) {
        Some(bytes) => bytes.checked_add(16),
        None => None,
    }
}

/// Host bytes of the prompt-lookup index: one hash table of `history_tokens` entries per
/// sequence. `None` on overflow.
#[must_use]
pub const fn lookup_index_bytes(
    sequences: u64,
    history_tokens: u64,
    entry_bytes: u64,
) -> Option<u64> {
    match hash_table_bytes(history_tokens, entry_bytes) {
        Some(table) => sequences.checked_mul(table),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CarryInputs, DraftInputs, LookupInputs, RingInputs, TreeInputs};

    #[test]
    fn hash_table_law_by_hand() {
        // buckets: 1 -> 4, 7 -> 8, 14 -> 16 (14*8/7 = 16), 15 -> 32 (120/7 = 17 -> 32);
        // bytes = buckets * 17 + 16.
        assert_eq!(hash_table_bytes(0, 16), Some(0));
        assert_eq!(hash_table_bytes(1, 16), Some(84));
        assert_eq!(hash_table_bytes(3, 16), Some(84));
        assert_eq!(hash_table_bytes(4, 16), Some(152));
        assert_eq!(hash_table_bytes(7, 16), Some(152));
        // 8 entries: 64 / 7 = 9 -> 16 buckets.
        assert_eq!(hash_table_bytes(8, 16), Some(288));
        assert_eq!(hash_table_bytes(14, 16), Some(288));
        assert_eq!(hash_table_bytes(15, 16), Some(560));
        assert_eq!(hash_table_bytes(u64::MAX, 16), None);
        assert_eq!(hash_table_bytes(1 << 62, 16), None);
        assert_eq!(hash_table_bytes(4, u64::MAX), None);
        assert_eq!(lookup_index_bytes(3, 14, 16), Some(3 * 288));
        assert_eq!(lookup_index_bytes(u64::MAX, 1, 16), None);
    }

    #[test]
    fn units_per_cache_kind() {
        let caches = CacheInputs {
            prefix_snapshot_slots: 6,
            ring: Some(RingInputs {
                ring_slots: 3,
                seq_slots: 5,
            }),
            carry: Some(CarryInputs {
                slots: 4,
                table_rows: 9,
            }),
            verify_table_rows: 11,
            capture_rows: 13,
            lookup: Some(LookupInputs {
                sequences: 2,
                history_tokens: 100,
            }),
            tree: Some(TreeInputs { slots: 3, nodes: 7 }),
            drafts: Some(DraftInputs {
                slots: 3,
                positions: 5,
            }),
        };
        let expected = [
            (StateKind::Recurrent, None),
            (StateKind::PagedKv, None),
            (StateKind::PrefixSnapshot, Some(6)),
            (StateKind::RingSnapshot, Some(15)),
            (StateKind::CarryStash, Some(4)),
            (StateKind::CarryTable, Some(9)),
            (StateKind::VerifyTable, Some(11)),
            (StateKind::AcceptStash, Some(11)),
            (StateKind::HiddenCapture, Some(13)),
            (StateKind::PromptLookupIndex, Some(200)),
            (StateKind::TokenTreeMask, Some(147)),
            (StateKind::DraftTokens, Some(15)),
        ];
        for (kind, units) in expected {
            assert_eq!(cache_units(kind, &caches), Ok(units), "{kind:?}");
        }
        for kind in StateKind::ALL {
            let absent = cache_units(kind, &CacheInputs::EMPTY);
            let plain_count = matches!(
                kind,
                StateKind::PrefixSnapshot
                    | StateKind::VerifyTable
                    | StateKind::AcceptStash
                    | StateKind::HiddenCapture
            );
            assert_eq!(absent, Ok(plain_count.then_some(0)), "{kind:?}");
        }
        let huge = CacheInputs {
            tree: Some(TreeInputs {
                slots: 2,
                nodes: 1 << 32,
            }),
            ..CacheInputs::EMPTY
        };
        assert_eq!(cache_units(StateKind::TokenTreeMask, &huge), Err(()));
    }
}
