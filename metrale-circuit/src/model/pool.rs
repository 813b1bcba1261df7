//! The layout policy of the states a request holds (its KV sides and its live recurrent
//! states): today's arenas ([`PoolPolicy::Arenas`], the default), or one pool of equal pages
//! shared by every layer group, as vLLM lays its KV cache out ([`PoolPolicy::Vllm`]).
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Every type is `Copy` and const-constructible, so a generated plan takes it in a
//!   `const fn`; Rust field names are the inputs file's `[pool]` keys.
//! - [`VllmPool::DEFAULT`] is what a default `vllm serve` does (vLLM 0.33.0, commit 4ba787ec9;
//!   each default cites its line in docs/inputs.md): the only figure it cannot know is the
//!   context, which the engine gives.

/// How the states a request holds are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolPolicy {
    /// Each term in its own arena region (a KV side holds the `[kv]` pool's tokens, a live
    /// recurrent state one unit per slot): the default.
    Arenas,
    /// One pool of equal-sized pages that every layer group's layers view, recurrent states
    /// held as pages padded to the attention page (vLLM's hybrid KV-cache manager).
    Vllm(VllmPool),
}

/// The figures of a vLLM server that decide its page pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VllmPool {
    /// How many pages the pool has.
    pub pages: PoolPages,
    /// Tokens one request may hold (`max_model_len`): what its pages per group are sized for.
    pub context: u64,
    /// The attention backend's smallest kernel block, in tokens: the block size of a model
    /// without recurrent layers, and the alignment of a hybrid's (16: FlashAttention).
    pub kernel_block: u64,
    /// Tokens one scheduler step batches (`max_num_batched_tokens`; 8192 on an H100-class API
    /// server).
    pub batched_tokens: u64,
    /// Batches in flight at once (2 with async scheduling): a sliding-window layer keeps the
    /// tokens of all of them beyond its window.
    pub batches_in_flight: u64,
    /// Prefix caching (on by default): recurrent layers then run in vLLM's `align` mode,
    /// holding a running and a cached state page per request.
    pub prefix_caching: bool,
    /// The prefill-checkpoint alignment of the recurrent kernel, in tokens, that a hybrid's
    /// block size is widened to a multiple of under prefix caching (64: Gated DeltaNet with a
    /// FlashInfer prefill; 1: none, as Mamba2).
    pub checkpoint_alignment: u64,
    /// Pages a recurrent layer keeps per request for its prefill checkpoint under prefix
    /// caching (1 for Mamba2 and for a FlashInfer Gated DeltaNet).
    pub checkpoint_pages: u64,
    /// Speculative tokens per step: one more recurrent page each per request.
    pub speculative_tokens: u64,
}

/// How many pages a vLLM pool has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolPages {
    /// Enough for this many requests of `context` tokens each, and the null page.
    Requests(u64),
    /// This many pages, the null page included (vLLM's `num_gpu_blocks`).
    Pages(u64),
}

impl VllmPool {
    /// A default `vllm serve` on an H100-class GPU, for requests of `context` tokens, its pool
    /// empty (no requests).
    #[must_use]
    pub const fn serving(context: u64) -> VllmPool {
        VllmPool {
            context,
            ..VllmPool::DEFAULT
        }
    }

    /// A default `vllm serve` on an H100-class GPU: no requests of 0 tokens.
    pub const DEFAULT: VllmPool = VllmPool {
        pages: PoolPages::Requests(0),
        context: 0,
        kernel_block: 16,
        batched_tokens: 8192,
        batches_in_flight: 2,
        prefix_caching: true,
        checkpoint_alignment: 1,
        checkpoint_pages: 1,
        speculative_tokens: 0,
    };
}
