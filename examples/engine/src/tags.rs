//! Tags: what the engine writes into every unit ([`Tag`]), the ledger of what every unit must
//! hold ([`Ledger`]), and the final check that reads every unit of every term back
//! ([`check`], [`TagCheck`]). A unit that does not hold what the ledger says was overwritten
//! through another unit's address: two units alias, or a unit is not where the plan says.
//!
//! A tag names (term index, unit index) and how many times the engine has written that unit:
//! 16 bytes, `[check: u32][term: u32][unit: u64]` little endian, `check` a hash of all three.
//! A unit holds its tag repeated over all its bytes (so an overlap anywhere in it shows); a
//! unit smaller than a tag holds the tag's first bytes, a shortened tag that starts with the
//! check, so even a one-byte unit's byte depends on its term, its index and the write.
//!
//! Invariants:
//! - The ledger knows every unit of every term from the first write of the run (the format
//!   of every arena) on: a unit holds either its own tag at its current write count, or, after
//!   a copy, what its source held then ([`Ledger::copy`]).
//! - [`check`] walks every unit through the address API (`Region::unit`, `Region::group`),
//!   never through the engine's own bookkeeping of where it wrote.

use std::collections::HashMap;
use std::fmt;

use metrale_circuit::Space;

use crate::EngineError;
use crate::layout::{Layout, UnitRef};
use crate::memory::Memory;

/// The bytes of a full tag.
pub const TAG_BYTES: usize = 16;

/// What one write of one unit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    /// The term's index in plan order.
    pub term: u32,
    /// The unit's index in its term.
    pub unit: u64,
    /// How many times the engine has written the unit before (0: the format).
    pub write: u32,
}

impl Tag {
    /// The 16 bytes: the check, the term, the unit.
    #[must_use]
    pub fn bytes(self) -> [u8; TAG_BYTES] {
        let mut out = [0; TAG_BYTES];
        out[..4].copy_from_slice(&self.check().to_le_bytes());
        out[4..8].copy_from_slice(&self.term.to_le_bytes());
        out[8..].copy_from_slice(&self.unit.to_le_bytes());
        out
    }

    /// Fills `unit` with the tag, repeated (a unit shorter than a tag gets its first bytes).
    pub fn fill(self, unit: &mut [u8]) {
        let tag = self.bytes();
        for chunk in unit.chunks_mut(TAG_BYTES) {
            chunk.copy_from_slice(&tag[..chunk.len()]);
        }
    }

    /// Whether `unit` holds exactly what [`Tag::fill`] writes.
    #[must_use]
    pub fn is_in(self, unit: &[u8]) -> bool {
        let tag = self.bytes();
        unit.chunks(TAG_BYTES)
            .all(|chunk| chunk == &tag[..chunk.len()])
    }

    /// The (term, unit) a unit's first 16 bytes name, when it has that many.
    #[must_use]
    pub fn named_by(unit: &[u8]) -> Option<(u32, u64)> {
        let term = unit.get(4..8)?.try_into().ok()?;
        let index = unit.get(8..16)?.try_into().ok()?;
        Some((u32::from_le_bytes(term), u64::from_le_bytes(index)))
    }

    /// A hash of the term, the unit and the write (the splitmix64 finalizer over them).
    fn check(self) -> u32 {
        let mut mixed = self.unit.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (u64::from(self.term) << 32 | u64::from(self.write));
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^= mixed >> 31;
        let folded = (mixed ^ (mixed >> 32)) & u64::from(u32::MAX);
        u32::try_from(folded).unwrap_or(u32::MAX)
    }
}

/// What every unit must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Per term, per unit: how many times it was written after the format.
    writes: Vec<Vec<u32>>,
    /// The units that hold a copy of another unit's content, and that content.
    copies: HashMap<(usize, u64), Tag>,
}

impl Ledger {
    /// Adds the next term, of `units` units, each holding its format tag.
    pub fn add_term(&mut self, units: usize) {
        self.writes.push(vec![0; units]);
    }

