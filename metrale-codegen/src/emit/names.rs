//! The Rust names a circuit's names become: fields and modules keep the circuit's snake-case
//! names, types get camel case with a suffix that keeps the kinds of types apart
//! (`GdnBlock`, `LinearAttentionLayer`), and integer literals get digit separators.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The loader has checked that arch, dim, block, state and checkpoint names are snake-case
//!   identifiers and not keywords, so [`ident`] never sees anything else from a valid circuit;
//!   layer-kind names are checked by the loader's `names` stage to make type names, with the
//!   one [`camel_case`] both use.
//! - Fixed type names (`Dims`, `Formats`, `Inputs`, `Layer`, `Draft`, `StatePlan`,
//!   `Checkpoint`, `AnyPlan`) cannot collide with a derived one: derived names end in `Block`
//!   or `Layer`. The variants of `Checkpoint` and `AnyPlan` are the checkpoints' camel-case
//!   names, which the loader keeps distinct.

use proc_macro2::{Ident, Literal, Span};

/// The identifier `name` (raw when it is a keyword that can be raw).
pub fn ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, Span::call_site())
    } else {
        Ident::new_raw(name, Span::call_site())
    }
}

pub use metrale_circuit::load::camel_case;

/// `snake_case` + `suffix` as `CamelCase`: `gdn` + `Block` -> `GdnBlock`,
/// `linear_attention` + `Layer` -> `LinearAttentionLayer`. `None` when the result is not an
/// identifier (the loader refuses such names, so a loaded circuit never gives one).
pub fn type_name(snake: &str, suffix: &str) -> Option<Ident> {
    syn::parse_str::<Ident>(&(camel_case(snake) + suffix)).ok()
}

/// An unsuffixed integer literal, with `_` every three digits from five digits on (clippy's
/// `unreadable_literal`).
pub fn int(value: u64) -> Literal {
    let digits = value.to_string();
    if digits.len() < 5 {
        return Literal::u64_unsuffixed(value);
    }
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push('_');
        }
        grouped.push(digit);
    }
    grouped
        .parse()
        .unwrap_or_else(|_| Literal::u64_unsuffixed(value))
}

/// A `usize` literal (indices, counts).
pub fn index(value: usize) -> Literal {
    Literal::usize_unsuffixed(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_names() {
        let name = |s, suffix| type_name(s, suffix).map(|i| i.to_string());
        assert_eq!(name("gdn", "Block").as_deref(), Some("GdnBlock"));
        assert_eq!(
            name("linear_attention", "Layer").as_deref(),
            Some("LinearAttentionLayer")
        );
        assert_eq!(
            name("qwen3_attention", "Block").as_deref(),
            Some("Qwen3AttentionBlock")
        );
        assert_eq!(name("full-attention", "Layer"), None);
        assert_eq!(name("2x", "Layer"), None);
    }

    #[test]
    fn literals_get_separators_from_five_digits() {
        assert_eq!(int(5120).to_string(), "5120");
        assert_eq!(int(10_000).to_string(), "10_000");
        assert_eq!(int(786_432).to_string(), "786_432");
        assert_eq!(int(u64::MAX).to_string(), "18_446_744_073_709_551_615");
        assert_eq!(int(0).to_string(), "0");
    }

    #[test]
    fn keywords_become_raw() {
        assert_eq!(ident("gdn").to_string(), "gdn");
        assert_eq!(ident("type").to_string(), "r#type");
    }
}
