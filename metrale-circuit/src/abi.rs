//! What the plans `metrale-codegen` generates call: the static description of a plan's size
//! classes ([`SizeClass`], [`terms`], [`steps`], [`first_rows`]), the checked `const fn`
//! arithmetic unit functions are written in ([`value`], [`mul`], [`add`], [`sub`],
//! [`ceil_div`]), and the
//! steps a generated `StatePlan::new` takes: [`valid_align`], [`held`] (what its pipeline
//! stage holds), [`size_class`] once per size class (summing the layout in [`Lanes`]),
//! [`first_fault`], [`Lanes::finish`], then [`ClassSize::take`] once per term, through
//! [`StageClasses`] so the terms of layers another rank holds are [`ClassSize::ABSENT`]; the
//! exact [`replay`] only when a sum could overflow. For
//! a checkpoint chosen at run time, a generated `Checkpoint` compares names with [`same_str`]
//! and `Formats::from_pairs` reads each key with [`format_of`].
//!
//! Owner: metrale-circuit. This is `__private_v0_1`: hidden, not API, read by generated code
//! only; what engines read of a plan is public at the crate root. Generated code asserts
//! [`ABI`] at compile time.
//! Invariants:
//! - Sizes come from the one sizing law (`sizing::size_term`) and offsets from the one layout
//!   law (`layout::Placer`), in layout order: a generated plan and the dynamic plan of the same
//!   circuit and inputs agree term for term, and on the first error.
//! - Every layout sum a generated plan adds without a check was checked by [`Lanes`] first.
//! - Everything here is a `const fn` without allocation.
#![allow(
    rustdoc::private_intra_doc_links,
    reason = "a hidden module, read in the source: its docs link the private laws it calls"
)]

use crate::layout::{Arena, LayoutKey, Placer, check_align};
pub use crate::regions::field_group;
use crate::sizing::{TermSpec, size_term};
use crate::{
    Holding, Lifetime, Place, PlanError, Region, Section, SizeFault, Space, Stage, StateDtype,
    StateInputs, StateKind, TermInfo, Unit, VerifySteps,
};

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
    /// Index of the state's sliding window in the plan's window list, for a KV side that has
    /// one.
    pub window: Option<usize>,
    /// How many terms of the plan are of this class.
    pub count: u64,
    /// The layout group its terms go to ([`group`]).
    pub group: usize,
}