    /// Records a write of `unit` and returns the tag to write into it.
    ///
    /// # Errors
    /// [`EngineError::Invariant`] for a unit the ledger does not know.
    pub fn stamp(&mut self, unit: &UnitRef) -> Result<Tag, EngineError> {
        let term = term_index(unit.term)?;
        let count = self.writes_mut(unit)?;
        *count = count.wrapping_add(1);
        let write = *count;
        self.copies.remove(&(unit.term, unit.index));
        Ok(Tag {
            term,
            unit: unit.index,
            write,
        })
    }

    /// Records that `to` now holds what `from` holds.
    ///
    /// # Errors
    /// As [`Ledger::stamp`].
    pub fn copy(&mut self, from: &UnitRef, to: &UnitRef) -> Result<(), EngineError> {
        let content = self.expected(from.term, from.index)?;
        self.writes_mut(to)?;
        self.copies.insert((to.term, to.index), content);
        Ok(())
    }

    /// What unit `index` of term `term` must hold.
    ///
    /// # Errors
    /// As [`Ledger::stamp`].
    pub fn expected(&self, term: usize, index: u64) -> Result<Tag, EngineError> {
        if let Some(tag) = self.copies.get(&(term, index)) {
            return Ok(*tag);
        }
        let write = usize::try_from(index)
            .ok()
            .and_then(|i| self.writes.get(term)?.get(i))
            .ok_or_else(|| unknown(term, index))?;
        Ok(Tag {
            term: term_index(term)?,
            unit: index,
            write: *write,
        })
    }

    fn writes_mut(&mut self, unit: &UnitRef) -> Result<&mut u32, EngineError> {
        usize::try_from(unit.index)
            .ok()
            .and_then(|i| self.writes.get_mut(unit.term)?.get_mut(i))
            .ok_or_else(|| unknown(unit.term, unit.index))
    }
}

fn term_index(term: usize) -> Result<u32, EngineError> {
    u32::try_from(term)
        .map_err(|_| EngineError::Invariant(format!("term {term} does not fit a tag's 32 bits")))
}

fn unknown(term: usize, index: u64) -> EngineError {
    EngineError::Invariant(format!(
        "unit {index} of term {term} is not in the ledger: it was never formatted"
    ))
}

/// One unit that does not hold what the ledger says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The term's index.
    pub term: usize,
    /// The term as `state holding`.
    pub name: String,
    /// The unit's index in its term.
    pub index: u64,
    /// Its arena.
    pub space: Space,
    /// Its first byte in the arena.
    pub offset: u64,
    /// Its bytes.
    pub bytes: u64,
    /// What it must hold.
    pub expected: Tag,
    /// What it holds instead.
    pub found: Found,
}

