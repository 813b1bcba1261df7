//! The line diff every case runner of this crate prints for a mismatch (`cases.rs`,
//! `inputs_cases.rs`, `import_cases.rs`), so a failure reads the same whichever suite it is in.

/// A line diff of `want` and `got`: `-` lines only expected, `+` lines only made, each change
/// with two unchanged lines around it.
pub fn lines(want: &str, got: &str) -> String {
    let diff = similar::TextDiff::from_lines(want, got);
    let shown = diff.unified_diff().context_radius(2).to_string();
    if shown.is_empty() {
        "(every line is the same: the files differ in their line endings)".to_owned()
    } else {
        shown
    }
}
