//! The checked `const fn` arithmetic generated unit functions are written in: every literal
//! or dim enters as [`value`], and [`mul`], [`add`], [`sub`] and [`ceil_div`] carry the first
//! fault through, so a shape's size is a `Result` that never wraps; [`unit`] turns the
//! elements into a unit's bytes.
//!
//! Invariants: no operation wraps or panics; a fault in either operand is the result's.

use crate::law::SizeFault;
use crate::model::StateDtype;
use crate::plan::Unit;

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
                dtype: StateDtype::F16
            })
        );
    }
}
