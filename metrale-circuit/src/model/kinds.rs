//! What a declared state is ([`StateKind`]) and how long a unit of it lives ([`Lifetime`]).
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Every kind has one spelling ([`StateKind::parse`] of [`StateKind::name`] is the kind) and one
//!   lifetime ([`Lifetime::of_kind`]); a spelling outside the table is refused by the loader.
//! - Each spelling is written once, beside its variant (`spelled_enum!`).

use super::spelled::spelled_enum;
#[cfg(doc)]
use crate::{law::Holding, plan::DynamicPlan};

spelled_enum! {
    /// What a state is.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StateKind {
        /// A recurrent state, one unit per sequence slot (`GatedDeltaNet` and Mamba2 `h`, their conv
        /// windows).
        Recurrent = "recurrent",
        /// One side of a paged KV cache, one unit per token.
        PagedKv = "paged_kv",
        /// A prefix-cache (Marconi) snapshot of a recurrent state (`of`), or of the last-token hidden
        /// row, one unit per snapshot slot.
        PrefixSnapshot = "prefix_snapshot",
        /// The decode-rollback ring's copy of a recurrent state (`of`), one unit per ring slot per
        /// sequence slot.
        RingSnapshot = "ring_snapshot",
        /// The carried-state verify's per-slot stash of a recurrent layer, one unit per verify slot
        /// (the dummy included).
        CarryStash = "carry_stash",
        /// The carried-state verify's per-layer pointer and flag tables, one unit per carry-table row.
        CarryTable = "carry_table",
        /// A verify's per-layer WY pointer tables, one unit per verify-table row.
        VerifyTable = "verify_table",
        /// The hidden rows of accepted drafts a verify stashes for the next propose, one unit per
        /// verify-table row.
        AcceptStash = "accept_stash",
        /// Hidden rows captured for the draft head (the prompt's, for the drafter prefill; `DFlash`'s
        /// per-step capture), one unit per captured row.
        HiddenCapture = "hidden_capture",
        /// Host: a sequence's prompt-lookup n-gram index, one entry per history token (sized by the
        /// hash-table law of the plan's sizing).
        PromptLookupIndex = "prompt_lookup_index",
        /// A token tree's attention mask, one unit per (tree node, tree node) pair of a verify slot.
        TokenTreeMask = "token_tree_mask",
        /// A speculative step's drafted tokens and their scores, one unit per draft position of a
        /// verify slot (tree nodes under a token tree).
        DraftTokens = "draft_tokens",
    }
}

impl StateKind {
    /// A cache: a kind no layer node touches, sized from the cache inputs.
    /// It may copy another state of its block (`of`).
    #[must_use]
    pub const fn is_cache(self) -> bool {
        !matches!(self, Self::Recurrent | Self::PagedKv)
    }

    /// The kinds whose unit copies a declared state (`of`).
    #[must_use]
    pub const fn copies_a_state(self) -> bool {
        matches!(self, Self::PrefixSnapshot | Self::RingSnapshot)
    }

    /// What one unit of the kind is, for documentation (`one unit per sequence slot`).
    #[must_use]
    pub const fn unit(self) -> &'static str {
        match self {
            Self::Recurrent => "one unit per sequence slot",
            Self::PagedKv => "one unit per token",
            Self::PrefixSnapshot => "one unit per snapshot slot",
            Self::RingSnapshot => "one unit per ring slot per sequence slot",
            Self::CarryStash => "one unit per verify slot (the dummy included)",
            Self::CarryTable => "one unit per carry-table row",
            Self::VerifyTable | Self::AcceptStash => "one unit per verify-table row",
            Self::HiddenCapture => "one unit per captured row",
            Self::PromptLookupIndex => {
                "one entry per history token, in host memory sized by the hash-table law"
            }
            Self::TokenTreeMask => "one unit per (tree node, tree node) pair of a verify slot",
            Self::DraftTokens => "one unit per draft position of a verify slot",
        }
    }

    /// Held in host memory rather than device memory (on a unified-memory device it still
    /// competes for the same pool, outside the util budget).
    #[must_use]
    pub const fn is_host(self) -> bool {
        matches!(self, Self::PromptLookupIndex)
    }
}

