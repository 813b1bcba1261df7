//! What a checkpoint chosen at run time reads in `const fn`: a generated
//! `Checkpoint::from_name` and `from_hf` compare names with [`same_str`], and
//! `Formats::from_pairs` reads each key with [`format_of`] (a key of dtypes only with
//! [`dtype_of`]), by the rules of the dynamic plan.

use crate::model::{FormatChoice, StateDtype};
use crate::plan::MissingFormat;

/// `a == b` in a `const fn`: a generated `Checkpoint::from_name` and `from_hf` compare by it.
#[must_use]
pub const fn same_str(a: &str, b: &str) -> bool {
    crate::model::inputs::same_str(a, b)
}

/// `a == b` with ASCII case ignored, in a `const fn`: a generated `Checkpoint::from_hf` compares
/// Hugging Face ids by it (the Hub resolves `qwen/qwen3.5-27b` to `Qwen/Qwen3.5-27B`), by the
/// rule `serving::registry::Registry` resolves ids by.
#[must_use]
pub const fn same_id(a: &str, b: &str) -> bool {
    crate::model::inputs::same_id(a, b)
}

/// What the first pair of `pairs` keyed `key` holds, by the rule the dynamic plan reads its
/// formats by (`StateInputs::format`): what a generated `Formats::from_pairs` reads each key
/// with.
#[must_use]
pub const fn format_of<'a>(
    pairs: &[(&str, FormatChoice<&'a str>)],
    key: &str,
) -> Option<FormatChoice<&'a str>> {
    crate::model::inputs::format_in(pairs, key)
}

/// The dtype the first pair of `pairs` keyed `key` holds, for a key whose states declare no
/// packings: what a generated `Formats::from_pairs` reads such a key with.
///
/// # Errors
/// [`MissingFormat`] when no pair gives the key, or its first pair gives a packing.
pub const fn dtype_of(
    pairs: &[(&str, FormatChoice<&str>)],
    key: &'static str,
) -> Result<StateDtype, MissingFormat> {
    match format_of(pairs, key) {
        Some(FormatChoice::Dtype(dtype)) => Ok(dtype),
        found => Err(MissingFormat {
            key,
            expected: "a dtype",
            refused: found.is_some(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateInputs;

    #[test]
    fn names_and_formats_are_read_in_const_fn() {
        const PAIRS: [(&str, FormatChoice); 4] = [
            ("kv", FormatChoice::Dtype(StateDtype::Fp8)),
            ("h", FormatChoice::Dtype(StateDtype::F32)),
            ("kv", FormatChoice::Dtype(StateDtype::Bf16)),
            ("mla", FormatChoice::Packing("fp8_ds_mla")),
        ];
        const KV: Option<FormatChoice> = format_of(&PAIRS, "kv");
        // The first pair of a key wins, as `StateInputs::format` reads it.
        assert_eq!(KV, Some(FormatChoice::Dtype(StateDtype::Fp8)));
        assert_eq!(
            format_of(&PAIRS, "h"),
            Some(FormatChoice::Dtype(StateDtype::F32))
        );
        assert_eq!(
            format_of(&PAIRS, "mla"),
            Some(FormatChoice::Packing("fp8_ds_mla"))
        );
        assert_eq!(format_of(&PAIRS, "k"), None);
        assert_eq!(dtype_of(&PAIRS, "h"), Ok(StateDtype::F32));
        let refused = dtype_of(&PAIRS, "mla").map_err(|e| (e.key, e.refused));
        assert_eq!(refused, Err(("mla", true)));
        assert_eq!(dtype_of(&PAIRS, "k").map_err(|e| e.refused), Err(false));
        assert_eq!(format_of(&[], "kv"), None);
        let inputs = StateInputs {
            formats: &PAIRS,
            ..StateInputs::EMPTY
        };
        assert_eq!(
            inputs.format("kv"),
            Some(FormatChoice::Dtype(StateDtype::Fp8))
        );
        assert!(same_str("tiny", "tiny") && same_str("", ""));
        assert!(same_id("Qwen/Qwen3.5-27B", "qwen/qwen3.5-27b"));
        assert!(!same_id("Qwen/Qwen3.5-27B", "qwen/qwen3.5-27") && !same_id("a-b", "a_b"));
        assert!(!same_str("tiny", "tin") && !same_str("tiny", "tinY") && !same_str("a", ""));
    }
}
