//! The sizing law: what one term of a declared state holds ([`Holding`]), where it lives
//! ([`Space`]), the dtype it is stored in ([`term_dtype`]), the bytes of a unit
//! ([`unit_bytes`]) and where each part of a packing sits in one ([`next_part`]), and how many
//! units and bytes a term has under the plan inputs ([`size_term`]).
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - This is the ONE place units, bytes and stored dtypes are computed. The dynamic
//!   [`crate::plan::DynamicPlan`] and the generated const plans both call [`size_term`] and
//!   [`term_dtype`] (through `Unit::stored`), so the reserve and the allocation cannot size a
//!   state two ways.
//! - Every function is a checked `const fn`: overflow is [`SizeFault::Overflow`], never a wrap.
//! - A term whose inputs are absent is `Ok(None)` (no term), never a zero-sized default.

use super::caches::{cache_units, lookup_index_bytes};
use crate::model::spelled::spelled_enum;
use crate::model::{
    CacheInputs, KvInputs, Lifetime, PoolPolicy, Reach, Section, StateDtype, StateInputs,
    StateKind, VerifySteps,
};

spelled_enum! {
    /// What a term of the plan holds.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Holding {
        /// The live recurrent state, one unit per sequence slot.
        Live = "live",
        /// The verify intermediates of a recurrent state.
        Steps = "steps",
        /// The state before a verify, one unit per verify slot.
        Checkpoint = "checkpoint",
        /// The KV blocks of one side of a paged KV cache.
        Blocks = "blocks",
        /// A cache kind's units.
        Cache = "cache",
    }
}

impl Holding {
    /// The holdings a state of `kind` can have, in plan order.
    #[must_use]
    pub const fn of_kind(kind: StateKind) -> &'static [Holding] {
        match kind {
            StateKind::Recurrent => &[Holding::Live, Holding::Steps, Holding::Checkpoint],
            StateKind::PagedKv => &[Holding::Blocks],
            _ => &[Holding::Cache],
        }
    }

    /// A term's lifetime: verify for the verify intermediates and checkpoint, else the state's
    /// declared one.
    #[must_use]
    #[inline]
    pub const fn lifetime(self, declared: Lifetime) -> Lifetime {
        match self {
            Holding::Steps | Holding::Checkpoint => Lifetime::Verify,
            _ => declared,
        }
    }
}

spelled_enum! {
    /// The memory a term is laid out in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Space {
        /// Accelerator memory.
        Device = "device",
        /// Host memory (the prompt-lookup index).
        Host = "host",
    }
}

impl Space {
    /// The space a state of `kind` lives in.
    #[must_use]
    #[inline]
    pub const fn of_kind(kind: StateKind) -> Self {
        if kind.is_host() {
            Space::Host
        } else {
            Space::Device
        }
    }
}

/// Why one term could not be sized; the caller names the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeFault {
    /// A product or sum overflowed `u64`.
    Overflow,
    /// Verify inputs were given but the recurrent state declares no `verify`.
    MissingVerify,
    /// A shape divided by a dim that is zero (only dims given at run time can be; the loader
    /// refuses a checkpoint whose dims divide by zero).
    DivisionByZero,
    /// A shape's subtraction went below zero (only dims given at run time can make it; the
    /// loader refuses a checkpoint under which a shape is below zero).
    Negative,
    /// A KV side with a sliding window, an attention chunk or a fixed token count, but KV
    /// inputs without [`crate::inputs::WindowInputs`].
    MissingWindow,
}

impl std::fmt::Display for SizeFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The state is the caller's to name (`PlanError::of_fault`): these say what went wrong.
        f.write_str(match self {
            Self::Overflow => "a size overflows u64",
            Self::MissingVerify => {
                "verify inputs were given but the recurrent state declares no `verify`"
            }
            Self::DivisionByZero => "a shape divides by a dim that is zero",
            Self::Negative => "a shape is below zero under these dims",
            Self::MissingWindow => {
                "a KV side keeps a sliding window, an attention chunk or a fixed token count \
                 per sequence, but the KV inputs give no `sequences`, `chunk_tokens` and \
                 `max_tokens`"
            }
        })
    }
}

impl std::error::Error for SizeFault {}

/// One term's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Units (slots, tokens, rows, entries).
    pub units: u64,
    /// Bytes.
    pub bytes: u64,
    /// Units per outer index of the term's grid ([`crate::Region::inner`]).
    pub inner: u64,
}

