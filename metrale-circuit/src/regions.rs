//! What an engine reads of a plan besides [`Region`]: the field groups a generated plan's
//! fields hold, one per kind of state ([`RecurrentRegions`], [`KvRegions`], [`CacheRegions`]),
//! so that every term is a plain field path (`plan.l0.gdn.h.live`, `plan.l3.attn.k.blocks`,
//! `plan.head.lookup_index.cache`); the static description of each term ([`TermInfo`]); and one
//! unit of a state ([`Unit`]).
//!
//! Owner: metrale-circuit (public API).
//! Invariants:
//! - A term's lifetime and space follow from its kind, holding and declared lifetime by the
//!   rules the dynamic plan uses ([`Holding::lifetime`], [`Space::of_kind`]).
//! - A field group's empty value holds only [`Region::EMPTY`]s.

use crate::layout::LayoutKey;
use crate::sizing::unit_bytes;
use crate::{Holding, Lifetime, Region, SizeFault, Space, StateDtype, StateKind};

/// One term of a generated plan, known at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermInfo {
    /// The state's id (`l0.gdn.h`).
    pub state: &'static str,
    /// The state's kind.
    pub kind: StateKind,
    /// What the term holds.
    pub holding: Holding,
    /// How long its units live.
    pub lifetime: Lifetime,
    /// The arena it sits in.
    pub space: Space,
}

impl TermInfo {
    /// The term of `state` holding `holding`, its lifetime and space derived from its kind and
    /// `declared` lifetime by the same rules as the dynamic plan.
    #[must_use]
    pub const fn new(
        state: &'static str,
        kind: StateKind,
        holding: Holding,
        declared: Lifetime,
    ) -> Self {
        Self {
            state,
            kind,
            holding,
            lifetime: holding.lifetime(declared),
            space: Space::of_kind(kind),
        }
    }

    /// Where the layout puts it.
    #[must_use]
    pub(crate) const fn layout_key(&self) -> LayoutKey {
        LayoutKey {
            space: self.space,
            lifetime: self.lifetime,
        }
    }
}

/// One unit of a state: its bytes and its element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// `elements x dtype size`.
    pub bytes: u64,
    /// The element type.
    pub dtype: StateDtype,
}

impl Unit {
    /// The unit of `elements` elements of `dtype`.
    ///
    /// # Errors
    /// The elements' own fault, or [`SizeFault::Overflow`] when the bytes overflow.
    #[inline]
    pub const fn of(
        elements: Result<u64, SizeFault>,
        dtype: StateDtype,
    ) -> Result<Unit, SizeFault> {
        match elements {
            Ok(elements) => match unit_bytes(elements, dtype) {
                Ok(bytes) => Ok(Unit { bytes, dtype }),
                Err(fault) => Err(fault),
            },
            Err(fault) => Err(fault),
        }
    }
}

/// A recurrent state that keeps verify intermediates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecurrentRegions {
    /// The live state, one unit per sequence slot.
    pub live: Region,
    /// The verify intermediates; empty without verify inputs.
    pub steps: Region,
    /// The state before a verify, one unit per verify slot; empty without verify inputs.
    pub checkpoint: Region,
}

impl RecurrentRegions {
    /// Every term empty, at offset 0.
    pub const EMPTY: Self = Self {
        live: Region::EMPTY,
        steps: Region::EMPTY,
        checkpoint: Region::EMPTY,
    };
}

/// One side of a paged KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvRegions {
    /// Its blocks, one unit per token; empty without the section's KV inputs.
    pub blocks: Region,
}

impl KvRegions {
    /// Every term empty, at offset 0.
    pub const EMPTY: Self = Self {
        blocks: Region::EMPTY,
    };
}

/// A cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheRegions {
    /// Its units; empty when its cache inputs are absent.
    pub cache: Region,
}

impl CacheRegions {
    /// Every term empty, at offset 0.
    pub const EMPTY: Self = Self {
        cache: Region::EMPTY,
    };
}

/// The name of the field group (above) a state of `kind` has in a generated plan: a struct
/// whose fields are named after [`Holding::of_kind`]`(kind)`, in that order. The generator
/// takes it from here, beside the structs, rather than stating the kinds again.
#[must_use]
pub const fn field_group(kind: StateKind) -> &'static str {
    match Holding::of_kind(kind) {
        [Holding::Blocks] => "KvRegions",
        [Holding::Cache] => "CacheRegions",
        _ => "RecurrentRegions",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_the_field_group_of_its_holdings() {
        assert_eq!(field_group(StateKind::Recurrent), "RecurrentRegions");
        assert_eq!(field_group(StateKind::PagedKv), "KvRegions");
        assert_eq!(field_group(StateKind::PromptLookupIndex), "CacheRegions");
        let RecurrentRegions {
            live,
            steps,
            checkpoint,
        } = RecurrentRegions::EMPTY;
        assert_eq!([live, steps, checkpoint], [Region::EMPTY; 3]);
    }
}
