//! A shape's grammar: the lexer, the parser ([`Shape::parse`]) and its located errors
//! ([`ShapeSyntaxError`], with a help line naming the rule broken).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants: the first offending token in text order is the one reported, `len >= 1` and
//! within the text or just past its end; a shape of more than [`MAX_SHAPE_TERMS`] factors is
//! refused at the first factor past the limit; nothing panics on any text.

use std::fmt;

use super::tree::{Axis, DimRef, Divisor, Factor, Product, Shape, is_literal};
use crate::load::text::limits::MAX_SHAPE_TERMS;

/// The grammar in one line, the help of most syntax errors.
pub(super) const GRAMMAR_HELP: &str = "a shape is axes joined by ` x `; an axis is terms \
     joined by `+` or `-`, factors by `*`; a factor is a literal > 0, a dim name, or \
     `name/lit`, `name/name`";

/// The spelling rule of a dim name, for help lines.
const NAME_RULE: &str = "dim names match `[a-z][a-z0-9_]*`";

/// A syntax error: byte offset and length (>= 1, within text or at its end) of the offending
/// token in the shape text, a message, and an optional help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeSyntaxError {
    /// The byte offset of the offending token (the text's length for "at the end").
    pub offset: usize,
    /// The token's length in bytes, at least 1.
    pub len: usize,
    /// What is wrong, naming what would be valid.
    pub message: String,
    /// How to fix it, when there is something to say beyond the message.
    pub help: Option<String>,
}

impl ShapeSyntaxError {
    /// An error on `len` bytes at `offset` (a zero `len` is widened to 1).
    fn new(offset: usize, len: usize, message: impl Into<String>, help: Option<String>) -> Self {
        Self {
            offset,
            len: len.max(1),
            message: message.into(),
            help,
        }
    }

    /// An error on `token`.
    fn at(token: &Token<'_>, message: impl Into<String>, help: Option<String>) -> Self {
        Self::new(token.offset, token.len, message, help)
    }
}

impl fmt::Display for ShapeSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ShapeSyntaxError {}

impl Shape {
    /// Parses a shape (see the module docs for the grammar).
    ///
    /// # Errors
    ///
    /// A [`ShapeSyntaxError`] locating the first offending token: an empty shape, axis or
    /// operand, a dangling or doubled operator, a character outside the grammar, a literal that
    /// is 0 or does not fit in `u64`, a name that is not lower snake case or is `x`, a division
    /// of a literal, a chained division, or a division by the literal 0.
    pub fn parse(text: &str) -> Result<Shape, ShapeSyntaxError> {
        Parser::new(text, false).shape()
    }

    /// Parses an index (a `shares` table's `layer`): the grammar of [`Shape::parse`], where a
    /// literal may also be 0, since layer 0 is an index like any other (a factor of 0 only
    /// empties a unit).
    ///
    /// # Errors
    ///
    /// As [`Shape::parse`], but for a literal 0.
    pub fn parse_index(text: &str) -> Result<Shape, ShapeSyntaxError> {
        Parser::new(text, true).shape()
    }
}

/// Whether `s` is a dim name or the separator: `[a-z][a-z0-9_]*`.
fn is_word(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The kinds of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    /// A dim name.
    Name(&'a str),
    /// An integer literal (possibly 0; the parser decides what 0 means where it stands).
    Lit(u64),
    /// The axis separator `x`.
    Sep,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// A character outside the grammar.
    Other(char),
    /// The end of the text.
    End,
}

/// A token and where it is spelled.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    /// What it is.
    tok: Tok<'a>,
    /// Its spelling (empty at the end).
    text: &'a str,
    /// Its byte offset (the text's length at the end).
    offset: usize,
    /// Its length in bytes (1 at the end).
    len: usize,
}

