//! What one pipeline stage holds of a generated plan: each row's position ([`position_of`], from the
//! table's position starts), each class's held terms ([`held`]), and the classes a block instance
//! lays its terms out from ([`StageClasses`]: the sized ones where the stage holds it,
//! [`ClassSize::ABSENT`] where another rank does).
//!
//! Invariants: the one rule of which rank holds what is `Stage::holds`; the whole model is
//! read from the static table without a pass over the rows.

use super::lanes::ClassSize;
use super::table::{Share, TableView};
use crate::model::Position;
use crate::plan::PlanError;
use crate::serve::Stage;

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
pub struct StageClasses<const C: usize> {
    sized: [ClassSize; C],
    stage: Stage,
}

impl<const C: usize> StageClasses<C> {
    /// `sized` as `stage` reads it.
    #[must_use]
    pub const fn new(sized: [ClassSize; C], stage: &Stage) -> Self {
        Self {
            sized,
            stage: *stage,
        }
    }

    /// The sized classes, to size them in place.
    pub(super) const fn sized_mut(&mut self) -> &mut [ClassSize; C] {
        &mut self.sized
    }

    /// The [`window`] of the `K` classes from `first` of the block instance at `position`.
    #[must_use]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "with a constant `first`, inlining turns the range check into nothing"
    )]
    pub const fn at<const K: usize>(&self, first: usize, position: Position) -> &[ClassSize; K] {
        if self.stage.holds(position) {
            window(&self.sized, first)
        } else {
            // One static of `K` absent classes, whatever the plan.
            &const { [ClassSize::ABSENT; K] }
        }
    }

    /// [`StageClasses::at`] a prologue block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn prologue<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Position::Prologue)
    }

    /// [`StageClasses::at`] a block of layer `layer`.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn layer<const K: usize>(&self, first: usize, layer: u64) -> &[ClassSize; K] {
        self.at(first, Position::Layer(layer))
    }

    /// [`StageClasses::at`] an epilogue block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn epilogue<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Position::Epilogue)
    }

    /// [`StageClasses::at`] a draft-head block.
    #[must_use]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `at`")]
    pub const fn draft<const K: usize>(&self, first: usize) -> &[ClassSize; K] {
        self.at(first, Position::Draft)
    }
}