/// Bytes of `elements` elements of `dtype`: `ceil(elements x bits / 8)`. A sub-byte dtype
/// packs (`fp4`: two a byte, an odd count's last byte half used); every other dtype is
/// `elements x` its bytes, computed so, so no count that fits in bytes overflows in bits.
///
/// # Errors
/// [`SizeFault::Overflow`] when the bytes overflow `u64`.
#[inline]
pub const fn unit_bytes(elements: u64, dtype: StateDtype) -> Result<u64, SizeFault> {
    let bits = dtype.bits();
    if bits < 8 {
        // Every sub-byte width divides 8.
        return Ok(elements.div_ceil(8 / bits));
    }
    match elements.checked_mul(bits / 8) {
        Some(bytes) => Ok(bytes),
        None => Err(SizeFault::Overflow),
    }
}

/// Where the next part of a packing sits in its unit: from `offset`, the byte the parts before
/// it end at, `elements` of `dtype` ([`unit_bytes`]). Parts sit in the order declared, each
/// from a whole byte, with no padding between them: the one placement rule both plans and a
/// generated `<state>_parts` follow. Returns the part's `(offset, bytes)`.
///
/// # Errors
/// [`SizeFault::Overflow`] when its bytes or its end overflow `u64`.
#[inline]
pub const fn next_part(
    offset: u64,
    elements: u64,
    dtype: StateDtype,
) -> Result<(u64, u64), SizeFault> {
    match unit_bytes(elements, dtype) {
        Ok(bytes) => match offset.checked_add(bytes) {
            Some(_) => Ok((offset, bytes)),
            None => Err(SizeFault::Overflow),
        },
        Err(fault) => Err(fault),
    }
}

/// The dtype the terms of a state of `kind` in `section` are stored in, `declared` being its
/// format (resolved): a `paged_kv` state of the draft head takes the inputs' `draft_kv_dtype`
/// when given (a draft pool in a format of its own, as the reference engine keeps a bf16 draft
/// pool beside an fp8 main one); every other state keeps its format.
#[must_use]
#[inline]
pub const fn term_dtype(
    kind: StateKind,
    section: Section,
    declared: StateDtype,
    inputs: &StateInputs<'_>,
) -> StateDtype {
    match (kind, section, inputs.draft_kv_dtype) {
        (StateKind::PagedKv, Section::Draft, Some(dtype)) => dtype,
        _ => declared,
    }
}

/// What sizing a term needs to know of its state's declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSpec {
    /// The state's kind.
    pub kind: StateKind,
    /// Which of its terms.
    pub holding: Holding,
    /// Main model or draft head (picks `kv` or `draft_kv`).
    pub section: Section,
    /// The verify intermediates the state declares.
    pub verify: Option<VerifySteps>,
    /// Bytes of one unit ([`unit_bytes`]).
    pub unit_bytes: u64,
    /// What a KV side keeps of a sequence: its sliding window or attention chunk, in tokens
    /// (`None`: every token).
    pub reach: Option<Reach>,
}

