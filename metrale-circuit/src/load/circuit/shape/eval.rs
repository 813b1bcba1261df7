//! A shape's evaluation under a table of dims ([`Shape::eval`]) and why it can fail
//! ([`EvalError`]).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants: a left-to-right checked fold, stopping at the first fault, exactly as the
//! generated unit functions compute; a division is only made by a divisor known to be non-zero.

use std::fmt;

use super::tree::{Axis, DimRef, Divisor, Factor, Shape, is_literal};

/// Why a shape could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// The dim table has no dim of this name.
    UnknownDim(DimRef),
    /// The divisor dim of a ceiling division is 0. (A hand-built [`Divisor::Lit`] of 0, which
    /// [`Shape::parse`] never makes, is reported here too: the name is then the literal `0` and
    /// the offset the dividend's.)
    DivisionByZero(DimRef),
    /// The value does not fit in `u64`.
    Overflow,
    /// A subtraction would take an axis below zero.
    Negative,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::UnknownDim(dim) => write!(f, "unknown dim `{}`", dim.name),
            EvalError::DivisionByZero(dim) if is_literal(&dim.name) => {
                write!(
                    f,
                    "division by zero: the divisor is the literal `{}`",
                    dim.name
                )
            }
            EvalError::DivisionByZero(dim) => {
                write!(f, "division by zero: dim `{}` is 0", dim.name)
            }
            EvalError::Overflow => f.write_str("overflows u64"),
            EvalError::Negative => f.write_str("is below zero"),
        }
    }
}

impl std::error::Error for EvalError {}

impl Shape {
    /// Elements per unit: the product of the axes, each axis the sum of its products; ceiling
    /// division by `div_ceil`. `dim` gives a dim's value by name.
    ///
    /// Every product and sum is checked in text order, left to right, and the first fault is
    /// reported (an intermediate that overflows is an error even if a later zero would cancel
    /// it), exactly as the generated size functions compute.
    ///
    /// # Errors
    ///
    /// [`EvalError::UnknownDim`] for a name `dim` returns `None` for,
    /// [`EvalError::DivisionByZero`] for a divisor dim that is 0, and [`EvalError::Overflow`]
    /// when the value does not fit in `u64`, [`EvalError::Negative`] when a subtraction would
    /// take an axis below zero.
    pub fn eval(&self, dim: impl Fn(&str) -> Option<u64>) -> Result<u64, EvalError> {
        // A plain left-to-right checked fold, stopping at the first fault: the generated size
        // functions fold the same way, so both report the same fault for the same dims.
        let mut shape: u64 = 1;
        for axis in &self.axes {
            shape = shape
                .checked_mul(axis_value(axis, &dim)?)
                .ok_or(EvalError::Overflow)?;
        }
        Ok(shape)
    }

    /// Each axis's extent, in order: the unit's tensor shape (`heads x head_dim x state` gives
    /// `[heads, head_dim, state]`). Each is what [`Shape::eval`] multiplies.
    ///
    /// # Errors
    /// As [`Shape::eval`], for the first axis that faults.
    pub fn eval_axes(&self, dim: impl Fn(&str) -> Option<u64>) -> Result<Vec<u64>, EvalError> {
        self.axes
            .iter()
            .map(|axis| axis_value(axis, &dim))
            .collect()
    }
}

/// One axis: the sum of its products, each checked, left to right.
fn axis_value(axis: &Axis, dim: &impl Fn(&str) -> Option<u64>) -> Result<u64, EvalError> {
    let mut sum: u64 = 0;
    for term in &axis.terms {
        let mut product: u64 = 1;
        for factor in &term.factors {
            product = product
                .checked_mul(factor_value(factor, dim)?)
                .ok_or(EvalError::Overflow)?;
        }
        sum = if term.subtract {
            sum.checked_sub(product).ok_or(EvalError::Negative)?
        } else {
            sum.checked_add(product).ok_or(EvalError::Overflow)?
        };
    }
    Ok(sum)
}

/// The value of one factor under `dim`.
fn factor_value(factor: &Factor, dim: &impl Fn(&str) -> Option<u64>) -> Result<u64, EvalError> {
    let lookup = |r: &DimRef| dim(&r.name).ok_or_else(|| EvalError::UnknownDim(r.clone()));
    match factor {
        Factor::Lit(n) => Ok(*n),
        Factor::Dim(r) => lookup(r),
        Factor::CeilDiv { dim: r, by } => {
            let dividend = lookup(r)?;
            let divisor = match by {
                Divisor::Lit(n) => *n,
                Divisor::Dim(d) => lookup(d)?,
            };
            if divisor == 0 {
                let at = match by {
                    Divisor::Dim(d) => d.clone(),
                    Divisor::Lit(_) => DimRef {
                        name: "0".to_owned(),
                        offset: r.offset,
                    },
                };
                return Err(EvalError::DivisionByZero(at));
            }
            Ok(dividend.div_ceil(divisor))
        }
    }
}
