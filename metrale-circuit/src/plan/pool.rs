//! A plan's unified page pool ([`PagePool`]): under [`PoolPolicy::Vllm`], the KV sides and
//! live recurrent states of every layer live in one device buffer of equal pages, after the
//! device arena, instead of arena regions of their own.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - The pool's layers are built by the one rule of `law::pages::join`, its shape by
//!   `law::pages::shape`: a generated plan's table builds and shapes the same list.
//! - The buffer starts at the device arena's end (a multiple of the alignment); slot `s` is
//!   its `s`-th `pages x page_bytes`, and page `p` of a layer at `p x page_bytes` in its slot.
//!   Within a page, a layer's states follow in declaration order (an attention layer's
//!   `block_tokens` tokens of each side, a recurrent layer's states, then padding).

use super::error::PlanError;
use crate::law::pages::{groups, join, shape};
use crate::law::{PoolFault, PoolLayer, PoolShape, Region, Space};
use crate::model::{Position, Reach, StateDtype, VllmPool};

/// One layer of the pool: its spec, the group and slot it views, and the states it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolMember {
    /// Its position and spec.
    pub layer: PoolLayer,
    /// Its KV-cache group.
    pub group: u64,
    /// The slot of the buffer it views.
    pub slot: u64,
    /// The states it holds, in declaration order (`l3.attn.k`, `l3.attn.v`).
    pub states: Vec<String>,
}

/// The unified page pool of a plan: its shape, pages and place, and its layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagePool {
    /// Its shape, pages, context and where the buffer starts: slot regions and page
    /// addresses by slot.
    pub plan: PoolPlan,
    /// Every layer, in plan order.
    pub members: Vec<PoolMember>,
}

/// A pool being built from a plan's declarations, state by state.
#[derive(Debug, Default)]
pub(super) struct PoolBuilder {
    layers: Vec<PoolLayer>,
    states: Vec<Vec<String>>,
}

impl PoolBuilder {
    /// Adds a KV side (`attention`) or a live recurrent state.
    pub(super) fn add(
        &mut self,
        state: &str,
        position: Position,
        attention: bool,
        unit_bytes: u64,
        reach: Option<Reach>,
    ) -> Result<(), PlanError<String>> {
        let count = self.layers.len();
        self.layers.push(PoolLayer::EMPTY);
        let at = join(
            &mut self.layers,
            count,
            position,
            attention,
            unit_bytes,
            reach,
        )
        .map_err(|fault| PlanError::Pool {
            state: state.to_owned(),
            fault,
        })?;
        if at < count {
            self.layers.pop();
            self.states[at].push(state.to_owned());
        } else {
            self.states.push(vec![state.to_owned()]);
        }
        Ok(())
    }

    /// The pool under `pool`, its buffer at `offset`.
    pub(super) fn finish(
        self,
        pool: &VllmPool,
        offset: u64,
    ) -> Result<PagePool, PlanError<String>> {
        let fault_at = |fault: PoolFault, at: usize| PlanError::Pool {
            state: self
                .states
                .get(at)
                .and_then(|s| s.first())
                .cloned()
                .unwrap_or_default(),
            fault,
        };
        let shape = shape(&self.layers, pool).map_err(|fault| match fault {
            PoolFault::MixedAttention { other, .. } => fault_at(fault, other),
            _ => fault_at(fault, 0),
        })?;
        let pages = shape
            .pages(pool.pages)
            .map_err(|fault| fault_at(fault, 0))?;
        let plan = PoolPlan::new(shape, pages, pool.context, offset)
            .map_err(|fault| fault_at(fault, 0))?;
        let members = self
            .layers
            .iter()
            .zip(groups(&self.layers))
            .zip(self.states)
            .map(|((layer, (group, slot)), states)| PoolMember {
                layer: *layer,
                group,
                slot,
                states,
            })
            .collect();
        Ok(PagePool { plan, members })
    }
}

/// A plan's page pool without its layers (`Copy`, what a generated plan holds): its shape,
/// pages and place. Its sums were checked when the plan was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolPlan {
    /// Its page, groups, slots and what a request holds.
    pub shape: PoolShape,
    /// Pages in the pool, the null page (page 0) included.
    pub pages: u64,
    /// Tokens one request may hold, what its pages are sized for.
    pub context: u64,
    /// Where the buffer starts in the device arena.
    pub offset: u64,
}

