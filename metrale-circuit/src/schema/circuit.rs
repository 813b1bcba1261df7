//! The doc lines of the circuit file (and of a block library): one [`Key`] per key of each
//! table the loader reads, agreeing with docs/circuit-schema.md.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Each table's keys are the loader's key tables (`top`, `blocks`, `nodes`, `checkpoints`,
//!   `config`); the spellings are the model's `SPELLINGS` and the loader's tables; the limits are
//!   `text::limits`. A key a stage adds needs one doc line here, and `gaps` says which until it
//!   has one.
//! - The layout kinds a condition names (`"interval"`, ...) are checked against `[layout] kind`'s
//!   spellings by the generator, so a renamed kind is a gap, not a silent condition.

use super::spec::{
    At, COUNT, Document, How, IDENT, Is, Key, POSITIVE, Rule, Table, Test, Then, Under, Value, When,
};
use crate::load::blocks::{BLOCK_KEYS, PART_KEYS, SHARES_KEYS, STATE_KEYS};
use crate::load::checkpoints::CHECKPOINT_KEYS;
use crate::load::config::rules::{
    RULE_INDICES_KEYS, RULE_INT_KEYS, RULE_KEYS, SELECTORS as RULE_SELECTORS,
    TABLE_KEYS as RULES_TABLE_KEYS,
};
use crate::load::config::{
    CONFIG_KEYS, DIM_CONDITION_KEYS, DIM_SOURCE_KEYS, KIND_SOURCES, LAYER_INDICES_KEYS,
    LAYER_TYPES_KEYS,
};
use crate::load::names::reserved::{ARCH_ITEMS, DIMS_METHODS};
use crate::load::nodes::NODE_KEYS;
use crate::load::text::limits::{
    MAX_BLOCKS, MAX_BLOCKS_PER_LIST, MAX_CHECKPOINTS, MAX_DIMS, MAX_LAYER_KINDS, MAX_LAYERS,
    MAX_LIBRARIES, MAX_NODES_PER_BLOCK, MAX_PACKINGS_PER_STATE, MAX_PARTS_PER_PACKING,
    MAX_STATES_PER_BLOCK,
};
use crate::load::top::{
    CIRCUIT_KEYS, INTERVAL_KINDS, LAYOUT_KEYS, LAYOUT_KINDS, LIBRARY_KEYS, SCHEMAS,
};
use crate::model::{Lifetime, StateAccess, StateDtype, StateKind, VerifySteps};

/// The circuit file.
pub(super) const CIRCUIT: Document = Document {
    title: "metrale circuit",
    description: "A metrale circuit (docs/circuit-schema.md): the state a model keeps between \
                  decode steps, per block, with its layout and checkpoints. A block library \
                  (`blocks/<name>.toml`, holding only `include` and `[block.<name>]`) is checked \
                  by the same schema. Generated from the loader's key tables by `metrale-codegen \
                  schema circuit`.",
    root: &TOP,
    versions: Some(("schema", &SCHEMAS)),
    // Schema 2 added subtraction to shapes (`resolve`: a schema-1 shape that subtracts is refused).
    minus_since: 2,
    // Schema 4 made `[config]` figures expressions over config keys (`load::config`).
    config_expr_since: 4,
    library: Some(LIBRARY_KEYS),
};

/// A dim: an identifier, never `x` (it separates a shape's axes).
const DIM: Value = Value::Ident { not: &["x"] };

/// A derived dim: a dim, and a method of the generated `Dims`, so none of its other methods.
const DERIVED_DIM: Value = Value::Ident { not: &DERIVED_NOT };

/// The names a derived dim may not take: `x` and `reserved::DIMS_METHODS`.
const DERIVED_NOT: [&str; 1 + DIMS_METHODS.len()] = {
    let mut not = ["x"; 1 + DIMS_METHODS.len()];
    let mut i = 0;
    while i < DIMS_METHODS.len() {
        not[i + 1] = DIMS_METHODS[i];
        i += 1;
    }
    not
};

/// A list of block names, each once.
const BLOCK_LIST: Value = Value::List {
    item: &IDENT,
    min: 0,
    max: MAX_BLOCKS_PER_LIST as u64,
    unique: true,
};

