//! The doc lines of the inputs file: one [`Key`] per key of each table `inputs_file` reads,
//! agreeing with docs/inputs.md.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Each table's keys are `inputs_file`'s key tables; the dtypes are `StateDtype::SPELLINGS`,
//!   the pool policies `inputs_file`'s. A key the inputs file adds needs one doc line here, and
//!   `gaps` says which until it has one.
//! - Only what one file says by itself is here: counts that must agree with each other or with
//!   `[serving]` (`agree`) need arithmetic a JSON Schema does not have.

use super::spec::{
    At, COUNT, Document, How, Is, Key, POSITIVE, Rule, Table, Test, Then, Under, Value, When,
};
use crate::load::inputs_file::{
    CACHE_KEYS, CARRY_KEYS, DRAFT_KEYS, KV_KEYS, LOOKUP_KEYS, PARALLEL_KEYS, POLICIES, POOL_KEYS,
    RING_KEYS, SERVING_KEYS, SERVING_KV_KEYS, TOP_KEYS, TREE_KEYS, VERIFY_KEYS, WINDOW_KEYS,
};
use crate::model::StateDtype;

/// The inputs file.
pub(super) const INPUTS: Document = Document {
    title: "metrale inputs file",
    description: "The plan inputs of metrale (docs/inputs.md): how many units of each state \
                  an engine has (or the server they follow from) and the dtype of each format \
                  key. Generated from the loader's key tables by `metrale-codegen schema \
                  inputs`.",
    root: &TOP,
    versions: None,
    minus_since: 0,
    config_expr_since: 0,
    library: None,
};

/// A dtype spelling.
const DTYPE: Value = Value::Enum(&StateDtype::SPELLINGS);

/// A list of counts.
const COUNTS: Value = Value::List {
    item: &COUNT,
    min: 0,
    max: u64::MAX,
    unique: false,
};

/// A condition on the key's own table.
const fn here(tests: &'static [Test]) -> When {
    When {
        at: At::Table,
        tests,
    }
}

/// `[serving]` is not written (the top level).
const NO_SERVING: &[Test] = &[Test {
    path: &["serving"],
    is: Is::Absent,
}];

/// `h_steps` is written (`[serving]`).
const TIERS: &[Test] = &[Test {
    path: &["h_steps"],
    is: Is::Present,
}];

/// The top level.
const TOP: Table = Table {
    name: "the inputs file's top level",
    keys: &[&TOP_KEYS],
    docs: &[
        Key::new(
            "slots",
            COUNT,
            "Sequence slots of the recurrent pools, the padding dummy included. Required unless \
             `[serving]` derives it: a forgotten `slots` would size every recurrent pool at \
             zero.",
        )
        .under(&[Under {
            when: here(NO_SERVING),
            then: Then::Required,
        }]),
        Key::new(
            "formats",
            Value::Map {
                name: &Value::Snake,
                value: &Value::Either(&[DTYPE, Value::Snake]),
                entry: "What this format key holds: a dtype, or a packing its states declare \
                        (schema 3).",
                min: 0,
                max: u64::MAX,
            },
            "What each format key a circuit names holds: a dtype (`kv_cache_dtype = \"fp8\"`), \
             or the name of a layout every state of the key declares (`kv_cache_dtype = \
             \"fp8_ds_mla\"`); keys a circuit does not name are ignored, so one file serves \
             several circuits.",
        ),
        Key::new(
            "verify",
            Value::Table(&VERIFY),
            "The verify pools of a speculative serve. Absent: no verify intermediates and no \
             pre-verify checkpoints.",
        ),
        Key::new(
            "kv",
            Value::Table(&KV),
            "The main model's paged KV blocks, `blocks` of `block_size` tokens. Absent: its \
             `paged_kv` sides get no term.",
        ),
        Key::new(
            "draft_kv",
            Value::Table(&KV),
            "The draft head's paged KV blocks, like `[kv]`. Absent: its `paged_kv` sides get no \
             term.",
        ),
        Key::new(
            "draft_kv_dtype",
            DTYPE,
            "The dtype of the draft head's KV sides, when not their format key's; not a count, \
             so a `[serving]` profile passes it through.",
        ),
        Key::new(
            "caches",
            Value::Table(&CACHES),
            "How many units each cache kind has: plain counts default to 0, an absent group \
             gives its kinds no term.",
        ),
        Key::new(
            "serving",
            Value::Table(&SERVING),
            "The server, from which every count follows (`ServingProfile::inputs`); a count \
             the file also writes must be the derived one.",
        ),
        Key::new(
            "parallel",
            Value::Table(&PARALLEL),
            "Tensor- and pipeline-parallel ranks (1 and 1 when absent).",
        ),
        Key::new(
            "pool",
            Value::Table(&POOL),
            "The layout policy of what a request holds: the arenas (the default) or vLLM's \
             unified page pool.",
        ),
    ],
    rules: &[],
};

