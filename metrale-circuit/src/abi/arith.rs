//! The checked `const fn` arithmetic generated unit functions are written in: every literal
//! or dim enters as [`value`], and [`mul`], [`add`], [`sub`] and [`ceil_div`] carry the first
//! fault through, so a shape's size is a `Result` that never wraps; [`unit`] turns the
//! elements into a unit's bytes, [`packing_unit`] a packing's parts into one, and [`parts`] and
//! [`plain_parts`] give a generated `<state>_parts` where each part sits.
//!
//! Invariants: no operation wraps or panics; a fault in either operand is the result's.

use crate::law::SizeFault;
use crate::model::StateDtype;
use crate::plan::{Parts, Unit};

/// One part of a packing as a generated unit function writes it: its name, its elements and its
/// dtype.
pub type PartSpec = (&'static str, Result<u64, SizeFault>, StateDtype);

/// `Ok(value)`: a literal or dim read by a generated size function.
///
/// # Errors
/// Never; the `Result` lets it compose with [`mul`], [`add`] and [`ceil_div`].
#[inline]
pub const fn value(value: u64) -> Result<u64, SizeFault> {
    Ok(value)
}

/// The checked product of two sizes.
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Overflow`].
#[inline]
pub const fn mul(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_mul(b) {
            Some(product) => Ok(product),
            None => Err(SizeFault::Overflow),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// The checked sum of two sizes.
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Overflow`].
#[inline]
pub const fn add(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_add(b) {
            Some(sum) => Ok(sum),
            None => Err(SizeFault::Overflow),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// The checked difference of two sizes (a shape's `-`).
///
/// # Errors
/// Either operand's fault, or [`SizeFault::Negative`] when `b` is larger than `a`.
#[inline]
pub const fn sub(a: Result<u64, SizeFault>, b: Result<u64, SizeFault>) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(a), Ok(b)) => match a.checked_sub(b) {
            Some(difference) => Ok(difference),
            None => Err(SizeFault::Negative),
        },
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// `a / b` rounded up (a shape's `name/lit` or `name/name`; either side may be a derived dim,
/// itself a `Result`).
///
/// # Errors
/// Either operand's fault, or [`SizeFault::DivisionByZero`] when `b` is zero.
#[inline]
pub const fn ceil_div(
    a: Result<u64, SizeFault>,
    b: Result<u64, SizeFault>,
) -> Result<u64, SizeFault> {
    match (a, b) {
        (Ok(_), Ok(0)) => Err(SizeFault::DivisionByZero),
        (Ok(a), Ok(b)) => Ok(a.div_ceil(b)),
        (Err(fault), _) | (_, Err(fault)) => Err(fault),
    }
}

/// The unit of `elements` elements of `dtype`: a generated `<state>_unit`'s value.
///
/// # Errors
/// The elements' own fault, or [`SizeFault::Overflow`] when the bytes overflow.
#[inline]
pub const fn unit(elements: Result<u64, SizeFault>, dtype: StateDtype) -> Result<Unit, SizeFault> {
    Unit::of(elements, dtype)
}

/// The unit of a packing of `list`'s parts, in order: a generated `<state>_unit`'s value for a
/// state stored in a packing.
///
/// # Errors
/// A part's elements' own fault, or [`SizeFault::Overflow`] when a part overflows.
#[inline]
pub const fn packing_unit<const M: usize>(list: [PartSpec; M]) -> Result<Unit, SizeFault> {
    match Parts::<M>::placed(list) {
        Ok(parts) => Ok(parts.unit()),
        Err(fault) => Err(fault),
    }
}

/// The parts of a packing of `list`'s parts, placed: a generated `<state>_parts`' value for a
/// packing (`N`, the state's most parts, is at least `M`).
///
/// # Errors
/// A part's elements' own fault, or [`SizeFault::Overflow`] when a part overflows.
#[inline]
pub const fn parts<const M: usize, const N: usize>(
    list: [PartSpec; M],
) -> Result<Parts<N>, SizeFault> {
    Parts::placed(list)
}

/// A plain unit as one part named `name` (the state's id): a generated `<state>_parts`' value
/// when its key holds a dtype.
///
/// # Errors
/// The elements' own fault, or [`SizeFault::Overflow`] when the bytes overflow.
#[inline]
pub const fn plain_parts<const N: usize>(
    name: &'static str,
    elements: Result<u64, SizeFault>,
    dtype: StateDtype,
) -> Result<Parts<N>, SizeFault> {
    Parts::placed([(name, elements, dtype)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(mul(value(6), value(7)), Ok(42));
        assert_eq!(mul(value(u64::MAX), value(2)), Err(SizeFault::Overflow));
        assert_eq!(add(value(u64::MAX), value(1)), Err(SizeFault::Overflow));
        assert_eq!(
            add(ceil_div(value(5120), value(0)), value(1)),
            Err(SizeFault::DivisionByZero)
        );
        assert_eq!(ceil_div(value(5121), value(128)), Ok(41));
        assert_eq!(
            ceil_div(Err(SizeFault::Negative), value(0)),
            Err(SizeFault::Negative)
        );
        assert_eq!(sub(value(4), value(1)), Ok(3));
        assert_eq!(sub(value(4), value(4)), Ok(0));
        assert_eq!(sub(value(1), value(2)), Err(SizeFault::Negative));
        assert_eq!(
            sub(Err(SizeFault::Overflow), value(2)),
            Err(SizeFault::Overflow)
        );
        assert_eq!(
            mul(value(0), Err(SizeFault::Overflow)),
            Err(SizeFault::Overflow)
        );
        assert_eq!(
            unit(Ok(u64::MAX), StateDtype::F16),
            Err(SizeFault::Overflow)
        );
        assert_eq!(
            unit(Ok(3), StateDtype::F16),
            Ok(Unit {
                bytes: 6,
                dtype: StateDtype::F16,
                elements: Some(3),
            })
        );
        // A packing's unit: 128 fp8 values and one f32 scale are 132 bytes, by byte.
        let index = packing_unit([
            ("k", Ok(128), StateDtype::Fp8),
            ("scale", Ok(1), StateDtype::F32),
        ]);
        assert_eq!(
            index,
            Ok(Unit {
                bytes: 132,
                dtype: StateDtype::U8,
                elements: None,
            })
        );
        let split: Result<Parts<3>, _> = parts([
            ("k", Ok(128), StateDtype::Fp8),
            ("scale", Ok(1), StateDtype::F32),
        ]);
        assert_eq!(
            split.map(|p| p.get("scale").map(|s| s.offset)),
            Ok(Some(128))
        );
        let plain: Result<Parts<3>, _> = plain_parts("latent", Ok(576), StateDtype::Bf16);
        assert_eq!(
            plain.map(|p| (p.as_slice().len(), p.unit().bytes)),
            Ok((1, 1152))
        );
        assert_eq!(
            packing_unit([("a", Err(SizeFault::Negative), StateDtype::U8)]),
            Err(SizeFault::Negative)
        );
    }
}