/// The top level.
const TOP: Table = Table {
    name: "the circuit's top level",
    keys: &[CIRCUIT_KEYS],
    docs: &[
        Key::new(
            "schema",
            Value::Ints(&SCHEMAS),
            "The schema version the file is written in, one the loader reads: a key or syntax \
             a later version added is refused in an earlier one, and a file of an earlier \
             version loads as it always did.",
        )
        .required(),
        Key::new(
            "arch",
            IDENT,
            "The architecture: the generated module's name, a Rust identifier in lower snake \
             case.",
        )
        .required(),
        Key::new("description", Value::Text, "Free text."),
        Key::new(
            "dims",
            Value::List {
                item: &DIM,
                min: 0,
                max: MAX_DIMS as u64,
                unique: true,
            },
            "The dim names shapes may read, each once: lower snake case, not a Rust keyword, \
             not `x`. Each checkpoint gives every one of them.",
        )
        .required(),
        Key::new(
            "include",
            Value::List {
                item: &Value::Snake,
                min: 0,
                max: MAX_LIBRARIES as u64,
                unique: true,
            },
            "Block libraries, each once: `\"x\"` reads `blocks/x.toml` beside the circuit.",
        ),
        Key::new(
            "layer_module",
            Value::Text,
            "Accepted, not interpreted (for the upstream metrale runtime).",
        ),
        Key::new(
            "draft_module",
            Value::Text,
            "Accepted, not interpreted (for the upstream metrale runtime).",
        ),
        Key::new(
            "prologue",
            BLOCK_LIST,
            "The blocks before the layers, in order, each once; an instance is named \
             `<block>`.",
        ),
        Key::new(
            "epilogue",
            BLOCK_LIST,
            "The blocks after the layers, in order, each once and none also in `prologue`; an \
             instance is named `<block>`.",
        ),
        Key::new(
            "draft",
            BLOCK_LIST,
            "The blocks of the draft head, each once; an instance is named `draft.<block>`, and \
             its KV sides take their blocks from the inputs' `[draft_kv]`.",
        ),
        Key::new(
            "layout",
            Value::Table(&LAYOUT),
            "Which blocks each layer has: an interval, list or pattern layout.",
        )
        .required(),
        Key::new(
            "derive",
            Value::Map {
                name: &DERIVED_DIM,
                value: &Value::Expr { axes: false },
                entry: "A derived dim: a one-axis expression over declared and derived dims \
                        (`conv_kernel - 1`), its value under each checkpoint the expression's \
                        checked fold.",
                min: 0,
                max: MAX_DIMS as u64,
            },
            "Dims computed from other dims: not listed in `dims`, never given by a checkpoint, \
             and read by shapes like any dim; each is a method of the generated `Dims`, so \
             not `on_tp`.",
        )
        .since(2),
        Key::new(
            "tensor_parallel",
            Value::List {
                item: &DIM,
                min: 0,
                max: MAX_DIMS as u64,
                unique: true,
            },
            "The declared dims a tensor-parallel rank holds a share of, each once (not a \
             derived dim, nor a dim a derived dim divides by): on T ranks a listed dim d is \
             d / T, or 1 when d < T divides T.",
        )
        .since(2),
        Key::new(
            "config",
            Value::Table(&CONFIG),
            "Where `metrale-codegen import` reads each checkpoint figure in a Hugging Face \
             `config.json`.",
        )
        .since(2),
        Key::new(
            "block",
            Value::Map {
                name: &IDENT,
                value: &Value::Table(&BLOCK),
                entry: "A block template (`[block.<name>]`): the state it keeps, and its nodes.",
                min: 0,
                max: MAX_BLOCKS as u64,
            },
            "The block templates, by name (a Rust identifier); a block may come from an \
             included library instead, and is defined once over all files.",
        ),
        Key::new(
            "checkpoint",
            Value::Map {
                name: &Value::Ident { not: &ARCH_ITEMS },
                value: &Value::Table(&CHECKPOINT),
                entry: "One set of weights (`[checkpoint.<name>]`): its layers and the value of \
                        every declared dim.",
                min: 1,
                max: MAX_CHECKPOINTS as u64,
            },
            "The checkpoints, by name (a Rust identifier, not `blocks` or `units`); at least \
             one, and the first one written is the default one.",
        )
        .required(),
    ],
    rules: &[],
};

/// A condition on the key's own table.
const fn here(tests: &'static [Test]) -> When {
    When {
        at: At::Table,
        tests,
    }
}

/// A condition on the file's top level.
const fn top(tests: &'static [Test]) -> When {
    When {
        at: At::Root,
        tests,
    }
}

/// The key at `path` is one of `kinds`.
const fn is(path: &'static [&'static str], kinds: &'static [&'static str]) -> Test {
    Test {
        path,
        is: Is::OneOf(kinds),
    }
}

/// `[layout] kind`, from `[layout]`.
const KIND: &[&str] = &["kind"];
/// `[layout] kind`, from the top level.
const LAYOUT_KIND: &[&str] = &["layout", "kind"];
/// A pattern layout without a `pattern` of its own: each checkpoint gives one.
const PATTERN_WITHOUT_ONE: &[Test] = &[
    is(LAYOUT_KIND, &["pattern"]),
    Test {
        path: &["layout", "pattern"],
        is: Is::Absent,
    },
];

