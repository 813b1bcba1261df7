//! `[pool]` of an inputs file: the layout policy of what a request holds. `policy = "arenas"`
//! (the default, also when the table is absent) or `policy = "vllm"` with vLLM's figures, each
//! defaulting to a default `vllm serve` ([`VllmPool::DEFAULT`]) but `context`, which has no
//! default: a file may leave it to the command line (`fit --for sequences --context`), and a
//! plan of a pool without it is refused by its caller ([`writes_context`] says which).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants: every key is located when refused; under `[serving]` the profile's sequences
//! size the pool, so `pages` and `requests` are refused there, and without it exactly one of
//! them is required; an absent `context` reads as 0, never as a guess; nothing here panics.

use std::ops::Range;

use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Table, Value, Walk, entries, field};
use crate::model::{PoolPages, PoolPolicy, VllmPool};

/// The keys of `[pool]`.
pub(crate) const POOL_KEYS: [&str; 11] = [
    "policy",
    "context",
    "pages",
    "requests",
    "kernel_block",
    "batched_tokens",
    "batches_in_flight",
    "prefix_caching",
    "checkpoint_alignment",
    "checkpoint_pages",
    "speculative_tokens",
];

/// The spellings of `pool.policy`.
pub(crate) const POLICIES: [&str; 2] = ["arenas", "vllm"];

/// Reads `[pool]`; `serving` says the file has a `[serving]` profile. `None` after an error.
pub(crate) fn pool(
    walk: &mut Walk<'_>,
    key: Range<usize>,
    value: &Value<'_>,
    serving: bool,
) -> Option<PoolPolicy> {
    let table = walk.table("pool", value)?;
    walk.check_keys(table, &POOL_KEYS, "`pool`");
    let Some((_, policy)) = field(table, "policy") else {
        walk.report(
            key,
            Diagnostic::error("missing key `policy` in `pool`")
                .label("`pool` needs `policy`")
                .help("add `policy = \"vllm\"` (a unified page pool) or `policy = \"arenas\"`"),
        );
        return None;
    };
    let spelling = walk.string("pool.policy", policy)?;
    match spelling {
        "arenas" => return arenas(walk, table),
        "vllm" => {}
        other => {
            walk.report(
                policy.span(),
                Diagnostic::error(format!("unknown pool policy `{other}`"))
                    .label("not a policy")
                    .expected_one_of("policies", other, &POLICIES),
            );
            return None;
        }
    }
    let before = walk.sink.error_count();
    let count = |walk: &mut Walk<'_>, name: &str, absent: u64| -> u64 {
        match field(table, name) {
            Some((_, v)) => walk.u64(&format!("pool.{name}"), v).unwrap_or(absent),
            None => absent,
        }
    };
    let d = VllmPool::DEFAULT;
    let mut vllm = VllmPool {
        pages: PoolPages::Requests(0),
        // Absent: 0 until the caller gives it ([`writes_context`]).
        context: count(walk, "context", 0),
        kernel_block: count(walk, "kernel_block", d.kernel_block),
        batched_tokens: count(walk, "batched_tokens", d.batched_tokens),
        batches_in_flight: count(walk, "batches_in_flight", d.batches_in_flight),
        prefix_caching: d.prefix_caching,
        checkpoint_alignment: count(walk, "checkpoint_alignment", d.checkpoint_alignment),
        checkpoint_pages: count(walk, "checkpoint_pages", d.checkpoint_pages),
        speculative_tokens: count(walk, "speculative_tokens", d.speculative_tokens),
    };
    figures(walk, table, &mut vllm);
    size(walk, table, key, serving, &mut vllm);
    (walk.sink.error_count() == before).then_some(PoolPolicy::Vllm(vllm))
}

