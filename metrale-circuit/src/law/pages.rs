//! The unified page pool's law (vLLM's hybrid KV-cache manager, 0.33.0, commit 4ba787ec9):
//! from the layers a request's states live in ([`PoolLayer`]: an attention layer's bytes per
//! token, a recurrent layer's state bytes), the attention block size, the one page size, the
//! layer groups and the slots they share, and the pages one request holds ([`PoolShape`]).
//! Each rule names the vLLM lines it follows; docs/inputs.md restates them with figures.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - One implementation: the dynamic plan and a generated plan's table call these `const fn`s
//!   on their own list of layers, built by the one rule of [`PoolLayer`] (one per position and
//!   family, in plan order), so both get the same pool to the byte.
//! - Layers of one family share a *spec* when every figure of it is equal; vLLM buckets by
//!   spec, in the order a spec first appears.
//! - Every product and sum is checked: an overflow is [`PoolFault::Overflow`].

use super::SizeFault;
use super::sizing::reach_per_sequence;
use crate::model::{Position, Reach, VllmPool};

/// One layer of a request's state as the pool sees it: what sits at one position of the model,
/// of one family (vLLM builds one spec per attention module and one per recurrent module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLayer {
    /// Where the layer sits.
    pub position: Position,
    /// What it keeps.
    pub family: Family,
}

/// What a pool layer keeps per request: its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Paged attention KV: `token_bytes` per token over its sides (`k` and `v`, or one latent),
    /// of every token, or of its sliding window or attention chunk.
    Attention {
        /// Bytes of one token over the layer's KV sides.
        token_bytes: u64,
        /// Its sliding window or attention chunk, in tokens; `None`: every token.
        reach: Option<Reach>,
        /// One latent side instead of `k` and `v` (MLA): vLLM aligns a hybrid MLA model's
        /// block to at least 128 tokens.
        latent: bool,
    },
    /// Live recurrent state: `state_bytes` per request, one page (padded) per state page.
    Recurrent {
        /// Bytes of one request's live states in the layer (vLLM's Mamba page, unpadded).
        state_bytes: u64,
    },
}

impl PoolLayer {
    /// A placeholder for a list being built (`join`).
    pub const EMPTY: PoolLayer = PoolLayer {
        position: Position::Prologue,
        family: Family::Recurrent { state_bytes: 0 },
    };
}

/// Adds one state's unit to the pool layers `layers[..count]` (in plan order) and returns the
/// index of the layer it joined (`count` when it starts one): the one rule both plans build
/// their list by. A KV side (`attention`, with its `reach`: a sliding window or attention
/// chunk) or a live recurrent state at `position` joins the layer of its family there, or
/// starts one. A layer of one KV side is a latent (MLA) layer; a second side makes it `k`
/// and `v`.
///
/// # Errors
/// [`PoolFault::Overflow`] when a layer's bytes overflow.
///
/// # Panics
/// When `count` reaches `layers.len()`, which a caller sizing `layers` by its terms never does.
pub const fn join(
    layers: &mut [PoolLayer],
    count: usize,
    position: Position,
    attention: bool,
    unit_bytes: u64,
    reach: Option<Reach>,
) -> Result<usize, PoolFault> {
    let mut i = count;
    while i > 0 {
        i -= 1;
        if !same_position(layers[i].position, position) {
            break;
        }
        match (&mut layers[i].family, attention) {
            // One attention module's sides share their reach: a side of another reach at the
            // same position (a decoder layer's cross-attention beside its own) is a layer of
            // its own, as vLLM gives each attention module its own spec.
            (
                Family::Attention {
                    token_bytes,
                    latent,
                    reach: joined,
                },
                true,
            ) if same_reach(*joined, reach) => {
                let Some(bytes) = token_bytes.checked_add(unit_bytes) else {
                    return Err(PoolFault::Overflow);
                };
                *token_bytes = bytes;
                *latent = false;
                return Ok(i);
            }
            (Family::Recurrent { state_bytes }, false) => {
                let Some(bytes) = state_bytes.checked_add(unit_bytes) else {
                    return Err(PoolFault::Overflow);
                };
                *state_bytes = bytes;
                return Ok(i);
            }
            _ => {}
        }
    }
    layers[count] = PoolLayer {
        position,
        family: if attention {
            Family::Attention {
                token_bytes: unit_bytes,
                reach,
                latent: true,
            }
        } else {
            Family::Recurrent {
                state_bytes: unit_bytes,
            }
        },
    };
    Ok(count)
}

