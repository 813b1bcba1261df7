//! The Rust names a circuit's names become: fields and modules keep the circuit's snake-case
//! names, types get camel case with a suffix that keeps the kinds of types apart
//! (`GdnBlock`, `LinearAttentionLayer`), integer literals get digit separators, and doc lines
//! are made safe ([`doc_line`]) as they are emitted.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The loader has checked that arch, dim, block, state and checkpoint names are snake-case
//!   identifiers and not keywords, so [`ident`] never sees anything else from a valid circuit;
//!   layer-kind names are checked by the loader's `names` stage to make type names, with the
//!   one [`camel_case`] both use.
//! - The fixed names a circuit's name could meet (a method of `Dims` beside the derived dims, a
//!   field of `StatePlan` beside the blocks, an item of `Checkpoint` or `<Key>Format` beside
//!   the variants, an item of the arch module beside the checkpoints) are [`taken`] from the
//!   loader's [`reserved`] list, which the loader checks the circuit's names against
//!   (`tests/reserved.rs` holds the list complete against the generated code).
//! - Fixed type names (`Dims`, `Formats`, `Inputs`, `Layer`, `Draft`, `StatePlan`,
//!   `Checkpoint`, `AnyPlan`) cannot collide with a derived one: derived names end in `Block`
//!   or `Layer`. The variants of `Checkpoint` and `AnyPlan` are the checkpoints' camel-case
//!   names, which the loader keeps distinct.
//! - Every doc line the emitter builds from text (circuit text above all) is a [`doc_line`]
//!   literal: escaped ([`escaped`]) and starting with a space, so that no circuit text can end
//!   a comment or inject a line in any front end's output, and every line prints as `/// text`.
//!   The doc lines written out in `quote!` start with a space too.

use std::fmt::Write as _;

use proc_macro2::{Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Every Rust keyword, strict and reserved, in every edition (2015 to 2024), and `_`: the words
/// that lex as identifiers but cannot be one.
const KEYWORDS: &[&str] = &[
    "_", "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// The keywords that cannot be raw identifiers (`r#self` is refused).
const NOT_RAW: &[&str] = &["_", "Self", "crate", "self", "super"];

/// Whether `text` is an ASCII identifier that is not a keyword: a letter or `_`, then letters,
/// digits and `_`. Every name the loader lets through is ASCII (snake-case names, camel-case
/// layer kinds); a non-ASCII identifier, which Rust would accept, is refused here.
pub fn is_ident(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&text)
}

/// The identifier `name` (raw when it is a keyword that can be raw).
///
/// # Panics
/// When `name` is not an identifier nor a keyword that can be raw (the loader refuses such
/// names, so a loaded circuit never gives one).
pub fn ident(name: &str) -> Ident {
    if KEYWORDS.contains(&name) && !NOT_RAW.contains(&name) {
        Ident::new_raw(name, Span::call_site())
    } else {
        Ident::new(name, Span::call_site())
    }
}

/// Whether `word` is a keyword, strict or reserved, in some edition (or `_`).
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

/// Why [`path`] refused a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// It is not a path: empty, an empty segment (`a::::b`, `a::`), or a segment that is not
    /// an ASCII identifier (`1a`, `a-b`, `a b`, `_`).
    NotAPath,
    /// It is a path with generic arguments (`a<b>`, `a::<b>`, `F(a)`), which cannot name a
    /// crate or module.
    GenericArguments,
    /// A segment is a keyword written bare (`::try`, `a::gen`): a `use` takes it raw (`r#try`).
    Keyword(String),
    /// `r#crate`, `r#self`, `r#super`, `r#Self`, `r#_`: keywords that cannot be raw.
    CannotBeRaw(String),
    /// `crate`, `self`, `super` or `Self` where a `use` cannot take it: `Self` anywhere;
    /// `crate` and `self` but as the first segment with no `::` before it (`::crate`,
    /// `a::crate`, `::a::self`); `super` but there or after `self` or another `super`
    /// (`crate::super`, `::super`).
    Misplaced(String),
}

