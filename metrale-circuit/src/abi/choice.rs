//! What a checkpoint chosen at run time reads in `const fn`: a generated
//! `Checkpoint::from_name` and `from_hf` compare names with [`same_str`], and
//! `Formats::from_pairs` reads each key with [`format_of`], by the rules of the dynamic plan.

use crate::model::StateDtype;

/// `a == b` in a `const fn`: a generated `Checkpoint::from_name` and `from_hf` compare by it.
#[must_use]
pub const fn same_str(a: &str, b: &str) -> bool {
    crate::model::inputs::same_str(a, b)
}

/// The dtype of the first pair of `pairs` keyed `key`, by the rule the dynamic plan reads its
/// formats by (`StateInputs::format`): what a generated `Formats::from_pairs` reads each key
/// with.
#[must_use]
pub const fn format_of(pairs: &[(&str, StateDtype)], key: &str) -> Option<StateDtype> {
    crate::model::inputs::format_in(pairs, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateInputs;

    #[test]
    fn names_and_formats_are_read_in_const_fn() {
        const PAIRS: [(&str, StateDtype); 3] = [
            ("kv", StateDtype::Fp8),
            ("h", StateDtype::F32),
            ("kv", StateDtype::Bf16),
        ];
        const KV: Option<StateDtype> = format_of(&PAIRS, "kv");
        // The first pair of a key wins, as `StateInputs::format` reads it.
        assert_eq!(KV, Some(StateDtype::Fp8));
        assert_eq!(format_of(&PAIRS, "h"), Some(StateDtype::F32));
        assert_eq!(format_of(&PAIRS, "k"), None);
        assert_eq!(format_of(&[], "kv"), None);
        let inputs = StateInputs {
            formats: &PAIRS,
            ..StateInputs::EMPTY
        };
        assert_eq!(inputs.format("kv"), Some(StateDtype::Fp8));
        assert!(same_str("tiny", "tiny") && same_str("", ""));
        assert!(!same_str("tiny", "tin") && !same_str("tiny", "tinY") && !same_str("a", ""));
    }
}
