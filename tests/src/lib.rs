//! The generated modules of every circuit in `circuits/` (and of the suites' circuit of KV
//! shared across layers, `shared_kv`), built by `build.rs` through `metrale_codegen::Builder`
//! exactly as a user's crate builds them, and compiled here under
//! `#![deny(warnings, missing_docs)]` and the workspace's `clippy::pedantic`: a generated item
//! without docs, or with a lint, fails this crate's build.
#![deny(warnings, missing_docs)]

/// Every circuit file this crate includes, relative to the workspace root.
pub const CIRCUITS: [&str; 18] = [
    "circuits/deepseek_v3.toml",
    "circuits/deepseek_v32.toml",
    "circuits/falcon_h1.toml",
    "circuits/gemma2.toml",
    "circuits/gemma3.toml",
    "circuits/gemma3n.toml",
    "circuits/gpt_oss.toml",
    "circuits/granite_4_h.toml",
    "circuits/jamba.toml",
    "circuits/kimi_linear.toml",
    "circuits/llama.toml",
    "circuits/llama4.toml",
    "circuits/minimax_m1.toml",
    "circuits/mistral.toml",
    "circuits/nemotron_h.toml",
    "circuits/qwen3_5.toml",
    "circuits/qwen3_next.toml",
    "circuits/whisper.toml",
];

include!(concat!(env!("OUT_DIR"), "/deepseek_v3.rs"));
include!(concat!(env!("OUT_DIR"), "/deepseek_v32.rs"));
include!(concat!(env!("OUT_DIR"), "/falcon_h1.rs"));
include!(concat!(env!("OUT_DIR"), "/gemma2.rs"));
include!(concat!(env!("OUT_DIR"), "/gemma3.rs"));
include!(concat!(env!("OUT_DIR"), "/gemma3n.rs"));
include!(concat!(env!("OUT_DIR"), "/gpt_oss.rs"));
include!(concat!(env!("OUT_DIR"), "/granite_4_h.rs"));
include!(concat!(env!("OUT_DIR"), "/jamba.rs"));
include!(concat!(env!("OUT_DIR"), "/kimi_linear.rs"));
include!(concat!(env!("OUT_DIR"), "/llama.rs"));
include!(concat!(env!("OUT_DIR"), "/llama4.rs"));
include!(concat!(env!("OUT_DIR"), "/minimax_m1.rs"));
include!(concat!(env!("OUT_DIR"), "/mistral.rs"));
include!(concat!(env!("OUT_DIR"), "/nemotron_h.rs"));
include!(concat!(env!("OUT_DIR"), "/qwen3_5.rs"));
include!(concat!(env!("OUT_DIR"), "/qwen3_next.rs"));
include!(concat!(env!("OUT_DIR"), "/whisper.rs"));

pub mod alloc_model;

/// The suites' circuit of KV shared across layers (`shares`, schema 3), not a real model.
pub const SHARED_KV: &str = "tests/ui/circuits/shared_kv.toml";

include!(concat!(env!("OUT_DIR"), "/shared_kv.rs"));

/// The circuit a test file hands `metrale_macros::circuit!(inline = r#"..."#)`, loaded from
/// that file's text (`source`, its `include_str!`) as `name`, for the dynamic plan the
/// generated one is compared with. The circuit is the text from `schema = ` to the raw string's
/// end.
///
/// # Panics
/// When `source` holds no such circuit or it does not load (a broken test, reported).
#[must_use]
pub fn inline_circuit(source: &str, name: &str) -> metrale_circuit::load::Circuit {
    let start = source.find("schema = ").expect("an inline circuit");
    let end = source[start..].find("\"#").expect("its end") + start;
    metrale_circuit::load::load(metrale_circuit::load::CircuitSource::Text {
        name,
        text: &source[start..end],
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A serve's KV blocks, as in `metrale-codegen/cli/inputs/default.toml`: 2048 blocks of 16 tokens.
pub const SERVE_KV: Option<metrale_circuit::KvInputs> = Some(metrale_circuit::KvInputs {
    blocks: 2048,
    block_size: 16,
    window: None,
});

/// Every cache of a speculative, prefix-cached serve, as in
/// `metrale-codegen/cli/inputs/default.toml`, so the suites exercise a plan with every term
/// present.
pub const SERVE_CACHES: metrale_circuit::CacheInputs = metrale_circuit::CacheInputs {
    prefix_snapshot_slots: 16,
    ring: Some(metrale_circuit::inputs::RingInputs {
        ring_slots: 4,
        seq_slots: 9,
    }),
    carry: Some(metrale_circuit::inputs::CarryInputs {
        slots: 9,
        table_rows: 9,
    }),
    verify_table_rows: 36,
    capture_rows: 4096,
    lookup: Some(metrale_circuit::inputs::LookupInputs {
        sequences: 8,
        history_tokens: 8192,
    }),
    tree: Some(metrale_circuit::inputs::TreeInputs {
        slots: 9,
        nodes: 16,
    }),
    drafts: Some(metrale_circuit::inputs::DraftInputs {
        slots: 9,
        positions: 4,
    }),
};

/// The same circuits generated against a re-export of the runtime crate
/// (`Builder::runtime_path("crate::reexported::rt")`), for crates that re-export it.
pub mod reexported {
    /// The runtime crate, re-exported under another path.
    pub mod rt {
        pub use metrale_circuit::*;
    }

    include!(concat!(env!("OUT_DIR"), "/reexported/deepseek_v3.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/deepseek_v32.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/falcon_h1.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/gemma2.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/gemma3.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/gemma3n.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/gpt_oss.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/granite_4_h.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/jamba.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/kimi_linear.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/llama.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/llama4.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/minimax_m1.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/mistral.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/nemotron_h.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/qwen3_5.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/qwen3_next.rs"));
    include!(concat!(env!("OUT_DIR"), "/reexported/whisper.rs"));
}
