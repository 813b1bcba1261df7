//! The mutators: byte-level, token-level and structure-aware edits of a seed, several mixed
//! per execution, all drawn from one seeded generator so a run is reproducible from its seed.
//!
//! - byte-level: flip a bit, insert, delete or duplicate a range, insert an interesting byte
//!   sequence (`\r`, `\0`, 0xFF, a bidi control, a BOM, half of a multi-byte char, TOML
//!   punctuation);
//! - token-level: a number replaced by an edge value (0, 1, -1, 2^32, 2^63, 2^64, `u64::MAX`,
//!   1e400, ...), a name or a string replaced by a word of the corpus's dictionary, lines
//!   duplicated, deleted, swapped, or spliced in from another corpus file;
//! - structure-aware: the text parsed with `toml` into a table, a key, value or array of it
//!   mutated (retyped, renamed, removed, copied, nested deep), and the table written back; a
//!   config.json the same way through [`crate::json`] (numbers set to 0, huge or fractional
//!   values, keys duplicated, dropped or renamed, values retyped, strings given control
//!   characters, arrays edited, values nested deep);
//! - command lines: the `#!` header of a CLI target's input ([`crate::command`]) edited as
//!   arguments (a value replaced by an edge value of its option, an option added, dropped,
//!   repeated or swapped, the circuit replaced), the rest of the input as its file.
//!
//! Invariants: a mutated input is never longer than [`Mutator::max_len`] (edits that would
//! pass it are skipped), and the same generator state and seed give the same bytes.

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::corpus::Corpus;
use crate::json::Json;

/// Numbers at the edges of the types the loader reads them into.
const EDGE_NUMBERS: [&str; 22] = [
    "0",
    "1",
    "-1",
    "2",
    "3",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "1e400",
    "-0",
    "0.5",
    "1_000",
    "0x10",
    "007",
    "inf",
    "nan",
];

/// Byte sequences that break lexers, line tables and char boundaries.
const INTERESTING: [&[u8]; 22] = [
    b"\r",
    b"\r\n",
    b"\0",
    b"\xFF",
    b"\xE2\x80\xAE",     // U+202E RIGHT-TO-LEFT OVERRIDE
    b"\xE2\x81\xA6",     // U+2066 LEFT-TO-RIGHT ISOLATE
    b"\xEF\xBB\xBF",     // a BOM
    b"\xE2\x80",         // the first two bytes of a three-byte char
    b"\xC3",             // the first byte of `\u{e9}`
    b"\xF0\x9F\x98\x80", // an emoji (four bytes)
    "\u{e9}".as_bytes(),
    b"\t",
    b"\n",
    b"\"",
    b"'''",
    b"\"\"\"",
    b"#",
    b"[",
    b"]",
    b"=",
    b"\\",
    b".",
];

/// Integer values a structure-aware edit puts into a table.
const EDGE_INTEGERS: [i64; 9] = [
    0,
    1,
    -1,
    2,
    4096,
    1 << 32,
    i64::MAX,
    i64::MIN,
    (1 << 53) + 1,
];

/// What kind of text is mutated: the kind picks the weights of the edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A TOML file (circuit, library, inputs).
    Toml,
    /// A shape expression: no TOML structure, words and numbers only.
    Shape,
    /// A JSON file (config.json).
    Json,
    /// A `#!` command line, then a TOML file.
    CommandToml,
    /// A `#!` command line, then a JSON file.
    CommandJson,
}

impl Flavor {
    /// The flavor of the file after a command line, for a command flavor.
    const fn body(self) -> Option<Flavor> {
        match self {
            Flavor::CommandToml => Some(Flavor::Toml),
            Flavor::CommandJson => Some(Flavor::Json),
            _ => None,
        }
    }
}

/// Numbers for options that take counts and ranks: the edges of `u64`, of `MAX_RANKS`
/// (65,536) and malformed spellings.
const ARG_NUMBERS: [&str; 24] = [
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "7",
    "8",
    "16",
    "64",
    "1024",
    "4096",
    "65536",
    "65537",
    "4294967296",
    "1099511627776",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "+2",
    "007",
    "-1",
    "0x10",
    "1.5",
];

/// Byte sizes for `--budget`, `--gpu`, `--weights`, `--reserve`.
const ARG_SIZES: [&str; 22] = [
    "0",
    "1",
    "0B",
    "1B",
    "4096",
    "1KiB",
    "512MiB",
    "1GiB",
    "8GiB",
    "24GiB",
    "40GiB",
    "80GiB",
    "80GB",
    "1TB",
    "16TiB",
    "18446744073709551615",
    "18446744073709551615B",
    "18446744073709551616",
    "20000000TiB",
    "1.5GiB",
    "80gib",
    "9223372036854775807B",
];

/// GPU shares for `--utilization`.
const ARG_SHARES: [&str; 13] = [
    "0.92",
    "0.9",
    "1",
    "1.0",
    "0.5",
    "0",
    "0.0",
    "1.5",
    "-0.1",
    "nan",
    "1e-9",
    "0.9999999",
    "100%",
];

