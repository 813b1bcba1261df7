//! Offsets: where each sized term sits in its memory space's arena ([`Region`]), by checked
//! `const fn` steps both the dynamic and the generated plans take.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - `align` is a nonzero power of two ([`check_align`]); every offset is a multiple of it.
//! - Terms are placed per space, grouped by lifetime in [`Lifetime::LAYOUT_ORDER`], in plan
//!   order inside a group; a region starts at or after the previous one's end, so regions
//!   never overlap; an arena's size is its end rounded up to `align`.

use crate::{Lifetime, Space, StateDtype};

/// The default alignment of every region, in bytes.
pub const DEFAULT_ALIGN: u64 = 256;

/// One laid-out term: where it starts in its arena and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Bytes from the start of the arena; a multiple of the plan's alignment.
    pub offset: u64,
    /// Bytes it holds.
    pub bytes: u64,
    /// Units it holds (slots, tokens, rows, entries).
    pub units: u64,
    /// Its element type.
    pub dtype: StateDtype,
}

impl Region {
    /// An empty region at offset 0 (an absent term, or a slot to be filled).
    pub const EMPTY: Region = Region {
        offset: 0,
        bytes: 0,
        units: 0,
        dtype: StateDtype::U8,
    };

    /// One past its last byte (cannot overflow: placement checked it).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.bytes)
    }

    /// Holds nothing (its inputs were absent or zero).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

/// `true` when `align` is a nonzero power of two.
#[must_use]
#[inline]
pub const fn check_align(align: u64) -> bool {
    align.is_power_of_two()
}

/// `value` rounded up to a multiple of `align` (a power of two); `None` on overflow.
#[must_use]
#[inline]
pub const fn align_up(value: u64, align: u64) -> Option<u64> {
    match value.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// Places `bytes` at the first multiple of `align` at or after `cursor`: `(offset, new cursor)`,
/// `None` on overflow.
#[must_use]
#[inline]
pub const fn place(cursor: u64, bytes: u64, align: u64) -> Option<(u64, u64)> {
    let Some(offset) = align_up(cursor, align) else {
        return None;
    };
    match offset.checked_add(bytes) {
        Some(end) => Some((offset, end)),
        None => None,
    }
}

/// Where a term goes: its memory space and the lifetime group inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutKey {
    /// The arena.
    pub space: Space,
    /// The lifetime group.
    pub lifetime: Lifetime,
}

/// Writes into `order` the indices of `keys` in layout order: device before host, lifetime
/// groups in [`Lifetime::LAYOUT_ORDER`], plan order inside a group. `order` must be as long as
/// `keys`; extra slots are left as they are.
pub const fn layout_order(keys: &[LayoutKey], order: &mut [usize]) {
    let mut next = 0;
    let mut space = 0;
    while space < Space::ALL.len() {
        let mut group = 0;
        while group < Lifetime::LAYOUT_ORDER.len() {
            let mut i = 0;
            while i < keys.len() && next < order.len() {
                if keys[i].space as usize == Space::ALL[space] as usize
                    && keys[i].lifetime as usize == Lifetime::LAYOUT_ORDER[group] as usize
                {
                    order[next] = i;
                    next += 1;
                }
                i += 1;
            }
            group += 1;
        }
        space += 1;
    }
}

/// The sizes of the arenas of a laid-out plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arena {
    /// Every offset is a multiple of it.
    pub align: u64,
    /// The device arena: the end of its last region rounded up to `align`.
    pub device_bytes: u64,
    /// The host arena: the end of its last region rounded up to `align`.
    pub host_bytes: u64,
    /// Bytes held per space (device, host) and lifetime ([`Lifetime`] declaration order),
    /// alignment padding excluded.
    lifetime_bytes: [[u64; 4]; 2],
}

impl Arena {
    /// No arena yet: align 1, nothing in it.
    pub const EMPTY: Arena = Arena {
        align: 1,
        device_bytes: 0,
        host_bytes: 0,
        lifetime_bytes: [[0; 4]; 2],
    };

    /// An arena of the given sizes and per-(space, lifetime) bytes.
    pub(crate) const fn new(
        align: u64,
        device_bytes: u64,
        host_bytes: u64,
        lifetime_bytes: [[u64; 4]; 2],
    ) -> Self {
        Self {
            align,
            device_bytes,
            host_bytes,
            lifetime_bytes,
        }
    }

    /// The arena size of `space`.
    #[must_use]
    pub const fn bytes(&self, space: Space) -> u64 {
        match space {
            Space::Device => self.device_bytes,
            Space::Host => self.host_bytes,
        }
    }

    /// The bytes the terms of `space` with `lifetime` hold, alignment padding excluded.
    #[must_use]
    pub const fn lifetime_bytes(&self, space: Space, lifetime: Lifetime) -> u64 {
        self.lifetime_bytes[space as usize][lifetime as usize]
    }