/// `[verify]`.
const VERIFY: Table = Table {
    name: "`[verify]`",
    keys: &[&VERIFY_KEYS],
    docs: &[
        Key::new(
            "h_steps",
            COUNTS,
            "One entry per verify slot, the dummy slot last: the `h` intermediates that slot \
             keeps (one per verified row). Its length is the number of verify slots.",
        )
        .required(),
        Key::new(
            "conv_steps",
            COUNT,
            "Conv-window intermediates per verify slot.",
        )
        .required(),
    ],
    rules: &[],
};

/// `[kv]` and `[draft_kv]`.
const KV: Table = Table {
    name: "`[kv]` and `[draft_kv]`",
    keys: &[&KV_KEYS, &WINDOW_KEYS],
    docs: &[
        Key::new("blocks", COUNT, "Blocks in the pool.").required(),
        Key::new("block_size", POSITIVE, "Tokens per block, at least 1.").required(),
        Key::new(
            "sequences",
            COUNT,
            "Concurrent sequences: a window key, for a circuit with a sliding-window side (the \
             three come together, or not at all).",
        ),
        Key::new(
            "chunk_tokens",
            COUNT,
            "Tokens one chunked-prefill step writes: a window key.",
        ),
        Key::new("max_tokens", COUNT, "The longest sequence: a window key."),
    ],
    rules: &[Rule::Count {
        keys: &WINDOW_KEYS,
        how: How::AllOrNone,
        when: None,
    }],
};

/// `[caches]`.
const CACHES: Table = Table {
    name: "`[caches]`",
    keys: &[&CACHE_KEYS],
    docs: &[
        Key::new(
            "prefix_snapshot_slots",
            COUNT,
            "Units of `prefix_snapshot` (prefix-cache snapshots); 0 when absent.",
        ),
        Key::new(
            "ring",
            Value::Table(&RING),
            "Units of `ring_snapshot`, the decode-rollback ring's copies: `ring_slots` x \
             `seq_slots`. Absent: no term.",
        ),
        Key::new(
            "carry",
            Value::Table(&CARRY),
            "The carried-state verify: `carry_stash` units (`slots`) and `carry_table` units \
             (`table_rows`). Absent: no term.",
        ),
        Key::new(
            "verify_table_rows",
            COUNT,
            "Units of `verify_table` and `accept_stash`; 0 when absent.",
        ),
        Key::new(
            "capture_rows",
            COUNT,
            "Units of `hidden_capture`; 0 when absent.",
        ),
        Key::new(
            "lookup",
            Value::Table(&LOOKUP),
            "The `prompt_lookup_index` (host memory): `sequences` x `history_tokens` entries. \
             Absent: no term.",
        ),
        Key::new(
            "tree",
            Value::Table(&TREE),
            "Units of `token_tree_mask`: `slots` x `nodes` x `nodes`. Absent: no term.",
        ),
        Key::new(
            "drafts",
            Value::Table(&DRAFTS),
            "Units of `draft_tokens`: `slots` x `positions`. Absent: no term.",
        ),
    ],
    rules: &[],
};

/// `caches.ring`.
const RING: Table = Table {
    name: "`caches.ring`",
    keys: &[&RING_KEYS],
    docs: &[
        Key::new("ring_slots", COUNT, "Ring slots per sequence slot.").required(),
        Key::new(
            "seq_slots",
            COUNT,
            "Sequence slots the ring covers, at most `slots`.",
        )
        .required(),
    ],
    rules: &[],
};

/// `caches.carry`.
const CARRY: Table = Table {
    name: "`caches.carry`",
    keys: &[&CARRY_KEYS],
    docs: &[
        Key::new(
            "slots",
            COUNT,
            "Stash slots: the verify slots, the dummy included.",
        )
        .required(),
        Key::new(
            "table_rows",
            COUNT,
            "Rows of the pointer and flag tables: a capacity, any count.",
        )
        .required(),
    ],
    rules: &[],
};

