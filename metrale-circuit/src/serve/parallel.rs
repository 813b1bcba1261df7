//! Tensor- and pipeline-parallel ranks: how a dim shards over T tensor-parallel ranks, and which
//! layers each of P pipeline ranks holds. The one law for the dynamic plan and generated code
//! (every function here is a checked `const fn`).
//!
//! Invariants:
//! - A sharded dim `d` over `t` ranks is `d / t` when `t` divides `d`; `1` when `d < t` and
//!   `d` divides `t` (replicated: each rank holds one, as vLLM does with fewer KV heads than
//!   ranks); otherwise no value ([`shard`] is `None`), an error naming the dim.
//! - The default pipeline split is vLLM's (`get_pp_indices` in vllm/distributed/utils.py):
//!   each of `p` ranks holds `layers / p` layers, and the remainder goes one each to ranks
//!   `p - 2`, `p - 3`, ... backwards, so the last rank, which also holds the epilogue, is not
//!   the largest. A split given by hand (`pp_layers`) must have `p` counts that sum to the
//!   layers. Every rank holds at least one layer.
//! - The prologue lives on pipeline rank 0; the epilogue and the draft head on the last
//!   ([`Stage::holds`], the one rule the dynamic plan and generated plans place by).

use std::fmt;

use crate::model::Position;

/// How many tensor- and pipeline-parallel ranks serve the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallel<'a> {
    /// Tensor-parallel ranks (at least 1).
    pub tp: u64,
    /// Pipeline-parallel ranks (at least 1).
    pub pp: u64,
    /// The layers each pipeline rank holds, in rank order, when not vLLM's default split.
    pub pp_layers: Option<&'a [u64]>,
}

impl Parallel<'_> {
    /// One GPU: one tensor- and one pipeline-parallel rank.
    pub const SINGLE: Parallel<'static> = Parallel {
        tp: 1,
        pp: 1,
        pp_layers: None,
    };
}

/// One rank: its tensor-parallel and pipeline-parallel index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rank {
    /// Tensor-parallel rank, below [`Parallel::tp`].
    pub tp: u64,
    /// Pipeline-parallel rank, below [`Parallel::pp`].
    pub pp: u64,
}

/// Why a rank cannot be placed: its sizes, its index or the split of the layers. `Copy` and
/// without allocation, so a `const fn` ([`Stage::of`]) can give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageFault {
    /// A tensor- or pipeline-parallel size of 0.
    ZeroSize,
    /// A rank outside its size.
    RankOutOfRange {
        /// The rank given.
        rank: Rank,
        /// The sizes.
        tp: u64,
        /// The sizes.
        pp: u64,
    },
    /// More pipeline ranks than layers: some rank would hold none.
    MoreStagesThanLayers {
        /// The layers.
        layers: u64,
        /// The pipeline-parallel size.
        pp: u64,
    },
    /// A `pp_layers` that is not `pp` counts of at least 1 summing to the layers.
    BadPpLayers {
        /// How many counts it has.
        ranks: u64,
        /// What they sum to (saturating).
        sum: u64,
        /// The layers.
        layers: u64,
        /// The pipeline-parallel size.
        pp: u64,
    },
}

impl fmt::Display for StageFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroSize => f.write_str("a tensor- or pipeline-parallel size of 0"),
            Self::RankOutOfRange { rank, tp, pp } => write!(
                f,
                "rank (tp {}, pp {}) is outside tp {tp} x pp {pp}",
                rank.tp, rank.pp
            ),
            Self::MoreStagesThanLayers { layers, pp } => write!(
                f,
                "{pp} pipeline-parallel ranks for {layers} layers: a rank would hold no layer"
            ),
            Self::BadPpLayers {
                ranks,
                sum,
                layers,
                pp,
            } => write!(
                f,
                "`pp_layers` gives {ranks} counts summing to {sum}, but the plan has {pp} \
                 pipeline-parallel ranks and {layers} layers (each count at least 1)"
            ),
        }
    }
}

impl std::error::Error for StageFault {}