impl Token<'_> {
    /// How a message names this token after "found".
    fn describe(&self) -> String {
        match self.tok {
            Tok::End => "the end of the shape".to_owned(),
            Tok::Sep => "the axis separator `x`".to_owned(),
            Tok::Lit(_) => format!("the literal `{}`", self.text),
            Tok::Other(c) => format!("`{}`", c.escape_debug()),
            Tok::Name(_) | Tok::Plus | Tok::Minus | Tok::Star | Tok::Slash => {
                format!("`{}`", self.text)
            }
        }
    }
}

/// Splits a shape's text into tokens, one at a time, so that the first error in text order is the
/// one reported.
struct Lexer<'a> {
    /// The whole text.
    text: &'a str,
    /// The characters not yet read, with their byte offsets.
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            chars: text.char_indices().peekable(),
        }
    }

    /// The byte offset of the next unread character (the text's length at the end).
    fn position(&mut self) -> usize {
        self.chars.peek().map_or(self.text.len(), |&(i, _)| i)
    }

    /// The next token, or the error of a malformed word or literal.
    fn next_token(&mut self) -> Result<Token<'a>, ShapeSyntaxError> {
        while self.chars.next_if(|&(_, c)| c.is_whitespace()).is_some() {}
        let Some((start, c)) = self.chars.next() else {
            return Ok(Token {
                tok: Tok::End,
                text: "",
                offset: self.text.len(),
                len: 1,
            });
        };
        let is_run = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let tok = match c {
            '+' => Tok::Plus,
            '-' => Tok::Minus,
            '*' => Tok::Star,
            '/' => Tok::Slash,
            c if is_run(c) => {
                while self.chars.next_if(|&(_, c)| is_run(c)).is_some() {}
                let end = self.position();
                let run = self.text.get(start..end).unwrap_or_default();
                let token = Token {
                    tok: Tok::End,
                    text: run,
                    offset: start,
                    len: end.saturating_sub(start),
                };
                return Ok(Token {
                    tok: classify(&token)?,
                    ..token
                });
            }
            c => Tok::Other(c),
        };
        let len = c.len_utf8();
        Ok(Token {
            tok,
            text: self.text.get(start..self.position()).unwrap_or_default(),
            offset: start,
            len,
        })
    }
}

/// What a run of letters, digits and `_` is: a literal, a name, the separator, or an error.
fn classify<'a>(token: &Token<'a>) -> Result<Tok<'a>, ShapeSyntaxError> {
    let run = token.text;
    if is_literal(run) {
        return run.parse::<u64>().map(Tok::Lit).map_err(|_| {
            ShapeSyntaxError::at(
                token,
                "integer literal does not fit in u64",
                Some(format!("the largest literal is {}", u64::MAX)),
            )
        });
    }
    if is_word(run) {
        return Ok(if run == "x" { Tok::Sep } else { Tok::Name(run) });
    }
    let starts_with_digit = run.bytes().next().is_some_and(|b| b.is_ascii_digit());
    if starts_with_digit && run.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(ShapeSyntaxError::at(
            token,
            format!("`_` is not allowed in integer literals, found `{run}`"),
            Some(format!("write `{}`", run.replace('_', ""))),
        ));
    }
    if starts_with_digit {
        let help = if run.contains('x') {
            "put spaces around the axis separator: `4 x 4`, not `4x4`".to_owned()
        } else {
            format!("a literal is digits only; {NAME_RULE}")
        };
        return Err(ShapeSyntaxError::at(
            token,
            format!("invalid token `{run}`: expected a dim name or an integer literal"),
            Some(help),
        ));
    }
    if run.bytes().any(|b| b.is_ascii_uppercase()) {
        let lower = run.to_ascii_lowercase();
        let help = if lower == "x" {
            "the axis separator is a lowercase `x`, and `x` cannot be a dim name".to_owned()
        } else if is_word(&lower) {
            format!("{NAME_RULE}: did you mean `{lower}`?")
        } else {
            NAME_RULE.to_owned()
        };
        return Err(ShapeSyntaxError::at(
            token,
            format!("dim name `{run}` must be lower snake case"),
            Some(help),
        ));
    }
    Err(ShapeSyntaxError::at(
        token,
        format!("dim name `{run}` must start with a lowercase letter"),
        Some(NAME_RULE.to_owned()),
    ))
}

