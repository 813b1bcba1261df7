//! The planned stage of `plan`: a [`DynamicPlan`] for each rank asked for, made from its
//! prepared states ([`Planned`]): the whole checkpoint on one GPU, the one rank named, or
//! every rank.
//!
//! Invariants:
//! - Ranks are prepared and planned one after the other, in (pp rank, tp rank) order, so the
//!   error reported is that of the first rank that cannot be placed or planned.
//! - A plan error is located at the input that caused it ([`located_plan_error`]), blamed on
//!   the states of the plan that failed: the whole checkpoint's, or the rank's, whether that
//!   rank was named or is one of every rank's table.
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
    // The plan of `decls`, an overflow blamed on them.
    let plan_of = |decls: &[StateDecl]| {
        let view = prepared.inputs().view();
        DynamicPlan::new(decls, &view.inputs(), request.align).map_err(|error| {
            Diagnostics::from(located_plan_error(
                &error,
                request,
                prepared.inputs(),
                decls,
            ))
        })
    };
    match prepared.ranks().asked {
        Asked::Whole => Ok(Planned::One {
            placement: None,
            plan: plan_of(prepared.decls())?,
        }),
        Asked::One(rank) => {
            let held = prepared.rank(rank)?;
            Ok(Planned::One {
                placement: Some(held.placement),
                plan: plan_of(&held.decls)?,
            })
        }
        Asked::Every => prepared
            .ranks()
            .every()
            .map(|rank| {
                let held = prepared.rank(rank)?;
                Ok(RankPlan {
                    placement: held.placement,
                    plan: plan_of(&held.decls)?,
                })
            })
            .collect::<Result<_, Diagnostics>>()
            .map(Planned::Every),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::prepared::prepare;
    use crate::cli::request::{DEFAULT_INPUTS, Inputs, ParallelArgs};

    /// What `plan` of `qwen3_next.toml`'s `tiny` (8 layers) over 2 x 2 ranks makes, for `rank`.
    fn planned(rank: Option<(u64, u64)>) -> Planned {
        let request = Request {
            circuit: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../circuits/qwen3_next.toml"
            )
            .to_owned(),
            checkpoint: Some("tiny".to_owned()),
            inputs: Inputs::BuiltIn(DEFAULT_INPUTS),
            align: 256,
            parallel: ParallelArgs {
                tp: Some(2),
                pp: Some(2),
                tp_rank: rank.map(|r| r.0),
                pp_rank: rank.map(|r| r.1),
            },
        };
        let made = prepare(&request).and_then(|prepared| plan(&request, &prepared));
        match made {
            Ok(planned) => planned,
            Err(diagnostics) => panic!("{}", diagnostics.render()),
        }
    }

    #[test]
    fn every_rank_plans_as_each_rank_asked_alone() {
        let Planned::Every(ranks) = planned(None) else {
            panic!("2 x 2 ranks without one named plan every rank");
        };
        let order: Vec<(u64, u64)> = ranks
            .iter()
            .map(|r| (r.placement.rank.tp, r.placement.rank.pp))
            .collect();
        assert_eq!(order, [(0, 0), (1, 0), (0, 1), (1, 1)]);
        for every in &ranks {
            let rank = every.placement.rank;
            let Planned::One { placement, plan } = planned(Some((rank.tp, rank.pp))) else {
                panic!("a rank named plans that rank");
            };
            assert_eq!(placement, Some(every.placement));
            assert_eq!(plan, every.plan, "{rank:?}");
        }
        // The two pipeline stages hold different layers, so their plans differ.
        assert_ne!(ranks[0].plan, ranks[2].plan);
    }
}
