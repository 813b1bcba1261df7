//! The built-in printer: what [`render`](super::render) writes without the feature `pretty`,
//! so that a build script compiles neither prettyplease nor syn's full parser.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The text lexes back to the same tokens, as Rust reads them: a space is always left out
//!   after a joint punct (`::`, `'a`), and otherwise only between two tokens that cannot lex
//!   as one. (A punct may come back joint where it was alone, before a punct no operator
//!   starts with: `x?;`, `&'a`.)
//! - Deterministic, and only whitespace depends on its layout rules: a line ends after `;`
//!   and `,` at brace level (outside `<..>`), after an attribute and after a brace block; four
//!   spaces of indent per brace; a short brace group without `;` or attribute stays on its
//!   line, and a list of more than [`LONG_LIST`] commas takes a line per element.
#![cfg_attr(
    feature = "pretty",
    allow(dead_code, reason = "with `pretty`, prettyplease prints instead")
)]

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use crate::emit::names::is_keyword;

/// The widest brace group kept on one line, `{` to `}`.
const INLINE_WIDTH: usize = 60;

/// The most commas a `(..)` or `[..]` list has on one line; a longer one (a table's rows, a
/// plan's regions) takes a line per element, as a brace group's contents do.
const LONG_LIST: usize = 8;

/// `tokens` as text, ending with a newline.
pub(crate) fn print(tokens: TokenStream) -> String {
    let mut printer = Printer::new(false);
    printer.stream(tokens, true);
    printer.newline();
    printer.out
}

struct Printer {
    out: String,
    /// Brace groups open around the next token.
    depth: usize,
    /// Nothing written yet on the current line.
    line_start: bool,
    /// All on one line: a line break is a space (to measure a group kept inline).
    flat: bool,
    /// A space before the next token, whatever it is (a line break in a flat group).
    space: bool,
}

impl Printer {
    fn new(flat: bool) -> Self {
        Self {
            out: String::new(),
            depth: 0,
            line_start: !flat,
            flat,
            space: false,
        }
    }

    /// Prints a stream's trees; `lines` when its `;` and `,` end lines (the file, a brace group).
    fn stream(&mut self, tokens: TokenStream, lines: bool) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let angles = angles(&trees);
        for (i, tree) in trees.iter().enumerate() {
            let space = i > 0 && spaced(&trees, &angles, i);
            self.start(space);
            match tree {
                TokenTree::Group(group) => self.group(group.delimiter(), group.stream(), lines),
                other => self.out.push_str(&other.to_string()),
            }
            if line_break_after(&trees, &angles, i, lines) {
                self.newline();
            }
        }
    }

    /// Starts a token: the indent on a new line, else a space when `space` or one is owed.
    fn start(&mut self, space: bool) {
        if self.line_start {
            self.out.push_str(&"    ".repeat(self.depth));
            self.line_start = false;
        } else if space || self.space {
            self.out.push(' ');
        }
        self.space = false;
    }

    fn group(&mut self, delimiter: Delimiter, inner: TokenStream, lines: bool) {
        let (open, close) = match delimiter {
            Delimiter::Parenthesis => ('(', ')'),
            Delimiter::Bracket => ('[', ']'),
            Delimiter::None => return self.stream(inner, lines),
            Delimiter::Brace if inner.is_empty() => return self.out.push_str("{}"),
            Delimiter::Brace => match self.inline(&inner) {
                Some(text) => return self.out.push_str(&text),
                None => ('{', '}'),
            },
        };
        self.out.push(open);
        let commas = || {
            let commas = inner.clone().into_iter();
            commas
                .filter(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                .count()
        };
        if close == '}' || (!self.flat && commas() > LONG_LIST) {
            self.depth += 1;
            self.newline();
            self.stream(inner, true);
            self.depth -= 1;
            self.newline();
            self.start(false);
        } else {
            self.stream(inner, false);
        }
        self.out.push(close);
    }

    /// A brace group on one line, when it is short and holds no `;` or attribute of its own.
    fn inline(&self, inner: &TokenStream) -> Option<String> {
        let statements = || {
            inner
                .clone()
                .into_iter()
                .any(|t| matches!(&t, TokenTree::Punct(p) if matches!(p.as_char(), ';' | '#')))
        };
        if self.flat || statements() {
            return None;
        }
        let mut flat = Self::new(true);
        flat.group(Delimiter::Brace, inner.clone(), true);
        (flat.out.len() <= INLINE_WIDTH).then_some(flat.out)
    }

    fn newline(&mut self) {
        if self.flat {
            self.space = true;
        } else if !self.line_start {
            self.out.push('\n');
            self.line_start = true;
        }
    }
}

