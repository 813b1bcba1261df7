//! The doc lines cover the loader's tables, and the generator names every gap it finds.

use super::build::generate;
use super::spec::{At, Document, How, Is, Key, Rule, Table, Test, Then, Under, Value, When};
use super::{Schema, gaps};

#[test]
fn every_key_the_loader_reads_has_a_doc_line() {
    let gaps = gaps();
    assert!(
        gaps.is_empty(),
        "{} gap(s) between the loader's key tables and the doc lines of \
         metrale-circuit/src/load/json_schema/ (circuit.rs, inputs.rs):\n  {}\n\nadd a doc line \
         (`Key::new(name, value, doc)`) for each new key, or drop the line of a removed one; \
         then regenerate docs/schema/ (METRALE_BLESS=1 cargo test -p metrale-circuit --test \
         json_schema)",
        gaps.len(),
        gaps.join("\n  ")
    );
}

#[test]
fn the_text_is_the_same_every_time() {
    for schema in Schema::ALL {
        assert_eq!(schema.text(), schema.text(), "{}", schema.name());
        assert!(schema.text().ends_with("}\n"), "{}", schema.name());
    }
}

/// A table with one of each gap: an undocumented key, a stale doc line, a key documented
/// twice, a condition naming a misspelled spelling, a rule naming no key, a newer spelling
/// that is no spelling.
const BROKEN: Table = Table {
    name: "`[t]`",
    keys: &[&["kind", "size", "new"]],
    docs: &[
        Key::new("kind", Value::Enum(&["a", "b"]), "A kind.").newer(&[("c", 2)]),
        Key::new("size", Value::Text, "A size.").under(&[Under {
            when: When {
                at: At::Table,
                tests: &[Test {
                    path: &["kind"],
                    is: Is::OneOf(&["aa"]),
                }],
            },
            then: Then::Required,
        }]),
        Key::new("size", Value::Text, "Again."),
        Key::new("gone", Value::Text, "A key the loader no longer reads."),
    ],
    rules: &[Rule::Count {
        keys: &["size", "nope"],
        how: How::AtMostOne,
        when: None,
    }],
};

#[test]
fn each_gap_is_named() {
    let doc = Document {
        title: "t",
        description: "t",
        root: &BROKEN,
        versions: None,
        minus_since: 0,
        config_expr_since: 0,
        library: None,
    };
    let generated = generate(&doc);
    let gaps = generated.gaps.join("\n");
    for expected in [
        "`[t]`: key `new` (in the loader's table) has no doc line",
        "`[t]`: key `size` has more than one doc line",
        "`[t]`: the doc line of `gone` names no key of the loader's table",
        "`[t]`: a condition tests `kind` for `aa`, not one of its spellings",
        "`[t]`: a rule names `nope`, no documented key",
        "`[t]`: key `kind` says `c` is newer, but it is not one of its spellings",
    ] {
        assert!(gaps.contains(expected), "missing {expected:?} in:\n{gaps}");
    }
    assert_eq!(generated.gaps.len(), 6, "{gaps}");
    // The undocumented key is still accepted: the schema never refuses what the loader reads.
    let text = generated.schema.to_text();
    assert!(
        text.contains("\"new\": {\n      \"description\": \"Undocumented"),
        "{text}"
    );
    assert!(!text.contains("\"gone\""), "{text}");
}