/// Why a parallel layout cannot be made (the dynamic plan's form, naming dims by `String`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParallelError {
    /// The rank cannot be placed.
    Stage(StageFault),
    /// A sharded dim that `tp` neither divides nor is a multiple of.
    DimDoesNotSplit {
        /// The dim.
        dim: String,
        /// Its value.
        value: u64,
        /// The tensor-parallel size.
        tp: u64,
    },
    /// A derived dim that cannot be computed from a rank's dims (a subtraction below zero).
    DerivedDimFails {
        /// The derived dim.
        dim: String,
        /// The tensor-parallel size.
        tp: u64,
        /// Why, as the shape evaluation says it.
        reason: String,
    },
}

impl From<StageFault> for ParallelError {
    fn from(fault: StageFault) -> Self {
        ParallelError::Stage(fault)
    }
}

impl fmt::Display for ParallelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stage(fault) => write!(f, "{fault}"),
            Self::DimDoesNotSplit { dim, value, tp } => does_not_split(f, dim, *value, *tp),
            Self::DerivedDimFails { dim, tp, reason } => write!(
                f,
                "derived dim `{dim}` cannot be computed on one of {tp} tensor-parallel ranks: \
                 {reason}"
            ),
        }
    }
}

impl std::error::Error for ParallelError {}

/// Why generated `Dims::on_tp` has no rank's dims: the `const`-friendly (`Copy`, named by
/// `&'static str`) form of the [`ParallelError`]s it can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardFault {
    /// `tp` is 0.
    ZeroRanks,
    /// A sharded dim that `tp` neither divides nor is a multiple of.
    DoesNotSplit {
        /// The dim.
        dim: &'static str,
        /// Its value.
        value: u64,
        /// The tensor-parallel size.
        tp: u64,
    },
}

impl From<ShardFault> for ParallelError {
    fn from(fault: ShardFault) -> Self {
        match fault {
            ShardFault::ZeroRanks => ParallelError::Stage(StageFault::ZeroSize),
            ShardFault::DoesNotSplit { dim, value, tp } => ParallelError::DimDoesNotSplit {
                dim: dim.to_owned(),
                value,
                tp,
            },
        }
    }
}

impl fmt::Display for ShardFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroRanks => f.write_str("a tensor-parallel size of 0"),
            Self::DoesNotSplit { dim, value, tp } => does_not_split(f, dim, *value, *tp),
        }
    }
}

impl std::error::Error for ShardFault {}

/// The message of a sharded dim that does not split, in either error's form.
fn does_not_split(f: &mut fmt::Formatter<'_>, dim: &str, value: u64, tp: u64) -> fmt::Result {
    write!(
        f,
        "dim `{dim}` = {value} does not split over {tp} tensor-parallel ranks: {tp} neither \
         divides {value} nor is a multiple of it"
    )
}

/// The part of the model one pipeline rank holds: layers `start..end`, the prologue when it is
/// the first rank, the epilogue and the draft head when it is the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// The first layer held.
    pub start: u64,
    /// One past the last layer held.
    pub end: u64,
    /// Pipeline rank 0: holds the prologue.
    pub first: bool,
    /// The last pipeline rank: holds the epilogue and the draft head.
    pub last: bool,
}

impl Stage {
    /// The whole model of `layers` layers, on one pipeline rank.
    #[must_use]
    pub const fn whole(layers: u64) -> Self {
        Self {
            start: 0,
            end: layers,
            first: true,
            last: true,
        }
    }

    /// What rank `rank` of `parallel` holds of a model of `layers` layers: the layers of
    /// vLLM's split or of `pp_layers`, the prologue on rank 0, the epilogue and the
    /// draft head on the last.
    ///
    /// # Errors
    /// [`StageFault::ZeroSize`] when a size is 0, [`StageFault::RankOutOfRange`] when
    /// either index is outside its size, [`StageFault::MoreStagesThanLayers`], and
    /// [`StageFault::BadPpLayers`] for a `pp_layers` that is not `pp` counts of at least 1
    /// summing to `layers`.
    pub const fn of(layers: u64, parallel: &Parallel<'_>, rank: Rank) -> Result<Self, StageFault> {
        if parallel.tp == 0 || parallel.pp == 0 {
            return Err(StageFault::ZeroSize);
        }
        if rank.tp >= parallel.tp || rank.pp >= parallel.pp {
            return Err(StageFault::RankOutOfRange {
                rank,
                tp: parallel.tp,
                pp: parallel.pp,
            });
        }
        match split(layers, parallel, rank.pp) {
            Ok((start, end)) => Ok(Self {
                start,
                end,
                first: rank.pp == 0,
                last: rank.pp + 1 == parallel.pp,
            }),
            Err(error) => Err(error),
        }
    }

