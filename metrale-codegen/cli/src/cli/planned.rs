//! The planned stage of `plan`: a [`DynamicPlan`] for each rank asked for, made from its
//! prepared states ([`Planned`]): the whole checkpoint on one GPU, the one rank named, or
//! every rank.
//!
//! Invariants:
//! - Ranks are prepared and planned one after the other, in (pp rank, tp rank) order, so the
//!   error reported is that of the first rank that cannot be placed or planned.
//! - A plan error is located at the input that caused it ([`located_plan_error`]): a plan of
//!   one rank (or of the whole checkpoint) blames its own states; the table of every rank
//!   blames the whole checkpoint's, as it always has.
//! - Every plan is at the request's alignment, under the one prepared inputs file.

use metrale_circuit::dynamic::{DynamicPlan, StateDecl};
use metrale_circuit::load::diag::Diagnostics;

use super::blame::located_plan_error;
use super::prepared::{Placement, Prepared};
use super::ranks::Asked;
use super::request::Request;

/// What `plan` made: one plan, or one per rank.
pub enum Planned {
    /// The whole checkpoint on one GPU, or the one rank asked for.
    One {
        /// The rank asked for; `None` for the whole checkpoint.
        placement: Option<Placement>,
        /// The plan.
        plan: DynamicPlan,
    },
    /// Every rank, in (pp rank, tp rank) order.
    Every(Vec<RankPlan>),
}

/// One rank's plan, of every rank's.
pub struct RankPlan {
    /// Where the rank sits.
    pub placement: Placement,
    /// Its plan.
    pub plan: DynamicPlan,
}

/// Plans what `prepared` asks for.
///
/// # Errors
/// The first rank that cannot be placed ([`Prepared::rank`]) or planned, located.
pub fn plan(request: &Request, prepared: &Prepared) -> Result<Planned, Diagnostics> {
    // The plan of `decls`, an overflow blamed on `blame`.
    let plan_of = |decls: &[StateDecl], blame: &[StateDecl]| {
        let view = prepared.inputs().view();
        DynamicPlan::new(decls, &view.inputs(), request.align).map_err(|error| {
            Diagnostics::from(located_plan_error(
                &error,
                request,
                prepared.inputs(),
                blame,
            ))
        })
    };
    match prepared.ranks().asked {
        Asked::Whole => Ok(Planned::One {
            placement: None,
            plan: plan_of(prepared.decls(), prepared.decls())?,
        }),
        Asked::One(rank) => {
            let held = prepared.rank(rank)?;
            Ok(Planned::One {
                placement: Some(held.placement),
                plan: plan_of(&held.decls, &held.decls)?,
            })
        }
        Asked::Every => prepared
            .ranks()
            .every()
            .map(|rank| {
                let held = prepared.rank(rank)?;
                Ok(RankPlan {
                    placement: held.placement,
                    plan: plan_of(&held.decls, prepared.decls())?,
                })
            })
            .collect::<Result<_, Diagnostics>>()
            .map(Planned::Every),
    }
}
