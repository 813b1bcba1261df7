//! A state's storage element ([`StateDtype`]) and its format ([`StateFormat`]): a dtype fixed by
//! the circuit, or a `{key}` the plan inputs name.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Each dtype's spelling is written once, beside it (`spelled_enum!`); its size beside that.
//! - A format key is a lower snake-case identifier (it becomes a field of the generated
//!   `Formats`); `{}` and any other key are refused, never defaulted.

use super::spelled::spelled_enum;

spelled_enum! {
    /// The storage element of a state.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StateDtype {
        /// 32-bit float, 4 bytes.
        F32 = "f32",
        /// 16-bit float, 2 bytes.
        F16 = "f16",
        /// bfloat16, 2 bytes.
        Bf16 = "bf16",
        /// 8-bit float (e4m3 or e5m2: the engine decides), 1 byte.
        Fp8 = "fp8",
        /// Unsigned byte.
        U8 = "u8",
        /// 32-bit signed integer, 4 bytes.
        I32 = "i32",
        /// 32-bit unsigned integer, 4 bytes.
        U32 = "u32",
        /// 64-bit unsigned integer, 8 bytes (pointers, hash-table entries).
        U64 = "u64",
    }
}

impl StateDtype {
    /// Bytes per element.
    #[must_use]
    pub const fn size(self) -> u64 {
        match self {
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F16 | Self::Bf16 => 2,
            Self::Fp8 | Self::U8 => 1,
            Self::U64 => 8,
        }
    }
}

/// A state's storage format: fixed by the circuit, or named by a key the plan inputs give.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateFormat {
    /// A dtype written in the circuit (`format = "f32"`).
    Fixed(StateDtype),
    /// A key the engine resolves (`format = "{kv_cache_dtype}"` holds `kv_cache_dtype`).
    Keyed(String),
}

/// Why a format spelling was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// `{}`: a key must be named.
    EmptyKey,
    /// `{...}` whose key is not a lower snake-case identifier.
    BadKey(String),
    /// Neither a dtype nor `{key}`.
    UnknownDtype(String),
}

impl StateFormat {
    /// Reads `f32` or `{key}`.
    ///
    /// # Errors
    /// [`FormatError`] for `{}`, a key that is not `[a-z][a-z0-9_]*`, or an unknown dtype.
    pub fn parse(s: &str) -> Result<Self, FormatError> {
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            if inner.is_empty() {
                return Err(FormatError::EmptyKey);
            }
            if !is_snake_identifier(inner) {
                return Err(FormatError::BadKey(inner.to_owned()));
            }
            return Ok(Self::Keyed(inner.to_owned()));
        }
        StateDtype::parse(s)
            .map(Self::Fixed)
            .ok_or_else(|| FormatError::UnknownDtype(s.to_owned()))
    }

    /// The key this format is named by, if any.
    #[must_use]
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Fixed(_) => None,
            Self::Keyed(key) => Some(key),
        }
    }
}

impl std::fmt::Display for StateFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(dtype) => f.write_str(dtype.name()),
            Self::Keyed(key) => write!(f, "{{{key}}}"),
        }
    }
}

/// `[a-z][a-z0-9_]*`: the names a circuit may give dims and format keys (they become Rust
/// fields).
#[must_use]
pub fn is_snake_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_the_documented_ones() {
        let sizes: Vec<(&str, u64)> = StateDtype::ALL
            .iter()
            .map(|d| (d.name(), d.size()))
            .collect();
        assert_eq!(
            sizes,
            [
                ("f32", 4),
                ("f16", 2),
                ("bf16", 2),
                ("fp8", 1),
                ("u8", 1),
                ("i32", 4),
                ("u32", 4),
                ("u64", 8)
            ]
        );
        for dtype in StateDtype::ALL {
            assert_eq!(StateDtype::parse(dtype.name()), Some(dtype));
        }
    }

    #[test]
    fn formats_parse_and_refuse() {
        assert_eq!(
            StateFormat::parse("bf16"),
            Ok(StateFormat::Fixed(StateDtype::Bf16))
        );
        assert_eq!(
            StateFormat::parse("{kv_cache_dtype}"),
            Ok(StateFormat::Keyed("kv_cache_dtype".into()))
        );
        assert_eq!(StateFormat::parse("{}"), Err(FormatError::EmptyKey));
        assert_eq!(
            StateFormat::parse("{Kv}"),
            Err(FormatError::BadKey("Kv".into()))
        );
        assert_eq!(
            StateFormat::parse("{a b}"),
            Err(FormatError::BadKey("a b".into()))
        );
        assert_eq!(
            StateFormat::parse("bf61"),
            Err(FormatError::UnknownDtype("bf61".into()))
        );
        assert_eq!(
            StateFormat::parse("{kv"),
            Err(FormatError::UnknownDtype("{kv".into()))
        );
        assert_eq!(StateFormat::Keyed("h".into()).to_string(), "{h}");
        assert_eq!(StateFormat::Fixed(StateDtype::Fp8).to_string(), "fp8");
    }

    #[test]
    fn snake_identifiers() {
        assert!(is_snake_identifier("lin_v_heads2"));
        assert!(!is_snake_identifier("2x"));
        assert!(!is_snake_identifier("_x"));
        assert!(!is_snake_identifier(""));
        assert!(!is_snake_identifier("Hidden"));
    }
}