/// Runtime paths for `gen --runtime-path`: good ones and every kind the issue found accepted.
const RUNTIME_PATHS: [&str; 26] = [
    "::metrale_circuit",
    "crate::rt",
    "::my_engine::metrale",
    "self::rt",
    "super::rt",
    "::crate",
    "a::crate",
    "crate::super",
    "::a::self",
    "::try",
    "::gen",
    "Self",
    "self",
    "::r#type",
    "::r#crate",
    "::",
    "a::",
    "::a<b>",
    "::a::b::c::d",
    "::async",
    "::dyn",
    "::_",
    "::_a",
    "::a-b",
    "::\\u{e9}",
    "::a\\nb",
];

/// Checkpoint names for `import --name`: fresh, taken by the generated code, keywords,
/// control characters, long (header escapes: see [`crate::command::decode`]).
const NAMES: [&str; 26] = [
    "fuzzed",
    "fuzz_ckpt",
    "fn",
    "self",
    "Self",
    "crate",
    "r#fn",
    "blocks",
    "units",
    "arena",
    "all",
    "ALL",
    "_",
    "__",
    "1a",
    "a-b",
    "\\u{e9}",
    "a\\nb",
    "a\\0b",
    "a\\x1b[31mb",
    "tiny",
    "on_tp",
    "dims",
    "layers",
    "h_steps",
    "a_name_of_two_hundred_bytes_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

/// Hugging Face ids for `import --hf`: every character TOML must escape.
const HF_IDS: [&str; 10] = [
    "org/model",
    "a\\\\\"b",
    "a\\\\b",
    "a\\nb",
    "x\\x1b[31m",
    "/",
    "a/b/c",
    "\\u{e9}/\\u{df}",
    "a'''b",
    "\\u{202e}org/model",
];

/// The options each command takes, each with the values an edit gives it (none: a switch;
/// `*`: a word of the dictionary; `@...`: a path the target makes, see [`crate::surfaces`]).
const OPTIONS: &[(&str, &str, &[&str])] = &[
    (
        "fit",
        "--for",
        &["kv-blocks", "sequences", "blocks", "KV-BLOCKS"],
    ),
    (
        "fit",
        "--context",
        &[
            "2048",
            "4096",
            "32768",
            "131072",
            "0",
            "1",
            "18446744073709551615",
        ],
    ),
    ("fit", "--budget", &ARG_SIZES),
    ("fit", "--gpu", &ARG_SIZES),
    (
        "fit",
        "--weights",
        &[
            "0",
            "54GiB",
            "1TB",
            "18446744073709551615",
            "@dir",
            "@nodir",
            "x",
        ],
    ),
    ("fit", "--reserve", &ARG_SIZES),
    ("fit", "--utilization", &ARG_SHARES),
    ("fit", "--tp", &ARG_NUMBERS),
    ("fit", "--pp", &ARG_NUMBERS),
    ("fit", "--tp-rank", &ARG_NUMBERS),
    ("fit", "--pp-rank", &ARG_NUMBERS),
    ("fit", "--checkpoint", &["*"]),
    (
        "fit",
        "--inputs",
        &["@inputs", "@dir", "@nodir", "circuits/qwen3_5.toml"],
    ),
    (
        "fit",
        "--align",
        &["256", "1", "3", "64", "4096", "0", "9223372036854775808"],
    ),
    ("fit", "--json", &[]),
    ("plan", "--tp", &ARG_NUMBERS),
    ("plan", "--pp", &ARG_NUMBERS),
    ("plan", "--tp-rank", &ARG_NUMBERS),
    ("plan", "--pp-rank", &ARG_NUMBERS),
    ("plan", "--json", &[]),
    ("plan", "--terms", &[]),
    ("plan", "--svg", &["@svg", "@dir", "@nodir", "/dev/null"]),
    ("plan", "--sort", &["offset", "plan", "size"]),
    ("plan", "--group", &["layer", "kind", "lifetime", "space"]),
    ("plan", "--checkpoint", &["*"]),
    (
        "plan",
        "--inputs",
        &["@inputs", "@dir", "@nodir", "circuits/qwen3_5.toml"],
    ),
    (
        "plan",
        "--align",
        &["256", "1", "3", "64", "4096", "0", "9223372036854775808"],
    ),
    ("gen", "-o", &["@out", "@dir", "@nodir", "/dev/null"]),
    ("gen", "--runtime-path", &RUNTIME_PATHS),
    ("import", "--name", &NAMES),
    ("import", "--hf", &HF_IDS),
];

/// What a command line's circuit is replaced by: files of the workspace, the same under a
/// name with control characters (`@ctl:`), and (for `gen`, whose circuit is the mutated
/// file) the mutated file under a name with a line break or control characters.
const CIRCUIT_ARGS: [&str; 12] = [
    "circuits/qwen3_5.toml",
    "circuits/nemotron_h.toml",
    "circuits/llama.toml",
    "circuits/gpt_oss.toml",
    "circuits/gemma3n.toml",
    "circuits/deepseek_v32.toml",
    "circuits/llama4.toml",
    "circuits/gemma2.toml",
    "@ctl:circuits/qwen3_5.toml",
    "@ctl:circuits/gemma3n.toml",
    "@circuit-nl",
    "@circuit-ctl",
];

/// Numbers a config.json edit writes: 0, huge, fractional, malformed.
const JSON_NUMBERS: [&str; 22] = [
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "1024",
    "4096",
    "100000",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "-0",
    "1.5",
    "4096.0",
    "1e2",
    "1E3",
    "-1e-400",
    "00",
];

/// Strings a config.json edit writes: control characters, keywords, layer kinds.
const JSON_STRINGS: [&str; 18] = [
    "",
    "\0",
    "a\u{1b}[31mb",
    "\n",
    "line\nbreak",
    "\u{202e}rtl",
    "\"",
    "\\",
    "fn",
    "self",
    "Self",
    "full_attention",
    "sliding_attention",
    "linear_attention",
    "mamba",
    "attention",
    "\u{e9}",
    "\u{7f}\u{85}",
];

/// Draws edits of seeds.
pub struct Mutator<'c> {
    rng: XorShiftRng,
    corpus: &'c Corpus,
    /// The longest input made.
    pub max_len: usize,
}

