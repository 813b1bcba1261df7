//! The tests of the diagnostics: line tables, rendering like rustc, escaping, "did you mean".

use super::*;

const KINDS: &[&str] = &["recurrent", "paged_kv", "prefix_snapshot"];
const DTYPES: &[&str] = &["f32", "f16", "bf16"];

#[test]
fn line_col_of_first_char() {
    let src = Source::new("a.toml", "ab\ncd");
    assert_eq!(src.line_col(0), (1, 1));
    assert_eq!(src.line_col(1), (1, 2));
    assert_eq!(src.line_col(3), (2, 1));
    assert_eq!(src.line_col(4), (2, 2));
}

#[test]
fn line_col_counts_chars_on_multibyte_line() {
    // "é" and "ü" are two bytes each; "x" starts at byte 1 + 5 = 6 of line 2.
    let src = Source::new("a.toml", "k\néüx = 1");
    let x = src.text.find('x').unwrap();
    assert_eq!(x, 6);
    assert_eq!(src.line_col(x), (2, 3));
}

#[test]
fn line_col_past_end_is_clamped() {
    let src = Source::new("a.toml", "ab\ncd");
    assert_eq!(src.line_col(1000), (2, 3));
    assert_eq!(src.line_col(usize::MAX), (2, 3));
}

#[test]
fn line_col_off_boundary_snaps_back() {
    // Byte 2 is inside "é" (bytes 1..3): it snaps back to byte 1, column 2.
    let src = Source::new("a.toml", "aéb");
    assert_eq!(src.line_col(2), (1, 2));
    assert_eq!(src.line_col(3), (1, 3));
}

#[test]
fn line_table_agrees_with_a_scan_of_the_text() {
    let text = "a\té = \"ü€𝄞\"\r\n\r\n\tx\n𝄞\n";
    let src = Source::new("t.toml", text);
    for byte in 0..text.len() + 3 {
        let at = floor_boundary(text, byte);
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        // A byte of the terminator (`\r` or `\n` of `\r\n`) is one past the line.
        let line_text = text[start..].split('\n').next().unwrap_or("");
        let line_chars = line_text
            .strip_suffix('\r')
            .unwrap_or(line_text)
            .chars()
            .count();
        let column = before[start..].chars().count().min(line_chars) + 1;
        assert_eq!(src.line_col(byte), (line, column), "byte {byte}");
    }
}

#[test]
fn a_crlf_end_of_line_caret_sits_one_past_the_line() {
    let src = Source::new("c.toml", "ab\r\ncd\r\n");
    for byte in [2, 3] {
        let d = Diagnostic::error("m").at(&src, byte..byte).label("here");
        assert_eq!(
            d.render(),
            "error: m\n --> c.toml:1:3\n  |\n1 | ab\n  |   ^ here"
        );
    }
}

#[test]
fn a_lone_cr_ending_the_text_is_part_of_its_line() {
    // Found by the fuzzer: `"\r` once showed the line as `"`, one char short.
    let src = Source::new("c.toml", "\"\r");
    let loc = Diagnostic::error("m").at(&src, 1..2).location.unwrap();
    assert_eq!((loc.line_text.as_str(), loc.column), ("\"\r", 2));
    let shown = Diagnostic::error("m").at(&src, 1..2).render();
    assert!(shown.contains("1 | \"\u{240d}\n  |  ^"), "{shown}");
    // `"\r\n`: the line is `"`, and a caret at the `\r` or the `\n` is one past it.
    let src = Source::new("c.toml", "\"\r\n");
    for byte in [1, 2] {
        let loc = Diagnostic::error("m")
            .at(&src, byte..byte)
            .location
            .unwrap();
        assert_eq!((loc.line_text.as_str(), loc.column), ("\"", 2));
    }
}

#[test]
fn a_long_line_is_shown_as_an_excerpt_around_the_caret() {
    // 1,000 `a`s, then `é` (2 bytes) at char 1,000, then 1,000 `b`s.
    let line = format!("{}é{}", "a".repeat(1000), "b".repeat(1000));
    let src = Source::new("l.toml", format!("x\n{line}\n"));
    let at = 2 + 1000;
    let d = Diagnostic::error("m").at(&src, at..at + 2).label("here");
    let loc = d.location.clone().unwrap();
    assert_eq!((loc.line, loc.column, loc.width), (2, 1001, 1));
    // 40 chars before the caret, 120 in all.
    assert_eq!(loc.line_text_from, 1001 - 40);
    assert_eq!(
        loc.line_text,
        format!("{}é{}", "a".repeat(40), "b".repeat(79))
    );
    assert!(loc.line_continues);
    let rendered = d.render();
    let shown = rendered.lines().nth(3).unwrap();
    let carets = rendered.lines().nth(4).unwrap();
    assert_eq!(
        shown,
        format!("2 | ...{}é{}...", "a".repeat(40), "b".repeat(79))
    );
    assert_eq!(carets, format!("  | {}^ here", " ".repeat(3 + 40)));
    // At the line's start: no leading ellipsis.
    let loc = Diagnostic::error("m").at(&src, 2..3).location.unwrap();
    assert_eq!((loc.line_text_from, loc.line_text.len()), (1, 120));
}

