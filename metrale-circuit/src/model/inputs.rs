//! The plan inputs the engine decides ([`StateInputs`]): how many units of each state exist.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Inputs are passed in explicitly, never read from a process global.
//! - Every type here is `Copy` and const-constructible (the verify counts borrow a slice), so the
//!   generated plan can take them in a `const fn`.
//! - Rust field names are the inputs-file key names.

use super::dtype::{FormatChoice, StateDtype};
use super::pool::PoolPolicy;

/// The plan inputs the engine decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateInputs<'a> {
    /// What each format key holds (`("kv_cache_dtype", FormatChoice::Dtype(StateDtype::Fp8))`,
    /// or a packing its states declare); a key the circuit names but this list lacks is an
    /// error, a key it does not name is ignored.
    pub formats: &'a [(&'a str, FormatChoice<&'a str>)],
    /// Sequence slots of the recurrent pools, the padding dummy included.
    pub slots: u64,
    /// The verify pools of a speculative serve; `None` when the engine does not verify.
    pub verify: Option<VerifyInputs<'a>>,
    /// The main model's paged KV cache; `None` gives its KV sides no term.
    pub kv: Option<KvInputs>,
    /// The draft head's paged KV cache; `None` gives its KV sides no term.
    pub draft_kv: Option<KvInputs>,
    /// The dtype of the draft head's KV sides, when its pool is not in the format their key
    /// names (an fp8 main pool beside a bf16 draft pool); `None`: their format's. Every other
    /// state keeps its format.
    pub draft_kv_dtype: Option<StateDtype>,
    /// The cache inputs.
    pub caches: CacheInputs,
    /// How the states a request holds (KV sides, live recurrent states) are laid out.
    pub pool: PoolPolicy,
}

impl StateInputs<'_> {
    /// No formats, no slots, no verify, no KV, no caches.
    pub const EMPTY: StateInputs<'static> = StateInputs {
        formats: &[],
        slots: 0,
        verify: None,
        kv: None,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: CacheInputs::EMPTY,
        pool: PoolPolicy::Arenas,
    };

    /// The padding dummy's sequence slot: the last of `slots` (`slots - 1`), the one batched
    /// kernels may write into and an allocator never gives a sequence; `None` without slots.
    #[must_use]
    pub const fn dummy_slot(&self) -> Option<u64> {
        self.slots.checked_sub(1)
    }

    /// What a format key holds: the first pair of that key.
    #[must_use]
    pub const fn format(&self, key: &str) -> Option<FormatChoice<&str>> {
        format_in(self.formats, key)
    }
}

/// What the first pair of `pairs` whose key is `key` holds: the one rule both plans (and a
/// generated `Formats::from_pairs`) read a format list by.
pub(crate) const fn format_in<'a>(
    pairs: &[(&str, FormatChoice<&'a str>)],
    key: &str,
) -> Option<FormatChoice<&'a str>> {
    let mut i = 0;
    while i < pairs.len() {
        let (k, choice) = pairs[i];
        if same_str(k, key) {
            return Some(choice);
        }
        i += 1;
    }
    None
}

/// `a == b` with ASCII case ignored, in a `const fn`: how Hugging Face ids compare (the Hub
/// resolves `qwen/qwen3.5-27b` to `Qwen/Qwen3.5-27B`), for a generated `Checkpoint::from_hf`
/// and `serving::registry::Registry` alike.
pub(crate) const fn same_id(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if !a[i].eq_ignore_ascii_case(&b[i]) {
            return false;
        }
        i += 1;
    }
    true
}

/// `a == b`, in a `const fn` (`str`'s `PartialEq` is not const).
pub(crate) const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The verify pools of a speculative serve over the recurrent states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyInputs<'a> {
    /// How many `h` intermediates each verify slot (the dummy last) keeps: one per verified
    /// row. It also says the number of verify slots.
    pub h_steps: HSteps<'a>,
    /// Conv-window intermediates per verify slot.
    pub conv_steps: u64,
}

impl VerifyInputs<'_> {
    /// The number of verify slots (the dummy included).
    #[must_use]
    pub const fn slots(&self) -> u64 {
        self.h_steps.slots()
    }
}

/// The verified rows of each verify slot, whose `h` intermediates a verify keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HSteps<'a> {
    /// Each verify slot's own count (the dummy last): the slice's length is the number of
    /// verify slots.
    PerSlot(&'a [u64]),
    /// `slots` verify slots of `rows` rows each: what a serving profile gives (K rows per
    /// step), without a slice to hold, so a `const fn` can vary the slot count.
    Uniform {
        /// Verify slots, the dummy included.
        slots: u64,
        /// Rows per verify slot.
        rows: u64,
    },
}

impl HSteps<'static> {
    /// No verify slot: a plan made without verify inputs.
    pub const NONE: Self = HSteps::Uniform { slots: 0, rows: 0 };
}

impl HSteps<'_> {
    /// The number of verify slots.
    #[must_use]
    pub const fn slots(&self) -> u64 {
        match self {
            HSteps::PerSlot(rows) => rows.len() as u64,
            HSteps::Uniform { slots, .. } => *slots,
        }
    }

    /// Verify slot `slot`'s rows; `None` past the last slot.
    #[must_use]
    pub const fn rows_of(&self, slot: u64) -> Option<u64> {
        if slot >= self.slots() {
            return None;
        }
        match self {
            HSteps::PerSlot(rows) => {
                #[allow(
                    clippy::cast_possible_truncation,
                    reason = "`slot` is below the slice's length, a usize"
                )]
                let index = slot as usize;
                Some(rows[index])
            }
            HSteps::Uniform { rows, .. } => Some(*rows),
        }
    }

    /// The rows of the slots before `slot` (where its rows start, slot-major); `None` on
    /// overflow. Past the last slot, the total.
    #[must_use]
    pub const fn rows_before(&self, slot: u64) -> Option<u64> {
        match self {
            HSteps::PerSlot(rows) => {
                let mut total: u64 = 0;
                let mut s = 0;
                while s < rows.len() && (s as u64) < slot {
                    total = match total.checked_add(rows[s]) {
                        Some(total) => total,
                        None => return None,
                    };
                    s += 1;
                }
                Some(total)
            }
            HSteps::Uniform { slots, rows } => {
                let before = if slot < *slots { slot } else { *slots };
                before.checked_mul(*rows)
            }
        }
    }

    /// Every slot's rows together; `None` on overflow.
    #[must_use]
    pub const fn total(&self) -> Option<u64> {
        self.rows_before(u64::MAX)
    }
}

