//! The JSON `plan --json` and `fit --json` print: one plan with exact byte counts and its
//! totals per lifetime and per kind ([`plan`]), or every rank's bytes and their sums
//! ([`every_rank`]); a fit's answer ([`fit`]).
//!
//! Invariants:
//! - Spellings are the `name()` of each vocabulary; numbers are integers, byte counts exact.
//! - `terms` are in plan order, whatever `--sort` and `--group` say (they shape the table).
//! - The shape is fixed, so a reader can index without checking: `totals.lifetime` has both
//!   spaces and every lifetime, `totals.kind` every kind, zeros included. The fields of the
//!   first version (`circuit`, `checkpoint`, `align`, `terms` and their nine keys,
//!   `device_bytes`, `host_bytes`) are kept as they were. What only some plans have is a key
//!   of its own, absent from the others: `pool`, `shared`, a rank's `tp` ... `layers`.

use metrale_circuit::serving::pages::{Family, PagePool};
use metrale_circuit::{Lifetime, Space, StateKind};
use serde_json::{Map, Value, json};

use super::report::{EveryRankReport, FitReport, Report, Total};

/// What `plan --json` prints, for `plan --help`: every key of its object, nested ones after
/// their parent (a test holds the two to each other).
pub const PLAN_FIELDS: &str = "--json prints one object: circuit, checkpoint, align, device_bytes (the \
arena's and, under vLLM's policy, the page pool's: the device total), host_bytes, terms (each \
state, kind, holding, lifetime, dtype, units, unit_bytes, bytes, offset, space; block_size and \
blocks for a paged KV side; shape, axes and strides for a unit's tensor; packing (also as layout, its name before) and parts, each \
part, dtype, elements, offset, bytes, for a unit made of a packing), totals (lifetime and kind, each terms and bytes); \
shared (each state and owner) for KV read across layers; pool (policy, offset, pages, \
block_tokens, page_bytes, slots, groups, context, request_pages, layers: each group, slot, \
states, token_bytes with window or chunk, or state_bytes) under vLLM's policy; tp, pp, \
tp_rank, pp_rank, layers for one rank of several. Over every rank (--tp/--pp without a rank): \
circuit, checkpoint, align, tp, pp, ranks (each tp_rank, pp_rank, layers, device_bytes, \
host_bytes), device_bytes, host_bytes.";

/// What `fit --json` prints, for `fit --help`.
pub const FIT_FIELDS: &str = "--json prints one object: for, value, budget, device_bytes, \
next_device_bytes, marginal_bytes, marginal_block_bytes (null under vLLM's policy), policy \
(arenas or vllm), fixed_request_bytes (only with a KV side of a fixed token count: the bytes a \
request holds of it), profile (null without [serving]; else source, verify_rows, ring_depth, \
prefix_snapshots, draft_kv, tree_nodes, kv_block_size, formats); with --gpu: gpu, \
utilization, usable_bytes, weights, weights_per_gpu, weights_source, reserve; under vLLM's \
policy: block_tokens, page_bytes, pool_slots, pool_groups, request_pages, pool_pages, \
pool_context, pool_tokens (vLLM's GPU KV cache size), concurrency (its Maximum concurrency), \
admitted, marginal_page_bytes, marginal_request_bytes; over several ranks: tp, pp, tp_rank, \
pp_rank (the rank that binds first).";

/// `{"terms": N, "bytes": N}`.
fn total(total: Total) -> Value {
    json!({ "terms": total.terms, "bytes": total.bytes })
}