/// Units and bytes of one term under `inputs`; `Ok(None)` when the inputs give it no term.
///
/// - recurrent: `live` = slots; with verify inputs, `steps` (`h_steps`: the sum of the per-slot
///   counts; `conv_steps`: `conv_steps` x verify slots) and `checkpoint` (one per verify slot);
/// - `paged_kv`: `blocks` = blocks x `block_size` of `kv` (main) or `draft_kv` (draft);
/// - caches: [`cache_units`]; the prompt-lookup index is host bytes by the hash-table law.
///
/// # Errors
/// [`SizeFault::MissingVerify`] for a recurrent state without `verify` under verify inputs;
/// [`SizeFault::Overflow`] when any product or sum overflows.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "a generated plan calls it once per size class with a constant kind and holding: inlined, it folds to that case's arithmetic"
)]
pub const fn size_term(
    spec: &TermSpec,
    inputs: &StateInputs<'_>,
) -> Result<Option<Size>, SizeFault> {
    // The grid's inner count: how many units one outer index (a verify slot, a KV block, a
    // sequence slot, ...) holds; the unit order of docs/circuit-schema.md.
    let mut inner = 1;
    // Under a unified page pool, what a request holds lives in the pool's pages, not here.
    if held_in_pool(spec.kind, spec.holding, spec.section, inputs) {
        return Ok(None);
    }
    let units = match (spec.kind, spec.holding) {
        (StateKind::Recurrent, Holding::Live) => Some(inputs.slots),
        (StateKind::Recurrent, Holding::Steps | Holding::Checkpoint) => {
            let Some(verify) = inputs.verify else {
                return Ok(None);
            };
            let Some(steps) = spec.verify else {
                return Err(SizeFault::MissingVerify);
            };
            match (spec.holding, steps) {
                (Holding::Checkpoint, _) => Some(verify.slots()),
                (_, VerifySteps::ConvSteps) => {
                    inner = verify.conv_steps;
                    verify.conv_steps.checked_mul(verify.slots())
                }
                (_, VerifySteps::HSteps) => {
                    // Each verify slot has its own row count: no one inner count.
                    inner = 0;
                    verify.h_steps.total()
                }
            }
        }
        (StateKind::PagedKv, Holding::Blocks) => {
            let kv = match spec.section {
                Section::Main => inputs.kv,
                Section::Draft => inputs.draft_kv,
            };
            if let Some(kv) = kv {
                inner = kv.block_size;
            }
            match (kv, spec.reach) {
                (None, _) => return Ok(None),
                (Some(kv), None) => kv.blocks.checked_mul(kv.block_size),
                (Some(kv), Some(reach)) => match reach_blocks(reach, &kv) {
                    Ok(blocks) => blocks.checked_mul(kv.block_size),
                    Err(fault) => return Err(fault),
                },
            }
        }
        (kind, Holding::Cache) if kind.is_cache() => match cache_units(kind, &inputs.caches) {
            Ok(Some(units)) => {
                inner = cache_inner(kind, &inputs.caches);
                Some(units)
            }
            Ok(None) => return Ok(None),
            Err(()) => None,
        },
        _ => return Ok(None),
    };
    let Some(units) = units else {
        return Err(SizeFault::Overflow);
    };
    let bytes = match (spec.kind, inputs.caches.lookup) {
        (StateKind::PromptLookupIndex, Some(lookup)) => {
            lookup_index_bytes(lookup.sequences, lookup.history_tokens, spec.unit_bytes)
        }
        _ => units.checked_mul(spec.unit_bytes),
    };
    match bytes {
        Some(bytes) => Ok(Some(Size {
            units,
            bytes,
            inner,
        })),
        None => Err(SizeFault::Overflow),
    }
}

/// Whether a term of `kind` holding `holding` in `section` lives in the pages of a unified
/// pool under `inputs`: a KV side's blocks (a draft head's when the inputs serve it, `draft_kv`
/// given) and a recurrent state's live slots do; every other term keeps its arena region.
#[must_use]
pub const fn held_in_pool(
    kind: StateKind,
    holding: Holding,
    section: Section,
    inputs: &StateInputs<'_>,
) -> bool {
    if !matches!(inputs.pool, PoolPolicy::Vllm(_)) {
        return false;
    }
    match (kind, holding, section) {
        (StateKind::PagedKv, Holding::Blocks, Section::Main)
        | (StateKind::Recurrent, Holding::Live, _) => true,
        (StateKind::PagedKv, Holding::Blocks, Section::Draft) => inputs.draft_kv.is_some(),
        _ => false,
    }
}

/// The inner count of a cache's grid: ring slots per sequence slot, tree nodes (a mask is
/// `[slot][node][node]`), draft positions per verify slot, history entries per sequence; 1
/// for a flat `[row]` cache.
const fn cache_inner(kind: StateKind, caches: &CacheInputs) -> u64 {
    match (kind, caches.ring, caches.tree, caches.drafts, caches.lookup) {
        (StateKind::RingSnapshot, Some(ring), ..) => ring.ring_slots,
        (StateKind::TokenTreeMask, _, Some(tree), ..) => tree.nodes,
        (StateKind::DraftTokens, _, _, Some(drafts), _) => drafts.positions,
        (StateKind::PromptLookupIndex, .., Some(lookup)) => lookup.history_tokens,
        _ => 1,
    }
}

