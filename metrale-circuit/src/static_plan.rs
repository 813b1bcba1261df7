//! Support for the plans `metrale-codegen` generates: the static description of a plan's terms
//! ([`TermInfo`], [`SizeClass`]), the region groups a generated plan's fields hold, the checked
//! `const fn` arithmetic generated size functions are written in, and the two steps a generated
//! `StatePlan::new` takes: [`size_classes`] and a [`Placer`], the same law as the dynamic
//! [`crate::StatePlan`].
//!
//! Owner: metrale-circuit. Generated code calls this module; engines read its types.
//! Invariants:
//! - Sizes come from [`size_term`] and offsets from [`place`]'s rounding, in the order
//!   [`place_all`] uses: a generated plan and the dynamic plan of the same circuit and inputs
//!   agree term for term, and on the first error.
//! - Everything here is a `const fn` without allocation.

#[cfg(doc)]
use crate::layout::place_all;
use crate::layout::{Arena, LayoutKey, align_up, check_align, place};
use crate::sizing::{TermSpec, size_term, unit_bytes};
use crate::{
    Holding, Lifetime, PlanError, Region, Section, SizeFault, Space, StateDtype, StateInputs,
    StateKind, VerifySteps,
};

/// One term of a generated plan, known at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermInfo {
    /// The state's id (`l0.gdn.h`).
    pub state: &'static str,
    /// The state's kind.
    pub kind: StateKind,
    /// What the term holds.
    pub holding: Holding,
    /// How long its units live.
    pub lifetime: Lifetime,
    /// The arena it sits in.
    pub space: Space,
}

impl TermInfo {
    /// The term of `state` holding `holding`, its lifetime and space derived from its kind and
    /// `declared` lifetime by the same rules as the dynamic plan.
    #[must_use]
    pub const fn new(
        state: &'static str,
        kind: StateKind,
        holding: Holding,
        declared: Lifetime,
    ) -> Self {
        Self {
            state,
            kind,
            holding,
            lifetime: holding.lifetime(declared),
            space: Space::of_kind(kind),
        }
    }

    /// Where the layout puts it.
    #[must_use]
    pub const fn layout_key(&self) -> LayoutKey {
        LayoutKey {
            space: self.space,
            lifetime: self.lifetime,
        }
    }
}

/// Terms that are sized alike: every instance of one state of one block template, in one
/// section, holding one thing. A generated plan sizes each class once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeClass {
    /// The state's kind.
    pub kind: StateKind,
    /// What the terms hold.
    pub holding: Holding,
    /// Main model or draft head.
    pub section: Section,
    /// The verify intermediates the state declares.
    pub verify: Option<VerifySteps>,
    /// The state's declared lifetime.
    pub lifetime: Lifetime,
    /// Index of the state's [`Unit`] in the plan's unit list.
    pub unit: usize,
}