/// `caches.lookup`.
const LOOKUP: Table = Table {
    name: "`caches.lookup`",
    keys: &[&LOOKUP_KEYS],
    docs: &[
        Key::new("sequences", COUNT, "Sequences with an index.").required(),
        Key::new(
            "history_tokens",
            COUNT,
            "History tokens indexed per sequence.",
        )
        .required(),
    ],
    rules: &[],
};

/// `caches.tree`.
const TREE: Table = Table {
    name: "`caches.tree`",
    keys: &[&TREE_KEYS],
    docs: &[
        Key::new("slots", COUNT, "Verify slots with a tree.").required(),
        Key::new("nodes", COUNT, "Nodes per tree.").required(),
    ],
    rules: &[],
};

/// `caches.drafts`.
const DRAFTS: Table = Table {
    name: "`caches.drafts`",
    keys: &[&DRAFT_KEYS],
    docs: &[
        Key::new("slots", COUNT, "Verify slots with drafts.").required(),
        Key::new(
            "positions",
            COUNT,
            "Draft positions per slot (tree nodes under a token tree).",
        )
        .required(),
    ],
    rules: &[],
};

/// `[serving]`.
const SERVING: Table = Table {
    name: "`[serving]`",
    keys: &[&SERVING_KEYS],
    docs: &[
        Key::new("sequences", COUNT, "Concurrent sequences the server runs.").required(),
        Key::new(
            "verify_rows",
            COUNT,
            "K, the rows a speculative step verifies; absent or 0: no verify. At least 1 with \
             `h_steps`.",
        )
        .under(&[
            Under {
                when: here(TIERS),
                then: Then::Required,
            },
            Under {
                when: here(TIERS),
                then: Then::Also(POSITIVE),
            },
        ]),
        Key::new(
            "verify_batch",
            COUNT,
            "Sequences that verify at once (default: all of them); not with `h_steps`.",
        ),
        Key::new(
            "h_steps",
            Value::List {
                item: &COUNT,
                min: 1,
                max: u64::MAX,
                unique: false,
            },
            "Tiered verify slots: each slot's `h` rows, the dummy's last; not with \
             `verify_batch`, and only with `verify_rows` > 0.",
        ),
        Key::new(
            "table_rows",
            COUNT,
            "The verify and carry tables' fixed row capacity (default: as verified).",
        ),
        Key::new(
            "ring_dummy",
            Value::Bool,
            "Whether the ring covers the padding dummy too (default `true`).",
        ),
        Key::new(
            "kv",
            Value::Table(&SERVING_KV),
            "The KV blocks: `block_size`, and `tokens_per_sequence` or a fixed `blocks`.",
        ),
        Key::new(
            "draft_kv",
            Value::Bool,
            "Whether the draft head's pool is the main one's size (default `false`).",
        ),
        Key::new(
            "prefix_snapshots",
            COUNT,
            "Prefix-cache snapshots per sequence.",
        ),
        Key::new("ring_depth", COUNT, "Ring slots per slot; 0: no ring."),
        Key::new(
            "carry",
            Value::Bool,
            "Whether the verify is a carried-state one (default `false`).",
        ),
        Key::new(
            "tree_nodes",
            COUNT,
            "Token-tree nodes per verify slot; 0: no tree.",
        ),
        Key::new(
            "capture_rows",
            COUNT,
            "Hidden rows captured for the draft head.",
        ),
        Key::new(
            "lookup_history",
            COUNT,
            "Prompt-lookup history tokens per sequence; 0: no index.",
        ),
    ],
    rules: &[Rule::Count {
        keys: &["h_steps", "verify_batch"],
        how: How::AtMostOne,
        when: None,
    }],
};

/// `[serving.kv]`.
const SERVING_KV: Table = Table {
    name: "`[serving.kv]`",
    keys: &[&SERVING_KV_KEYS],
    docs: &[
        Key::new(
            "block_size",
            POSITIVE,
            "Tokens of one KV block, at least 1.",
        )
        .required(),
        Key::new(
            "tokens_per_sequence",
            COUNT,
            "Tokens each sequence holds: the pool is `ceil(sequences x tokens_per_sequence / \
             block_size)` blocks. Or `blocks`, not both.",
        ),
        Key::new(
            "blocks",
            COUNT,
            "A fixed pool of this many blocks. Or `tokens_per_sequence`, not both.",
        ),
        Key::new(
            "chunk_tokens",
            COUNT,
            "Tokens one chunked-prefill step writes: with it the profile gives the window \
             inputs.",
        ),
    ],
    rules: &[Rule::Count {
        keys: &["tokens_per_sequence", "blocks"],
        how: How::ExactlyOne,
        when: None,
    }],
};