/// `[layout]`.
const LAYOUT: Table = Table {
    name: "`[layout]`",
    keys: &[LAYOUT_KEYS],
    docs: &[
        Key::new(
            "kind",
            Value::Enum(LAYOUT_KINDS),
            "How layers get their kinds: `interval` (every `period`-th layer is \
             `full_attention`, the others `linear_attention`), `list` (each checkpoint lists \
             `layer_kinds`) or `pattern` (a string of `[layout.symbols]` characters, schema 2).",
        )
        .required()
        .newer(&[("pattern", 2)]),
        Key::new(
            "period",
            POSITIVE,
            "Interval layouts only, required there: layer i is `full_attention` when \
             (i + 1) % period == 0, else `linear_attention`.",
        )
        .under(&[
            Under {
                when: here(&[is(KIND, &["interval"])]),
                then: Then::Required,
            },
            Under {
                when: here(&[is(KIND, &["list", "pattern"])]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "symbols",
            Value::Map {
                name: &Value::Chars { min: 1, max: 1 },
                value: &IDENT,
                entry: "The layer kind this one character stands for (lower snake case).",
                min: 0,
                max: MAX_LAYER_KINDS as u64,
            },
            "Pattern layouts only, required there: each key one character, each value the \
             layer kind it stands for in a pattern (`M = \"mamba\"`).",
        )
        .since(2)
        .under(&[
            Under {
                when: here(&[is(KIND, &["pattern"])]),
                then: Then::Required,
            },
            Under {
                when: here(&[is(KIND, &["interval", "list"])]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "pattern",
            Value::Chars {
                min: 1,
                max: u64::MAX,
            },
            "Pattern layouts only, optional: one `[layout.symbols]` character per layer, \
             repeated (and cut) to cover a checkpoint's layers.",
        )
        .since(2)
        .under(&[Under {
            when: here(&[is(KIND, &["interval", "list"])]),
            then: Then::Forbidden,
        }]),
        Key::new(
            "blocks",
            Value::Map {
                name: &Value::LayerKind,
                value: &Value::List {
                    item: &IDENT,
                    min: 1,
                    max: MAX_BLOCKS_PER_LIST as u64,
                    unique: true,
                },
                entry: "This layer kind's blocks, in order: at least one, each once.",
                min: 0,
                max: MAX_LAYER_KINDS as u64,
            },
            "Each layer kind's blocks (`[layout.blocks]`); every kind the layout produces needs \
             an entry. An interval layout's kinds are `linear_attention` and \
             `full_attention`.",
        )
        .required()
        .under(&[Under {
            when: here(&[is(KIND, &["interval"])]),
            then: Then::Also(Value::Names(&Value::Enum(INTERVAL_KINDS))),
        }]),
    ],
    rules: &[],
};

/// `[checkpoint.<name>]`.
const CHECKPOINT: Table = Table {
    name: "`[checkpoint.<name>]`",
    keys: &[CHECKPOINT_KEYS],
    docs: &[
        Key::new(
            "hf",
            Value::Text,
            "The source checkpoint, e.g. its Hugging Face id (`Qwen/Qwen3.5-27B`); not \
             interpreted.",
        ),
        Key::new(
            "layers",
            Value::Count {
                min: 1,
                max: MAX_LAYERS,
            },
            "Interval and pattern layouts, required there: the layer count.",
        )
        .under(&[
            Under {
                when: top(&[is(LAYOUT_KIND, &["interval", "pattern"])]),
                then: Then::Required,
            },
            Under {
                when: top(&[is(LAYOUT_KIND, &["list"])]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "layer_kinds",
            Value::List {
                item: &Value::LayerKind,
                min: 1,
                max: MAX_LAYERS,
                unique: false,
            },
            "List layouts, required there: each layer's kind, one per layer, each a key of \
             `[layout.blocks]`.",
        )
        .under(&[
            Under {
                when: top(&[is(LAYOUT_KIND, &["list"])]),
                then: Then::Required,
            },
            Under {
                when: top(&[is(LAYOUT_KIND, &["interval", "pattern"])]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "pattern",
            Value::Chars {
                min: 1,
                max: u64::MAX,
            },
            "Pattern layouts only: exactly `layers` `[layout.symbols]` characters, one per \
             layer, overriding the layout's `pattern`; required when the layout has none.",
        )
        .since(2)
        .under(&[
            Under {
                when: top(&[is(LAYOUT_KIND, &["interval", "list"])]),
                then: Then::Forbidden,
            },
            Under {
                when: top(PATTERN_WITHOUT_ONE),
                then: Then::Required,
            },
        ]),
        Key::new(
            "dims",
            Value::Map {
                name: &DIM,
                value: &COUNT,
                entry: "This dim's value under the checkpoint.",
                min: 0,
                max: MAX_DIMS as u64,
            },
            "The value of every declared dim, and of no other (a derived dim is computed, never \
             given).",
        )
        .required(),
    ],
    rules: &[],
};

/// `[block.<name>]`.
const BLOCK: Table = Table {
    name: "`[block.<name>]`",
    keys: &[BLOCK_KEYS],
    docs: &[
        Key::new(
            "stream_in",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "stream_out",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "outputs",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "state",
            Value::List {
                item: &Value::Table(&STATE),
                min: 0,
                max: MAX_STATES_PER_BLOCK as u64,
                unique: false,
            },
            "The states the block keeps between decode steps (`[[block.<name>.state]]`), each \
             saying what ONE unit holds; how many units exist is a plan input.",
        ),
        Key::new(
            "node",
            Value::List {
                item: &Value::Table(&NODE),
                min: 0,
                max: MAX_NODES_PER_BLOCK as u64,
                unique: false,
            },
            "The block's nodes (`[[block.<name>.node]]`): which node touches which state, and \
             how. A block without nodes declares state only.",
        ),
    ],
    rules: &[],
};

/// A kind that is not `recurrent`.
fn not_recurrent(kind: &str) -> bool {
    StateKind::parse(kind) != Some(StateKind::Recurrent)
}

/// A kind that is `recurrent`.
fn recurrent(kind: &str) -> bool {
    !not_recurrent(kind)
}

/// A kind that is not `paged_kv`.
fn not_paged_kv(kind: &str) -> bool {
    StateKind::parse(kind) != Some(StateKind::PagedKv)
}

/// A kind whose unit copies no state (`of` is refused).
fn copies_nothing(kind: &str) -> bool {
    StateKind::parse(kind).is_some_and(|k| !k.copies_a_state())
}

/// The one lifetime of a kind.
fn lifetime_of(kind: &str) -> Option<&'static str> {
    StateKind::parse(kind).map(|k| Lifetime::of_kind(k).name())
}

/// What one unit of a kind is.
fn unit_of(kind: &str) -> &'static str {
    StateKind::parse(kind).map_or("", StateKind::unit)
}

/// The state's `kind` is one the function holds for.
const fn kind_where(holds: fn(&str) -> bool) -> Test {
    Test {
        path: &["kind"],
        is: Is::Where(&StateKind::SPELLINGS, holds),
    }
}

/// `[[block.<name>.state]]`.
const STATE: Table = Table {
    name: "`[[block.<name>.state]]`",
    keys: &[STATE_KEYS],
    docs: &[
        Key::new(
            "id",
            IDENT,
            "The state's id, unique in its block; an instance is `<prefix>.<id>` (`l0.gdn.h`).",
        )
        .required(),
        Key::new(
            "kind",
            Value::Documented(&StateKind::SPELLINGS, unit_of),
            "What the state is: so what one unit of it is, how long it lives, and which plan \
             input counts its units.",
        )
        .required(),
        Key::new(
            "lifetime",
            Value::Enum(&Lifetime::SPELLINGS),
            "Optional: how long a unit lives; when given, the kind's one lifetime.",
        ),
        Key::new(
            "format",
            Value::Format { packings: true },
            "The storage element: a dtype, `{key}` for a format the plan inputs choose \
             (`{kv_cache_dtype}`, the key a Rust identifier; it may hold a dtype or one of the \
             state's `packings`), or the name of one of its `packings` (schema 3). Required unless \
             `shares` is given, and refused with it.",
        )
        .under(&[
            Under {
                when: here(&[ABSENT_SHARES]),
                then: Then::Required,
            },
            Under {
                when: here(&[ABSENT_LAYOUTS]),
                then: Then::Also(Value::Format { packings: false }),
            },
            Under {
                when: here(&[PRESENT_SHARES]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "shape",
            Value::Expr { axes: true },
            "What one unit holds: axes joined by ` x `, each a sum of products of dims and \
             literals > 0 (`name/lit` and `name/name` divide, rounding up; schema 2 may \
             subtract). Required unless `of`, `shares` or `packings` is given (with `packings`, \
             required when `format` is a `{key}`), refused with `of` or `shares`, and refused \
             when `format` names a packing (the unit is its parts).",
        )
        .under(&[
            Under {
                when: here(&[
                    Test {
                        path: &["of"],
                        is: Is::Absent,
                    },
                    ABSENT_SHARES,
                    ABSENT_LAYOUTS,
                ]),
                then: Then::Required,
            },
            Under {
                when: here(&[Test {
                    path: &["of"],
                    is: Is::Present,
                }]),
                then: Then::Forbidden,
            },
            Under {
                when: here(&[PRESENT_SHARES]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "verify",
            Value::Enum(&VerifySteps::SPELLINGS),
            "Recurrent states only, required there: the verify intermediates it keeps, one per \
             verified row (`h_steps`) or `conv_steps` per verify slot.",
        )
        .under(&[
            Under {
                when: here(&[kind_where(recurrent)]),
                then: Then::Required,
            },
            Under {
                when: here(&[kind_where(not_recurrent)]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "of",
            IDENT,
            "`prefix_snapshot` and `ring_snapshot` only: the sibling state (one with a `shape`) \
             whose unit this one copies.",
        )
        .under(&[
            Under {
                when: here(&[kind_where(copies_nothing)]),
                then: Then::Forbidden,
            },
            Under {
                when: here(&[PRESENT_SHARES]),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "window",
            Value::Expr { axes: false },
            "`paged_kv` only: a sliding window, the tokens of each sequence the side keeps (a \
             one-axis expression, at least 1 under every checkpoint).",
        )
        .since(2)
        .under(NOT_FOR_A_READER),
        Key::new(
            "chunk",
            Value::Expr { axes: false },
            "`paged_kv` only, not beside `window`: chunked local attention, the tokens of one \
             attention chunk; the side keeps those of the current chunk (a one-axis expression, \
             at least 1 under every checkpoint).",
        )
        .since(3)
        .under(NOT_FOR_A_READER),
        Key::new(
            "tokens",
            Value::Expr { axes: false },
            "`paged_kv` only, not beside `window` or `chunk`: a fixed count of tokens a request \
             holds whatever it decodes, written once at prefill (cross-attention over an \
             encoder's positions); the side keeps `ceil(tokens / block_size)` blocks a sequence \
             (a one-axis expression over the dims).",
        )
        .since(4)
        .under(NOT_FOR_A_READER),
        Key::new(
            "shares",
            Value::Either(&[Value::StateRef, Value::Table(&SHARES)]),
            "`paged_kv` only: the state of an earlier layer whose KV this side reads instead of \
             keeping its own (KV shared across layers): `\"<block>.<state>\"` reads it from the \
             last earlier layer holding `<block>`, `{ state, layer }` from the layer a one-axis \
             expression over the dims gives. The side then has no `format`, `shape`, `window`, \
             `chunk`, `tokens` or `of`, and nodes only read it.",
        )
        .since(3)
        .under(&[Under {
            when: here(&[kind_where(not_paged_kv)]),
            then: Then::Forbidden,
        }]),
        Key::new(
            "packings",
            Value::Map {
                name: &Value::Ident {
                    not: &StateDtype::SPELLINGS,
                },
                value: &Value::List {
                    item: &Value::Table(&PART),
                    min: 1,
                    max: MAX_PARTS_PER_PACKING as u64,
                    unique: false,
                },
                entry: "A unit made of parts, in unit order: each part from the byte the one \
                        before ends at.",
                min: 1,
                max: MAX_PACKINGS_PER_STATE as u64,
            },
            "Units made of parts, by name (schema 3): `format` names one (the state is always \
             that packing), or a `{key}` holds a dtype (`shape`'s elements of it) or one of \
             them (`kv_cache_dtype = \"fp8_ds_mla\"`: 512 fp8 values, 4 f32 scales and 64 bf16 \
             values a token). Every state of one key declares the same packing names. Refused \
             with `shares`.",
        )
        .since(3)
        .under(&[
            Under {
                when: here(&[PRESENT_SHARES]),
                then: Then::Forbidden,
            },
            Under {
                when: here(&[Test {
                    path: &["format"],
                    is: Is::OneOf(&StateDtype::SPELLINGS),
                }]),
                then: Then::Forbidden,
            },
        ]),
    ],
    rules: &[
        Rule::Follows {
            key: "lifetime",
            on: "kind",
            spellings: &StateKind::SPELLINGS,
            map: lifetime_of,
        },
        // A side keeps a sliding window, an attention chunk or a fixed count: one at most.
        Rule::Count {
            keys: &["window", "chunk", "tokens"],
            how: How::AtMostOne,
            when: None,
        },
    ],
};

/// `shares` is not written.
const ABSENT_SHARES: Test = Test {
    path: &["shares"],
    is: Is::Absent,
};

/// `packings` is not written.
const ABSENT_LAYOUTS: Test = Test {
    path: &["packings"],
    is: Is::Absent,
};

/// One part of a packing (`packings.<name> = [{ part, format, shape }]`, schema 3).
const PART: Table = Table {
    name: "a part of `packings`",
    keys: &[PART_KEYS],
    docs: &[
        Key::new(
            "part",
            IDENT,
            "The part's name, unique in its packing (`scales`): what `<state>_parts` and `plan \
             --json` call it.",
        )
        .required(),
        Key::new(
            "format",
            Value::Enum(&StateDtype::SPELLINGS),
            "Its element type, a dtype (`fp4` packs two a byte; a part's bytes are \
             `ceil(elements x bits / 8)`).",
        )
        .required(),
        Key::new(
            "shape",
            Value::Expr { axes: true },
            "Its elements per unit, a shape (`kv_lora_rank/128`).",
        )
        .required(),
    ],
    rules: &[],
};

/// `shares` is written.
const PRESENT_SHARES: Test = Test {
    path: &["shares"],
    is: Is::Present,
};

/// A reach (`window`, `chunk`): only for a KV side, and not for one that reads another layer's
/// KV (`shares`: its owner's reach is the one it reads).
const NOT_FOR_A_READER: &[Under] = &[
    Under {
        when: here(&[kind_where(not_paged_kv)]),
        then: Then::Forbidden,
    },
    Under {
        when: here(&[PRESENT_SHARES]),
        then: Then::Forbidden,
    },
];

/// `shares = { state, layer }` (schema 3).
const SHARES: Table = Table {
    name: "`shares`",
    keys: &[SHARES_KEYS],
    docs: &[
        Key::new(
            "state",
            Value::StateRef,
            "The state whose KV the side reads, `<block>.<state>`: a `paged_kv` side with a \
             `shape` that shares nothing.",
        )
        .required(),
        Key::new(
            "layer",
            Value::Index,
            "The layer whose KV the side reads, a one-axis expression over the dims (a layer \
             index the config gives; `\"0\"` is the first layer); under every checkpoint an earlier layer than every layer \
             holding the reader, holding `<block>`. Without it, the last earlier layer holding \
             `<block>`.",
        ),
    ],
    rules: &[],
};

/// `[[block.<name>.node]]`.
const NODE: Table = Table {
    name: "`[[block.<name>.node]]`",
    keys: &[NODE_KEYS],
    docs: &[
        Key::new(
            "id",
            Value::Any,
            "The node's name, shown in messages; otherwise accepted, not interpreted.",
        ),
        Key::new(
            "op",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "in",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "out",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "binding",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "role",
            Value::Any,
            "Accepted, not interpreted (dataflow, for the upstream metrale runtime).",
        ),
        Key::new(
            "state",
            Value::Map {
                name: &IDENT,
                value: &Value::Enum(&StateAccess::SPELLINGS),
                entry: "How the node touches this state: `read`, `write` (append), `update` (in \
                        place) or `snapshot`.",
                min: 0,
                max: u64::MAX,
            },
            "The states of its block this node touches, by id (`state = { h = \"update\" }`): \
             a recurrent state is updated by one node, a KV side written by one and read by \
             some, a cache touched by none.",
        ),
    ],
    rules: &[],
};

/// `[config]`.
const CONFIG: Table = Table {
    name: "`[config]`",
    keys: &[CONFIG_KEYS],
    docs: &[
        Key::new(
            "layers",
            Value::KeyPath,
            "The config key of the layer count (`num_hidden_layers`): a dotted path, a number \
             segment indexing a list.",
        )
        .required(),
        Key::new(
            "layer_types",
            Value::Table(&LAYER_TYPES),
            "`{ key, map }`: a list with one entry per layer, each a string or an integer, and \
             each entry's layer kind.",
        ),
        Key::new(
            "pattern",
            Value::KeyPath,
            "Pattern layouts only: the key of a string with one `[layout.symbols]` character \
             per layer (Nemotron-H's `hybrid_override_pattern`).",
        )
        .under(&[Under {
            when: top(&[is(LAYOUT_KIND, &["interval", "list"])]),
            then: Then::Forbidden,
        }]),
        Key::new(
            "layer_indices",
            Value::Table(&LAYER_INDICES),
            "`{ base, kinds }`: per layer kind, the key of a list of its layers' indices, \
             counted from `base`.",
        ),
        Key::new(
            "layer_rules",
            Value::Table(&LAYER_RULES),
            "`[config.layer_rules]` (schema 3): layer kinds by rule, an ordered list of rules \
             (every N-th layer with an offset, listed indices, the last K layers), later rules \
             overriding earlier ones, and a `default` for the layers no rule names.",
        )
        .since(3),
        Key::new(
            "interval",
            Value::KeyPath,
            "The key of an integer that must equal `[layout] period` (interval layouts) or the \
             length of `[layout] pattern` (pattern layouts).",
        )
        .under(&[
            Under {
                when: top(&[is(LAYOUT_KIND, &["list"])]),
                then: Then::Forbidden,
            },
            Under {
                when: top(PATTERN_WITHOUT_ONE),
                then: Then::Forbidden,
            },
        ]),
        Key::new(
            "dims",
            Value::Map {
                name: &DIM,
                value: &Value::Either(&[
                    CONFIG_FIGURE,
                    Value::Table(&DIM_SOURCE),
                    Value::Table(&DIM_CONDITION),
                ]),
                entry: "Where this dim is: a key path (schema 4: an expression over config \
                        keys), `{ key, or }`, or (schema 4) `{ if, then, else, or }`.",
                min: 0,
                max: MAX_DIMS as u64,
            },
            "Each declared dim's config key (`[config.dims]`): every declared dim, and no \
             derived one.",
        )
        .required(),
    ],
    rules: &[
        // One source of layer kinds, but `layer_rules` may go beside `layer_types` (the rules
        // when the config has no list).
        Rule::Count {
            keys: &["layer_types", "pattern", "layer_indices"],
            how: How::AtMostOne,
            when: None,
        },
        Rule::Count {
            keys: &["pattern", "layer_indices", "layer_rules"],
            how: How::AtMostOne,
            when: None,
        },
        // A list layout, or a pattern layout without its own pattern, needs its layers' kinds
        // from the config.
        Rule::Count {
            keys: &KIND_SOURCES,
            how: How::AtLeastOne,
            when: Some(top(&[is(LAYOUT_KIND, &["list"])])),
        },
        Rule::Count {
            keys: &KIND_SOURCES,
            how: How::AtLeastOne,
            when: Some(top(PATTERN_WITHOUT_ONE)),
        },
    ],
};

/// An integer of a layer rule: a number, a config key, or `{ key, or }`.
const RULE_INT: Value = Value::Either(&[Value::Int, Value::KeyPath, Value::Table(&RULE_INT_TABLE)]);

/// `[config.layer_rules]`.
const LAYER_RULES: Table = Table {
    name: "`[config.layer_rules]`",
    keys: &[RULES_TABLE_KEYS],
    docs: &[
        Key::new(
            "default",
            Value::LayerKind,
            "The kind of every layer no rule names: required when the rules can leave a layer \
             without a kind.",
        ),
        Key::new(
            "rules",
            Value::List {
                item: &Value::Table(&LAYER_RULE),
                min: 1,
                max: u64::MAX,
                unique: false,
            },
            "The rules, in order: a later rule overrides an earlier one on the layers both \
             name.",
        )
        .required(),
    ],
    rules: &[],
};

/// One rule of `[config.layer_rules]`.
const LAYER_RULE: Table = Table {
    name: "a rule of `[config.layer_rules]`",
    keys: &[RULE_KEYS],
    docs: &[
        Key::new(
            "every",
            Value::Either(&[POSITIVE, Value::KeyPath, Value::Table(&RULE_INT_TABLE)]),
            "Names every N-th layer (with `offset`): N at least 1, a number, a config key or \
             `{ key, or }`.",
        ),
        Key::new(
            "offset",
            RULE_INT,
            "`every` rules only: the layer of each period named, 0 to N - 1, or -N to -1 counted \
             from the period's end (-1: the last layer of each period); 0 when absent.",
        ),
        Key::new(
            "indices",
            Value::Either(&[
                Value::List {
                    item: &Value::Either(&[COUNT, Value::ConfigExpr { older: &COUNT }]),
                    min: 1,
                    max: u64::MAX,
                    unique: true,
                },
                Value::KeyPath,
                Value::Table(&RULE_INDICES_TABLE),
            ]),
            "Names the listed layers: a list written here (from schema 4 an entry may be an \
             expression over config keys), the config key of one, or `{ key, or }`: the \
             config's list, or `or` when the config omits the key or gives `null`.",
        ),
        Key::new(
            "base",
            Value::Ints(&[0, 1]),
            "`indices` rules only: what the first layer is counted as, 0 or 1; 0 when absent.",
        ),
        Key::new(
            "last",
            Value::Either(&[
                Value::Count {
                    min: 1,
                    max: MAX_LAYERS,
                },
                Value::KeyPath,
                Value::Table(&RULE_INT_TABLE),
            ]),
            "Names the last K layers: a number, a config key or `{ key, or }`.",
        ),
        Key::new(
            "kind",
            Value::LayerKind,
            "The kind of the layers the rule names.",
        )
        .required(),
    ],
    rules: &[
        Rule::Count {
            keys: &RULE_SELECTORS,
            how: How::AtLeastOne,
            when: None,
        },
        // `last` may restrict the other two; they exclude each other.
        Rule::Count {
            keys: &["every", "indices"],
            how: How::AtMostOne,
            when: None,
        },
    ],
};

/// A rule's `indices` written as `{ key, or }`.
const RULE_INDICES_TABLE: Table = Table {
    name: "a rule's `indices = { key, or }`",
    keys: &[RULE_INDICES_KEYS],
    docs: &[
        Key::new(
            "key",
            Value::KeyPath,
            "The config key of the list of layer indices.",
        )
        .required(),
        Key::new(
            "or",
            Value::List {
                item: &COUNT,
                min: 0,
                max: u64::MAX,
                unique: true,
            },
            "The layer indices when the config omits the key or gives `null` (the config \
             class's default); may be empty: no layer.",
        ),
    ],
    rules: &[],
};

/// A rule's integer written as `{ key, or }`.
const RULE_INT_TABLE: Table = Table {
    name: "a rule's `{ key, or }`",
    keys: &[RULE_INT_KEYS],
    docs: &[
        Key::new("key", Value::KeyPath, "The config key of the integer.").required(),
        Key::new(
            "or",
            Value::Int,
            "The integer when the key is absent or `null`: where a config class's default goes.",
        ),
    ],
    rules: &[],
};

/// `[config] layer_types`.
const LAYER_TYPES: Table = Table {
    name: "`[config] layer_types`",
    keys: &[LAYER_TYPES_KEYS],
    docs: &[
        Key::new(
            "key",
            Value::KeyProjection,
            "The key of the list of layer types, one entry per layer; from schema 4 it may \
             project a value of each entry (`block_configs[*].attention.no_op`).",
        )
        .required(),
        Key::new(
            "map",
            Value::Map {
                name: &Value::Text,
                value: &Value::LayerKind,
                entry: "The layer kind of layers of this entry (an integer entry is matched by \
                        its spelling: `\"0\" = \"linear\"`).",
                min: 1,
                max: u64::MAX,
            },
            "Each entry's layer kind, a kind of the layout: at least one.",
        )
        .required(),
    ],
    rules: &[],
};

/// `[config] layer_indices`.
const LAYER_INDICES: Table = Table {
    name: "`[config] layer_indices`",
    keys: &[LAYER_INDICES_KEYS],
    docs: &[
        Key::new(
            "base",
            Value::Count { min: 0, max: 1 },
            "The index the config's lists give the first layer: 0 or 1.",
        )
        .required(),
        Key::new(
            "kinds",
            Value::Map {
                name: &Value::LayerKind,
                value: &Value::KeyPath,
                entry: "The key of the list of this kind's layer indices.",
                min: 1,
                max: u64::MAX,
            },
            "Per layer kind, the key of its layers' indices; together they cover every layer \
             once.",
        )
        .required(),
    ],
    rules: &[],
};

/// A figure read from a config: a key path; from schema 4 an expression over config keys.
const CONFIG_FIGURE: Value = Value::ConfigExpr {
    older: &Value::KeyPath,
};

/// A `[config.dims]` entry written as a table.
const DIM_SOURCE: Table = Table {
    name: "a `[config.dims]` entry",
    keys: &[DIM_SOURCE_KEYS],
    docs: &[
        Key::new(
            "key",
            CONFIG_FIGURE,
            "The dim's config key (schema 4: an expression over config keys).",
        )
        .required(),
        Key::new(
            "or",
            Value::ConfigExpr {
                older: &Value::Expr { axes: false },
            },
            "Used when a key the value reads is absent or `null`: a one-axis expression over \
             the other declared dims (schema 4: a config expression over the declared dims \
             and config keys, `/` flooring).",
        ),
    ],
    rules: &[],
};

/// Schema 4, a `[config.dims]` entry chosen by a condition.
const DIM_CONDITION: Table = Table {
    name: "a `[config.dims]` entry chosen by a condition",
    keys: &[DIM_CONDITION_KEYS],
    docs: &[
        Key::new(
            "if",
            Value::KeyPath,
            "The config key of the condition: true unless `false`, `null`, 0, empty or absent \
             (Python's truth).",
        )
        .required()
        .since(4),
        Key::new(
            "then",
            Value::Either(&[COUNT, BRANCH]),
            "The value when the condition holds: an integer or an expression over config keys.",
        )
        .required(),
        Key::new(
            "else",
            Value::Either(&[COUNT, BRANCH]),
            "The value when it does not: an integer or an expression over config keys.",
        )
        .required(),
        Key::new(
            "or",
            Value::Bool,
            "The condition when the config omits the key or gives `null`: false unless written.",
        ),
    ],
    rules: &[],
};

/// A branch of a condition: an expression (only schema 4 has conditions).
const BRANCH: Value = Value::ConfigExpr {
    older: &Value::KeyPath,
};
