//! The serving profile: a server described by what its operator decides (concurrent
//! sequences, verified rows per step, KV tokens per sequence, caches per sequence), and the one
//! rule that derives every count a plan needs from it, so the counts that must agree (slots,
//! verify slots, ring and carry and tree and draft slots, verify-table rows) cannot drift.
//!
//! Owner: metrale-circuit (runtime). The inputs file's `[serving]` table reads into a
//! [`ServingProfile`]; the CLI's `fit --for sequences` and the generated
//! `AnyPlan::fit_sequences` vary its `sequences`.
//!
//! The rule ([`ServingProfile::inputs`]), for `S` sequences, `K` verified rows per step and
//! `V` verify slots (`min(verify_batch, S) + 1`: the sequences that verify at once, all `S`
//! unless a verify batch is set, and the dummy; with `h_steps` tiers, the tiers kept, below):
//!
//! | count | derived |
//! | --- | --- |
//! | `slots` | `S + 1` (the padding dummy batched kernels may write into) |
//! | `[verify]` | when `K > 0`: `K` `h_steps` rows in each of the `V` verify slots, or the tiers `h_steps` when given, `conv_steps = K` |
//! | `[kv]` | `block_size`, and `blocks = ceil(S x tokens per sequence / block_size)` (or the pool's blocks as given); window inputs `sequences = S`, `chunk_tokens`, `max_tokens` = tokens per sequence (or the pool's tokens) when `chunk_tokens` is given |
//! | `[draft_kv]` | the main pool, when `draft_kv` is set |
//! | `draft_kv_dtype` | as given (a format, not a count) |
//! | `prefix_snapshot_slots` | `S x prefix_snapshots` |
//! | `ring` | when `ring_depth > 0`: `ring_depth` ring slots for each of the `S + 1` slots, or of the `S` sequences when the ring leaves the dummy out (`ring_dummy = false`) |
//! | `carry` | when `carry`: `V` stashes, and `table_rows` carry-table rows (`V` when not set) |
//! | `verify_table_rows` | `table_rows` when set (an engine's fixed capacity), else the verified rows (`V x K`, or the sum of the tiers kept) |
//! | `capture_rows` | as given |
//! | `lookup` | when `lookup_history > 0`: `S` sequences of `lookup_history` tokens (the dummy has no history) |
//! | `tree` | when `tree_nodes > 0`: `V` trees of `tree_nodes` nodes |
//! | `drafts` | when `K > 0`: `V` verify slots of `K` positions (one per verified row) |
//!
//!
//! `h_steps` tiers (an engine that gives each verify slot its own `h` rows, not `K` each): each
//! verify slot's rows, the dummy's last. When set, the verify slots are the list's (`V` its
//! length) and `verify_batch` is not read; a profile of fewer sequences `S` than the list's
//! verify batch (its length - 1) keeps the first `min(len - 1, S) + 1` entries, so the verify
//! slots never outnumber the slots. Read only when `K > 0`.
//!
//! Invariants: every count is non-decreasing in `S`, so a plan's bytes are too (what `fit`
//! relies on: tiers are kept as a growing prefix); every product and sum is checked, an
//! overflow is [`SizeFault::Overflow`].

use crate::law::SizeFault;
use crate::model::{
    CacheInputs, CarryInputs, DraftInputs, HSteps, KvInputs, LookupInputs, PoolPages, PoolPolicy,
    RingInputs, StateDtype, StateInputs, TreeInputs, VerifyInputs, VllmPool, WindowInputs,
};

