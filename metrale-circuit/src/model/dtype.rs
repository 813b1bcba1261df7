//! A state's storage element ([`StateDtype`]), its format ([`StateFormat`]: a dtype fixed by
//! the circuit, one of the state's own packings, or a `{key}` the plan inputs name) and what a
//! key holds at plan time ([`FormatChoice`]: a dtype or a packing's name).
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Each dtype's spelling is written once, beside it (`spelled_enum!`); its width in bits
//!   beside that. A sub-byte dtype packs (`fp4`: two a byte); bytes come from the one law,
//!   `sizing::unit_bytes`.
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
        /// 4-bit float (e2m1), packed two a byte (schema 3).
        Fp4 = "fp4",
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
    /// Bits per element: `n` elements take `ceil(n x bits / 8)` bytes (`sizing::unit_bytes`).
    #[must_use]
    pub const fn bits(self) -> u64 {
        match self {
            Self::U64 => 64,
            Self::F32 | Self::I32 | Self::U32 => 32,
            Self::F16 | Self::Bf16 => 16,
            Self::Fp8 | Self::U8 => 8,
            Self::Fp4 => 4,
        }
    }
}

/// What a format key holds at plan time: a dtype (`kv_cache_dtype = "fp8"`), or the name of a
/// packing every state of the key declares (`kv_cache_dtype = "fp8_ds_mla"`, schema 3). `S`
/// names the packing: `&str` in plan inputs, `String` in an inputs file that owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatChoice<S = &'static str> {
    /// Each state of the key is its `shape`'s elements of this dtype.
    Dtype(StateDtype),
    /// Each state of the key is this packing of its own: the parts it declares under the name.
    Packing(S),
}

impl<'a> FormatChoice<&'a str> {
    /// Reads a dtype, or any other lower snake-case name as a packing (a plan refuses a packing
    /// its states do not declare). `None` for anything else.
    #[must_use]
    pub fn parse(s: &'a str) -> Option<Self> {
        match StateDtype::parse(s) {
            Some(dtype) => Some(FormatChoice::Dtype(dtype)),
            None if is_snake_identifier(s) => Some(FormatChoice::Packing(s)),
            None => None,
        }
    }
}

impl<S: AsRef<str>> FormatChoice<S> {
    /// The same choice, its packing borrowed.
    #[must_use]
    pub fn as_ref(&self) -> FormatChoice<&str> {
        match self {
            FormatChoice::Dtype(dtype) => FormatChoice::Dtype(*dtype),
            FormatChoice::Packing(name) => FormatChoice::Packing(name.as_ref()),
        }
    }
}

impl<S: std::fmt::Display> std::fmt::Display for FormatChoice<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dtype(dtype) => f.write_str(dtype.name()),
            Self::Packing(name) => name.fmt(f),
        }
    }
}

/// A state's storage format: fixed by the circuit, or named by a key the plan inputs give.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateFormat {
    /// A dtype written in the circuit (`format = "f32"`).
    Fixed(StateDtype),
    /// One of the state's own packings, named in the circuit (`format = "fp8_blocks"`, schema
    /// 3): a unit is that packing's parts.
    Packing(String),
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

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EmptyKey => f.write_str("empty format key `{}`: name the key the engine chooses"),
            Self::BadKey(key) => write!(
                f,
                "format key `{key}` is not a valid key (lower snake case: `[a-z][a-z0-9_]*`)"
            ),
            Self::UnknownDtype(found) => {
                write!(f, "unknown format `{found}`: neither a dtype nor `{{key}}`")
            }
        }
    }
}

impl std::error::Error for FormatError {}

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
            Self::Fixed(_) | Self::Packing(_) => None,
            Self::Keyed(key) => Some(key),
        }
    }
}

impl std::fmt::Display for StateFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(dtype) => f.write_str(dtype.name()),
            Self::Packing(name) => f.write_str(name),
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
            .map(|d| (d.name(), d.bits()))
            .collect();
        assert_eq!(
            sizes,
            [
                ("f32", 32),
                ("f16", 16),
                ("bf16", 16),
                ("fp8", 8),
                ("fp4", 4),
                ("u8", 8),
                ("i32", 32),
                ("u32", 32),
                ("u64", 64)
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
    fn choices_parse_dtypes_before_packings() {
        assert_eq!(
            FormatChoice::parse("fp4"),
            Some(FormatChoice::Dtype(StateDtype::Fp4))
        );
        assert_eq!(
            FormatChoice::parse("fp8_ds_mla"),
            Some(FormatChoice::Packing("fp8_ds_mla"))
        );
        assert_eq!(FormatChoice::parse("Fp8"), None);
        assert_eq!(FormatChoice::parse(""), None);
        assert_eq!(FormatChoice::Packing("x").to_string(), "x");
        assert_eq!(StateFormat::Packing("blocks".into()).to_string(), "blocks");
        assert_eq!(StateFormat::Packing("blocks".into()).key(), None);
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