/// The tokens of `text` when it names a crate or module by a path a `use` can take (`use
/// <path> as __rt;`): segments joined by `::` (spaces around it allowed), optionally led by
/// `::`, each an ASCII identifier that is no keyword (in any edition: `gen`, `try`, `async`,
/// `dyn`...), or a raw one (`r#try`, `r#x`; never `r#crate`, `r#self`, `r#super`, `r#Self`);
/// `crate` or `self` only as the first segment with no `::` before it, `super` there or after
/// `self` or another `super`; never `Self`. So `::metrale_circuit`, `crate::rt`,
/// `super::super::rt`, `::my_engine::metrale`, `r#async::rt`.
///
/// # Errors
/// [`PathError::GenericArguments`] when a path is followed by `<` or `(`; the segment's error
/// ([`PathError::Keyword`], [`PathError::CannotBeRaw`], [`PathError::Misplaced`]) for the first
/// segment a `use` cannot take; [`PathError::NotAPath`] for any other text that is not such a
/// path.
pub fn path(text: &str) -> Result<TokenStream, PathError> {
    if let Some(at) = text.find(['<', '(']) {
        let head = text[..at].trim_end();
        let head = head.strip_suffix("::").unwrap_or(head);
        return Err(match path(head) {
            Ok(_) => PathError::GenericArguments,
            Err(error) => error,
        });
    }
    let text = text.trim();
    let mut tokens = TokenStream::new();
    let (global, rest) = match text.strip_prefix("::") {
        Some(rest) => {
            tokens.extend(path_separator());
            (true, rest)
        }
        None => (false, text),
    };
    let mut previous: Option<&str> = None;
    for (i, segment) in rest.split("::").enumerate() {
        let segment = segment.trim();
        // Where `crate`, `self` and `super` may stand: `crate` and `self` first only, with no
        // `::` before them (`::crate` names no crate); `super` there too, or after `self` or
        // another `super`.
        let leads = i == 0 && !global;
        let ident = match segment {
            "crate" | "self" if leads => Ident::new(segment, Span::call_site()),
            "super" if leads || matches!(previous, Some("self" | "super")) => {
                Ident::new(segment, Span::call_site())
            }
            "crate" | "self" | "super" | "Self" => {
                return Err(PathError::Misplaced(segment.to_owned()));
            }
            "_" => return Err(PathError::NotAPath),
            _ => match segment.strip_prefix("r#") {
                Some(raw) if NOT_RAW.contains(&raw) => {
                    return Err(PathError::CannotBeRaw(raw.to_owned()));
                }
                Some(raw) if is_ident(raw) || is_keyword(raw) => {
                    Ident::new_raw(raw, Span::call_site())
                }
                None if is_ident(segment) => Ident::new(segment, Span::call_site()),
                None if is_keyword(segment) => {
                    return Err(PathError::Keyword(segment.to_owned()));
                }
                Some(_) | None => return Err(PathError::NotAPath),
            },
        };
        if i > 0 {
            tokens.extend(path_separator());
        }
        tokens.extend([TokenTree::Ident(ident)]);
        previous = Some(segment);
    }
    Ok(tokens)
}

/// `::`, as two joined punctuation tokens.
fn path_separator() -> [TokenTree; 2] {
    [
        TokenTree::Punct(Punct::new(':', Spacing::Joint)),
        TokenTree::Punct(Punct::new(':', Spacing::Alone)),
    ]
}

pub use metrale_circuit::load::names::{camel_case, reserved};

