//! Generated `Dims::on_tp` (issue 12, contract 5 in part), checked by hand: a rank's dims as a
//! `const`, and its errors. The differential proptest compares it with the dynamic law on every
//! checkpoint; these pin figures of real checkpoints.

use metrale_circuit::ShardFault;
use metrale_tests::{llama, qwen3_next};

/// Qwen3-Next-80B-A3B at TP 4, evaluated at compile time: 16 / 4 query heads, 2 KV heads
/// replicated to one a rank, 16 / 4 key and 32 / 4 value GDN heads; the rest as they are.
const QWEN3_NEXT_TP4: qwen3_next::Dims = match qwen3_next::qwen3_next_80b_a3b::DIMS.on_tp(4) {
    Ok(dims) => dims,
    Err(_) => panic!("Qwen3-Next splits over 4 ranks"),
};

#[test]
fn qwen3_next_at_tp_4() {
    let d = QWEN3_NEXT_TP4;
    assert_eq!(
        (d.q_heads, d.kv_heads, d.lin_k_heads, d.lin_v_heads),
        (4, 1, 4, 8)
    );
    assert_eq!(
        (d.head_dim, d.lin_k_dim, d.lin_v_dim, d.hidden),
        (256, 128, 128, 2048)
    );
    // The conv window follows: conv_kernel is not sharded.
    assert_eq!(d.conv_window(), Ok(3));
}

#[test]
fn errors_name_the_dim() {
    // Llama-3.1-8B: 32 query heads, 8 KV heads; 3 ranks split neither.
    assert_eq!(
        llama::llama_3_1_8b::DIMS.on_tp(3),
        Err(ShardFault::DoesNotSplit {
            dim: "q_heads",
            value: 32,
            tp: 3
        })
    );
    assert_eq!(
        llama::llama_3_1_8b::DIMS.on_tp(0),
        Err(ShardFault::ZeroRanks)
    );
    // 16 ranks: 2 query heads each, 8 KV heads replicated to one each.
    let d = llama::llama_3_1_8b::DIMS.on_tp(16).unwrap();
    assert_eq!((d.q_heads, d.kv_heads), (2, 1));
}
