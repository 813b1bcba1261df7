//! Capacity: the largest value of one free plan input such that the device arena fits a byte
//! budget, exact to the byte (alignment padding included), asked before any weight is loaded.
//!
//! This module owns the answer ([`Fit`], [`FitError`]), the one search every fit runs
//! ([`Search`], driven by the one loop `search_fit!`: the dynamic fits here and the runtime's
//! fits of a generated checkpoint's table run the same probes), and the dynamic fits.
//!
//! Invariants:
//! - The device bytes of a plan never decrease as the free input grows (every term's units are
//!   non-decreasing in it, a windowed side's too, and the layout only adds), so the values
//!   that fit are `0..=n`; the search finds `n` with at most 65 plans.
//! - A plan that fails at a value above 0 (an overflow) does not fit; one that fails at 0 is
//!   the answer's error, [`FitError::Plan`].
//! - The answer is optimal: `value` fits and `value + 1` does not, or `value` is `u64::MAX`.

use super::profile::{ProfileFree, ServingProfile};
use crate::model::{FormatChoice, PoolPages, PoolPolicy, StateDecl, StateInputs};
use crate::plan::{DynamicPlan, PlanError, owners_held};

/// The one capacity search loop, for the dynamic fits here and the generated plans' fits
/// (`__private_v0_1::Table::fit_kv_blocks`, `fit_profile`), written once as a macro because a
/// `const fn` can take no closure: a [`Search`] under `$budget`, each probed `$value` planned by
/// `$device_bytes` (a `Result` of the plan's device bytes). A plan that fails at 0 returns its
/// error from the enclosing function as [`FitError::Plan`]; one that fails above 0 does not
/// fit. Evaluates to [`Search::finish`]'s answer.
macro_rules! search_fit {
    ($budget:expr, |$value:ident| $device_bytes:expr) => {{
        let mut search = $crate::serve::Search::new($budget);
        while let Some($value) = search.probe() {
            match $device_bytes {
                Ok(bytes) => search.record(Some(bytes)),
                Err(error) if $value == 0 => return Err($crate::serve::FitError::Plan(error)),
                Err(_) => search.record(None),
            }
        }
        search.finish()
    }};
}
pub(crate) use search_fit;

/// The largest value of the free input that fits, and the device bytes around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The largest value that fits the budget.
    pub value: u64,
    /// The device arena at `value`.
    pub device_bytes: u64,
    /// The device arena at `value + 1`, which exceeds the budget; `None` when that plan
    /// cannot be made (its sizes overflow) or `value` is `u64::MAX`.
    pub next_device_bytes: Option<u64>,
}

impl Fit {
    /// What one more of the free input costs: `next_device_bytes - device_bytes`, every term
    /// that grows with it (a sequence's KV at its context, verify rows, checkpoints, rings,
    /// snapshots) and the alignment padding included, not a live slot's bytes alone.
    #[must_use]
    pub const fn marginal_bytes(&self) -> Option<u64> {
        match self.next_device_bytes {
            Some(next) => next.checked_sub(self.device_bytes),
            None => None,
        }
    }
}

/// Why no value fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitError<E> {
    /// Even 0 needs more device bytes than the budget.
    TooSmall {
        /// The device bytes at 0.
        needs: u64,
    },
    /// 0 fits but 1 does not: the budget holds none of the free input (no sequence, no KV
    /// block), which serves nothing.
    NoneFits {
        /// The device bytes at 0, which fit.
        empty: u64,
        /// The device bytes at 1 (`u64::MAX` when that plan cannot be made).
        needs: u64,
    },
    /// The inputs have no main KV blocks to size (`kv` is `None`).
    NoKvPool,
    /// The plan cannot be made even at 0.
    Plan(E),
}

impl<E> FitError<E> {
    /// Whether the plan of 1 could not be made ([`FitError::NoneFits`] with `needs` at
    /// `u64::MAX`): no budget serves one.
    #[must_use]
    pub const fn one_overflows(&self) -> bool {
        matches!(
            self,
            FitError::NoneFits {
                needs: u64::MAX,
                ..
            }
        )
    }