    /// Whether this stage holds the block instance at `position`.
    #[must_use]
    pub const fn holds(&self, position: Position) -> bool {
        match position {
            Position::Prologue => self.first,
            Position::Layer(layer) => self.start <= layer && layer < self.end,
            Position::Epilogue | Position::Draft => self.last,
        }
    }

    /// Whether this stage holds the whole model of `layers` layers.
    #[must_use]
    pub const fn is_whole(&self, layers: u64) -> bool {
        self.first && self.last && self.start == 0 && self.end == layers
    }
}

/// Why generated code has no plan (or fit) for one rank: its dims do not shard, the rank or
/// the split is wrong, or the rank's plan fails (`E`: a `PlanError`, or a fit's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankError<E> {
    /// A sharded dim does not split (generated `Dims::on_tp`).
    Shard(ShardFault),
    /// The rank is outside the sizes, or the layers cannot be split ([`Stage::of`]).
    Stage(StageFault),
    /// The rank's plan or fit fails.
    Plan(E),
}

impl<E: fmt::Display> fmt::Display for RankError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shard(fault) => write!(f, "{fault}"),
            Self::Stage(fault) => write!(f, "{fault}"),
            Self::Plan(error) => write!(f, "{error}"),
        }
    }
}

/// Each variant prints its error's message as its own, so it passes that error's source on, not
/// the error itself (a report would print the message twice).
impl<E: std::error::Error> std::error::Error for RankError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Shard(fault) => fault.source(),
            Self::Stage(fault) => fault.source(),
            Self::Plan(error) => error.source(),
        }
    }
}

/// Dim `d` on one of `t` tensor-parallel ranks: `d / t` when `t` divides `d`, `1` when
/// `d < t` and `d` divides `t` (replicated), else `None`.
#[must_use]
pub const fn shard(d: u64, t: u64) -> Option<u64> {
    if t == 0 {
        return None;
    }
    if d.is_multiple_of(t) {
        return Some(d / t);
    }
    if d != 0 && d < t && t.is_multiple_of(d) {
        return Some(1);
    }
    None
}

/// The layers pipeline rank `rank` of `pp` holds under vLLM's default split of `layers`.
/// `None` when `pp` is 0, `rank >= pp` or `pp > layers`.
#[must_use]
pub const fn default_stage_layers(layers: u64, pp: u64, rank: u64) -> Option<u64> {
    if pp == 0 || rank >= pp || pp > layers {
        return None;
    }
    let base = layers / pp;
    let rest = layers % pp;
    // Ranks pp - 1 - rest ..= pp - 2 hold one more (none when rest is 0).
    let extra = rest > 0 && rank + 1 + rest >= pp && rank + 1 < pp;
    Some(if extra { base + 1 } else { base })
}

/// The layers `[start, end)` pipeline rank `rank` holds, the sizes and the rank checked
/// ([`Stage::of`]).
const fn split(layers: u64, parallel: &Parallel<'_>, rank: u64) -> Result<(u64, u64), StageFault> {
    let pp = parallel.pp;
    if pp > layers {
        return Err(StageFault::MoreStagesThanLayers { layers, pp });
    }
    if let Some(counts) = parallel.pp_layers {
        return given_stage(counts, layers, pp, rank);
    }
    let mut start = 0u64;
    let mut r = 0u64;
    while r < rank {
        // In range: r < rank < pp <= layers.
        if let Some(n) = default_stage_layers(layers, pp, r) {
            start += n;
        }
        r += 1;
    }
    match default_stage_layers(layers, pp, rank) {
        Some(n) => Ok((start, start + n)),
        None => Err(StageFault::MoreStagesThanLayers { layers, pp }),
    }
}