/// What a server decides, from which every plan count follows ([`ServingProfile::inputs`]).
/// It borrows its `h_steps` tiers, so it stays `Copy` and const-constructible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServingProfile<'a> {
    /// Concurrent sequences (`max_num_seqs`).
    pub sequences: u64,
    /// Rows a speculative step verifies (`K`: the bonus row and `K - 1` drafts); 0 when the
    /// server does not verify.
    pub verify_rows: u64,
    /// Sequences that verify at once, when fewer than all `sequences` do (the verify slots are
    /// this, at most `sequences`, plus the dummy); `None`: every sequence. Not read with
    /// `h_steps`.
    pub verify_batch: Option<u64>,
    /// Each verify slot's `h` rows, the dummy's last, when they are not `verify_rows` each (an
    /// engine that tiers them): the verify slots are its length, and at `sequences` below its
    /// verify batch (length - 1) its first `min(len - 1, sequences) + 1` entries. `None`:
    /// `verify_rows` in each verify slot.
    pub h_steps: Option<&'a [u64]>,
    /// The fixed row capacity of the verify tables and the carry tables, as real engines size
    /// them (128 in the reference engine); `None`: one row per verified row, one carry row per
    /// verify slot.
    pub table_rows: Option<u64>,
    /// The decode-rollback ring covers the padding dummy's slot too (`true`, `S + 1` slots), or
    /// the real sequences only (`false`, `S`).
    pub ring_dummy: bool,
    /// The main paged KV blocks; `None` for a model without one.
    pub kv: Option<ProfileKv>,
    /// The draft head's KV blocks are as many as the main ones.
    pub draft_kv: bool,
    /// The draft head's KV dtype, when not its format key's ([`StateInputs::draft_kv_dtype`]):
    /// not a count, passed through to the inputs.
    pub draft_kv_dtype: Option<StateDtype>,
    /// Prefix-cache snapshots per sequence.
    pub prefix_snapshots: u64,
    /// Decode-rollback ring depth per slot; 0 for no ring.
    pub ring_depth: u64,
    /// Carried-state verify: a stash and a table row per verify slot.
    pub carry: bool,
    /// Token-tree nodes per verify slot; 0 for no tree.
    pub tree_nodes: u64,
    /// Hidden rows captured for the draft head's prefill.
    pub capture_rows: u64,
    /// Prompt-lookup history tokens per sequence; 0 for no lookup index.
    pub lookup_history: u64,
    /// vLLM's unified page pool instead of arenas for what a request holds; `None`: arenas.
    /// Unless it gives its pages, the pool holds the `sequences` requests and the null page.
    pub pool: Option<VllmPool>,
}

/// The main KV blocks of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileKv {
    /// Tokens per block.
    pub block_size: u64,
    /// How large the pool is.
    pub tokens: KvTokens,
    /// Tokens a chunked-prefill step writes at once: with it, windowed sides get window
    /// inputs; without it, a circuit with a windowed side cannot be planned.
    pub chunk_tokens: Option<u64>,
}

/// How many KV blocks a profile holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvTokens {
    /// Tokens each sequence may hold (its context): the pool holds every sequence's.
    PerSequence(u64),
    /// A pool of this many blocks, however many sequences share it.
    Pool(u64),
}