/// How each tree of a stream stands to generic arguments: `Open` for a `<` that opens them
/// (after a type-like name, `impl` or `::`), `Close` for the `>` that closes one, and the
/// depth inside them. A guess from the tokens: only whitespace depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Angle {
    Open,
    Close,
    Other(usize),
}

fn angles(trees: &[TokenTree]) -> Vec<Angle> {
    let mut depth = 0;
    let mut out = Vec::with_capacity(trees.len());
    for (i, tree) in trees.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| &trees[j]);
        let angle = match (tree, before) {
            (TokenTree::Punct(p), Some(TokenTree::Ident(name)))
                if p.as_char() == '<' && p.spacing() == Spacing::Alone =>
            {
                let name = name.to_string();
                name.starts_with(|c: char| c.is_ascii_uppercase()) || name == "impl"
            }
            (TokenTree::Punct(p), Some(TokenTree::Punct(colon))) if p.as_char() == '<' => {
                colon.as_char() == ':' && i >= 2 && joint(&trees[i - 2], ':')
            }
            (TokenTree::Punct(p), before) if p.as_char() == '>' && depth > 0 => !matches!(
                before,
                Some(TokenTree::Punct(q)) if q.spacing() == Spacing::Joint && q.as_char() != '>'
            ),
            _ => false,
        };
        out.push(match (angle, tree) {
            (true, TokenTree::Punct(p)) if p.as_char() == '<' => {
                depth += 1;
                Angle::Open
            }
            (true, _) => {
                depth -= 1;
                Angle::Close
            }
            (false, _) => Angle::Other(depth),
        });
    }
    out
}

/// Whether `tree` is the punct `c`, joint to the next.
fn joint(tree: &TokenTree, c: char) -> bool {
    matches!(tree, TokenTree::Punct(p) if p.as_char() == c && p.spacing() == Spacing::Joint)
}

