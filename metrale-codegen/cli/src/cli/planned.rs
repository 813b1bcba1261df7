//! The planned stage of `plan`: a [`DynamicPlan`] for each rank asked for, made from its
//! prepared states ([`Planned`]): the whole checkpoint on one GPU, the one rank named, or
//! every rank.
//!
//! Invariants:
//! - Ranks are prepared and planned one after the other, in (pp rank, tp rank) order, so the
//!   error reported is that of the first rank that cannot be placed or planned. Every rank is
//!   planned once per pipeline stage (`Ranks::stages`): its tensor-parallel ranks hold the
//!   same plan.
//! - A plan error is located at the input that caused it ([`located_plan_error`]), blamed on
//!   the states of the plan that failed: the whole checkpoint's, or the rank's, whether that
//!   rank was named or is one of every rank's table.
//! - Every plan is at the request's alignment, under the one prepared inputs file.

use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl};
use metrale_circuit::load::diag::Diagnostics;

use super::blame::located_plan_error;
use super::prepared::{ParallelRank, Prepared};
use super::ranks::Asked;
use super::request::Request;

/// What `plan` made: one plan, or one per rank.
pub enum Planned {
    /// The whole checkpoint on one GPU, or the one rank asked for.
    One {
        /// The rank asked for; `None` for the whole checkpoint.
        parallel_rank: Option<ParallelRank>,
        /// The plan.
        plan: DynamicPlan,
    },
    /// Every rank: one plan per pipeline stage, in pipeline order.
    Every(Vec<RankPlan>),
}

/// The plan of tensor-parallel rank 0 of one pipeline stage, which each of the stage's
/// `tp` ranks holds.
pub struct RankPlan {
    /// Where tensor-parallel rank 0 of the stage sits.
    pub parallel_rank: ParallelRank,
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
            parallel_rank: None,
            plan: plan_of(prepared.decls())?,
        }),
        Asked::One(rank) => {
            let held = prepared.rank(rank)?;
            Ok(Planned::One {
                parallel_rank: Some(held.parallel_rank),
                plan: plan_of(&held.decls)?,
            })
        }
        Asked::Every => prepared
            .ranks()
            .stages()
            .map(|rank| {
                let held = prepared.rank(rank)?;
                Ok(RankPlan {
                    parallel_rank: held.parallel_rank,
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
    use crate::cli::request::{DEFAULT_INPUTS, InputsSource, ParallelArgs};

    /// What `plan` of `qwen3_next.toml`'s `tiny` (8 layers) over 2 x 2 ranks makes, for `rank`.
    fn planned(rank: Option<(u64, u64)>) -> Planned {
        let request = Request {
            circuit: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../circuits/qwen3_next.toml"
            )
            .to_owned(),
            checkpoint: Some("tiny".to_owned()),
            inputs: InputsSource::BuiltIn(DEFAULT_INPUTS),
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
        let Planned::Every(stages) = planned(None) else {
            panic!("2 x 2 ranks without one named plan every rank");
        };
        let order: Vec<(u64, u64)> = stages
            .iter()
            .map(|r| (r.parallel_rank.rank.tp, r.parallel_rank.rank.pp))
            .collect();
        assert_eq!(order, [(0, 0), (0, 1)]);
        // Each stage's plan is that of each of its tensor-parallel ranks, asked alone.
        for every in &stages {
            for tp in 0..2 {
                let pp = every.parallel_rank.rank.pp;
                let Planned::One {
                    parallel_rank,
                    plan,
                } = planned(Some((tp, pp)))
                else {
                    panic!("a rank named plans that rank");
                };
                let parallel_rank = parallel_rank.expect("a parallel_rank");
                assert_eq!(
                    (parallel_rank.rank.tp, parallel_rank.stage),
                    (tp, every.parallel_rank.stage)
                );
                assert_eq!(plan, every.plan, "tp {tp}, pp {pp}");
            }
        }
        // The two pipeline stages hold different layers, so their plans differ.
        assert_ne!(stages[0].plan, stages[1].plan);
    }
}