impl<'c> Mutator<'c> {
    /// A mutator drawing from `seed`'s stream, with words and lines from `corpus`.
    #[must_use]
    pub fn new(seed: u64, corpus: &'c Corpus) -> Self {
        Self {
            rng: XorShiftRng::seed_from_u64(seed),
            corpus,
            max_len: 1 << 20,
        }
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.rng.random_range(0..n)
        }
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// One to six edits of `seed`, mixed from the three levels.
    pub fn mutate(&mut self, seed: &[u8], flavor: Flavor) -> Vec<u8> {
        if let Some(body) = flavor.body() {
            return self.command(seed, body);
        }
        let mut data = seed.to_vec();
        // Mostly few edits, sometimes many: 1 + a geometric count, at most 6.
        let mut edits = 1;
        while edits < 6 && self.rng.random_bool(0.45) {
            edits += 1;
        }
        for _ in 0..edits {
            let roll = self.below(100);
            match flavor {
                Flavor::Toml if roll < 30 => self.structure(&mut data),
                Flavor::Json if roll < 45 => self.json(&mut data),
                _ if roll < 65 => self.token(&mut data),
                _ => self.byte(&mut data),
            }
        }
        data
    }

    /// One byte-level edit.
    fn byte(&mut self, data: &mut Vec<u8>) {
        let len = data.len();
        match self.below(7) {
            0 if len > 0 => {
                let at = self.below(len);
                data[at] ^= 1 << self.below(8);
            }
            1 => {
                let at = self.below(len + 1);
                let byte = u8::try_from(self.below(256)).unwrap_or(0);
                self.insert(data, at, &[byte]);
            }
            2 if len > 0 => {
                let at = self.below(len);
                let end = (at + 1 + self.below(16)).min(len);
                data.drain(at..end);
            }
            3 if len > 0 => {
                // Duplicate a range; sometimes a large one, to grow the file.
                let at = self.below(len);
                let most = if self.below(8) == 0 { len } else { 64 };
                let end = (at + 1 + self.below(most)).min(len);
                let copy = data[at..end].to_vec();
                let to = self.below(len + 1);
                self.insert(data, to, &copy);
            }
            4 if len > 0 => {
                let at = self.below(len);
                data[at] = INTERESTING.choose(&mut self.rng).map_or(b' ', |s| s[0]);
            }
            _ => {
                let at = self.below(len + 1);
                let bytes = INTERESTING.choose(&mut self.rng).copied().unwrap_or(b"\0");
                self.insert(data, at, bytes);
            }
        }
    }

    /// Inserts `bytes` at `at` unless the result would pass [`Self::max_len`].
    fn insert(&self, data: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if data.len() + bytes.len() <= self.max_len {
            data.splice(at..at, bytes.iter().copied());
        }
    }

    /// One token-level edit: a number, a word or a string replaced, or a line edit.
    fn token(&mut self, data: &mut Vec<u8>) {
        match self.below(40) {
            0..=13 => self.replace_token(data, TokenClass::Number),
            14..=23 => self.replace_token(data, TokenClass::Word),
            24 | 25 => self.deep_line(data),
            26 => self.grow(data),
            _ => self.line_edit(data),
        }
    }