/// `policy = "arenas"`: the arenas take no figure, so any other key is a mistake, not a
/// silent no-op.
fn arenas(walk: &mut Walk<'_>, table: &Table<'_>) -> Option<PoolPolicy> {
    let mut valid = true;
    for (other, _) in entries(table).into_iter().filter(|(k, _)| {
        let k: &str = k.get_ref();
        k != "policy" && POOL_KEYS.contains(&k)
    }) {
        let name: &str = other.get_ref();
        walk.report(
            other.span(),
            Diagnostic::error(format!("`pool.{name}` is a figure of the vLLM pool"))
                .label("the arenas take no figure")
                .help("set `policy = \"vllm\"`, or remove the key"),
        );
        valid = false;
    }
    valid.then_some(PoolPolicy::Arenas)
}

/// The pool's size: `pages` or `requests`, exactly one without `[serving]`, neither with it.
fn size(
    walk: &mut Walk<'_>,
    table: &Table<'_>,
    key: Range<usize>,
    serving: bool,
    vllm: &mut VllmPool,
) {
    let count = |walk: &mut Walk<'_>, name: &str| -> u64 {
        field(table, name)
            .and_then(|(_, v)| walk.u64(&format!("pool.{name}"), v))
            .unwrap_or(0)
    };
    let pages = field(table, "pages").map(|(k, _)| (("pages", k), count(walk, "pages")));
    let requests =
        field(table, "requests").map(|(k, _)| (("requests", k), count(walk, "requests")));
    match (pages, requests, serving) {
        (Some(((name, k), _)), _, true) | (None, Some(((name, k), _)), true) => {
            walk.report(
                k,
                Diagnostic::error(format!("`pool.{name}` with a `[serving]` profile"))
                    .label("the profile sizes the pool")
                    .help("the pool holds the profile's `sequences` requests: remove the key"),
            );
        }
        (Some(((_, k), _)), Some(_), false) => {
            walk.report(
                k,
                Diagnostic::error("`pool.pages` and `pool.requests` both given")
                    .label("give one")
                    .help("`pages`: the pool's pages, the null page included; `requests`: that many requests of `context` tokens"),
            );
        }
        (Some((_, n)), None, false) => vllm.pages = PoolPages::Pages(n),
        (None, Some((_, n)), false) => vllm.pages = PoolPages::Requests(n),
        (None, None, false) => {
            walk.report(
                key,
                Diagnostic::error("missing key `pages` or `requests` in `pool`")
                    .label("the vLLM pool needs its size")
                    .help("add `requests = N` (that many requests of `context` tokens and the null page) or `pages = N`"),
            );
        }
        (None, None, true) => {}
    }
}

/// Whether `[pool]` (its value, `value`) writes `context`.
pub(super) fn writes_context(value: &Value<'_>) -> bool {
    match value.get_ref() {
        toml::de::DeValue::Table(table) => field(table, "context").is_some(),
        _ => false,
    }
}

/// `prefix_caching` (a boolean) and the figures that cannot be 0.
fn figures(walk: &mut Walk<'_>, table: &Table<'_>, vllm: &mut VllmPool) {
    if let Some((_, v)) = field(table, "prefix_caching") {
        if let toml::de::DeValue::Boolean(b) = v.get_ref() {
            vllm.prefix_caching = *b;
        } else {
            walk.wrong_type("pool.prefix_caching", "a boolean", v);
        }
    }
    for (name, zero) in [
        ("kernel_block", vllm.kernel_block),
        ("checkpoint_alignment", vllm.checkpoint_alignment),
    ] {
        if zero == 0
            && let Some((_, v)) = field(table, name)
        {
            walk.report(
                v.span(),
                Diagnostic::error(format!("`pool.{name}` is 0 tokens"))
                    .label("at least 1")
                    .help(match name {
                        "kernel_block" => "FlashAttention's kernel block is 16 tokens",
                        _ => "1 for a kernel without checkpoints, 64 for Gated DeltaNet on FlashInfer",
                    }),
            );
        }
    }
}