/// Whether a space goes between `trees[i - 1]` and `trees[i]` (`i > 0`).
fn spaced(trees: &[TokenTree], angles: &[Angle], i: usize) -> bool {
    let punct = |j: usize, c: char| matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == c);
    // The second `:` of a `::`.
    let path_separator = |j: usize| j >= 1 && punct(j, ':') && joint(&trees[j - 1], ':');
    // `.` alone (`a.b`, `f().0`), not in `..`.
    let dot = |j: usize| {
        punct(j, '.') && !(j >= 1 && joint(&trees[j - 1], '.')) && !joint(&trees[j], '.')
    };
    // A name a path, a call or a macro's `!` can follow: not a keyword like `as`, nor the
    // name of a lifetime.
    let name = |j: usize| {
        matches!(&trees[j], TokenTree::Ident(w) if {
            let w = w.to_string();
            !is_keyword(&w) || matches!(w.as_str(), "crate" | "self" | "super" | "Self")
        }) && !(j >= 1 && joint(&trees[j - 1], '\''))
    };
    // A one-character operator in prefix position: after a punct (not one it ends, as `&` of
    // `&&`), a keyword, or first.
    let prefix = |j: usize| {
        j == 0 || matches!(&trees[j - 1], TokenTree::Punct(p) if p.spacing() == Spacing::Alone) || {
            matches!(&trees[j - 1], TokenTree::Ident(w) if is_keyword(&w.to_string()))
                && !name(j - 1)
        }
    };
    let (before, this) = (&trees[i - 1], &trees[i]);
    match (before, this) {
        (TokenTree::Punct(p), _) if p.spacing() == Spacing::Joint => false,
        // An invisible group's tokens are printed bare: never glued to what is around them.
        (TokenTree::Group(g), _) | (_, TokenTree::Group(g)) if g.delimiter() == Delimiter::None => {
            true
        }
        (_, TokenTree::Punct(p)) if matches!(p.as_char(), ',' | ';') => false,
        // `Option<T>`, `impl<'a>`, `f::<T>()`; never `<-`.
        (_, _) if angles[i] == Angle::Open => false,
        (_, TokenTree::Punct(_)) if angles[i] == Angle::Close => {
            matches!(before, TokenTree::Punct(_))
        }
        (TokenTree::Punct(_), _) if angles[i - 1] == Angle::Open => match this {
            TokenTree::Punct(q) => !matches!(q.as_char(), '\'' | '&'),
            TokenTree::Literal(l) => l.to_string().starts_with('-'),
            _ => false,
        },
        (TokenTree::Punct(_), TokenTree::Group(g)) if angles[i - 1] == Angle::Close => {
            g.delimiter() != Delimiter::Parenthesis
        }
        // `f(..)`, `a[..]`, `pub(crate)`, `f()(..)`, `m!(..)`, `#[..]`; `match (a, b)`.
        (TokenTree::Ident(w), TokenTree::Group(g)) => {
            g.delimiter() == Delimiter::Brace || !(name(i - 1) || w == "pub")
        }
        (TokenTree::Group(a), TokenTree::Group(b)) => {
            a.delimiter() == Delimiter::Brace || b.delimiter() == Delimiter::Brace
        }
        (TokenTree::Ident(_), TokenTree::Punct(p)) if p.as_char() == '!' => {
            !(name(i - 1) && matches!(trees.get(i + 1), Some(TokenTree::Group(_))))
        }
        (TokenTree::Punct(p), TokenTree::Group(_)) if p.as_char() == '#' => false,
        (TokenTree::Punct(p), TokenTree::Group(_)) if p.as_char() == '!' && i >= 2 => {
            !name(i - 2) && !prefix(i - 1)
        }
        // `a::b`, `::a`, `a::{..}`, `T>::a`; `a: T`.
        (_, TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint => {
            !(name(i - 1) || angles[i - 1] == Angle::Close)
        }
        (_, TokenTree::Ident(_) | TokenTree::Group(_)) if path_separator(i - 1) => false,
        (_, TokenTree::Punct(p)) if p.as_char() == '*' && path_separator(i - 1) => false,
        (
            TokenTree::Ident(_) | TokenTree::Group(_) | TokenTree::Literal(_),
            TokenTree::Punct(p),
        ) if p.as_char() == ':' => false,
        // `&x`, `&'a T`, `*p`, `-1`, `!x`.
        (TokenTree::Punct(p), _)
            if matches!(p.as_char(), '&' | '*' | '-' | '!') && prefix(i - 1) =>
        {
            match this {
                TokenTree::Punct(q) => !(p.as_char() == '&' && q.as_char() == '\''),
                TokenTree::Literal(l) => l.to_string().starts_with('-'),
                _ => false,
            }
        }
        // `a.b`, `f().0`, `x?`; never after a literal (`1 .0` is not `1.0`).
        (TokenTree::Ident(_) | TokenTree::Group(_), TokenTree::Punct(p)) => {
            !(dot(i) || p.as_char() == '?')
        }
        (TokenTree::Punct(_), TokenTree::Ident(_) | TokenTree::Literal(_)) => !dot(i - 1),
        _ => true,
    }
}