#[test]
fn columns_are_chars_on_long_lines_too() {
    let text = format!("{}\n{}", "é€𝄞a".repeat(100), "ü".repeat(300));
    let src = Source::new("u.toml", text.clone());
    for (byte, _) in text.char_indices() {
        let before = &text[..byte];
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        assert_eq!(src.line_col(byte).1, before[start..].chars().count() + 1);
    }
}

#[test]
fn line_col_of_empty_text() {
    let src = Source::new("a.toml", "");
    assert_eq!(src.line_col(0), (1, 1));
    assert_eq!(src.line_col(5), (1, 1));
}

#[test]
fn span_past_end_is_clamped() {
    let src = Source::new("a.toml", "ab\ncd");
    let d = Diagnostic::error("x").at(&src, 100..200);
    let loc = d.location.unwrap();
    assert_eq!((loc.line, loc.column, loc.width), (2, 3, 1));
    assert_eq!(loc.line_text, "cd");
}

#[test]
fn span_off_boundary_is_snapped() {
    // Span 2..4 starts inside "é" (1..3) and ends inside "ü" (3..5): it covers both.
    let src = Source::new("a.toml", "aéüb");
    let loc = Diagnostic::error("x").at(&src, 2..4).location.unwrap();
    assert_eq!((loc.column, loc.width), (2, 2));
    // A reversed span points at its start with one caret.
    let reversed = Range { start: 5, end: 1 };
    let loc = Diagnostic::error("x").at(&src, reversed).location.unwrap();
    assert_eq!((loc.column, loc.width), (4, 1));
}

#[test]
fn width_is_clamped_to_line_end() {
    let src = Source::new("a.toml", "key = [\r\n  1,\r\n]\r\n");
    let loc = Diagnostic::error("x")
        .at(&src, 6..src.text.len())
        .location
        .unwrap();
    assert_eq!((loc.line, loc.column, loc.width), (1, 7, 1));
    assert_eq!(loc.line_text, "key = [");
    // From "=" to the end of the text: three carets, the rest of line 1 only.
    let loc = Diagnostic::error("x")
        .at(&src, 4..src.text.len())
        .location
        .unwrap();
    assert_eq!((loc.column, loc.width), (5, 3));
    // A span on the "\r" itself points one past the line's text with one caret.
    let loc = Diagnostic::error("x").at(&src, 7..9).location.unwrap();
    assert_eq!((loc.column, loc.width), (8, 1));
}

#[test]
fn width_counts_chars_on_multibyte_line() {
    let src = Source::new("a.toml", "name = \"héllo\"\n");
    let loc = Diagnostic::error("x").at(&src, 7..15).location.unwrap();
    assert_eq!((loc.column, loc.width), (8, 7));
}

#[test]
fn span_in_empty_text() {
    let src = Source::new("empty.toml", "");
    let d = Diagnostic::error("empty").at(&src, 0..10).label("here");
    let loc = d.location.clone().unwrap();
    assert_eq!((loc.line, loc.column, loc.width), (1, 1, 1));
    assert_eq!(
        d.render(),
        "error: empty\n --> empty.toml:1:1\n  |\n1 |\n  | ^ here"
    );
}

fn example_source() -> Source {
    let mut text = "# comment\n".repeat(11);
    text.push_str("kind = \"paged_kvv\"\n");
    Source::new("circuits/qwen3_5.toml", text)
}

#[test]
fn full_render_matches_rustc_layout() {
    let src = example_source();
    let start = src.text.find("\"paged_kvv\"").unwrap();
    let d = Diagnostic::error("unknown state kind `paged_kvv`")
        .at(&src, start..start + "\"paged_kvv\"".len())
        .label("not a state kind")
        .expected_one_of("state kinds", "paged_kvv", KINDS);
    let expected = "\
error: unknown state kind `paged_kvv`
  --> circuits/qwen3_5.toml:12:8
   |
12 | kind = \"paged_kvv\"
   |        ^^^^^^^^^^^ not a state kind
   |
   = help: valid state kinds: `recurrent`, `paged_kv`, `prefix_snapshot`
   = help: did you mean `paged_kv`?";
    assert_eq!(d.render(), expected);
    assert_eq!(d.to_string(), expected);
}

#[test]
fn render_without_label_or_notes() {
    let src = Source::new("c.toml", "schema = 2\n");
    let d = Diagnostic::error("unsupported schema").at(&src, 9..10);
    assert_eq!(
        d.render(),
        "error: unsupported schema\n --> c.toml:1:10\n  |\n1 | schema = 2\n  |          ^"
    );
}

