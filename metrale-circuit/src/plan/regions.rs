//! What an engine reads of a plan besides [`Region`]: the field groups a generated plan's
//! fields hold, one per kind of state ([`RecurrentRegions`], [`KvRegions`], [`CacheRegions`]),
//! so that every term is a plain field path (`plan.l0.gdn.h.live`, `plan.l3.attn.k.blocks`,
//! `plan.head.lookup_index.cache`); the static description of each term ([`TermInfo`]); one
//! unit of a state ([`Unit`]); and the regions of a plan whose checkpoint is chosen at run
//! time ([`RegionList`]).
//!
//! Owner: metrale-circuit (public API).
//! Invariants:
//! - A term's lifetime and space follow from its kind, holding and declared lifetime by the
//!   rules the dynamic plan uses ([`Holding::lifetime`], [`Space::of_kind`]).
//! - A field group's empty value holds only [`Region::EMPTY`]s.
//! - A [`RegionList`] holds exactly the regions it was made from, in order: its capacity is
//!   checked when it is made, at compile time, so nothing is ever left out.

use crate::law::layout::LayoutKey;
use crate::law::sizing::{term_dtype, unit_bytes};
use crate::law::{Holding, Region, SizeFault, Space};
use crate::model::{HSteps, Lifetime, Section, StateDtype, StateInputs, StateKind};

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
    /// Its bytes (`ceil(elements x bits / 8)` of its dtype, or the end of its packing's last part).
    pub bytes: u64,
    /// The element type; `u8` for a unit made of a packing's parts (addressed by byte; each
    /// part has its own dtype).
    pub dtype: StateDtype,
    /// Its elements of `dtype`; `None` for a unit made of a packing's parts.
    pub elements: Option<u64>,
}

impl Unit {
    /// The unit of `elements` elements of `dtype`.
    ///
    /// # Errors
    /// The elements' own fault, or [`SizeFault::Overflow`] when the bytes overflow.
    #[inline]
    pub(crate) const fn of(
        elements: Result<u64, SizeFault>,
        dtype: StateDtype,
    ) -> Result<Unit, SizeFault> {
        match elements {
            Ok(elements) => match unit_bytes(elements, dtype) {
                Ok(bytes) => Ok(Unit {
                    bytes,
                    dtype,
                    elements: Some(elements),
                }),
                Err(fault) => Err(fault),
            },
            Err(fault) => Err(fault),
        }
    }

    /// The unit of a packing whose parts end at byte `bytes`.
    #[must_use]
    #[inline]
    pub(crate) const fn of_packing(bytes: u64) -> Unit {
        Unit {
            bytes,
            dtype: StateDtype::U8,
            elements: None,
        }
    }

