//! Command lines in fuzz inputs: the CLI targets' inputs start with a header line
//! `#! <command> <arg>...` (a TOML comment, so an inputs file stays one), the rest of the
//! input is the file the command reads (an inputs file, a config.json, a circuit). The header
//! is mutated like any text, so the options are fuzzed with the file, a saved finding carries
//! its command line, and minimizing shrinks both.
//!
//! Owns the header's syntax ([`split`]: tokens split on whitespace, each decoded by [`decode`]:
//! `\n`, `\r`, `\t`, `\s` (a space), `\0`, `\\`, `\xHH`, `\u{H..}`), and the grammar of the
//! commands the targets run ([`verdict`]): whether a command line is one clap and the command
//! accept as well-formed, so a usage error on a well-formed line (or none on a malformed one)
//! is caught. The grammar is conservative: what it does not model exactly (help flags, `--`,
//! `--flag=value`, values that look like flags) is [`Verdict::Unsure`], and not checked.
//!
//! Invariants: nothing here panics on any bytes; [`split`] of an input without a header gives
//! no tokens and the whole input as the body.

use metrale_circuit::load::text::{parse_count, parse_size};
use metrale_circuit::serving::Utilization;

/// The header's marker at the start of an input.
pub const HEADER: &str = "#!";

/// An input's header tokens (decoded) and its body (the bytes after the header's line).
#[must_use]
pub fn split(bytes: &[u8]) -> (Vec<String>, &[u8]) {
    if !bytes.starts_with(HEADER.as_bytes()) {
        return (Vec::new(), bytes);
    }
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let line = String::from_utf8_lossy(&bytes[HEADER.len()..end]);
    let body = bytes.get(end + 1..).unwrap_or(&[]);
    (line.split_whitespace().map(decode).collect(), body)
}

/// A header token with its escapes decoded; a malformed escape is kept as written.
#[must_use]
pub fn decode(token: &str) -> String {
    let mut out = String::new();
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('s') => out.push(' '),
            Some('0') => out.push('\0'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                if let Some(b) = u8::from_str_radix(&hex, 16).ok().filter(u8::is_ascii) {
                    out.push(char::from(b));
                } else {
                    out.push_str("\\x");
                    out.push_str(&hex);
                }
            }
            Some('u') if chars.peek() == Some(&'{') => {
                chars.next();
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                } else {
                    out.push_str("\\u{");
                    out.push_str(&hex);
                    out.push('}');
                }
            }
            // `\\` is a backslash, and so is one ending the token.
            Some('\\') | None => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// What clap and the command make of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every argument known, each value of its type, every rule kept: never a usage error.
    WellFormed,
    /// A usage error for the reason given.
    Malformed(String),
    /// Not modelled: no check.
    Unsure,
}

/// What an option's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// A switch: no value.
    Switch,
    /// Any text.
    Any,
    /// Text, not empty.
    NonEmpty,
    /// A `u64`.
    U64,
    /// A `u64` of at least 1.
    Positive,
    /// A byte size (`parse_size`).
    Size,
    /// A count of at least 1, with or without a unit (`parse_count`: `32k`, `32Ki`).
    Count,
    /// A GPU share (`Utilization::parse`).
    Share,
    /// One of these spellings.
    OneOf(&'static [&'static str]),
}

/// The options of `plan` and `fit` both take.
const SHARED: [(&str, Value); 7] = [
    ("--checkpoint", Value::Any),
    ("--inputs", Value::NonEmpty),
    ("--align", Value::U64),
    ("--json", Value::Switch),
    ("--tp", Value::Positive),
    ("--pp", Value::Positive),
    ("--tp-rank", Value::U64),
];

