//! Offsets: where each sized term sits in its memory space's arena ([`Region`]), by checked
//! `const fn` steps both the dynamic and the generated plans take.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - `align` is a nonzero power of two ([`check_align`]); every offset is a multiple of it.
//! - Terms are placed per space, grouped by lifetime in [`Lifetime::LAYOUT_ORDER`], in plan
//!   order inside a group; a region starts at or after the previous one's end, so regions
//!   never overlap; an arena's size is its end rounded up to `align`.

use super::sizing::Space;
use crate::model::{Lifetime, StateDtype};

/// The default alignment of every region, in bytes.
pub const DEFAULT_ALIGN: u64 = 256;

/// One laid-out term: where it starts in its arena and what it holds, and the byte range of
/// each of its units.
///
/// A term's units form a grid `[outer][inner]`, in the order docs/circuit-schema.md gives per
/// kind: unit `outer x inner + i` starts `(outer x inner + i) x unit_bytes` after `offset`
/// ([`Region::unit`], [`Region::at`], [`Region::group`]). The prompt-lookup index is the one
/// term that is not a dense array of units: each sequence's table has its own hash layout
/// (the hash-table law makes `bytes` more than `units x unit_bytes`), so only
/// [`Region::group`] (a sequence's table) addresses it.
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
    /// Bytes of one unit (for the prompt-lookup index, of one entry).
    pub unit_bytes: u64,
    /// The arena it sits in: device or host memory, so a region alone says which buffer it
    /// addresses.
    pub space: Space,
    /// Units per outer index of the grid: tokens per KV block, ring slots per sequence slot,
    /// conv steps per verify slot, tree nodes (a mask is `[slot][node][node]`), draft
    /// positions per verify slot, history entries per sequence; 1 for a flat `[unit]` term; 0
    /// for `h_steps` intermediates, whose rows per verify slot vary (see
    /// [`crate::RecurrentRegions::step`]).
    pub inner: u64,
}

impl Region {
    /// An empty region at offset 0 (an absent term, or a slot to be filled).
    pub const EMPTY: Region = Region {
        offset: 0,
        bytes: 0,
        units: 0,
        dtype: StateDtype::U8,
        unit_bytes: 0,
        space: Space::Device,
        inner: 0,
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

    /// Whether the region is a dense array of its units (every term but a non-empty
    /// prompt-lookup index).
    #[must_use]
    pub const fn is_dense(&self) -> bool {
        match self.units.checked_mul(self.unit_bytes) {
            Some(bytes) => bytes == self.bytes,
            None => false,
        }
    }

    /// `count` units from unit `first`, as a region of their own (offset from the same arena
    /// start); `None` past the end or for a region that is not dense.
    #[must_use]
    pub const fn units_from(&self, first: u64, count: u64) -> Option<Region> {
        let Some(end) = first.checked_add(count) else {
            return None;
        };
        if end > self.units || !self.is_dense() {
            return None;
        }
        // Checked even in range: a region may be built by hand, not by a plan.
        let (Some(skip), Some(bytes)) = (
            first.checked_mul(self.unit_bytes),
            count.checked_mul(self.unit_bytes),
        ) else {
            return None;
        };
        let Some(offset) = self.offset.checked_add(skip) else {
            return None;
        };
        Some(Region {
            offset,
            bytes,
            units: count,
            dtype: self.dtype,
            unit_bytes: self.unit_bytes,
            space: self.space,
            inner: 1,
        })
    }

    /// Unit `index` (its natural index in the unit order); `None` out of range (or for the
    /// prompt-lookup index, whose entries are hashed: see [`Region::group`]).
    #[must_use]
    pub const fn unit(&self, index: u64) -> Option<Region> {
        self.units_from(index, 1)
    }

    /// Unit `[outer][inner]` of the grid; `None` when `inner` is not below [`Region::inner`] or
    /// the unit is out of range.
    #[must_use]
    pub const fn at(&self, outer: u64, inner: u64) -> Option<Region> {
        if inner >= self.inner {
            return None;
        }
        match outer.checked_mul(self.inner) {
            Some(first) => match first.checked_add(inner) {
                Some(index) => self.unit(index),
                None => None,
            },
            None => None,
        }
    }

    /// The [`Region::inner`] units of outer index `outer`: KV block `outer`, sequence slot
    /// `outer`'s ring, verify slot `outer`'s conv steps or drafts; for the prompt-lookup index,
    /// sequence `outer`'s hash table (`bytes / sequences`, every table the same size). `None`
    /// out of range or for a grid without one inner count (`h_steps` intermediates).
    #[must_use]
    pub const fn group(&self, outer: u64) -> Option<Region> {
        if self.inner == 0 {
            return None;
        }
        let outers = self.units / self.inner;
        if outer >= outers {
            return None;
        }
        if self.is_dense() {
            // `outer < units / inner`, so `outer x inner < units`: no overflow.
            return self.units_from(outer * self.inner, self.inner);
        }
        // The lookup index: `outers` equal tables, one after the other.
        let table = self.bytes / outers;
        let Some(offset) = (match outer.checked_mul(table) {
            Some(skip) => self.offset.checked_add(skip),
            None => None,
        }) else {
            return None;
        };
        Some(Region {
            offset,
            bytes: table,
            units: self.inner,
            dtype: self.dtype,
            unit_bytes: self.unit_bytes,
            space: self.space,
            inner: self.inner,
        })
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
            unit_bytes: 1,
            space: Space::Device,
            inner: 1,
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