    /// This unit of a state of `kind` in `section` as its terms store it under `inputs`: the
    /// same elements in the dtype [`term_dtype`] gives (a draft KV side in `draft_kv_dtype`),
    /// itself when that is its own. A unit of a packing keeps its packing: its parts each have a
    /// dtype of their own, so no one dtype retypes it. Both plans call it, so they retype
    /// alike.
    ///
    /// # Errors
    /// [`SizeFault::Overflow`] when the retyped bytes overflow.
    #[inline]
    pub(crate) const fn stored(
        self,
        kind: StateKind,
        section: Section,
        inputs: &StateInputs<'_>,
    ) -> Result<Unit, SizeFault> {
        let Some(elements) = self.elements else {
            return Ok(self);
        };
        let dtype = term_dtype(kind, section, self.dtype, inputs);
        if dtype as usize == self.dtype as usize {
            return Ok(self);
        }
        Unit::of(Ok(elements), dtype)
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

    /// Sequence slot `slot`'s live state.
    #[must_use]
    pub const fn slot(&self, slot: u64) -> Option<Region> {
        self.live.unit(slot)
    }

    /// The padding dummy's live state: the last sequence slot (`StateInputs::dummy_slot`),
    /// which batched kernels may write into and no sequence is given; `None` without slots.
    #[must_use]
    pub const fn dummy(&self) -> Option<Region> {
        match self.live.units.checked_sub(1) {
            Some(last) => self.live.unit(last),
            None => None,
        }
    }

    /// The state of verify slot `slot` before its verify.
    #[must_use]
    pub const fn checkpoint_of(&self, slot: u64) -> Option<Region> {
        self.checkpoint.unit(slot)
    }

    /// Verified row `row` of verify slot `slot`'s intermediates. The rows are slot-major: for
    /// `conv_steps` every slot has the same count (the region's [`Region::inner`]); for
    /// `h_steps` the plan's `h_steps` (the verify inputs it was made with) say where a slot
    /// starts. `None` out of range.
    #[must_use]
    pub const fn step(&self, slot: u64, row: u64, h_steps: &HSteps<'_>) -> Option<Region> {
        if self.steps.inner > 0 {
            return self.steps.at(slot, row);
        }
        let (Some(rows), Some(first)) = (h_steps.rows_of(slot), h_steps.rows_before(slot)) else {
            return None;
        };
        if row >= rows {
            return None;
        }
        match first.checked_add(row) {
            Some(index) => self.steps.unit(index),
            None => None,
        }
    }
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

    /// Tokens per block (the KV inputs' `block_size`); 0 without KV inputs.
    #[must_use]
    pub const fn block_size(&self) -> u64 {
        self.blocks.inner
    }

    /// The blocks the side holds (for a windowed side, what the window law gives).
    #[must_use]
    pub const fn block_count(&self) -> u64 {
        match self.blocks.units.checked_div(self.blocks.inner) {
            Some(blocks) => blocks,
            None => 0,
        }
    }

    /// The tokens the side holds: blocks x block size.
    #[must_use]
    pub const fn token_count(&self) -> u64 {
        self.blocks.units
    }

    /// Block `block`: its [`KvRegions::block_size`] tokens, `[block][token in block]`.
    #[must_use]
    pub const fn block(&self, block: u64) -> Option<Region> {
        self.blocks.group(block)
    }

    /// Token `token` of block `block`.
    #[must_use]
    pub const fn token(&self, block: u64, token: u64) -> Option<Region> {
        self.blocks.at(block, token)
    }
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

    /// Row or slot `index` of a flat cache (prefix snapshot slot, carry stash or table row,
    /// verify-table row, accepted or captured hidden row); `None` out of range, and for the
    /// prompt-lookup index (see [`CacheRegions::lookup_table`]).
    #[must_use]
    pub const fn unit(&self, index: u64) -> Option<Region> {
        self.cache.unit(index)
    }

    /// Ring slot `ring_slot` of sequence slot `seq_slot` (a ring snapshot is
    /// `[sequence slot][ring slot]`).
    #[must_use]
    pub const fn ring(&self, seq_slot: u64, ring_slot: u64) -> Option<Region> {
        self.cache.at(seq_slot, ring_slot)
    }

    /// Draft position `position` of verify slot `slot` (draft tokens are
    /// `[verify slot][position]`).
    #[must_use]
    pub const fn draft(&self, slot: u64, position: u64) -> Option<Region> {
        self.cache.at(slot, position)
    }

    /// The (node `from`, node `to`) cell of verify slot `slot`'s token-tree mask
    /// (`[verify slot][node][node]`; [`Region::inner`] is the node count).
    #[must_use]
    pub const fn tree_cell(&self, slot: u64, from: u64, to: u64) -> Option<Region> {
        let nodes = self.cache.inner;
        if from >= nodes {
            return None;
        }
        match slot.checked_mul(nodes) {
            Some(row) => match row.checked_add(from) {
                Some(row) => self.cache.at(row, to),
                None => None,
            },
            None => None,
        }
    }

    /// Sequence `sequence`'s n-gram hash table in the prompt-lookup index: every sequence's
    /// table has the same size (`bytes / sequences`) and its own hash layout, so its entries
    /// are not addressed one by one.
    #[must_use]
    pub const fn lookup_table(&self, sequence: u64) -> Option<Region> {
        self.cache.group(sequence)
    }
}

/// The regions of a plan whose term count is known only at run time: a generated
/// `AnyPlan::regions()`, whose checkpoint was chosen by name. It holds up to `N` regions (the
/// generated `MAX_TERM_COUNT`, the most terms of any checkpoint of the circuit) and reads as a
/// slice of exactly the plan's regions, in the order of its `terms()`: through
/// [`RegionList::as_slice`] (a `const fn`), [`Deref`](core::ops::Deref), or by iterating a
/// `&RegionList`.
#[derive(Clone, Copy)]
pub struct RegionList<const N: usize> {
    /// The regions, then [`Region::EMPTY`] up to `N`.
    all: [Region; N],
    /// How many of `all` are the plan's.
    len: usize,
}

impl<const N: usize> RegionList<N> {
    /// The list of `regions`, in order. A list too small for them (`K > N`) is a compile
    /// error, never a truncation:
    ///
    /// ```
    /// use metrale_circuit::{Region, RegionList};
    ///
    /// const LIST: RegionList<4> = RegionList::from_array([Region::EMPTY; 3]);
    /// assert_eq!(LIST.len(), 3);
    /// assert_eq!(LIST.as_slice(), [Region::EMPTY; 3]);
    /// ```
    ///
    /// ```compile_fail
    /// use metrale_circuit::{Region, RegionList};
    ///
    /// const LIST: RegionList<2> = RegionList::from_array([Region::EMPTY; 3]);
    /// ```
    #[must_use]
    pub const fn from_array<const K: usize>(regions: [Region; K]) -> Self {
        const { assert!(K <= N, "a RegionList is too small for the plan's regions") };
        let mut all = [Region::EMPTY; N];
        let mut i = 0;
        while i < K {
            all[i] = regions[i];
            i += 1;
        }
        Self { all, len: K }
    }