/// The position of row `row` of a generated plan whose positions start at `starts` (plan order puts
/// them in order: the prologue's rows, each layer's, the epilogue's, the draft head's):
/// `starts[k]` is the first row of layer `k` for `k` below the layers, then the first of the
/// epilogue, then the first of the draft head; rows before `starts[0]` are the prologue's.
#[must_use]
pub const fn position_of(starts: &[usize], row: usize) -> Position {
    // The number of positions that start at or before `row`: a binary search on the sorted starts.
    let (mut low, mut high) = (0, starts.len());
    while low < high {
        let mid = low + (high - low) / 2;
        if starts[mid] <= row {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    position_at(starts.len(), low)
}

/// The position whose rows begin after `begun` of `starts` position starts: the prologue for 0,
/// then layer by layer.
const fn position_at(starts: usize, begun: usize) -> Position {
    let layers = starts.saturating_sub(2);
    if begun == 0 {
        Position::Prologue
    } else if begun <= layers {
        Position::Layer((begun - 1) as u64)
    } else if begun == layers + 1 {
        Position::Epilogue
    } else {
        Position::Draft
    }
}

/// `Ok` when `stage` holds the owner of every reader of `shares` it holds: the generated form of
/// the dynamic plan's check (`plan::dynamic::owners_held`, on the states a rank declares),
/// stated on layers because a generated plan knows each reader's owner layer at build time.
///
/// # Errors
/// `PlanError::MissingOwner` naming the first reader, in plan order, whose owner's layer the
/// stage does not hold.
pub const fn owners_held(shares: &[Share], stage: &Stage) -> Result<(), PlanError> {
    let mut i = 0;
    while i < shares.len() {
        let (reader, owner, layer, owner_layer) = shares[i];
        if stage.holds(Position::Layer(layer)) && !stage.holds(Position::Layer(owner_layer)) {
            return Err(PlanError::MissingOwner {
                state: reader,
                owner,
            });
        }
        i += 1;
    }
    Ok(())
}

/// What one pipeline stage holds of a generated plan: each size class's held terms and the
/// first of them in plan order (where its fault is reported), by [`Stage::holds`] on each
/// row's [`Position`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held<'p, const C: usize> {
    /// How many terms of each class the stage holds.
    pub counts: [u64; C],
    /// The first held row of each class (`usize::MAX` when none).
    pub first: [usize; C],
    /// Where the positions start, and the stage; `None` when the stage holds the whole model.
    positions: Option<(&'p [usize], Stage)>,
}

impl<const C: usize> Held<'_, C> {
    /// Whether the stage holds row `row`.
    #[must_use]
    pub const fn holds_row(&self, row: usize) -> bool {
        match self.positions {
            None => true,
            Some((starts, stage)) => stage.holds(position_of(starts, row)),
        }
    }
}

/// What `stage` holds of the plan of `table` (whose positions start at its `position_rows`, read by
/// [`position_of`]). The whole model is read from the static table; a stage is one pass over the
/// rows.
#[must_use]
pub const fn held<'p, const C: usize, const P: usize>(
    table: &TableView<'p, C, P>,
    stage: &Stage,
) -> Held<'p, C> {
    if stage.is_whole(table.layers()) {
        return Held {
            counts: *table.counts,
            first: *table.first_rows,
            positions: None,
        };
    }
    let starts = table.position_rows.len();
    let mut counts = [0; C];
    let mut first = [usize::MAX; C];
    // Rows are in position order: `begun` counts the positions started so far.
    let mut begun = 0;
    let mut row = 0;
    while row < table.rows.len() {
        while begun < starts && table.position_rows[begun] <= row {
            begun += 1;
        }
        let class = table.rows[row].1;
        if class < C && stage.holds(position_at(starts, begun)) {
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
        positions: Some((table.position_rows, *stage)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{Row, SizeClass, Table, TableView};
    use super::*;
    use crate::law::{Holding, Region};
    use crate::model::{Lifetime, Section, StateKind};

    #[test]
    fn a_stage_holding_a_reader_holds_its_owner() {
        // Layers 2 and 3 read layer 1's KV; layer 5 reads layer 4's.
        let shares: [Share; 3] = [("a", "o1", 2, 1), ("b", "o1", 3, 1), ("c", "o4", 5, 4)];
        let stage = |start, end| Stage {
            start,
            end,
            first: start == 0,
            last: end == 6,
        };
        assert_eq!(owners_held(&shares, &stage(0, 6)), Ok(()));
        assert_eq!(owners_held(&shares, &stage(1, 4)), Ok(()));
        // Neither a reader nor its owner: nothing to hold.
        assert_eq!(owners_held(&shares, &stage(0, 1)), Ok(()));
        let missing = |state, owner| Err(PlanError::MissingOwner { state, owner });
        // The first reader in plan order is named.
        assert_eq!(owners_held(&shares, &stage(2, 6)), missing("a", "o1"));
        assert_eq!(owners_held(&shares, &stage(3, 4)), missing("b", "o1"));
        assert_eq!(owners_held(&shares, &stage(5, 6)), missing("c", "o4"));
    }

    #[test]
    fn rows_find_their_place() {
        // One prologue row, layers 0 and 1 of two rows each, layer 2 without state, one
        // epilogue row, two draft rows: starts are [1, 3, 5, 5, 6].
        let starts = [1, 3, 5, 5, 6];
        let positions = (0..8)
            .map(|row| position_of(&starts, row))
            .collect::<Vec<_>>();
        assert_eq!(
            positions,
            [
                Position::Prologue,
                Position::Layer(0),
                Position::Layer(0),
                Position::Layer(1),
                Position::Layer(1),
                Position::Epilogue,
                Position::Draft,
                Position::Draft,
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
        let class = SizeClass {
            kind: StateKind::Recurrent,
            holding: Holding::Live,
            section: Section::Main,
            verify: None,
            lifetime: Lifetime::Sequence,
            unit: 0,
            reach: None,
            group: 1,
        };
        let classes: &'static [SizeClass; 5] = Box::leak(Box::new([class; 5]));
        let table = Table::new(table, classes, starts, &[]);
        let table = &*Box::leak(Box::new(table));
        let table: TableView<'_, 5, 10> = table.view();
        let stage = Stage {
            start: 1,
            end: 3,
            first: false,
            last: true,
        };
        let held = held(&table, &stage);
        assert_eq!(held.counts, [0, 1, 1, 1, 2]);
        assert_eq!(held.first, [usize::MAX, 3, 4, 5, 6]);
        assert!(!held.holds_row(0) && !held.holds_row(1) && held.holds_row(3) && held.holds_row(7));
        // The whole model is the static table.
        let whole = super::held(&table, &Stage::whole(3));
        assert_eq!(whole.counts, [1, 2, 2, 1, 2]);
        assert_eq!(whole.first, *table.first_rows);
    }

    #[test]
    fn a_window_is_the_classes_of_one_block_instance() {
        let classes = [16, 32, 48, 64].map(|bytes| ClassSize {
            region: Region {
                bytes,
                ..Region::EMPTY
            },
            ..ClassSize::ABSENT
        });
        let window: &[ClassSize; 2] = window(&classes, 1);
        assert_eq!(window.map(|class| class.region.bytes), [32, 48]);
    }
}
