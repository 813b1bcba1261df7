//! The algorithms the runtime runs on a checkpoint's table ([`TableView`]), so a generated
//! module holds only data and the typed `lay` calls: a stage's start ([`TableView::start`]:
//! its owners checked, its sizes, arena and page pool, what a generated `new` and `for_rank`
//! call before laying out their fields), what every plan holds beside its regions
//! ([`PlanCommon`], read by a plan's `arena()`, `device_bytes()` and the rest), the capacity
//! searches ([`TableView::fit_kv_blocks`], [`TableView::fit_profile`], a circuit's
//! `AnyPlan::fit_*`), and the rank wrapper ([`in_rank`]); and the exact layout ([`replay`]),
//! term by term, when a sum could overflow.
//!
//! Invariants:
//! - [`TableView::size`] is the one constructor of a stage's layout: the alignment is checked
//!   first, then each class the stage holds is sized, the first fault in plan order is
//!   reported, and the layout summed ([`Lanes`]) or, when a sum could overflow, replayed term by
//!   term, as the dynamic plan places it.
//! - A stage that holds a KV side reading another layer's KV but not that layer has no plan and
//!   no fit ([`owners_held`], checked before anything else, as the dynamic plan does).
//! - A fit reads only the device bytes of each probe, which [`TableView::size`] and the pool
//!   know before any region is laid out: the fits build no plan. Their loop is the runtime's
//!   one search (`fit::search_fit!`).
//! - Everything is a `const fn` without allocation.

#![allow(
    rustdoc::private_intra_doc_links,
    reason = "a hidden module, read in the source: its docs link the private laws it calls"
)]

use super::lanes::{
    ClassSize, GROUPS, Lanes, first_fault, reach_of, size_class, state_of, valid_align,
};
use super::stage::{Held, StageClasses, held, owners_held, position_of};
use super::table::{Step, TableView};
use crate::law::layout::{Arena, LayoutKey, Placer};
use crate::law::pages::{join, shape};
use crate::law::sizing::held_in_pool;
use crate::law::{PoolFault, PoolLayer, PoolShape, SizeFault};
use crate::model::{HSteps, PoolPolicy, StateInputs, StateKind};
use crate::plan::{PlanError, PoolPlan, TermInfo, Unit};
use crate::serve::fit::{has_blocks, search_fit, with_blocks};
use crate::serve::{Fit, FitError, ProfileFree, RankError, ServingProfile, Stage};

/// Every state's unit and every KV side's reach (sliding window or attention chunk) of a circuit, under one checkpoint's
/// dims and formats: what a [`TableView`]'s size classes index (`SizeClass::unit`,
/// `SizeClass::reach`). A generated module computes it once per plan or fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units<const U: usize, const W: usize> {
    /// One unit of every state of every block template, block by block.
    pub units: [Result<Unit, SizeFault>; U],
    /// The tokens of every KV side's window or chunk, for a side that has one.
    pub reaches: [Result<u64, SizeFault>; W],
}

/// A stage's sized classes, the layout cursor of each group, and the arena: what a generated
/// plan lays its fields out from, one `lay` per block instance.
#[derive(Debug, Clone, Copy)]
pub struct StageSizes<const C: usize> {
    /// The classes each block instance reads, absent where the stage does not hold it.
    pub classes: StageClasses<C>,
    /// Each layout group's cursor: where its next term goes.
    pub cursors: [u64; GROUPS],
    /// The arena sizes and per-lifetime totals.
    pub arena: Arena,
}

/// Where a generated plan starts laying out its fields ([`TableView::start`]): the classes
/// each block instance reads, each layout group's cursor, and what the plan holds beside its
/// regions (its `arena`, `pool` and `h_steps` fields, named alike).
#[derive(Debug, Clone, Copy)]
pub struct PlanStart<'a, const C: usize> {
    /// The classes each block instance reads, absent where the stage does not hold it.
    pub classes: StageClasses<C>,
    /// Each layout group's cursor: where its next term goes.
    pub cursors: [u64; GROUPS],
    /// The arena sizes and per-lifetime totals.
    pub arena: Arena,
    /// Under vLLM's policy, the page pool after the arena.
    pub pool: Option<PoolPlan>,
    /// The verify rows the plan is made with (`inputs.verify`), which say where each verify
    /// slot's `h_steps` rows start.
    pub h_steps: HSteps<'a>,
}