    /// Inserts a line nested deep: a dotted key, nested arrays or nested inline tables, of a
    /// depth from 2 to a few thousand (past any parser's recursion limit).
    fn deep_line(&mut self, data: &mut Vec<u8>) {
        let depth = match self.below(4) {
            0 => 2 + self.below(16),
            1 => 100 + self.below(200),
            _ => 100 + self.below(3000),
        };
        let word = self.word();
        let key = if word.is_empty() {
            "k".to_owned()
        } else {
            word
        };
        let line = match self.below(3) {
            0 => format!("{} = 1", vec![key.as_str(); depth].join(".")),
            1 => format!("{key} = {}{}", "[".repeat(depth), "]".repeat(depth)),
            _ => format!("{key} = {}1{}", "{a = ".repeat(depth), "}".repeat(depth)),
        };
        let at = self.line_start(data);
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        self.insert(data, at, &bytes);
    }

    /// Grows the file: one of its lines repeated hundreds to tens of thousands of times, each
    /// copy's first word numbered (distinct keys, each a new error or a new entry).
    fn grow(&mut self, data: &mut Vec<u8>) {
        let text = String::from_utf8_lossy(data).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let Some(line) = lines.choose(&mut self.rng).map(|l| (*l).to_owned()) else {
            return;
        };
        // Mostly tens to hundreds of copies; one time in 32 enough for a large file.
        let copies = if self.below(32) == 0 {
            1000 + self.below(30_000)
        } else {
            10 + self.below(500)
        };
        let split = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(line.len());
        let (head, tail) = line.split_at(split);
        let mut grown = Vec::new();
        for i in 0..copies {
            if data.len() + grown.len() > self.max_len {
                break;
            }
            grown.extend_from_slice(format!("{head}_{i}{tail}\n").as_bytes());
        }
        let at = self.line_start(data);
        self.insert(data, at, &grown);
    }