/// `[parallel]`.
const PARALLEL: Table = Table {
    name: "`[parallel]`",
    keys: &[&PARALLEL_KEYS],
    docs: &[
        Key::new("tp", POSITIVE, "Tensor-parallel ranks (default 1)."),
        Key::new("pp", POSITIVE, "Pipeline-parallel ranks (default 1)."),
        Key::new(
            "pp_layers",
            Value::List {
                item: &POSITIVE,
                min: 0,
                max: u64::MAX,
                unique: false,
            },
            "Optional: each pipeline rank's layers, in rank order, `pp` counts of at least 1 \
             that sum to the layers.",
        ),
    ],
    rules: &[],
};

/// `[pool] policy = "arenas"`: the arenas take no figure of the vLLM pool.
const NOT_WITH_ARENAS: Under = Under {
    when: here(&[Test {
        path: &["policy"],
        is: Is::OneOf(&["arenas"]),
    }]),
    then: Then::Forbidden,
};

/// A figure of the vLLM pool only.
const VLLM_ONLY: &[Under] = &[NOT_WITH_ARENAS];

/// The pool's size, `pages` or `requests`: not under `policy = "arenas"`, nor beside
/// `[serving]` (whose sequences size the pool).
const POOL_SIZE: &[Under] = &[
    NOT_WITH_ARENAS,
    Under {
        when: When {
            at: At::Root,
            tests: &[Test {
                path: &["serving"],
                is: Is::Present,
            }],
        },
        then: Then::Forbidden,
    },
];

/// `[pool]`.
const POOL: Table = Table {
    name: "`[pool]`",
    keys: &[&POOL_KEYS],
    docs: &[
        Key::new(
            "policy",
            Value::Enum(&POLICIES),
            "`arenas` (the default: one arena region per term) or `vllm` (one device buffer of \
             equal pages, as vLLM lays it out).",
        )
        .required(),
        Key::new(
            "context",
            COUNT,
            "vLLM: the tokens one request may hold (`max_model_len`). A file may leave it to \
             `fit --for sequences --context N`; `plan` and `fit --for kv-blocks` refuse a pool \
             without it.",
        )
        .under(VLLM_ONLY),
        Key::new(
            "pages",
            COUNT,
            "vLLM: the pool's pages, the null page included (`num_gpu_blocks`). Or `requests`, \
             not both; neither under `[serving]`.",
        )
        .under(POOL_SIZE),
        Key::new(
            "requests",
            COUNT,
            "vLLM: the pool holds this many requests of `context` tokens, and the null page. \
             Or `pages`, not both; neither under `[serving]`.",
        )
        .under(POOL_SIZE),
        Key::new(
            "kernel_block",
            POSITIVE,
            "vLLM: the attention backend's kernel block, in tokens (FlashAttention: 16).",
        )
        .under(VLLM_ONLY),
        Key::new(
            "batched_tokens",
            COUNT,
            "vLLM: `max_num_batched_tokens`, the tokens of one batch.",
        )
        .under(VLLM_ONLY),
        Key::new(
            "batches_in_flight",
            COUNT,
            "vLLM: batches in flight (async scheduling: 2).",
        )
        .under(VLLM_ONLY),
        Key::new(
            "prefix_caching",
            Value::Bool,
            "vLLM: prefix caching (recurrent layers then in `align` mode).",
        )
        .under(VLLM_ONLY),
        Key::new(
            "checkpoint_alignment",
            POSITIVE,
            "vLLM: the checkpoint alignment in tokens, at least 1 (64 for Gated DeltaNet with \
             a FlashInfer prefill).",
        )
        .under(VLLM_ONLY),
        Key::new(
            "checkpoint_pages",
            COUNT,
            "vLLM: a recurrent layer's prefill-checkpoint pages in `align` mode.",
        )
        .under(VLLM_ONLY),
        Key::new(
            "speculative_tokens",
            COUNT,
            "vLLM: speculative tokens, one more recurrent page each.",
        )
        .under(VLLM_ONLY),
    ],
    rules: &[Rule::Count {
        keys: &["pages", "requests"],
        how: How::ExactlyOne,
        when: Some(When {
            at: At::Root,
            tests: &[
                Test {
                    path: &["pool", "policy"],
                    is: Is::OneOf(&["vllm"]),
                },
                Test {
                    path: &["serving"],
                    is: Is::Absent,
                },
            ],
        }),
    }],
};
