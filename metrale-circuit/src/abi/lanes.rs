//! The layout of a generated plan, summed class by class: [`size_class`] sizes one class by
//! the one sizing law and adds its terms to [`Lanes`]; [`first_fault`] reports the class that
//! could not be sized, as the dynamic plan would; [`ClassSize::take`] then places each term
//! with one add; `plan::replay` is the exact layout, run only when a sum could overflow.
//!
//! Invariants:
//! - Sizes come from `sizing::size_term`, stored dtypes from `sizing::term_dtype` (through
//!   `Unit::stored`) and offsets from the one layout law (`layout::Placer`): a generated plan
//!   and the dynamic plan agree term for term, and on the first error.
//! - Every sum [`ClassSize::take`] adds without a check was checked by [`Lanes`] first.
#![allow(
    rustdoc::private_intra_doc_links,
    reason = "a hidden module, read in the source: its docs link the private laws it calls"
)]

use super::table::SizeClass;
use crate::law::layout::{Arena, check_align};
use crate::law::sizing::{TermSpec, size_term};
use crate::law::{Holding, Region, SizeFault, Space};
use crate::model::{Lifetime, Reach, StateInputs, StateKind};
use crate::plan::{PlanError, TermInfo, Unit};

/// Checks a plan's alignment, first, as the dynamic plan does.
///
/// # Errors
/// [`PlanError::BadAlign`] when `align` is not a nonzero power of two.
pub const fn valid_align(align: u64) -> Result<(), PlanError> {
    if check_align(align) {
        Ok(())
    } else {
        Err(PlanError::BadAlign { align })
    }
}

/// One size class, sized under the plan inputs: the region each of its terms has (at offset
/// 0), whether its inputs give it any term, and where it is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassSize {
    /// Units, bytes and dtype of each term of the class; offset 0.
    pub region: Region,
    /// `false` when the inputs give the class no term (its terms are empty regions).
    pub present: bool,
    /// All ones when present, zero when not: masks an absent term's offset to 0 without a
    /// branch.
    pub keep: u64,
    /// The arena.
    pub space: Space,
    /// The lifetime group.
    pub lifetime: Lifetime,
    /// The room each term takes in its group: its bytes rounded up to the alignment; 0 when
    /// absent. Set by [`size_class`].
    pub stride: u64,
    /// Why the class could not be sized, if it could not.
    pub fault: Option<SizeFault>,
}

impl ClassSize {
    /// A term the plan's pipeline stage does not hold: an empty region at offset 0 that takes
    /// no room (a block instance's `lay` reads these for a layer another rank holds).
    pub const ABSENT: Self = Self {
        region: Region::EMPTY,
        present: false,
        keep: 0,
        space: Space::Device,
        lifetime: Lifetime::Model,
        stride: 0,
        fault: None,
    };

    /// The region of the next term of this class in the group whose cursor is `cursor`, and
    /// the cursor moved past it (see [`Lanes`]). An absent term is empty at offset 0 and
    /// takes no room. Wrapping arithmetic: [`Lanes::finish`] has checked every sum.
    #[must_use]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "one call per term of a generated plan's hot path"
    )]
    pub const fn take(&self, cursor: &mut u64) -> Region {
        let offset = *cursor & self.keep;
        *cursor = cursor.wrapping_add(self.stride);
        Region {
            offset,
            space: self.space,
            ..self.region
        }
    }
}

/// The layout groups of a plan, (space, lifetime) in layout order: device then host, each
/// in [`Lifetime::LAYOUT_ORDER`]. A plan's terms are laid out group by group.
pub const GROUPS: usize = Space::ALL.len() * Lifetime::LAYOUT_ORDER.len();

/// The layout group of the terms of a state of `kind` holding `holding`, declared with
/// `lifetime`: its rank among the groups of [`GROUPS`]. The generator writes it into each
/// block's `lay` and each [`SizeClass`].
#[must_use]
pub const fn group(kind: StateKind, holding: Holding, lifetime: Lifetime) -> usize {
    let key = TermInfo::new("", kind, holding, lifetime).layout_key();
    let mut space = 0;
    while space < Space::ALL.len() - 1 && Space::ALL[space] as usize != key.space as usize {
        space += 1;
    }
    let mut rank = 0;
    while rank < Lifetime::LAYOUT_ORDER.len() - 1
        && Lifetime::LAYOUT_ORDER[rank] as usize != key.lifetime as usize
    {
        rank += 1;
    }
    space * Lifetime::LAYOUT_ORDER.len() + rank
}