/// The rows of each verify slot, owned: [`HSteps`] without the borrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepCounts {
    /// One entry per verify slot (an inputs file's `[verify] h_steps`).
    PerSlot(Vec<u64>),
    /// A serving profile's `K` rows in each of its verify slots.
    Uniform {
        /// Verify slots, the dummy included.
        slots: u64,
        /// Rows per verify slot.
        rows: u64,
    },
}

impl StepCounts {
    /// Borrowed, as the plan inputs take it.
    #[must_use]
    pub fn as_h_steps(&self) -> HSteps<'_> {
        match self {
            StepCounts::PerSlot(rows) => HSteps::PerSlot(rows),
            StepCounts::Uniform { slots, rows } => HSteps::Uniform {
                slots: *slots,
                rows: *rows,
            },
        }
    }

    /// The number of verify slots.
    #[must_use]
    pub fn slots(&self) -> u64 {
        self.as_h_steps().slots()
    }

    /// Verify slot `slot`'s rows.
    #[must_use]
    pub fn rows_of(&self, slot: u64) -> Option<u64> {
        self.as_h_steps().rows_of(slot)
    }

    /// Every slot's rows together; `None` on overflow.
    #[must_use]
    pub fn total(&self) -> Option<u64> {
        self.as_h_steps().total()
    }
}

impl From<HSteps<'_>> for StepCounts {
    fn from(h_steps: HSteps<'_>) -> Self {
        match h_steps {
            HSteps::PerSlot(rows) => StepCounts::PerSlot(rows.to_vec()),
            HSteps::Uniform { slots, rows } => StepCounts::Uniform { slots, rows },
        }
    }
}

/// One paged KV cache: `blocks` of `block_size` tokens, and what bounds a sliding-window side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvInputs {
    /// Blocks in the pool.
    pub blocks: u64,
    /// Tokens per block.
    pub block_size: u64,
    /// What a side with a sliding window (`window = ...`, schema 2) needs: required when the
    /// circuit has one (a plan without it is an error, never a default), unused otherwise.
    pub window: Option<WindowInputs>,
}

impl KvInputs {
    /// A pool of `blocks` blocks of `block_size` tokens, without window inputs.
    #[must_use]
    pub const fn blocks(blocks: u64, block_size: u64) -> Self {
        Self {
            blocks,
            block_size,
            window: None,
        }
    }
}

/// What bounds the blocks a sliding-window KV side holds: a window of `W` tokens keeps at most
/// `ceil(min(W - 1 + chunk_tokens, max_tokens) / block_size) + 1` blocks per sequence (the
/// window may start mid-block; a chunked prefill writes `chunk_tokens` at once), for
/// `sequences` sequences, and never more than the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowInputs {
    /// Concurrent sequences.
    pub sequences: u64,
    /// Tokens a chunked-prefill step writes at once.
    pub chunk_tokens: u64,
    /// The longest sequence, in tokens.
    pub max_tokens: u64,
}

/// The cache inputs: how many units each cache kind has. A `None` group gives its kinds no term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheInputs {
    /// Prefix-cache snapshot slots.
    pub prefix_snapshot_slots: u64,
    /// The decode-rollback ring.
    pub ring: Option<RingInputs>,
    /// The carried-state verify.
    pub carry: Option<CarryInputs>,
    /// Rows of the verify tables and of the accepted-hidden stash.
    pub verify_table_rows: u64,
    /// Captured hidden rows.
    pub capture_rows: u64,
    /// The host prompt-lookup index.
    pub lookup: Option<LookupInputs>,
    /// The token tree.
    pub tree: Option<TreeInputs>,
    /// The drafted tokens.
    pub drafts: Option<DraftInputs>,
}

impl CacheInputs {
    /// No cache: zero rows, no groups.
    pub const EMPTY: CacheInputs = CacheInputs {
        prefix_snapshot_slots: 0,
        ring: None,
        carry: None,
        verify_table_rows: 0,
        capture_rows: 0,
        lookup: None,
        tree: None,
        drafts: None,
    };
}

/// The decode-rollback ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingInputs {
    /// Ring slots per sequence slot.
    pub ring_slots: u64,
    /// Sequence slots the ring covers.
    pub seq_slots: u64,
}

/// The carried-state verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CarryInputs {
    /// Stash slots (verify slots, the dummy included).
    pub slots: u64,
    /// Rows of the pointer and flag tables.
    pub table_rows: u64,
}

/// The host prompt-lookup index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupInputs {
    /// Sequences with an index.
    pub sequences: u64,
    /// History tokens indexed per sequence.
    pub history_tokens: u64,
}

/// The token tree of a tree verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeInputs {
    /// Verify slots with a tree.
    pub slots: u64,
    /// Nodes per tree.
    pub nodes: u64,
}

/// The drafted tokens of a speculative step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DraftInputs {
    /// Verify slots with drafts.
    pub slots: u64,
    /// Draft positions per slot.
    pub positions: u64,
}