impl<'a> ServingProfile<'a> {
    /// No sequences, no verify, no KV, no caches.
    pub const EMPTY: ServingProfile<'static> = ServingProfile {
        sequences: 0,
        verify_rows: 0,
        verify_batch: None,
        h_steps: None,
        table_rows: None,
        ring_dummy: true,
        kv: None,
        draft_kv: false,
        draft_kv_dtype: None,
        prefix_snapshots: 0,
        ring_depth: 0,
        carry: false,
        tree_nodes: 0,
        capture_rows: 0,
        lookup_history: 0,
        pool: None,
    };

    /// Every count a plan needs, by the rule in this module's documentation, and the draft KV
    /// dtype as given; `formats` is left empty for the caller
    /// (`StateInputs { formats, ..profile.inputs()? }`).
    ///
    /// # Errors
    /// [`SizeFault::Overflow`] when a count overflows; [`SizeFault::DivisionByZero`] for a KV
    /// pool of 0-token blocks sized per sequence.
    pub const fn inputs(&self) -> Result<StateInputs<'a>, SizeFault> {
        let Some(slots) = self.sequences.checked_add(1) else {
            return Err(SizeFault::Overflow);
        };
        let k = self.verify_rows;
        let h_steps = self.slot_rows();
        let verify_slots = h_steps.slots();
        let verify = if k > 0 {
            Some(VerifyInputs {
                h_steps,
                conv_steps: k,
            })
        } else {
            None
        };
        let kv = match self.kv {
            Some(pool) => match pool_inputs(&pool, self.sequences) {
                Ok(kv) => Some(kv),
                Err(fault) => return Err(fault),
            },
            None => None,
        };
        let (Some(prefix), Some(rows_verified)) = (
            self.sequences.checked_mul(self.prefix_snapshots),
            h_steps.total(),
        ) else {
            return Err(SizeFault::Overflow);
        };
        let verify_table_rows = match self.table_rows {
            Some(rows) => rows,
            None => rows_verified,
        };
        Ok(StateInputs {
            formats: &[],
            slots,
            verify,
            kv,
            draft_kv: if self.draft_kv { kv } else { None },
            draft_kv_dtype: self.draft_kv_dtype,
            caches: CacheInputs {
                prefix_snapshot_slots: prefix,
                ring: if self.ring_depth > 0 {
                    Some(RingInputs {
                        ring_slots: self.ring_depth,
                        seq_slots: if self.ring_dummy {
                            slots
                        } else {
                            self.sequences
                        },
                    })
                } else {
                    None
                },
                carry: if self.carry {
                    Some(CarryInputs {
                        slots: verify_slots,
                        table_rows: match self.table_rows {
                            Some(rows) => rows,
                            None => verify_slots,
                        },
                    })
                } else {
                    None
                },
                verify_table_rows,
                capture_rows: self.capture_rows,
                lookup: if self.lookup_history > 0 {
                    Some(LookupInputs {
                        sequences: self.sequences,
                        history_tokens: self.lookup_history,
                    })
                } else {
                    None
                },
                tree: if self.tree_nodes > 0 {
                    Some(TreeInputs {
                        slots: verify_slots,
                        nodes: self.tree_nodes,
                    })
                } else {
                    None
                },
                drafts: if k > 0 {
                    Some(DraftInputs {
                        slots: verify_slots,
                        positions: k,
                    })
                } else {
                    None
                },
            },
            pool: self.pool_policy(),
        })
    }

    /// The layout policy: arenas, or the vLLM pool holding the `sequences` requests unless it
    /// gives its pages.
    const fn pool_policy(&self) -> PoolPolicy {
        match self.pool {
            Some(mut pool) => {
                if let PoolPages::Requests(_) = pool.pages {
                    pool.pages = PoolPages::Requests(self.sequences);
                }
                PoolPolicy::Vllm(pool)
            }
            None => PoolPolicy::Arenas,
        }
    }

    /// The rows of each verify slot (the dummy's last) at this profile's sequences, by the
    /// rule in this module's documentation: `verify_rows` in each of `min(verify_batch, S) + 1`
    /// slots, or, for a server that verifies, the first `min(len - 1, S) + 1` tiers of
    /// `h_steps`.
    #[must_use]
    pub const fn slot_rows(&self) -> HSteps<'a> {
        if let (Some(tiers), 1..) = (self.h_steps, self.verify_rows) {
            // The verify batch the tiers name is their length less the dummy's; an empty list
            // names no verify slot.
            let keep = match tiers.len().checked_sub(1) {
                Some(batch) if (batch as u64) <= self.sequences => tiers.len(),
                Some(_) => {
                    #[allow(
                        clippy::cast_possible_truncation,
                        reason = "`sequences` is below the tiers' batch, a usize"
                    )]
                    let sequences = self.sequences as usize;
                    sequences + 1
                }
                None => 0,
            };
            return HSteps::PerSlot(tiers.split_at(keep).0);
        }
        // The batch (at most every sequence) and the dummy; at most `slots`, so no overflow
        // where `slots` did not.
        let batch = match self.verify_batch {
            Some(batch) if batch < self.sequences => batch,
            _ => self.sequences,
        };
        HSteps::Uniform {
            slots: batch.saturating_add(1),
            rows: self.verify_rows,
        }
    }

    /// The same profile at `sequences` sequences of `context` tokens each (what
    /// `fit --for sequences --context` varies): the KV blocks, if any, become `context` tokens
    /// per sequence.
    #[must_use]
    pub const fn at(&self, sequences: u64, context: u64) -> ServingProfile<'a> {
        let mut profile = *self;
        profile.sequences = sequences;
        if let Some(mut kv) = profile.kv {
            kv.tokens = KvTokens::PerSequence(context);
            profile.kv = Some(kv);
        }
        if let Some(mut pool) = profile.pool {
            pool.pages = PoolPages::Requests(sequences);
            pool.context = context;
            profile.pool = Some(pool);
        }
        profile
    }
}

/// The input of a profile a fit varies ([`ServingProfile::varied`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileFree {
    /// `sequences`, each holding `context` KV tokens ([`ServingProfile::at`]).
    Sequences {
        /// KV tokens per sequence.
        context: u64,
    },
    /// The main KV blocks ([`ServingProfile::with_kv_blocks`]).
    KvBlocks,
}