/// `a == b` (`Option<Reach>`'s `PartialEq` is not const).
const fn same_reach(a: Option<Reach>, b: Option<Reach>) -> bool {
    match (a, b) {
        (Some(Reach::Window(x)), Some(Reach::Window(y)))
        | (Some(Reach::Chunk(x)), Some(Reach::Chunk(y)))
        | (Some(Reach::Fixed(x)), Some(Reach::Fixed(y))) => x == y,
        (None, None) => true,
        _ => false,
    }
}

/// `a == b` (`Position`'s `PartialEq` is not const).
const fn same_position(a: Position, b: Position) -> bool {
    match (a, b) {
        (Position::Layer(a), Position::Layer(b)) => a == b,
        (Position::Prologue, Position::Prologue)
        | (Position::Epilogue, Position::Epilogue)
        | (Position::Draft, Position::Draft) => true,
        _ => false,
    }
}

/// Why a pool cannot be laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolFault {
    /// A product or sum overflowed `u64`.
    Overflow,
    /// A kernel block or a checkpoint alignment of 0 tokens.
    ZeroTokens,
    /// A sliding window or attention chunk of 0 tokens.
    ZeroWindow,
    /// Two attention layers keep different bytes per token: vLLM pads them to one page, a rule
    /// this policy does not follow (layers `first` and `other` of the list).
    MixedAttention {
        /// The first attention layer.
        first: usize,
        /// The first one whose bytes per token differ.
        other: usize,
    },
}

impl std::fmt::Display for PoolFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Overflow => f.write_str("the page pool's size overflows u64"),
            Self::ZeroTokens => f.write_str(
                "the page pool's `kernel_block` and `checkpoint_alignment` must be at least 1",
            ),
            Self::ZeroWindow => f.write_str("a sliding window or attention chunk of 0 tokens"),
            Self::MixedAttention { first, other } => write!(
                f,
                "under the vLLM page pool every attention layer must keep the same bytes per \
                 token, and the pool's layer {other} keeps other bytes than its layer {first}"
            ),
        }
    }
}

impl std::error::Error for PoolFault {}

/// The shape of a pool: its page, the groups of layers that share it, the slots they view and
/// what one request holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolShape {
    /// Attention tokens per page (the block size): the kernel block of a model without
    /// recurrent layers, widened for a hybrid so one attention page holds a recurrent page.
    pub block_tokens: u64,
    /// Bytes of one page of one layer: every layer's page, recurrent pages padded to it.
    pub page_bytes: u64,
    /// Layers per group at most: how many slots of `pages x page_bytes` the pool has, layer
    /// `i` of every group viewing slot `i`.
    pub slots: u64,
    /// KV-cache groups.
    pub groups: u64,
    /// Pages one request of `context` tokens holds over every group.
    pub request_pages: u64,
}

/// The greatest common divisor, for the lcm of two alignments.
const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

/// The index of the first layer of `layers` with the spec of layer `i`: its bucket.
const fn bucket_of(layers: &[PoolLayer], i: usize) -> usize {
    let mut j = 0;
    while j < i {
        if same_spec(&layers[j].family, &layers[i].family) {
            return j;
        }
        j += 1;
    }
    i
}

/// Two specs are one when every figure is equal (`Family`'s `PartialEq` is not const).
const fn same_spec(a: &Family, b: &Family) -> bool {
    match (a, b) {
        (
            Family::Attention {
                token_bytes: a,
                reach: ra,
                latent: la,
            },
            Family::Attention {
                token_bytes: b,
                reach: rb,
                latent: lb,
            },
        ) => *a == *b && *la == *lb && same_reach(*ra, *rb),
        (Family::Recurrent { state_bytes: a }, Family::Recurrent { state_bytes: b }) => *a == *b,
        _ => false,
    }
}

/// How many layers of `layers` share the spec of bucket `b` (a bucket's first layer), and the
/// rank among them of layer `i` (when `i` is in it).
const fn bucket_count(layers: &[PoolLayer], b: usize, i: usize) -> (u64, u64) {
    let (mut count, mut rank) = (0, 0);
    let mut j = b;
    while j < layers.len() {
        if same_spec(&layers[j].family, &layers[b].family) {
            if j < i {
                rank += 1;
            }
            count += 1;
        }
        j += 1;
    }
    (count, rank)
}