spelled_enum! {
    /// How long a unit of state lives.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Lifetime {
        /// Allocated once with the model (KV blocks, each held by one sequence or shared by a prefix).
        Model = "model",
        /// Claimed with a sequence's slot and released with it.
        Sequence = "sequence",
        /// Valid from a verify's snapshot to its commit or rollback.
        Verify = "verify",
        /// Owned by the prefix cache or the scheduler's ring, in slots of their own.
        Snapshot = "snapshot",
    }
}

impl Lifetime {
    /// The order of the lifetime groups in an arena: what lives longest comes first, so the
    /// short-lived verify region sits at the end where it can be reserved last.
    pub const LAYOUT_ORDER: [Lifetime; 4] = [
        Lifetime::Model,
        Lifetime::Sequence,
        Lifetime::Snapshot,
        Lifetime::Verify,
    ];

    /// The one lifetime a state of `kind` may declare: a recurrent state lives with its
    /// sequence, a KV side with the model's pool. For a recurrent state `Verify` belongs to the
    /// verify holdings ([`Holding::lifetime`]), never to its declaration. Snapshots live in their
    /// owner's slots, the verify caches across one verify, the carry and verify tables with the
    /// model, a prompt-lookup index and a hidden capture with their sequence.
    #[must_use]
    pub const fn of_kind(kind: StateKind) -> Self {
        match kind {
            StateKind::Recurrent | StateKind::PromptLookupIndex | StateKind::HiddenCapture => {
                Self::Sequence
            }
            StateKind::PagedKv | StateKind::CarryTable | StateKind::VerifyTable => Self::Model,
            StateKind::PrefixSnapshot | StateKind::RingSnapshot => Self::Snapshot,
            StateKind::CarryStash
            | StateKind::AcceptStash
            | StateKind::TokenTreeMask
            | StateKind::DraftTokens => Self::Verify,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_spelling() {
        assert_eq!(StateKind::ALL.len(), 12);
        for kind in StateKind::ALL {
            assert_eq!(StateKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(StateKind::parse("paged_kvv"), None);
        assert_eq!(StateKind::parse("PagedKv"), None);
        assert_eq!(
            StateKind::name(StateKind::PromptLookupIndex),
            "prompt_lookup_index"
        );
        for lifetime in Lifetime::LAYOUT_ORDER {
            assert_eq!(Lifetime::parse(lifetime.name()), Some(lifetime));
        }
        assert_eq!(Lifetime::parse("sequnce"), None);
    }

    #[test]
    fn classes_of_kinds() {
        let caches: Vec<_> = StateKind::ALL.iter().filter(|k| k.is_cache()).collect();
        assert_eq!(caches.len(), 10);
        let copies: Vec<_> = StateKind::ALL
            .into_iter()
            .filter(|k| k.copies_a_state())
            .collect();
        assert_eq!(copies, [StateKind::PrefixSnapshot, StateKind::RingSnapshot]);
        let host: Vec<_> = StateKind::ALL.into_iter().filter(|k| k.is_host()).collect();
        assert_eq!(host, [StateKind::PromptLookupIndex]);
    }

    #[test]
    fn each_kind_has_the_documented_lifetime() {
        use Lifetime::{Model, Sequence, Snapshot, Verify};
        let expected = [
            Sequence, Model, Snapshot, Snapshot, Verify, Model, Model, Verify, Sequence, Sequence,
            Verify, Verify,
        ];
        for (kind, lifetime) in StateKind::ALL.into_iter().zip(expected) {
            assert_eq!(Lifetime::of_kind(kind), lifetime, "{kind:?}");
        }
    }
}
