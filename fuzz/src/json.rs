//! A small JSON tree for the structure-aware mutation of config.json files ([`crate::mutate`]):
//! objects keep their keys in order and may hold a key twice (a duplicate key is one of the
//! edits), numbers keep their text (`1e400`, `-0`, `18446744073709551616` and `4096.0` stay as
//! written). [`parse`] reads standard JSON; [`Json::write`] prints it back, pretty like the
//! configs of `circuits/configs/` or on one line.
//!
//! Invariants: `parse(&v.write(pretty))` gives `v` back for every tree [`parse`] made; nothing
//! here panics on any text; nesting is read to [`MAX_DEPTH`] only (deeper text is not a tree).

/// How deep [`parse`] reads: a mutated file is re-parsed on every edit, and recursion must
/// stay well inside a thread's stack.
pub const MAX_DEPTH: usize = 512;

/// A JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: its members in order, a key possibly twice.
    Object(Vec<(String, Json)>),
}

/// The tree of `text`, or `None` when it is not JSON (or nests past [`MAX_DEPTH`]).
#[must_use]
pub fn parse(text: &str) -> Option<Json> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = reader.value(0)?;
    reader.space();
    (reader.at == reader.bytes.len()).then_some(value)
}

/// A cursor over the text.
struct Reader<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Reader<'_> {
    fn space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| b" \t\r\n".contains(b))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let here = self.bytes.get(self.at) == Some(&byte);
        if here {
            self.at += 1;
        }
        here
    }

    fn word(&mut self, word: &str) -> bool {
        let here = self.bytes[self.at..].starts_with(word.as_bytes());
        if here {
            self.at += word.len();
        }
        here
    }

    fn value(&mut self, depth: usize) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        match *self.bytes.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Some(Json::Object(members));
                }
                loop {
                    self.space();
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    members.push((key, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Some(Json::Object(members));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Some(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Some(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string().map(Json::String),
            b't' if self.word("true") => Some(Json::Bool(true)),
            b'f' if self.word("false") => Some(Json::Bool(false)),
            b'n' if self.word("null") => Some(Json::Null),
            b'-' | b'0'..=b'9' => {
                let start = self.at;
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                {
                    self.at += 1;
                }
                std::str::from_utf8(&self.bytes[start..self.at])
                    .ok()
                    .map(|n| Json::Number(n.to_owned()))
            }
            _ => None,
        }
    }

    /// A string at the cursor, unescaped.
    fn string(&mut self) -> Option<String> {
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            match b {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.bytes.get(self.at)?;
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex =
                                std::str::from_utf8(self.bytes.get(self.at..self.at + 4)?).ok()?;
                            self.at += 4;
                            // A lone surrogate half is not kept as a char: U+FFFD stands in.
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?).unwrap_or('\u{fffd}')
                        }
                        _ => return None,
                    };
                    let mut buffer = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                }
                _ => out.push(b),
            }
        }
    }
}

impl Json {
    /// The text of this value: indented by two spaces a level when `pretty`, else on one line.
    #[must_use]
    pub fn write(&self, pretty: bool) -> String {
        let mut out = String::new();
        self.write_into(&mut out, pretty, 0);
        if pretty {
            out.push('\n');
        }
        out
    }

    fn write_into(&self, out: &mut String, pretty: bool, level: usize) {
        let newline = |out: &mut String, level: usize| {
            if pretty {
                out.push('\n');
                out.push_str(&"  ".repeat(level));
            }
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(n),
            Json::String(s) => quote(out, s),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    item.write_into(out, pretty, level + 1);
                }
                if !items.is_empty() {
                    newline(out, level);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    quote(out, key);
                    out.push_str(if pretty { ": " } else { ":" });
                    value.write_into(out, pretty, level + 1);
                }
                if !members.is_empty() {
                    newline(out, level);
                }
                out.push('}');
            }
        }
    }
}

/// `text` as a JSON string, by `serde_json`'s escaping (which a string always passes).
fn quote(out: &mut String, text: &str) {
    out.push_str(&serde_json::Value::from(text).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trips_with_duplicate_keys_and_raw_numbers() {
        let text = r#"{"a": [1e400, -0, {"b": null}], "a": "x\u001by\"", "c": true}"#;
        let tree = parse(text).expect("parses");
        let Json::Object(members) = &tree else {
            panic!("an object")
        };
        assert_eq!(members.len(), 3);
        assert_eq!(members[1].1, Json::String("x\u{1b}y\"".to_owned()));
        for pretty in [true, false] {
            assert_eq!(parse(&tree.write(pretty)), Some(tree.clone()));
        }
        assert_eq!(parse("[1,"), None);
        assert_eq!(parse(&"[".repeat(MAX_DEPTH + 2)), None);
    }

    #[test]
    fn every_shipped_config_parses() {
        let dir = crate::corpus::workspace_root().join("circuits/configs");
        for entry in std::fs::read_dir(dir).expect("configs") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).expect("text");
                assert!(parse(&text).is_some(), "{}", path.display());
            }
        }
    }
}