/// One row of a generated plan's table, one per term in plan order: its state id and its size
/// class. Where its block instance sits comes from the table's place starts ([`place_of`]).
pub type Row = (&'static str, usize);

/// The [`TermInfo`] of every row of a generated plan's table.
#[must_use]
pub const fn terms<const N: usize, const C: usize>(
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
pub const fn first_rows<const N: usize, const C: usize>(table: &[Row; N]) -> [usize; C] {
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

/// The checked difference of two sizes (a shape's `-`).
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Negative`] when `b` is larger than `a`.
#[inline]
pub const fn sub(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_sub(b) {
            Some(difference) => Ok(difference),
            None => Err(SizeFault::Negative),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// `a / b` rounded up (a shape's `name/lit` or `name/name`; either side may be a derived dim,
/// itself a `Result`).
///
/// # Errors
/// Either operand's fault, or [`SizeFault::DivisionByZero`] when `b` is zero.
#[inline]
pub const fn ceil_div(
    a: Result<u64, SizeFault>,
    b: Result<u64, SizeFault>,
) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(_), Ok(0)) => Err(SizeFault::DivisionByZero),
        (Ok(a), Ok(b)) => Ok(a.div_ceil(b)),
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

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

/// One term of a generated plan in layout order: its row (plan order) and its size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The term's row in plan order.
    pub row: usize,
    /// Its size class.
    pub class: usize,
}

/// Every term of a generated plan in layout order (the layout order), for a
/// `const` item: the order [`replay`] places them in.
#[must_use]
pub const fn steps<const N: usize, const C: usize>(
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
    crate::layout::layout_order(&keys, &mut order);
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

/// The slow, exact layout of a generated plan, term by term in `steps` with the layout's one
/// [`Placer`], skipping the terms its stage does not hold: run only when a sum of [`Lanes`]
/// overflowed, to report the term the dynamic plan reports. `align` was checked by
/// [`valid_align`].
///
/// # Errors
/// The [`PlanError::Overflow`] of the first term that cannot be placed.
pub const fn replay<const N: usize, const C: usize, const S: usize>(
    classes: &[ClassSize; C],
    steps: &[Step; N],
    terms: &[TermInfo; N],
    held: &Held<'_, C, S>,
    align: u64,
) -> Result<Arena, PlanError> {
    let mut placer = Placer::new(align);
    let mut k = 0;
    while k < N {
        let class = &classes[steps[k].class];
        if class.present && held.holds_row(steps[k].row) {
            let key = LayoutKey {
                space: class.space,
                lifetime: class.lifetime,
            };
            let _ = placer.place(key, class.region.bytes, steps[k].row);
        }
        k += 1;
    }
    match placer.finish() {
        Ok(arena) => Ok(arena),
        Err(row) => Err(PlanError::Overflow {
            state: state_of(terms, row),
        }),
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
            ..self.region
        }
    }
}

/// The layout groups of a plan, (space, lifetime) in layout order: device then host, each
/// in [`Lifetime::LAYOUT_ORDER`]. A plan's terms are laid out group by group.
pub const GROUPS: usize = Space::ALL.len() * Lifetime::LAYOUT_ORDER.len();

/// The `K` classes of a generated plan from `first` on: the classes of one block instance's
/// terms, for its `lay`.
///
/// # Panics
/// When they run past the end of `classes`, which a generated plan never asks for: its
/// indices are constants, checked when the plan is compiled.
#[must_use]
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "with a constant `first`, inlining turns the range check into nothing"
)]
pub const fn window<const K: usize, const C: usize>(
    classes: &[ClassSize; C],
    first: usize,
) -> &[ClassSize; K] {
    match classes.split_at_checked(first) {
        Some((_, rest)) => match rest.first_chunk::<K>() {
            Some(window) => window,
            None => panic!("a block instance's classes run past the plan's classes"),
        },
        None => panic!("a block instance's first class is past the plan's classes"),
    }
}

/// A generated plan's sized classes as its pipeline stage reads them: a block instance the
/// stage holds lays its terms out from the sized classes, one it does not hold from
/// [`ClassSize::ABSENT`] throughout (its terms are empty regions that take no room).
#[derive(Debug, Clone, Copy)]
pub struct StageClasses<'c, const C: usize> {
    sized: &'c [ClassSize; C],
    absent: [ClassSize; C],
    stage: Stage,
}

impl<'c, const C: usize> StageClasses<'c, C> {
    /// `sized` as `stage` reads it.
    #[must_use]
    pub const fn new(sized: &'c [ClassSize; C], stage: &Stage) -> Self {
        Self {
            sized,
            absent: [ClassSize::ABSENT; C],
            stage: *stage,
        }
    }

    /// The [`window`] of the `K` classes from `first` of the block instance at `place`.
    #[must_use]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "with a constant `first`, inlining turns the range check into nothing"
    )]
    pub const fn at<const K: usize>(&self, first: usize, place: Place) -> &[ClassSize; K] {
        if self.stage.holds(place) {
            window(self.sized, first)
        } else {
            window(&self.absent, first)
        }
    }

    /// [`StageClasses::at`] a prologue block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn prologue<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Place::Prologue)
    }

    /// [`StageClasses::at`] a block of layer `layer`.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn layer<const K: usize>(&self, first: usize, layer: u64) -> &[ClassSize; K] {
        self.at(first, Place::Layer(layer))
    }

    /// [`StageClasses::at`] an epilogue block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn epilogue<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Place::Epilogue)
    }

    /// [`StageClasses::at`] a draft-head block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn draft<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Place::Draft)
    }
}

/// The place of row `row` of a generated plan whose places start at `starts` (plan order puts
/// them in order: the prologue's rows, each layer's, the epilogue's, the draft head's):
/// `starts[k]` is the first row of layer `k` for `k` below the layers, then the first of the
/// epilogue, then the first of the draft head; rows before `starts[0]` are the prologue's.
#[must_use]
pub const fn place_of<const S: usize>(starts: &[usize; S], row: usize) -> Place {
    // The number of places that start at or before `row`: a binary search on the sorted starts.
    let (mut low, mut high) = (0, S);
    while low < high {
        let mid = low + (high - low) / 2;
        if starts[mid] <= row {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    place_at::<S>(low)
}

/// The place whose rows begin after `begun` starts: the prologue for 0, then layer by layer.
const fn place_at<const S: usize>(begun: usize) -> Place {
    let layers = S.saturating_sub(2);
    if begun == 0 {
        Place::Prologue
    } else if begun <= layers {
        Place::Layer((begun - 1) as u64)
    } else if begun == layers + 1 {
        Place::Epilogue
    } else {
        Place::Draft
    }
}

/// What one pipeline stage holds of a generated plan: each size class's held terms and the
/// first of them in plan order (where its fault is reported), by [`Stage::holds`] on each
/// row's [`Place`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held<'p, const C: usize, const S: usize> {
    /// How many terms of each class the stage holds.
    pub counts: [u64; C],
    /// The first held row of each class (`usize::MAX` when none).
    pub first: [usize; C],
    /// Where the places start, and the stage; `None` when the stage holds the whole model.
    places: Option<(&'p [usize; S], Stage)>,
}

impl<const C: usize, const S: usize> Held<'_, C, S> {
    /// Whether the stage holds row `row`.
    #[must_use]
    pub const fn holds_row(&self, row: usize) -> bool {
        match self.places {
            None => true,
            Some((starts, stage)) => stage.holds(place_of(starts, row)),
        }
    }
}

/// What `stage` holds of a generated plan whose table is `table`, its classes `classes`
/// (first rows `first_rows`) and its places starting at `starts` ([`place_of`]; one per layer
/// and two more). The whole model is read from the static table; a stage is one pass over the
/// rows.
#[must_use]
pub const fn held<'p, const N: usize, const C: usize, const S: usize>(
    table: &[Row; N],
    classes: &[SizeClass; C],
    first_rows: &[usize; C],
    starts: &'p [usize; S],
    stage: &Stage,
) -> Held<'p, C, S> {
    if stage.is_whole(S.saturating_sub(2) as u64) {
        let mut counts = [0; C];
        let mut c = 0;
        while c < C {
            counts[c] = classes[c].count;
            c += 1;
        }
        return Held {
            counts,
            first: *first_rows,
            places: None,
        };
    }
    let mut counts = [0; C];
    let mut first = [usize::MAX; C];
    // Rows are in place order: `begun` counts the places started so far.
    let mut begun = 0;
    let mut row = 0;
    while row < N {
        while begun < S && starts[begun] <= row {
            begun += 1;
        }
        let class = table[row].1;
        if class < C && stage.holds(place_at::<S>(begun)) {
            if counts[class] == 0 {
                first[class] = row;
            }
            counts[class] += 1;
        }
        row += 1;
    }
    Held {
        counts,
        first,
        places: Some((starts, *stage)),
    }
}

/// `a == b` in a `const fn`: a generated `Checkpoint::from_name` and `from_hf` compare by it.
#[must_use]
pub const fn same_str(a: &str, b: &str) -> bool {
    crate::inputs::same_str(a, b)
}

/// The dtype of the first pair of `pairs` keyed `key`, by the rule the dynamic plan reads its
/// formats by (`StateInputs::format`): what a generated `Formats::from_pairs` reads each key
/// with.
#[must_use]
pub const fn format_of(pairs: &[(&str, StateDtype)], key: &str) -> Option<StateDtype> {
    crate::inputs::format_in(pairs, key)
}

/// Bumped whenever what generated code calls changes its shape or meaning (2: `ceil_div` takes
/// `Result`s, for derived dims; 3: size classes carry a window index, `size_class` the
/// windows; 4: a region carries its unit bytes and inner count; 5: generated plans fit
/// (`Search`, `ServingProfile`) and are chosen at run time (`RegionList`, `MissingFormat`);
/// 6: `Dims::on_tp` calls `shard` and names `ShardFault`; 7: plans are built for a pipeline
/// stage: `place_of` over a table's place starts, `held`, `StageClasses`, `ClassSize::ABSENT`;
/// `size_class` takes the held count and `replay` the `Held`).
const REVISION: u64 = 7;

/// The revision and every layout constant the generator writes into generated code ([`GROUPS`]
/// and each kind and holding's [`group`]), folded into one number (FNV-1a): the value of
/// `__GENERATED_ABI`, which generated code asserts equals the one it was generated against.
pub const ABI: u64 = {
    const fn fold(hash: u64, value: u64) -> u64 {
        (hash ^ value).wrapping_mul(0x0100_0000_01b3)
    }
    let mut hash = fold(0xcbf2_9ce4_8422_2325, REVISION);
    hash = fold(hash, GROUPS as u64);
    let mut k = 0;
    while k < StateKind::ALL.len() {
        let kind = StateKind::ALL[k];
        let holdings = Holding::of_kind(kind);
        let mut h = 0;
        while h < holdings.len() {
            hash = fold(
                hash,
                group(kind, holdings[h], Lifetime::of_kind(kind)) as u64,
            );
            h += 1;
        }
        k += 1;
    }
    hash
};

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

/// Sizes one class of a generated plan by [`size_term`] and adds its `count` held terms
/// ([`Held`]) to `lanes`; a class that cannot be sized keeps its fault for [`first_fault`],
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
    windows: &[Result<u64, SizeFault>; W],
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
    let window = match class.window {
        Some(i) => match windows[i] {
            Ok(tokens) => Ok(Some(tokens)),
            Err(fault) => Err(fault),
        },
        None => Ok(None),
    };
    let size = match (units[class.unit], window) {
        (Ok(unit), Ok(window)) => {
            sized.region.dtype = unit.dtype;
            sized.region.unit_bytes = unit.bytes;
            size_term(
                &TermSpec {
                    kind: class.kind,
                    holding: class.holding,
                    section: class.section,
                    verify: class.verify,
                    unit_bytes: unit.bytes,
                    window,
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
    fn names_and_formats_are_read_in_const_fn() {
        const PAIRS: [(&str, StateDtype); 3] = [
            ("kv", StateDtype::Fp8),
            ("h", StateDtype::F32),
            ("kv", StateDtype::Bf16),
        ];
        const KV: Option<StateDtype> = format_of(&PAIRS, "kv");
        // The first pair of a key wins, as `StateInputs::format` reads it.
        assert_eq!(KV, Some(StateDtype::Fp8));
        assert_eq!(format_of(&PAIRS, "h"), Some(StateDtype::F32));
        assert_eq!(format_of(&PAIRS, "k"), None);
        assert_eq!(format_of(&[], "kv"), None);
        let inputs = StateInputs {
            formats: &PAIRS,
            ..StateInputs::EMPTY
        };
        assert_eq!(inputs.format("kv"), Some(StateDtype::Fp8));
        assert!(same_str("tiny", "tiny") && same_str("", ""));
        assert!(!same_str("tiny", "tin") && !same_str("tiny", "tinY") && !same_str("a", ""));
    }

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(mul(value(6), value(7)), Ok(42));
        assert_eq!(mul(value(u64::MAX), value(2)), Err(SizeFault::Overflow));
        assert_eq!(add(value(u64::MAX), value(1)), Err(SizeFault::Overflow));
        assert_eq!(
            add(ceil_div(value(5120), value(0)), value(1)),
            Err(SizeFault::DivisionByZero)
        );
        assert_eq!(ceil_div(value(5121), value(128)), Ok(41));
        assert_eq!(
            ceil_div(Err(SizeFault::Negative), value(0)),
            Err(SizeFault::Negative)
        );
        assert_eq!(sub(value(4), value(1)), Ok(3));
        assert_eq!(sub(value(4), value(4)), Ok(0));
        assert_eq!(sub(value(1), value(2)), Err(SizeFault::Negative));
        assert_eq!(
            sub(Err(SizeFault::Overflow), value(2)),
            Err(SizeFault::Overflow)
        );
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

    /// A present class of `bytes` per term, in `space` and `lifetime`.
    fn sized(bytes: u64, space: Space, lifetime: Lifetime) -> ClassSize {
        ClassSize {
            region: Region {
                offset: 0,
                bytes,
                units: bytes / 4,
                dtype: StateDtype::F32,
                unit_bytes: 4,
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

    #[test]
    fn rows_find_their_place() {
        // One prologue row, layers 0 and 1 of two rows each, layer 2 without state, one
        // epilogue row, two draft rows: starts are [1, 3, 5, 5, 6].
        let starts = [1, 3, 5, 5, 6];
        let places = (0..8).map(|row| place_of(&starts, row)).collect::<Vec<_>>();
        assert_eq!(
            places,
            [
                Place::Prologue,
                Place::Layer(0),
                Place::Layer(0),
                Place::Layer(1),
                Place::Layer(1),
                Place::Epilogue,
                Place::Draft,
                Place::Draft,
            ]
        );
        // Pipeline rank 1 of 2 holding layers 1..3: the epilogue and draft rows, and layer 1's.
        let table: [Row; 8] = [
            ("p", 0),
            ("a", 1),
            ("b", 2),
            ("a", 1),
            ("b", 2),
            ("e", 3),
            ("d", 4),
            ("d", 4),
        ];
        let class = |count| SizeClass {
            kind: StateKind::Recurrent,
            holding: Holding::Live,
            section: Section::Main,
            verify: None,
            lifetime: Lifetime::Sequence,
            unit: 0,
            window: None,
            count,
            group: 1,
        };
        let classes = [class(1), class(2), class(2), class(1), class(2)];
        let first_rows = first_rows(&table);
        let stage = Stage {
            start: 1,
            end: 3,
            first: false,
            last: true,
        };
        let held = held(&table, &classes, &first_rows, &starts, &stage);
        assert_eq!(held.counts, [0, 1, 1, 1, 2]);
        assert_eq!(held.first, [usize::MAX, 3, 4, 5, 6]);
        assert!(!held.holds_row(0) && !held.holds_row(1) && held.holds_row(3) && held.holds_row(7));
        // The whole model is the static table.
        let whole = super::held(&table, &classes, &first_rows, &starts, &Stage::whole(3));
        assert_eq!(whole.counts, [1, 2, 2, 1, 2]);
        assert_eq!(whole.first, first_rows);
    }

    #[test]
    fn a_window_is_the_classes_of_one_block_instance() {
        let classes = [16, 32, 48, 64].map(|bytes| sized(bytes, Space::Device, Lifetime::Model));
        let window: &[ClassSize; 2] = window(&classes, 1);
        assert_eq!(window.map(|class| class.region.bytes), [32, 48]);
    }
}
