//! Offsets: where each sized term sits in its memory space's arena ([`Region`]), by checked
//! `const fn` steps both the dynamic and the generated plans take.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - `align` is a nonzero power of two ([`check_align`]); every offset is a multiple of it.
//! - Terms are placed per space, grouped by lifetime in [`Lifetime::LAYOUT_ORDER`], in plan
//!   order inside a group; a region starts at or after the previous one's end, so regions
//!   never overlap; an arena's size is its end rounded up to `align`.

#[cfg(doc)]
use crate::Lifetime;
use crate::StateDtype;

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
pub const fn check_align(align: u64) -> bool {
    align.is_power_of_two()
}

/// `value` rounded up to a multiple of `align` (a power of two); `None` on overflow.
#[must_use]
pub const fn align_up(value: u64, align: u64) -> Option<u64> {
    match value.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// Places `bytes` at the first multiple of `align` at or after `cursor`: `(offset, new cursor)`,
/// `None` on overflow.
#[must_use]
pub const fn place(cursor: u64, bytes: u64, align: u64) -> Option<(u64, u64)> {
    let Some(offset) = align_up(cursor, align) else {
        return None;
    };
    match offset.checked_add(bytes) {
        Some(end) => Some((offset, end)),
        None => None,
    }
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
}
