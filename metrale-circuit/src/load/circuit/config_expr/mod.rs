//! A figure computed from a config (schema 4): the expressions `[config]` takes where it reads a
//! figure from a `config.json` ([`ConfigExpr`]), their grammar, and their exact evaluation.
//!
//! Owner: metrale-circuit (feature `load`); the loader parses them (`load::config`), the config
//! reader (`crate::config`, feature `config`) evaluates them against a config.
//!
//! ```text
//! expr    := sum
//! sum     := product (("+" | "-") product)*
//! product := unary (("*" | "/" | "%") unary)*
//! unary   := "-" unary | atom
//! atom    := NUMBER | NAME | ("min" | "max") "(" expr ("," expr)+ ")" | "(" expr ")"
//! NUMBER  := [0-9]+ ("." [0-9]+)?
//! NAME    := SEGMENT ("." SEGMENT)*      (a dotted config key path, or a declared dim where
//!                                        the caller allows one; a number segment indexes a
//!                                        list)
//! SEGMENT := [A-Za-z_][A-Za-z0-9_]* | [0-9]+      (the first one not a number)
//! ```
//!
//! Whitespace is insignificant between tokens. Every value is an exact rational ([`Exact`]): a
//! JSON float is the decimal it spells, `*`, `+` and `-` lose nothing, `/` is floor division
//! (the whole number at or below the exact quotient, Python's `//`) and `%` its remainder
//! (Python's `%`). Only the result must be a whole number, from 0 to `u64::MAX`; the reader
//! that evaluates it says so, naming each key read and its value.
//!
//! Invariants:
//! - Nothing here panics, and nothing recurses past [`MAX_NESTING`] levels or a tree of more
//!   than [`MAX_NODES`] nodes, whatever the text.
//! - A parsed expression's spans ([`Name::at`], a fault's) are byte ranges of
//!   [`ConfigExpr::text`].
//! - Evaluation is checked: an intermediate past `i128` (numerator or denominator) is
//!   [`ExprFault::Overflow`], a division or remainder by zero [`ExprFault::DivisionByZero`],
//!   never a wrapped or rounded value.

mod exact;

use std::fmt;
use std::ops::Range;

pub use exact::Exact;

/// How deeply parentheses, calls and unary minus may nest: far past any figure a config
/// needs, and a bound on the parser's recursion.
pub const MAX_NESTING: usize = 32;

/// How many numbers, names and operators an expression may hold: far past any figure a config
/// needs, and a bound on its tree's depth, so evaluating and dropping it never recurse deeply.
pub const MAX_NODES: usize = 256;

/// An expression over config keys (and, where the caller allows, declared dims), as written
/// and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigExpr {
    text: String,
    node: Node,
}

/// A name an expression reads, with where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The dotted path as written (`text_config.hidden_size`).
    pub path: String,
    /// Its byte range in [`ConfigExpr::text`].
    pub at: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Number(Exact),
    Name(Name),
    Neg(Box<Node>),
    Binary {
        op: Op,
        left: Box<Node>,
        right: Box<Node>,
        /// The operator's byte range, where a division by zero is reported.
        at: Range<usize>,
    },
    /// `min(..)` (`max: false`) or `max(..)`: at least two arguments.
    Extreme {
        max: bool,
        args: Vec<Node>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Rem,
}

/// A syntax error: the byte range of the offending token (at least one byte, or the position
/// just past the end), what is wrong and what would be valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprSyntaxError {
    /// The offending token's byte range in the text.
    pub at: Range<usize>,
    /// What is wrong, naming what would be valid.
    pub message: String,
}

impl fmt::Display for ExprSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.at.start, self.message)
    }
}

impl std::error::Error for ExprSyntaxError {}

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprFault<E> {
    /// The reader refused a name (absent, not a number, ...): its own error.
    Read(E),
    /// An intermediate value does not fit an exact `i128` fraction.
    Overflow,
    /// A division or remainder by zero, at the operator.
    DivisionByZero(Range<usize>),
}

