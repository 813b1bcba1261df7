//! What a fit's answer means, in the figures an operator reads: what one more of each unit
//! costs and what the state holds per unit ([`Capacity`]), and under vLLM's policy the page
//! pool a budget's rest makes, with the figures vLLM logs ([`PoolCapacity`]: "GPU KV cache
//! size", "Maximum concurrency"). `metrale-codegen fit` prints these; an engine sizing itself
//! at start gets the same figures from the same calls.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - Every figure comes from a plan the dynamic plan made, or from the page pool's law
//!   (`law::pages`), never from arithmetic of its own over the declarations: one more KV block
//!   is the plan with one more block less the plan; a page is its slots' pages.
//! - Under vLLM's policy the arenas' per-block and per-slot figures do not apply (the pool
//!   holds the KV and the live states): [`Capacity::block_bytes`] is `None` there and the
//!   pool's page and request costs take their place.

use crate::law::{Family, Holding, PoolShape};
use crate::model::{KvInputs, Reach, Section, StateDecl, StateInputs, StateKind};
use crate::plan::{DynamicPlan, PagePool};

/// What the plan at a fit's answer holds per unit, and what one more unit costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Bytes one sequence's live recurrent states take over every layer (their units, padding
    /// aside; under vLLM's policy a request's recurrent pages hold these, unpadded).
    pub per_slot: u64,
    /// Bytes one token of the main KV takes over every layer (draft sides aside, and the sides
    /// of a fixed token count, which no decoded token grows).
    pub per_token: u64,
    /// Bytes a request's KV of a fixed token count takes over every layer (schema 4's
    /// `tokens`: cross-attention over an encoder's positions), its unit bytes times its tokens,
    /// before rounding to blocks; 0 without such a side.
    pub per_request: u64,
    /// Under the arenas: what one more main KV block costs, the device bytes with
    /// it less without it, padding included (`None` without KV blocks, under vLLM's policy, or
    /// when that plan fails).
    pub block_bytes: Option<u64>,
    /// Under vLLM's policy: the page pool's shape and what its pages and requests cost.
    pub pages: Option<PageCosts>,
}

/// What the page pool's units cost: one more page (one page in each slot of the buffer) and
/// one more request of the context (its pages over every group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCosts {
    /// The pool's shape.
    pub shape: PoolShape,
    /// One more page: `slots x page_bytes` (`None` when it overflows).
    pub page_bytes: Option<u64>,
    /// One more request of the context: `request_pages` pages (`None` when it overflows).
    pub request_bytes: Option<u64>,
}

impl Capacity {
    /// The figures of `plan`, the plan of `decls` under `counts` (a fit's answer) at `align`.
    #[must_use]
    pub fn of(
        plan: &DynamicPlan,
        decls: &[StateDecl],
        counts: &StateInputs<'_>,
        align: u64,
    ) -> Capacity {
        let (per_slot, per_token, per_request) = match plan.pool() {
            Some(pool) => pool_unit_bytes(pool, decls),
            None => arena_unit_bytes(plan, decls),
        };
        let pages = plan.pool().map(|pool| {
            let shape = pool.plan.shape;
            let page_bytes = shape.row_bytes().ok();
            PageCosts {
                shape,
                page_bytes,
                request_bytes: page_bytes.and_then(|p| p.checked_mul(shape.request_pages)),
            }
        });
        let block_bytes = match pages {
            Some(_) => None,
            None => one_more_block(plan, decls, counts, align),
        };
        Capacity {
            per_slot,
            per_token,
            per_request,
            block_bytes,
            pages,
        }
    }
}

/// The plan with one more main KV block, everything else as it is, less `plan`.
fn one_more_block(
    plan: &DynamicPlan,
    decls: &[StateDecl],
    counts: &StateInputs<'_>,
    align: u64,
) -> Option<u64> {
    let kv = counts.kv?;
    let more = StateInputs {
        kv: Some(KvInputs {
            blocks: kv.blocks.checked_add(1)?,
            ..kv
        }),
        ..*counts
    };
    let next = DynamicPlan::new(decls, &more, align).ok()?;
    next.device_bytes().checked_sub(plan.device_bytes())
}

/// Whether state `id` is a draft side.
fn is_draft(decls: &[StateDecl], id: &str) -> bool {
    decls
        .iter()
        .any(|d| d.id == id && d.section() == Section::Draft)
}

/// Per-unit bytes under a page pool, whose layers hold those states: a request's live
/// recurrent states over every layer (unpadded), one token of the main layers' KV, and a
/// request's KV of a fixed token count.
fn pool_unit_bytes(pool: &PagePool, decls: &[StateDecl]) -> (u64, u64, u64) {
    let (mut per_slot, mut per_token, mut per_request) = (0u64, 0u64, 0u64);
    for member in &pool.members {
        match member.layer.family {
            Family::Recurrent { state_bytes } => per_slot = per_slot.saturating_add(state_bytes),
            Family::Attention { .. } if member.states.iter().any(|s| is_draft(decls, s)) => {}
            Family::Attention {
                token_bytes,
                reach: Some(Reach::Fixed(tokens)),
                ..
            } => per_request = per_request.saturating_add(token_bytes.saturating_mul(tokens)),
            Family::Attention { token_bytes, .. } => {
                per_token = per_token.saturating_add(token_bytes);
            }
        }
    }
    (per_slot, per_token, per_request)
}

