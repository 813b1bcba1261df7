//! A string as a JSON string, which is also a TOML basic string: the one quoting both the JSON
//! Schemas (`crate::schema`) and the checkpoint table `import` writes (`crate::config`) use.
//!
//! Invariants: quotes, backslashes, every control character and DEL (which TOML refuses raw)
//! are escaped, everything else is written as is; the text is valid JSON (RFC 8259) and a
//! valid TOML basic string; nothing panics.

use std::fmt::Write as _;

/// `s` quoted (see the module doc).
#[cfg(feature = "config")]
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_quoted(&mut out, s);
    out
}

/// [`quote`] onto `out`.
pub(crate) fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_json_and_toml_refuse_raw() {
        let mut out = String::new();
        write_quoted(&mut out, "a\"b\\c\nd\u{1}\u{7f}é\t\r");
        assert_eq!(out, "\"a\\\"b\\\\c\\nd\\u0001\\u007fé\\t\\r\"");
    }
}
