//! An exact rational number ([`Exact`]): what a config expression computes with, so a JSON
//! float such as `0.5` is read as the decimal it spells, not the nearest binary fraction, and a
//! product or a quotient loses nothing before the result is checked to be whole.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - The denominator is at least 1 and shares no factor with the numerator, so two equal
//!   numbers are equal as values (`PartialEq` is numeric equality).
//! - Every operation is checked: a numerator or denominator past `i128` is `None`, never a
//!   wrapped or rounded value; nothing here panics.

use std::fmt;

/// A rational number, exact: `num / den` in lowest terms, `den >= 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exact {
    num: i128,
    den: i128,
}

/// The greatest common divisor of `|a|` and `|b|` (`gcd(0, 0)` is 0).
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // At most max(|a|, |b|), both from i128 values; only gcd(i128::MIN, 0) would not fit, and
    // that is never asked (a denominator is never 0).
    i128::try_from(a).unwrap_or(i128::MAX)
}

impl Exact {
    /// The whole number `n`.
    #[must_use]
    pub const fn int(n: i128) -> Self {
        Self { num: n, den: 1 }
    }

    /// `num / den` in lowest terms; `None` when `den` is 0 or a sign flip overflows.
    fn ratio(num: i128, den: i128) -> Option<Self> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den);
        let (mut num, mut den) = (num / g, den / g);
        if den < 0 {
            num = num.checked_neg()?;
            den = den.checked_neg()?;
        }
        Some(Self { num, den })
    }

    /// The number a JSON number literal spells, exactly: `-? digits (. digits)? ([eE] [+-]?
    /// digits)?`. `None` for any other text, and for one whose exact value does not fit (more
    /// than 38 significant digits, or an exponent that takes it past `i128`).
    #[must_use]
    pub fn parse_decimal(text: &str) -> Option<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) {
            return None;
        }
        if mantissa.contains('.') && fraction.is_empty() {
            return None;
        }
        let mut num: i128 = 0;
        for b in whole.bytes().chain(fraction.bytes()) {
            num = num.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
        }
        let scale = exponent.checked_sub(i32::try_from(fraction.len()).ok()?)?;
        let power = 10i128.checked_pow(scale.unsigned_abs())?;
        let value = if scale >= 0 {
            Self::ratio(num.checked_mul(power)?, 1)?
        } else {
            Self::ratio(num, power)?
        };
        if negative {
            value.checked_neg()
        } else {
            Some(value)
        }
    }

    /// `-self`.
    #[must_use]
    pub fn checked_neg(self) -> Option<Self> {
        Some(Self {
            num: self.num.checked_neg()?,
            den: self.den,
        })
    }

    /// `self + other`.
    #[must_use]
    pub fn checked_add(self, other: Self) -> Option<Self> {
        let num = self
            .num
            .checked_mul(other.den)?
            .checked_add(other.num.checked_mul(self.den)?)?;
        Self::ratio(num, self.den.checked_mul(other.den)?)
    }

    /// `self - other`.
    #[must_use]
    pub fn checked_sub(self, other: Self) -> Option<Self> {
        self.checked_add(other.checked_neg()?)
    }

    /// `self * other`.
    #[must_use]
    pub fn checked_mul(self, other: Self) -> Option<Self> {
        // Cross-reduce first, so a product whose result fits never overflows on the way.
        let g1 = gcd(self.num, other.den).max(1);
        let g2 = gcd(other.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(other.num / g2)?;
        let den = (self.den / g2).checked_mul(other.den / g1)?;
        Self::ratio(num, den)
    }

    /// `self / other`, exact; `None` when `other` is 0 or the result does not fit.
    fn quotient(self, other: Self) -> Option<Self> {
        if other.num == 0 {
            return None;
        }
        self.checked_mul(Self::ratio(other.den, other.num)?)
    }

    /// The floor of `self / other`: Python's `//`, the whole number at or below the exact
    /// quotient. `None` when `other` is 0 or it does not fit.
    #[must_use]
    pub fn checked_floor_div(self, other: Self) -> Option<Self> {
        let q = self.quotient(other)?;
        Some(Self::int(q.num.div_euclid(q.den)))
    }

    /// `self - other * floor(self / other)`: Python's `%`, with the sign of `other`. `None`
    /// when `other` is 0 or it does not fit.
    #[must_use]
    pub fn checked_rem(self, other: Self) -> Option<Self> {
        self.checked_sub(other.checked_mul(self.checked_floor_div(other)?)?)
    }

    /// The value as a `u64`, when it is a whole number from 0 to `u64::MAX`.
    #[must_use]
    pub fn to_u64(self) -> Option<u64> {
        if self.den == 1 {
            u64::try_from(self.num).ok()
        } else {
            None
        }
    }

    /// The value as an `i64`, when it is a whole number in its range.
    #[must_use]
    pub fn to_i64(self) -> Option<i64> {
        if self.den == 1 {
            i64::try_from(self.num).ok()
        } else {
            None
        }
    }

    /// Whether the value is a whole number.
    #[must_use]
    pub fn is_whole(self) -> bool {
        self.den == 1
    }

    /// Whether the value is below zero.
    #[must_use]
    pub fn is_negative(self) -> bool {
        self.num < 0
    }
}