impl<const C: usize, const P: usize> TableView<'_, C, P> {
    /// The stage that holds the whole model (one GPU).
    #[must_use]
    pub const fn whole(&self) -> Stage {
        Stage::whole(self.layers())
    }

    /// The start of a generated plan of `stage` under `units` and `inputs`: the stage's owners
    /// checked ([`owners_held`]), its classes sized and its layout summed ([`TableView::size`]),
    /// its page pool ([`TableView::pool_plan`]), and the verify rows kept.
    ///
    /// # Errors
    /// [`PlanError::MissingOwner`] first; then those of [`TableView::size`] and
    /// [`TableView::pool_plan`].
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "once per checkpoint: its constant table folds the size law per class, as before the view"
    )]
    pub const fn start<'a, const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'a>,
        align: u64,
        stage: &Stage,
    ) -> Result<PlanStart<'a, C>, PlanError> {
        if let Err(error) = owners_held(self.shares, stage) {
            return Err(error);
        }
        let StageSizes {
            classes,
            cursors,
            arena,
        } = match self.size(units, inputs, align, stage) {
            Ok(sized) => sized,
            Err(error) => return Err(error),
        };
        let pool = match self.pool_plan(units, inputs, stage, &arena) {
            Ok(pool) => pool,
            Err(error) => return Err(error),
        };
        let h_steps = match inputs.verify {
            Some(verify) => verify.h_steps,
            None => HSteps::NONE,
        };
        Ok(PlanStart {
            classes,
            cursors,
            arena,
            pool,
            h_steps,
        })
    }

    /// Sizes every class `stage` holds under `units` and `inputs` and sums its layout, every
    /// offset a multiple of `align`, by the law of the dynamic `StatePlan::new`. Built in
    /// place: a plan of some hundred terms reads it once, nothing large is copied.
    ///
    /// # Errors
    /// [`PlanError::BadAlign`] when `align` is not a nonzero power of two; the error of the
    /// first term in plan order that cannot be sized; [`PlanError::Overflow`] naming the first
    /// term that cannot be placed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "inlined into `start`, where the table is a constant"
    )]
    pub const fn size<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'_>,
        align: u64,
        stage: &Stage,
    ) -> Result<StageSizes<C>, PlanError> {
        // The alignment is checked first, as the dynamic plan does.
        if let Err(error) = valid_align(align) {
            return Err(error);
        }
        let held = held(self, stage);
        let mut lanes = Lanes::new(align);
        let mut sized = StageSizes {
            classes: StageClasses::new([ClassSize::ABSENT; C], stage),
            cursors: [0; GROUPS],
            arena: Arena::EMPTY,
        };
        let classes = sized.classes.sized_mut();
        let mut c = 0;
        while c < C {
            classes[c] = size_class(
                &self.classes[c],
                held.counts[c],
                &units.units,
                &units.reaches,
                inputs,
                &mut lanes,
            );
            c += 1;
        }
        if let Some(error) = first_fault(classes, &held.first, self.terms) {
            return Err(error);
        }
        let (cursors, arena) = lanes.finish();
        sized.cursors = cursors;
        sized.arena = match arena {
            Some(arena) => arena,
            // A sum could overflow: the exact layout names the term.
            None => match replay(classes, self.steps, self.terms, &held, align) {
                Ok(arena) => arena,
                Err(error) => return Err(error),
            },
        };
        Ok(sized)
    }

    /// The device bytes of the plan [`TableView::size`] lays out.
    const fn device_bytes<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'_>,
        align: u64,
        stage: &Stage,
    ) -> Result<u64, PlanError> {
        let arena = match self.size(units, inputs, align, stage) {
            Ok(sized) => sized.arena,
            Err(error) => return Err(error),
        };
        match self.pool_plan(units, inputs, stage, &arena) {
            Ok(Some(pool)) => Ok(pool.end()),
            Ok(None) => Ok(arena.device_bytes),
            Err(error) => Err(error),
        }
    }

    /// The page pool of a plan of `stage` whose arena is `arena` (the buffer after it), under
    /// vLLM's policy; `None` under the arenas. What a generated plan holds.
    ///
    /// # Errors
    /// The pool's fault ([`TableView::pool`]), or an overflow of the buffer's end.
    pub const fn pool_plan<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'_>,
        stage: &Stage,
        arena: &Arena,
    ) -> Result<Option<PoolPlan>, PlanError> {
        let (shape, pages) = match self.pool(units, inputs, stage) {
            Ok(Some(pool)) => pool,
            Ok(None) => return Ok(None),
            Err(error) => return Err(error),
        };
        let PoolPolicy::Vllm(vllm) = inputs.pool else {
            return Ok(None);
        };
        match PoolPlan::new(shape, pages, vllm.context, arena.device_bytes) {
            Ok(pool) => Ok(Some(pool)),
            Err(fault) => Err(self.pool_fault(fault, stage, inputs)),
        }
    }

    /// The unified page pool of `stage` under `inputs` (its shape and pages), by the law of the
    /// dynamic plan's: its layers joined row by row in plan order ([`join`]), then shaped
    /// ([`shape`]); `None` under the arenas. At most `P` layers, the circuit's bound: more is
    /// an overflow, which no generated table reaches.
    ///
    /// # Errors
    /// The pool's fault, naming a state of the layer at fault as the dynamic plan does.
    pub const fn pool<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'_>,
        stage: &Stage,
    ) -> Result<Option<(PoolShape, u64)>, PlanError> {
        let PoolPolicy::Vllm(vllm) = inputs.pool else {
            return Ok(None);
        };
        let held = held(self, stage);
        let mut layers = [PoolLayer::EMPTY; P];
        // The first row of each layer, to name it in a fault.
        let mut first_rows = [0usize; P];
        let mut count = 0;
        let mut row = 0;
        while row < self.rows.len() {
            let class = &self.classes[self.rows[row].1];
            if held.holds_row(row) && held_in_pool(class.kind, class.holding, class.section, inputs)
            {
                // A unit or window fault was reported by `size` already; the unit as the
                // term stores it (a draft KV side in `draft_kv_dtype`).
                let unit_bytes = match units.units[class.unit] {
                    Ok(unit) => match unit.stored(class.kind, class.section, inputs) {
                        Ok(unit) => unit.bytes,
                        Err(_) => 0,
                    },
                    Err(_) => 0,
                };
                let reach = match reach_of(class.reach, &units.reaches) {
                    Ok(reach) => reach,
                    Err(_) => None,
                };
                let position = position_of(self.position_rows, row);
                let attention = matches!(class.kind, StateKind::PagedKv);
                if count == P {
                    return Err(PlanError::Pool {
                        state: self.rows[row].0,
                        fault: PoolFault::Overflow,
                    });
                }
                match join(&mut layers, count, position, attention, unit_bytes, reach) {
                    Ok(at) if at == count => {
                        first_rows[count] = row;
                        count += 1;
                    }
                    Ok(_) => {}
                    Err(fault) => {
                        return Err(PlanError::Pool {
                            state: self.rows[row].0,
                            fault,
                        });
                    }
                }
            }
            row += 1;
        }
        let (layers, _) = layers.split_at(count);
        let shape = match shape(layers, &vllm) {
            Ok(shape) => shape,
            Err(fault) => {
                let at = match fault {
                    PoolFault::MixedAttention { other, .. } => other,
                    _ => 0,
                };
                return Err(PlanError::Pool {
                    state: if count > 0 {
                        self.rows[first_rows[at]].0
                    } else {
                        ""
                    },
                    fault,
                });
            }
        };
        match shape.pages(vllm.pages) {
            Ok(pages) => Ok(Some((shape, pages))),
            Err(fault) => Err(self.pool_fault(fault, stage, inputs)),
        }
    }

    /// A pool fault naming the first state the stage's pool holds, as the dynamic plan names
    /// a fault of the whole pool.
    const fn pool_fault(
        &self,
        fault: PoolFault,
        stage: &Stage,
        inputs: &StateInputs<'_>,
    ) -> PlanError {
        let held = held(self, stage);
        let mut row = 0;
        let mut named = "";
        while row < self.rows.len() {
            let class = &self.classes[self.rows[row].1];
            if held.holds_row(row) && held_in_pool(class.kind, class.holding, class.section, inputs)
            {
                named = self.rows[row].0;
                break;
            }
            row += 1;
        }
        PlanError::Pool {
            state: named,
            fault,
        }
    }

    /// The most main KV blocks (`inputs.kv`'s `blocks`) whose plan on `stage` has a
    /// device arena of at most `budget` bytes, every other input as given: the search of the
    /// dynamic `fit_kv_blocks`.
    ///
    /// # Errors
    /// [`FitError::Plan`] with [`PlanError::MissingOwner`] first; [`FitError::NoKvPool`]
    /// without `inputs.kv`; [`FitError::Plan`] when the plan fails at 0 blocks; [`FitError::TooSmall`] when even 0 blocks exceed `budget`;
    /// [`FitError::NoneFits`] when 0 blocks fit and 1 does not.
    pub const fn fit_kv_blocks<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        inputs: &StateInputs<'_>,
        align: u64,
        budget: u64,
        stage: &Stage,
    ) -> Result<Fit, FitError<PlanError>> {
        if let Err(error) = owners_held(self.shares, stage) {
            return Err(FitError::Plan(error));
        }
        if !has_blocks(inputs) {
            return Err(FitError::NoKvPool);
        }
        search_fit!(budget, |blocks| self.device_bytes(
            units,
            &with_blocks(inputs, blocks),
            align,
            stage
        ))
    }

    /// The largest value of `profile`'s free input `free` whose plan on `stage` has a device
    /// arena of at most `budget` bytes: the profile at each probed value
    /// ([`ServingProfile::varied`]), the search of the dynamic `fit_profile`.
    ///
    /// # Errors
    /// [`FitError::Plan`] with [`PlanError::MissingOwner`] first; [`FitError::NoKvPool`] when
    /// `free` is the pool and the profile has none; [`FitError::Plan`] when the plan fails at 0; [`FitError::TooSmall`] when even 0 exceeds
    /// `budget`; [`FitError::NoneFits`] when 0 fits and 1 does not.
    #[allow(
        clippy::too_many_arguments,
        reason = "a profile fit's four inputs, the alignment, the budget and the stage"
    )]
    pub const fn fit_profile<const U: usize, const W: usize>(
        &self,
        units: &Units<U, W>,
        profile: &ServingProfile<'_>,
        free: ProfileFree,
        align: u64,
        budget: u64,
        stage: &Stage,
    ) -> Result<Fit, FitError<PlanError>> {
        if let Err(error) = owners_held(self.shares, stage) {
            return Err(FitError::Plan(error));
        }
        if matches!(free, ProfileFree::KvBlocks) && profile.kv.is_none() && profile.pool.is_none() {
            return Err(FitError::NoKvPool);
        }
        search_fit!(budget, |value| match profile.varied(free, value).inputs() {
            Ok(counts) => self.device_bytes(units, &counts, align, stage),
            Err(fault) => Err(PlanError::of_fault(fault, "the serving profile")),
        })
    }
}

/// A rank's plan or fit: `result`'s error as the rank's [`RankError::Plan`].
///
/// # Errors
/// `result`'s.
pub const fn in_rank<T: Copy, E: Copy>(result: Result<T, E>) -> Result<T, RankError<E>> {
    match result {
        Ok(value) => Ok(value),
        Err(error) => Err(RankError::Plan(error)),
    }
}

/// The slow, exact layout of a generated plan, term by term in `steps` with the layout's one
/// [`Placer`], skipping the terms its stage does not hold: run only when a sum of [`Lanes`]
/// overflowed, to report the term the dynamic plan reports. `align` was checked by
/// [`valid_align`].
///
/// # Errors
/// The [`PlanError::Overflow`] of the first term that cannot be placed.
pub const fn replay<const C: usize>(
    classes: &[ClassSize; C],
    steps: &[Step],
    terms: &[TermInfo],
    held: &Held<'_, C>,
    align: u64,
) -> Result<Arena, PlanError> {
    let mut placer = Placer::new(align);
    let mut k = 0;
    while k < steps.len() {
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