    /// The same error with its plan error converted (a generated plan's `PlanError` into the
    /// dynamic plan's `PlanError<String>`, say).
    pub fn map_plan<F>(self, convert: impl FnOnce(E) -> F) -> FitError<F> {
        match self {
            FitError::TooSmall { needs } => FitError::TooSmall { needs },
            FitError::NoneFits { empty, needs } => FitError::NoneFits { empty, needs },
            FitError::NoKvPool => FitError::NoKvPool,
            FitError::Plan(error) => FitError::Plan(convert(error)),
        }
    }
}

impl<E: std::fmt::Display> std::fmt::Display for FitError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::TooSmall { needs } => {
                write!(
                    f,
                    "the budget is too small: even 0 needs {needs} device bytes"
                )
            }
            FitError::NoneFits { empty, .. } if self.one_overflows() => write!(
                f,
                "no budget holds one: 0 takes {empty} device bytes, and the plan of 1 overflows u64"
            ),
            FitError::NoneFits { empty, needs } => write!(
                f,
                "the budget holds none: 0 takes {empty} device bytes, but 1 needs {needs}"
            ),
            FitError::NoKvPool => f.write_str("the inputs have no `[kv]` pool to fit"),
            FitError::Plan(error) => write!(f, "{error}"),
        }
    }
}

/// `Plan` prints its plan error's message as its own, so it passes that error's source on, not
/// the error itself (a report would print the message twice).
impl<E: std::error::Error> std::error::Error for FitError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FitError::Plan(error) => error.source(),
            _ => None,
        }
    }
}

/// A binary search for the largest `n` with `fits(n)`, `fits` being true up to some value and
/// false after it: [`Search::probe`] names the next value to plan, [`Search::record`] takes
/// that plan's device bytes (`None` when it could not be made), [`Search::finish`] gives the
/// answer. 0 is probed first, so a budget too small for anything is known at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    budget: u64,
    /// The smallest value not known to fit.
    lo: u64,
    /// The largest value not known to fail.
    hi: u64,
    /// The probe being planned.
    probing: Option<u64>,
    /// The largest value known to fit, with its device bytes.
    best: Option<(u64, u64)>,
    /// The device bytes at the smallest value known to fail (`None`: it failed to plan).
    next: Option<u64>,
    /// The device bytes at 0 when 0 does not fit.
    zero_fails: Option<u64>,
    done: bool,
}

impl Search {
    /// A search for values in `0..=u64::MAX` under `budget` device bytes.
    #[must_use]
    pub const fn new(budget: u64) -> Self {
        Self {
            budget,
            lo: 0,
            hi: u64::MAX,
            probing: None,
            best: None,
            next: None,
            zero_fails: None,
            done: false,
        }
    }

    /// The next value to plan, or `None` when the answer is known.
    pub const fn probe(&mut self) -> Option<u64> {
        if self.done || self.lo > self.hi {
            return None;
        }
        // 0 first; then the middle of what is left (no overflow: lo <= hi).
        let value = if self.best.is_none() {
            0
        } else {
            self.lo + (self.hi - self.lo) / 2
        };
        self.probing = Some(value);
        Some(value)
    }

    /// The device bytes of the plan at the last probe, `None` when that plan failed.
    pub const fn record(&mut self, device_bytes: Option<u64>) {
        let Some(value) = self.probing else {
            return;
        };
        self.probing = None;
        let fits = match device_bytes {
            Some(bytes) => bytes <= self.budget,
            None => false,
        };
        if fits {
            // `device_bytes` is `Some` when it fits.
            let bytes = match device_bytes {
                Some(bytes) => bytes,
                None => 0,
            };
            self.best = Some((value, bytes));
            match value.checked_add(1) {
                Some(lo) => self.lo = lo,
                None => self.done = true,
            }
        } else {
            self.next = device_bytes;
            if value == 0 {
                self.zero_fails = match device_bytes {
                    Some(bytes) => Some(bytes),
                    None => Some(u64::MAX),
                };
                self.done = true;
            } else {
                self.hi = value - 1;
            }
        }
    }

