//! A checkpoint's static table, the IR the generator builds and a generated module holds as
//! one `const`: its rows (each term's state id and size class, in plan order), its size
//! classes, where each position's rows start, and what follows from them at compile time (each
//! term's [`TermInfo`], each class's first row, the layout order). [`Table::new`] derives the
//! rest from the first three, so a generated module writes only those.
//!
//! Invariants:
//! - Rows are in plan order, which is position order (prologue, layer by layer, epilogue, draft):
//!   `position_rows` is sorted.
//! - Every row's class is below `C`.

use crate::law::layout::LayoutKey;
use crate::law::{Holding, Region, Space};
use crate::model::{Lifetime, Reach, Section, StateKind, VerifySteps};
use crate::plan::TermInfo;

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
    /// Index of the state's [`crate::plan::Unit`] in the plan's unit list.
    pub unit: usize,
    /// A KV side's sliding window or attention chunk: the index of its token count in the
    /// plan's list (`Units::reaches`).
    pub reach: Option<Reach<usize>>,
    /// The layout group its terms go to ([`super::group`]).
    pub group: usize,
}

/// One row of a generated plan's table, one per term in plan order: its state id and its size
/// class. Where its block instance sits comes from the table's position starts ([`super::position_of`]).
pub type Row = (&'static str, usize);

/// The [`TermInfo`] of every row of a generated plan's table.
#[must_use]
const fn terms<const N: usize, const C: usize>(
    table: &[Row; N],
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
pub(super) const fn first_rows<const N: usize, const C: usize>(table: &[Row; N]) -> [usize; C] {
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

/// How many rows of a generated plan's table each size class has.
const fn counts<const N: usize, const C: usize>(table: &[Row; N]) -> [u64; C] {
    let mut counts = [0; C];
    let mut i = 0;
    while i < N {
        let class = table[i].1;
        if class < C {
            counts[class] += 1;
        }
        i += 1;
    }
    counts
}

/// One term of a generated plan in layout order: its row (plan order) and its size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The term's row in plan order.
    pub row: usize,
    /// Its size class.
    pub class: usize,
}

/// Every term of a generated plan in layout order: the order [`super::replay`] places them
/// in.
#[must_use]
const fn steps<const N: usize, const C: usize>(
    table: &[Row; N],
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
    crate::law::layout::layout_order(&keys, &mut order);
    let mut steps = [Step { row: 0, class: 0 }; N];
    let mut k = 0;
    while k < N {
        let row = order[k];
        steps[k] = Step {
            row,
            class: table[row].1,
        };
        k += 1;
    }
    steps
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

/// A checkpoint's static table: the IR the generator builds (its `emit::table::Table`), held
/// by a generated module as one `const` and read by reference. `N` terms, `C` size classes, `S`
/// position starts (the layers and two more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table<const N: usize, const C: usize, const S: usize> {
    /// Every term's state id and size class, in plan order.
    pub rows: [Row; N],
    /// Every size class: terms of one state of one block template, holding one thing in one
    /// section, sized once per plan.
    pub classes: [SizeClass; C],
    /// Where each position's rows start in `rows` (which pipeline rank holds them): each
    /// layer's, then the epilogue's, then the draft head's; the prologue's come before.
    pub position_rows: [usize; S],
    /// Every term of the plan, in plan order: a generated module's `TERMS`.
    pub terms: [TermInfo; N],
    /// How many terms of the plan are of each size class.
    pub counts: [u64; C],
    /// The first row of every size class: its faults are reported there.
    pub first_rows: [usize; C],
    /// Every term in layout order, with its size class (for the exact replay of a layout that
    /// could overflow).
    pub steps: [Step; N],
}

impl<const N: usize, const C: usize, const S: usize> Table<N, C, S> {
    /// The table of `rows`, `classes` and `position_rows`, with what follows from them.
    #[must_use]
    pub const fn new(rows: [Row; N], classes: [SizeClass; C], position_rows: [usize; S]) -> Self {
        Self {
            rows,
            classes,
            position_rows,
            terms: terms(&rows, &classes),
            counts: counts(&rows),
            first_rows: first_rows(&rows),
            steps: steps(&rows, &classes),
        }
    }

    /// How many layers the checkpoint has.
    #[must_use]
    pub const fn layers(&self) -> u64 {
        S.saturating_sub(2) as u64
    }
}