/// Why a character is not part of the grammar, when there is more to say than "unexpected".
fn char_reason(c: char) -> Option<&'static str> {
    match c {
        '(' | ')' | '[' | ']' | '{' | '}' => Some("shapes have no parentheses"),
        '.' => Some("literals are whole numbers"),
        ',' => Some("axes are joined by ` x `, not `,`"),
        '×' => Some("the axis separator is the letter `x`"),
        '%' => Some("shapes only divide, rounding up, with `/`"),
        _ => None,
    }
}

/// The help line for an unexpected character: its reason, then the grammar.
fn char_help(c: char) -> String {
    match char_reason(c) {
        Some(reason) => format!("{reason}; {GRAMMAR_HELP}"),
        None => GRAMMAR_HELP.to_owned(),
    }
}

/// The error for `found` where a factor (`what` names it) should start.
fn expected_operand(what: &str, found: &Token<'_>) -> ShapeSyntaxError {
    let help = match found.tok {
        Tok::Sep => "`x` separates axes and cannot be a dim name".to_owned(),
        Tok::Other(c) => char_help(c),
        _ => GRAMMAR_HELP.to_owned(),
    };
    let message = format!("expected {what}, found {}", found.describe());
    ShapeSyntaxError::at(found, message, Some(help))
}

/// The error for an operator with nothing after it.
fn dangling(op: &Token<'_>) -> ShapeSyntaxError {
    let message = match op.tok {
        Tok::Sep => "`x` must be followed by an axis",
        Tok::Plus => "`+` must be followed by a term",
        Tok::Minus => "`-` must be followed by a term",
        Tok::Slash => "`/` must be followed by a divisor: a literal > 0 or a dim name",
        _ => "`*` must be followed by a factor",
    };
    ShapeSyntaxError::at(op, message, Some(GRAMMAR_HELP.to_owned()))
}

/// The error at the first factor past [`MAX_SHAPE_TERMS`].
fn too_many_terms(first: &Token<'_>) -> ShapeSyntaxError {
    ShapeSyntaxError::at(
        first,
        format!("too many terms: the limit is {MAX_SHAPE_TERMS} factors in one shape"),
        Some("declare a dim, or `[derive]` one (schema 2), for a part of the shape".to_owned()),
    )
}