#[test]
fn render_notes_before_help() {
    let src = Source::new("c.toml", "a = 1\n");
    let d = Diagnostic::error("m")
        .at(&src, 0..1)
        .help("h")
        .note("n\nsecond");
    assert_eq!(
        d.render(),
        "error: m\n --> c.toml:1:1\n  |\n1 | a = 1\n  | ^\n  |\n  \
         = note: n\n          second\n  = help: h"
    );
}

#[test]
fn tabs_render_as_four_spaces() {
    let src = Source::new("t.toml", "\tk\t= 1\n");
    let d = Diagnostic::error("m").at(&src, 1..3).label("l");
    let loc = d.location.clone().unwrap();
    assert_eq!((loc.column, loc.width), (2, 2));
    assert_eq!(
        d.render(),
        "error: m\n --> t.toml:1:2\n  |\n1 |     k    = 1\n  |     ^^^^^ l"
    );
}

#[test]
fn control_characters_render_escaped_wherever_they_come_from() {
    // A NUL and an ESC sequence in the file name, the source line, the message, the label,
    // a note and a help reach no terminal raw; the carets line up with the escapes, and a
    // note's own line break is still the renderer's.
    let src = Source::new("a\u{1b}]0;x\u{7}.toml", "k\u{1b}[2J = \"\0\"\n");
    let d = Diagnostic::error("bad \u{0} key \u{1b}[31m\nerror: forged")
        .at(&src, 8..11)
        .label("l\u{1b}")
        .note("first \u{202e}\nsecond \u{9b}")
        .help("h\r");
    let shown = d.render();
    assert_eq!(
        shown,
        "error: bad \\u{0} key \\u{1b}[31m\\u{a}error: forged\n \
         --> a\\u{1b}]0;x\\u{7}.toml:1:9\n  |\n\
         1 | k\\u{1b}[2J = \"\\u{0}\"\n  |              ^^^^^^^ l\\u{1b}\n  |\n  \
         = note: first \\u{202e}\n          second \\u{9b}\n  = help: h\\u{d}"
    );
    assert!(
        !shown.contains(|c: char| c.is_control() && c != '\n'),
        "{shown:?}"
    );
    // The escape is drawn where the text is; the diagnostic keeps the text as given.
    assert_eq!(d.location.unwrap().line_text, "k\u{1b}[2J = \"\0\"");
}

#[test]
fn render_without_location() {
    let d = Diagnostic::error("no circuit given")
        .help("pass a path")
        .note("n");
    assert_eq!(
        d.render(),
        "error: no circuit given\n  = note: n\n  = help: pass a path"
    );
    assert_eq!(Diagnostic::error("bare").render(), "error: bare");
}

#[test]
fn render_in_file() {
    let d = Diagnostic::error("cannot read `x.toml`: not found").in_file("circuits/x.toml");
    assert!(d.location.is_none());
    assert_eq!(
        d.render(),
        "error: cannot read `x.toml`: not found\n --> circuits/x.toml"
    );
    let d = d.help("check the path");
    assert_eq!(
        d.render(),
        "error: cannot read `x.toml`: not found\n --> circuits/x.toml\n  |\n  \
         = help: check the path"
    );
}

#[test]
fn in_file_replaces_location_and_at_replaces_file() {
    let src = Source::new("a.toml", "a");
    let d = Diagnostic::error("m").at(&src, 0..1).in_file("b.toml");
    assert_eq!(d.render(), "error: m\n --> b.toml");
    let d = d.at(&src, 0..1);
    assert_eq!(d.render(), "error: m\n --> a.toml:1:1\n  |\n1 | a\n  | ^");
}

#[test]
fn every_span_of_a_tricky_text_renders() {
    let src = Source::new("t.toml", "a\té = \"ü€𝄞\"\r\n\r\n\tx\n𝄞");
    let len = src.text.len();
    for start in 0..len + 3 {
        for end in 0..len + 3 {
            let d = Diagnostic::error("m").at(&src, start..end).label("l");
            let loc = d.location.clone().unwrap();
            assert!(loc.width >= 1);
            assert!(!loc.line_text.contains(['\r', '\n']));
            assert_eq!(
                (loc.line, loc.column),
                src.line_col(start),
                "span {start}..{end}"
            );
            assert!(d.render().ends_with("^ l"));
        }
    }
}