impl ConfigExpr {
    /// Parses `text` (see the module docs for the grammar).
    ///
    /// # Errors
    /// The first offending token: an empty expression or operand, a dangling or doubled
    /// operator, an unclosed or unopened parenthesis, a character outside the grammar, a
    /// number with a bad fraction or too many digits, a malformed name, `min`/`max` with fewer
    /// than two arguments, nesting past [`MAX_NESTING`].
    pub fn parse(text: &str) -> Result<Self, ExprSyntaxError> {
        let mut parser = Parser {
            text,
            pos: 0,
            depth: 0,
            nodes: 0,
        };
        let node = parser.sum()?;
        match parser.peek() {
            None => {}
            Some(b')') => return Err(parser.error_here("this `)` closes nothing")),
            Some(_) => {
                return Err(parser.error_here("expected an operator (`+ - * / %`) or the end"));
            }
        }
        Ok(Self {
            text: text.to_owned(),
            node,
        })
    }

    /// The expression of one whole number, spelled in decimal.
    #[must_use]
    pub fn number(n: u64) -> Self {
        Self {
            text: n.to_string(),
            node: Node::Number(Exact::int(n.into())),
        }
    }

    /// The text as written.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The key path when the expression is one name alone (`text_config.hidden_size`).
    #[must_use]
    pub fn as_key(&self) -> Option<&str> {
        match &self.node {
            Node::Name(name) => Some(&name.path),
            _ => None,
        }
    }

    /// Every name read, in text order (a name read twice is listed twice).
    #[must_use]
    pub fn names(&self) -> Vec<&Name> {
        let mut names = Vec::new();
        let mut stack = vec![&self.node];
        while let Some(node) = stack.pop() {
            match node {
                Node::Number(_) => {}
                Node::Name(name) => names.push(name),
                Node::Neg(inner) => stack.push(inner),
                Node::Binary { left, right, .. } => {
                    stack.push(right);
                    stack.push(left);
                }
                Node::Extreme { args, .. } => stack.extend(args.iter().rev()),
            }
        }
        names
    }

    /// The value, exact, each name's value given by `read`.
    ///
    /// # Errors
    /// The first fault in evaluation order (left to right): `read`'s own error for a name,
    /// an intermediate that overflows, a division or remainder by zero.
    pub fn eval<E>(
        &self,
        read: &mut dyn FnMut(&Name) -> Result<Exact, E>,
    ) -> Result<Exact, ExprFault<E>> {
        eval(&self.node, read)
    }
}

impl fmt::Display for ConfigExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One node's value; the recursion is bounded by the parser's nesting bound.
fn eval<E>(
    node: &Node,
    read: &mut dyn FnMut(&Name) -> Result<Exact, E>,
) -> Result<Exact, ExprFault<E>> {
    match node {
        Node::Number(n) => Ok(*n),
        Node::Name(name) => read(name).map_err(ExprFault::Read),
        Node::Neg(inner) => eval(inner, read)?.checked_neg().ok_or(ExprFault::Overflow),
        Node::Binary {
            op,
            left,
            right,
            at,
        } => {
            let (a, b) = (eval(left, read)?, eval(right, read)?);
            let zero = b == Exact::int(0);
            match op {
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Mul => a.checked_mul(b),
                Op::FloorDiv | Op::Rem if zero => {
                    return Err(ExprFault::DivisionByZero(at.clone()));
                }
                Op::FloorDiv => a.checked_floor_div(b),
                Op::Rem => a.checked_rem(b),
            }
            .ok_or(ExprFault::Overflow)
        }
        Node::Extreme { max, args } => {
            let mut best: Option<Exact> = None;
            for arg in args {
                let v = eval(arg, read)?;
                best = Some(match best {
                    Some(b) if *max => b.max(v),
                    Some(b) => b.min(v),
                    None => v,
                });
            }
            best.ok_or(ExprFault::Overflow)
        }
    }
}