/// The options of a command, and how many positionals it takes.
fn grammar(command: &str) -> Option<(Vec<(&'static str, Value)>, usize)> {
    let mut options: Vec<(&'static str, Value)> = Vec::new();
    let positionals = match command {
        "plan" => {
            options.extend(SHARED);
            options.extend([
                ("--pp-rank", Value::U64),
                ("--terms", Value::Switch),
                ("--sort", Value::OneOf(&["offset", "plan"])),
                ("--group", Value::OneOf(&["layer", "kind", "lifetime"])),
                ("--svg", Value::Any),
            ]);
            1
        }
        "fit" => {
            options.extend(SHARED);
            options.extend([
                ("--pp-rank", Value::U64),
                ("--budget", Value::Size),
                ("--gpu", Value::Size),
                ("--weights", Value::Any),
                ("--reserve", Value::Size),
                ("--utilization", Value::Share),
                ("--for", Value::OneOf(&["kv-blocks", "sequences"])),
                ("--context", Value::Count),
            ]);
            1
        }
        "gen" => {
            options.extend([("-o", Value::Any), ("--runtime-path", Value::Any)]);
            1
        }
        "import" => {
            options.extend([("--name", Value::Any), ("--hf", Value::Any)]);
            2
        }
        _ => return None,
    };
    Some((options, positionals))
}

/// Whether `args` (the command first, as the header gives them) are a well-formed command
/// line of `plan`, `fit`, `gen` or `import`.
#[must_use]
pub fn verdict(args: &[String]) -> Verdict {
    let Some((command, rest)) = args.split_first() else {
        return Verdict::Malformed("no command".to_owned());
    };
    let Some((options, positionals)) = grammar(command) else {
        return Verdict::Unsure;
    };
    let mut given: Vec<(&str, &str)> = Vec::new();
    let mut found_positionals = 0;
    let mut i = 0;
    while i < rest.len() {
        let token = rest[i].as_str();
        i += 1;
        if matches!(token, "--" | "-h" | "--help" | "-V" | "--version") || token.contains('=') {
            return Verdict::Unsure;
        }
        if token.starts_with('-') && token.len() > 1 {
            let Some(&(flag, value)) = options.iter().find(|(f, _)| *f == token) else {
                // One dash starts a cluster of short flags (`-hf` asks for help) or a short
                // flag's attached value (`-ofile`): not modelled.
                if !token.starts_with("--") {
                    return Verdict::Unsure;
                }
                return Verdict::Malformed(format!("unknown argument `{token}`"));
            };
            if given.iter().any(|(f, _)| *f == flag) {
                return Verdict::Malformed(format!("`{flag}` given twice"));
            }
            if value == Value::Switch {
                given.push((flag, ""));
                continue;
            }
            let Some(text) = rest.get(i) else {
                return Verdict::Malformed(format!("`{flag}` without its value"));
            };
            i += 1;
            if text.starts_with('-') && text.len() > 1 {
                return Verdict::Unsure;
            }
            if let Some(why) = bad_value(value, text) {
                return Verdict::Malformed(format!("`{flag} {text}`: {why}"));
            }
            given.push((flag, text));
        } else {
            found_positionals += 1;
            if token.is_empty() {
                return Verdict::Malformed("an empty positional".to_owned());
            }
        }
    }
    if found_positionals != positionals {
        return Verdict::Malformed(format!(
            "{found_positionals} positionals, not {positionals}"
        ));
    }
    let has = |flag: &str| given.iter().any(|(f, _)| *f == flag);
    let value = |flag: &str| given.iter().find(|(f, _)| *f == flag).map(|(_, v)| *v);
    if has("--tp-rank") != has("--pp-rank") && command != "gen" && command != "import" {
        return Verdict::Malformed("`--tp-rank` and `--pp-rank` go together".to_owned());
    }
    if command == "fit" {
        if has("--budget") == has("--gpu") {
            return Verdict::Malformed("exactly one of `--budget`, `--gpu`".to_owned());
        }
        match value("--for") {
            None => return Verdict::Malformed("no `--for`".to_owned()),
            Some("sequences") if !has("--context") => {
                return Verdict::Malformed("`--for sequences` without `--context`".to_owned());
            }
            Some("kv-blocks") if has("--context") => {
                return Verdict::Malformed("`--context` with `--for kv-blocks`".to_owned());
            }
            _ => {}
        }
        if !has("--gpu") && (has("--weights") || has("--reserve") || has("--utilization")) {
            return Verdict::Malformed("a `--gpu` option without `--gpu`".to_owned());
        }
    }
    Verdict::WellFormed
}

/// Why `text` is not a value of kind `value`, if it is not.
fn bad_value(value: Value, text: &str) -> Option<String> {
    match value {
        Value::Switch | Value::Any => None,
        Value::NonEmpty => text.is_empty().then(|| "empty".to_owned()),
        Value::U64 => text.parse::<u64>().err().map(|e| e.to_string()),
        Value::Positive => match text.parse::<u64>() {
            Ok(0) => Some("0".to_owned()),
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        },
        Value::Size => parse_size(text).err(),
        Value::Count => match parse_count(text) {
            Ok(0) => Some("0".to_owned()),
            Ok(_) => None,
            Err(e) => Some(e),
        },
        Value::Share => Utilization::parse(text).err(),
        Value::OneOf(spellings) => {
            (!spellings.contains(&text)).then(|| format!("not one of {spellings:?}"))
        }
    }
}

/// The indices in `args` (the command first) of the positionals, for a well-formed line: what
/// is neither an option nor an option's value.
#[must_use]
pub fn positionals(args: &[String]) -> Vec<usize> {
    let Some((options, _)) = args.first().and_then(|c| grammar(c)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut i = 1;
    while i < args.len() {
        match options.iter().find(|(f, _)| *f == args[i]) {
            Some((_, Value::Switch)) => i += 1,
            Some(_) => i += 2,
            None => {
                found.push(i);
                i += 1;
            }
        }
    }
    found
}

/// The value of option `flag` in `args`, if given once with a value.
#[must_use]
pub fn option<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    // clap takes a long option's value after it (`--for sequences`) or joined by `=`
    // (`--for=sequences`); the first one given is read.
    args.iter().enumerate().find_map(|(at, arg)| {
        if arg == flag {
            args.get(at + 1).map(String::as_str)
        } else {
            arg.strip_prefix(flag)?.strip_prefix('=')
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        split(format!("#! {line}\nbody").as_bytes()).0
    }

    #[test]
    fn an_option_is_read_apart_or_joined_by_equals() {
        let line = args("fit c.toml --for=sequences --context 4096 --format=x");
        assert_eq!(option(&line, "--for"), Some("sequences"));
        assert_eq!(option(&line, "--context"), Some("4096"));
        assert_eq!(option(&line, "--form"), None);
        assert_eq!(option(&line, "--budget"), None);
    }

    #[test]
    fn a_header_splits_and_decodes() {
        let (tokens, body) = split(b"#! plan a\\sb \\x1b\\u{202e} \\q a\\\\b\nslots = 1\n");
        assert_eq!(tokens, ["plan", "a b", "\u{1b}\u{202e}", "\\q", "a\\b"]);
        assert_eq!(body, b"slots = 1\n");
        assert_eq!(split(b"slots = 1").0, Vec::<String>::new());
    }

    #[test]
    fn the_grammar_knows_well_formed_from_malformed() {
        let well = [
            "fit c.toml --for kv-blocks --budget 80GiB",
            "fit c.toml --for sequences --context 4096 --gpu 80GiB --weights 1GiB --tp 2",
            "plan c.toml --tp 4 --pp 2 --tp-rank 0 --pp-rank 1 --json --svg x.svg",
            "gen c.toml -o out.rs --runtime-path ::a",
            "import c.toml c.json --name x",
        ];
        for line in well {
            assert_eq!(verdict(&args(line)), Verdict::WellFormed, "{line}");
        }
        let malformed = [
            "fit c.toml --for kv-blocks",
            "fit c.toml --for sequences --budget 1",
            "fit c.toml --for kv-blocks --budget 1 --context 5",
            "fit c.toml --for kv-blocks --budget 1 --reserve 1GiB",
            "plan c.toml --tp 0",
            "plan c.toml --tp-rank 1",
            "plan c.toml --json --json",
            "plan c.toml d.toml",
            "plan c.toml --tp 18446744073709551616",
            "import c.toml",
            "gen c.toml --nope",
        ];
        for line in malformed {
            assert!(
                matches!(verdict(&args(line)), Verdict::Malformed(_)),
                "{line}"
            );
        }
        assert_eq!(verdict(&args("plan c.toml --help")), Verdict::Unsure);
        assert_eq!(verdict(&args("import c.toml c.json -hf")), Verdict::Unsure);
    }
}
