//! The one law of which layers a rule of `[config.layer_rules]` names once its integers are
//! known: `every = N` with `offset = O`, a layer index with its `base`, `last = K`. The loader
//! applies it to the rules it can evaluate without a config (a rule's written numbers, over
//! every layer a checkpoint may have: `load::config::rules`), and the config reader to every
//! rule, its integers read from a config, over the config's layers (`crate::config`).
//!
//! Invariants:
//! - Pure integer arithmetic: no allocation, nothing panics, every figure in range by
//!   construction (a period is at least 1 before it is stepped by).
//! - `every` names, among layers `0..layers`, exactly the layers `i` with `i % N == start`,
//!   `start` being `O`, or `N + O` for a negative `O` (counted from the period's end); an offset
//!   fits its period when `0 <= O < N` or `-N <= O < 0`.
//! - An index names layer `index - base`, when that is a layer; `last = K` names the last `K`
//!   layers, `0 <= K <= layers`.

/// Whether offset `offset` names a layer of each period `period` (`period >= 1`): `0` to
/// `period - 1`, or `-period` to `-1` counted from the period's end.
pub(crate) fn offset_fits(offset: i128, period: i128) -> bool {
    if offset >= 0 {
        offset < period
    } else {
        offset >= -period
    }
}

/// The layers `every = period, offset = offset` names among the first `layers`, in order;
/// `None` when the period is below 1 or the offset does not fit it.
pub(crate) fn every(
    period: i128,
    offset: i128,
    layers: u64,
) -> Option<impl Iterator<Item = usize>> {
    if period < 1 || !offset_fits(offset, period) {
        return None;
    }
    let start = if offset >= 0 { offset } else { period + offset };
    // Past `usize::MAX` a figure names no layer but the first of its period, if any.
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    let step = usize::try_from(period).unwrap_or(usize::MAX);
    let end = usize::try_from(layers).unwrap_or(usize::MAX);
    Some((start..end).step_by(step))
}

/// The layer that index `index` names when indices count from `base`, if it is one of the first
/// `layers`.
pub(crate) fn index(index: u64, base: u64, layers: u64) -> Option<usize> {
    index
        .checked_sub(base)
        .filter(|layer| *layer < layers)
        .and_then(|layer| usize::try_from(layer).ok())
}

/// The layers `last = count` names of `layers`: the last `count`; `None` when `count` is
/// negative or more than `layers`. (The loader checks a written `last` against its limit
/// alone: only a config gives the layers.)
#[cfg(any(test, feature = "config"))]
pub(crate) fn last(count: i128, layers: u64) -> Option<std::ops::Range<usize>> {
    if count < 0 || count > i128::from(layers) {
        return None;
    }
    let end = usize::try_from(layers).ok()?;
    let count = usize::try_from(count).ok()?;
    Some(end - count..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_names_the_layers_of_its_definition() {
        for layers in [0_u64, 1, 7, 12, 30] {
            for period in -2_i128..=13 {
                for offset in -15_i128..=15 {
                    let named: Option<Vec<usize>> =
                        every(period, offset, layers).map(Iterator::collect);
                    let fits = period >= 1
                        && if offset >= 0 {
                            offset < period
                        } else {
                            -offset <= period
                        };
                    if !fits {
                        assert_eq!(named, None, "every {period} offset {offset}");
                        continue;
                    }
                    let start = (offset + period) % period;
                    let expected: Vec<usize> = (0..layers)
                        .filter(|i| i128::from(*i) % period == start)
                        .map(|i| usize::try_from(i).unwrap())
                        .collect();
                    assert_eq!(named, Some(expected), "every {period} offset {offset}");
                }
            }
        }
    }

    #[test]
    fn every_with_huge_figures_names_no_layer_past_the_end() {
        let named: Vec<usize> = every(i128::from(u64::MAX), -1, 8).unwrap().collect();
        assert!(named.is_empty());
        let named: Vec<usize> = every(i128::from(u64::MAX), 3, 8).unwrap().collect();
        assert_eq!(named, [3]);
    }

    #[test]
    fn an_index_counts_from_its_base() {
        assert_eq!(index(0, 0, 4), Some(0));
        assert_eq!(index(4, 1, 4), Some(3));
        assert_eq!(index(0, 1, 4), None);
        assert_eq!(index(4, 0, 4), None);
        assert_eq!(index(u64::MAX, 0, u64::MAX), None);
    }

    #[test]
    fn last_names_the_tail() {
        assert_eq!(last(0, 5), Some(5..5));
        assert_eq!(last(2, 5), Some(3..5));
        assert_eq!(last(5, 5), Some(0..5));
        assert_eq!(last(6, 5), None);
        assert_eq!(last(-1, 5), None);
    }
}
