//! The generated const size functions against figures worked out by hand from the Qwen3.5-27B
//! config (48 value heads x 128 x 128; conv: 3 rows of 16*128*2 + 48*128 channels).

use metrale_circuit::{SizeFault, StateDtype};
use metrale_tests::qwen3_5::{Dims, Formats, blocks, qwen3_5_27b};

const FORMATS: Formats = Formats {
    ssm_h_storage: StateDtype::F32,
    ssm_conv_storage: StateDtype::Bf16,
    kv_cache_dtype: StateDtype::Fp8,
};

// Evaluated at compile time: the size functions are `const fn`.
const H: Result<u64, SizeFault> = blocks::gdn::h_elements(&qwen3_5_27b::DIMS);
const _: () = assert!(matches!(H, Ok(786_432)));

#[test]
fn elements_and_unit_bytes_by_hand() {
    let dims = qwen3_5_27b::DIMS;
    assert_eq!(blocks::gdn::h_elements(&dims), Ok(48 * 128 * 128));
    assert_eq!(
        blocks::gdn::conv_elements(&dims),
        Ok(3 * (16 * 128 * 2 + 48 * 128))
    );
    // A copy has the element count of the state it copies, in its own format.
    assert_eq!(
        blocks::gdn::h_prefix_elements(&dims),
        blocks::gdn::h_elements(&dims)
    );
    assert_eq!(
        blocks::gdn::h_unit_bytes(&dims, FORMATS),
        Ok(48 * 128 * 128 * 4)
    );
    assert_eq!(blocks::gdn::conv_unit_bytes(&dims, FORMATS), Ok(30_720 * 2));
    assert_eq!(blocks::attn::k_unit_bytes(&dims, FORMATS), Ok(4 * 256));
    assert_eq!(blocks::gdn::carry_table_dtype(FORMATS), StateDtype::U64);
    assert_eq!(
        blocks::head::prefix_hidden_unit_bytes(&dims, FORMATS),
        Ok(5120 * 2)
    );
}

#[test]
fn overflow_is_an_error_not_a_wrap() {
    let huge = Dims {
        lin_v_heads: u64::MAX / 2,
        ..qwen3_5_27b::DIMS
    };
    assert_eq!(blocks::gdn::h_elements(&huge), Err(SizeFault::Overflow));
    assert_eq!(
        blocks::gdn::h_prefix_elements(&huge),
        Err(SizeFault::Overflow)
    );
    // Elements fit, bytes do not: 2^62 elements of 4 bytes.
    let wide = Dims {
        lin_v_heads: 1 << 48,
        lin_k_dim: 1 << 7,
        lin_v_dim: 1 << 7,
        ..qwen3_5_27b::DIMS
    };
    assert_eq!(blocks::gdn::h_elements(&wide), Ok(1 << 62));
    assert_eq!(
        blocks::gdn::h_unit_bytes(&wide, FORMATS),
        Err(SizeFault::Overflow)
    );
    // A plan built from such dims names the first state that cannot be sized.
    let inputs = metrale_tests::qwen3_5::Inputs {
        formats: FORMATS,
        slots: 1,
        verify: None,
        kv: None,
        draft_kv: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
    };
    assert_eq!(
        qwen3_5_27b::StatePlan::new(&wide, &inputs, 256).map(|_| ()),
        Err(metrale_circuit::PlanError::Overflow { state: "l0.gdn.h" })
    );
}