impl PartialOrd for Exact {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Exact {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // a/b vs c/d with b, d > 0: compare a*d with c*b, widened so it cannot overflow.
        let left = wide_mul(self.num, other.den);
        let right = wide_mul(other.num, self.den);
        left.cmp(&right)
    }
}

/// `a * b` as a (sign, high, low) triple ordered like the exact product: i128 products of two
/// i128 values need 255 bits, so the comparison splits them.
fn wide_mul(a: i128, b: i128) -> (bool, u128, u128) {
    let negative = (a < 0) != (b < 0) && a != 0 && b != 0;
    let (x, y) = (a.unsigned_abs(), b.unsigned_abs());
    let (x_hi, x_lo) = (x >> 64, x & u128::from(u64::MAX));
    let (y_hi, y_lo) = (y >> 64, y & u128::from(u64::MAX));
    let lo_lo = x_lo * y_lo;
    let mid = x_hi * y_lo + (lo_lo >> 64);
    let mid2 = x_lo * y_hi + (mid & u128::from(u64::MAX));
    let hi = x_hi * y_hi + (mid >> 64) + (mid2 >> 64);
    let lo = (mid2 << 64) | (lo_lo & u128::from(u64::MAX));
    if negative {
        // Ordered below every non-negative value, and reversed in magnitude.
        (false, !hi, !lo)
    } else {
        (true, hi, lo)
    }
}

impl fmt::Display for Exact {
    /// A whole number as its digits; otherwise the exact decimal when the denominator has no
    /// prime factor but 2 and 5 (`1023.5`), else the fraction (`7/3`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            return write!(f, "{}", self.num);
        }
        let mut rest = self.den;
        let mut places = 0u32;
        while rest % 10 == 0 || rest % 2 == 0 || rest % 5 == 0 {
            rest /= if rest % 10 == 0 {
                10
            } else if rest % 2 == 0 {
                2
            } else {
                5
            };
            places += 1;
        }
        if rest == 1
            && let Some(scaled) = 10i128
                .checked_pow(places)
                .and_then(|p| self.num.checked_mul(p / self.den))
        {
            let sign = if scaled < 0 { "-" } else { "" };
            let digits = scaled.unsigned_abs().to_string();
            let width = places as usize + 1;
            let digits = format!("{digits:0>width$}");
            let (whole, fraction) = digits.split_at(digits.len() - places as usize);
            let fraction = fraction.trim_end_matches('0');
            return write!(f, "{sign}{whole}.{fraction}");
        }
        write!(f, "{}/{}", self.num, self.den)
    }
}