/// The plan as JSON: `circuit`, `checkpoint`, `align`, `terms` (each with `state`, `kind`,
/// `holding`, `lifetime`, `dtype`, `units`, `unit_bytes` (one unit; for the prompt-lookup
/// index one entry, its bytes following the hash-table law), `bytes`, `offset`, `space`, for
/// a paged KV side `blocks` and `block_size` (and `window`, `chunk` or `tokens` when it keeps
/// part of a sequence or a fixed count), for a unit with a shape its tensor shape
/// (`shape`: the extents, `axes`: each as the circuit writes it, `strides`: row-major element
/// strides; the term is `[units, shape...]`), and for a unit made of a packing (schema 3) its
/// `packing` (also as `layout`, its name before) and `parts` (each `part`, `dtype`, `elements`, and its `offset` and `bytes` in
/// the unit; `dtype` is then `u8`, the unit addressed by byte)), `device_bytes`,
/// `host_bytes`, and `totals`: `lifetime` (space -> lifetime -> `{terms, bytes}`) and `kind`
/// (kind -> `{terms, bytes}`); with KV shared across layers, `shared` (each reader's `state`
/// and the `owner` whose KV, and terms, it reads, in plan order); under vLLM's policy `pool`;
/// for one rank of several its place. Pretty-printed, with a final newline.
pub fn plan(report: &Report) -> String {
    let plan = &report.plan;
    let terms: Vec<Value> = plan
        .terms()
        .iter()
        .map(|t| {
            let mut term = json!({
                "state": t.state,
                "kind": t.kind.name(),
                "holding": t.holding.name(),
                "lifetime": t.lifetime.name(),
                "dtype": t.dtype.name(),
                "units": t.units,
                "unit_bytes": t.unit_bytes,
                "bytes": t.bytes,
                "offset": t.offset,
                "space": t.space.name(),
            });
            // A paged side's units are tokens: say its blocks too.
            if t.kind == StateKind::PagedKv
                && let Some(fields) = term.as_object_mut()
            {
                fields.insert("block_size".to_owned(), json!(t.inner));
                fields.insert(
                    "blocks".to_owned(),
                    json!(t.units.checked_div(t.inner).unwrap_or(0)),
                );
                // What it keeps of a sequence, when not every token: `window`, `chunk` or
                // `tokens` (a fixed count a request holds), in tokens.
                if let Some(reach) = t.reach {
                    fields.insert(reach.key().to_owned(), json!(reach.tokens()));
                }
            }
            // A unit's tensor shape: the term is `[units, shape...]` of its dtype.
            if !t.axes.is_empty()
                && let Some(fields) = term.as_object_mut()
            {
                let names: Vec<&str> = t.axes.iter().map(|a| a.name.as_str()).collect();
                let extents: Vec<u64> = t.axes.iter().map(|a| a.extent).collect();
                fields.insert("shape".to_owned(), json!(extents));
                fields.insert("axes".to_owned(), json!(names));
                fields.insert("strides".to_owned(), json!(t.strides()));
            }
            if let (Some(packing), Some(fields)) = (&t.packing, term.as_object_mut()) {
                let parts: Vec<Value> = packing
                    .parts
                    .iter()
                    .map(|p| {
                        json!({
                            "part": p.name,
                            "dtype": p.dtype.name(),
                            "elements": p.elements,
                            "offset": p.offset,
                            "bytes": p.bytes,
                        })
                    })
                    .collect();
                fields.insert("packing".to_owned(), json!(packing.name));
                // The field's name before the word "packing" (issue 29), kept for the tools
                // that read it.
                fields.insert("layout".to_owned(), json!(packing.name));
                fields.insert("parts".to_owned(), Value::Array(parts));
            }
            term
        })
        .collect();
    let mut lifetimes = Map::new();
    for space in Space::ALL {
        let per: Map<String, Value> = Lifetime::LAYOUT_ORDER
            .iter()
            .map(|&l| (l.name().to_owned(), total(report.by_lifetime(space, l))))
            .collect();
        lifetimes.insert(space.name().to_owned(), Value::Object(per));
    }
    let kinds: Map<String, Value> = report
        .by_kind()
        .into_iter()
        .map(|(kind, t)| (kind.name().to_owned(), total(t)))
        .collect();
    let mut value = json!({
        "circuit": report.circuit,
        "checkpoint": report.checkpoint,
        "align": plan.align(),
        "terms": terms,
        "device_bytes": plan.device_bytes(),
        "host_bytes": plan.host_bytes(),
        "totals": { "lifetime": lifetimes, "kind": kinds },
    });
    // KV sides that read another layer's KV: no term of their own, their owner's.
    let shared: Vec<Value> = plan
        .shared()
        .map(|(state, owner)| json!({ "state": state, "owner": owner }))
        .collect();
    if let (false, Some(fields)) = (shared.is_empty(), value.as_object_mut()) {
        fields.insert("shared".to_owned(), Value::Array(shared));
    }
    if let (Some(pool), Some(fields)) = (plan.pool(), value.as_object_mut()) {
        fields.insert("pool".to_owned(), page_pool(pool));
    }
    // One rank of several: which, and the model's layers it holds.
    if let (Some(parallel_rank), Some(fields)) = (report.parallel_rank, value.as_object_mut()) {
        fields.insert("tp".to_owned(), json!(parallel_rank.tp));
        fields.insert("pp".to_owned(), json!(parallel_rank.pp));
        fields.insert("tp_rank".to_owned(), json!(parallel_rank.rank.tp));
        fields.insert("pp_rank".to_owned(), json!(parallel_rank.rank.pp));
        let layers: Vec<u64> = (parallel_rank.stage.start..parallel_rank.stage.end).collect();
        fields.insert("layers".to_owned(), json!(layers));
    }
    format!("{value:#}\n")
}