impl<'a> ServingProfile<'a> {
    /// The profile with its free input `free` at `value`.
    #[must_use]
    pub const fn varied(&self, free: ProfileFree, value: u64) -> ServingProfile<'a> {
        match free {
            ProfileFree::Sequences { context } => self.at(value, context),
            ProfileFree::KvBlocks => self.with_kv_blocks(value),
        }
    }

    /// The same profile with `blocks` main KV blocks (what `fit --for kv-blocks`
    /// varies under a profile): the draft pool follows it when `draft_kv` ties them. A profile
    /// without KV blocks is returned as it is.
    #[must_use]
    pub const fn with_kv_blocks(&self, blocks: u64) -> ServingProfile<'a> {
        let mut profile = *self;
        if let Some(mut kv) = profile.kv {
            kv.tokens = KvTokens::Pool(blocks);
            profile.kv = Some(kv);
        }
        if let Some(mut pool) = profile.pool {
            pool.pages = PoolPages::Pages(blocks);
            profile.pool = Some(pool);
        }
        profile
    }
}

/// The KV inputs of a profile's pool for `sequences` sequences.
const fn pool_inputs(pool: &ProfileKv, sequences: u64) -> Result<KvInputs, SizeFault> {
    let (blocks, max_tokens) = match pool.tokens {
        KvTokens::PerSequence(tokens) => {
            let Some(all) = sequences.checked_mul(tokens) else {
                return Err(SizeFault::Overflow);
            };
            let Some(blocks) = all.checked_div(pool.block_size) else {
                return Err(SizeFault::DivisionByZero);
            };
            let blocks = if all % pool.block_size == 0 {
                blocks
            } else {
                blocks + 1
            };
            (blocks, tokens)
        }
        KvTokens::Pool(blocks) => match blocks.checked_mul(pool.block_size) {
            Some(tokens) => (blocks, tokens),
            None => return Err(SizeFault::Overflow),
        },
    };
    Ok(KvInputs {
        blocks,
        block_size: pool.block_size,
        window: match pool.chunk_tokens {
            Some(chunk_tokens) => Some(WindowInputs {
                sequences,
                chunk_tokens,
                max_tokens,
            }),
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::Disagreement;

    /// The server `metrale-codegen/cli/inputs/default.toml` describes count by count.
    const DEFAULT: ServingProfile<'static> = ServingProfile {
        sequences: 8,
        verify_rows: 4,
        verify_batch: None,
        h_steps: None,
        table_rows: None,
        ring_dummy: true,
        kv: Some(ProfileKv {
            block_size: 16,
            tokens: KvTokens::PerSequence(4096),
            chunk_tokens: None,
        }),
        draft_kv: true,
        draft_kv_dtype: None,
        prefix_snapshots: 2,
        ring_depth: 4,
        carry: true,
        tree_nodes: 16,
        capture_rows: 4096,
        lookup_history: 8192,
        pool: None,
    };

    #[test]
    fn a_server_that_verifies_a_batch_derives_the_reference_engines_counts() {
        // The reference engine's tier (issue 19): 128 sequences, 129 live slots, 32 of them
        // verifying at once (33 verify slots with the dummy), 3 rows each, 128-row tables, a
        // carried-state stash per verify slot, and a ring over the real sequences only.
        let server = ServingProfile {
            sequences: 128,
            verify_rows: 3,
            verify_batch: Some(32),
            table_rows: Some(128),
            ring_dummy: false,
            ring_depth: 8,
            carry: true,
            tree_nodes: 4,
            ..ServingProfile::EMPTY
        };
        let inputs = server.inputs().unwrap();
        assert_eq!(inputs.slots, 129);
        let verify = inputs.verify.unwrap();
        assert_eq!(
            (verify.slots(), verify.h_steps.total(), verify.conv_steps),
            (33, Some(99), 3)
        );
        let c = &inputs.caches;
        assert_eq!(c.verify_table_rows, 128);
        assert_eq!(
            c.carry,
            Some(CarryInputs {
                slots: 33,
                table_rows: 128
            })
        );
        assert_eq!(
            c.ring,
            Some(RingInputs {
                ring_slots: 8,
                seq_slots: 128
            })
        );
        assert_eq!((c.tree.unwrap().slots, c.drafts.unwrap().slots), (33, 33));
        // The counts agree by the count rules, and the profile with its own counts.
        assert_eq!(inputs.disagreements(), []);
        assert_eq!(server.disagreements(&inputs), []);
        // A batch of at least every sequence is every sequence: today's counts.
        let all = ServingProfile {
            verify_batch: Some(500),
            table_rows: None,
            ring_dummy: true,
            ..server
        };
        let every = ServingProfile {
            verify_batch: None,
            ..all
        };
        assert_eq!(all.inputs(), every.inputs());
        let every = every.inputs().unwrap();
        assert_eq!(
            (
                every.verify.unwrap().slots(),
                every.caches.verify_table_rows
            ),
            (129, 387)
        );
        assert_eq!(every.caches.ring.unwrap().seq_slots, 129);
    }

    #[test]
    fn tiers_name_the_verify_slots_and_their_rows() {
        // 4 sequences, 3 of them verifying at once with 4, 2 and 2 rows, the dummy 1 row.
        let tiers = [4, 2, 2, 1];
        let server = ServingProfile {
            sequences: 4,
            verify_rows: 3,
            h_steps: Some(&tiers),
            carry: true,
            tree_nodes: 5,
            ..ServingProfile::EMPTY
        };
        let inputs = server.inputs().unwrap();
        assert_eq!(inputs.slots, 5);
        let verify = inputs.verify.unwrap();
        // By hand: 4 verify slots, 4 + 2 + 2 + 1 = 9 rows; conv_steps stays K.
        assert_eq!(verify.h_steps, HSteps::PerSlot(&[4, 2, 2, 1]));
        assert_eq!(
            (verify.slots(), verify.h_steps.total(), verify.conv_steps),
            (4, Some(9), 3)
        );
        let c = &inputs.caches;
        // One verify-table row per verified row, one carry row per verify slot.
        assert_eq!(c.verify_table_rows, 9);
        assert_eq!(
            c.carry,
            Some(CarryInputs {
                slots: 4,
                table_rows: 4
            })
        );
        assert_eq!(c.tree, Some(TreeInputs { slots: 4, nodes: 5 }));
        assert_eq!(
            c.drafts,
            Some(DraftInputs {
                slots: 4,
                positions: 3
            })
        );
        assert_eq!(inputs.disagreements(), []);
        assert_eq!(server.disagreements(&inputs), []);
        // The tiers name the verify slots: a verify batch is not read.
        let batched = ServingProfile {
            verify_batch: Some(1),
            ..server
        };
        assert_eq!(batched.inputs(), server.inputs());
        // A uniform profile of the same slots differs in its rows, and the check says so.
        let uniform = ServingProfile {
            h_steps: None,
            verify_batch: Some(3),
            ..server
        };
        assert_eq!(
            uniform.disagreements(&inputs),
            [
                Disagreement::Profile { count: "verify" },
                Disagreement::Profile {
                    count: "caches.verify_table_rows"
                }
            ]
        );
        // Without a verify, tiers are not read.
        let plain = ServingProfile {
            verify_rows: 0,
            ..server
        }
        .inputs()
        .unwrap();
        assert_eq!(
            (
                plain.verify,
                plain.caches.verify_table_rows,
                plain.caches.carry.map(|c| c.slots)
            ),
            (None, 0, Some(5))
        );
    }

    #[test]
    fn fewer_sequences_keep_the_first_tiers() {
        let tiers = [4, 2, 2, 1];
        let server = ServingProfile {
            verify_rows: 3,
            h_steps: Some(&tiers),
            ..ServingProfile::EMPTY
        };
        // min(len - 1, S) + 1 entries: 1 at S = 0 (the dummy's slot alone), 2 at S = 1, every
        // one from S = 3 on.
        let kept = |sequences| server.at(sequences, 0).slot_rows();
        assert_eq!(kept(0), HSteps::PerSlot(&[4]));
        assert_eq!(kept(1), HSteps::PerSlot(&[4, 2]));
        assert_eq!(kept(2), HSteps::PerSlot(&[4, 2, 2]));
        assert_eq!(kept(3), HSteps::PerSlot(&tiers));
        assert_eq!(kept(1000), HSteps::PerSlot(&tiers));
        // Never more verify slots than slots, and every count non-decreasing in S.
        let mut last = (0, 0);
        for sequences in 0..8 {
            let inputs = server.at(sequences, 0).inputs().unwrap();
            assert_eq!(inputs.disagreements(), [], "{sequences}");
            let verify = inputs.verify.unwrap();
            let now = (verify.slots(), inputs.caches.verify_table_rows);
            assert!(now >= last, "{sequences}: {now:?} after {last:?}");
            last = now;
        }
        // An empty list names no verify slot.
        let none = ServingProfile {
            h_steps: Some(&[]),
            ..server
        };
        assert_eq!(none.at(5, 0).slot_rows(), HSteps::PerSlot(&[]));
        assert_eq!(none.at(5, 0).inputs().unwrap().caches.verify_table_rows, 0);
    }

    #[test]
    fn the_issues_two_slot_server_derives_its_counts() {
        // The reference engine's golden memory report (issue 19): 2 live slots (one sequence
        // and the dummy), `h_steps = [3, 3]`, 128-row tables, a carried-state stash per
        // verify slot.
        let tiers = [3, 3];
        let server = ServingProfile {
            sequences: 1,
            verify_rows: 3,
            h_steps: Some(&tiers),
            table_rows: Some(128),
            carry: true,
            ..ServingProfile::EMPTY
        };
        let inputs = server.inputs().unwrap();
        assert_eq!(inputs.slots, 2);
        assert_eq!(
            inputs.verify,
            Some(VerifyInputs {
                h_steps: HSteps::PerSlot(&[3, 3]),
                conv_steps: 3
            })
        );
        assert_eq!(inputs.caches.verify_table_rows, 128);
        assert_eq!(
            inputs.caches.carry,
            Some(CarryInputs {
                slots: 2,
                table_rows: 128
            })
        );
        assert_eq!(inputs.disagreements(), []);
    }

    #[test]
    fn the_default_server_derives_the_default_counts() {
        let inputs = DEFAULT.inputs().unwrap();
        // 8 sequences + the dummy.
        assert_eq!(inputs.slots, 9);
        let verify = inputs.verify.unwrap();
        assert_eq!(verify.h_steps, HSteps::Uniform { slots: 9, rows: 4 });
        assert_eq!(verify.conv_steps, 4);
        // 8 x 4096 tokens / 16 = 2048 blocks, for both pools.
        assert_eq!(inputs.kv, Some(KvInputs::blocks(2048, 16)));
        assert_eq!(inputs.draft_kv, inputs.kv);
        let c = inputs.caches;
        assert_eq!(c.prefix_snapshot_slots, 16);
        assert_eq!(
            c.ring,
            Some(RingInputs {
                ring_slots: 4,
                seq_slots: 9
            })
        );
        assert_eq!(
            c.carry,
            Some(CarryInputs {
                slots: 9,
                table_rows: 9
            })
        );
        assert_eq!(c.verify_table_rows, 36);
        assert_eq!(c.capture_rows, 4096);
        assert_eq!(
            c.lookup,
            Some(LookupInputs {
                sequences: 8,
                history_tokens: 8192
            })
        );
        assert_eq!(
            c.tree,
            Some(TreeInputs {
                slots: 9,
                nodes: 16
            })
        );
        assert_eq!(
            c.drafts,
            Some(DraftInputs {
                slots: 9,
                positions: 4
            })
        );
    }

    #[test]
    fn blocks_round_up_and_windows_follow_the_chunk() {
        let mut profile = DEFAULT.at(3, 100);
        profile.kv = Some(ProfileKv {
            chunk_tokens: Some(64),
            ..profile.kv.unwrap()
        });
        let kv = profile.inputs().unwrap().kv.unwrap();
        // 3 x 100 = 300 tokens = 18.75 blocks of 16: 19.
        assert_eq!(kv.blocks, 19);
        assert_eq!(
            kv.window,
            Some(WindowInputs {
                sequences: 3,
                chunk_tokens: 64,
                max_tokens: 100
            })
        );
        // Nothing verifies, nothing is drafted.
        let plain = ServingProfile {
            verify_rows: 0,
            ..DEFAULT
        }
        .inputs()
        .unwrap();
        assert_eq!(
            (
                plain.verify,
                plain.caches.drafts,
                plain.caches.verify_table_rows
            ),
            (None, None, 0)
        );
    }

    #[test]
    fn overflow_is_a_fault() {
        assert_eq!(DEFAULT.at(u64::MAX, 1).inputs(), Err(SizeFault::Overflow));
        assert_eq!(
            DEFAULT.at(1 << 40, 1 << 40).inputs(),
            Err(SizeFault::Overflow)
        );
        let zero_blocks = ServingProfile {
            kv: Some(ProfileKv {
                block_size: 0,
                tokens: KvTokens::PerSequence(1),
                chunk_tokens: None,
            }),
            ..DEFAULT
        };
        assert_eq!(zero_blocks.inputs(), Err(SizeFault::DivisionByZero));
    }
}
