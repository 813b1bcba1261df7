//! A shape's syntax tree ([`Shape`], [`Axis`], [`Product`], [`Factor`], [`Divisor`],
//! [`DimRef`]), the dims it reads, and its canonical spelling (`Display`).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants: `Display` is canonical (parsing it gives back the same tree, offsets aside); the
//! tree's fields are public, so a hand-built tree may break the parser's guarantees, and
//! evaluation handles that without a panic.

use std::fmt;

/// The shape of one unit of a state: the product of its axes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    /// The text as written in the circuit (not trimmed); [`DimRef::offset`]s index it.
    pub text: String,
    /// The axes, multiplied; a parsed shape has at least one.
    pub axes: Vec<Axis>,
}

/// One axis of a shape: the sum of its terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Axis {
    /// The terms, summed; a parsed axis has at least one.
    pub terms: Vec<Product>,
}

/// One term of an axis: the product of its factors, added to the terms before it or
/// subtracted from them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Product {
    /// Subtracted (`- term`) rather than added; never the first term of an axis.
    pub subtract: bool,
    /// The factors, multiplied; a parsed product has at least one.
    pub factors: Vec<Factor>,
}

/// One factor of a product.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Factor {
    /// An integer literal (> 0 when parsed).
    Lit(u64),
    /// The value of a dim.
    Dim(DimRef),
    /// A dim divided by a divisor, rounded up (`name/lit`, `name/name`).
    CeilDiv {
        /// The dividend.
        dim: DimRef,
        /// The divisor.
        by: Divisor,
    },
}

/// The right side of a ceiling division.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Divisor {
    /// An integer literal (> 0 when parsed).
    Lit(u64),
    /// The value of a dim (an error at evaluation if it is 0).
    Dim(DimRef),
}

/// A dim read by a shape, with its byte offset in `Shape::text` (for located errors).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DimRef {
    /// The dim's name (`[a-z][a-z0-9_]*`, never `x`, when parsed).
    pub name: String,
    /// The byte offset of the name in [`Shape::text`].
    pub offset: usize,
}

impl Shape {
    /// Whether any term is subtracted (`-`, which needs `schema = 2`).
    #[must_use]
    pub fn subtracts(&self) -> bool {
        self.axes
            .iter()
            .flat_map(|axis| &axis.terms)
            .any(|term| term.subtract)
    }

    /// Every dim the shape reads, in text order (duplicates kept).
    #[must_use]
    pub fn dims(&self) -> Vec<&DimRef> {
        let mut dims = Vec::new();
        for factor in self
            .axes
            .iter()
            .flat_map(|axis| &axis.terms)
            .flat_map(|term| &term.factors)
        {
            match factor {
                Factor::Lit(_) => {}
                Factor::Dim(dim) => dims.push(dim),
                Factor::CeilDiv { dim, by } => {
                    dims.push(dim);
                    if let Divisor::Dim(divisor) = by {
                        dims.push(divisor);
                    }
                }
            }
        }
        dims
    }
}

impl fmt::Display for Shape {
    /// The canonical form: axes joined by ` x `, terms by ` + `, factors by ` * `, divisions
    /// `a/b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        join(f, &self.axes, " x ")
    }
}

impl fmt::Display for Axis {
    /// The terms joined by ` + ` or ` - `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, term) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(if term.subtract { " - " } else { " + " })?;
            }
            write!(f, "{term}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Product {
    /// The factors joined by ` * `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        join(f, &self.factors, " * ")
    }
}

impl fmt::Display for Factor {
    /// `4`, `hidden`, `hidden/128`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Factor::Lit(n) => write!(f, "{n}"),
            Factor::Dim(dim) => f.write_str(&dim.name),
            Factor::CeilDiv { dim, by } => write!(f, "{}/{by}", dim.name),
        }
    }
}

impl fmt::Display for Divisor {
    /// `128`, `heads`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Divisor::Lit(n) => write!(f, "{n}"),
            Divisor::Dim(dim) => f.write_str(&dim.name),
        }
    }
}

/// Writes `items` separated by `separator`.
fn join(f: &mut fmt::Formatter<'_>, items: &[impl fmt::Display], separator: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// Whether `s` is a non-empty run of ASCII digits.
pub(super) fn is_literal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}
