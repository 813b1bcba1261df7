//! A byte size or a count as people write it (`80GiB`, `16.2GB`, `1.5GiB`; `32k`, `32Ki`):
//! what a size or count given on a command line reads as; `metrale-codegen fit` (`--budget`,
//! `--gpu`, `--reserve`, `--weights`, `--context`) and the example engine read them here.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Decimal units are powers of 1000 and binary ones powers of 1024; a number may have a
//!   decimal fraction (`16.2GB`), read in exact integer arithmetic (no float): it must come to
//!   a whole number of bytes (of units, for a count), else it is an error naming the text.
//! - A value past `u64::MAX` is an error, never a wrap.

/// A unit: its spelling and its scale as `2^twos x 5^fives` (1000 = 2^3 x 5^3, 1024 = 2^10), so
/// a fraction's digits divide by the scale's factors exactly.
struct Unit {
    spelling: &'static str,
    twos: u32,
    fives: u32,
}

impl Unit {
    const fn new(spelling: &'static str, twos: u32, fives: u32) -> Unit {
        Unit {
            spelling,
            twos,
            fives,
        }
    }
}

/// The units of a byte size, a longer spelling before any it ends with (`KiB` before `B`).
const SIZE_UNITS: [Unit; 9] = [
    Unit::new("TiB", 40, 0),
    Unit::new("GiB", 30, 0),
    Unit::new("MiB", 20, 0),
    Unit::new("KiB", 10, 0),
    Unit::new("TB", 12, 12),
    Unit::new("GB", 9, 9),
    Unit::new("MB", 6, 6),
    Unit::new("KB", 3, 3),
    Unit::new("B", 0, 0),
];

/// The units of a count (tokens, blocks): SI `k` `M` `G` and binary `Ki` `Mi` `Gi`, binary
/// first (`Ki` ends with no decimal spelling, but `Mi` must not read as `M` of `...i`).
const COUNT_UNITS: [Unit; 6] = [
    Unit::new("Gi", 30, 0),
    Unit::new("Mi", 20, 0),
    Unit::new("Ki", 10, 0),
    Unit::new("G", 9, 9),
    Unit::new("M", 6, 6),
    Unit::new("k", 3, 3),
];

/// Why a number with a unit is no value.
enum Refusal {
    /// Not digits, optionally with a fraction.
    Malformed,
    /// The fraction does not come to a whole unit.
    NotWhole,
    /// Past `u64::MAX`.
    Overflow,
}

/// Reads a byte size: bytes, or a number with a decimal (`KB` `MB` `GB` `TB`, powers of
/// 1000) or binary (`KiB` `MiB` `GiB` `TiB`, powers of 1024) unit, as `80GiB`, `16.2GB`,
/// `1.5GiB`, `512 MiB`; what `metrale-codegen fit --budget` and the example engine take. A
/// fraction is exact: `16.2GB` is 16,200,000,000 bytes, `1.5GiB` 1,610,612,736.
///
/// # Errors
/// A message naming the text when it is no such size, does not come to a whole number of
/// bytes (`1.5B`, `0.3KiB`) or exceeds `u64::MAX` bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    scaled(text, &SIZE_UNITS).map_err(|refusal| match refusal {
        Refusal::Malformed => format!(
            "expected bytes or a number with a unit (80GiB, 16.2GB, 512MiB), found `{text}`"
        ),
        Refusal::NotWhole => format!("`{text}` is not a whole number of bytes"),
        Refusal::Overflow => format!("`{text}` is more than {} bytes", u64::MAX),
    })
}

/// Reads a count (tokens, blocks): a whole number, or a number with an SI (`k` `M` `G`, powers
/// of 1000) or binary (`Ki` `Mi` `Gi`, powers of 1024) unit, as `32k` (32,000), `32Ki`
/// (32,768), `1.5M` (1,500,000); what `metrale-codegen fit --context` takes. `K` is refused: a
/// "32K context" means 32,000 to some and 32,768 to others, so a count says which.
///
/// # Errors
/// A message naming the text when it is no such count, does not come to a whole number
/// (`1.5`, `0.0001k`) or exceeds `u64::MAX`.
pub fn parse_count(text: &str) -> Result<u64, String> {
    scaled(text, &COUNT_UNITS).map_err(|refusal| match refusal {
        Refusal::Malformed => format!(
            "expected a whole number or one with a unit (32k = 32000, 32Ki = 32768, 1.5M), \
             found `{text}`"
        ),
        Refusal::NotWhole => format!("`{text}` is not a whole number"),
        Refusal::Overflow => format!("`{text}` is more than {}", u64::MAX),
    })
}