/// A recursive-descent parser over the text's bytes.
struct Parser<'t> {
    text: &'t str,
    pos: usize,
    depth: usize,
    nodes: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self
            .text
            .as_bytes()
            .get(self.pos)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.as_bytes().get(self.pos).copied()
    }

    /// An error on the character at the cursor (its whole UTF-8 length), or just past the end.
    fn error_here(&self, message: &str) -> ExprSyntaxError {
        let len = self.text[self.pos..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        ExprSyntaxError {
            at: self.pos..self.pos + len,
            message: message.to_owned(),
        }
    }

    /// Counts one more node of the tree.
    fn node(&mut self) -> Result<(), ExprSyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self.error_here(&format!(
                "more than {MAX_NODES} numbers, names and operators"
            )));
        }
        Ok(())
    }

    fn nest(&mut self) -> Result<(), ExprSyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error_here(&format!("nested more than {MAX_NESTING} levels deep")));
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<Node, ExprSyntaxError> {
        self.chain(&[(b'+', Op::Add), (b'-', Op::Sub)], Self::product)
    }

    fn product(&mut self) -> Result<Node, ExprSyntaxError> {
        self.chain(
            &[(b'*', Op::Mul), (b'/', Op::FloorDiv), (b'%', Op::Rem)],
            Self::unary,
        )
    }

    /// `operand (op operand)*` for the operators `ops` of one precedence, left-associative.
    fn chain(
        &mut self,
        ops: &[(u8, Op)],
        operand: fn(&mut Self) -> Result<Node, ExprSyntaxError>,
    ) -> Result<Node, ExprSyntaxError> {
        let mut node = operand(self)?;
        while let Some(op) = self
            .peek()
            .and_then(|c| ops.iter().find(|(b, _)| *b == c).map(|(_, op)| *op))
        {
            let at = self.pos..self.pos + 1;
            self.node()?;
            self.pos += 1;
            let right = operand(self)?;
            node = Node::Binary {
                op,
                left: Box::new(node),
                right: Box::new(right),
                at,
            };
        }
        Ok(node)
    }

    fn unary(&mut self) -> Result<Node, ExprSyntaxError> {
        if self.peek() == Some(b'-') {
            self.node()?;
            self.pos += 1;
            self.nest()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Neg(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node, ExprSyntaxError> {
        match self.peek() {
            None => Err(self.error_here(
                "expected a number, a config key, `min(..)`, `max(..)` or `(` at the end",
            )),
            Some(b'(') => {
                let open = self.pos;
                self.pos += 1;
                self.nest()?;
                let inner = self.sum()?;
                self.depth -= 1;
                if self.peek() != Some(b')') {
                    return Err(ExprSyntaxError {
                        at: open..open + 1,
                        message: "this `(` is not closed".to_owned(),
                    });
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(b'0'..=b'9') => self.number(),
            Some(c) if c == b'_' || c.is_ascii_alphabetic() => self.name_or_call(),
            Some(b')') => Err(self.error_here("expected an operand before this `)`")),
            Some(_) => {
                Err(self.error_here("expected a number, a config key, `min(..)`, `max(..)` or `(`"))
            }
        }
    }

    fn number(&mut self) -> Result<Node, ExprSyntaxError> {
        self.node()?;
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start;
        while bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
        {
            end += 1;
        }
        if bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            return Err(ExprSyntaxError {
                at: start..end + 1,
                message: "a number runs into a name: separate them with an operator".to_owned(),
            });
        }
        let spelled = &self.text[start..end];
        let value = Exact::parse_decimal(spelled).ok_or_else(|| ExprSyntaxError {
            at: start..end,
            message: format!(
                "`{spelled}` is not a number: write digits, with one `.` between digits for a fraction (at most 38 digits)"
            ),
        })?;
        self.pos = end;
        Ok(Node::Number(value))
    }

    fn name_or_call(&mut self) -> Result<Node, ExprSyntaxError> {
        self.node()?;
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start;
        while bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
        {
            end += 1;
        }
        let path = &self.text[start..end];
        self.pos = end;
        if matches!(path, "min" | "max") && self.peek() == Some(b'(') {
            return self.call(path == "max", start);
        }
        if path.split('.').any(str::is_empty) {
            return Err(ExprSyntaxError {
                at: start..end,
                message: format!(
                    "`{path}` is not a config key path: it has an empty segment (write `a.b`)"
                ),
            });
        }
        Ok(Node::Name(Name {
            path: path.to_owned(),
            at: start..end,
        }))
    }

    fn call(&mut self, max: bool, start: usize) -> Result<Node, ExprSyntaxError> {
        self.pos += 1; // `(`
        self.nest()?;
        let mut args = vec![self.sum()?];
        while self.peek() == Some(b',') {
            self.pos += 1;
            args.push(self.sum()?);
        }
        self.depth -= 1;
        if self.peek() != Some(b')') {
            return Err(self.error_here("expected `,` or `)` in this call"));
        }
        self.pos += 1;
        if args.len() < 2 {
            return Err(ExprSyntaxError {
                at: start..self.pos,
                message: format!(
                    "`{}` takes two or more arguments",
                    if max { "max" } else { "min" }
                ),
            });
        }
        Ok(Node::Extreme { max, args })
    }
}

#[cfg(test)]
mod tests {
    use super::{ConfigExpr, Exact, ExprFault};

    /// `text` evaluated with `names` (path, decimal) as the config.
    fn value(text: &str, names: &[(&str, &str)]) -> Result<Exact, ExprFault<String>> {
        let expr = ConfigExpr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        expr.eval(&mut |name| {
            names
                .iter()
                .find(|(p, _)| *p == name.path)
                .and_then(|(_, v)| Exact::parse_decimal(v))
                .ok_or_else(|| name.path.clone())
        })
    }

    fn whole(text: &str, names: &[(&str, &str)]) -> Option<u64> {
        value(text, names).ok()?.to_u64()
    }

    #[test]
    fn a_fractional_factor_gives_a_whole_dim() {
        let config = [("embedding_dim", "2048"), ("qk_dim_factor", "0.5")];
        assert_eq!(whole("embedding_dim * qk_dim_factor", &config), Some(1024));
        let odd = [("embedding_dim", "2047"), ("qk_dim_factor", "0.5")];
        assert_eq!(
            value("embedding_dim * qk_dim_factor", &odd).map(|v| v.to_string()),
            Ok("1023.5".to_owned())
        );
    }

    #[test]
    fn precedence_parentheses_floor_division_and_calls() {
        let n = [("num_hidden_layers", "61"), ("step", "4")];
        assert_eq!(whole("num_hidden_layers / 2 + 1", &n), Some(31));
        assert_eq!(whole("step / 2", &n), Some(2));
        assert_eq!(whole("num_hidden_layers % step", &n), Some(1));
        assert_eq!(whole("2 + 3 * 4", &[]), Some(14));
        assert_eq!(whole("(2 + 3) * 4", &[]), Some(20));
        assert_eq!(whole("10 - 4 - 3", &[]), Some(3));
        assert_eq!(whole("-2 + 5", &[]), Some(3));
        assert_eq!(whole("min(step, 3) + max(1, 2, 9)", &n), Some(12));
        assert_eq!(whole("a.b.0 * 2", &[("a.b.0", "21")]), Some(42));
        assert_eq!(whole("7 / 0.5", &[]), Some(14));
    }

    #[test]
    fn faults_are_named() {
        assert_eq!(value("1 / 0", &[]), Err(ExprFault::DivisionByZero(2..3)));
        assert_eq!(
            value("1 % (2 - 2)", &[]),
            Err(ExprFault::DivisionByZero(2..3))
        );
        assert_eq!(
            value("missing + 1", &[]),
            Err(ExprFault::Read("missing".into()))
        );
        let big = "170141183460469231731687303715884105727";
        assert_eq!(value(&format!("{big} * 2"), &[]), Err(ExprFault::Overflow));
    }

    #[test]
    fn names_are_listed_in_text_order() {
        let expr = ConfigExpr::parse("max(a, b.c) * (d - a)").unwrap();
        let names: Vec<_> = expr
            .names()
            .iter()
            .map(|n| (n.path.as_str(), n.at.clone()))
            .collect();
        assert_eq!(
            names,
            [("a", 4..5), ("b.c", 7..10), ("d", 15..16), ("a", 19..20)]
        );
        assert_eq!(
            ConfigExpr::parse(" hidden ").unwrap().as_key(),
            Some("hidden")
        );
        assert_eq!(ConfigExpr::parse("hidden * 2").unwrap().as_key(), None);
    }

    #[test]
    fn no_text_of_the_grammar_s_characters_panics() {
        // Every string of up to 6 of these characters, and long runs of nesting: each parses
        // or is refused at a span within the text, and evaluates or faults, never panics.
        const CHARS: &[u8] = b"(),.-+*/%05ab_ x";
        let values = |name: &super::Name| -> Result<Exact, ()> {
            match name.path.len() % 3 {
                0 => Ok(Exact::int(0)),
                1 => Exact::parse_decimal("0.5").ok_or(()),
                _ => Ok(Exact::int(i128::MAX)),
            }
        };
        let mut text = Vec::new();
        let mut count = 0u64;
        for len in 0..=5u32 {
            for mut n in 0..(CHARS.len() as u64).pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(CHARS[usize::try_from(n % CHARS.len() as u64).unwrap()]);
                    n /= CHARS.len() as u64;
                }
                let text = std::str::from_utf8(&text).unwrap();
                match ConfigExpr::parse(text) {
                    Ok(expr) => {
                        let _ = expr.eval(&mut |name| values(name));
                        for name in expr.names() {
                            assert!(name.at.end <= text.len(), "{text:?}");
                        }
                    }
                    Err(error) => assert!(error.at.start <= text.len(), "{text:?}"),
                }
                count += 1;
            }
        }
        assert!(count > 100_000, "{count} texts");
        let deep = "(".repeat(10_000) + "1";
        assert!(ConfigExpr::parse(&deep).is_err());
        // A long chain is refused at its node past the bound, not evaluated 10,000 deep.
        let long = "1+".repeat(10_000) + "1";
        assert_eq!(ConfigExpr::parse(&long).map_err(|e| e.at), Err(256..257));
        let most = "1+".repeat(127) + "1";
        assert_eq!(
            ConfigExpr::parse(&most)
                .unwrap()
                .eval(&mut |_| Err::<Exact, ()>(())),
            Ok(Exact::int(128))
        );
    }

    #[test]
    fn syntax_errors_point_at_the_token() {
        let at = |text: &str| ConfigExpr::parse(text).map(|_| ()).map_err(|e| e.at);
        assert_eq!(at(""), Err(0..1));
        assert_eq!(at("a +"), Err(3..4));
        assert_eq!(at("a + * b"), Err(4..5));
        assert_eq!(at("(a + b"), Err(0..1));
        assert_eq!(at("a + b)"), Err(5..6));
        assert_eq!(at("a b"), Err(2..3));
        assert_eq!(at("2x"), Err(0..2));
        assert_eq!(at("1.2.3"), Err(0..5));
        assert_eq!(at("a..b"), Err(0..4));
        assert_eq!(at("min(a)"), Err(0..6));
        assert_eq!(at("a # b"), Err(2..3));
        assert_eq!(at("a + é"), Err(4..6));
        let deep = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert!(at(&deep).is_err());
        let minus = format!("{}1", "-".repeat(40));
        assert!(at(&minus).is_err());
    }
}
