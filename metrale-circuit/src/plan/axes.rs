//! A unit's tensor shape as a kernel views it ([`Axes`]): the axes a state's `shape` joins with
//! ` x `, each named by its expression and sized under a checkpoint's (or a rank's) dims, and
//! their row-major element strides, so a region of `units` units is the tensor
//! `[units, axes...]` of its dtype (`h` of a Gated DeltaNet layer: `[slots, heads, k, v]`).
//!
//! Owner: metrale-circuit (public API).
//! Invariants:
//! - The extents multiply to the unit's elements (the loader evaluated the same axes).
//! - Strides follow the one rule, `model::strides_into`, as the dynamic plan's do.

use crate::model::strides_into;

/// The axes of one unit: names (as the circuit writes each axis) and extents, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Axes<const N: usize> {
    /// Each axis as the circuit writes it (`lin_v_heads`).
    pub names: [&'static str; N],
    /// Each axis's extent.
    pub extents: [u64; N],
}

impl<const N: usize> Axes<N> {
    /// The axes `names` of `extents`, each computed (the first fault is the result's).
    ///
    /// # Errors
    /// The first extent's fault.
    pub const fn of(
        names: [&'static str; N],
        extents: [Result<u64, crate::law::SizeFault>; N],
    ) -> Result<Self, crate::law::SizeFault> {
        let mut out = [0u64; N];
        let mut i = 0;
        while i < N {
            out[i] = match extents[i] {
                Ok(extent) => extent,
                Err(fault) => return Err(fault),
            };
            i += 1;
        }
        Ok(Self {
            names,
            extents: out,
        })
    }

    /// The unit's elements: the product of the extents; `None` on overflow.
    #[must_use]
    pub const fn elements(&self) -> Option<u64> {
        let mut scratch = [0u64; N];
        strides_into(&self.extents, &mut scratch)
    }

    /// Row-major element strides: the last axis 1, each other the product of the extents after
    /// it (a region's unit stride is [`Axes::elements`]); `None` on overflow.
    #[must_use]
    pub const fn strides(&self) -> Option<[u64; N]> {
        let mut out = [0u64; N];
        match strides_into(&self.extents, &mut out) {
            Some(_) => Some(out),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::SizeFault;

    #[test]
    fn strides_by_hand() {
        // Qwen3.5-27B's h: 48 heads x 128 x 128 f32 per slot.
        const H: Result<Axes<3>, SizeFault> = Axes::of(
            ["lin_v_heads", "lin_k_dim", "lin_v_dim"],
            [Ok(48), Ok(128), Ok(128)],
        );
        let h = H.unwrap();
        assert_eq!(h.strides(), Some([128 * 128, 128, 1]));
        assert_eq!(h.elements(), Some(48 * 128 * 128));
        let huge = Axes::of(["a", "b"], [Ok(u64::MAX), Ok(2)]).unwrap();
        assert_eq!((huge.strides(), huge.elements()), (None, None));
        assert_eq!(
            Axes::of(["a", "b"], [Ok(1), Err(SizeFault::Negative)]),
            Err(SizeFault::Negative)
        );
        let none: Axes<0> = Axes::of([], []).unwrap();
        assert_eq!((none.strides(), none.elements()), (Some([]), Some(1)));
    }
}
