//! Tensor- and pipeline-parallel rank arithmetic: the sizes a request's parallel options
//! resolve to over the inputs file's `[parallel]`, and the ranks they ask for ([`Ranks`]).
//!
//! Invariants:
//! - An option given wins over the inputs file; a size given nowhere is 1; the file's
//!   `pp_layers` is kept only while `--pp` leaves the file's `pp` as it is.
//! - `--tp-rank` and `--pp-rank` come together (clap refuses one alone) and ask for that one
//!   rank, even on one GPU; without them one GPU is the whole checkpoint, and more than one
//!   rank is every rank, in (pp rank, tp rank) order.
//! - The tensor-parallel ranks of one pipeline stage hold the same states (each holds its
//!   share of every sharded dim, the same share), so every rank is planned and fitted once per
//!   stage ([`Ranks::stages`]): the work grows with `pp` (at most the layers), never with `tp`.

use metrale_circuit::load::inputs_file::ParallelCounts;
use metrale_circuit::parallel::Rank;

use super::request::ParallelArgs;

/// Which ranks a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// No rank, on one GPU: the whole checkpoint.
    Whole,
    /// The rank `--tp-rank` and `--pp-rank` name.
    One(Rank),
    /// No rank, over more than one: every rank.
    Every,
}

/// The sizes, and the ranks asked for of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranks {
    /// The sizes (and the file's `pp_layers`, kept only when `--pp` does not change `pp`).
    pub counts: ParallelCounts,
    /// The ranks asked for.
    pub asked: Asked,
}

impl Ranks {
    /// The sizes and ranks `args` ask for over `file` (the inputs' `[parallel]`).
    #[must_use]
    pub fn resolve(args: &ParallelArgs, file: &ParallelCounts) -> Self {
        let tp = args.tp.unwrap_or(file.tp);
        let pp = args.pp.unwrap_or(file.pp);
        // A split by hand is for the file's own pipeline size.
        let pp_layers = file.pp_layers.clone().filter(|_| pp == file.pp);
        let asked = match args.tp_rank.zip(args.pp_rank) {
            Some((tp, pp)) => Asked::One(Rank { tp, pp }),
            None if tp == 1 && pp == 1 => Asked::Whole,
            None => Asked::Every,
        };
        Self {
            counts: ParallelCounts { tp, pp, pp_layers },
            asked,
        }
    }

    /// The ranks that stand for those asked for, one per distinct plan, in pipeline order:
    /// the one asked for, or tensor-parallel rank 0 of every pipeline stage (its tp ranks hold
    /// the same states); `None` for the whole checkpoint.
    #[must_use]
    pub fn listed(&self) -> Option<Vec<Rank>> {
        match self.asked {
            Asked::Whole => None,
            Asked::One(rank) => Some(vec![rank]),
            Asked::Every => Some(self.stages().collect()),
        }
    }

    /// Tensor-parallel rank 0 of each pipeline stage, in pipeline order: one rank per distinct
    /// plan of every rank. Lazy, so a caller that stops at the first stage that fails does no
    /// more (a `pp` past the layers fails at the first).
    pub fn stages(&self) -> impl Iterator<Item = Rank> + use<> {
        (0..self.counts.pp).map(|pp| Rank { tp: 0, pp })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(tp: Option<u64>, pp: Option<u64>, rank: Option<(u64, u64)>) -> ParallelArgs {
        ParallelArgs {
            tp,
            pp,
            tp_rank: rank.map(|r| r.0),
            pp_rank: rank.map(|r| r.1),
        }
    }

    #[test]
    fn options_win_over_the_file_and_pick_the_ranks() {
        let file = ParallelCounts {
            tp: 2,
            pp: 2,
            pp_layers: Some(vec![10, 38]),
        };
        // The file alone: its sizes and split, every rank.
        let ranks = Ranks::resolve(&args(None, None, None), &file);
        assert_eq!(ranks.counts, file);
        assert_eq!(ranks.asked, Asked::Every);
        let pairs =
            |ranks: &Ranks| -> Vec<(u64, u64)> { ranks.stages().map(|r| (r.tp, r.pp)).collect() };
        // One rank per pipeline stage stands for its tensor-parallel ranks.
        assert_eq!(pairs(&ranks), [(0, 0), (0, 1)]);
        assert_eq!(ranks.listed().map(|l| l.len()), Some(2));
        // `--tp` keeps the file's split; `--pp` to another size drops it.
        let ranks = Ranks::resolve(&args(Some(4), None, None), &file);
        assert_eq!((ranks.counts.tp, ranks.counts.pp), (4, 2));
        assert_eq!(ranks.counts.pp_layers, Some(vec![10, 38]));
        let ranks = Ranks::resolve(&args(None, Some(3), None), &file);
        assert_eq!(ranks.counts.pp_layers, None);
        // One GPU: the whole checkpoint, unless a rank is named.
        let one = ParallelCounts::SINGLE;
        let ranks = Ranks::resolve(&args(None, None, None), &one);
        assert_eq!((ranks.asked, ranks.listed()), (Asked::Whole, None));
        let ranks = Ranks::resolve(&args(None, None, Some((0, 0))), &one);
        let rank = Rank { tp: 0, pp: 0 };
        assert_eq!(
            (ranks.asked, ranks.listed()),
            (Asked::One(rank), Some(vec![rank]))
        );
        let ranks = Ranks::resolve(&args(Some(1), Some(1), None), &file);
        assert_eq!(ranks.asked, Asked::Whole);
    }
}