/// The layers `[start, end)` rank `rank` (below `pp`) holds under a split given by hand.
const fn given_stage(
    counts: &[u64],
    layers: u64,
    pp: u64,
    rank: u64,
) -> Result<(u64, u64), StageFault> {
    let mut sum = 0u64;
    let mut has_zero = false;
    let mut start = 0u64;
    let mut held = 0u64;
    let mut i = 0;
    while i < counts.len() {
        if counts[i] == 0 {
            has_zero = true;
        }
        if (i as u64) < rank {
            start = start.saturating_add(counts[i]);
        } else if i as u64 == rank {
            held = counts[i];
        }
        sum = sum.saturating_add(counts[i]);
        i += 1;
    }
    let ranks = counts.len() as u64;
    if ranks != pp || sum != layers || has_zero {
        return Err(StageFault::BadPpLayers {
            ranks,
            sum,
            layers,
            pp,
        });
    }
    Ok((start, start + held))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layers `[start, end)` pipeline rank `rank` holds: vLLM's split, or `pp_layers`
    /// ([`Stage::of`] for tensor-parallel rank 0).
    ///
    /// # Errors
    /// [`Stage::of`]'s.
    const fn stage(
        layers: u64,
        parallel: &Parallel<'_>,
        rank: u64,
    ) -> Result<(u64, u64), StageFault> {
        match Stage::of(layers, parallel, Rank { tp: 0, pp: rank }) {
            Ok(held) => Ok((held.start, held.end)),
            Err(fault) => Err(fault),
        }
    }

    fn split(layers: u64, pp: u64) -> Vec<u64> {
        let parallel = Parallel {
            tp: 1,
            pp,
            pp_layers: None,
        };
        (0..pp)
            .map(|r| {
                let (start, end) = stage(layers, &parallel, r).unwrap();
                end - start
            })
            .collect()
    }

    #[test]
    fn shards_divide_or_replicate() {
        assert_eq!(shard(32, 8), Some(4));
        assert_eq!(shard(2, 4), Some(1), "fewer KV heads than ranks: one each");
        assert_eq!(shard(1, 4), Some(1), "one Mamba2 group: replicated");
        assert_eq!(shard(3, 4), None);
        assert_eq!(shard(6, 4), None);
        assert_eq!(shard(0, 4), Some(0));
        assert_eq!(shard(8, 0), None);
    }

    #[test]
    fn the_default_split_is_vllms() {
        // vLLM's get_pp_indices: layers // pp each, the remainder one each to ranks pp - 2,
        // pp - 3, ... (its tests: 20 layers over 4 ranks even; hand-checked here).
        assert_eq!(split(20, 4), [5, 5, 5, 5]);
        assert_eq!(split(21, 4), [5, 5, 6, 5]);
        assert_eq!(split(22, 4), [5, 6, 6, 5]);
        assert_eq!(split(23, 4), [6, 6, 6, 5]);
        assert_eq!(split(98, 2), [49, 49]);
        assert_eq!(split(61, 8), [7, 7, 8, 8, 8, 8, 8, 7]);
        assert_eq!(split(3, 3), [1, 1, 1]);
        for layers in 1..40u64 {
            for pp in 1..=layers.min(9) {
                let counts = split(layers, pp);
                assert_eq!(counts.iter().sum::<u64>(), layers);
                assert!(counts.iter().all(|&c| c >= 1));
                // The last rank (it holds the epilogue too) never takes the remainder.
                assert_eq!(*counts.last().unwrap(), layers / pp);
            }
        }
    }

    #[test]
    fn stages_are_contiguous_and_errors_are_named() {
        let p = Parallel {
            tp: 1,
            pp: 3,
            pp_layers: None,
        };
        assert_eq!(stage(10, &p, 0), Ok((0, 3)));
        assert_eq!(stage(10, &p, 1), Ok((3, 7)));
        assert_eq!(stage(10, &p, 2), Ok((7, 10)));
        assert_eq!(
            stage(2, &p, 0),
            Err(StageFault::MoreStagesThanLayers { layers: 2, pp: 3 })
        );
        let given = Parallel {
            pp_layers: Some(&[2, 8]),
            pp: 2,
            ..p
        };
        assert_eq!(stage(10, &given, 1), Ok((2, 10)));
        assert_eq!(
            stage(11, &given, 0),
            Err(StageFault::BadPpLayers {
                ranks: 2,
                sum: 10,
                layers: 11,
                pp: 2
            })
        );
        let zero = Parallel {
            pp_layers: Some(&[0, 10]),
            ..given
        };
        assert!(matches!(
            stage(10, &zero, 0),
            Err(StageFault::BadPpLayers { .. })
        ));
        assert!(stage(10, &p, 3).is_err());
    }
}
