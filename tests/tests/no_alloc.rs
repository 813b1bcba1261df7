//! The generated `DynamicPlan::new` allocates nothing: a counting global allocator sees no
//! allocation while it builds the Qwen3.5-27B plan with every cache from run-time inputs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use metrale_circuit::{StateDtype, VerifyInputs};
use metrale_tests::qwen3_5::{Formats, Inputs, qwen3_5_27b};

/// Counts every allocation, then lets the system allocator do it.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s contract.
#[allow(
    unsafe_code,
    reason = "a global allocator is an unsafe impl; this one only counts and forwards"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_generated_plan_allocates_nothing() {
    let h_steps = black_box([4u64; 9]);
    let inputs = black_box(Inputs {
        formats: Formats {
            ssm_h_storage: StateDtype::F32,
            ssm_conv_storage: StateDtype::Bf16,
            kv_cache_dtype: StateDtype::Fp8,
        },
        slots: 9,
        verify: Some(VerifyInputs {
            h_steps: metrale_circuit::inputs::HSteps::PerSlot(&h_steps),
            conv_steps: 4,
        }),
        kv: metrale_tests::SERVE_KV,
        draft_kv: metrale_tests::SERVE_KV,
        draft_kv_dtype: None,
        caches: metrale_tests::SERVE_CACHES,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    });
    let dims = black_box(qwen3_5_27b::DIMS);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let plan = qwen3_5_27b::StatePlan::new(&dims, &inputs, black_box(256));
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    let plan = plan.expect("plan");
    assert_eq!(after - before, 0, "allocations during DynamicPlan::new");
    // The count is real: the dynamic plan of the same circuit does allocate.
    let decls = vec![metrale_circuit::dynamic::decl::StateDecl::new(
        "l0.gdn.h",
        metrale_circuit::StateKind::Recurrent,
        metrale_circuit::dynamic::decl::StateFormat::Fixed(StateDtype::F32),
        1,
    )];
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let dynamic = metrale_circuit::dynamic::DynamicPlan::new(
        &decls,
        &metrale_circuit::StateInputs {
            slots: 1,
            ..metrale_circuit::StateInputs::EMPTY
        },
        256,
    );
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > before);
    assert!(dynamic.is_ok());
    assert!(plan.device_bytes() > 0);
}