    /// The start of a random line of `data`.
    fn line_start(&mut self, data: &[u8]) -> usize {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(
                data.iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        starts.choose(&mut self.rng).copied().unwrap_or(0)
    }

    /// Replaces one token of `class` (a random one of the text) by an edge number or a word.
    fn replace_token(&mut self, data: &mut Vec<u8>, class: TokenClass) {
        let spans = tokens(data, class);
        let Some(&(start, end)) = spans.choose(&mut self.rng) else {
            return self.byte(data);
        };
        let new: Vec<u8> = match class {
            TokenClass::Number => EDGE_NUMBERS
                .choose(&mut self.rng)
                .map_or(b"0".to_vec(), |n| n.as_bytes().to_vec()),
            TokenClass::Word => self.word().into_bytes(),
        };
        if data.len() - (end - start) + new.len() <= self.max_len {
            data.splice(start..end, new);
        }
    }

    /// A word of the dictionary, sometimes bent (doubled, upper-cased, emptied).
    fn word(&mut self) -> String {
        let word = self
            .corpus
            .words
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default();
        match self.below(16) {
            0 => String::new(),
            1 => word.to_uppercase(),
            2 => format!("{word}{word}"),
            3 => format!("{word}.{word}"),
            _ => word,
        }
    }

    /// Duplicates, deletes or swaps lines, or splices lines of another corpus file in.
    fn line_edit(&mut self, data: &mut Vec<u8>) {
        let mut lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len();
        let at = self.below(n);
        match self.below(5) {
            0 => {
                let line = lines[at].clone();
                lines.insert(at, line);
            }
            1 if n > 1 => {
                let end = (at + 1 + self.below(4)).min(n);
                lines.drain(at..end);
            }
            2 => {
                let other = self.below(n);
                lines.swap(at, other);
            }
            _ => {
                let count = 1 + self.below(4);
                for i in 0..count {
                    let line = self
                        .corpus
                        .lines
                        .choose(&mut self.rng)
                        .cloned()
                        .unwrap_or_default();
                    lines.insert((at + i).min(lines.len()), line.into_bytes());
                }
            }
        }
        let joined = lines.join(&b'\n');
        if joined.len() <= self.max_len {
            *data = joined;
        }
    }

    /// One structure-aware edit: parse, mutate a value of the tree, write back. Text that is
    /// not a TOML table gets a token edit instead.
    fn structure(&mut self, data: &mut Vec<u8>) {
        let Some(mut table) = std::str::from_utf8(data)
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
        else {
            return self.token(data);
        };
        let paths = value_paths(&table);
        let Some(path) = paths.choose(&mut self.rng).cloned() else {
            return self.token(data);
        };
        let edit = self.below(9);
        let donor = self.donor_value(&table, &paths);
        edit_at(&mut table, &path, |parent, key| {
            self.edit_value(parent, key, edit, donor);
        });
        if let Ok(text) = toml::to_string(&table)
            && text.len() <= self.max_len
        {
            *data = text.into_bytes();
        }
    }

    /// A copy of a random value of the tree (another block, another table), to paste elsewhere.
    fn donor_value(&mut self, table: &toml::Table, paths: &[Vec<Step>]) -> Option<toml::Value> {
        let path = paths.choose(&mut self.rng)?;
        value_at(table, path).cloned()
    }

    /// Edits the value at `key` of `parent` (a table or an array).
    fn edit_value(
        &mut self,
        parent: &mut Container<'_>,
        key: &Step,
        edit: usize,
        donor: Option<toml::Value>,
    ) {
        match edit {
            0 => parent.remove(key),
            1 => {
                let value = self.scalar();
                parent.set(key, value);
            }
            2 => {
                if let (Some(value), Container::Table(table)) =
                    (parent.get(key).cloned(), &mut *parent)
                {
                    table.insert(self.word(), value);
                }
            }
            3 => {
                // Nest the value deep: mostly a few levels, sometimes past any recursion limit.
                let depth = if self.below(8) == 0 {
                    200 + self.below(400)
                } else {
                    1 + self.below(8)
                };
                if let Some(mut value) = parent.get(key).cloned() {
                    for _ in 0..depth {
                        value = if self.below(2) == 0 {
                            toml::Value::Array(vec![value])
                        } else {
                            let mut nested = toml::Table::new();
                            nested.insert(self.word(), value);
                            toml::Value::Table(nested)
                        };
                    }
                    parent.set(key, value);
                }
            }
            4 => {
                if let Some(value) = donor {
                    parent.set(key, value);
                }
            }
            5 => {
                let word = self.word();
                if let Container::Table(table) = parent {
                    let value = self.scalar();
                    table.insert(word, value);
                }
            }
            6 => {
                // An array edit: duplicate, drop, reverse or grow.
                if let Some(toml::Value::Array(items)) = parent.get_mut(key) {
                    let n = items.len();
                    match self.below(4) {
                        0 if n > 0 => {
                            let copy = items[self.below(n)].clone();
                            items.push(copy);
                        }
                        1 if n > 0 => {
                            items.remove(self.below(n));
                        }
                        2 => items.reverse(),
                        _ => {
                            let copies = 1 + self.below(64);
                            let copy = items.first().cloned().unwrap_or(toml::Value::Integer(1));
                            items.extend(std::iter::repeat_n(copy, copies));
                        }
                    }
                } else {
                    let value = parent.get(key).cloned();
                    if let Some(value) = value {
                        parent.set(key, toml::Value::Array(vec![value]));
                    }
                }
            }
            7 => {
                // A key renamed to a word of the dictionary.
                if let (Some(value), Container::Table(table)) =
                    (parent.get(key).cloned(), &mut *parent)
                {
                    if let Step::Key(old) = key {
                        table.remove(old);
                    }
                    table.insert(self.word(), value);
                }
            }
            _ => parent.set(key, toml::Value::Table(toml::Table::new())),
        }
    }

    /// Edits of a command input: its `#!` line as arguments, its file by `body`'s edits,
    /// mostly the file, a third of the time the command line, sometimes both. An input without
    /// a header is all file.
    fn command(&mut self, seed: &[u8], body: Flavor) -> Vec<u8> {
        if !seed.starts_with(crate::command::HEADER.as_bytes()) {
            return self.mutate(seed, body);
        }
        let end = seed.iter().position(|&b| b == b'\n').unwrap_or(seed.len());
        let (header, file) = (&seed[..end], seed.get(end + 1..).unwrap_or(&[]));
        let roll = self.below(10);
        let mut out = if roll < 4 {
            self.header(header)
        } else {
            header.to_vec()
        };
        out.push(b'\n');
        if roll >= 3 {
            out.extend(self.mutate(file, body));
        } else {
            out.extend_from_slice(file);
        }
        if out.len() > self.max_len {
            out.truncate(self.max_len);
        }
        out
    }

    /// One to three edits of a `#!` line's arguments (kept as written, escapes included).
    fn header(&mut self, line: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(&line[crate::command::HEADER.len()..]).into_owned();
        let mut tokens: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        let command = tokens.first().cloned().unwrap_or_default();
        let options: Vec<&(&str, &str, &[&str])> =
            OPTIONS.iter().filter(|(c, _, _)| *c == command).collect();
        for _ in 0..=self.below(3) {
            let n = tokens.len();
            match self.below(100) {
                // A value replaced by one of its option's edge values, else any edge value.
                0..=34 if n > 1 => {
                    let at = 1 + self.below(n - 1);
                    let values = options
                        .iter()
                        .find(|(_, flag, _)| *flag == tokens[at - 1])
                        .map(|(_, _, values)| *values)
                        .filter(|values| !values.is_empty());
                    tokens[at] = match values {
                        Some(values) => self.arg_value(values),
                        None => self.arg_value(&ARG_NUMBERS),
                    };
                }
                // An option of the command added, with a value.
                35..=54 => {
                    if let Some(&&(_, flag, values)) = options.choose(&mut self.rng) {
                        let at = 1 + self.below(n.max(1));
                        let mut added = vec![flag.to_owned()];
                        if !values.is_empty() {
                            added.push(self.arg_value(values));
                        }
                        let at = at.min(tokens.len());
                        tokens.splice(at..at, added);
                    }
                }
                // An argument dropped (an option with its value, mostly).
                55..=69 if n > 1 => {
                    let at = 1 + self.below(n - 1);
                    let with_value = tokens[at].starts_with('-')
                        && at + 1 < n
                        && !tokens[at + 1].starts_with('-')
                        && self.below(3) > 0;
                    tokens.drain(at..if with_value { at + 2 } else { at + 1 });
                }
                // An option repeated.
                70..=77 if n > 1 => {
                    let at = 1 + self.below(n - 1);
                    let end = (at + 2).min(n);
                    let copy = tokens[at..end].to_vec();
                    tokens.extend(copy);
                }
                // The circuit replaced.
                78..=86 => {
                    let circuit = CIRCUIT_ARGS
                        .choose(&mut self.rng)
                        .copied()
                        .unwrap_or("circuits/qwen3_5.toml");
                    if let Some(at) = tokens.iter().position(|t| {
                        std::path::Path::new(t)
                            .extension()
                            .is_some_and(|e| e == "toml")
                            || t.starts_with("@ctl:")
                            || t.starts_with("@circuit")
                    }) {
                        circuit.clone_into(&mut tokens[at]);
                    }
                }
                // Two arguments swapped.
                87..=91 if n > 2 => {
                    let (a, b) = (1 + self.below(n - 1), 1 + self.below(n - 1));
                    tokens.swap(a, b);
                }
                // A token or byte edit of the line as text.
                _ => {
                    let mut bytes = tokens.join(" ").into_bytes();
                    if self.below(2) == 0 {
                        self.token(&mut bytes);
                    } else {
                        self.byte(&mut bytes);
                    }
                    let mut line = crate::command::HEADER.as_bytes().to_vec();
                    line.push(b' ');
                    line.extend(bytes);
                    return line;
                }
            }
        }
        format!("{} {}", crate::command::HEADER, tokens.join(" ")).into_bytes()
    }

    /// A value for an option: one of `values`, a word of the dictionary for `*`.
    fn arg_value(&mut self, values: &[&str]) -> String {
        match values.choose(&mut self.rng).copied() {
            Some("*") | None => {
                let word = self.word();
                if word.is_empty() || word.contains(char::is_whitespace) {
                    "x".to_owned()
                } else {
                    word
                }
            }
            Some(value) => value.to_owned(),
        }
    }

    /// One structure-aware edit of a JSON text: parse, edit a value of the tree, write back
    /// (pretty, as the configs are, or on one line). Text that is not JSON gets a token edit.
    fn json(&mut self, data: &mut Vec<u8>) {
        let Some(mut tree) = std::str::from_utf8(data).ok().and_then(crate::json::parse) else {
            return self.token(data);
        };
        let mut paths = Vec::new();
        json_paths(&tree, &mut Vec::new(), &mut paths);
        let Some(path) = paths.choose(&mut self.rng).cloned() else {
            return self.token(data);
        };
        let donor = paths
            .choose(&mut self.rng)
            .and_then(|p| json_at(&mut tree.clone(), p).cloned());
        let edit = self.below(10);
        // Edits of the value's place in its parent: dropped, its key doubled or renamed.
        if let Some((last, parent)) = path.split_last()
            && matches!(edit, 2 | 3 | 6)
        {
            let word = self.word();
            let value = self.json_scalar();
            if let Some(parent) = json_at(&mut tree, parent) {
                match (parent, edit) {
                    (Json::Object(members), 2) if *last < members.len() => {
                        // The same key again, with its value or another.
                        let (key, old) = members[*last].clone();
                        let again = if self.below(2) == 0 { old } else { value };
                        let at = if self.below(2) == 0 {
                            last + 1
                        } else {
                            members.len()
                        };
                        members.insert(at, (key, again));
                    }
                    (Json::Object(members), 3) if *last < members.len() => {
                        members.remove(*last);
                    }
                    (Json::Array(items), 3) if *last < items.len() => {
                        items.remove(*last);
                    }
                    (Json::Object(members), 6) if *last < members.len() => {
                        members[*last].0 = word;
                    }
                    _ => {}
                }
            }
        } else if let Some(value) = json_at(&mut tree, &path) {
            self.json_value(value, edit, donor);
        }
        let text = tree.write(self.below(5) > 0);
        if text.len() <= self.max_len {
            *data = text.into_bytes();
        }
    }

    /// Edit `edit` (0, 1, 4, 5, 7, 8, 9) of one JSON value: a number at an edge, retyped, a
    /// string with control characters, `donor` pasted, an array edited, nested deep.
    fn json_value(&mut self, value: &mut Json, edit: usize, donor: Option<Json>) {
        match edit {
            0 | 1 => {
                let number = JSON_NUMBERS.choose(&mut self.rng).copied().unwrap_or("0");
                *value = Json::Number(number.to_owned());
            }
            4 => {
                // Retyped: the number's text as a string, null, a bool, wrapped.
                *value = match (self.below(5), value.clone()) {
                    (0, Json::Number(n)) => Json::String(n),
                    (0 | 1, _) => Json::Null,
                    (2, _) => Json::Bool(self.below(2) == 0),
                    (3, old) => Json::Array(vec![old]),
                    (_, old) => Json::Object(vec![(self.word(), old)]),
                };
            }
            5 => {
                let text = JSON_STRINGS.choose(&mut self.rng).copied().unwrap_or("");
                *value = match value {
                    Json::String(old) if self.below(2) == 0 => Json::String(format!("{old}{text}")),
                    _ => Json::String(text.to_owned()),
                };
            }
            7 => {
                if let Some(donor) = donor {
                    *value = donor;
                }
            }
            8 => {
                if let Json::Array(items) = value {
                    let n = items.len();
                    match self.below(4) {
                        0 if n > 0 => {
                            let copy = items[self.below(n)].clone();
                            items.insert(self.below(n + 1), copy);
                        }
                        1 if n > 0 => {
                            items.remove(self.below(n));
                        }
                        2 => items.reverse(),
                        _ => {
                            let copy = items.first().cloned().unwrap_or(Json::Null);
                            let copies = 1 + self.below(2000);
                            items.extend(std::iter::repeat_n(copy, copies));
                        }
                    }
                } else {
                    *value = self.json_scalar();
                }
            }
            _ => {
                let depth = if self.below(8) == 0 {
                    400 + self.below(400)
                } else {
                    1 + self.below(8)
                };
                let mut nested = value.clone();
                for _ in 0..depth {
                    nested = Json::Array(vec![nested]);
                }
                *value = nested;
            }
        }
    }

    /// A JSON scalar, mostly at an edge.
    fn json_scalar(&mut self) -> Json {
        match self.below(4) {
            0 | 1 => Json::Number(
                JSON_NUMBERS
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("0")
                    .to_owned(),
            ),
            2 => Json::String(self.word()),
            _ => Json::Null,
        }
    }

    /// A scalar of any TOML type, mostly at an edge.
    fn scalar(&mut self) -> toml::Value {
        match self.below(6) {
            0 | 1 => toml::Value::Integer(*EDGE_INTEGERS.choose(&mut self.rng).unwrap_or(&0)),
            2 | 3 => toml::Value::String(self.word()),
            4 => toml::Value::Boolean(self.below(2) == 0),
            _ => toml::Value::Float(
                *[0.5, -0.0, 1e300, f64::NAN, f64::INFINITY]
                    .choose(&mut self.rng)
                    .unwrap_or(&0.5),
            ),
        }
    }
}

/// The path (member or item indices) of every value of a JSON tree, parents first.
fn json_paths(value: &Json, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if !path.is_empty() {
        out.push(path.clone());
    }
    let children: Vec<&Json> = match value {
        Json::Array(items) => items.iter().collect(),
        Json::Object(members) => members.iter().map(|(_, v)| v).collect(),
        _ => Vec::new(),
    };
    for (i, child) in children.into_iter().enumerate() {
        path.push(i);
        json_paths(child, path, out);
        path.pop();
    }
}

/// The value at `path` of a JSON tree.
fn json_at<'j>(value: &'j mut Json, path: &[usize]) -> Option<&'j mut Json> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value);
    };
    let child = match value {
        Json::Array(items) => items.get_mut(*first)?,
        Json::Object(members) => &mut members.get_mut(*first)?.1,
        _ => return None,
    };
    json_at(child, rest)
}

