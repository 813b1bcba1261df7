//! A byte size as people write it (`80GiB`, `80GB`, `512MiB`): what a budget given on a
//! command line or in a file reads as; `metrale-codegen fit --budget` and the example engine
//! read it here.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants: decimal units are powers of 1000 and binary ones powers of 1024; a size past
//! `u64::MAX` bytes is an error, never a wrap.

/// Reads a byte budget: bytes, or a number with a decimal (`KB` `MB` `GB` `TB`, powers of
/// 1000) or binary (`KiB` `MiB` `GiB` `TiB`, powers of 1024) unit, as `80GiB`, `80GB`,
/// `512MiB`; what `metrale-codegen fit --budget` and the example engine take.
///
/// # Errors
/// A message naming the text when it is no such size or exceeds `u64::MAX` bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    const UNITS: [(&str, u64); 9] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("KB", 1_000),
        ("B", 1),
    ];
    let (number, scale) = UNITS
        .iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or((text, 1));
    let n: u64 = number.trim().parse().map_err(|_| {
        format!("expected bytes or a number with a unit (80GiB, 80GB, 512MiB), found `{text}`")
    })?;
    n.checked_mul(scale)
        .ok_or_else(|| format!("`{text}` is more than {} bytes", u64::MAX))
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
}
