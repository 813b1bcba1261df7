//! An engine's view of metrale: the generated Qwen3.5 plan (the checked-in golden module, as
//! `metrale-codegen` writes it) compiled against `metrale-circuit` without its default `load`
//! feature, so without the circuit loader, toml or strsim.
//!
//! `cargo build -p metrale-lean` alone resolves only this crate's graph, where nothing turns
//! `load` on: it proves that generated code needs nothing of the loader, and `.ci/run` checks
//! that the graph holds no `load`. (Built with the whole workspace, cargo unifies features and
//! `load` is on here too, so that build proves nothing of the kind.)
#![deny(warnings, missing_docs)]

include!("../../golden/qwen3_5.rs");

#[cfg(test)]
mod tests {
    use metrale_circuit::{CacheInputs, StateDtype};

    use super::qwen3_5::{Formats, Inputs, qwen3_5_27b};

    #[test]
    fn a_plan_without_the_loader_has_the_figures_counted_by_hand() {
        // Nine slots, no verify, no KV blocks, no caches: the recurrent states alone.
        let inputs = Inputs {
            formats: Formats {
                ssm_h_storage: StateDtype::F32,
                ssm_conv_storage: StateDtype::Bf16,
                kv_cache_dtype: StateDtype::Fp8,
            },
            slots: 9,
            verify: None,
            kv: None,
            draft_kv: None,
            draft_kv_dtype: None,
            caches: CacheInputs::EMPTY,
            pool: metrale_circuit::serving::PoolPolicy::Arenas,
        };
        let plan = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256)
            .unwrap_or_else(|e| panic!("{e:?}"));
        // h of a Gated DeltaNet layer: 48 value heads x 128 x 128 f32 per slot, 9 slots.
        let h = plan.l0.gdn.h;
        assert_eq!(h.live.bytes, 9 * 48 * 128 * 128 * 4);
        assert_eq!((h.live.units, h.live.dtype), (9, StateDtype::F32));
        // Without verify inputs, its verify terms are empty.
        assert_eq!((h.steps.bytes, h.checkpoint.bytes), (0, 0));
        // Layer 3 is full attention: without KV blocks its KV sides hold nothing.
        assert_eq!(plan.l3.attn.k.blocks.bytes, 0);
    }
}