/// The [`TermInfo`] of every row of a generated plan's table (`(state id, size class)`).
#[must_use]
pub const fn terms<const N: usize, const C: usize>(
    table: &[(&'static str, usize); N],
    classes: &[SizeClass; C],
) -> [TermInfo; N] {
    let mut terms = [TermInfo {
        state: "",
        kind: StateKind::Recurrent,
        holding: Holding::Live,
        lifetime: Lifetime::Model,
        space: Space::Device,
    }; N];
    let mut i = 0;
    while i < N {
        let (state, class) = table[i];
        let class = &classes[class];
        terms[i] = TermInfo::new(state, class.kind, class.holding, class.lifetime);
        i += 1;
    }
    terms
}

/// The first row (in plan order) of every size class of a generated plan's table: a class's
/// fault is reported for that row's state, as the dynamic plan reports it.
#[must_use]
pub const fn first_rows<const N: usize, const C: usize>(
    table: &[(&'static str, usize); N],
) -> [usize; C] {
    let mut first = [usize::MAX; C];
    let mut i = N;
    while i > 0 {
        i -= 1;
        let class = table[i].1;
        if class < C {
            first[class] = i;
        }
    }
    first
}

/// One unit of a state: its bytes and its element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// `elements x dtype size`.
    pub bytes: u64,
    /// The element type.
    pub dtype: StateDtype,
}

impl Unit {
    /// The unit of `elements` elements of `dtype`.
    ///
    /// # Errors
    /// The elements' own fault, or [`SizeFault::Overflow`] when the bytes overflow.
    #[inline]
    pub const fn of(
        elements: Result<u64, SizeFault>,
        dtype: StateDtype,
    ) -> Result<Unit, SizeFault> {
        match elements {
            Ok(elements) => match unit_bytes(elements, dtype) {
                Ok(bytes) => Ok(Unit { bytes, dtype }),
                Err(fault) => Err(fault),
            },
            Err(fault) => Err(fault),
        }
    }
}

/// The field groups of a generated plan, one per kind of state, so that every term is a plain
/// field path (`plan.l0.gdn.h.live`, `plan.l3.attn.k.blocks`, `plan.head.lookup.cache`).
pub mod regions {
    use crate::Region;

    /// A recurrent state that keeps verify intermediates.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Recurrent {
        /// The live state, one unit per sequence slot.
        pub live: Region,
        /// The verify intermediates; empty without verify inputs.
        pub steps: Region,
        /// The state before a verify, one unit per verify slot; empty without verify inputs.
        pub checkpoint: Region,
    }

    impl Recurrent {
        /// Every term empty, at offset 0.
        pub const EMPTY: Self = Self {
            live: Region::EMPTY,
            steps: Region::EMPTY,
            checkpoint: Region::EMPTY,
        };
    }

    /// One side of a paged KV cache.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Blocks {
        /// Its blocks, one unit per token; empty without the section's KV inputs.
        pub blocks: Region,
    }

    impl Blocks {
        /// Every term empty, at offset 0.
        pub const EMPTY: Self = Self {
            blocks: Region::EMPTY,
        };
    }

    /// A cache.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Cache {
        /// Its units; empty when its cache inputs are absent.
        pub cache: Region,
    }

    impl Cache {
        /// Every term empty, at offset 0.
        pub const EMPTY: Self = Self {
            cache: Region::EMPTY,
        };
    }
}

/// `Ok(value)`: a literal or dim read by a generated size function.
///
/// # Errors
/// Never; the `Result` lets it compose with [`mul`], [`add`] and [`ceil_div`].
#[inline]
pub const fn value(value: u64) -> Result<u64, SizeFault> {
    Ok(value)
}