#[cfg(test)]
mod tests {
    use super::Exact;

    fn d(text: &str) -> Exact {
        Exact::parse_decimal(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn decimals_are_read_exactly() {
        assert_eq!(d("0.5"), Exact::ratio(1, 2).unwrap());
        assert_eq!(d("1e-05"), Exact::ratio(1, 100_000).unwrap());
        assert_eq!(d("2.5E2"), Exact::int(250));
        assert_eq!(d("-0.125"), Exact::ratio(-1, 8).unwrap());
        // 0.1 is 1/10 exactly, not the double nearest it.
        assert_eq!(d("0.1").checked_mul(Exact::int(10)), Some(Exact::int(1)));
        for bad in [
            "",
            "-",
            ".5",
            "5.",
            "1e",
            "0x10",
            "1.2.3",
            "+1",
            "1e99999999999",
        ] {
            assert_eq!(Exact::parse_decimal(bad), None, "{bad}");
        }
        // 39 digits do not fit i128 exactly.
        assert_eq!(Exact::parse_decimal(&"9".repeat(39)), None);
    }

    #[test]
    fn floor_division_and_remainder_follow_python() {
        let (seven, two) = (Exact::int(7), Exact::int(2));
        assert_eq!(seven.checked_floor_div(two), Some(Exact::int(3)));
        assert_eq!(seven.checked_rem(two), Some(Exact::int(1)));
        assert_eq!(
            seven.checked_neg().unwrap().checked_floor_div(two),
            Some(Exact::int(-4))
        );
        assert_eq!(
            seven.checked_neg().unwrap().checked_rem(two),
            Some(Exact::int(1))
        );
        assert_eq!(d("2.5").checked_floor_div(d("0.5")), Some(Exact::int(5)));
        assert_eq!(seven.checked_floor_div(Exact::int(0)), None);
        assert_eq!(seven.checked_rem(Exact::int(0)), None);
    }

    #[test]
    fn products_stay_exact_and_overflow_is_none() {
        assert_eq!(
            Exact::int(2047).checked_mul(d("0.5")),
            Some(Exact::ratio(2047, 2).unwrap())
        );
        assert_eq!(Exact::int(i128::MAX).checked_add(Exact::int(1)), None);
        assert_eq!(Exact::int(i128::MAX).checked_mul(Exact::int(2)), None);
        assert_eq!(Exact::int(i128::MIN).checked_neg(), None);
        assert_eq!(Exact::int(u64::MAX.into()).to_u64(), Some(u64::MAX));
        assert_eq!(Exact::int(i128::from(u64::MAX) + 1).to_u64(), None);
        assert_eq!(d("0.5").to_u64(), None);
        assert_eq!(Exact::int(-1).to_u64(), None);
    }

    #[test]
    fn order_is_numeric_even_past_i128_products() {
        assert!(d("0.5") < d("0.75"));
        assert!(d("-0.5") < Exact::int(0));
        let big = Exact::ratio(i128::MAX, 3).unwrap();
        let bigger = Exact::ratio(i128::MAX, 2).unwrap();
        assert!(big < bigger);
        assert!(big.checked_neg().unwrap() > bigger.checked_neg().unwrap());
        assert_eq!(Exact::int(5).max(Exact::int(3)), Exact::int(5));
    }

    #[test]
    fn display_spells_the_exact_value() {
        assert_eq!(Exact::int(1536).to_string(), "1536");
        assert_eq!(Exact::ratio(2047, 2).unwrap().to_string(), "1023.5");
        assert_eq!(Exact::ratio(-1, 8).unwrap().to_string(), "-0.125");
        assert_eq!(Exact::ratio(1, 100_000).unwrap().to_string(), "0.00001");
        assert_eq!(Exact::ratio(7, 3).unwrap().to_string(), "7/3");
    }
}
