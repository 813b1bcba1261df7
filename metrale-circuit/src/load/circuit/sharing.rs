//! KV shared across layers (`shares`, schema 3): where a KV side that reads another layer's KV
//! instead of keeping its own finds its owner ([`Shares`]), and the one rule that places the
//! owner under a checkpoint's layer kinds ([`owner_layer`]), which the loader checks every
//! checkpoint by and both plans instantiate by.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - The owner is always an earlier layer than the reader's, of a kind that holds the owner's
//!   block: by rule the last such layer before the reader, or the layer the `layer` expression
//!   gives. Anything else is an [`OwnerFault`], never a guess.

use super::shape::Shape;

/// What a reader (`shares`) reads: a state of a block of an earlier layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shares {
    /// The owner's block.
    pub(crate) block: String,
    /// The owner's id inside its block.
    pub(crate) state: String,
    /// The owner's layer, as a one-axis expression over the dims (`shares = { state, layer }`);
    /// `None`: the last earlier layer whose kind holds `block`.
    pub(crate) layer: Option<Shape>,
}

impl Shares {
    /// The owner's block.
    #[must_use]
    pub fn block(&self) -> &str {
        &self.block
    }

    /// The owner's id inside its block.
    #[must_use]
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The owner's layer, as an expression over the checkpoint's dims; `None` when the owner is
    /// the last earlier layer whose kind holds [`Shares::block`].
    #[must_use]
    pub fn layer(&self) -> Option<&Shape> {
        self.layer.as_ref()
    }
}

/// Why a reader has no owner under a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnerFault {
    /// No layer before the reader's holds the owner's block (the "last earlier layer" rule).
    NoEarlierLayer,
    /// The layer given is not before the reader's.
    NotEarlier {
        /// The layer the expression gives.
        given: u64,
    },
    /// The layer given holds no instance of the owner's block.
    DoesNotHold {
        /// The layer the expression gives.
        given: usize,
    },
}

/// The owner's layer of a reader at layer `layer`, when layer `i` holds the owner's block
/// exactly when `holds(i)`: the layer `given` (the value of [`Shares::layer`] under the
/// checkpoint), which must be earlier and hold the block, or without one the last earlier
/// layer that holds it.
///
/// # Errors
/// The [`OwnerFault`] saying why no layer fits.
pub(crate) fn owner_layer(
    layer: usize,
    given: Option<u64>,
    holds: impl Fn(usize) -> bool,
) -> Result<usize, OwnerFault> {
    match given {
        None => (0..layer)
            .rev()
            .find(|&i| holds(i))
            .ok_or(OwnerFault::NoEarlierLayer),
        Some(given) => {
            let owner = usize::try_from(given)
                .ok()
                .filter(|&owner| owner < layer)
                .ok_or(OwnerFault::NotEarlier { given })?;
            if holds(owner) {
                Ok(owner)
            } else {
                Err(OwnerFault::DoesNotHold { given: owner })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_the_last_earlier_layer_or_the_one_given() {
        // Layers 0, 2 and 5 hold the owner's block.
        let holds = |i: usize| [0, 2, 5].contains(&i);
        assert_eq!(owner_layer(4, None, holds), Ok(2));
        assert_eq!(owner_layer(6, None, holds), Ok(5));
        assert_eq!(owner_layer(5, None, holds), Ok(2));
        assert_eq!(owner_layer(0, None, holds), Err(OwnerFault::NoEarlierLayer));
        assert_eq!(owner_layer(6, Some(0), holds), Ok(0));
        assert_eq!(
            owner_layer(6, Some(6), holds),
            Err(OwnerFault::NotEarlier { given: 6 })
        );
        assert_eq!(
            owner_layer(6, Some(u64::MAX), holds),
            Err(OwnerFault::NotEarlier { given: u64::MAX })
        );
        assert_eq!(
            owner_layer(6, Some(3), holds),
            Err(OwnerFault::DoesNotHold { given: 3 })
        );
    }
}