/// The checked product of two sizes.
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Overflow`].
#[inline]
pub const fn mul(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_mul(b) {
            Some(product) => Ok(product),
            None => Err(SizeFault::Overflow),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// The checked sum of two sizes.
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Overflow`].
#[inline]
pub const fn add(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_add(b) {
            Some(sum) => Ok(sum),
            None => Err(SizeFault::Overflow),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// `a / b` rounded up (a shape's `name/lit` or `name/name`).
///
/// # Errors
/// [`SizeFault::DivisionByZero`] when `b` is zero.
#[inline]
pub const fn ceil_div(a: u64, b: u64) -> Result<u64, SizeFault> {
    if b == 0 {
        Err(SizeFault::DivisionByZero)
    } else {
        Ok(a.div_ceil(b))
    }
}

/// How many terms each size class has.
#[must_use]
pub const fn class_counts<const N: usize, const C: usize>(
    table: &[(&'static str, usize); N],
) -> [u64; C] {
    let mut counts = [0; C];
    let mut i = 0;
    while i < N {
        if table[i].1 < C {
            counts[table[i].1] += 1;
        }
        i += 1;
    }
    counts
}

/// `align - 1`, the mask [`lay`] rounds with.
///
/// # Errors
/// [`PlanError::BadAlign`] when `align` is not a nonzero power of two.
pub const fn align_mask(align: u64) -> Result<u64, PlanError> {
    if check_align(align) {
        Ok(align - 1)
    } else {
        Err(PlanError::BadAlign { align })
    }
}

/// One step of a generated plan's layout ([`lay_all`]): places a term of `class` at `cursor`
/// rounded up by `mask`, and returns its offset (0 for an absent term, whose zero bytes leave
/// the cursor where the next term goes anyway). Wrapping, branch-free arithmetic: [`arena`]
/// accepts the result only when no sum can have wrapped, else the plan replays the layout
/// exactly ([`replay`]).
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "one call per term of a generated plan's hot path"
)]
pub const fn lay(cursor: &mut u64, class: &ClassSize, mask: u64) -> u64 {
    let offset = cursor.wrapping_add(mask) & !mask;
    *cursor = offset.wrapping_add(class.region.bytes);
    offset & class.keep
}

/// One term of a generated plan in layout order: its row (plan order), its size class and its
/// arena (0 device, 1 host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The term's row in plan order.
    pub row: usize,
    /// Its size class.
    pub class: usize,
    /// Its arena, as an index (`Space as usize`).
    pub space: usize,
}

/// Every term of a generated plan in layout order (see [`crate::layout::layout_order`]), for a
/// `const` item: the table [`lay_all`] walks.
#[must_use]
pub const fn steps<const N: usize, const C: usize>(
    table: &[(&'static str, usize); N],
    classes: &[SizeClass; C],
) -> [Step; N] {
    let mut keys = [LayoutKey {
        space: Space::Device,
        lifetime: Lifetime::Model,
    }; N];
    let mut i = 0;
    while i < N {
        let class = &classes[table[i].1];
        keys[i] = TermInfo::new(table[i].0, class.kind, class.holding, class.lifetime).layout_key();
        i += 1;
    }
    let mut order = [0; N];
    crate::layout::layout_order(&keys, &mut order);
    let mut steps = [Step {
        row: 0,
        class: 0,
        space: 0,
    }; N];
    let mut k = 0;
    while k < N {
        let row = order[k];
        steps[k] = Step {
            row,
            class: table[row].1,
            space: keys[row].space as usize,
        };
        k += 1;
    }
    steps
}

/// Lays out every term of a generated plan with [`lay`], in the layout order of `steps`:
/// writes each term's offset at its row of `offsets` and returns the arenas' ends.
#[must_use]
pub const fn lay_all<const N: usize, const C: usize>(
    steps: &[Step; N],
    classes: &[ClassSize; C],
    mask: u64,
    offsets: &mut [u64; N],
) -> [u64; 2] {
    // Steps come device first, then host: one pass per arena keeps its cursor in a register
    // (the cursor is the one dependency from term to term).
    let mut ends = [0u64; 2];
    let mut k = 0;
    let mut space = 0;
    while space < 2 {
        let mut cursor = 0u64;
        while k < N && steps[k].space == space {
            let step = steps[k];
            offsets[step.row] = lay(&mut cursor, &classes[step.class], mask);
            k += 1;
        }
        ends[space] = cursor;
        space += 1;
    }
    ends
}

/// Copies `regions` into `all` from index `at`, and returns the index after them (for a
/// generated plan's `regions()`, block instance by block instance).
#[must_use]
pub const fn put<const K: usize, const N: usize>(
    all: &mut [Region; N],
    at: usize,
    regions: [Region; K],
) -> usize {
    let mut k = 0;
    while k < K && at + k < N {
        all[at + k] = regions[k];
        k += 1;
    }
    at + K
}

/// The arena of a generated plan laid out by [`lay`]: the ends rounded up, the bytes per
/// (space, lifetime) summed per class. `None` unless `terms` terms of at most the largest
/// class's bytes, each after at most `align - 1` bytes of padding, fit in `u64`: then no [`lay`]
/// could have wrapped, and its offsets are the exact ones.
#[must_use]
pub const fn arena<const C: usize>(
    ends: [u64; 2],
    align: u64,
    classes: &[ClassSize; C],
    counts: &[u64; C],
    terms: u64,
) -> Option<Arena> {
    let mut largest = 0;
    let mut lifetime_bytes = [[0u64; 4]; 2];
    let mut c = 0;
    while c < C {
        if classes[c].present {
            let bytes = classes[c].region.bytes;
            if bytes > largest {
                largest = bytes;
            }
            let Some(total) = bytes.checked_mul(counts[c]) else {
                return None;
            };
            let cell = &mut lifetime_bytes[classes[c].space as usize][classes[c].lifetime as usize];
            let Some(sum) = cell.checked_add(total) else {
                return None;
            };
            *cell = sum;
        }
        c += 1;
    }
    let Some(step) = largest.checked_add(align) else {
        return None;
    };
    if terms.checked_mul(step).is_none() {
        return None;
    }
    let (Some(device), Some(host)) = (align_up(ends[0], align), align_up(ends[1], align)) else {
        return None;
    };
    Some(Arena::new(align, device, host, lifetime_bytes))
}

/// The slow, exact layout of a generated plan, term by term in `steps` with a [`Placer`]: run
/// only when the fast layout ([`lay_all`]) could have overflowed, to report the term
/// [`place_all`] reports.
///
/// # Errors
/// The [`PlanError::Overflow`] of the first term that cannot be placed.
pub const fn replay<const N: usize, const C: usize>(
    classes: &[ClassSize; C],
    steps: &[Step; N],
    terms: &[TermInfo; N],
    align: u64,
) -> Result<Arena, PlanError> {
    let mut placer = match Placer::new(align) {
        Ok(placer) => placer,
        Err(error) => return Err(error),
    };
    let mut k = 0;
    while k < N {
        placer.place(&classes[steps[k].class], steps[k].row);
        k += 1;
    }
    placer.finish(terms)
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
}

impl ClassSize {
    /// The region of a term of this class placed at `offset`.
    #[must_use]
    #[inline]
    pub const fn at(&self, offset: u64) -> Region {
        Region {
            offset,
            ..self.region
        }
    }
}

/// Sizes every class of a generated plan once, by [`size_term`].
///
/// # Errors
/// Of the classes that cannot be sized, the one whose first term (`first_row`) comes first in
/// plan order: its fault, naming that term's state, as the dynamic plan names it.
pub const fn size_classes<const C: usize, const U: usize>(
    classes: &[SizeClass; C],
    first_row: &[usize; C],
    units: &[Result<Unit, SizeFault>; U],
    inputs: &StateInputs<'_>,
    terms: &[TermInfo],
) -> Result<[ClassSize; C], PlanError> {
    let empty = ClassSize {
        region: Region {
            offset: 0,
            bytes: 0,
            units: 0,
            dtype: StateDtype::U8,
        },
        present: false,
        keep: 0,
        space: Space::Device,
        lifetime: Lifetime::Model,
    };
    let mut sized = [empty; C];
    let mut fault: Option<(usize, SizeFault)> = None;
    let mut c = 0;
    while c < C {
        let class = &classes[c];
        let size = match units[class.unit] {
            Ok(unit) => {
                sized[c].region.dtype = unit.dtype;
                size_term(
                    &TermSpec {
                        kind: class.kind,
                        holding: class.holding,
                        section: class.section,
                        verify: class.verify,
                        unit_bytes: unit.bytes,
                    },
                    inputs,
                )
            }
            Err(fault) => Err(fault),
        };
        sized[c].space = Space::of_kind(class.kind);
        sized[c].lifetime = class.holding.lifetime(class.lifetime);
        match size {
            Ok(Some(size)) => {
                sized[c].region.units = size.units;
                sized[c].region.bytes = size.bytes;
                sized[c].present = true;
                sized[c].keep = u64::MAX;
            }
            Ok(None) => {}
            Err(error) => {
                let earlier = match fault {
                    Some((row, _)) => row < first_row[c],
                    None => false,
                };
                if !earlier {
                    fault = Some((first_row[c], error));
                }
            }
        }
        c += 1;
    }
    match fault {
        Some((row, fault)) => Err(PlanError::of_fault(fault, state_of(terms, row))),
        None => Ok(sized),
    }
}

/// Lays out a generated plan one term at a time, in layout order, by [`place`]: the same steps
/// [`place_all`] takes for the dynamic plan. A failure is kept (the first one, by row) and
/// reported by [`Placer::finish`], so each term costs one call and no branch out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placer {
    align: u64,
    cursor: [u64; 2],
    last: [usize; 2],
    failed: Option<usize>,
    lifetime_bytes: [[u64; 4]; 2],
}

impl Placer {
    /// A placer for offsets that are multiples of `align`.
    ///
    /// # Errors
    /// [`PlanError::BadAlign`] when `align` is not a nonzero power of two.
    pub const fn new(align: u64) -> Result<Self, PlanError> {
        if !check_align(align) {
            return Err(PlanError::BadAlign { align });
        }
        Ok(Self {
            align,
            cursor: [0; 2],
            last: [0; 2],
            failed: None,
            lifetime_bytes: [[0; 4]; 2],
        })
    }

    /// Places the term at `row` (plan order) of `class`: its offset, or 0 for an absent term,
    /// which takes no room.
    #[inline]
    pub const fn place(&mut self, class: &ClassSize, row: usize) -> u64 {
        if !class.present || self.failed.is_some() {
            return 0;
        }
        let space = class.space as usize;
        let Some((offset, end)) = place(self.cursor[space], class.region.bytes, self.align) else {
            self.failed = Some(row);
            return 0;
        };
        let lifetime = class.lifetime as usize;
        let Some(sum) = self.lifetime_bytes[space][lifetime].checked_add(class.region.bytes) else {
            self.failed = Some(row);
            return 0;
        };
        self.lifetime_bytes[space][lifetime] = sum;
        self.cursor[space] = end;
        self.last[space] = row;
        offset
    }

    /// The arena, every term placed.
    ///
    /// # Errors
    /// [`PlanError::Overflow`] naming the first term that could not be placed, or the term that
    /// ends an arena whose final rounding overflows.
    pub const fn finish(&self, terms: &[TermInfo]) -> Result<Arena, PlanError> {
        if let Some(row) = self.failed {
            return Err(PlanError::Overflow {
                state: state_of(terms, row),
            });
        }
        let Some(device) = align_up(self.cursor[Space::Device as usize], self.align) else {
            return Err(PlanError::Overflow {
                state: state_of(terms, self.last[Space::Device as usize]),
            });
        };
        let Some(host) = align_up(self.cursor[Space::Host as usize], self.align) else {
            return Err(PlanError::Overflow {
                state: state_of(terms, self.last[Space::Host as usize]),
            });
        };
        Ok(Arena::new(self.align, device, host, self.lifetime_bytes))
    }
}

/// The state of row `row` of `terms` (`""` past the end, which a generated table never is).
const fn state_of(terms: &[TermInfo], row: usize) -> &'static str {
    if row < terms.len() {
        terms[row].state
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(mul(value(6), value(7)), Ok(42));
        assert_eq!(mul(value(u64::MAX), value(2)), Err(SizeFault::Overflow));
        assert_eq!(add(value(u64::MAX), value(1)), Err(SizeFault::Overflow));
        assert_eq!(
            add(ceil_div(5120, 0), value(1)),
            Err(SizeFault::DivisionByZero)
        );
        assert_eq!(ceil_div(5121, 128), Ok(41));
        assert_eq!(
            mul(value(0), Err(SizeFault::Overflow)),
            Err(SizeFault::Overflow)
        );
        assert_eq!(
            Unit::of(Ok(u64::MAX), StateDtype::F16),
            Err(SizeFault::Overflow)
        );
        assert_eq!(
            Unit::of(Ok(3), StateDtype::F16),
            Ok(Unit {
                bytes: 6,
                dtype: StateDtype::F16
            })
        );
    }
}
