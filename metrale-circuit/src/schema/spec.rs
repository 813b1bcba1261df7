//! The doc lines the JSON Schemas are generated from: for each table the loader reads, its keys
//! (the loader's own key tables) and one [`Key`] per key saying what its value is, what it
//! means, which schema version added it, and when it is required or refused; and the rules
//! between keys ([`Rule`]).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A [`Table`]'s keys are the loader's key tables, never a copy: a key the loader adds is in
//!   the schema at once (as undocumented, and `gaps` names it until it has a doc line).
//! - Everything is `const` data. A list of spellings is an enum's `SPELLINGS` or a loader
//!   table; a rule over spellings is a function of the model ([`Is::Where`], [`Rule::Follows`]),
//!   so no spelling list is typed twice.

/// What a key's value is.
pub(super) enum Value {
    /// Anything: a key the loader accepts and does not interpret.
    Any,
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max` (a count: TOML integers the loader reads as `u64`).
    Count {
        /// The least value.
        min: u64,
        /// The largest value.
        max: u64,
    },
    /// One of these integers.
    Ints(&'static [u64]),
    /// Any TOML integer, of either sign (a layer rule's offset).
    Int,
    /// Any string.
    Text,
    /// A string of `min..=max` characters (`max` of `u64::MAX`: no bound).
    Chars {
        /// The fewest characters.
        min: u64,
        /// The most characters.
        max: u64,
    },
    /// A lower snake-case name, `[a-z][a-z0-9_]*` (`is_snake_identifier`).
    Snake,
    /// A name that becomes a Rust identifier (the loader's `Walk::identifier`): lower snake
    /// case, at most `MAX_NAME_BYTES`, not a Rust keyword, and none of `not`.
    Ident {
        /// Names refused besides the keywords.
        not: &'static [&'static str],
    },
    /// A layer kind: a name `camel_case` turns into a Rust type (`names`).
    LayerKind,
    /// One of these spellings.
    Enum(&'static [&'static str]),
    /// One of these spellings, each with what it means (for an editor's completion).
    Documented(&'static [&'static str], fn(&str) -> &'static str),
    /// A state's format: a dtype, or `{key}` with the key a Rust identifier; with `packings`, also
    /// a layout's name (a Rust identifier, not a dtype's spelling).
    Format {
        /// A layout's name is valid too.
        packings: bool,
    },
    /// A shape expression; `axes`: whether ` x ` may join axes (a shape), else one axis (a
    /// window, a derived dim, a fallback).
    Expr {
        /// More than one axis allowed.
        axes: bool,
    },
    /// An index (a `shares` table's `layer`): a one-axis expression whose literals may be 0.
    Index,
    /// A dotted key path into a `config.json` (`text_config.hidden_size`).
    KeyPath,
    /// A key path that may project over a list from [`Document::config_expr_since`] on
    /// (`block_configs[*].attention.no_op`: one `[*]`, after the list's key, followed by the
    /// end or by `.`); before it, a key path without `[*]`.
    KeyProjection,
    /// A figure computed from a `config.json`: an expression over its keys from the version
    /// [`Document::config_expr_since`] on (`embedding_dim * qk_dim_factor`); before it,
    /// `older` (a key path, or a fallback's one-axis shape expression; any other value: no
    /// string at all).
    ConfigExpr {
        /// What the value is before config expressions: a [`Value::KeyPath`], a
        /// [`Value::Expr`], or another value (a count), which no string is.
        older: &'static Value,
    },
    /// A state of a block, `<block>.<state>`: two lower snake-case names joined by a dot.
    StateRef,
    /// An array of `item`.
    List {
        /// Each item.
        item: &'static Value,
        /// The fewest items.
        min: u64,
        /// The most items (`u64::MAX`: no bound).
        max: u64,
        /// Each item at most once.
        unique: bool,
    },
    /// A table of names the file chooses (`[block.<name>]`), each holding a `value`.
    Map {
        /// Each name.
        name: &'static Value,
        /// Each entry's value.
        value: &'static Value,
        /// What an entry is, its description.
        entry: &'static str,
        /// The fewest entries.
        min: u64,
        /// The most entries (`u64::MAX`: no bound).
        max: u64,
    },
    /// Only the names of a table's keys (a condition narrowing a [`Value::Map`]).
    Names(&'static Value),
    /// A table whose keys are the loader's.
    Table(&'static Table),
    /// One of these values.
    Either(&'static [Value]),
}

/// A count of any size a TOML integer the loader reads can have.
pub(super) const COUNT: Value = Value::Count {
    min: 0,
    max: u64::MAX,
};

/// A count of at least 1.
pub(super) const POSITIVE: Value = Value::Count {
    min: 1,
    max: u64::MAX,
};

/// A Rust identifier with no name refused besides the keywords.
pub(super) const IDENT: Value = Value::Ident { not: &[] };

/// One key of a table: its doc line.
pub(super) struct Key {
    /// The key, as the loader's table spells it.
    pub name: &'static str,
    /// What its value is.
    pub value: Value,
    /// What it means: the key's `description`, agreeing with the docs' prose.
    pub doc: &'static str,
    /// The schema version (`schema = N`) that added it; 1 in a file without versions.
    pub since: u64,
    /// Required in every file (a circuit: every file but a block library).
    pub required: bool,
    /// Spellings of an [`Value::Enum`] a later schema version added: (spelling, version).
    pub newer: &'static [(&'static str, u64)],
    /// What holds of it under a condition.
    pub under: &'static [Under],
}

impl Key {
    /// An optional key of schema 1 with no condition.
    pub(super) const fn new(name: &'static str, value: Value, doc: &'static str) -> Key {
        Key {
            name,
            value,
            doc,
            since: 1,
            required: false,
            newer: &[],
            under: &[],
        }
    }

    /// Required.
    pub(super) const fn required(self) -> Key {
        Key {
            required: true,
            ..self
        }
    }

    /// Added by schema `version`.
    pub(super) const fn since(self, version: u64) -> Key {
        Key {
            since: version,
            ..self
        }
    }

    /// With spellings added by later schema versions.
    pub(super) const fn newer(self, newer: &'static [(&'static str, u64)]) -> Key {
        Key { newer, ..self }
    }

    /// With what holds of it under conditions.
    pub(super) const fn under(self, under: &'static [Under]) -> Key {
        Key { under, ..self }
    }
}

/// What holds of a key when a condition does.
pub(super) struct Under {
    /// The condition.
    pub when: When,
    /// What holds then.
    pub then: Then,
}

/// What holds of a key under a condition.
pub(super) enum Then {
    /// It must be written.
    Required,
    /// It must not be written.
    Forbidden,
    /// Its value must also be this.
    Also(Value),
}

/// A condition: every test holds.
pub(super) struct When {
    /// Where the tests' paths start.
    pub at: At,
    /// The tests, all of which hold.
    pub tests: &'static [Test],
}

/// Where a condition's paths start.
pub(super) enum At {
    /// The table holding the key (each entry of a list or map tested on its own).
    Table,
    /// The file's top level.
    Root,
}

/// One test of a condition: the key at `path` is `is`.
pub(super) struct Test {
    /// Keys from where the condition starts (`["layout", "kind"]`).
    pub path: &'static [&'static str],
    /// What the value there is.
    pub is: Is,
}

/// What a tested key is.
pub(super) enum Is {
    /// Written, and one of these spellings.
    OneOf(&'static [&'static str]),
    /// Written, and one of the spellings for which the function holds.
    Where(&'static [&'static str], fn(&str) -> bool),
    /// Written.
    Present,
    /// Not written.
    Absent,
}

/// A rule between keys of one table.
pub(super) enum Rule {
    /// How many of `keys` may be written, under `when` (always when `None`).
    Count {
        /// The keys.
        keys: &'static [&'static str],
        /// How many of them.
        how: How,
        /// When the rule holds.
        when: Option<When>,
    },
    /// `key` follows from `on`: when `on` is the spelling `s` (one of `spellings`), `key` is
    /// `map(s)`, if that is `Some`.
    Follows {
        /// The key whose value follows.
        key: &'static str,
        /// The key it follows from.
        on: &'static str,
        /// The spellings of `on`.
        spellings: &'static [&'static str],
        /// `key`'s one spelling for each spelling of `on`.
        map: fn(&str) -> Option<&'static str>,
    },
}

/// How many keys of a [`Rule::Count`] may be written.
pub(super) enum How {
    /// None or one.
    AtMostOne,
    /// Exactly one.
    ExactlyOne,
    /// One or more.
    AtLeastOne,
    /// All of them, or none.
    AllOrNone,
}

/// A table the loader reads.
pub(super) struct Table {
    /// How a gap names it (`` `[layout]` ``).
    pub name: &'static str,
    /// Its keys: the loader's tables, concatenated (`[kv]` takes `KV_KEYS` and `WINDOW_KEYS`).
    pub keys: &'static [&'static [&'static str]],
    /// One doc line per key.
    pub docs: &'static [Key],
    /// The rules between its keys.
    pub rules: &'static [Rule],
}

/// One file format: its top-level table and what is said of the whole file.
pub(super) struct Document {
    /// The schema's title.
    pub title: &'static str,
    /// The schema's description.
    pub description: &'static str,
    /// The top level.
    pub root: &'static Table,
    /// The key of the top level that holds the schema version (`schema`), if the format has
    /// versions; and the versions the loader reads, oldest first.
    pub versions: Option<(&'static str, &'static [u64])>,
    /// The version whose expressions may subtract (`-`); earlier ones only add and multiply.
    pub minus_since: u64,
    /// The version whose `[config]` figures may be expressions over config keys (schema 4);
    /// earlier ones read a key path alone.
    pub config_expr_since: u64,
    /// A file holding only these top-level keys is a block library, of which no key is
    /// required (a circuit file and a block library share the schema).
    pub library: Option<&'static [&'static str]>,
}