/// Reads a shape token by token.
struct Parser<'a> {
    /// The whole text.
    text: &'a str,
    /// Its tokens.
    lexer: Lexer<'a>,
    /// Whether a literal may be 0 (an index, not a shape).
    zero: bool,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, zero: bool) -> Self {
        Self {
            text,
            lexer: Lexer::new(text),
            zero,
        }
    }

    /// The whole shape.
    fn shape(mut self) -> Result<Shape, ShapeSyntaxError> {
        let mut axes = Vec::new();
        let mut terms = Vec::new();
        let mut factors = Vec::new();
        let mut subtract = false;
        let mut previous_op: Option<Token<'a>> = None;
        let mut count = 0usize;
        loop {
            let first = self.lexer.next_token()?;
            let (factor, op) = self.factor(&first, previous_op.as_ref())?;
            count += 1;
            if count > MAX_SHAPE_TERMS {
                return Err(too_many_terms(&first));
            }
            match op.tok {
                Tok::Star => factors.push(factor),
                Tok::Plus | Tok::Minus => {
                    factors.push(factor);
                    terms.push(Product {
                        subtract,
                        factors: std::mem::take(&mut factors),
                    });
                    subtract = op.tok == Tok::Minus;
                }
                Tok::Sep => {
                    factors.push(factor);
                    terms.push(Product {
                        subtract,
                        factors: std::mem::take(&mut factors),
                    });
                    subtract = false;
                    axes.push(Axis {
                        terms: std::mem::take(&mut terms),
                    });
                }
                Tok::End => {
                    factors.push(factor);
                    terms.push(Product { subtract, factors });
                    axes.push(Axis { terms });
                    return Ok(Shape {
                        text: self.text.to_owned(),
                        axes,
                    });
                }
                Tok::Slash => {
                    return Err(match factor {
                        Factor::Lit(_) => ShapeSyntaxError::at(
                            &first,
                            format!(
                                "the left side of `/` must be a dim name, found {}",
                                first.describe()
                            ),
                            Some(
                                "ceiling division is `name/lit` or `name/name`; \
                                 write a constant quotient as a literal"
                                    .to_owned(),
                            ),
                        ),
                        Factor::Dim(_) | Factor::CeilDiv { .. } => ShapeSyntaxError::at(
                            &op,
                            "a factor divides at most once",
                            Some(
                                "ceiling division is `name/lit` or `name/name`; declare a dim \
                                 for the whole divisor"
                                    .to_owned(),
                            ),
                        ),
                    });
                }
                Tok::Other(c) => {
                    let message = match char_reason(c) {
                        Some(reason) => {
                            format!("unexpected character `{}`: {reason}", c.escape_debug())
                        }
                        None => format!(
                            "unexpected character `{}`: expected `x`, `+`, `-`, `*` or the end \
                             of the shape",
                            c.escape_debug()
                        ),
                    };
                    return Err(ShapeSyntaxError::at(
                        &op,
                        message,
                        Some(GRAMMAR_HELP.to_owned()),
                    ));
                }
                Tok::Name(_) | Tok::Lit(_) => {
                    return Err(ShapeSyntaxError::at(
                        &op,
                        format!(
                            "expected `x`, `+`, `-`, `*` or the end of the shape, found {}",
                            op.describe()
                        ),
                        Some(format!("separate axes with ` x `; {GRAMMAR_HELP}")),
                    ));
                }
            }
            previous_op = Some(op);
        }
    }

    /// One factor starting at `first`, and the token after it. `previous_op` is the operator
    /// before `first` (none at the start of the shape).
    fn factor(
        &mut self,
        first: &Token<'a>,
        previous_op: Option<&Token<'a>>,
    ) -> Result<(Factor, Token<'a>), ShapeSyntaxError> {
        let operand = "a dim name or an integer literal";
        let dim = match first.tok {
            Tok::Name(name) => DimRef {
                name: name.to_owned(),
                offset: first.offset,
            },
            Tok::Lit(0) if !self.zero => {
                return Err(ShapeSyntaxError::at(
                    first,
                    "integer literal must be > 0",
                    Some("a factor of 0 would make every unit of the state empty".to_owned()),
                ));
            }
            Tok::Lit(n) => return Ok((Factor::Lit(n), self.lexer.next_token()?)),
            Tok::End => {
                return Err(match previous_op {
                    Some(op) => dangling(op),
                    None => ShapeSyntaxError::new(
                        0,
                        self.text.len(),
                        "empty shape",
                        Some(GRAMMAR_HELP.to_owned()),
                    ),
                });
            }
            _ => return Err(expected_operand(operand, first)),
        };
        let op = self.lexer.next_token()?;
        if op.tok != Tok::Slash {
            return Ok((Factor::Dim(dim), op));
        }
        let divisor = self.lexer.next_token()?;
        let by = match divisor.tok {
            Tok::Name(name) => Divisor::Dim(DimRef {
                name: name.to_owned(),
                offset: divisor.offset,
            }),
            Tok::Lit(0) => {
                return Err(ShapeSyntaxError::at(
                    &divisor,
                    "division by zero",
                    Some("the divisor of `name/lit` must be a literal > 0".to_owned()),
                ));
            }
            Tok::Lit(n) => Divisor::Lit(n),
            Tok::End => return Err(dangling(&op)),
            _ => {
                return Err(expected_operand(
                    "a divisor (a literal > 0 or a dim name)",
                    &divisor,
                ));
            }
        };
        Ok((Factor::CeilDiv { dim, by }, self.lexer.next_token()?))
    }
}