/// A vLLM page pool: `policy`, `offset`, `pages`, `block_tokens`, `page_bytes`, `slots`,
/// `groups`, `context`, `request_pages`, and `layers` (each `group`, `slot`, `states`, and
/// `token_bytes` (and `window` or `chunk`) or `state_bytes`).
fn page_pool(pool: &PagePool) -> Value {
    let layers: Vec<Value> = pool
        .members
        .iter()
        .map(|m| {
            let mut layer = json!({ "group": m.group, "slot": m.slot, "states": m.states });
            if let Some(fields) = layer.as_object_mut() {
                match m.layer.family {
                    Family::Attention {
                        token_bytes, reach, ..
                    } => {
                        fields.insert("token_bytes".to_owned(), json!(token_bytes));
                        // `window` or `chunk`, in tokens, for a side that keeps part of a
                        // sequence.
                        if let Some(reach) = reach {
                            fields.insert(reach.key().to_owned(), json!(reach.tokens()));
                        }
                    }
                    Family::Recurrent { state_bytes } => {
                        fields.insert("state_bytes".to_owned(), json!(state_bytes));
                    }
                }
            }
            layer
        })
        .collect();
    json!({
        "policy": "vllm",
        "offset": pool.plan.offset,
        "pages": pool.plan.pages,
        "block_tokens": pool.plan.shape.block_tokens,
        "page_bytes": pool.plan.shape.page_bytes,
        "slots": pool.plan.shape.slots,
        "groups": pool.plan.shape.groups,
        "context": pool.plan.context,
        "request_pages": pool.plan.shape.request_pages,
        "layers": layers,
    })
}

/// Every rank's bytes as JSON: `circuit`, `checkpoint`, `align`, `tp`, `pp`, `ranks` (each
/// `tp_rank`, `pp_rank`, `layers` (the layer indices it holds), `device_bytes`, `host_bytes`)
/// and the sums over ranks `device_bytes`, `host_bytes`. Pretty-printed, with a final newline.
pub fn every_rank(report: &EveryRankReport) -> String {
    // Each stage's plan stands for its `tp` ranks (at most `MAX_RANKS` in all).
    let ranks: Vec<Value> = report
        .ranks
        .iter()
        .flat_map(|r| {
            let (rank, stage) = (r.parallel_rank.rank, r.parallel_rank.stage);
            (0..report.tp).map(move |tp| {
                json!({
                    "tp_rank": tp,
                    "pp_rank": rank.pp,
                    "layers": (stage.start..stage.end).collect::<Vec<u64>>(),
                    "device_bytes": r.plan.device_bytes(),
                    "host_bytes": r.plan.host_bytes(),
                })
            })
        })
        .collect();
    let value = json!({
        "circuit": report.circuit,
        "checkpoint": report.checkpoint,
        "align": report.align,
        "tp": report.tp,
        "pp": report.pp,
        "ranks": ranks,
        "device_bytes": report.device_bytes(),
        "host_bytes": report.host_bytes(),
    });
    format!("{value:#}\n")
}