/// vLLM's group size (`_get_kv_cache_groups_uniform_page_size`, `kv_cache_planning.py:521-532`):
/// the fewest layers of any spec, or the most when the most are under 1.5 times the fewest.
const fn group_size(layers: &[PoolLayer]) -> u64 {
    let (mut fewest, mut most) = (u64::MAX, 0);
    let mut i = 0;
    while i < layers.len() {
        if bucket_of(layers, i) == i {
            let (n, _) = bucket_count(layers, i, i);
            if n < fewest {
                fewest = n;
            }
            if n > most {
                most = n;
            }
        }
        i += 1;
    }
    if most == 0 {
        // No layer: no group to size.
        return 1;
    }
    // `most < 1.5 x fewest`, in integers (both at most the layer count, a slice's length: no
    // overflow in u128).
    if 2 * (most as u128) < 3 * (fewest as u128) {
        most
    } else {
        fewest
    }
}

/// The layer group of every layer and the slot it views, in one pass: each spec's `n` layers
/// split into `m = ceil(n / G)` groups, group `r mod m` taking its `r`-th layer at slot `r / m`
/// (`kv_cache_planning.py:542, 554-555`: `layers[i::m]`). Groups are numbered spec by spec, in
/// the order the specs first appear. Quadratic in the layers (each layer's spec is found once),
/// never worse, whatever the circuit.
#[must_use]
pub fn groups(layers: &[PoolLayer]) -> Vec<(u64, u64)> {
    let size = group_size(layers);
    let buckets: Vec<usize> = (0..layers.len()).map(|i| bucket_of(layers, i)).collect();
    // Per bucket (its first layer): its layers, its first group, and how many it has met.
    let mut count = vec![0u64; layers.len()];
    for &b in &buckets {
        count[b] += 1;
    }
    let mut first_group = vec![0u64; layers.len()];
    let mut next = 0;
    for (i, &b) in buckets.iter().enumerate() {
        if b == i {
            first_group[i] = next;
            next += count[i].div_ceil(size);
        }
    }
    let mut met = vec![0u64; layers.len()];
    buckets
        .iter()
        .map(|&b| {
            let (rank, m) = (met[b], count[b].div_ceil(size));
            met[b] += 1;
            (first_group[b] + rank % m, rank / m)
        })
        .collect()
}