/// A name the generated code gives on its own (`on_tp`, `arena`, `Checkpoint::ALL`, ...), spelled
/// from the loader's [`reserved`] list: the names it refuses a circuit's names against, so a
/// name given here is one no circuit can take.
pub fn taken(name: &'static str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// `snake_case` + `suffix` as `CamelCase`: `gdn` + `Block` -> `GdnBlock`,
/// `linear_attention` + `Layer` -> `LinearAttentionLayer`. `None` when the result is not an
/// identifier (the loader refuses such names, so a loaded circuit never gives one).
pub fn type_name(snake: &str, suffix: &str) -> Option<Ident> {
    let name = camel_case(snake) + suffix;
    is_ident(&name).then(|| Ident::new(&name, Span::call_site()))
}

/// `text` safe inside a comment or a doc line: every control character but the tab (a
/// newline would end the comment, a bare CR is refused in doc comments) and every character
/// that changes the text's direction or hides (which rustc refuses in literals and comments) is
/// written as its `\u{..}` escape.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        );
        if (c.is_control() && c != '\t') || hidden {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The literal of one doc line (`#[doc = #line]`) reading `text`: [`escaped`], and led by a
/// space unless empty or already so (`#[doc = " text"]` prints as `/// text`). Every doc line
/// the emitter builds from text goes through here.
pub fn doc_line(text: &str) -> Literal {
    let safe = escaped(text);
    if safe.is_empty() || safe.starts_with(' ') {
        Literal::string(&safe)
    } else {
        Literal::string(&format!(" {safe}"))
    }
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
        assert_eq!(ident("gen").to_string(), "r#gen");
        assert_eq!(ident("self").to_string(), "self", "cannot be raw");
    }

    #[test]
    fn identifiers_are_ascii_words_but_keywords() {
        for word in ["gdn", "_x", "Qwen3", "a_1", "GdnBlock", "x"] {
            assert!(is_ident(word), "{word}");
        }
        let not = [
            "", "_", "1a", "a-b", "a b", "type", "Self", "self", "gen", "é", "a::b",
        ];
        for word in not {
            assert!(!is_ident(word), "{word:?}");
        }
    }

    #[test]
    fn runtime_paths_are_what_a_use_takes() {
        // Each accepted path was checked with rustc (edition 2024) in `use <path> as __rt;`.
        let ok = |text: &str| path(text).map(|tokens| tokens.to_string());
        assert_eq!(ok("::metrale_circuit").as_deref(), Ok(":: metrale_circuit"));
        assert_eq!(ok("crate::rt").as_deref(), Ok("crate :: rt"));
        assert_eq!(
            ok(" :: my_engine :: metrale ").as_deref(),
            Ok(":: my_engine :: metrale")
        );
        assert_eq!(
            ok("super::super::r#type").as_deref(),
            Ok("super :: super :: r#type")
        );
        assert_eq!(ok("super::rt").as_deref(), Ok("super :: rt"));
        assert_eq!(ok("self::rt").as_deref(), Ok("self :: rt"));
        assert_eq!(ok("self::super::rt").as_deref(), Ok("self :: super :: rt"));
        assert_eq!(ok("r#async::x").as_deref(), Ok("r#async :: x"));
        assert_eq!(ok("::r#try").as_deref(), Ok(":: r#try"));
        assert_eq!(ok("::r#gen::r#x").as_deref(), Ok(":: r#gen :: r#x"));
        for whole in ["crate", "self", "super", "metrale_circuit"] {
            assert_eq!(ok(whole).as_deref(), Ok(whole));
        }
        let refused = |text: &str| path(text).unwrap_err();
        for text in [
            "",
            "::",
            "a::",
            "a::::b",
            "not a path",
            "1a",
            "a-b",
            "a:b",
            "_",
            "::_",
            "r#",
            "r#1a",
            "é",
        ] {
            assert_eq!(refused(text), PathError::NotAPath, "{text:?}");
        }
        // Keywords of every edition, 2024's `gen` included, bare.
        for (text, word) in [
            ("::try", "try"),
            ("::gen", "gen"),
            ("a::fn", "fn"),
            ("async::x", "async"),
            ("::a::dyn", "dyn"),
        ] {
            assert_eq!(refused(text), PathError::Keyword(word.into()), "{text:?}");
        }
        for (text, word) in [
            ("r#self", "self"),
            ("r#crate::a", "crate"),
            ("a::r#Self", "Self"),
        ] {
            assert_eq!(
                refused(text),
                PathError::CannotBeRaw(word.into()),
                "{text:?}"
            );
        }
        for (text, word) in [
            ("::crate", "crate"),
            ("a::crate", "crate"),
            ("crate::super", "super"),
            ("::super", "super"),
            ("a::super", "super"),
            ("::self", "self"),
            ("::a::self", "self"),
            ("super::self", "self"),
            ("crate::crate", "crate"),
            ("Self", "Self"),
            ("Self::x", "Self"),
            ("crate::Self", "Self"),
        ] {
            assert_eq!(refused(text), PathError::Misplaced(word.into()), "{text:?}");
        }
        for text in ["::a<b>", "a::<b>", "a::b(c)"] {
            assert_eq!(refused(text), PathError::GenericArguments, "{text:?}");
        }
        assert_eq!(refused("a b<c>"), PathError::NotAPath);
        assert_eq!(refused("::try<c>"), PathError::Keyword("try".into()));
    }

    #[test]
    fn doc_lines_are_escaped_and_led_by_a_space() {
        assert_eq!(doc_line("text").to_string(), r#"" text""#);
        assert_eq!(doc_line(" text").to_string(), r#"" text""#);
        assert_eq!(doc_line("").to_string(), r#""""#);
        assert_eq!(
            escaped("a\rb\u{202e}\tc\n"),
            "a\\u{000d}b\\u{202e}\tc\\u{000a}"
        );
        assert_eq!(doc_line("*/ \u{200b}").to_string(), r#"" */ \\u{200b}""#);
    }
}
