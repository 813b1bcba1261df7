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
pub(crate) const fn check_align(align: u64) -> bool {
    align.is_power_of_two()
}

/// `value` rounded up to a multiple of `align` (a power of two); `None` on overflow.
#[must_use]
#[inline]
pub(crate) const fn align_up(value: u64, align: u64) -> Option<u64> {
    match value.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// Places `bytes` at the first multiple of `align` at or after `cursor`: `(offset, new cursor)`,
/// `None` on overflow.
#[must_use]
#[inline]
pub(crate) const fn place(cursor: u64, bytes: u64, align: u64) -> Option<(u64, u64)> {
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
pub(crate) struct LayoutKey {
    /// The arena.
    pub space: Space,
    /// The lifetime group.
    pub lifetime: Lifetime,
}

/// Writes into `order` the indices of `keys` in layout order: device before host, lifetime
/// groups in [`Lifetime::LAYOUT_ORDER`], plan order inside a group. `order` must be as long as
/// `keys`; extra slots are left as they are.
pub(crate) const fn layout_order(keys: &[LayoutKey], order: &mut [usize]) {
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

/// The exact layout law, one term at a time: each term at the first multiple of `align` at or
/// after the end of the previous one in its space ([`place`]), its bytes added to its
/// (space, lifetime) total. Terms must come in [`layout_order`]. The first term that cannot be
/// placed is kept and reported by [`Placer::finish`]; later terms are then not placed.
///
/// Both plans use it: the dynamic plan through [`place_all`], a generated plan to replay an
/// overflowing layout (the fast generated layout is tested against it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placer {
    arena: Arena,
    cursor: [u64; 2],
    /// The last term placed in each space: the one an arena's final rounding overflows on.
    last: [usize; 2],
    failed: Option<usize>,
}

impl Placer {
    /// Nothing placed, offsets multiples of `align` (checked by the caller: [`check_align`]).
    pub(crate) const fn new(align: u64) -> Self {
        Self {
            arena: Arena::new(align, 0, 0, [[0; 4]; 2]),
            cursor: [0; 2],
            last: [0; 2],
            failed: None,
        }
    }

    /// Places term `index` of `bytes` under `key`: its offset (0 once a term has failed).
    pub(crate) const fn place(&mut self, key: LayoutKey, bytes: u64, index: usize) -> u64 {
        if self.failed.is_some() {
            return 0;
        }
        let space = key.space as usize;
        let Some((offset, end)) = place(self.cursor[space], bytes, self.arena.align) else {
            self.failed = Some(index);
            return 0;
        };
        let held = &mut self.arena.lifetime_bytes[space][key.lifetime as usize];
        let Some(sum) = held.checked_add(bytes) else {
            self.failed = Some(index);
            return 0;
        };
        *held = sum;
        self.cursor[space] = end;
        self.last[space] = index;
        offset
    }

    /// The arena, every term placed.
    ///
    /// # Errors
    /// The index of the first term that could not be placed, or of the term that ends an arena
    /// whose final rounding overflows.
    pub(crate) const fn finish(&self) -> Result<Arena, usize> {
        if let Some(index) = self.failed {
            return Err(index);
        }
        let mut arena = self.arena;
        let Some(device) = align_up(self.cursor[Space::Device as usize], arena.align) else {
            return Err(self.last[Space::Device as usize]);
        };
        let Some(host) = align_up(self.cursor[Space::Host as usize], arena.align) else {
            return Err(self.last[Space::Host as usize]);
        };
        arena.device_bytes = device;
        arena.host_bytes = host;
        Ok(arena)
    }
}

/// Gives every present term its offset, in `order` ([`layout_order`]), by the one [`Placer`],
/// and returns the arena sizes. `regions[i]` arrives with its bytes, units and dtype; an absent
/// term (`present[i] == false`) keeps offset 0 and takes no room. All three slices are as long
/// as `keys`.
///
/// # Errors
/// The index of the term that could not be placed without overflow (for an arena's final
/// rounding, the term that ends that arena).
pub(crate) fn place_all(
    keys: &[LayoutKey],
    present: &[bool],
    order: &[usize],
    align: u64,
    regions: &mut [Region],
) -> Result<Arena, usize> {
    let mut placer = Placer::new(align);
    for &i in order {
        if present.get(i) == Some(&true)
            && let (Some(key), Some(region)) = (keys.get(i), regions.get_mut(i))
        {
            region.offset = placer.place(*key, region.bytes, i);
        }
    }
    placer.finish()
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