/// Whether a line ends after `trees[i]`: after `;`, and `,` outside `<..>`, where they end
/// lines; after an attribute; after a brace group that an item or a statement follows (a
/// word but `else` and `as`, or an attribute), outside `<..>`.
fn line_break_after(trees: &[TokenTree], angles: &[Angle], i: usize, lines: bool) -> bool {
    match &trees[i] {
        TokenTree::Punct(p) if p.as_char() == ',' => lines && angles[i] == Angle::Other(0),
        TokenTree::Punct(p) => lines && p.as_char() == ';',
        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
            angles[i] == Angle::Other(0)
                && match trees.get(i + 1) {
                    Some(TokenTree::Punct(p)) => p.as_char() == '#',
                    Some(TokenTree::Ident(w)) => w != "else" && w != "as",
                    _ => false,
                }
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '#')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    /// Tokens as Rust reads them: identifiers, literals, delimiters, and each run of joint
    /// puncts split into operators, longest first.
    fn read(tokens: TokenStream) -> Vec<String> {
        const OPERATORS: [&str; 24] = [
            "<<=", ">>=", "...", "..=", "::", "->", "=>", "<-", "==", "!=", "<=", ">=", "&&", "||",
            "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>",
        ];
        let mut out = Vec::new();
        let mut run = String::new();
        for tree in tokens {
            if let TokenTree::Punct(p) = &tree {
                run.push(p.as_char());
                if p.spacing() == Spacing::Joint {
                    continue;
                }
            }
            while !run.is_empty() {
                let len = OPERATORS
                    .iter()
                    .find(|op| run.starts_with(*op))
                    .map_or(1, |op| op.len());
                out.push(run.drain(..len).collect());
            }
            match tree {
                TokenTree::Group(group) => {
                    out.push(format!("{:?}", group.delimiter()));
                    out.extend(read(group.stream()));
                    out.push("end".to_owned());
                }
                TokenTree::Punct(_) => {}
                other => out.push(other.to_string()),
            }
        }
        out.extend((!run.is_empty()).then_some(run));
        out
    }

    /// The printed text, checked to read back as the same tokens.
    fn printed(tokens: &TokenStream) -> String {
        let text = print(tokens.clone());
        let back: TokenStream = text.parse().expect("lexes");
        assert_eq!(read(back), read(tokens.clone()), "{text}");
        text
    }

    #[test]
    fn items_take_a_line_each_and_braces_indent() {
        let tokens = quote! {
            #[doc = " A."]
            pub struct A<'a> { pub a: &'a [u8; 4], pub b: ::core::option::Option<Vec<u64>>, }
            impl<'a> A<'a> {
                pub const fn f(&self, i: usize) -> ::core::result::Result<u64, E> {
                    if i < N { Ok(self.b.0 .1) } else { Err(E::X { i, j: -1 }) }
                }
            }
        };
        assert_eq!(
            printed(&tokens),
            "#[doc = \" A.\"]\n\
             pub struct A<'a> {\n    pub a: &'a [u8; 4],\n    \
             pub b: ::core::option::Option<Vec<u64>>,\n}\n\
             impl<'a> A<'a> {\n    \
             pub const fn f(&self, i: usize) -> ::core::result::Result<u64, E> {\n        \
             if i < N { Ok(self.b.0 .1) } else { Err(E::X { i, j: -1 }) }\n    }\n}\n"
        );
    }

    #[test]
    fn long_lists_take_a_line_per_element() {
        let tokens = quote! {
            const T: Table<N, { L + 2 }> = new([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], (a, b));
        };
        let lines: Vec<String> = (1..=9).map(|i| format!("    {i},\n")).collect();
        assert_eq!(
            printed(&tokens),
            format!(
                "const T: Table<N, {{ L + 2 }}> = new([\n{}    10\n], (a, b));\n",
                lines.concat()
            )
        );
    }

    #[test]
    fn tokens_that_would_lex_as_one_stay_apart() {
        // `< -` is not `<-`, `1 .0` not `1.0`, `& &` not `&&`, `a b` not `ab`.
        let tokens = quote! { let x = a < -1 && f(1 .max(2), & &y, - -z); m!(x); };
        assert_eq!(
            printed(&tokens),
            "let x = a < -1 && f(1 .max(2), & &y, - -z);\nm!(x);\n"
        );
        let negative = TokenStream::from_iter([
            TokenTree::Ident(proc_macro2::Ident::new("A", proc_macro2::Span::call_site())),
            TokenTree::Punct(proc_macro2::Punct::new('<', Spacing::Alone)),
            TokenTree::Literal(proc_macro2::Literal::i32_unsuffixed(-1)),
            TokenTree::Punct(proc_macro2::Punct::new('>', Spacing::Alone)),
        ]);
        assert_eq!(print(negative), "A< -1>\n");
        let invisible = TokenStream::from_iter([
            TokenTree::Ident(proc_macro2::Ident::new("a", proc_macro2::Span::call_site())),
            TokenTree::Group(proc_macro2::Group::new(Delimiter::None, quote!(b))),
        ]);
        assert_eq!(print(invisible), "a b\n");
    }
}