/// The pool's shape for `layers` under `pool`.
///
/// - Block size (`platforms/interface.py:749-794`, `_align_hybrid_block_size` 939-1137): the
///   kernel block without recurrent layers; for a hybrid, `A = k x ceil(M / (k x a1))`, `a1`
///   an attention layer's bytes per token, `M` the largest recurrent page, `k` the kernel
///   block (at least 128 for MLA, 1083-1088), widened to `lcm(k, checkpoint_alignment)` under
///   prefix caching (1089-1094), rounded up to the kernel block (1102-1104); never below the
///   kernel block (1106-1112).
/// - Page: `block x a1`, recurrent pages padded to it (1117-1137); without attention, `M`.
/// - Pages per request of a group (`kv_cache_interface.py`): full attention or MLA
///   `ceil(C / B)` (643-648); a window `W`: `ceil(min(W - 1 + T, C) / B) + 1`, `T` the tokens
///   of every batch in flight (937-944, `config/vllm.py:600-609`); an attention chunk `K`:
///   `ceil(min(K + T, C) / B)` (864-888); cross-attention over an encoder (a fixed count)
///   `ceil(N / B)`, `N` the batched tokens (1221-1228, `config/scheduler.py:306`); recurrent
///   `2 + S + checkpoint`
///   under prefix caching (`align` mode, 1135-1139), else `1 + S` (1140-1141).
///
/// # Errors
/// [`PoolFault`].
pub const fn shape(layers: &[PoolLayer], pool: &VllmPool) -> Result<PoolShape, PoolFault> {
    if pool.kernel_block == 0 || pool.checkpoint_alignment == 0 {
        return Err(PoolFault::ZeroTokens);
    }
    // `a1` (every attention layer's, or a fault), MLA, and `M` (the largest).
    let (mut token_bytes, mut first_attention, mut latent, mut state_bytes) = (0, None, false, 0);
    let mut i = 0;
    while i < layers.len() {
        match layers[i].family {
            Family::Attention {
                token_bytes: bytes,
                latent: l,
                ..
            } => match first_attention {
                None => {
                    first_attention = Some(i);
                    token_bytes = bytes;
                    latent = l;
                }
                Some(first) if bytes != token_bytes => {
                    return Err(PoolFault::MixedAttention { first, other: i });
                }
                Some(_) => latent = latent || l,
            },
            Family::Recurrent { state_bytes: bytes } => {
                if bytes > state_bytes {
                    state_bytes = bytes;
                }
            }
        }
        i += 1;
    }
    let block_tokens = match first_attention {
        Some(_) if state_bytes > 0 && token_bytes > 0 => {
            match hybrid_block(pool, token_bytes, state_bytes, latent) {
                Ok(block) => block,
                Err(fault) => return Err(fault),
            }
        }
        _ => pool.kernel_block,
    };
    let page_bytes = match first_attention {
        Some(_) => match block_tokens.checked_mul(token_bytes) {
            Some(page) if page >= state_bytes => page,
            Some(_) => state_bytes,
            None => return Err(PoolFault::Overflow),
        },
        None => state_bytes,
    };
    // Groups and slots, spec by spec.
    let g = group_size(layers);
    let (mut groups, mut slots, mut request_pages) = (0u64, 0u64, 0u64);
    let mut i = 0;
    while i < layers.len() {
        if bucket_of(layers, i) == i {
            let (n, _) = bucket_count(layers, i, i);
            let m = n.div_ceil(g);
            let width = n.div_ceil(m);
            if width > slots {
                slots = width;
            }
            groups += m;
            let pages = match spec_pages(&layers[i].family, pool, block_tokens) {
                Ok(pages) => pages,
                Err(fault) => return Err(fault),
            };
            let Some(total) = pages.checked_mul(m) else {
                return Err(PoolFault::Overflow);
            };
            request_pages = match request_pages.checked_add(total) {
                Some(sum) => sum,
                None => return Err(PoolFault::Overflow),
            };
        }
        i += 1;
    }
    Ok(PoolShape {
        block_tokens,
        page_bytes,
        slots,
        groups,
        request_pages,
    })
}

/// A hybrid's block size: `A = k x ceil(M / (k x a1))` for the attention layers' `a1` bytes a
/// token and the largest recurrent page `M`, `k` the kernel block (at least 128 for MLA),
/// widened to `lcm(k, checkpoint_alignment)` under prefix caching; rounded up to the kernel
/// block and never below it.
const fn hybrid_block(
    pool: &VllmPool,
    token_bytes: u64,
    state_bytes: u64,
    latent: bool,
) -> Result<u64, PoolFault> {
    let mut k = pool.kernel_block;
    if latent && k < 128 {
        k = 128;
    }
    if pool.prefix_caching {
        let Some(lcm) =
            (k / gcd(k, pool.checkpoint_alignment)).checked_mul(pool.checkpoint_alignment)
        else {
            return Err(PoolFault::Overflow);
        };
        k = lcm;
    }
    let Some(k_bytes) = k.checked_mul(token_bytes) else {
        return Err(PoolFault::Overflow);
    };
    let Some(a) = state_bytes.div_ceil(k_bytes).checked_mul(k) else {
        return Err(PoolFault::Overflow);
    };
    let Some(a) = a.div_ceil(pool.kernel_block).checked_mul(pool.kernel_block) else {
        return Err(PoolFault::Overflow);
    };
    Ok(if a > pool.kernel_block {
        a
    } else {
        pool.kernel_block
    })
}