/// A token class the token-level edits replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenClass {
    /// A run of digits (with a sign, `_`, `.`, `e`).
    Number,
    /// A name or the body of a `"..."` string.
    Word,
}

/// The byte spans of every token of `class` in `data`.
fn tokens(data: &[u8], class: TokenClass) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let start = i;
        if b.is_ascii_digit() || (b == b'-' && data.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < data.len() && (data[i].is_ascii_alphanumeric() || b"_.+-".contains(&data[i]))
            {
                i += 1;
            }
            if class == TokenClass::Number {
                spans.push((start, i));
            }
        } else if b.is_ascii_alphabetic() || b == b'_' {
            while i < data.len() && (data[i].is_ascii_alphanumeric() || data[i] == b'_') {
                i += 1;
            }
            if class == TokenClass::Word {
                spans.push((start, i));
            }
        } else if b == b'"' {
            i += 1;
            while i < data.len() && data[i] != b'"' && data[i] != b'\n' {
                i += 1;
            }
            if class == TokenClass::Word {
                spans.push((start + 1, i));
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    spans
}

/// One step of a path into a TOML tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A table's key.
    Key(String),
    /// An array's index.
    Index(usize),
}

/// A table or an array, holding the value a path's last step names.
enum Container<'a> {
    Table(&'a mut toml::Table),
    Array(&'a mut Vec<toml::Value>),
}

impl<'a> Container<'a> {
    /// The table or array at `step`, if that is what it holds.
    fn into_child(self, step: &Step) -> Option<Container<'a>> {
        let value = match (self, step) {
            (Container::Table(t), Step::Key(k)) => t.get_mut(k)?,
            (Container::Array(a), Step::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
        match value {
            toml::Value::Table(t) => Some(Container::Table(t)),
            toml::Value::Array(a) => Some(Container::Array(a)),
            _ => None,
        }
    }

    fn get(&self, step: &Step) -> Option<&toml::Value> {
        match (self, step) {
            (Container::Table(t), Step::Key(k)) => t.get(k),
            (Container::Array(a), Step::Index(i)) => a.get(*i),
            _ => None,
        }
    }

    fn get_mut(&mut self, step: &Step) -> Option<&mut toml::Value> {
        match (self, step) {
            (Container::Table(t), Step::Key(k)) => t.get_mut(k),
            (Container::Array(a), Step::Index(i)) => a.get_mut(*i),
            _ => None,
        }
    }

    fn set(&mut self, step: &Step, value: toml::Value) {
        if let Some(slot) = self.get_mut(step) {
            *slot = value;
        }
    }

    fn remove(&mut self, step: &Step) {
        match (self, step) {
            (Container::Table(t), Step::Key(k)) => {
                t.remove(k);
            }
            (Container::Array(a), Step::Index(i)) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        }
    }
}

/// The path of every value of the tree, parents before children.
fn value_paths(table: &toml::Table) -> Vec<Vec<Step>> {
    fn walk(value: &toml::Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(path.clone());
        match value {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    path.push(Step::Key(k.clone()));
                    walk(v, path, out);
                    path.pop();
                }
            }
            toml::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(v, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, v) in table {
        let mut path = vec![Step::Key(k.clone())];
        walk(v, &mut path, &mut out);
    }
    out
}

/// The value at `path`.
fn value_at<'t>(table: &'t toml::Table, path: &[Step]) -> Option<&'t toml::Value> {
    let (first, rest) = path.split_first()?;
    let Step::Key(key) = first else {
        return None;
    };
    let mut value = table.get(key)?;
    for step in rest {
        value = match (value, step) {
            (toml::Value::Table(t), Step::Key(k)) => t.get(k)?,
            (toml::Value::Array(a), Step::Index(i)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Calls `edit` with the container of `path`'s last step and that step.
fn edit_at(table: &mut toml::Table, path: &[Step], edit: impl FnOnce(&mut Container<'_>, &Step)) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut container = Container::Table(table);
    for step in parents {
        let Some(next) = container.into_child(step) else {
            return;
        };
        container = next;
    }
    edit(&mut container, last);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_split_by_class() {
        let text = b"a = 12\nb = \"x y\" # -3";
        assert_eq!(tokens(text, TokenClass::Number), [(4, 6), (19, 21)]);
        assert_eq!(tokens(text, TokenClass::Word), [(0, 1), (7, 8), (12, 15)]);
    }

    #[test]
    fn a_seed_gives_the_same_mutations() {
        let corpus = Corpus::read(&crate::corpus::workspace_root()).expect("corpus");
        let seed = corpus.circuits[0].text.as_bytes();
        let run = |s| {
            let mut m = Mutator::new(s, &corpus);
            (0..50)
                .map(|_| m.mutate(seed, Flavor::Toml))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn command_inputs_keep_a_header_and_edit_both_parts() {
        let corpus = Corpus::read(&crate::corpus::workspace_root()).expect("corpus");
        let seed = corpus.fits[0].text.as_bytes();
        let (line, file) = crate::command::split(seed);
        let mut m = Mutator::new(3, &corpus);
        let (mut headed, mut line_edited, mut file_edited) = (0, 0, 0);
        for _ in 0..300 {
            let mutant = m.mutate(seed, Flavor::CommandToml);
            let (tokens, body) = crate::command::split(&mutant);
            headed += usize::from(!tokens.is_empty());
            line_edited += usize::from(tokens != line);
            file_edited += usize::from(body != file);
        }
        assert!(headed > 280, "{headed}");
        assert!(
            line_edited > 60 && file_edited > 150,
            "{line_edited} {file_edited}"
        );
    }

    #[test]
    fn json_edits_mostly_keep_json_and_reach_duplicate_keys() {
        let corpus = Corpus::read(&crate::corpus::workspace_root()).expect("corpus");
        let seed = corpus.configs[0].config.text.as_bytes();
        let mut m = Mutator::new(11, &corpus);
        let (mut json, mut doubled) = (0, 0);
        for _ in 0..400 {
            let mut data = seed.to_vec();
            m.json(&mut data);
            let Some(crate::json::Json::Object(members)) =
                std::str::from_utf8(&data).ok().and_then(crate::json::parse)
            else {
                continue;
            };
            json += 1;
            let mut keys: Vec<&String> = members.iter().map(|(k, _)| k).collect();
            keys.sort();
            doubled += usize::from(keys.windows(2).any(|w| w[0] == w[1]));
        }
        assert!(json > 300 && doubled > 5, "{json} {doubled}");
    }
}
