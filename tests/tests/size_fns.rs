//! The generated const unit functions against figures worked out by hand from the Qwen3.5-27B
//! config (48 value heads x 128 x 128; conv: 3 rows of 16*128*2 + 48*128 channels).

use metrale_circuit::units::Unit;
use metrale_circuit::{SizeFault, StateDtype};
use metrale_tests::qwen3_5::{Dims, Formats, blocks, qwen3_5_27b};

const FORMATS: Formats = Formats {
    ssm_h_storage: StateDtype::F32,
    ssm_conv_storage: StateDtype::Bf16,
    kv_cache_dtype: StateDtype::Fp8,
};

/// A unit of `bytes` of `dtype` (a whole-byte dtype: its elements are `bytes` over its size),
/// as a unit function returns it.
#[allow(
    clippy::unnecessary_wraps,
    reason = "compared with unit functions' results"
)]
const fn unit(bytes: u64, dtype: StateDtype) -> Result<Unit, SizeFault> {
    Ok(Unit {
        bytes,
        dtype,
        elements: Some(bytes / (dtype.bits() / 8)),
    })
}

// Evaluated at compile time: the unit functions are `const fn`.
const H: Result<Unit, SizeFault> = blocks::gdn::h_unit(&qwen3_5_27b::DIMS, FORMATS);
const _: () = assert!(matches!(
    H,
    Ok(Unit {
        bytes: 3_145_728,
        ..
    })
));

#[test]
fn units_by_hand() {
    let dims = qwen3_5_27b::DIMS;
    assert_eq!(
        blocks::gdn::h_unit(&dims, FORMATS),
        unit(48 * 128 * 128 * 4, StateDtype::F32)
    );
    assert_eq!(
        blocks::gdn::conv_unit(&dims, FORMATS),
        unit(3 * (16 * 128 * 2 + 48 * 128) * 2, StateDtype::Bf16)
    );
    // A copy has the element count of the state it copies, in its own format.
    assert_eq!(
        blocks::gdn::h_prefix_unit(&dims, FORMATS),
        blocks::gdn::h_unit(&dims, FORMATS)
    );
    let bf16_h = Formats {
        ssm_h_storage: StateDtype::Bf16,
        ..FORMATS
    };
    assert_eq!(
        blocks::gdn::h_prefix_unit(&dims, bf16_h),
        unit(48 * 128 * 128 * 2, StateDtype::Bf16)
    );
    assert_eq!(
        blocks::attn::k_unit(&dims, FORMATS),
        unit(4 * 256, StateDtype::Fp8)
    );
    // A fixed format ignores the formats: 4 u64 pointers per row.
    assert_eq!(
        blocks::gdn::carry_table_unit(&dims, FORMATS),
        unit(4 * 8, StateDtype::U64)
    );
    assert_eq!(
        blocks::head::prefix_hidden_unit(&dims, FORMATS),
        unit(5120 * 2, StateDtype::Bf16)
    );
}

#[test]
fn overflow_is_an_error_not_a_wrap() {
    let huge = Dims {
        lin_v_heads: u64::MAX / 2,
        ..qwen3_5_27b::DIMS
    };
    assert_eq!(
        blocks::gdn::h_unit(&huge, FORMATS),
        Err(SizeFault::Overflow)
    );
    assert_eq!(
        blocks::gdn::h_prefix_unit(&huge, FORMATS),
        Err(SizeFault::Overflow)
    );
    // Elements fit (2^62), bytes do not: 2^62 elements of 4 bytes; of 1 byte they fit.
    let wide = Dims {
        lin_v_heads: 1 << 48,
        lin_k_dim: 1 << 7,
        lin_v_dim: 1 << 7,
        ..qwen3_5_27b::DIMS
    };
    assert_eq!(
        blocks::gdn::h_unit(&wide, FORMATS),
        Err(SizeFault::Overflow)
    );
    let fp8_h = Formats {
        ssm_h_storage: StateDtype::Fp8,
        ..FORMATS
    };
    assert_eq!(
        blocks::gdn::h_unit(&wide, fp8_h),
        unit(1 << 62, StateDtype::Fp8)
    );
    // A plan built from such dims names the first state that cannot be sized.
    let inputs = metrale_tests::qwen3_5::Inputs {
        formats: FORMATS,
        slots: 1,
        verify: None,
        kv: None,
        draft_kv: None,
        draft_kv_dtype: None,
        caches: metrale_circuit::CacheInputs::EMPTY,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    assert_eq!(
        qwen3_5_27b::StatePlan::new(&wide, &inputs, 256).map(|_| ()),
        Err(metrale_circuit::PlanError::Overflow { state: "l0.gdn.h" })
    );
}

/// A unit's tensor shape, by hand: Qwen3.5-27B's `h` is 48 value heads x 128 x 128, its conv
/// window 3 x (2 x 16 x 128 + 48 x 128) = 3 x 10,240; on one of two tensor-parallel ranks the
/// heads halve. The dynamic plan's terms carry the same axes.
#[test]
fn a_unit_s_axes_are_its_shape_s() {
    let h = blocks::gdn::h_axes(&qwen3_5_27b::DIMS).unwrap();
    assert_eq!(h.names, ["lin_v_heads", "lin_k_dim", "lin_v_dim"]);
    assert_eq!(h.extents, [48, 128, 128]);
    assert_eq!(h.strides(), Some([16_384, 128, 1]));
    assert_eq!(h.elements(), Some(786_432));
    let conv = blocks::gdn::conv_axes(&qwen3_5_27b::DIMS).unwrap();
    assert_eq!(conv.extents, [3, 10_240]);
    let rank = qwen3_5_27b::DIMS.on_tp(2).unwrap();
    assert_eq!(blocks::gdn::h_axes(&rank).unwrap().extents, [24, 128, 128]);
    // A copy's axes are its state's.
    assert_eq!(blocks::gdn::h_prefix_axes(&qwen3_5_27b::DIMS), Ok(h));

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let circuit = metrale_circuit::load::Circuit::load(root.join("circuits/qwen3_5.toml")).unwrap();
    let decls = circuit.instantiate("qwen3_5_27b").unwrap();
    let decl = decls.iter().find(|d| d.id == "l0.gdn.h").unwrap();
    let dynamic: Vec<(&str, u64)> = decl
        .axes
        .iter()
        .map(|a| (a.name.as_str(), a.extent))
        .collect();
    assert_eq!(
        dynamic,
        [("lin_v_heads", 48), ("lin_k_dim", 128), ("lin_v_dim", 128)]
    );
    // Every state's extents multiply to its elements.
    for decl in decls.iter().filter(|d| !d.axes.is_empty()) {
        let product = decl
            .axes
            .iter()
            .try_fold(1u64, |p, a| p.checked_mul(a.extent));
        assert_eq!(product, Some(decl.elements), "{}", decl.id);
    }
}
