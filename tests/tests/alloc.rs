//! The runtime allocator (`metrale_circuit::alloc`) driven by random claims, appends, adoptions
//! and releases against its reference model (`metrale_tests::alloc_model`): every answer and
//! refusal is the model's, a refusal changes nothing, a block handed out for writing is the
//! writer's alone, a block's references are the tables holding it, a ring never holds more
//! than its blocks. The fuzzer's `alloc` target drives the same model from mutated bytes.

use metrale_tests::alloc_model::{Allocator, Op};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Claim),
        1 => (0u64..8).prop_map(Op::Release),
        3 => (0u64..6).prop_map(Op::Append),
        1 => ((0u64..6), (0u64..6)).prop_map(|(sequence, from)| Op::Adopt { sequence, from }),
        1 => (0u64..6).prop_map(Op::Drop),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_claims_and_releases_follow_the_model(
        slots in 0u64..6,
        blocks in prop_oneof![0u64..12, Just(u64::MAX)],
        ring in proptest::option::of(1u64..4),
        ops in proptest::collection::vec(op(), 0..120),
    ) {
        let mut allocator = Allocator::new(slots, blocks, ring);
        for op in ops {
            allocator.step(op).map_err(TestCaseError::fail)?;
        }
    }
}

/// The sequence the adversarial review found (C2): a prefix adopted from a full ring, then the
/// ring's owner appends; the model holds the allocator to a fresh block.
#[test]
fn a_ring_owner_appending_past_an_adopted_prefix_follows_the_model() {
    let mut allocator = Allocator::new(4, 8, Some(2));
    for op in [
        Op::Append(1),
        Op::Append(1),
        Op::Adopt {
            sequence: 2,
            from: 1,
        },
        Op::Append(1),
        Op::Append(1),
        Op::Append(1),
        Op::Drop(1),
        Op::Append(2),
        Op::Drop(2),
    ] {
        allocator.step(op).unwrap_or_else(|e| panic!("{op:?}: {e}"));
    }
}
