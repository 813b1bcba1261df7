//! The shape of one unit of a state: its grammar, its syntax tree ([`Shape`]), its canonical
//! spelling (`Display`), and its evaluation under a table of dims ([`Shape::eval`]).
//!
//! Owner: metrale-circuit.
//!
//! A shape is written in a circuit TOML as `"lin_v_heads x lin_k_dim x lin_v_dim"`,
//! `"conv_window x lin_k_heads*lin_k_dim*2+lin_v_heads*lin_v_dim"` or `"hidden/128 x 4"`:
//!
//! ```text
//! shape   := axis ("x" axis)*
//! axis    := term (("+" | "-") term)*      (`-` needs `schema = 2`)
//! term    := factor ("*" factor)*
//! factor  := LIT | NAME | NAME "/" LIT | NAME "/" NAME      (the division rounds up)
//! LIT     := [0-9]+   (> 0, or 0 in an index; fits u64, no `_`)
//! NAME    := [a-z][a-z0-9_]*   (but not `x`)
//! ```
//!
//! Whitespace is insignificant between tokens. Letters, digits and `_` written together form ONE
//! token, so the separator `x` needs whitespace around it where it touches a name or a literal
//! (`a x b`, `4 x 4`; `axb` is the dim `axb` and `4x4` is refused).
//!
//! ```
//! use metrale_circuit::load::shape::Shape;
//!
//! let shape = Shape::parse("hidden/128 x 4")?;
//! assert_eq!(shape.to_string(), "hidden/128 x 4");
//! let dims = |name: &str| (name == "hidden").then_some(5121);
//! assert_eq!(shape.eval(dims), Ok(41 * 4));
//! # Ok::<(), metrale_circuit::load::shape::ShapeSyntaxError>(())
//! ```
//!
//! Invariants:
//! - Nothing here panics, whatever the text or the dims: every slice is taken with `get`, every
//!   sum and product is checked, and a division is only made by a divisor known to be non-zero.
//! - A parsed shape has at least one axis, every axis at least one term, every term at least one
//!   factor; its literals are > 0 (an index's, [`Shape::parse_index`], may be 0), and every
//!   [`DimRef::offset`] is the byte offset in [`Shape::text`] where that name is spelled.
//! - A [`ShapeSyntaxError`] reports the first offending token in text order: `len >= 1`, and the
//!   span lies within the text or is the single position just past its end.
//! - `Display` is canonical: `Shape::parse` of it gives back the same tree (offsets aside), and
//!   the canonical form of the canonical form is itself.
//! - [`Shape::eval`] is a left-to-right checked fold: an intermediate that overflows `u64` is
//!   [`EvalError::Overflow`], a running sum that would go below zero [`EvalError::Negative`],
//!   exactly as the generated unit functions compute.

mod eval;
mod grammar;
mod tree;

pub use eval::EvalError;
pub use grammar::ShapeSyntaxError;
pub use tree::{Axis, DimRef, Divisor, Factor, Product, Shape};

#[cfg(test)]
mod tests;
