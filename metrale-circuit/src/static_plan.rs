//! Support for the plans `metrale-codegen` generates: the static description of a plan's terms
//! ([`TermInfo`], [`SizeClass`]), the region groups a generated plan's fields hold, the checked
//! `const fn` arithmetic generated size functions are written in, and [`build`], which sizes
//! and lays out a generated plan with the same law as the dynamic [`crate::StatePlan`].
//!
//! Owner: metrale-circuit. Generated code calls this module; engines read its types.
//! Invariants:
//! - [`build`] sizes with [`size_term`] and places with [`place_all`]: a generated plan and
//!   the dynamic plan of the same circuit and inputs agree term for term, and on the first error.
//! - Everything here is a `const fn` without allocation.

use crate::layout::{Arena, LayoutKey, check_align, layout_order, place_all};
use crate::sizing::{Size, TermSpec, size_term, unit_bytes};
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

/// The size class of every row of a generated plan's table.
#[must_use]
pub const fn term_classes<const N: usize>(table: &[(&'static str, usize); N]) -> [usize; N] {
    let mut classes = [0; N];
    let mut i = 0;
    while i < N {
        classes[i] = table[i].1;
        i += 1;
    }
    classes
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

    /// A recurrent state without verify intermediates.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Live {
        /// The live state, one unit per sequence slot.
        pub live: Region,
    }

    /// One side of a paged KV cache.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Blocks {
        /// Its blocks, one unit per token; empty without the section's KV inputs.
        pub blocks: Region,
    }

    /// A cache.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Cache {
        /// Its units; empty when its cache inputs are absent.
        pub cache: Region,
    }
}

/// `Ok(value)`: a literal or dim read by a generated size function.
///
/// # Errors
/// Never; the `Result` lets it compose with [`mul`], [`add`] and [`ceil_div`].
pub const fn value(value: u64) -> Result<u64, SizeFault> {
    Ok(value)
}

/// The checked product of two sizes.
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Overflow`].
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
pub const fn ceil_div(a: u64, b: u64) -> Result<u64, SizeFault> {
    if b == 0 {
        Err(SizeFault::DivisionByZero)
    } else {
        Ok(a.div_ceil(b))
    }
}

/// The layout order of a generated plan's terms (see [`layout_order`]), for a `const` item.
#[must_use]
pub const fn order<const N: usize>(terms: &[TermInfo; N]) -> [usize; N] {
    let keys = keys(terms);
    let mut order = [0; N];
    layout_order(&keys, &mut order);
    order
}

/// Every term's layout key.
const fn keys<const N: usize>(terms: &[TermInfo; N]) -> [LayoutKey; N] {
    let mut keys = [LayoutKey {
        space: Space::Device,
        lifetime: Lifetime::Model,
    }; N];
    let mut i = 0;
    while i < N {
        keys[i] = terms[i].layout_key();
        i += 1;
    }
    keys
}

/// The static description of one generated plan.
#[derive(Debug, Clone, Copy)]
pub struct PlanShape<'a, const N: usize, const C: usize> {
    /// Every term, in plan order.
    pub terms: &'a [TermInfo; N],
    /// The size class of each term.
    pub term_class: &'a [usize; N],
    /// Every size class.
    pub classes: &'a [SizeClass; C],
    /// The layout order ([`order`]).
    pub order: &'a [usize; N],
}

/// A generated plan's regions, in plan order, and its arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built<const N: usize> {
    /// One region per term; an absent term is empty at offset 0.
    pub regions: [Region; N],
    /// The arena sizes and totals.
    pub arena: Arena,
}

/// Sizes and lays out a generated plan: each size class once by [`size_term`], then every term
/// in plan order (the first fault, in plan order, is the error), then the offsets by
/// [`place_all`].
///
/// # Errors
/// [`PlanError::BadAlign`], or the first term's fault naming its state.
pub const fn build<const N: usize, const C: usize, const U: usize>(
    shape: &PlanShape<'_, N, C>,
    units: &[Result<Unit, SizeFault>; U],
    inputs: &StateInputs<'_>,
    align: u64,
) -> Result<Built<N>, PlanError> {
    if !check_align(align) {
        return Err(PlanError::BadAlign { align });
    }
    let mut sizes: [Result<Option<Size>, SizeFault>; C] = [Ok(None); C];
    let mut c = 0;
    while c < C {
        let class = &shape.classes[c];
        sizes[c] = match units[class.unit] {
            Ok(unit) => size_term(
                &TermSpec {
                    kind: class.kind,
                    holding: class.holding,
                    section: class.section,
                    verify: class.verify,
                    unit_bytes: unit.bytes,
                },
                inputs,
            ),
            Err(fault) => Err(fault),
        };
        c += 1;
    }
    let empty = Region {
        offset: 0,
        bytes: 0,
        units: 0,
        dtype: StateDtype::U8,
    };
    let mut regions = [empty; N];
    let mut present = [false; N];
    let mut i = 0;
    while i < N {
        let class = shape.term_class[i];
        let dtype = match units[shape.classes[class].unit] {
            Ok(unit) => unit.dtype,
            Err(_) => StateDtype::U8,
        };
        match sizes[class] {
            Ok(Some(size)) => {
                regions[i] = Region {
                    offset: 0,
                    bytes: size.bytes,
                    units: size.units,
                    dtype,
                };
                present[i] = true;
            }
            Ok(None) => regions[i].dtype = dtype,
            Err(fault) => return Err(PlanError::of_fault(fault, shape.terms[i].state)),
        }
        i += 1;
    }
    let keys = keys(shape.terms);
    match place_all(&keys, &present, shape.order, align, &mut regions) {
        Ok(arena) => Ok(Built { regions, arena }),
        Err(i) => Err(PlanError::Overflow {
            state: shape.terms[i].state,
        }),
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