/// The blocks one sequence of a KV side of reach `reach` holds when a step writes `step` tokens
/// and a sequence has at most `cap`: a sliding window of `W` tokens keeps the `W - 1` before each
/// new token and may start mid-block, `ceil(min(W - 1 + step, cap) / block) + 1`; an attention
/// chunk of `C` tokens starts on a block boundary, `ceil(min(C + step, cap) / block)`; a fixed
/// `F` tokens (an encoder's, written once at prefill) `ceil(F / block)`, whatever the step and
/// the cap of the decoded tokens. The one law of both layouts: the arenas' (`step` a prefill
/// chunk) and the vLLM pool's (`step` the tokens of every batch in flight).
///
/// # Errors
/// [`SizeFault::Negative`] for a window or chunk of 0 tokens, [`SizeFault::DivisionByZero`]
/// for blocks of 0 tokens, [`SizeFault::Overflow`].
pub const fn reach_per_sequence(
    reach: Reach,
    step: u64,
    cap: u64,
    block: u64,
) -> Result<u64, SizeFault> {
    let (kept, straddle) = match reach {
        Reach::Fixed(tokens) => {
            if block == 0 {
                return Err(SizeFault::DivisionByZero);
            }
            return Ok(tokens.div_ceil(block));
        }
        Reach::Window(window) => match window.checked_sub(1) {
            Some(before) => (before, 1),
            None => return Err(SizeFault::Negative),
        },
        Reach::Chunk(0) => return Err(SizeFault::Negative),
        Reach::Chunk(chunk) => (chunk, 0),
    };
    let Some(tokens) = kept.checked_add(step) else {
        return Err(SizeFault::Overflow);
    };
    let tokens = if tokens < cap { tokens } else { cap };
    if block == 0 {
        return Err(SizeFault::DivisionByZero);
    }
    match tokens.div_ceil(block).checked_add(straddle) {
        Some(blocks) => Ok(blocks),
        None => Err(SizeFault::Overflow),
    }
}