/// `fit --json`: `{"for", "value", "budget", "device_bytes", "next_device_bytes"}`, over
/// several ranks with `tp`, `pp`, `tp_rank`, `pp_rank` (the rank whose answer it is).
/// Pretty-printed, with a final newline.
pub fn fit(report: &FitReport) -> String {
    let answer = &report.answer;
    let fit = &answer.fit;
    let mut value = json!({
        "for": report.free,
        "value": fit.value,
        "budget": report.budget,
        "device_bytes": fit.device_bytes,
        "next_device_bytes": fit.next_device_bytes,
        "marginal_bytes": fit.marginal_bytes(),
        "marginal_block_bytes": answer.capacity.block_bytes,
        "policy": if answer.pool.is_some() { "vllm" } else { "arenas" },
    });
    // A circuit with a KV side of a fixed token count (schema 4's `tokens`): what a request
    // holds of it, whatever it decodes.
    if let (true, Some(fields)) = (answer.capacity.per_request > 0, value.as_object_mut()) {
        fields.insert(
            "fixed_request_bytes".to_owned(),
            json!(answer.capacity.per_request),
        );
    }
    if let Some(fields) = value.as_object_mut() {
        let profile = report.profile.as_ref().map(|p| {
            let formats: Map<String, Value> = p
                .formats
                .iter()
                .map(|(key, value)| (key.clone(), json!(value)))
                .collect();
            json!({
                "source": p.source,
                "verify_rows": p.verify_rows,
                "ring_depth": p.ring_depth,
                "prefix_snapshots": p.prefix_snapshots,
                "draft_kv": p.draft_kv,
                "tree_nodes": p.tree_nodes,
                "kv_block_size": p.kv_block_size,
                "formats": formats,
            })
        });
        fields.insert("profile".to_owned(), json!(profile));
    }
    if let (Some(gpu), Some(fields)) = (&report.gpu, value.as_object_mut()) {
        for (key, n) in [
            ("gpu", json!(gpu.memory.total)),
            ("utilization", json!(gpu.memory.utilization.to_string())),
            ("usable_bytes", json!(gpu.memory.usable())),
            ("weights", json!(gpu.weights_total)),
            ("weights_per_gpu", json!(gpu.memory.weights)),
            ("weights_source", json!(gpu.weights_source)),
            ("reserve", json!(gpu.memory.reserve)),
        ] {
            fields.insert(key.to_owned(), n);
        }
    }
    if let (Some(pool), Some(fields)) = (&answer.pool, value.as_object_mut()) {
        let costs = answer.capacity.pages;
        for (key, n) in [
            ("block_tokens", json!(pool.shape.block_tokens)),
            ("page_bytes", json!(pool.shape.page_bytes)),
            ("pool_slots", json!(pool.shape.slots)),
            ("pool_groups", json!(pool.shape.groups)),
            ("request_pages", json!(pool.shape.request_pages)),
            ("pool_pages", json!(pool.pages)),
            ("pool_context", json!(pool.context)),
            ("pool_tokens", json!(pool.tokens)),
            ("concurrency", json!(pool.concurrency())),
            ("admitted", json!(pool.admitted)),
            (
                "marginal_page_bytes",
                json!(costs.and_then(|c| c.page_bytes)),
            ),
            (
                "marginal_request_bytes",
                json!(costs.and_then(|c| c.request_bytes)),
            ),
        ] {
            fields.insert(key.to_owned(), n);
        }
    }
    if let (Some(parallel_rank), Some(fields)) = (answer.parallel_rank, value.as_object_mut()) {
        for (key, n) in [
            ("tp", parallel_rank.tp),
            ("pp", parallel_rank.pp),
            ("tp_rank", parallel_rank.rank.tp),
            ("pp_rank", parallel_rank.rank.pp),
        ] {
            fields.insert(key.to_owned(), json!(n));
        }
    }
    format!("{value:#}\n")
}