/// The layout of a generated plan, summed class by class as [`size_class`] sizes them.
///
/// Every offset is a multiple of `align`, so the dynamic layout's rounding of the cursor
/// before each term is the same as rounding each term's bytes after it: a term's
/// offset is its group's start plus the strides (bytes rounded up to `align`) of the terms
/// before it in its group, in plan order, and a group's room is the sum over its classes of
/// `stride x count`. Those sums are checked here, once per class, so placing a term
/// ([`ClassSize::take`]) is one add that cannot wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lanes {
    align: u64,
    room: [u64; GROUPS],
    lifetime_bytes: [[u64; 4]; 2],
    fits: bool,
}

impl Lanes {
    /// No class yet, offsets multiples of `align` (a power of two: see [`valid_align`]).
    #[must_use]
    pub const fn new(align: u64) -> Self {
        Self {
            align,
            room: [0; GROUPS],
            lifetime_bytes: [[0; 4]; 2],
            fits: true,
        }
    }

    /// Adds the `count` terms of a sized class to `group`, and sets the class's stride.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "part of `size_class`, inlined with a constant class"
    )]
    const fn add(&mut self, sized: &mut ClassSize, count: u64, group: usize) {
        let bytes = sized.region.bytes;
        // The wrapped stride is only used when a sum below overflows, and then the plan
        // replays the layout instead.
        sized.stride = bytes.wrapping_add(self.align - 1) & !(self.align - 1);
        if sized.stride < bytes {
            self.fits = false;
        }
        match sized.stride.checked_mul(count) {
            Some(room) => match self.room[group].checked_add(room) {
                Some(sum) => self.room[group] = sum,
                None => self.fits = false,
            },
            None => self.fits = false,
        }
        let cell = &mut self.lifetime_bytes[sized.space as usize][sized.lifetime as usize];
        match bytes.checked_mul(count) {
            Some(held) => match cell.checked_add(held) {
                Some(sum) => *cell = sum,
                None => self.fits = false,
            },
            None => self.fits = false,
        }
    }

    /// Each group's start (the cursor of its first term), and the arena; `None` for the arena
    /// when a sum overflows `u64`, and the plan must replay the layout ([`replay`]) for the
    /// exact error.
    #[must_use]
    pub const fn finish(&self) -> ([u64; GROUPS], Option<Arena>) {
        let mut cursors = [0u64; GROUPS];
        let mut ends = [0u64; 2];
        let mut fits = self.fits;
        let per_space = Lifetime::LAYOUT_ORDER.len();
        let mut group = 0;
        while group < GROUPS {
            let space = group / per_space;
            cursors[group] = ends[space];
            match ends[space].checked_add(self.room[group]) {
                Some(end) => ends[space] = end,
                None => fits = false,
            }
            group += 1;
        }
        let arena = if fits {
            Some(Arena::new(
                self.align,
                ends[0],
                ends[1],
                self.lifetime_bytes,
            ))
        } else {
            None
        };
        (cursors, arena)
    }
}

/// A class's reach (`SizeClass::reach`, indexing `reaches`, the token counts a generated
/// module computes) as the size law takes it: its sliding window, attention chunk or fixed
/// tokens.
///
/// # Errors
/// The fault of the count it indexes.
pub const fn reach_of<const W: usize>(
    reach: Option<Reach<usize>>,
    reaches: &[Result<u64, SizeFault>; W],
) -> Result<Option<Reach>, SizeFault> {
    match reach {
        None => Ok(None),
        Some(Reach::Window(i)) => match reaches[i] {
            Ok(tokens) => Ok(Some(Reach::Window(tokens))),
            Err(fault) => Err(fault),
        },
        Some(Reach::Chunk(i)) => match reaches[i] {
            Ok(tokens) => Ok(Some(Reach::Chunk(tokens))),
            Err(fault) => Err(fault),
        },
        Some(Reach::Fixed(i)) => match reaches[i] {
            Ok(tokens) => Ok(Some(Reach::Fixed(tokens))),
            Err(fault) => Err(fault),
        },
    }
}