    /// The answer: the largest value that fits and the device bytes at it and one past it, or
    /// the bytes 0 (or 1) needs.
    ///
    /// # Errors
    /// [`FitError::TooSmall`] when 0 does not fit; [`FitError::NoneFits`] when 0 fits and 1
    /// does not (a plan of none of the free input serves nothing).
    pub const fn finish<E>(&self) -> Result<Fit, FitError<E>> {
        if let Some(needs) = self.zero_fails {
            return Err(FitError::TooSmall { needs });
        }
        if let Some((0, empty)) = self.best {
            let needs = match self.next {
                Some(bytes) => bytes,
                None => u64::MAX,
            };
            return Err(FitError::NoneFits { empty, needs });
        }
        match self.best {
            Some((value, device_bytes)) => Ok(Fit {
                value,
                device_bytes,
                next_device_bytes: if value == u64::MAX { None } else { self.next },
            }),
            // Not reached after a finished search: 0 either fits or fails.
            None => Err(FitError::TooSmall { needs: 0 }),
        }
    }
}

/// The most main KV blocks (`inputs.kv.blocks`) whose plan's device arena fits
/// `budget` bytes, every other input as given (a draft pool stays as it is).
///
/// # Errors
/// [`FitError::Plan`] with [`PlanError::MissingOwner`] first, for states no plan of any inputs
/// holds (a reader without its owner); [`FitError::NoKvPool`] without `inputs.kv`;
/// [`FitError::Plan`] when the plan fails at 0 blocks; [`FitError::TooSmall`] when even 0
/// blocks exceed the budget; [`FitError::NoneFits`] when 0 blocks fit and 1 does not.
pub fn fit_kv_blocks(
    decls: &[StateDecl],
    inputs: &StateInputs<'_>,
    align: u64,
    budget: u64,
) -> Result<Fit, FitError<PlanError<String>>> {
    owners_held(decls).map_err(FitError::Plan)?;
    if !has_blocks(inputs) {
        return Err(FitError::NoKvPool);
    }
    drive(budget, |blocks| {
        DynamicPlan::new(decls, &with_blocks(inputs, blocks), align)
    })
}

/// Whether `inputs` have a pool whose blocks `fit --for kv-blocks` can vary: main KV blocks,
/// or a unified page pool.
#[must_use]
pub const fn has_blocks(inputs: &StateInputs<'_>) -> bool {
    matches!(inputs.pool, PoolPolicy::Vllm(_)) || inputs.kv.is_some()
}

/// `inputs` with `blocks` main KV blocks, or under a unified page pool, that pool
/// at `blocks` pages (what `fit --for kv-blocks` varies); as they are without either.
#[must_use]
pub const fn with_blocks<'a>(inputs: &StateInputs<'a>, blocks: u64) -> StateInputs<'a> {
    let mut trial = *inputs;
    match (&mut trial.pool, &mut trial.kv) {
        (PoolPolicy::Vllm(pool), _) => pool.pages = PoolPages::Pages(blocks),
        (PoolPolicy::Arenas, Some(kv)) => kv.blocks = blocks,
        (PoolPolicy::Arenas, None) => {}
    }
    trial
}

/// Runs a [`Search`] under `budget` over the plans `plan_at` makes.
fn drive(
    budget: u64,
    mut plan_at: impl FnMut(u64) -> Result<DynamicPlan, PlanError<String>>,
) -> Result<Fit, FitError<PlanError<String>>> {
    search_fit!(budget, |value| plan_at(value)
        .map(|plan| plan.device_bytes()))
}

/// The largest value of a serving profile's free input `free` whose plan's device arena
/// fits `budget` bytes: the profile at each probed value ([`ServingProfile::varied`]), so
/// every count that follows from it scales with it.
///
/// # Errors
/// [`FitError::Plan`] with [`PlanError::MissingOwner`] first, for states no plan of any inputs
/// holds (a reader without its owner); [`FitError::NoKvPool`] when `free` is the pool and the
/// profile has none; [`FitError::Plan`] when the plan fails at 0 (a missing format, a windowed
/// side without `chunk_tokens`, ...); [`FitError::TooSmall`] when even 0 exceeds the budget;
/// [`FitError::NoneFits`] when 0 fits and 1 does not.
pub fn fit_profile(
    decls: &[StateDecl],
    formats: &[(&str, FormatChoice<&str>)],
    profile: &ServingProfile<'_>,
    free: ProfileFree,
    align: u64,
    budget: u64,
) -> Result<Fit, FitError<PlanError<String>>> {
    owners_held(decls).map_err(FitError::Plan)?;
    if matches!(free, ProfileFree::KvBlocks) && profile.kv.is_none() && profile.pool.is_none() {
        return Err(FitError::NoKvPool);
    }
    drive(budget, |value| match profile.varied(free, value).inputs() {
        Ok(inputs) => DynamicPlan::new(decls, &StateInputs { formats, ..inputs }, align),
        Err(fault) => Err(PlanError::of_fault(fault, "the serving profile".to_owned())),
    })
}