/// The blocks a KV side of reach `reach` holds. A fixed `F` tokens (an encoder's) are held by
/// every sequence whatever the pool: `sequences x ceil(F / block_size)`. A window or a chunk
/// keeps `min(blocks, sequences x per_seq)`, where a sliding window of `W` tokens keeps
/// `per_seq = ceil(min(W - 1 + chunk_tokens, max_tokens) / block_size) + 1` (the window may
/// start mid-block) and an attention chunk of `C` tokens
/// `per_seq = ceil(min(C + chunk_tokens, max_tokens) / block_size)` (vLLM's
/// `ChunkedLocalAttentionSpec`: chunks start on a block boundary, and a step's tokens may span
/// into the next chunk).
///
/// # Errors
/// [`SizeFault::MissingWindow`] without window inputs, [`SizeFault::Negative`] for a window or
/// chunk of 0 tokens, [`SizeFault::DivisionByZero`] for blocks of 0 tokens,
/// [`SizeFault::Overflow`].
pub const fn reach_blocks(reach: Reach, kv: &KvInputs) -> Result<u64, SizeFault> {
    let Some(inputs) = kv.window else {
        return Err(SizeFault::MissingWindow);
    };
    let per_seq =
        match reach_per_sequence(reach, inputs.chunk_tokens, inputs.max_tokens, kv.block_size) {
            Ok(blocks) => blocks,
            Err(fault) => return Err(fault),
        };
    let Some(needed) = inputs.sequences.checked_mul(per_seq) else {
        return Err(SizeFault::Overflow);
    };
    if let Reach::Fixed(_) = reach {
        return Ok(needed);
    }
    Ok(if needed < kv.blocks {
        needed
    } else {
        kv.blocks
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{KvInputs, LookupInputs, VerifyInputs};

    fn spec(
        kind: StateKind,
        holding: Holding,
        verify: Option<VerifySteps>,
        unit_bytes: u64,
    ) -> TermSpec {
        TermSpec {
            kind,
            holding,
            section: Section::Main,
            verify,
            unit_bytes,
            reach: None,
        }
    }

    #[test]
    fn a_window_bounds_the_blocks_of_a_kv_side() {
        use crate::model::WindowInputs;
        // gpt-oss-120b's sliding layers (W = 128) at 8 sequences, chunked prefill of 8192
        // tokens, 131,072-token context, 16-token blocks: min(127 + 8192, 131072) = 8319
        // tokens span ceil(8319 / 16) = 520 blocks, + 1 for a window starting mid-block: 521
        // blocks per sequence, 4,168 for 8.
        let window = WindowInputs {
            sequences: 8,
            chunk_tokens: 8192,
            max_tokens: 131_072,
        };
        let kv = KvInputs {
            blocks: 1_000_000,
            block_size: 16,
            window: Some(window),
        };
        assert_eq!(reach_blocks(Reach::Window(128), &kv), Ok(4_168));
        // The pool bounds it too.
        let small = KvInputs { blocks: 100, ..kv };
        assert_eq!(reach_blocks(Reach::Window(128), &small), Ok(100));
        // A short context bounds the tokens: min(127 + 8192, 100) = 100 -> 7 + 1 blocks.
        let short = KvInputs {
            window: Some(WindowInputs {
                max_tokens: 100,
                ..window
            }),
            ..kv
        };
        assert_eq!(reach_blocks(Reach::Window(128), &short), Ok(8 * 8));
        assert_eq!(
            reach_blocks(Reach::Window(128), &KvInputs::blocks(10, 16)),
            Err(SizeFault::MissingWindow)
        );
        assert_eq!(
            reach_blocks(Reach::Window(0), &kv),
            Err(SizeFault::Negative)
        );
        assert_eq!(
            reach_blocks(
                Reach::Window(128),
                &KvInputs {
                    block_size: 0,
                    ..kv
                }
            ),
            Err(SizeFault::DivisionByZero)
        );
        // Through the size law: blocks x block_size tokens of 1,024 bytes each.
        let inputs = StateInputs {
            kv: Some(kv),
            ..StateInputs::EMPTY
        };
        let mut side = spec(StateKind::PagedKv, Holding::Blocks, None, 1024);
        side.reach = Some(Reach::Window(128));
        assert_eq!(
            size_term(&side, &inputs),
            Ok(Some(Size {
                units: 4_168 * 16,
                bytes: 4_168 * 16 * 1024,
                // Tokens per block.
                inner: 16,
            }))
        );
    }

    #[test]
    fn a_chunk_holds_its_tokens_and_the_steps_beyond_them() {
        use crate::model::WindowInputs;
        // Llama 4's 8,192-token attention chunks, a 8,192-token prefill step, 131,072-token
        // context, 16-token blocks: min(8192 + 8192, 131072) = 16,384 tokens, 1,024 blocks a
        // sequence (a chunk starts on a block boundary: no extra block), 8,192 for 8.
        let window = WindowInputs {
            sequences: 8,
            chunk_tokens: 8192,
            max_tokens: 131_072,
        };
        let kv = KvInputs {
            blocks: 1_000_000,
            block_size: 16,
            window: Some(window),
        };
        assert_eq!(reach_blocks(Reach::Chunk(8192), &kv), Ok(8_192));
        // The window law of the same tokens keeps one block more a sequence.
        assert_eq!(reach_blocks(Reach::Window(8193), &kv), Ok(8 * 1025));
        // A short context bounds it: min(8192 + 8192, 1000) = 1000 -> 63 blocks.
        let short = KvInputs {
            window: Some(WindowInputs {
                max_tokens: 1000,
                ..window
            }),
            ..kv
        };
        assert_eq!(reach_blocks(Reach::Chunk(8192), &short), Ok(8 * 63));
        assert_eq!(reach_blocks(Reach::Chunk(0), &kv), Err(SizeFault::Negative));
        assert_eq!(
            reach_blocks(Reach::Chunk(1), &KvInputs::blocks(10, 16)),
            Err(SizeFault::MissingWindow)
        );
    }

    #[test]
    fn a_fixed_token_count_holds_its_blocks_whatever_is_decoded() {
        use crate::model::WindowInputs;
        // Whisper's 1,500 encoder positions in 16-token blocks: ceil(1500 / 16) = 94 blocks a
        // sequence, 752 for 8, whatever the prefill step and the decoded context.
        let window = WindowInputs {
            sequences: 8,
            chunk_tokens: 8192,
            max_tokens: 448,
        };
        let kv = KvInputs {
            blocks: 1_000_000,
            block_size: 16,
            window: Some(window),
        };
        assert_eq!(reach_blocks(Reach::Fixed(1500), &kv), Ok(752));
        let other_steps = KvInputs {
            window: Some(WindowInputs {
                chunk_tokens: 1,
                max_tokens: 1,
                ..window
            }),
            ..kv
        };
        assert_eq!(reach_blocks(Reach::Fixed(1500), &other_steps), Ok(752));
        // 1,600 tokens fill 100 blocks exactly; none hold none. The pool of a side that
        // keeps every token does not bound it: each sequence holds its encoder's tokens whole.
        assert_eq!(reach_blocks(Reach::Fixed(1600), &kv), Ok(800));
        assert_eq!(
            reach_blocks(Reach::Fixed(1500), &KvInputs { blocks: 500, ..kv }),
            Ok(752)
        );
        assert_eq!(reach_blocks(Reach::Fixed(0), &kv), Ok(0));
        assert_eq!(
            reach_per_sequence(Reach::Fixed(1500), 8192, 448, 0),
            Err(SizeFault::DivisionByZero)
        );
        assert_eq!(
            reach_blocks(Reach::Fixed(1500), &KvInputs::blocks(10, 16)),
            Err(SizeFault::MissingWindow)
        );
    }

    #[test]
    fn recurrent_terms_follow_the_verify_inputs() {
        let mut inputs = StateInputs {
            slots: 5,
            ..StateInputs::EMPTY
        };
        let h = spec(
            StateKind::Recurrent,
            Holding::Live,
            Some(VerifySteps::HSteps),
            4000,
        );
        assert_eq!(
            size_term(&h, &inputs),
            Ok(Some(Size {
                units: 5,
                bytes: 20_000,
                inner: 1,
            }))
        );
        let steps = TermSpec {
            holding: Holding::Steps,
            ..h
        };
        assert_eq!(size_term(&steps, &inputs), Ok(None));
        inputs.verify = Some(VerifyInputs {
            h_steps: crate::model::HSteps::PerSlot(&[3, 1, 3]),
            conv_steps: 4,
        });
        assert_eq!(
            size_term(&steps, &inputs),
            Ok(Some(Size {
                units: 7,
                bytes: 28_000,
                // 3, 1, 3 rows: no one count per verify slot.
                inner: 0,
            }))
        );
        let checkpoint = TermSpec {
            holding: Holding::Checkpoint,
            ..h
        };
        assert_eq!(
            size_term(&checkpoint, &inputs),
            Ok(Some(Size {
                units: 3,
                bytes: 12_000,
                inner: 1,
            }))
        );
        let conv = spec(
            StateKind::Recurrent,
            Holding::Steps,
            Some(VerifySteps::ConvSteps),
            120,
        );
        assert_eq!(
            size_term(&conv, &inputs),
            Ok(Some(Size {
                units: 12,
                bytes: 1440,
                // 4 conv steps per verify slot.
                inner: 4,
            }))
        );
        let bare = TermSpec {
            verify: None,
            ..steps
        };
        assert_eq!(size_term(&bare, &inputs), Err(SizeFault::MissingVerify));
        let live_bare = TermSpec { verify: None, ..h };
        assert_eq!(
            size_term(&live_bare, &inputs).map(|s| s.map(|s| s.units)),
            Ok(Some(5))
        );
    }

    #[test]
    fn kv_sides_read_their_section() {
        let inputs = StateInputs {
            kv: Some(KvInputs {
                blocks: 10,
                block_size: 16,
                window: None,
            }),
            ..StateInputs::EMPTY
        };
        let k = spec(StateKind::PagedKv, Holding::Blocks, None, 8);
        assert_eq!(
            size_term(&k, &inputs),
            Ok(Some(Size {
                units: 160,
                bytes: 1280,
                inner: 16,
            }))
        );
        let draft = TermSpec {
            section: Section::Draft,
            ..k
        };
        assert_eq!(size_term(&draft, &inputs), Ok(None));
        let both = StateInputs {
            draft_kv: Some(KvInputs {
                blocks: 2,
                block_size: 16,
                window: None,
            }),
            ..inputs
        };
        assert_eq!(
            size_term(&draft, &both).map(|s| s.map(|s| s.units)),
            Ok(Some(32))
        );
    }

    #[test]
    fn only_draft_kv_sides_take_the_draft_kv_dtype() {
        let inputs = StateInputs {
            draft_kv_dtype: Some(StateDtype::Bf16),
            ..StateInputs::EMPTY
        };
        let fp8 = StateDtype::Fp8;
        let dtype = |kind, section, inputs| term_dtype(kind, section, fp8, inputs);
        assert_eq!(
            dtype(StateKind::PagedKv, Section::Draft, &inputs),
            StateDtype::Bf16
        );
        // The main pool, the draft head's other states, and no key: their format.
        assert_eq!(dtype(StateKind::PagedKv, Section::Main, &inputs), fp8);
        assert_eq!(dtype(StateKind::Recurrent, Section::Draft, &inputs), fp8);
        assert_eq!(dtype(StateKind::DraftTokens, Section::Draft, &inputs), fp8);
        let none = StateInputs::EMPTY;
        assert_eq!(dtype(StateKind::PagedKv, Section::Draft, &none), fp8);
    }

    #[test]
    fn sub_byte_dtypes_pack_and_parts_follow_one_another() {
        // 512 e2m1 values are 256 bytes; an odd count rounds its last half byte up.
        assert_eq!(unit_bytes(512, StateDtype::Fp4), Ok(256));
        assert_eq!(unit_bytes(3, StateDtype::Fp4), Ok(2));
        assert_eq!(unit_bytes(0, StateDtype::Fp4), Ok(0));
        assert_eq!(unit_bytes(u64::MAX, StateDtype::Fp4), Ok(u64::MAX / 2 + 1));
        // A u8 count that fits in bytes never overflows through its bits.
        assert_eq!(unit_bytes(u64::MAX, StateDtype::U8), Ok(u64::MAX));
        assert_eq!(
            unit_bytes(u64::MAX / 4, StateDtype::U64),
            Err(SizeFault::Overflow)
        );
        // vLLM's fp8_ds_mla row by hand: 512 fp8 (0..512), 4 f32 (512..528), 64 bf16
        // (528..656).
        assert_eq!(next_part(0, 512, StateDtype::Fp8), Ok((0, 512)));
        assert_eq!(next_part(512, 4, StateDtype::F32), Ok((512, 16)));
        assert_eq!(next_part(528, 64, StateDtype::Bf16), Ok((528, 128)));
        assert_eq!(
            next_part(u64::MAX, 1, StateDtype::U8),
            Err(SizeFault::Overflow)
        );
        assert_eq!(next_part(u64::MAX, 0, StateDtype::U8), Ok((u64::MAX, 0)));
    }

    #[test]
    fn overflow_is_a_fault() {
        let inputs = StateInputs {
            slots: u64::MAX,
            ..StateInputs::EMPTY
        };
        let h = spec(StateKind::Recurrent, Holding::Live, None, 2);
        assert_eq!(size_term(&h, &inputs), Err(SizeFault::Overflow));
        let steps = StateInputs {
            verify: Some(VerifyInputs {
                h_steps: crate::model::HSteps::PerSlot(&[u64::MAX, 1]),
                conv_steps: 0,
            }),
            ..StateInputs::EMPTY
        };
        let s = spec(
            StateKind::Recurrent,
            Holding::Steps,
            Some(VerifySteps::HSteps),
            1,
        );
        assert_eq!(size_term(&s, &steps), Err(SizeFault::Overflow));
        assert_eq!(
            unit_bytes(u64::MAX / 2, StateDtype::F32),
            Err(SizeFault::Overflow)
        );
        assert_eq!(unit_bytes(1000, StateDtype::F32), Ok(4000));
    }

    #[test]
    fn lookup_index_is_host_hash_table_bytes() {
        let mut inputs = StateInputs::EMPTY;
        inputs.caches.lookup = Some(LookupInputs {
            sequences: 2,
            history_tokens: 14,
        });
        let index = spec(StateKind::PromptLookupIndex, Holding::Cache, None, 16);
        assert_eq!(
            size_term(&index, &inputs),
            Ok(Some(Size {
                units: 28,
                bytes: 576,
                // 14 history entries per sequence's table.
                inner: 14,
            }))
        );
        assert_eq!(Space::of_kind(StateKind::PromptLookupIndex), Space::Host);
        assert_eq!(Space::of_kind(StateKind::PagedKv), Space::Device);
    }

    #[test]
    fn holdings_and_their_lifetimes() {
        assert_eq!(Holding::of_kind(StateKind::Recurrent).len(), 3);
        assert_eq!(Holding::of_kind(StateKind::PagedKv), [Holding::Blocks]);
        assert_eq!(Holding::of_kind(StateKind::DraftTokens), [Holding::Cache]);
        assert_eq!(
            Holding::Steps.lifetime(Lifetime::Sequence),
            Lifetime::Verify
        );
        assert_eq!(
            Holding::Checkpoint.lifetime(Lifetime::Sequence),
            Lifetime::Verify
        );
        assert_eq!(
            Holding::Live.lifetime(Lifetime::Sequence),
            Lifetime::Sequence
        );
        assert_eq!(
            Holding::SPELLINGS,
            ["live", "steps", "checkpoint", "blocks", "cache"]
        );
    }
}
