//! Findings: an input that panicked, broke an invariant or ran too slowly, saved as
//! `<findings>/<target>-<hash>.toml` (the input's exact bytes) with a `.txt` beside it (the
//! target, the seed it came from, whether it is a known defect, the message), and read back
//! for `--replay`.
//!
//! Owns the signature findings are grouped by (the message with its numbers and quoted names
//! blanked) and the known defects another change is fixing ([`known`]).
//!
//! Invariants: the file name depends only on the target and the bytes, so saving the same
//! finding twice writes the same two files; at most [`SAVED_PER_SIGNATURE`] inputs are saved
//! per signature and run, every finding is counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How many inputs of one signature a run saves.
pub const SAVED_PER_SIGNATURE: usize = 3;

/// FNV-1a, 64 bits: a stable hash of an input (file names, picks that must replay).
#[must_use]
pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One failing input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The name of the target it failed.
    pub target: &'static str,
    /// The seed it was mutated from ([`crate::targets::Context::seed_label`]).
    pub seed: String,
    /// What went wrong: a panic, a violation, or "slow".
    pub message: String,
    /// The input's bytes.
    pub input: Vec<u8>,
}

impl Finding {
    /// The signature it is grouped by.
    #[must_use]
    pub fn signature(&self) -> String {
        format!("{}: {}", self.target, blank(&self.message))
    }

    /// The known defect it is an instance of, if any.
    #[must_use]
    pub fn known(&self) -> Option<&'static str> {
        known(&self.message, self.input.len())
    }
}

/// The known open defects, each as (a text its findings' messages hold, lower case; the
/// defect's name): a finding of one is reported but does not fail (`--skip-known`, the CI
/// short run). Empty: the five classes this harness first found (an unlocated TOML
/// recursion-limit error, an unlocated non-UTF-8 error, slow loading of very large files,
/// quadratic diagnostics, columns off by a line's `\r`) are fixed, and it guards them now.
const KNOWN: &[(&str, &str)] = &[];

/// The known open defect a finding with `message` (on an input of `input_len` bytes) is an
/// instance of, if any.
#[must_use]
pub fn known(message: &str, input_len: usize) -> Option<&'static str> {
    let _ = input_len;
    let lower = message.to_lowercase();
    KNOWN
        .iter()
        .find(|(text, _)| lower.contains(text))
        .map(|(_, name)| *name)
}

/// `message` with every number replaced by `N` and every backquoted text by `_`.
fn blank(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut last_digit = false;
    for c in message.chars() {
        if c == '`' {
            quoted = !quoted;
            if quoted {
                out.push_str("`_`");
            }
            last_digit = false;
        } else if quoted {
        } else if c.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
        } else {
            out.push(c);
            last_digit = false;
        }
    }
    out
}

/// Where findings go, and how many of each signature were seen.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    seen: Mutex<BTreeMap<String, (usize, Option<&'static str>)>>,
}

impl Store {
    /// Findings saved under `dir` (created when the first one is saved).
    #[must_use]
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            seen: Mutex::new(BTreeMap::new()),
        }
    }

    /// Records `finding`; saves it unless [`SAVED_PER_SIGNATURE`] of its signature were.
    /// Returns the path of the saved input.
    ///
    /// # Errors
    /// When the files cannot be written.
    pub fn record(&self, finding: &Finding) -> Result<Option<PathBuf>, String> {
        let count = {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let entry = seen
                .entry(finding.signature())
                .or_insert((0, finding.known()));
            entry.0 += 1;
            entry.0
        };
        if count > SAVED_PER_SIGNATURE {
            return Ok(None);
        }
        save(&self.dir, finding).map(Some)
    }

    /// Every signature seen, with its count and the known defect it is, if any.
    #[must_use]
    pub fn signatures(&self) -> BTreeMap<String, (usize, Option<&'static str>)> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Writes `finding` under `dir`: the input, and the `.txt` beside it.
///
/// # Errors
/// When the files cannot be written.
pub fn save(dir: &Path, finding: &Finding) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("{}-{:016x}", finding.target, hash(&finding.input));
    let input = dir.join(format!("{stem}.toml"));
    let note = dir.join(format!("{stem}.txt"));
    let known = finding.known().unwrap_or("no");
    let text = format!(
        "target: {}\nseed: {}\nknown: {known}\nreplay: cargo run -p metrale-fuzz -- --replay {}\n\n{}\n",
        finding.target,
        finding.seed,
        input.display(),
        finding.message
    );
    std::fs::write(&input, &finding.input)
        .and_then(|()| std::fs::write(&note, text))
        .map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    Ok(input)
}

/// A saved input: its bytes, its target's name and its seed's label, when known.
pub type Saved = (Vec<u8>, Option<String>, Option<String>);

/// A saved input to replay: its bytes, its target's name and its seed's label (from the
/// `.txt` beside it when there is one, else the target from the file name's prefix).
///
/// # Errors
/// When the file cannot be read.
pub fn read_saved(path: &Path) -> Result<Saved, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let note = std::fs::read_to_string(path.with_extension("txt")).unwrap_or_default();
    let field = |key: &str| {
        note.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_owned())
    };
    let from_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('-').next())
        .map(str::to_owned);
    Ok((bytes, field("target:").or(from_name), field("seed:")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_blank_numbers_and_names() {
        assert_eq!(blank("line 12 of `a.toml`: 3 B"), "line N of `_`: N B");
    }

    #[test]
    fn no_defect_is_known_open() {
        // The five classes once listed here are fixed: a finding of one fails again.
        assert!(known("an unlocated error: recursion limit exceeded", 10).is_none());
        assert!(known("slow: 3000 ms with 9000 errors", 100).is_none());
        assert!(known("panicked: index out of bounds", 100).is_none());
    }
}
