//! A checkpoint's static table, the IR the generator builds and a generated module holds as
//! one `const`: its rows (each term's state id and size class, in plan order), where each
//! position's rows start, the KV sides that read another layer's KV, and what follows from them
//! at compile time (each term's [`TermInfo`], each class's count and first row, the layout
//! order). The size classes are the circuit's, shared by its checkpoints. [`Table::new`]
//! derives the rest, so a generated module writes only its rows, its position starts and its
//! readers; [`Table::view`] erases the lengths, so every checkpoint of a circuit is read
//! through one type ([`TableView`]) by the algorithms of `plan.rs`.
//!
//! Invariants:
//! - Rows are in plan order, which is position order (prologue, layer by layer, epilogue, draft):
//!   `position_rows` is sorted.
//! - Every row's class is below `C`; a class no row uses has count 0 and is never sized.

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

impl SizeClass {
    /// A class of these fields, in their order: one line of a generated `CLASSES`.
    #[must_use]
    #[allow(
        clippy::too_many_arguments,
        reason = "a class's eight fields, so a generated table writes each on one line"
    )]
    pub const fn of(
        kind: StateKind,
        holding: Holding,
        section: Section,
        verify: Option<VerifySteps>,
        lifetime: Lifetime,
        unit: usize,
        reach: Option<Reach<usize>>,
        group: usize,
    ) -> Self {
        Self {
            kind,
            holding,
            section,
            verify,
            lifetime,
            unit,
            reach,
            group,
        }
    }
}

/// A generated `SHARES` row: a KV side that reads another layer's KV (`shares`), the id of the
/// state it reads, and their layers.
pub type Share = (&'static str, &'static str, u64, u64);

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

/// Item `index` of `items`, or `None` past the end (a generated plan's `layer(i)`).
#[must_use]
pub const fn nth<T: Copy, const L: usize>(items: [T; L], index: usize) -> Option<T> {
    if index < L { Some(items[index]) } else { None }
}

/// A checkpoint's static table: the IR the generator builds (its `emit::table::Table`), held
/// by a generated module as one `const` and read through its [`TableView`]. `N` terms, `C`
/// size classes (the circuit's), `S` position starts (the layers and two more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table<const N: usize, const C: usize, const S: usize> {
    /// Every term's state id and size class, in plan order.
    pub rows: [Row; N],
    /// The circuit's size classes: terms of one state of one block template, holding one thing
    /// in one section, sized once per plan.
    pub classes: &'static [SizeClass; C],
    /// Where each position's rows start in `rows` (which pipeline rank holds them): each
    /// layer's, then the epilogue's, then the draft head's; the prologue's come before.
    pub position_rows: [usize; S],
    /// Every KV side that reads another layer's KV (`shares`), in plan order.
    pub shares: &'static [Share],
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
    /// The table of `rows`, the circuit's `classes`, `position_rows` and the readers `shares`,
    /// with what follows from them.
    #[must_use]
    pub const fn new(
        rows: [Row; N],
        classes: &'static [SizeClass; C],
        position_rows: [usize; S],
        shares: &'static [Share],
    ) -> Self {
        Self {
            rows,
            classes,
            position_rows,
            shares,
            terms: terms(&rows, classes),
            counts: counts(&rows),
            first_rows: first_rows(&rows),
            steps: steps(&rows, classes),
        }
    }

    /// The table with its lengths erased: what every algorithm reads, and what a circuit's
    /// `Checkpoint` hands out for any of its checkpoints. `P` bounds the page pool's layers
    /// (`TableView`).
    #[must_use]
    pub const fn view<const P: usize>(&'static self) -> TableView<'static, C, P> {
        TableView {
            rows: &self.rows,
            classes: self.classes,
            position_rows: &self.position_rows,
            shares: self.shares,
            terms: &self.terms,
            counts: &self.counts,
            first_rows: &self.first_rows,
            steps: &self.steps,
        }
    }
}

/// A checkpoint's [`Table`] with its lengths erased: the rows, terms and layout steps as
/// slices, the size classes and what is per class as arrays of the circuit's `C`. `P` is the
/// circuit's bound on the layers of a page pool: two per position (one attention, one
/// recurrent: `law::pages::join`) over its most layers, the prologue, epilogue and draft head;
/// the pool is joined in a buffer of `P`. Built by [`Table::view`]; the algorithms of `plan.rs`
/// run on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableView<'t, const C: usize, const P: usize> {
    /// Every term's state id and size class, in plan order.
    pub rows: &'t [Row],
    /// The circuit's size classes.
    pub classes: &'t [SizeClass; C],
    /// Where each position's rows start (`Table::position_rows`).
    pub position_rows: &'t [usize],
    /// Every KV side that reads another layer's KV, in plan order.
    pub shares: &'t [Share],
    /// Every term of the plan, in plan order.
    pub terms: &'t [TermInfo],
    /// How many terms of the plan are of each size class.
    pub counts: &'t [u64; C],
    /// The first row of every size class.
    pub first_rows: &'t [usize; C],
    /// Every term in layout order, with its size class.
    pub steps: &'t [Step],
}

impl<const C: usize, const P: usize> TableView<'_, C, P> {
    /// How many layers the checkpoint has.
    #[must_use]
    pub const fn layer_count(&self) -> usize {
        self.position_rows.len().saturating_sub(2)
    }

    /// How many layers the checkpoint has, as a pipeline stage counts them.
    #[must_use]
    pub const fn layers(&self) -> u64 {
        self.layer_count() as u64
    }
}