/// What a unit that broke holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Its first 16 bytes are a whole tag, of this write of another unit (or of itself).
    Tag(Tag),
    /// Its first bytes (up to 16), which are no whole tag: a unit smaller than a tag, or one
    /// overwritten in part.
    Bytes(Vec<u8>),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` unit {} ({} bytes {}..{}) must hold the tag of term {}, unit {}, write {}",
            self.name,
            self.index,
            self.space.name(),
            self.offset,
            u128::from(self.offset) + u128::from(self.bytes),
            self.expected.term,
            self.expected.unit,
            self.expected.write,
        )?;
        match &self.found {
            Found::Tag(tag) => write!(
                f,
                ", and holds that of term {}, unit {}, write {}",
                tag.term, tag.unit, tag.write
            ),
            Found::Bytes(bytes) => {
                f.write_str(", and holds")?;
                for byte in bytes {
                    write!(f, " {byte:02x}")?;
                }
                f.write_str(", no whole tag")
            }
        }
    }
}

/// The outcome of the final check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagCheck {
    /// Units read back (for the prompt-lookup index, sequence tables).
    pub checked: u64,
    /// Units that did not hold their tag.
    pub broken: u64,
    /// The first few of them, in plan order.
    pub first: Vec<Mismatch>,
}

impl TagCheck {
    /// How many mismatches [`TagCheck::first`] keeps.
    pub const KEPT: usize = 8;

    /// Every unit held its tag.
    #[must_use]
    pub fn intact(&self) -> bool {
        self.broken == 0
    }
}

/// Reads back every unit of every term of `layout` from `memory` and compares it with what the
/// ledger says it holds.
///
/// # Errors
/// [`EngineError::Memory`] for a unit outside its arena, [`EngineError::Invariant`] for one the
/// ledger does not know.
pub fn check(layout: &Layout, memory: &Memory, ledger: &Ledger) -> Result<TagCheck, EngineError> {
    let mut outcome = TagCheck::default();
    for term in 0..layout.term_count() {
        let space = layout.space(term);
        let buffer = memory.buffer(space);
        for unit in layout.units(term) {
            outcome.checked += 1;
            let expected = ledger.expected(term, unit.index)?;
            let bytes = buffer.get(&unit.region)?;
            if expected.is_in(bytes) {
                continue;
            }
            outcome.broken += 1;
            if outcome.first.len() < TagCheck::KEPT {
                outcome.first.push(Mismatch {
                    term,
                    name: layout.term_name(term),
                    index: unit.index,
                    space,
                    offset: unit.region.offset,
                    bytes: unit.region.bytes,
                    expected,
                    found: identify(bytes, ledger),
                });
            }
        }
    }
    Ok(outcome)
}

/// What `bytes` hold: the tag of a write of the unit their first 16 bytes name, if they are
/// one (every write the ledger has seen of that unit is tried), else their first bytes.
fn identify(bytes: &[u8], ledger: &Ledger) -> Found {
    let head = &bytes[..bytes.len().min(TAG_BYTES)];
    let whole = Tag::named_by(bytes).and_then(|(term, unit)| {
        let writes = usize::try_from(term)
            .ok()
            .and_then(|t| ledger.writes.get(t))
            .and_then(|units| units.get(usize::try_from(unit).ok()?))?;
        (0..=*writes)
            .map(|write| Tag { term, unit, write })
            .find(|tag| tag.bytes() == head)
    });
    whole.map_or_else(|| Found::Bytes(head.to_vec()), Found::Tag)
}

#[cfg(test)]
mod tests {
    use metrale_circuit::{Region, Space, StateDtype};

    use super::*;

    #[test]
    fn a_tag_fills_its_unit_and_shortens_for_small_ones() {
        let tag = Tag {
            term: 3,
            unit: 17,
            write: 0,
        };
        let mut unit = vec![0; 40];
        tag.fill(&mut unit);
        assert!(tag.is_in(&unit));
        assert_eq!(Tag::named_by(&unit), Some((3, 17)));
        assert_eq!(&unit[16..32], &tag.bytes());
        assert_eq!(&unit[32..], &tag.bytes()[..8]);
        // One byte changed anywhere, and the unit no longer holds its tag.
        unit[37] ^= 1;
        assert!(!tag.is_in(&unit));
        // A one-byte unit holds the check's first byte, which depends on all three.
        let mut small = [0_u8; 1];
        tag.fill(&mut small);
        assert_eq!(small[0], tag.bytes()[0]);
        assert!(tag.is_in(&small));
        assert_eq!(Tag::named_by(&small), None);
        let others = [
            Tag { term: 4, ..tag },
            Tag { unit: 18, ..tag },
            Tag { write: 1, ..tag },
        ];
        for other in others {
            assert_ne!(other.bytes()[..4], tag.bytes()[..4], "{other:?}");
        }
    }

    #[test]
    fn the_ledger_follows_writes_and_copies() {
        let mut ledger = Ledger::default();
        ledger.add_term(2);
        ledger.add_term(1);
        let region = Region {
            offset: 0,
            bytes: 1,
            units: 1,
            dtype: StateDtype::U8,
            unit_bytes: 1,
            space: Space::Device,
            inner: 1,
        };
        let unit = |term, index| UnitRef {
            term,
            index,
            region,
        };
        assert_eq!(ledger.expected(0, 1).unwrap().write, 0);
        let written = ledger.stamp(&unit(0, 1)).unwrap();
        assert_eq!((written.term, written.unit, written.write), (0, 1, 1));
        ledger.copy(&unit(0, 1), &unit(1, 0)).unwrap();
        assert_eq!(ledger.expected(1, 0).unwrap(), written);
        // A new write of the copy gives it its own tag again.
        let own = ledger.stamp(&unit(1, 0)).unwrap();
        assert_eq!(ledger.expected(1, 0).unwrap(), own);
        assert_eq!((own.term, own.unit, own.write), (1, 0, 1));
        assert!(ledger.stamp(&unit(1, 1)).is_err());
        assert!(ledger.expected(2, 0).is_err());
    }
}
