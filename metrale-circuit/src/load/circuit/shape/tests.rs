//! The shape's tests, from text to tree, spelling and value.

use super::grammar::GRAMMAR_HELP;
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