impl PoolPlan {
    /// The pool of `shape` with `pages` pages for requests of `context` tokens, at `offset`.
    ///
    /// # Errors
    /// [`PoolFault::Overflow`] when the buffer's end overflows.
    pub const fn new(
        shape: PoolShape,
        pages: u64,
        context: u64,
        offset: u64,
    ) -> Result<PoolPlan, PoolFault> {
        match shape.bytes(pages) {
            Ok(bytes) => match offset.checked_add(bytes) {
                Some(_) => Ok(PoolPlan {
                    shape,
                    pages,
                    context,
                    offset,
                }),
                None => Err(PoolFault::Overflow),
            },
            Err(fault) => Err(fault),
        }
    }

    /// The buffer's bytes: `pages x slots x page_bytes` (saturating: [`PoolPlan::new`]
    /// checked them, so only a pool built by hand can saturate).
    #[must_use]
    pub const fn bytes(&self) -> u64 {
        self.pages
            .saturating_mul(self.shape.slots)
            .saturating_mul(self.shape.page_bytes)
    }

    /// One past the buffer's last byte: the device bytes of a plan with this pool
    /// (saturating, as [`PoolPlan::bytes`]).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.bytes())
    }

    /// Slot `slot` of the buffer: `pages` units of one page each; `None` past the last slot.
    #[must_use]
    pub const fn slot(&self, slot: u64) -> Option<Region> {
        if slot >= self.shape.slots {
            return None;
        }
        // Checked: a pool built by hand may not hold what `new` checked.
        let Some(bytes) = self.pages.checked_mul(self.shape.page_bytes) else {
            return None;
        };
        let Some(offset) = slot.checked_mul(bytes) else {
            return None;
        };
        let Some(offset) = self.offset.checked_add(offset) else {
            return None;
        };
        Some(Region {
            offset,
            bytes,
            units: self.pages,
            dtype: StateDtype::U8,
            unit_bytes: self.shape.page_bytes,
            space: Space::Device,
            inner: 1,
        })
    }

    /// The device address of page `page` of a layer viewing slot `slot`; `None` past the last
    /// slot or page.
    #[must_use]
    pub const fn page(&self, slot: u64, page: u64) -> Option<u64> {
        match self.slot(slot) {
            Some(region) if page < self.pages => {
                // Below `pages`, so within the slot's bytes: no overflow.
                Some(region.offset + page * self.shape.page_bytes)
            }
            _ => None,
        }
    }

    /// Requests of the whole context the pool holds at once (the null page aside).
    #[must_use]
    pub const fn admitted(&self) -> u64 {
        self.shape.admitted(self.pages)
    }
}

impl PagePool {
    /// The layer that holds `state` (`l3.attn.k`).
    #[must_use]
    pub fn member_of(&self, state: &str) -> Option<&PoolMember> {
        self.members
            .iter()
            .find(|m| m.states.iter().any(|s| s == state))
    }

    /// The device address of page `page` of the layer that holds `state`: its slot's start and
    /// `page` pages; `None` for a state the pool does not hold or a page past the last.
    #[must_use]
    pub fn page(&self, state: &str, page: u64) -> Option<u64> {
        self.plan.page(self.member_of(state)?.slot, page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_lays_its_slots_end_to_end_and_never_overflows() {
        // 2 slots of 7 pages of 100 B after a 256-byte arena: slot 1 at 256 + 700, its page 6
        // at 956 + 600; a request of 3 pages, (7 - 1) / 3 = 2 at once.
        let shape = PoolShape {
            block_tokens: 16,
            page_bytes: 100,
            slots: 2,
            groups: 2,
            request_pages: 3,
        };
        let pool = PoolPlan::new(shape, 7, 48, 256).unwrap();
        assert_eq!((pool.bytes(), pool.end()), (1400, 1656));
        assert_eq!(pool.slot(1).map(|r| (r.offset, r.bytes)), Some((956, 700)));
        assert_eq!(pool.page(1, 6), Some(1556));
        assert_eq!((pool.page(1, 7), pool.page(2, 0)), (None, None));
        assert_eq!(pool.admitted(), 2);
        // A pool `new` refuses, built by hand, saturates or has no address: never a panic.
        let huge = PoolShape {
            page_bytes: u64::MAX,
            ..shape
        };
        assert_eq!(PoolPlan::new(huge, 7, 48, 256), Err(PoolFault::Overflow));
        let by_hand = PoolPlan {
            shape: huge,
            pages: u64::MAX,
            context: 48,
            offset: 256,
        };
        assert_eq!((by_hand.bytes(), by_hand.end()), (u64::MAX, u64::MAX));
        assert_eq!((by_hand.slot(1), by_hand.page(0, 1)), (None, None));
    }
}
