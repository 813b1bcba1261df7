//! A checkpoint's declared dims given by name at run time (`config.json` read at start, with
//! feature `config`: `Circuit::dims_from_config`), turned into a generated module's `Dims`
//! (`Dims::try_from(&values[..])`, which calls [`dims_by_name`]).
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - Every dim the `Dims` declares is given exactly once, and nothing else is given: a
//!   missing, unknown or repeated name is a [`DimsError`], never a silent default.
//! - No allocation but the error's.

/// Why named values are not a circuit's `Dims`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimsError {
    /// A declared dim no value names.
    Missing {
        /// The dim.
        dim: &'static str,
    },
    /// A value whose name the circuit does not declare.
    Unknown {
        /// The name given.
        dim: String,
        /// Every declared dim, in declaration order.
        expected: &'static [&'static str],
    },
    /// A dim given twice.
    Repeated {
        /// The dim.
        dim: &'static str,
    },
}

impl std::fmt::Display for DimsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing { dim } => write!(f, "no value for dim `{dim}`"),
            Self::Unknown { dim, expected } => write!(
                f,
                "`{dim}` is not a dim of this circuit; its dims are {}",
                expected.join(", ")
            ),
            Self::Repeated { dim } => write!(f, "dim `{dim}` is given twice"),
        }
    }
}

impl std::error::Error for DimsError {}

/// The value of each of `names` (a generated `Dims`' fields, in declaration order) in
/// `values`, each name given once.
///
/// # Errors
/// [`DimsError::Unknown`] for the first value whose name is not one of `names`,
/// [`DimsError::Repeated`] for the first name given twice, [`DimsError::Missing`] for the first
/// name not given.
pub fn dims_by_name<S: AsRef<str>, const N: usize>(
    values: &[(S, u64)],
    names: &'static [&'static str; N],
) -> Result<[u64; N], DimsError> {
    let mut found: [Option<u64>; N] = [None; N];
    for (name, value) in values {
        let name = name.as_ref();
        let Some(i) = names.iter().position(|n| *n == name) else {
            return Err(DimsError::Unknown {
                dim: name.to_owned(),
                expected: names,
            });
        };
        if found[i].replace(*value).is_some() {
            return Err(DimsError::Repeated { dim: names[i] });
        }
    }
    let mut out = [0; N];
    for (i, value) in found.into_iter().enumerate() {
        out[i] = value.ok_or(DimsError::Missing { dim: names[i] })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str; 2] = &["hidden", "heads"];

    #[test]
    fn every_dim_once_and_nothing_else() {
        assert_eq!(
            dims_by_name(&[("heads", 8), ("hidden", 64)], NAMES),
            Ok([64, 8])
        );
        let owned = vec![("hidden".to_owned(), 1), ("heads".to_owned(), 2)];
        assert_eq!(dims_by_name(&owned, NAMES), Ok([1, 2]));
        assert_eq!(
            dims_by_name(&[("hidden", 64)], NAMES),
            Err(DimsError::Missing { dim: "heads" })
        );
        assert_eq!(
            dims_by_name(&[("hidden", 1), ("heads", 2), ("hidden", 3)], NAMES),
            Err(DimsError::Repeated { dim: "hidden" })
        );
        let unknown = dims_by_name(&[("hiden", 64)], NAMES).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "`hiden` is not a dim of this circuit; its dims are hidden, heads"
        );
    }
}