#[test]
fn hand_built_location_never_panics() {
    let mut d = Diagnostic::error("m");
    d.location = Some(Location {
        path: "p".into(),
        line: 0,
        column: 9,
        line_text: "ab".into(),
        line_text_from: 1,
        line_continues: false,
        width: 0,
    });
    assert_eq!(d.render(), "error: m\n --> p:0:9\n  |\n0 | ab\n  |   ^");
    d.location = Some(Location {
        path: "p".into(),
        line: usize::MAX,
        column: usize::MAX,
        line_text: "a\tb".into(),
        line_text_from: 1,
        line_continues: false,
        width: usize::MAX,
    });
    let max = usize::MAX;
    let pad = " ".repeat(max.to_string().len());
    assert_eq!(
        d.render(),
        format!("error: m\n{pad}--> p:{max}:{max}\n{pad} |\n{max} | a    b\n{pad} |       ^")
    );
    let loc = d.location.as_mut().unwrap();
    loc.column = 2;
    assert_eq!(caret_extent(loc), (1, 5));
}

#[test]
fn diagnostics_render_one_error() {
    let diags = Diagnostics::from(Diagnostic::error("first"));
    assert_eq!(
        diags.render(),
        "error: first\n\nerror: aborting due to 1 previous error"
    );
    assert_eq!(diags.to_string(), diags.render());
}

#[test]
fn diagnostics_render_two_errors() {
    let mut diags = Diagnostics::new();
    diags.push(Diagnostic::error("first"));
    diags.extend([Diagnostic::error("second").help("h")]);
    assert_eq!(diags.len(), 2);
    assert_eq!(
        diags.render(),
        "error: first\n\nerror: second\n  = help: h\n\nerror: aborting due to 2 previous errors"
    );
}

#[test]
fn diagnostics_into_result_and_iteration() {
    let empty = Diagnostics::new();
    assert!(empty.is_empty());
    assert_eq!(empty.render(), "");
    assert_eq!(empty.into_result(7), Ok(7));
    let diags: Diagnostics = [Diagnostic::error("a"), Diagnostic::error("b")]
        .into_iter()
        .collect();
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["a", "b"]);
    assert_eq!((&diags).into_iter().count(), 2);
    let err = diags.clone().into_result(()).unwrap_err();
    assert_eq!(err, diags);
    assert_eq!(diags.into_iter().count(), 2);
}

#[test]
fn did_you_mean_near_spellings() {
    assert_eq!(did_you_mean("paged_kvv", KINDS), Some("paged_kv"));
    assert_eq!(did_you_mean("recurent", KINDS), Some("recurrent"));
    // 4 chars: budget 1; "bf61" -> "bf16" is one transposition under Damerau-Levenshtein.
    assert_eq!(did_you_mean("bf61", DTYPES), Some("bf16"));
    assert_eq!(did_you_mean("zzzz", DTYPES), None);
    assert_eq!(did_you_mean("zzzz", KINDS), None);
}

#[test]
fn did_you_mean_exact_and_case() {
    assert_eq!(did_you_mean("f32", DTYPES), None);
    assert_eq!(did_you_mean("F32", DTYPES), Some("f32"));
    // A case-only difference beats an earlier candidate at distance 1.
    assert_eq!(did_you_mean("F16", &["f15", "f16"]), Some("f16"));
    assert_eq!(did_you_mean("", DTYPES), None);
    assert_eq!(did_you_mean("f32", &[]), None);
}

#[test]
fn did_you_mean_ties_go_to_first() {
    assert_eq!(did_you_mean("f8", &["f16", "f32"]), None);
    assert_eq!(did_you_mean("f3", &["f1", "f2"]), Some("f1"));
    assert_eq!(did_you_mean("f3", &["f2", "f1"]), Some("f2"));
}

#[test]
fn did_you_mean_budget_scales_with_length() {
    // 9 chars: budget 3; two edits away is still near.
    assert_eq!(did_you_mean("paged_kxx", KINDS), Some("paged_kv"));
    // 3 chars: budget 1; two edits away is not.
    assert_eq!(did_you_mean("f99", DTYPES), None);
    // 6 chars: budget 2; "pagedx" is three edits from "paged_kv", so not near.
    assert_eq!(did_you_mean("pagedx", KINDS), None);
    assert_eq!(did_you_mean("pagedkv", KINDS), Some("paged_kv"));
}

#[test]
fn expected_one_of_adds_both_help_lines() {
    let d = Diagnostic::error("m").expected_one_of("state kinds", "recurent", KINDS);
    assert_eq!(
        d.help,
        [
            "valid state kinds: `recurrent`, `paged_kv`, `prefix_snapshot`",
            "did you mean `recurrent`?",
        ]
    );
}

#[test]
fn expected_one_of_without_near_spelling() {
    let d = Diagnostic::error("m").expected_one_of("dtypes", "zzzz", DTYPES);
    assert_eq!(d.help, ["valid dtypes: `f32`, `f16`, `bf16`"]);
    let d = Diagnostic::error("m").expected_one_of("dtypes", "x", &[]);
    assert_eq!(d.help, ["valid dtypes: none"]);
}