/// Per-unit bytes in the arenas: the units of the live recurrent terms, of the main KV sides,
/// padding aside, and a request's tokens of the main sides of a fixed token count.
fn arena_unit_bytes(plan: &DynamicPlan, decls: &[StateDecl]) -> (u64, u64, u64) {
    let (mut per_slot, mut per_token, mut per_request) = (0u64, 0u64, 0u64);
    for term in plan.terms() {
        if term.kind == StateKind::Recurrent && term.holding == Holding::Live {
            per_slot = per_slot.saturating_add(term.unit_bytes);
        } else if term.kind == StateKind::PagedKv && !is_draft(decls, &term.state) {
            match term.reach {
                Some(Reach::Fixed(tokens)) => {
                    per_request =
                        per_request.saturating_add(term.unit_bytes.saturating_mul(tokens));
                }
                _ => per_token = per_token.saturating_add(term.unit_bytes),
            }
        }
    }
    (per_slot, per_token, per_request)
}

/// A vLLM page pool given every byte of a budget the other states leave, as vLLM gives its
/// pool the rest: the figures its users read in its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolCapacity {
    /// The pool's shape: its page, slots, groups and what a request holds.
    pub shape: PoolShape,
    /// Pages the rest of the budget holds, the null page included (`num_gpu_blocks`).
    pub pages: u64,
    /// Tokens one request may hold (`max_model_len`), what its pages are sized for.
    pub context: u64,
    /// "GPU KV cache size": `pages x context / request_pages` tokens (`None` when it
    /// overflows or a request holds no page).
    pub tokens: Option<u64>,
    /// Requests of the whole context held at once: `(pages - 1) / request_pages`.
    pub admitted: u64,
}

impl PoolCapacity {
    /// The pool of `pool`'s shape holding every byte of `budget` past the arena (its pages
    /// as planned when a page row is 0 or overflows).
    #[must_use]
    pub fn of(pool: &PagePool, budget: u64) -> PoolCapacity {
        let shape = pool.plan.shape;
        let pages = match shape.row_bytes() {
            Ok(row) if row > 0 => budget.saturating_sub(pool.plan.offset) / row,
            _ => pool.plan.pages,
        };
        PoolCapacity {
            shape,
            pages,
            context: pool.plan.context,
            tokens: shape.tokens(pages, pool.plan.context),
            admitted: shape.admitted(pages),
        }
    }

    /// "Maximum concurrency": `pages / request_pages`, as vLLM logs it (the null page
    /// counted); infinite when a request holds no page.
    #[must_use]
    #[allow(
        clippy::cast_precision_loss,
        reason = "a ratio to print with two decimals"
    )]
    pub fn concurrency(&self) -> f64 {
        if self.shape.request_pages == 0 {
            return f64::INFINITY;
        }
        self.pages as f64 / self.shape.request_pages as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FormatChoice, StateDtype, StateFormat, WindowInputs};

    #[test]
    fn a_fixed_side_is_bytes_a_request_not_a_token() {
        // A decoder layer of 16 bf16 elements a token on each side, and the cross-attention of
        // 1,500 encoder tokens: 2 x 16 x 2 = 64 B a decoded token, 64 x 1,500 = 96,000 B a
        // request.
        let bf16 = StateFormat::Fixed(StateDtype::Bf16);
        let side = |id: &str| StateDecl::new(id, StateKind::PagedKv, bf16.clone(), 16);
        let decls = [
            side("l0.attn.k"),
            side("l0.attn.v"),
            side("l0.cross.k").with_fixed_tokens(1500),
            side("l0.cross.v").with_fixed_tokens(1500),
        ];
        let formats: [(&str, FormatChoice<&str>); 0] = [];
        let counts = StateInputs {
            formats: &formats,
            kv: Some(KvInputs {
                blocks: 64,
                block_size: 16,
                window: Some(WindowInputs {
                    sequences: 2,
                    chunk_tokens: 16,
                    max_tokens: 256,
                }),
            }),
            ..StateInputs::EMPTY
        };
        let plan = DynamicPlan::new(&decls, &counts, 1).expect("plans");
        let capacity = Capacity::of(&plan, &decls, &counts, 1);
        assert_eq!((capacity.per_token, capacity.per_request), (64, 96_000));
        // One more KV block grows the own sides only: 2 x 16 tokens x 32 B.
        assert_eq!(capacity.block_bytes, Some(1_024));
        // The cross sides hold 2 sequences x ceil(1500 / 16) = 94 blocks each, whatever the
        // pool's 64.
        let cross = plan
            .terms()
            .iter()
            .find(|t| t.state == "l0.cross.k")
            .expect("the cross side");
        assert_eq!(cross.units, 2 * 94 * 16);
    }
}