/// Pages one request holds in one group of `family`'s spec.
const fn spec_pages(family: &Family, pool: &VllmPool, block: u64) -> Result<u64, PoolFault> {
    match *family {
        Family::Attention { reach: None, .. } => Ok(pool.context.div_ceil(block)),
        // Cross-attention (`CrossAttentionSpec`, `kv_cache_interface.py:1221-1228`) holds
        // `ceil(max_num_encoder_input_tokens / B)` pages, a figure vLLM sets to
        // `max_num_batched_tokens` (`config/scheduler.py:306`), not the encoder's positions.
        Family::Attention {
            reach: Some(Reach::Fixed(_)),
            ..
        } => Ok(pool.batched_tokens.div_ceil(block)),
        Family::Attention {
            reach: Some(reach), ..
        } => {
            // The arenas' law with the batches in flight as the step (ChunkedLocalAttentionSpec,
            // `kv_cache_interface.py:864-888`: a chunk has no extra block; a window's has).
            let Some(in_flight) = pool.batched_tokens.checked_mul(pool.batches_in_flight) else {
                return Err(PoolFault::Overflow);
            };
            match reach_per_sequence(reach, in_flight, pool.context, block) {
                Ok(pages) => Ok(pages),
                Err(SizeFault::Negative) => Err(PoolFault::ZeroWindow),
                // A block is at least the kernel block, checked nonzero by `shape`.
                Err(SizeFault::DivisionByZero) => Err(PoolFault::ZeroTokens),
                Err(_) => Err(PoolFault::Overflow),
            }
        }
        Family::Recurrent { .. } => {
            let held: u64 = if pool.prefix_caching { 2 } else { 1 };
            let checkpoint = if pool.prefix_caching {
                pool.checkpoint_pages
            } else {
                0
            };
            match held.checked_add(pool.speculative_tokens) {
                Some(pages) => match pages.checked_add(checkpoint) {
                    Some(pages) => Ok(pages),
                    None => Err(PoolFault::Overflow),
                },
                None => Err(PoolFault::Overflow),
            }
        }
    }
}

impl PoolShape {
    /// Pages the pool has under `pages`: for `n` requests, `n` times a request's pages and the
    /// null page vLLM's block pool reserves (`block_pool.py:188-192`).
    ///
    /// # Errors
    /// [`PoolFault::Overflow`].
    pub const fn pages(&self, pages: crate::model::PoolPages) -> Result<u64, PoolFault> {
        match pages {
            crate::model::PoolPages::Pages(pages) => Ok(pages),
            crate::model::PoolPages::Requests(requests) => {
                match requests.checked_mul(self.request_pages) {
                    Some(held) => match held.checked_add(1) {
                        Some(pages) => Ok(pages),
                        None => Err(PoolFault::Overflow),
                    },
                    None => Err(PoolFault::Overflow),
                }
            }
        }
    }

    /// Bytes one page id takes over every slot (vLLM's bytes per block, `kv_cache_planning.py`:
    /// 574-605: `slots x page_bytes`).
    ///
    /// # Errors
    /// [`PoolFault::Overflow`].
    pub const fn row_bytes(&self) -> Result<u64, PoolFault> {
        match self.slots.checked_mul(self.page_bytes) {
            Some(bytes) => Ok(bytes),
            None => Err(PoolFault::Overflow),
        }
    }

    /// Bytes of a pool of `pages` pages: one backing buffer of `pages x row_bytes`, slot `i`
    /// its `i`-th `pages x page_bytes` (`worker/utils.py:579-596`; the layer-outermost layout).
    ///
    /// # Errors
    /// [`PoolFault::Overflow`].
    pub const fn bytes(&self, pages: u64) -> Result<u64, PoolFault> {
        match self.row_bytes() {
            Ok(row) => match pages.checked_mul(row) {
                Some(bytes) => Ok(bytes),
                None => Err(PoolFault::Overflow),
            },
            Err(fault) => Err(fault),
        }
    }

    /// Requests of a whole context a pool of `pages` pages holds at once: its pages but the
    /// null page, over a request's pages.
    #[must_use]
    pub const fn admitted(&self, pages: u64) -> u64 {
        match self.request_pages {
            0 => u64::MAX,
            per => pages.saturating_sub(1) / per,
        }
    }