/// Sizes one class of a generated plan by [`size_term`] and adds its `count` held terms
/// (`Held`) to `lanes`; a class that cannot be sized keeps its fault for [`first_fault`],
/// and one with no held term is absent without being sized. Inlined into a generated `StatePlan::new` with a constant
/// `class`, the size law folds down to the arithmetic of that one kind and holding.
#[must_use]
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "called once per class with a constant class: inlining folds the size law"
)]
pub const fn size_class<const U: usize, const W: usize>(
    class: &SizeClass,
    count: u64,
    units: &[Result<Unit, SizeFault>; U],
    reaches: &[Result<u64, SizeFault>; W],
    inputs: &StateInputs<'_>,
    lanes: &mut Lanes,
) -> ClassSize {
    let mut sized = ClassSize {
        region: Region::EMPTY,
        present: false,
        keep: 0,
        space: Space::of_kind(class.kind),
        lifetime: class.holding.lifetime(class.lifetime),
        stride: 0,
        fault: None,
    };
    // A class the plan's stage holds no term of is not sized: another rank sizes it.
    if count == 0 {
        return sized;
    }
    let reach = reach_of(class.reach, reaches);
    // The unit of the state's format as its terms store it (a draft KV side in
    // `draft_kv_dtype`), by the dynamic plan's rule and in its order.
    let unit = match units[class.unit] {
        Ok(unit) => unit.stored(class.kind, class.section, inputs),
        Err(fault) => Err(fault),
    };
    let size = match (unit, reach) {
        (Ok(unit), Ok(reach)) => {
            sized.region.dtype = unit.dtype;
            sized.region.unit_bytes = unit.bytes;
            size_term(
                &TermSpec {
                    kind: class.kind,
                    holding: class.holding,
                    section: class.section,
                    verify: class.verify,
                    unit_bytes: unit.bytes,
                    reach,
                },
                inputs,
            )
        }
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    };
    match size {
        Ok(Some(size)) => {
            sized.region.units = size.units;
            sized.region.bytes = size.bytes;
            sized.region.inner = size.inner;
            sized.present = true;
            sized.keep = u64::MAX;
            lanes.add(&mut sized, count, class.group);
        }
        Ok(None) => {}
        Err(fault) => sized.fault = Some(fault),
    }
    sized
}

/// The error of the class that could not be sized by [`size_class`] whose first term
/// (`first_row`) comes first in plan order, naming that term's state, as the dynamic plan
/// names it; `None` when every class was sized.
#[must_use]
pub const fn first_fault<const C: usize>(
    classes: &[ClassSize; C],
    first_row: &[usize; C],
    terms: &[TermInfo],
) -> Option<PlanError> {
    let mut first: Option<(usize, SizeFault)> = None;
    let mut c = 0;
    while c < C {
        if let Some(fault) = classes[c].fault {
            let earlier = match first {
                Some((row, _)) => row < first_row[c],
                None => false,
            };
            if !earlier {
                first = Some((first_row[c], fault));
            }
        }
        c += 1;
    }
    match first {
        Some((row, fault)) => Some(PlanError::of_fault(fault, state_of(terms, row))),
        None => None,
    }
}

