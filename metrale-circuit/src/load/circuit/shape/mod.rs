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
//! LIT     := [0-9]+   (> 0, fits u64, no `_`)
//! NAME    := [a-z][a-z0-9_]*   (but not `x`)
//! ```
//!
//! Whitespace is insignificant between tokens. Letters, digits and `_` written together form ONE
//! token, so the separator `x` needs whitespace around it where it touches a name or a literal
//! (`a x b`, `4 x 4`; `axb` is the dim `axb` and `4x4` is refused).
//!
//! ```
//! use metrale_circuit::shape::Shape;
//!
//! let shape = Shape::parse("hidden/128 x 4")?;
//! assert_eq!(shape.to_string(), "hidden/128 x 4");
//! let dims = |name: &str| (name == "hidden").then_some(5121);
//! assert_eq!(shape.eval(dims), Ok(41 * 4));
//! # Ok::<(), metrale_circuit::shape::ShapeSyntaxError>(())
//! ```
//!
//! Invariants:
//! - Nothing here panics, whatever the text or the dims: every slice is taken with `get`, every
//!   sum and product is checked, and a division is only made by a divisor known to be non-zero.
//! - A parsed shape has at least one axis, every axis at least one term, every term at least one
//!   factor; its literals are > 0, and every [`DimRef::offset`] is the byte offset in
//!   [`Shape::text`] where that name is spelled.
//! - A [`ShapeSyntaxError`] reports the first offending token in text order: `len >= 1`, and the
//!   span lies within the text or is the single position just past its end.
//! - `Display` is canonical: `Shape::parse` of it gives back the same tree (offsets aside), and
//!   the canonical form of the canonical form is itself.
//! - [`Shape::eval`] is a left-to-right checked fold: an intermediate that overflows `u64` is
//!   [`EvalError::Overflow`], a running sum that would go below zero [`EvalError::Negative`],
//!   exactly as the generated unit functions compute.

use std::fmt;

use crate::load::text::limits::MAX_SHAPE_TERMS;

/// The grammar in one line, the help of most syntax errors.
const GRAMMAR_HELP: &str = "a shape is axes joined by ` x `; an axis is terms joined by `+` or \
     `-`, factors by `*`; a factor is a literal > 0, a dim name, or `name/lit`, `name/name`";