    /// The tokens vLLM's log reports for a pool of `pages` pages ("GPU KV cache size",
    /// `kv_cache_utils.py:1061-1154`): `floor(pages x context / request pages)`, the null page
    /// counted, as vLLM counts it; `None` when it overflows or a request holds no page.
    #[must_use]
    pub const fn tokens(&self, pages: u64, context: u64) -> Option<u64> {
        if self.request_pages == 0 {
            return None;
        }
        let product = (pages as u128) * (context as u128) / (self.request_pages as u128);
        if product > u64::MAX as u128 {
            None
        } else {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "checked against u64::MAX just above"
            )]
            Some(product as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PoolPages;

    const FULL: Family = Family::Attention {
        token_bytes: 8192,
        reach: None,
        latent: false,
    };
    const SLIDING: Family = Family::Attention {
        token_bytes: 8192,
        reach: Some(Reach::Window(1024)),
        latent: false,
    };

    /// Gemma 3's pattern: five sliding layers, then a full one, 62 layers.
    fn gemma() -> Vec<PoolLayer> {
        (0..62)
            .map(|i| PoolLayer {
                position: Position::Layer(i),
                family: if (i + 1) % 6 == 0 { FULL } else { SLIDING },
            })
            .collect()
    }

    #[test]
    fn specs_split_into_groups_of_the_fewest_layers() {
        let layers = gemma();
        // 52 sliding, 10 full: 52 >= 1.5 x 10, groups of 10; the sliding spec (first seen)
        // in ceil(52 / 10) = 6 groups, its r-th layer in group r mod 6 at slot r / 6.
        let groups = groups(&layers);
        assert_eq!(groups[0], (0, 0));
        assert_eq!(groups[4], (4, 0));
        assert_eq!(
            groups[5],
            (6, 0),
            "the first full layer: the full spec's only group"
        );
        assert_eq!(groups[6], (5, 0), "the sixth sliding layer");
        assert_eq!(
            groups[7],
            (0, 1),
            "the seventh: group 0 again, its second slot"
        );
        let mut sizes = [0u64; 7];
        for &(group, _) in &groups {
            sizes[usize::try_from(group).unwrap()] += 1;
        }
        assert_eq!(sizes, [9, 9, 9, 9, 8, 8, 10]);
        let shape = shape(&layers, &VllmPool::serving(32768)).unwrap();
        assert_eq!((shape.groups, shape.slots, shape.block_tokens), (7, 10, 16));
        // Full: 32768 / 16 = 2048; each sliding group ceil((1023 + 16384) / 16) + 1 = 1089.
        assert_eq!(shape.request_pages, 2048 + 6 * 1089);
        // Counts within 1.5x of each other: groups of the most (12 and 13 -> 13).
        let close: Vec<PoolLayer> = (0..25)
            .map(|i| PoolLayer {
                position: Position::Layer(i),
                family: if i < 12 { SLIDING } else { FULL },
            })
            .collect();
        let shape = super::shape(&close, &VllmPool::serving(100)).unwrap();
        assert_eq!((shape.groups, shape.slots), (2, 13));
    }

    #[test]
    fn cross_attention_holds_the_batched_tokens_whatever_the_context() {
        // Whisper's decoder: each of 32 layers keeps its own KV (20 heads x 64 x 2 sides x
        // bf16 = 5,120 B a token) and the KV of the encoder's 1,500 positions.
        let cross = Family::Attention {
            token_bytes: 5120,
            reach: Some(Reach::Fixed(1500)),
            latent: false,
        };
        let own = Family::Attention {
            token_bytes: 5120,
            reach: None,
            latent: false,
        };
        let layers: Vec<PoolLayer> = (0..32)
            .flat_map(|i| {
                [own, cross].map(|family| PoolLayer {
                    position: Position::Layer(i),
                    family,
                })
            })
            .collect();
        let pool = VllmPool::serving(448);
        assert_eq!(pool.batched_tokens, 8192);
        let shape = shape(&layers, &pool).unwrap();
        // Two specs of 32 layers: one group each, 32 slots, 16-token pages of 81,920 B.
        assert_eq!((shape.groups, shape.slots, shape.block_tokens), (2, 32, 16));
        assert_eq!(shape.page_bytes, 16 * 5120);
        // A request: ceil(448 / 16) = 28 pages of its own, and vLLM's cross-attention worst
        // case ceil(max_num_encoder_input_tokens = 8192 / 16) = 512, not ceil(1500 / 16) = 94.
        assert_eq!(shape.request_pages, 28 + 512);
    }

    #[test]
    fn a_layer_s_sides_of_another_reach_are_a_layer_of_their_own() {
        // A decoder layer: its own k and v join one pool layer; the cross-attention's k and v,
        // of a fixed token count, another at the same position; a second layer starts anew.
        let mut layers = [PoolLayer::EMPTY; 8];
        let at = |i| Position::Layer(i);
        let fixed = Some(Reach::Fixed(1500));
        let mut count = 0;
        for (position, reach) in [
            (at(0), None),
            (at(0), None),
            (at(0), fixed),
            (at(0), fixed),
            (at(1), None),
        ] {
            let i = join(&mut layers, count, position, true, 2560, reach).unwrap();
            if i == count {
                count += 1;
            }
        }
        assert_eq!(count, 3);
        let own = Family::Attention {
            token_bytes: 5120,
            reach: None,
            latent: false,
        };
        assert_eq!(layers[0].family, own);
        assert_eq!(
            layers[1].family,
            Family::Attention {
                token_bytes: 5120,
                reach: fixed,
                latent: false,
            }
        );
        assert_eq!(
            (layers[2].position, layers[2].family),
            (
                at(1),
                Family::Attention {
                    token_bytes: 2560,
                    reach: None,
                    latent: true,
                }
            )
        );
    }

    #[test]
    fn a_hybrid_block_holds_a_recurrent_state_in_one_page() {
        let layers = [
            PoolLayer {
                position: Position::Layer(0),
                family: Family::Recurrent { state_bytes: 1000 },
            },
            PoolLayer {
                position: Position::Layer(1),
                family: Family::Attention {
                    token_bytes: 10,
                    reach: None,
                    latent: false,
                },
            },
        ];
        // k = lcm(16, 24) = 48; 48 x ceil(1000 / 480) = 144 tokens, a 1440-byte page.
        let pool = VllmPool {
            checkpoint_alignment: 24,
            ..VllmPool::serving(1000)
        };
        let shape = shape(&layers, &pool).unwrap();
        assert_eq!((shape.block_tokens, shape.page_bytes), (144, 1440));
        // ceil(1000 / 144) = 7 attention pages, 2 + 1 recurrent pages; one group each.
        assert_eq!((shape.groups, shape.slots, shape.request_pages), (2, 1, 10));
        assert_eq!(shape.pages(PoolPages::Requests(3)), Ok(31));
        assert_eq!(shape.admitted(31), 3);
        // Without prefix caching, k = 16: 16 x ceil(1000 / 160) = 112, one recurrent page.
        let none = VllmPool {
            prefix_caching: false,
            ..pool
        };
        let shape = super::shape(&layers, &none).unwrap();
        assert_eq!((shape.block_tokens, shape.request_pages), (112, 9 + 1));
        // An MLA hybrid aligns to 128: 128 x ceil(1000 / 1280) = 128.
        let mut latent = layers;
        latent[1].family = Family::Attention {
            token_bytes: 10,
            reach: None,
            latent: true,
        };
        assert_eq!(super::shape(&latent, &none).unwrap().block_tokens, 128);
    }

    #[test]
    fn faults_are_values() {
        let mixed = [
            PoolLayer {
                position: Position::Layer(0),
                family: FULL,
            },
            PoolLayer {
                position: Position::Layer(1),
                family: Family::Attention {
                    token_bytes: 1,
                    reach: None,
                    latent: false,
                },
            },
        ];
        let pool = VllmPool::serving(10);
        assert_eq!(
            shape(&mixed, &pool),
            Err(PoolFault::MixedAttention { first: 0, other: 1 })
        );
        let zero = VllmPool {
            kernel_block: 0,
            ..pool
        };
        assert_eq!(shape(&mixed[..1], &zero), Err(PoolFault::ZeroTokens));
        // No layer: no group, nothing a request holds.
        let empty = shape(&[], &pool).unwrap();
        assert_eq!((empty.groups, empty.request_pages), (0, 0));
        let huge = VllmPool {
            batched_tokens: u64::MAX,
            ..pool
        };
        let window = [PoolLayer {
            position: Position::Layer(0),
            family: SLIDING,
        }];
        assert_eq!(shape(&window, &huge), Err(PoolFault::Overflow));
        let one = shape(&window, &pool).unwrap();
        assert_eq!(one.bytes(u64::MAX), Err(PoolFault::Overflow));
    }

    #[test]
    fn states_join_the_layer_of_their_family_at_their_position() {
        let mut layers = [PoolLayer::EMPTY; 4];
        let at = Position::Layer(3);
        assert_eq!(join(&mut layers, 0, at, true, 4, None), Ok(0));
        assert_eq!(join(&mut layers, 1, at, false, 7, None), Ok(1));
        // The second KV side joins the attention layer: `k` and `v`, not a latent.
        assert_eq!(join(&mut layers, 2, at, true, 4, None), Ok(0));
        assert_eq!(
            layers[0].family,
            Family::Attention {
                token_bytes: 8,
                reach: None,
                latent: false
            }
        );
        // Another position starts a layer.
        assert_eq!(join(&mut layers, 2, Position::Draft, true, 4, None), Ok(2));
    }
}