    /// The bytes the terms of `space` hold, alignment padding excluded (never more than the
    /// arena).
    #[must_use]
    pub const fn term_bytes(&self, space: Space) -> u64 {
        let per = &self.lifetime_bytes[space as usize];
        per[0]
            .saturating_add(per[1])
            .saturating_add(per[2])
            .saturating_add(per[3])
    }
}

/// Gives every present term its offset, in `order` ([`layout_order`]), and returns the arena
/// sizes. `regions[i]` arrives with its bytes, units and dtype; an absent term
/// (`present[i] == false`) keeps offset 0 and takes no room. All three slices are as long as
/// `keys`.
///
/// # Errors
/// The index of the term that could not be placed without overflow (for an arena's final
/// rounding, the term that ends that arena).
pub const fn place_all(
    keys: &[LayoutKey],
    present: &[bool],
    order: &[usize],
    align: u64,
    regions: &mut [Region],
) -> Result<Arena, usize> {
    let mut arena = Arena {
        align,
        device_bytes: 0,
        host_bytes: 0,
        lifetime_bytes: [[0; 4]; 2],
    };
    let mut cursor = [0u64; 2];
    let mut last = [0usize; 2];
    let mut k = 0;
    while k < order.len() {
        let i = order[k];
        k += 1;
        if i >= keys.len() || i >= regions.len() || i >= present.len() || !present[i] {
            continue;
        }
        let space = keys[i].space as usize;
        let Some((offset, end)) = place(cursor[space], regions[i].bytes, align) else {
            return Err(i);
        };
        regions[i].offset = offset;
        cursor[space] = end;
        last[space] = i;
        let lifetime = keys[i].lifetime as usize;
        let Some(sum) = arena.lifetime_bytes[space][lifetime].checked_add(regions[i].bytes) else {
            return Err(i);
        };
        arena.lifetime_bytes[space][lifetime] = sum;
    }
    let Some(device) = align_up(cursor[Space::Device as usize], align) else {
        return Err(last[Space::Device as usize]);
    };
    let Some(host) = align_up(cursor[Space::Host as usize], align) else {
        return Err(last[Space::Host as usize]);
    };
    arena.device_bytes = device;
    arena.host_bytes = host;
    Ok(arena)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_rules() {
        assert!(check_align(1));
        assert!(check_align(256));
        assert!(!check_align(0));
        assert!(!check_align(384));
        assert_eq!(align_up(0, 256), Some(0));
        assert_eq!(align_up(1, 256), Some(256));
        assert_eq!(align_up(256, 256), Some(256));
        assert_eq!(align_up(u64::MAX, 256), None);
        assert_eq!(place(0, 100, 256), Some((0, 100)));
        assert_eq!(place(100, 100, 256), Some((256, 356)));
        assert_eq!(place(u64::MAX - 100, 10, 256), None);
        assert_eq!(
            place(u64::MAX - 300, 10, 256),
            Some((u64::MAX - 255, u64::MAX - 245))
        );
        assert_eq!(place(512, u64::MAX, 256), None);
    }

    #[test]
    fn layout_order_groups_by_space_then_lifetime() {
        let key = |space, lifetime| LayoutKey { space, lifetime };
        let keys = [
            key(Space::Host, Lifetime::Sequence),
            key(Space::Device, Lifetime::Verify),
            key(Space::Device, Lifetime::Sequence),
            key(Space::Device, Lifetime::Snapshot),
            key(Space::Device, Lifetime::Model),
            key(Space::Device, Lifetime::Sequence),
        ];
        let mut order = [usize::MAX; 6];
        layout_order(&keys, &mut order);
        assert_eq!(order, [4, 2, 5, 3, 1, 0]);
    }

    #[test]
    fn place_all_skips_absent_terms_and_totals_per_lifetime() {
        let key = |lifetime| LayoutKey {
            space: Space::Device,
            lifetime,
        };
        let keys = [
            key(Lifetime::Sequence),
            key(Lifetime::Model),
            key(Lifetime::Sequence),
        ];
        let region = |bytes| Region {
            offset: 0,
            bytes,
            units: bytes,
            dtype: StateDtype::U8,
        };
        let mut regions = [region(100), region(300), region(50)];
        let arena = place_all(&keys, &[true, true, false], &[1, 0, 2], 256, &mut regions);
        let arena = arena.expect("fits");
        assert_eq!(regions.map(|r| r.offset), [512, 0, 0]);
        assert_eq!(arena.device_bytes, 768);
        assert_eq!(arena.host_bytes, 0);
        assert_eq!(arena.lifetime_bytes(Space::Device, Lifetime::Sequence), 100);
        assert_eq!(arena.term_bytes(Space::Device), 400);
        let mut huge = [region(u64::MAX - 10), region(1), region(1)];
        assert_eq!(
            place_all(&keys, &[true; 3], &[0, 1, 2], 256, &mut huge),
            Err(1)
        );
        let mut ends_high = [region(u64::MAX - 10), region(0), region(0)];
        assert_eq!(
            place_all(
                &keys,
                &[true, false, false],
                &[0, 1, 2],
                256,
                &mut ends_high
            ),
            Err(0)
        );
    }
}