/// `text` as `digits[.digits][ ]unit` (a unit of `units`, or none), scaled exactly.
fn scaled(text: &str, units: &[Unit]) -> Result<u64, Refusal> {
    let (number, twos, fives) = units
        .iter()
        .find_map(|u| text.strip_suffix(u.spelling).map(|n| (n, u.twos, u.fives)))
        .unwrap_or((text, 0, 0));
    let (whole, fraction) = match number.trim().split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (number.trim(), None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
        return Err(Refusal::Malformed);
    }
    // At most 2^40 x 5^12: it fits u64.
    let scale = (1u64 << twos) * 5u64.pow(fives);
    let whole: u64 = whole.parse().map_err(|_| Refusal::Overflow)?;
    let whole = whole.checked_mul(scale).ok_or(Refusal::Overflow)?;
    let part = fraction.map_or(Ok(0), |f| fraction_of(f, twos, fives))?;
    whole.checked_add(part).ok_or(Refusal::Overflow)
}

/// `0.digits x 2^twos x 5^fives`, when it is whole: `F x scale / 10^d` for the `d` digits `F`
/// (trailing zeros dropped), which is whole exactly when `D = 10^d / gcd(10^d, scale)` divides
/// `F`; then it is `F / D x scale / gcd`. `F` is divided digit by digit, so no digit count
/// overflows, and `D` always fits: a whole `F` has at most `max(twos, fives)` digits, else `D`
/// holds both 2 and 5 and `F`, its last digit not 0, is no multiple of 10.
fn fraction_of(digits: &str, twos: u32, fives: u32) -> Result<u64, Refusal> {
    let digits = digits.trim_end_matches('0');
    let Ok(d) = u32::try_from(digits.len()) else {
        return Err(Refusal::NotWhole);
    };
    if d > twos.max(fives) {
        return Err(Refusal::NotWhole);
    }
    let divisor = 2u128.pow(d.saturating_sub(twos)) * 5u128.pow(d.saturating_sub(fives));
    let (mut quotient, mut remainder) = (0u128, 0u128);
    for digit in digits.bytes() {
        let current = remainder * 10 + u128::from(digit - b'0');
        quotient = quotient * 10 + current / divisor;
        remainder = current % divisor;
    }
    if remainder != 0 {
        return Err(Refusal::NotWhole);
    }
    // F / D < 10^d / D = gcd, and gcd x (scale / gcd) = scale: below the scale, so in u64.
    let rest = (1u128 << (twos - twos.min(d))) * 5u128.pow(fives - fives.min(d));
    u64::try_from(quotient * rest).map_err(|_| Refusal::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        assert_eq!(parse_size("80GiB"), Ok(80 << 30));
        assert_eq!(parse_size("80GB"), Ok(80_000_000_000));
        assert_eq!(parse_size("512 MiB"), Ok(512 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("7B"), Ok(7));
        assert!(parse_size("80 gib").is_err());
        assert!(parse_size("20000000TiB").unwrap_err().contains("more than"));
    }

    #[test]
    fn a_fraction_of_a_unit_is_exact() {
        // 16.2 x 10^9 and 1.5 x 2^30 = 1,073,741,824 + 536,870,912, by hand.
        assert_eq!(parse_size("16.2GB"), Ok(16_200_000_000));
        assert_eq!(parse_size("1.5GiB"), Ok(1_610_612_736));
        // 0.25 x 1024 = 256; 2.000 x 1000; 0.001 x 10^12 = 10^9; 1.5 x 2^40 = 1,649,267,441,664.
        assert_eq!(parse_size("0.25KiB"), Ok(256));
        assert_eq!(parse_size("2.000KB"), Ok(2000));
        assert_eq!(parse_size("0.001TB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5TiB"), Ok(1_649_267_441_664));
        // 2^-40 TiB, written out (40 digits): 1 byte.
        assert_eq!(
            parse_size("0.0000000000009094947017729282379150390625TiB"),
            Ok(1)
        );
        assert_eq!(parse_size("3.0"), Ok(3));
    }

    #[test]
    fn a_fraction_of_a_byte_is_refused_naming_the_text() {
        assert_eq!(
            parse_size("1.5B"),
            Err("`1.5B` is not a whole number of bytes".to_owned())
        );
        // 0.3 x 1024 = 307.2.
        assert_eq!(
            parse_size("0.3KiB"),
            Err("`0.3KiB` is not a whole number of bytes".to_owned())
        );
        assert_eq!(
            parse_size("1.0001KB"),
            Err("`1.0001KB` is not a whole number of bytes".to_owned())
        );
        // 41 significant digits after the point: no unit makes that whole.
        assert!(
            parse_size("0.00000000000090949470177292823791503906251TiB")
                .unwrap_err()
                .contains("not a whole number")
        );
    }

    #[test]
    fn a_size_past_u64_is_refused() {
        // u64::MAX = 18,446,744,073,709,551,615 = 16 EiB - 1: 16,777,216 TiB is one past it.
        assert_eq!(parse_size("16777215TiB"), Ok(16_777_215 << 40));
        assert_eq!(
            parse_size("16777216TiB"),
            Err("`16777216TiB` is more than 18446744073709551615 bytes".to_owned())
        );
        // u64::MAX = 18,446,744,073,709,551 KB and 615 B: the whole part fits, and its
        // fraction comes to u64::MAX exactly, or one past it.
        assert_eq!(parse_size("18446744073709551.615KB"), Ok(u64::MAX));
        assert_eq!(
            parse_size("18446744073709551.616KB"),
            Err("`18446744073709551.616KB` is more than 18446744073709551615 bytes".to_owned())
        );
        assert_eq!(
            parse_size("18446744073709551616"),
            Err("`18446744073709551616` is more than 18446744073709551615 bytes".to_owned())
        );
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn a_malformed_size_is_refused() {
        for text in [
            "", "GiB", ".5GiB", "1.GiB", "-1GiB", "+1GiB", "1e9", "1.5.0GB", "32k",
        ] {
            assert_eq!(
                parse_size(text),
                Err(format!(
                    "expected bytes or a number with a unit (80GiB, 16.2GB, 512MiB), found \
                     `{text}`"
                )),
                "{text}"
            );
        }
    }

    #[test]
    fn counts_take_si_and_binary_units() {
        assert_eq!(parse_count("32k"), Ok(32_000));
        assert_eq!(parse_count("32Ki"), Ok(32_768));
        assert_eq!(parse_count("128Ki"), Ok(131_072));
        assert_eq!(parse_count("1.5M"), Ok(1_500_000));
        assert_eq!(parse_count("1.5Mi"), Ok(1_572_864));
        assert_eq!(parse_count("2G"), Ok(2_000_000_000));
        assert_eq!(parse_count("1Gi"), Ok(1 << 30));
        assert_eq!(parse_count("32768"), Ok(32_768));
        assert_eq!(parse_count("0.5k"), Ok(500));
        assert_eq!(parse_count("0"), Ok(0));
    }

    #[test]
    fn a_count_is_whole_and_says_its_unit() {
        assert_eq!(
            parse_count("1.5"),
            Err("`1.5` is not a whole number".to_owned())
        );
        assert_eq!(
            parse_count("0.0001k"),
            Err("`0.0001k` is not a whole number".to_owned())
        );
        for text in ["32K", "32kB", "32KiB", "k", "32 tokens", "-1"] {
            assert_eq!(
                parse_count(text),
                Err(format!(
                    "expected a whole number or one with a unit (32k = 32000, 32Ki = 32768, \
                     1.5M), found `{text}`"
                )),
                "{text}"
            );
        }
        // u64::MAX is 18,446,744,073.7... G.
        assert_eq!(parse_count("18446744073G"), Ok(18_446_744_073_000_000_000));
        assert_eq!(
            parse_count("18446744074G"),
            Err("`18446744074G` is more than 18446744073709551615".to_owned())
        );
    }
}