/// The spelling rule of a dim name, for help lines.
const NAME_RULE: &str = "dim names match `[a-z][a-z0-9_]*`";

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
    /// Parses a shape (see the module docs for the grammar).
    ///
    /// # Errors
    ///
    /// A [`ShapeSyntaxError`] locating the first offending token: an empty shape, axis or
    /// operand, a dangling or doubled operator, a character outside the grammar, a literal that
    /// is 0 or does not fit in `u64`, a name that is not lower snake case or is `x`, a division
    /// of a literal, a chained division, or a division by the literal 0.
    pub fn parse(text: &str) -> Result<Shape, ShapeSyntaxError> {
        Parser::new(text).shape()
    }

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
            let mut sum: u64 = 0;
            for term in &axis.terms {
                let mut product: u64 = 1;
                for factor in &term.factors {
                    product = product
                        .checked_mul(factor_value(factor, &dim)?)
                        .ok_or(EvalError::Overflow)?;
                }
                sum = if term.subtract {
                    sum.checked_sub(product).ok_or(EvalError::Negative)?
                } else {
                    sum.checked_add(product).ok_or(EvalError::Overflow)?
                };
            }
            shape = shape.checked_mul(sum).ok_or(EvalError::Overflow)?;
        }
        Ok(shape)
    }
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
fn is_literal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
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
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            lexer: Lexer::new(text),
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
            Tok::Lit(0) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(name: &str, offset: usize) -> DimRef {
        DimRef {
            name: name.to_owned(),
            offset,
        }
    }

    fn d(name: &str, offset: usize) -> Factor {
        Factor::Dim(dim(name, offset))
    }

    fn product(factors: Vec<Factor>) -> Product {
        Product {
            subtract: false,
            factors,
        }
    }

    fn axis(terms: Vec<Product>) -> Axis {
        Axis { terms }
    }

    /// A dims table from pairs.
    fn table(pairs: &[(&str, u64)]) -> impl Fn(&str) -> Option<u64> {
        let pairs: Vec<(String, u64)> = pairs.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect();
        move |name| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    fn eval(text: &str, pairs: &[(&str, u64)]) -> Result<u64, EvalError> {
        Shape::parse(text).expect("parses").eval(table(pairs))
    }

    /// The error of `text`, as (offset, len, message).
    fn error(text: &str) -> (usize, usize, String) {
        let e = Shape::parse(text).expect_err("must not parse");
        (e.offset, e.len, e.message)
    }

    /// The axes with every offset zeroed, to compare trees spelled differently.
    fn without_offsets(shape: &Shape) -> Vec<Axis> {
        let clear = |r: &DimRef| dim(&r.name, 0);
        shape
            .axes
            .iter()
            .map(|a| Axis {
                terms: a
                    .terms
                    .iter()
                    .map(|t| Product {
                        subtract: t.subtract,
                        factors: t
                            .factors
                            .iter()
                            .map(|f| match f {
                                Factor::Lit(n) => Factor::Lit(*n),
                                Factor::Dim(r) => Factor::Dim(clear(r)),
                                Factor::CeilDiv { dim: r, by } => Factor::CeilDiv {
                                    dim: clear(r),
                                    by: match by {
                                        Divisor::Lit(n) => Divisor::Lit(*n),
                                        Divisor::Dim(r) => Divisor::Dim(clear(r)),
                                    },
                                },
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn parses_three_axes() {
        let text = "lin_v_heads x lin_k_dim x lin_v_dim";
        let shape = Shape::parse(text).unwrap();
        assert_eq!(
            shape,
            Shape {
                text: text.to_owned(),
                axes: vec![
                    axis(vec![product(vec![d("lin_v_heads", 0)])]),
                    axis(vec![product(vec![d("lin_k_dim", 14)])]),
                    axis(vec![product(vec![d("lin_v_dim", 26)])]),
                ],
            }
        );
    }

    #[test]
    fn parses_sum_of_products() {
        let text = "conv_window x lin_k_heads*lin_k_dim*2+lin_v_heads*lin_v_dim";
        let shape = Shape::parse(text).unwrap();
        assert_eq!(
            shape.axes,
            vec![
                axis(vec![product(vec![d("conv_window", 0)])]),
                axis(vec![
                    product(vec![
                        d("lin_k_heads", 14),
                        d("lin_k_dim", 26),
                        Factor::Lit(2)
                    ]),
                    product(vec![d("lin_v_heads", 38), d("lin_v_dim", 50)]),
                ]),
            ]
        );
        assert_eq!(shape.text, text);
    }

    #[test]
    fn parses_ceiling_division() {
        let shape = Shape::parse("hidden/128 x 4").unwrap();
        assert_eq!(
            shape.axes,
            vec![
                axis(vec![product(vec![Factor::CeilDiv {
                    dim: dim("hidden", 0),
                    by: Divisor::Lit(128),
                }])]),
                axis(vec![product(vec![Factor::Lit(4)])]),
            ]
        );
        let shape = Shape::parse(" a/bb\t*c ").unwrap();
        assert_eq!(
            shape.axes,
            vec![axis(vec![product(vec![
                Factor::CeilDiv {
                    dim: dim("a", 1),
                    by: Divisor::Dim(dim("bb", 3)),
                },
                d("c", 7),
            ])])]
        );
    }

    #[test]
    fn whitespace_is_optional_around_operators() {
        let spaced = Shape::parse("a * 2 + b / c x d").unwrap();
        let tight = Shape::parse("a*2+b/c x d").unwrap();
        assert_eq!(without_offsets(&spaced), without_offsets(&tight));
        // Letters written together are one name: `axb` is a dim, not `a x b`.
        assert_eq!(Shape::parse("axb").unwrap().dims(), vec![&dim("axb", 0)]);
        assert_eq!(Shape::parse("x1 x x_").unwrap().axes.len(), 2);
    }

    #[test]
    fn dims_in_text_order_with_duplicates() {
        let shape = Shape::parse("a/b + 3 * a x c/4 x b").unwrap();
        let names: Vec<(&str, usize)> = shape
            .dims()
            .iter()
            .map(|r| (r.name.as_str(), r.offset))
            .collect();
        assert_eq!(names, [("a", 0), ("b", 2), ("a", 10), ("c", 14), ("b", 20)]);
        assert!(Shape::parse("4 x 2").unwrap().dims().is_empty());
    }

    #[test]
    fn display_is_canonical_and_round_trips() {
        let cases = [
            (
                "lin_v_heads x lin_k_dim x lin_v_dim",
                "lin_v_heads x lin_k_dim x lin_v_dim",
            ),
            (
                "conv_window x lin_k_heads*lin_k_dim*2+lin_v_heads*lin_v_dim",
                "conv_window x lin_k_heads * lin_k_dim * 2 + lin_v_heads * lin_v_dim",
            ),
            ("hidden/128 x 4", "hidden/128 x 4"),
            ("  a / b*007+c\tx d ", "a/b * 7 + c x d"),
        ];
        for (text, canonical) in cases {
            let shape = Shape::parse(text).unwrap();
            assert_eq!(shape.to_string(), canonical, "{text}");
            let again = Shape::parse(canonical).unwrap();
            assert_eq!(without_offsets(&again), without_offsets(&shape), "{text}");
            assert_eq!(again.to_string(), canonical, "{text}");
        }
    }

    #[test]
    fn evaluates() {
        let heads = [("lin_v_heads", 48), ("lin_k_dim", 128), ("lin_v_dim", 128)];
        assert_eq!(
            eval("lin_v_heads x lin_k_dim x lin_v_dim", &heads),
            Ok(786_432)
        );
        let conv = [
            ("conv_window", 3),
            ("lin_k_heads", 16),
            ("lin_k_dim", 128),
            ("lin_v_heads", 48),
            ("lin_v_dim", 128),
        ];
        assert_eq!(
            eval(
                "conv_window x lin_k_heads*lin_k_dim*2+lin_v_heads*lin_v_dim",
                &conv
            ),
            Ok(30_720)
        );
        assert_eq!(eval("hidden/128", &[("hidden", 5120)]), Ok(40));
        assert_eq!(eval("hidden/128", &[("hidden", 5121)]), Ok(41));
        assert_eq!(eval("hidden/128 x 4", &[("hidden", 5121)]), Ok(164));
        assert_eq!(eval("a/b", &[("a", 10), ("b", 3)]), Ok(4));
        assert_eq!(eval("a/b", &[("a", 0), ("b", 3)]), Ok(0));
        assert_eq!(eval("2 + 3 * 4 x 5", &[]), Ok(70));
    }

    #[test]
    fn subtracts_left_to_right() {
        assert_eq!(eval("conv_kernel - 1", &[("conv_kernel", 4)]), Ok(3));
        assert_eq!(eval("a*b - c", &[("a", 6), ("b", 7), ("c", 2)]), Ok(40));
        assert_eq!(
            eval("a - b + c x 2", &[("a", 5), ("b", 5), ("c", 1)]),
            Ok(2)
        );
        assert_eq!(eval("a - a", &[("a", 9)]), Ok(0));
        // A running sum below zero is an error, even when a later term would lift it again.
        assert_eq!(
            eval("a - b + c", &[("a", 1), ("b", 2), ("c", 5)]),
            Err(EvalError::Negative)
        );
        assert_eq!(eval("k - 1", &[("k", 0)]), Err(EvalError::Negative));
        let shape = Shape::parse("a*b-c+d - 1").expect("parses");
        assert_eq!(shape.to_string(), "a * b - c + d - 1");
        assert!(shape.subtracts());
        assert!(!Shape::parse("a + b").expect("parses").subtracts());
        assert_eq!(
            shape.axes[0]
                .terms
                .iter()
                .map(|t| t.subtract)
                .collect::<Vec<_>>(),
            [false, true, false, true]
        );
    }

    #[test]
    fn division_by_a_zero_dim() {
        assert_eq!(
            eval("a/b", &[("a", 10), ("b", 0)]),
            Err(EvalError::DivisionByZero(dim("b", 2)))
        );
        assert_eq!(
            EvalError::DivisionByZero(dim("b", 2)).to_string(),
            "division by zero: dim `b` is 0"
        );
        // A hand-built zero literal divisor is refused, not a panic.
        let shape = Shape {
            text: String::new(),
            axes: vec![axis(vec![product(vec![Factor::CeilDiv {
                dim: dim("a", 5),
                by: Divisor::Lit(0),
            }])])],
        };
        let e = shape.eval(table(&[("a", 1)])).unwrap_err();
        assert_eq!(e, EvalError::DivisionByZero(dim("0", 5)));
        assert_eq!(
            e.to_string(),
            "division by zero: the divisor is the literal `0`"
        );
    }

    #[test]
    fn overflow() {
        let a = 1 << 22;
        assert_eq!(eval("a x a x a", &[("a", a)]), Err(EvalError::Overflow));
        assert_eq!(eval("a x a", &[("a", a)]), Ok(1 << 44));
        assert_eq!(eval("a + a", &[("a", u64::MAX)]), Err(EvalError::Overflow));
        assert_eq!(
            eval("a + z * a", &[("a", u64::MAX), ("z", 0)]),
            Ok(u64::MAX)
        );
        assert_eq!(eval("a * a * a", &[("a", a)]), Err(EvalError::Overflow));
        assert_eq!(EvalError::Overflow.to_string(), "overflows u64");
        // A left-to-right checked fold: an intermediate that overflows is an error even when
        // a later zero would cancel it (the generated size functions fold the same way).
        assert_eq!(
            eval("a x a x a x z", &[("a", a), ("z", 0)]),
            Err(EvalError::Overflow)
        );
        assert_eq!(eval("z x a x a x a", &[("a", a), ("z", 0)]), Ok(0));
        assert_eq!(
            eval("a * 1 + a * z", &[("a", u64::MAX), ("z", 0)]),
            Ok(u64::MAX)
        );
    }

    #[test]
    fn unknown_dim() {
        let e = eval("a x b/c", &[("a", 1), ("b", 2)]).unwrap_err();
        assert_eq!(e, EvalError::UnknownDim(dim("c", 6)));
        assert_eq!(e.to_string(), "unknown dim `c`");
        // The first fault in text order wins.
        let e = eval("a x a x a x q", &[("a", 1 << 22)]).unwrap_err();
        assert_eq!(e, EvalError::Overflow);
        let e = eval("q x a x a x a", &[("a", 1 << 22)]).unwrap_err();
        assert_eq!(e, EvalError::UnknownDim(dim("q", 0)));
    }

    #[test]
    fn hand_built_degenerate_shapes_do_not_panic() {
        let empty = Shape {
            text: String::new(),
            axes: vec![],
        };
        assert_eq!(empty.eval(|_| None), Ok(1));
        assert_eq!(empty.to_string(), "");
        let empty_axis = Shape {
            text: String::new(),
            axes: vec![axis(vec![])],
        };
        assert_eq!(empty_axis.eval(|_| None), Ok(0));
    }

    #[test]
    fn syntax_errors_locate_the_offending_token() {
        let cases: [(&str, usize, usize, &str); 22] = [
            ("", 0, 1, "empty shape"),
            ("   ", 0, 3, "empty shape"),
            ("a x", 2, 1, "`x` must be followed by an axis"),
            (
                "x a",
                0,
                1,
                "expected a dim name or an integer literal, found the axis separator `x`",
            ),
            ("a +", 2, 1, "`+` must be followed by a term"),
            ("a * ", 2, 1, "`*` must be followed by a factor"),
            (
                "a ++ b",
                3,
                1,
                "expected a dim name or an integer literal, found `+`",
            ),
            (
                "a * * b",
                4,
                1,
                "expected a dim name or an integer literal, found `*`",
            ),
            (
                "(a)",
                0,
                1,
                "expected a dim name or an integer literal, found `(`",
            ),
            ("a - ", 2, 1, "`-` must be followed by a term"),
            (
                "- a",
                0,
                1,
                "expected a dim name or an integer literal, found `-`",
            ),
            ("0", 0, 1, "integer literal must be > 0"),
            ("a/0", 2, 1, "division by zero"),
            ("a/b/c", 3, 1, "a factor divides at most once"),
            (
                "2/a",
                0,
                1,
                "the left side of `/` must be a dim name, found the literal `2`",
            ),
            ("A", 0, 1, "dim name `A` must be lower snake case"),
            (
                "a x x b",
                4,
                1,
                "expected a dim name or an integer literal, found the axis separator `x`",
            ),
            (
                "99999999999999999999999",
                0,
                23,
                "integer literal does not fit in u64",
            ),
            (
                "x",
                0,
                1,
                "expected a dim name or an integer literal, found the axis separator `x`",
            ),
            (
                "a/",
                1,
                1,
                "`/` must be followed by a divisor: a literal > 0 or a dim name",
            ),
            (
                "a b",
                2,
                1,
                "expected `x`, `+`, `-`, `*` or the end of the shape, found `b`",
            ),
            (
                "a(b)",
                1,
                1,
                "unexpected character `(`: shapes have no parentheses",
            ),
        ];
        for (text, offset, len, message) in cases {
            assert_eq!(error(text), (offset, len, message.to_owned()), "{text:?}");
        }
    }

    #[test]
    fn syntax_error_help_lines() {
        let help = |text: &str| Shape::parse(text).unwrap_err().help;
        assert_eq!(
            help("x").as_deref(),
            Some("`x` separates axes and cannot be a dim name")
        );
        assert_eq!(help("a x b +").as_deref(), Some(GRAMMAR_HELP));
        assert_eq!(
            help("(a)").as_deref(),
            Some(format!("shapes have no parentheses; {GRAMMAR_HELP}").as_str())
        );
        assert_eq!(
            help("Hidden").as_deref(),
            Some("dim names match `[a-z][a-z0-9_]*`: did you mean `hidden`?")
        );
        assert_eq!(
            help("a X b").as_deref(),
            Some("the axis separator is a lowercase `x`, and `x` cannot be a dim name")
        );
        assert_eq!(
            help("99999999999999999999999").as_deref(),
            Some("the largest literal is 18446744073709551615")
        );
    }

    #[test]
    fn malformed_words_and_literals() {
        assert_eq!(
            error("1_000"),
            (
                0,
                5,
                "`_` is not allowed in integer literals, found `1_000`".to_owned()
            )
        );
        assert_eq!(
            error("a x 4x4"),
            (
                4,
                3,
                "invalid token `4x4`: expected a dim name or an integer literal".to_owned()
            )
        );
        assert_eq!(
            error("_a"),
            (
                0,
                2,
                "dim name `_a` must start with a lowercase letter".to_owned()
            )
        );
        assert_eq!(
            error("a * heaDs"),
            (4, 5, "dim name `heaDs` must be lower snake case".to_owned())
        );
        // The largest literal fits; one more does not.
        assert_eq!(eval("18446744073709551615", &[]), Ok(u64::MAX));
        assert_eq!(error("18446744073709551616").1, 20);
    }

    #[test]
    fn first_error_in_text_order_wins() {
        // The doubled operator comes before the bad character and the bad literal.
        assert_eq!(error("a + + ( 0").0, 4);
        assert_eq!(error("0 x (").0, 0);
        assert_eq!(error("a x ( x 0").0, 4);
    }

    #[test]
    fn non_ascii_offsets_are_bytes_on_char_boundaries() {
        let (offset, len, message) = error("é x a");
        assert_eq!((offset, len), (0, 2));
        assert_eq!(
            message,
            "expected a dim name or an integer literal, found `é`"
        );
        let (offset, len, _) = error("a x b é");
        assert_eq!((offset, len), (6, 2));
        let (offset, len, message) = error("a × b");
        assert_eq!((offset, len), (2, 2));
        assert_eq!(
            message,
            "unexpected character `×`: the axis separator is the letter `x`"
        );
        // Unicode whitespace is whitespace; offsets stay byte offsets.
        let shape = Shape::parse("\u{a0}a\u{3000}x b").unwrap();
        assert_eq!(shape.dims(), vec![&dim("a", 2), &dim("b", 8)]);
        // A control character is escaped in the message.
        assert_eq!(
            error("a\u{0}").2,
            "unexpected character `\\0`: expected `x`, `+`, `-`, `*` or the end of the shape"
        );
    }

    /// Checks the invariants of one parse: an error's span is within the text or just past its
    /// end; a shape's offsets spell its names and its canonical form parses back to it.
    fn check(text: &str) -> bool {
        match Shape::parse(text) {
            Err(e) => {
                assert!(e.len >= 1, "{text:?}: {e:?}");
                let end = e.offset.checked_add(e.len).unwrap();
                assert!(
                    end <= text.len() || (e.offset == text.len() && e.len == 1),
                    "{text:?}: {e:?}"
                );
                assert!(text.is_char_boundary(e.offset), "{text:?}: {e:?}");
                assert!(!e.message.is_empty());
                false
            }
            Ok(shape) => {
                assert!(!shape.axes.is_empty());
                for r in shape.dims() {
                    let end = r.offset.checked_add(r.name.len()).unwrap();
                    assert_eq!(text.get(r.offset..end), Some(r.name.as_str()), "{text:?}");
                }
                let canonical = shape.to_string();
                let again = Shape::parse(&canonical).unwrap();
                assert_eq!(without_offsets(&again), without_offsets(&shape), "{text:?}");
                assert_eq!(again.to_string(), canonical, "{text:?}");
                true
            }
        }
    }

    #[test]
    fn parse_never_panics_on_short_strings() {
        const ALPHABET: [char; 9] = ['a', ' ', 'x', '+', '*', '/', '0', '1', '('];
        const MAX_LEN: usize = 6;
        let mut text = String::with_capacity(MAX_LEN);
        let mut count = 0usize;
        let mut parsed = 0usize;
        for len in 0..=MAX_LEN {
            let mut digits = [0usize; MAX_LEN];
            loop {
                text.clear();
                text.extend(digits.iter().take(len).map(|&i| ALPHABET[i]));
                count += 1;
                if check(&text) {
                    parsed += 1;
                }
                // Next string of this length, as a base-9 counter.
                let mut position = 0;
                loop {
                    if position == len {
                        break;
                    }
                    digits[position] += 1;
                    if digits[position] < ALPHABET.len() {
                        break;
                    }
                    digits[position] = 0;
                    position += 1;
                }
                if position == len {
                    break;
                }
            }
        }
        // 9^0 + 9^1 + ... + 9^6 strings, some of which are shapes.
        assert_eq!(count, 597_871);
        assert!(parsed > 1000, "{parsed}");
    }
}