/// The most concurrent sequences of `context` tokens each whose plan's device arena fits
/// `budget` bytes: [`fit_profile`] over `sequences`, so slots, verify, caches and the KV blocks
/// all scale with it.
///
/// # Errors
/// As [`fit_profile`].
pub fn fit_sequences(
    decls: &[StateDecl],
    formats: &[(&str, FormatChoice<&str>)],
    profile: &ServingProfile<'_>,
    context: u64,
    align: u64,
    budget: u64,
) -> Result<Fit, FitError<PlanError<String>>> {
    let free = ProfileFree::Sequences { context };
    fit_profile(decls, formats, profile, free, align, budget)
}

/// The most main KV blocks of a serving profile whose plan's device arena fits
/// `budget` bytes: [`fit_profile`] over the pool, so a draft pool the profile ties to it
/// (`draft_kv`) grows with it (where [`fit_kv_blocks`] keeps every other input as given).
///
/// # Errors
/// As [`fit_profile`].
pub fn fit_profile_blocks(
    decls: &[StateDecl],
    formats: &[(&str, FormatChoice<&str>)],
    profile: &ServingProfile<'_>,
    align: u64,
    budget: u64,
) -> Result<Fit, FitError<PlanError<String>>> {
    fit_profile(
        decls,
        formats,
        profile,
        ProfileFree::KvBlocks,
        align,
        budget,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a search over `fits(n) = n <= limit`, a plan of `n * 10` bytes.
    fn run(budget: u64) -> (Result<Fit, FitError<()>>, u32) {
        let mut search = Search::new(budget);
        let mut probes = 0;
        while let Some(n) = search.probe() {
            probes += 1;
            search.record(n.checked_mul(10));
        }
        (search.finish(), probes)
    }

    #[test]
    fn finds_the_largest_value_that_fits() {
        // 10 n <= 95: n = 9 (90 bytes), 10 would need 100.
        let (fit, probes) = run(95);
        assert_eq!(
            fit,
            Ok(Fit {
                value: 9,
                device_bytes: 90,
                next_device_bytes: Some(100)
            })
        );
        assert!(probes <= 65, "{probes} probes");
        // Exactly on the budget fits.
        assert_eq!(run(100).0.map(|f| f.value), Ok(10));
        // Every value fits up to the overflow of n * 10: the last one before it.
        let (fit, _) = run(u64::MAX);
        let fit = fit.unwrap();
        assert_eq!(fit.value, u64::MAX / 10);
        assert_eq!(fit.next_device_bytes, None, "n + 1 overflows");
    }

    #[test]
    fn none_that_fits_is_an_error_naming_what_one_needs() {
        // 0 takes 4 bytes, 1 takes 14: a budget of 10 holds none.
        let mut search = Search::new(10);
        while let Some(value) = search.probe() {
            search.record(value.checked_mul(10).and_then(|b| b.checked_add(4)));
        }
        assert_eq!(
            search.finish::<()>(),
            Err(FitError::NoneFits {
                empty: 4,
                needs: 14
            })
        );
        // A plan at 1 that cannot be made needs more than any budget.
        let mut search = Search::new(10);
        while let Some(value) = search.probe() {
            search.record(if value == 0 { Some(4) } else { None });
        }
        assert_eq!(
            search.finish::<()>(),
            Err(FitError::NoneFits {
                empty: 4,
                needs: u64::MAX
            })
        );
    }

    #[test]
    fn zero_that_does_not_fit_is_too_small() {
        let mut search = Search::new(5);
        assert_eq!(search.probe(), Some(0));
        search.record(Some(6));
        assert_eq!(search.probe(), None);
        assert_eq!(search.finish::<()>(), Err(FitError::TooSmall { needs: 6 }));
    }
}