    /// The regions, in order.
    #[must_use]
    pub const fn as_slice(&self) -> &[Region] {
        match self.all.split_at_checked(self.len) {
            Some((regions, _)) => regions,
            None => &self.all,
        }
    }

    /// How many regions the list holds.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Holds no region (a plan without terms).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> core::ops::Deref for RegionList<N> {
    type Target = [Region];

    fn deref(&self) -> &[Region] {
        self.as_slice()
    }
}

impl<const N: usize> AsRef<[Region]> for RegionList<N> {
    fn as_ref(&self) -> &[Region] {
        self.as_slice()
    }
}

impl<'a, const N: usize> IntoIterator for &'a RegionList<N> {
    type Item = &'a Region;
    type IntoIter = core::slice::Iter<'a, Region>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// Lists the plan's regions only, not the empty capacity after them.
impl<const N: usize> core::fmt::Debug for RegionList<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Two lists are equal when they hold the same regions, whatever their capacity.
impl<const N: usize, const M: usize> PartialEq<RegionList<M>> for RegionList<N> {
    fn eq(&self, other: &RegionList<M>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> Eq for RegionList<N> {}

impl<const N: usize> PartialEq<[Region]> for RegionList<N> {
    fn eq(&self, other: &[Region]) -> bool {
        self.as_slice() == other
    }
}

/// The name of the field group (above) a state of `kind` has in a generated plan: a struct
/// whose fields are named after [`Holding::of_kind`]`(kind)`, in that order. The generator
/// takes it from here, beside the structs, rather than stating the kinds again.
#[must_use]
pub const fn field_group(kind: StateKind) -> &'static str {
    match GroupOf::kind(kind) {
        GroupOf::Kv => "KvRegions",
        GroupOf::Cache => "CacheRegions",
        GroupOf::Recurrent => "RecurrentRegions",
    }
}

/// Which field group holds the terms of a state: the one rule, by its holdings, that both the
/// generator's types ([`field_group`]) and the dynamic plan's view (`DynamicPlan::states`)
/// read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupOf {
    /// [`RecurrentRegions`]: live, verify intermediates, checkpoints.
    Recurrent,
    /// [`KvRegions`]: blocks of tokens.
    Kv,
    /// [`CacheRegions`]: one flat cache.
    Cache,
}

impl GroupOf {
    /// The field group of a state of `kind`.
    pub(crate) const fn kind(kind: StateKind) -> Self {
        match Holding::of_kind(kind) {
            [Holding::Blocks] => GroupOf::Kv,
            [Holding::Cache] => GroupOf::Cache,
            _ => GroupOf::Recurrent,
        }
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

    #[test]
    fn a_region_list_reads_as_exactly_its_regions() {
        // A constant, as a generated `AnyPlan::regions()` can be.
        const ONE: RegionList<3> = RegionList::from_array([Region::EMPTY]);
        assert_eq!(ONE.as_slice(), [Region::EMPTY]);
        let a = Region {
            offset: 256,
            bytes: 10,
            units: 5,
            dtype: StateDtype::Bf16,
            unit_bytes: 2,
            space: Space::Device,
            inner: 1,
        };
        let list = RegionList::<4>::from_array([a, Region::EMPTY]);
        assert_eq!(list.len(), 2);
        assert!(!list.is_empty());
        assert_eq!(list.as_slice(), [a, Region::EMPTY]);
        assert_eq!(list.iter().map(|r| r.offset).collect::<Vec<_>>(), [256, 0]);
        assert_eq!((&list).into_iter().count(), 2);
        // The capacity is not part of the value.
        assert_eq!(list, RegionList::<2>::from_array([a, Region::EMPTY]));
        assert_ne!(list, RegionList::<4>::from_array([a]));
        assert_eq!(format!("{list:?}"), format!("{:?}", [a, Region::EMPTY]));
        let none = RegionList::<0>::from_array([]);
        assert!(none.is_empty() && none.as_slice().is_empty());
    }
}