/// The state of row `row` of `terms` (`""` past the end, which a generated table never is).
pub(super) const fn state_of(terms: &[TermInfo], row: usize) -> &'static str {
    if row < terms.len() {
        terms[row].state
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateDtype;

    /// A present class of `bytes` per term, in `space` and `lifetime`.
    fn sized(bytes: u64, space: Space, lifetime: Lifetime) -> ClassSize {
        ClassSize {
            region: Region {
                offset: 0,
                bytes,
                units: bytes / 4,
                dtype: StateDtype::F32,
                unit_bytes: 4,
                space: Space::Device,
                inner: 1,
            },
            present: true,
            keep: u64::MAX,
            space,
            lifetime,
            stride: 0,
            fault: None,
        }
    }

    #[test]
    fn groups_follow_the_layout_order() {
        // Device model, sequence, snapshot, verify are 0..4; host starts at 4.
        assert_eq!(
            group(StateKind::PagedKv, Holding::Blocks, Lifetime::Model),
            0
        );
        assert_eq!(
            group(StateKind::Recurrent, Holding::Live, Lifetime::Sequence),
            1
        );
        assert_eq!(
            group(
                StateKind::PrefixSnapshot,
                Holding::Cache,
                Lifetime::Snapshot
            ),
            2
        );
        // A verify intermediate lives in the verify group whatever the state declares.
        assert_eq!(
            group(StateKind::Recurrent, Holding::Steps, Lifetime::Sequence),
            3
        );
        assert_eq!(
            group(
                StateKind::PromptLookupIndex,
                Holding::Cache,
                Lifetime::Sequence
            ),
            5
        );
        assert_eq!(GROUPS, 8);
    }

    #[test]
    fn lanes_place_terms_as_the_dynamic_layout_does() {
        // Two model terms of 1,280 B, then three sequence terms of 20,000 B, align 256.
        // Placed one by one: 0, 1,280 | 2,560, 22,784 (22,560 rounded up), 43,008 (42,784
        // rounded up); the last ends at 63,008, so the arena is 63,232.
        let mut lanes = Lanes::new(256);
        let mut kv = sized(1_280, Space::Device, Lifetime::Model);
        let mut h = sized(20_000, Space::Device, Lifetime::Sequence);
        lanes.add(&mut kv, 2, 0);
        lanes.add(&mut h, 3, 1);
        assert_eq!((kv.stride, h.stride), (1_280, 20_224));
        let (mut cursors, arena) = lanes.finish();
        assert_eq!(cursors[..4], [0, 2_560, 63_232, 63_232]);
        assert_eq!(cursors[4..], [0, 0, 0, 0]);
        let arena = arena.expect("fits");
        assert_eq!((arena.device_bytes, arena.host_bytes), (63_232, 0));
        assert_eq!(arena.lifetime_bytes(Space::Device, Lifetime::Model), 2_560);
        assert_eq!(
            arena.lifetime_bytes(Space::Device, Lifetime::Sequence),
            60_000
        );
        let offsets = [
            kv.take(&mut cursors[0]).offset,
            kv.take(&mut cursors[0]).offset,
            h.take(&mut cursors[1]).offset,
            h.take(&mut cursors[1]).offset,
            h.take(&mut cursors[1]).offset,
        ];
        assert_eq!(offsets, [0, 1_280, 2_560, 22_784, 43_008]);
        let region = h.take(&mut cursors[1]);
        assert_eq!((region.bytes, region.units), (20_000, 5_000));
    }

    #[test]
    fn an_absent_term_is_empty_at_zero_and_takes_no_room() {
        let mut absent = sized(0, Space::Device, Lifetime::Sequence);
        absent.present = false;
        absent.keep = 0;
        let mut cursor = 4_096;
        assert_eq!(
            absent.take(&mut cursor),
            Region {
                offset: 0,
                ..absent.region
            }
        );
        assert_eq!(cursor, 4_096);
        // A present term of zero bytes sits at the cursor and takes no room either.
        let mut empty = sized(0, Space::Device, Lifetime::Sequence);
        let mut lanes = Lanes::new(256);
        lanes.add(&mut empty, 1, 1);
        assert_eq!(empty.take(&mut cursor).offset, 4_096);
        assert_eq!(cursor, 4_096);
    }

    #[test]
    fn lanes_refuse_sums_that_overflow() {
        // Rounding the bytes up overflows.
        let mut lanes = Lanes::new(256);
        let mut huge = sized(u64::MAX - 10, Space::Device, Lifetime::Model);
        lanes.add(&mut huge, 1, 0);
        assert_eq!(lanes.finish().1, None);
        // strides x count overflows.
        let mut lanes = Lanes::new(1);
        let mut many = sized(1 << 40, Space::Device, Lifetime::Model);
        lanes.add(&mut many, 1 << 30, 0);
        assert_eq!(lanes.finish().1, None);
        // Each group fits, their sum does not.
        let mut lanes = Lanes::new(1);
        let mut half = sized(1 << 63, Space::Device, Lifetime::Model);
        let mut other = sized(1 << 63, Space::Device, Lifetime::Sequence);
        lanes.add(&mut half, 1, 0);
        lanes.add(&mut other, 1, 1);
        assert_eq!(lanes.finish().1, None);
        // The same two in different arenas fit.
        let mut lanes = Lanes::new(1);
        let mut host = sized(1 << 63, Space::Host, Lifetime::Sequence);
        lanes.add(&mut half, 1, 0);
        lanes.add(&mut host, 1, 5);
        let arena = lanes.finish().1.expect("fits");
        assert_eq!((arena.device_bytes, arena.host_bytes), (1 << 63, 1 << 63));
    }

    #[test]
    fn the_first_fault_in_plan_order_is_reported() {
        let term = |state| {
            TermInfo::new(
                state,
                StateKind::Recurrent,
                Holding::Live,
                Lifetime::Sequence,
            )
        };
        let terms = [term("l0.a"), term("l0.b"), term("l0.c"), term("l1.a")];
        let ok = sized(16, Space::Device, Lifetime::Sequence);
        let mut classes = [ok; 3];
        assert_eq!(first_fault(&classes, &[0, 1, 2], &terms), None);
        classes[1].fault = Some(SizeFault::Overflow);
        classes[2].fault = Some(SizeFault::MissingVerify);
        // Class 2's first term comes first in plan order.
        assert_eq!(
            first_fault(&classes, &[0, 3, 2], &terms),
            Some(PlanError::MissingVerify { state: "l0.c" })
        );
        assert_eq!(
            first_fault(&classes, &[0, 1, 2], &terms),
            Some(PlanError::Overflow { state: "l0.b" })
        );
    }
}
